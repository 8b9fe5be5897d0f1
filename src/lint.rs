//! The pipeline, end to end: discover → parse → model → index → rules → a [`Report`].
//!
//! This is the library's entry point; the CLI only turns arguments into [`LintOptions`] and
//! the report into output and an exit code.

use crate::config::Level;
use crate::diagnostic::{Finding, Severity};
use crate::discover::{self, DiscoverError, Filters, Input};
use crate::index::Index;
use crate::index::{Digest, Workloads};
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::{self, ClusterFacts};
use crate::model::{Object, Span};
use crate::parse::{self, ParsedSource, Part, SkipReason};
use crate::report::plan;
use crate::report::{self, Origin, Report, Source, Summary};
use crate::rules::{self, Context, Rule};
use crate::suppress;
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[derive(Debug, Clone)]
pub struct LintOptions {
    pub paths: Vec<PathBuf>,
    pub context: Vec<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub follow: bool,
    /// Files larger than this are skipped with a note.
    pub max_file_size: u64,
    /// Per-rule levels from the config and `--rule`: applied after suppressions.
    pub rules: BTreeMap<String, Level>,
    /// `aws ec2 describe-instance-types` JSON replacing the built-in catalog.
    pub instance_types: Option<PathBuf>,
    /// Build the `karplint plan` rows (every fitting instance type counted).
    pub plan: bool,
    /// Cluster facts stated outside the manifests (the config file's `cluster:`), merged
    /// with those read from eksctl `ClusterConfig`s and `Node`s.
    pub cluster: ClusterFacts,
}

/// Errors that stop a run before linting (exit code 2).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LintError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Discover(#[from] DiscoverError),
    #[error("{path}: cannot read instance types: {message}")]
    #[diagnostic(
        code(karplint::instance_types),
        help("pass the JSON printed by `aws ec2 describe-instance-types`")
    )]
    InstanceTypes { path: String, message: String },
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            paths: vec![PathBuf::from(".")],
            context: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            follow: false,
            max_file_size: 256 * 1024 * 1024,
            instance_types: None,
            rules: BTreeMap::new(),
            cluster: ClusterFacts::default(),
            plan: false,
        }
    }
}

/// The result of a run: the report, and the I/O errors met on the way (exit code 2).
pub struct Outcome {
    pub report: Report,
    /// One row per linted workload: where Karpenter would put it (`karplint plan`).
    pub plan: Vec<crate::report::plan::PlanRow>,
    pub io_errors: Vec<String>,
    /// The objects the run held (the streamed workloads are gone), handed back so that a
    /// caller about to exit can skip freeing them (`std::mem::forget`, as the CLI does).
    pub model: Vec<Object>,
}

/// Runs the whole pipeline. `stdin` is read when `-` is among the paths.
pub fn lint(opts: &LintOptions, stdin: &mut dyn std::io::Read) -> Result<Outcome, LintError> {
    let mut timings = Timings::from_env();
    let loaded = match &opts.instance_types {
        None => None,
        Some(path) => {
            let err = |message: String| LintError::InstanceTypes {
                path: path.display().to_string(),
                message,
            };
            let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
            Some(
                Catalog::from_describe_instance_types_json(&text)
                    .map_err(|e| err(e.to_string()))?,
            )
        }
    };
    let catalog: &Catalog = loaded.as_ref().unwrap_or_else(|| Catalog::builtin());
    let filters = Filters::new(&opts.include, &opts.exclude)?;
    let (mut inputs, errors) = discover::discover(&opts.paths, false, opts.follow, &filters);
    let mut io_errors: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    let (ctx_inputs, ctx_errors) = discover::discover(&opts.context, true, opts.follow, &filters);
    io_errors.extend(ctx_errors.iter().map(|e| e.to_string()));
    for i in ctx_inputs {
        // A file both linted and given as context is linted.
        if let Input::File { path, .. } = &i
            && inputs
                .iter()
                .any(|j| matches!(j, Input::File { path: p, .. } if p == path))
        {
            continue;
        }
        inputs.push(i);
    }

    // The inputs' paths move into the sources: a large tree's file list is held once.
    let mut sources: Vec<Source> = Vec::with_capacity(inputs.len());
    let mut stdin_read = false;
    for i in inputs {
        sources.push(match i {
            // Standard input is read once, for its first mention.
            Input::Stdin if stdin_read => Source {
                name: "<stdin>".into(),
                origin: Origin::Stdin(None),
                context: false,
            },
            Input::Stdin => {
                stdin_read = true;
                let mut buf = Vec::new();
                let text = match stdin.read_to_end(&mut buf) {
                    Ok(_) => Some(String::from_utf8_lossy(&buf).into_owned()),
                    Err(e) => {
                        io_errors.push(format!("<stdin>: {e}"));
                        None
                    }
                };
                Source {
                    name: "<stdin>".into(),
                    origin: Origin::Stdin(text),
                    context: false,
                }
            }
            Input::File { path, context } => Source::file(path, context),
        });
    }

    let mut held = vec![false; sources.len()];
    loop {
        match pass(opts, catalog, &sources, &held, &mut timings) {
            Pass::Done(outcome) => {
                let mut outcome = *outcome;
                io_errors.append(&mut outcome.io_errors);
                outcome.io_errors = io_errors;
                outcome.report.sources = sources;
                return Ok(outcome);
            }
            // Files the byte scan let through held objects the whole run needs: once more,
            // holding them (rare: `kind` spelled with an escape, an alias or on its own line).
            Pass::Missed(ids) => {
                for id in ids {
                    held[id] = true;
                }
            }
        }
    }
}

enum Pass {
    /// The outcome, with its report's sources still to be filled in.
    Done(Box<Outcome>),
    /// These streamed files held objects of held kinds: the pass was abandoned.
    Missed(Vec<usize>),
}

/// One pass of the pipeline over the sources.
///
/// Memory stays well below the size of the tree because workloads are not all held at
/// once. A byte scan picks the documents that may hold objects every workload is judged
/// against (NodePools, node classes, DaemonSets, PVCs, budgets, …; see [`parse::scan`]), and
/// `force_held` whole files; those are parsed first and held, and the index and simulator
/// are built from them. The other documents are then parsed in parallel, a few files per
/// task, linted by the per-object rules and dropped, leaving for each workload a small
/// digest, which the rules that look across workloads read at the end.
fn pass(
    opts: &LintOptions,
    catalog: &Catalog,
    sources: &[Source],
    force_held: &[bool],
    timings: &mut Timings,
) -> Pass {
    let progress = crate::progress::Progress::start(sources.len());
    // Each file's held objects join the list as soon as the file is parsed: the per-file
    // vectors are freed at once and their memory reused for the next files, where holding
    // them all to the end and then copying them out left the model's size in scattered
    // holes. Sorted back into source order below.
    let gathered = Mutex::new(Vec::<Object>::new());
    // Per source: what parsing its held documents gave, and whether documents are left to
    // stream.
    let mut parsed: Vec<(Option<Parsed>, bool)> = sources
        .par_iter()
        .enumerate()
        .map(|(id, src)| {
            let bytes = match read(src, opts.max_file_size) {
                Err(e) => {
                    progress.tick();
                    return (Some(Err(e)), false);
                }
                Ok(Read::Parsed(p)) => {
                    progress.tick();
                    return (Some(Ok((p, false))), false);
                }
                Ok(Read::Bytes(bytes)) => bytes,
            };
            let part = if force_held[id] {
                Part::All
            } else if !parse::scan::may_hold_cluster_objects(&bytes) {
                return (None, true);
            } else if memchr::memmem::find(&bytes, b"{{").is_some() {
                // Held whole: a Helm template with a syntax error in any document is
                // skipped whole, which the second step could not undo.
                Part::All
            } else {
                Part::Held
            };
            let text = match to_text(bytes) {
                Ok(text) => text,
                Err(p) => {
                    progress.tick();
                    return (Some(Ok((p, false))), false);
                }
            };
            let (mut p, marker) = parse_text(id, src, &text, part);
            let mut objects = std::mem::take(&mut p.objects);
            for (seq, o) in objects.iter_mut().enumerate() {
                o.id = seq;
            }
            if !objects.is_empty() {
                lock(&gathered).append(&mut objects);
            }
            let rest = part == Part::Held && p.skipped.is_none() && p.left_out > 0;
            if !rest {
                progress.tick();
            }
            (Some(Ok((p, marker))), rest)
        })
        .collect();
    let mut objects = gathered
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // (source, position in the file) is unique: the sort restores source order exactly.
    objects.sort_unstable_by_key(|o| (o.source, o.id));
    objects.shrink_to_fit();
    for (i, o) in objects.iter_mut().enumerate() {
        o.id = i;
    }
    timings.mark("read + parse held files");

    let index = Index::new(&objects);
    let registry = rules::registry();
    let mut cx = rules::Context::new(&index, catalog);
    cx.cluster.merge(&opts.cluster);
    // The held objects' digests and plan rows now; their rules once every workload's
    // digest is in (budgets select workloads).
    let linted = objects
        .par_iter()
        .fold(Linted::default, |mut acc, o| {
            acc.object(o, None, &cx, opts.plan);
            acc
        })
        .reduce(Linted::default, Linted::merge);
    timings.mark("index + simulator");

    // The other files, a few at a time per task: parsed, linted object by object, digested
    // and dropped. A task parses its files and then lints their objects: interleaved file by
    // file, the parser's and the simulator's working sets evict each other from the caches.
    let next_id = AtomicUsize::new(objects.len());
    let missing = AtomicBool::new(false);
    // Each task's results join these as soon as it ends.
    let done = Mutex::new(Task {
        linted,
        ..Task::default()
    });
    parsed
        .par_chunks_mut(FILES_PER_TASK)
        .enumerate()
        .for_each(|(chunk, slots)| {
            let mut task = Task::default();
            let mut objects: Vec<Object> = Vec::new();
            for (k, (slot, rest)) in slots.iter_mut().enumerate() {
                if !*rest {
                    continue;
                }
                let id = chunk * FILES_PER_TASK + k;
                // The documents the scan passed over, or the whole file.
                let part = match slot {
                    Some(_) => Part::Streamed,
                    None => Part::All,
                };
                let mut r = read(&sources[id], opts.max_file_size).map(|read| match read {
                    Read::Parsed(p) => (p, false),
                    Read::Bytes(bytes) => match to_text(bytes) {
                        Ok(text) => parse_text(id, &sources[id], &text, part),
                        Err(p) => (p, false),
                    },
                });
                let missed = match (&r, part) {
                    // A file whose held part was used but that now reads differently (a
                    // Helm template with a syntax error in a later document is skipped
                    // whole).
                    (Err(_), Part::Streamed) => true,
                    (Ok((p, _)), Part::Streamed) if p.skipped.is_some() => true,
                    // Objects of held kinds after all.
                    (Ok((p, _)), _) => p.objects.iter().any(|o| !o.kind.is_streamed()),
                    (Err(_), _) => false,
                };
                if missed {
                    missing.store(true, Ordering::Relaxed);
                    task.missed.push(id);
                    continue;
                }
                if let Ok((p, _)) = &mut r {
                    task.annotations.add(&p.objects);
                    objects.append(&mut p.objects);
                }
                *slot = Some(match (slot.take(), r) {
                    (Some(Ok((mut first, marker))), Ok((rest, _))) => {
                        first.merge(rest);
                        Ok((first, marker))
                    }
                    (_, r) => r,
                });
                progress.tick();
            }
            if missing.load(Ordering::Relaxed) {
                // The pass is abandoned: the other files are still parsed, so that it finds
                // every miss at once, but not linted.
                lock(&done).missed.extend(task.missed);
                return;
            }
            let base = next_id.fetch_add(objects.len(), Ordering::Relaxed);
            for (i, o) in objects.iter_mut().enumerate() {
                o.id = base + i;
            }
            task.linted = objects
                .par_iter()
                .with_min_len(16)
                .fold(Linted::default, |mut acc, o| {
                    acc.object(o, Some(&registry), &cx, opts.plan);
                    acc
                })
                .reduce(Linted::default, Linted::merge);
            lock(&done).merge(task);
        });
    let Task {
        linted,
        mut annotations,
        missed,
    } = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    drop(progress);
    if missing.into_inner() {
        return Pass::Missed(missed);
    }
    let Linted {
        mut findings,
        digests,
        mut rows,
        static_only,
    } = linted;
    cx.workloads = Workloads::new(digests);
    timings.mark("stream the other files");

    // The held objects' own rules (budgets read the workloads' digests), then the run-wide
    // rules.
    findings.extend(rules::check_objects(&registry, &cx, &objects));
    findings.extend(rules::check_run(&registry, &cx));
    timings.mark("rules");
    rows.sort_unstable_by_key(|(key, _)| *key);
    let plan = rows.into_iter().map(|(_, row)| row).collect();
    annotations.add(&objects);

    let mut summary = Summary {
        files: sources.len(),
        ..Default::default()
    };
    let mut io_errors = Vec::new();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    let mut not_objects = 0;
    let mut scan = vec![false; sources.len()];
    for (id, p) in parsed.into_iter().enumerate() {
        let src = &sources[id];
        match p.0 {
            // Every source is parsed in one of the two steps when no file was missed.
            None => io_errors.push(format!("{}: not read (internal error)", src.name)),
            Some(Err(e)) => io_errors.push(e),
            Some(Ok((p, has_marker))) => {
                scan[id] = has_marker;
                if let Some(reason) = p.skipped {
                    skipped.push((id, reason));
                    continue;
                }
                if src.context {
                    if !p.problems.is_empty() {
                        notes.push(format!(
                            "context file {} has {} YAML error(s); objects in those documents were not read",
                            src.name,
                            p.problems.len()
                        ));
                    }
                } else {
                    summary.documents += p.documents;
                    summary.objects += p.object_count;
                    not_objects += p.not_objects;
                    findings.extend(p.problems.into_iter().map(|pr| {
                        Finding::at_source("parse-error", Severity::Error, id, pr.span, pr.message)
                            .label("here")
                            .help("fix the YAML here; karplint linted the other documents of this file")
                    }));
                }
            }
        }
    }
    summary.skipped = skipped.len();

    let applied = suppress::apply(findings, annotations, sources, &scan, &rules::known_ids());
    let level = |rule: &str| opts.rules.get(rule).copied();
    summary.suppressed = applied
        .suppressed
        .iter()
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
    if index.nodepools().next().is_none() && cx.workloads.iter().any(|w| !w.context) {
        notes.push(
            "no NodePool or Provisioner found: scheduling rules were not run; pass the directory that holds your NodePools with --context".into(),
        );
    }
    if static_only {
        notes.push(
            "no node group, Node or Fargate profile found: pods that only run outside Karpenter (such as its controller) were not checked against static capacity; pass your eksctl ClusterConfig with --context, or list node groups under `cluster.nodeGroups` in .karplint.yaml".into(),
        );
    }
    findings.sort_by(|a, b| finding_order(sources, a, b));
    report::count(&mut summary, &findings);
    timings.mark("suppress + sort");
    drop(cx);
    drop(index);
    Pass::Done(Box::new(Outcome {
        model: objects,
        plan,
        report: Report {
            sources: Vec::new(),
            findings,
            summary,
            skipped,
            not_objects,
            notes,
        },
        io_errors,
    }))
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

/// Streamed files per task, parsed before their objects are linted together (see [`pass`]).
const FILES_PER_TASK: usize = 16;

/// What a task over streamed files leaves behind.
#[derive(Default)]
struct Task {
    linted: Linted,
    annotations: suppress::Annotations,
    /// Files holding objects of held kinds after all.
    missed: Vec<usize>,
}

impl Task {
    fn merge(&mut self, other: Task) {
        self.linted = std::mem::take(&mut self.linted).merge(other.linted);
        self.annotations.merge(other.annotations);
        self.missed.extend(other.missed);
    }
}

/// What linting objects leaves behind.
#[derive(Default)]
struct Linted {
    findings: Vec<Finding>,
    /// One per workload, linted or context.
    digests: Vec<Digest>,
    rows: Vec<((usize, usize, usize), plan::PlanRow)>,
    /// A linted workload runs only outside Karpenter, and the run knows no static capacity.
    static_only: bool,
}

impl Linted {
    /// Runs `rules` on `o` (unless it is context), then takes its digest and plan row while
    /// its verdict is still memoised on this thread.
    fn object(&mut self, o: &Object, rules: Option<&[Box<dyn Rule>]>, cx: &Context, plan: bool) {
        if let Some(rules) = rules.filter(|_| !o.context) {
            rules::check_object(rules, cx, o, &mut self.findings);
        }
        self.digests.extend(cx.digest(o));
        if plan
            && !o.context
            && let (Some(sim), Some(w)) = (&cx.sim, o.workload())
            && let Some(spec) = w.pod_spec()
        {
            let verdict = sim.schedule(o, spec, w.replica_count(), true); // every fitting type counted
            self.rows
                .extend(plan::row(o, sim, &verdict).map(|row| (order(o), row)));
        }
        if !self.static_only && !o.context && !cx.cluster.has_static_capacity() {
            self.static_only = (o.workload().and_then(|w| w.pod_spec()))
                .is_some_and(|spec| cluster::static_only(o, spec).is_some());
        }
    }

    fn merge(mut self, other: Linted) -> Linted {
        self.findings.extend(other.findings);
        self.digests.extend(other.digests);
        self.rows.extend(other.rows);
        self.static_only |= other.static_only;
        self
    }
}

/// Parsing a source: its objects and problems, and whether it holds a suppression comment;
/// or why it could not be read.
type Parsed = Result<(ParsedSource, bool), String>;

/// An object's place in the run's order: its source, its document, its place among the
/// document's objects (ids grow within a document, which is parsed in one step).
pub fn order(o: &Object) -> (usize, usize, usize) {
    (o.source, o.doc_offset, o.id)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Lints one YAML stream held in memory, as `karplint -` would read it from standard input.
/// The report's only source is `<stdin>`; used by the fuzz targets and embedders.
pub fn lint_str(text: &str) -> Result<Report, LintError> {
    let opts = LintOptions {
        paths: vec![PathBuf::from("-")],
        ..Default::default()
    };
    lint(&opts, &mut text.as_bytes()).map(|o| o.report)
}

/// Phase durations on stderr when `KARPLINT_TIMINGS` is set: where a run's time goes,
/// without a profiler (see docs/performance.md).
struct Timings(Option<std::time::Instant>);

impl Timings {
    fn from_env() -> Self {
        Timings(std::env::var_os("KARPLINT_TIMINGS").map(|_| std::time::Instant::now()))
    }

    fn mark(&mut self, phase: &str) {
        if let Some(start) = &mut self.0 {
            // Resident memory so far, where the kernel reports it (Linux; kB there are KiB,
            // and MB here MiB, as in scripts/bench.sh).
            let rss = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    let kb = |key: &str| {
                        s.lines()
                            .find_map(|l| l.strip_prefix(key))
                            .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
                    };
                    Some(format!(
                        ", RSS {} MB (peak {} MB)",
                        kb("VmRSS:")? / 1024,
                        kb("VmHWM:")? / 1024
                    ))
                })
                .unwrap_or_default();
            eprintln!(
                "karplint: timings: {phase}: {:.3} s{rss}",
                start.elapsed().as_secs_f64()
            );
            *start = std::time::Instant::now();
        }
    }
}

/// A source's bytes, or what parsing it would say without reading it further.
enum Read<'s> {
    Bytes(Cow<'s, [u8]>),
    Parsed(ParsedSource),
}

/// Reads a source: its bytes, or a skip (too large, binary).
fn read(src: &Source, max: u64) -> Result<Read<'_>, String> {
    let path = match (src.stdin_text(), src.path()) {
        (Some(t), _) => return Ok(Read::Bytes(Cow::Borrowed(t.as_bytes()))),
        (None, Some(path)) => path,
        (None, None) => return Ok(Read::Bytes(Cow::Borrowed(b""))),
    };
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", src.name))?;
    if meta.is_dir() {
        return Err(format!("{}: is a directory", src.name));
    }
    let skip = |reason| {
        Ok(Read::Parsed(ParsedSource {
            skipped: Some(reason),
            ..Default::default()
        }))
    };
    if meta.len() > max {
        return skip(SkipReason::TooLarge {
            bytes: meta.len(),
            limit: max,
        });
    }
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", src.name))?;
    if bytes.contains(&0) {
        return skip(SkipReason::Binary);
    }
    Ok(Read::Bytes(Cow::Owned(bytes)))
}

/// A source's bytes as text, or the parse result of a file that is not UTF-8.
fn to_text(bytes: Cow<'_, [u8]>) -> Result<Cow<'_, str>, ParsedSource> {
    let text = match bytes {
        Cow::Borrowed(b) => std::str::from_utf8(b)
            .map(Cow::Borrowed)
            .map_err(|e| e.valid_up_to()),
        Cow::Owned(b) => String::from_utf8(b)
            .map(Cow::Owned)
            .map_err(|e| e.utf8_error().valid_up_to()),
    };
    text.map_err(|at| ParsedSource {
        problems: vec![parse::ParseProblem {
            span: Span::new(at, 0),
            message: format!(
                "file is not valid UTF-8 (invalid byte at offset {at}); Kubernetes manifests must be UTF-8"
            ),
        }],
        ..Default::default()
    })
}

/// Parses a part of a source's text; the flag tells whether the text holds a suppression
/// comment.
fn parse_text(id: usize, src: &Source, text: &str, part: Part) -> (ParsedSource, bool) {
    let helm = src.path().is_some_and(discover::is_helm_template);
    let marker = !src.context && text.contains(suppress::MARKER);
    (parse::parse_part(id, text, src.context, helm, part), marker)
}
