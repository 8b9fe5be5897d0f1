//! The run phase: once every file is parsed, the checks that look across workloads, the
//! parse problems as findings, suppressions, configured levels, notes and the report's
//! order.

use super::cluster::FileState;
use super::{LintOptions, ReadError};
use crate::config::Level;
use crate::diagnostic::{Finding, Severity};
use crate::facts::Workloads;
use crate::model::de::Str;
use crate::parse::SkipReason;
use crate::report::{self, Note, Report, Source, Summary};
use crate::rules::{self, Context};
use crate::suppress;

/// What judging one cluster's workloads gives (the whole run's, without `clusters:`).
#[derive(Default)]
pub(super) struct Judged {
    pub findings: Vec<Finding>,
    pub plan: Vec<report::plan::PlanRow>,
    /// The projected nodes and their cost, for a run with plan rows.
    pub cost: Option<report::cost::Cost>,
    /// Each NodePool's disruption settings, for a run with plan rows.
    pub disruption: Vec<report::plan::PoolDisruption>,
    pub notes: Vec<Note>,
}

/// Places the batch of the checked workloads, runs the checks that look across workloads,
/// and notes what the judgement could not do.
pub(super) fn judge(
    opts: &LintOptions,
    sources: &[Source],
    cx: &Context,
    phase: super::workload::Checked,
) -> Judged {
    let mut checked = phase;
    checked.rows.sort_unstable_by_key(|(key, _)| *key);
    checked.pending.sort_unstable_by_key(|p| p.key);
    let placed = super::verdict::place(
        cx,
        checked.pending,
        &mut checked.facts,
        &mut checked.rows,
        opts.max_batch_pods,
    );
    let workloads = Workloads::new(checked.facts);
    let findings = rules::check_run(cx, &workloads, checked.findings);
    let mut notes = run_notes(cx, &workloads, checked.static_only);
    notes.extend(copies_note(cx, sources));
    notes.extend(placed_once_note(&placed.copies, sources));
    notes.extend(pod_templates_note(&workloads, sources));
    notes.extend(placed.note);
    Judged {
        findings,
        plan: checked.rows.into_iter().map(|(_, row)| row).collect(),
        cost: placed.cost,
        disruption: if opts.plan {
            super::verdict::disruption(cx)
        } else {
            Vec::new()
        },
        notes,
    }
}

/// The report of a run, with the errors met reading its files.
pub(super) struct Finished {
    pub report: Report,
    pub plan: Vec<report::plan::PlanRow>,
    /// The projected nodes and their cost, for a run with plan rows.
    pub cost: Option<report::cost::Cost>,
    /// Each NodePool's disruption settings, for a run with plan rows.
    pub disruption: Vec<report::plan::PoolDisruption>,
    pub read_errors: Vec<ReadError>,
    /// Files findings on rendered kustomizations moved to, numbered after the run's sources.
    pub mapped_sources: Vec<Source>,
}

/// Everything the run phase reads.
pub(super) struct RunInput<'r> {
    pub opts: &'r LintOptions,
    pub sources: &'r [Source],
    pub files: Vec<FileState>,
    /// The `karplint.io/ignore` annotations of the linted objects, each read once.
    pub annotations: suppress::Annotations,
    pub judged: Judged,
    /// The rendered kustomizations' sources, with their maps back to the files.
    pub renders: &'r [(usize, crate::kustomize::remap::RenderMap)],
    /// What reading the kustomizations noted.
    pub notes: &'r [Note],
}

pub(super) fn finish(input: RunInput) -> Finished {
    let RunInput {
        opts,
        sources,
        files,
        mut annotations,
        judged,
        renders,
        notes,
    } = input;
    let mut findings = judged.findings;
    let mut files = FileSummary::of(files, sources);
    files.notes.extend_from_slice(notes);
    findings.append(&mut files.problems);
    let helm = helm_maps(sources);
    if !renders.is_empty() || !helm.is_empty() {
        // Findings arrive in task order: which copy of a finding two overlays share is kept,
        // and how the files it moves to are numbered, must not depend on it.
        findings.sort_by(|a, b| finding_order(sources, a, b));
    }
    let remapped = super::kustomized::remap(
        &mut findings,
        renders,
        &helm,
        sources,
        &mut files.has_suppressions,
    );
    files.notes.extend(remapped.missing_templates.iter().map(|t| {
        Note::new(
            "skipped",
            format!(
                "`helm template` output names {t}, which no chart under the working directory holds (a `Chart.yaml` of that name): its findings stay on <stdin>"
            ),
        )
    }));
    let mapped_sources = remapped.sources;
    let all_sources: std::borrow::Cow<[Source]> = if mapped_sources.is_empty() {
        std::borrow::Cow::Borrowed(sources)
    } else {
        std::borrow::Cow::Owned([sources, &mapped_sources].concat())
    };
    let sources = &all_sources[..];
    annotations.add(&files.headers);
    let applied = suppress::apply(
        findings,
        annotations,
        sources,
        &files.has_suppressions,
        &rules::known_ids(),
    );
    let level = |rule: &str| opts.rules.get(rule).copied();
    files.summary.suppressed = (applied.suppressed.iter())
        .filter(|f| level(f.rule) != Some(Level::Off))
        .count();
    let mut findings = applied.findings;
    findings.retain_mut(|f| match level(f.rule) {
        Some(Level::Off) => false,
        Some(Level::On(sev)) => {
            f.severity = sev;
            true
        }
        None => true,
    });
    files.notes.extend(judged.notes);
    findings.sort_by(|a, b| finding_order(sources, a, b));
    report::count(&mut files.summary, &findings);
    Finished {
        report: Report {
            sources: Vec::new(),
            findings,
            summary: files.summary,
            skipped: files.skipped,
            not_objects: files.not_objects,
            notes: files.notes,
        },
        plan: judged.plan,
        cost: judged.cost,
        disruption: judged.disruption,
        read_errors: files.read_errors,
        mapped_sources,
    }
}

/// What the files' parses add up to.
#[derive(Default)]
struct FileSummary {
    summary: Summary,
    read_errors: Vec<ReadError>,
    skipped: Vec<(usize, SkipReason)>,
    notes: Vec<Note>,
    not_objects: usize,
    /// Per source: its text holds a suppression comment.
    has_suppressions: Vec<bool>,
    /// The parse problems of linted files, as `parse-error` findings.
    problems: Vec<Finding>,
    /// The objects named by the headers of documents that could not be read, for their
    /// annotation suppressions.
    headers: Vec<crate::model::Object>,
    /// Objects of unmodelled kinds that hold pod templates, by kind and apiVersion.
    pod_holders: std::collections::BTreeMap<(Str, Str), usize>,
}

/// The `helm template` streams among the linted sources read from standard input, with
/// the working directory, under which their charts are looked for.
fn helm_maps(sources: &[Source]) -> Vec<(usize, crate::helm::HelmMap<'_>)> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    (sources.iter().enumerate())
        .filter(|(_, s)| !s.context)
        .filter_map(|(id, s)| Some((id, crate::helm::HelmMap::new(s.stdin_text()?, &cwd)?)))
        .collect()
}

impl FileSummary {
    fn of(files: Vec<FileState>, sources: &[Source]) -> Self {
        let mut s = FileSummary {
            summary: Summary {
                files: sources.len(),
                ..Default::default()
            },
            has_suppressions: vec![false; sources.len()],
            ..Default::default()
        };
        for (id, state) in files.into_iter().enumerate() {
            let src = &sources[id];
            let p = match state {
                FileState::Done(Ok(p)) => p,
                FileState::Done(Err(e)) => {
                    s.read_errors.push(e);
                    continue;
                }
                // Context of a cluster that is not judged (no linted file lies in it): not
                // read, and not a file of the run.
                FileState::Outside => {
                    s.summary.files -= 1;
                    continue;
                }
                // Every source is parsed by the end of a pass that missed nothing, each by
                // one cluster.
                FileState::Unread(_) | FileState::Partly(_) => {
                    s.read_errors.push(ReadError::NotRead {
                        name: src.name.clone(),
                    });
                    continue;
                }
            };
            s.has_suppressions[id] = p.has_suppressions;
            let mut p = p.parsed;
            if let Some(reason) = p.skipped {
                s.skipped.push((id, reason));
                continue;
            }
            if let Some(&(_, _, language)) = p.templates.first()
                && p.documents == 0
            {
                // Nothing but templates: the file is skipped whole, as a chart's are.
                s.skipped.push((id, SkipReason::Template(language)));
                continue;
            }
            s.summary.skipped_documents += p.templates.len();
            s.notes
                .extend(p.templates.iter().map(|(_, line, language)| {
                    Note::new(
                        "skipped",
                        format!("skipped the document at {}:{line}: {language}", src.name),
                    )
                }));
            let rejected = p.problems.iter().filter(|pr| pr.rejected_value).count();
            if src.context {
                let unread = p.problems.len() - rejected;
                if unread > 0 {
                    s.notes.push(Note::new("checks-not-run", format!(
                        "context file {} has {} YAML error(s); objects in those documents were not read",
                        src.name, unread
                    )));
                }
                if rejected > 0 {
                    s.notes.push(Note::new("checks-not-run", format!(
                        "context file {} has {} invalid value(s) the API server would reject; those values were not read",
                        src.name, rejected
                    )));
                }
                continue;
            }
            for holder in p.pod_holders {
                *s.pod_holders.entry(holder).or_default() += 1;
            }
            s.summary.documents += p.documents;
            s.summary.objects += p.object_count;
            s.not_objects += p.not_objects;
            s.headers.extend(
                p.problems
                    .iter_mut()
                    .filter_map(|pr| pr.header.take())
                    .map(|h| *h),
            );
            s.problems.extend(p.problems.into_iter().map(|pr| {
                let mut f =
                    Finding::at_source("parse-error", Severity::Error, id, pr.span, pr.message);
                f.object = pr.object;
                if pr.rejected_value {
                    f.label("rejected value").help(
                        "write a value the validator accepts here; karplint linted the rest of this object as if this value were absent",
                    )
                } else {
                    f.label("here").help(
                        "fix the YAML here; karplint linted the other documents of this file",
                    )
                }
            }));
        }
        s.summary.skipped = s.skipped.len();
        for ((kind, api), n) in std::mem::take(&mut s.pod_holders) {
            let (objects, hold) = if n == 1 {
                ("object", "holds")
            } else {
                ("objects", "hold")
            };
            s.notes.push(Note::new("not-analysed", format!(
                "{n} {kind} {objects} ({api}) {hold} pod templates karplint does not analyse; docs/workload-crds.md lists the workload kinds it reads"
            )));
        }
        s
    }
}

/// The note of a run that linted workloads but read no NodePool: the scheduling rules did
/// not run (`--require-nodepools` turns it into exit code 2).
pub const NO_NODEPOOL: &str = "no NodePool or Provisioner found: scheduling rules were not run; pass the directory that holds your NodePools with --context";

/// Notes on checks the run could not make.
fn run_notes(cx: &Context, workloads: &Workloads, static_only: bool) -> Vec<Note> {
    let mut notes = Vec::new();
    if cx.index.nodepools().next().is_none() && workloads.iter().any(|w| !w.context) {
        notes.push(Note::new("checks-not-run", NO_NODEPOOL));
    }
    if static_only {
        notes.push(Note::new(
            "checks-not-run",
            "no node group, Node or Fargate profile found: pods that only run outside Karpenter (such as its controller) were not checked against static capacity; pass your eksctl ClusterConfig with --context, or list node groups under `cluster.nodeGroups` in .karplint.yaml",
        ));
    }
    for text in cx.sim.iter().flat_map(|s| s.overlay_notes()) {
        notes.push(Note::new("overlay-not-applied", text));
    }
    notes
}

/// How many of `names` a note lists before it says how many more there are.
const NAMED: usize = 3;

/// `names`, at most [`NAMED`] of them, then how many more.
fn listed(names: &[String]) -> String {
    let shown = names[..names.len().min(NAMED)].join(", ");
    match names.len().saturating_sub(NAMED) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

/// The note on definitions read once: a second definition of an object the same as the
/// first in every field karplint reads ([`crate::index::Index::copies`]).
fn copies_note(cx: &Context, sources: &[Source]) -> Option<Note> {
    let copies: Vec<String> = cx
        .index
        .copies()
        .map(|(held, copy)| {
            format!(
                "{} \"{}\" in {} (as in {})",
                copy.kind_name,
                copy.name(),
                sources[copy.source].name,
                sources[held.source].name
            )
        })
        .collect();
    (!copies.is_empty()).then(|| {
        Note::new(
            "assumed",
            match copies.len() {
                1 => format!(
                    "1 identical copy of an object defined earlier in the run, read as that object: {}",
                    listed(&copies)
                ),
                n => format!(
                    "{n} identical copies of objects defined earlier in the run, each read as the object it copies: {}",
                    listed(&copies)
                ),
            },
        )
    })
}

/// The note on workloads defined again with the same pods, whose replicas Karpenter's batch
/// places once ([`super::verdict::Redefined`]).
fn placed_once_note(copies: &[super::verdict::Redefined], sources: &[Source]) -> Option<Note> {
    let named: Vec<String> = (copies.iter())
        .map(|c| {
            let (at, first) = (&sources[c.key.0].name, &sources[c.held.0].name);
            format!("{} in {at} (as in {first})", c.identity)
        })
        .collect();
    (!named.is_empty()).then(|| {
        Note::new(
            "assumed",
            format!(
                "{} workload(s) defined again later in the run with the same pods, one object of the cluster each, whose replicas Karpenter's batch places once: {}",
                named.len(),
                listed(&named)
            ),
        )
    })
}

/// The note on Pods read as templates another tool fills in (a container without an
/// `image`): their requests and LimitRanges are not judged, their node selection is.
fn pod_templates_note(workloads: &Workloads, sources: &[Source]) -> Option<Note> {
    let templates: Vec<String> = workloads
        .iter()
        .filter(|w| w.pod_template && !w.context)
        .map(|w| format!("{} ({})", w.name(), sources[w.source].name))
        .collect();
    (!templates.is_empty()).then(|| {
        Note::new(
            "assumed",
            match templates.len() {
                1 => format!(
                    "1 Pod has a container without an image and is read as a pod template that another tool fills in (Spark's podTemplateFile, EMR on EKS): its requests were not checked, its node selection was: {}",
                    listed(&templates)
                ),
                n => format!(
                    "{n} Pods have a container without an image and are read as pod templates that another tool fills in (Spark's podTemplateFile, EMR on EKS): their requests were not checked, their node selection was: {}",
                    listed(&templates)
                ),
            },
        )
    })
}

/// The report's order: by place, then by everything else. Findings arrive in no fixed order
/// (tasks end when they end), and ties must still come out the same way every run.
fn finding_order(sources: &[Source], a: &Finding, b: &Finding) -> std::cmp::Ordering {
    fn place<'f>(sources: &'f [Source], f: &'f Finding) -> impl Ord + 'f {
        (&sources[f.source].name, f.span.offset, f.rule, &f.message)
    }
    fn rest(f: &Finding) -> impl Ord + '_ {
        (f.span.len, f.severity, &f.label, &f.help, &f.object)
    }
    fn related(f: &Finding) -> impl Iterator<Item = impl Ord + '_> + '_ {
        (f.related.iter()).map(|r| (r.source, r.span.offset, r.span.len, &r.message))
    }
    (place(sources, a).cmp(&place(sources, b)))
        .then_with(|| rest(a).cmp(&rest(b)))
        .then_with(|| related(a).cmp(related(b)))
}
