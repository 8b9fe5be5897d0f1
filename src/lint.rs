//! The pipeline, end to end: discover → parse → model → index → rules → a [`Report`].
//!
//! This is the library's entry point; the CLI only turns arguments into [`LintOptions`] and
//! the report into output and an exit code.

use crate::config::Level;
use crate::diagnostic::{Finding, Severity};
use crate::discover::{self, DiscoverError, Filters, Input};
use crate::index::Index;
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::{self, ClusterFacts};
use crate::model::{Object, Span};
use crate::parse::{self, ParsedSource, SkipReason};
use crate::report::{self, Origin, Report, Source, Summary};
use crate::rules;
use crate::suppress;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

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
    /// The run's typed model, handed back so that a caller about to exit can skip freeing
    /// it (`std::mem::forget`, as the CLI does): on a large tree that is a tenth of a
    /// second of nothing but `free`.
    pub model: Vec<Object>,
}

/// Runs the whole pipeline. `stdin` is read when `-` is among the paths.
pub fn lint(opts: &LintOptions, stdin: &mut dyn Read) -> Result<Outcome, LintError> {
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

    let progress = crate::progress::Progress::start(sources.len());
    // Each file's objects join the run's list as soon as the file is parsed: the per-file
    // vectors are freed at once and their memory reused for the next files, where holding
    // them all to the end and then copying them out left the model's size in scattered
    // holes. Sorted back into source order below.
    let gathered = std::sync::Mutex::new(Vec::<Object>::new());
    let parsed: Vec<Result<(ParsedSource, bool), String>> = sources
        .par_iter()
        .enumerate()
        .map(|(id, src)| {
            let mut r = read_and_parse(id, src, opts.max_file_size);
            if let Ok((p, _)) = &mut r {
                let mut objects = std::mem::take(&mut p.objects);
                for (seq, o) in objects.iter_mut().enumerate() {
                    o.id = seq;
                }
                if !objects.is_empty() {
                    gathered
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .append(&mut objects);
                }
            }
            progress.tick();
            r
        })
        .collect();
    drop(progress);
    let mut objects = gathered
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // (source, position in the file) is unique: the sort restores source order exactly.
    objects.sort_unstable_by_key(|o| (o.source, o.id));
    objects.shrink_to_fit();
    timings.mark("read + parse");

    let mut summary = Summary {
        files: sources.len(),
        ..Default::default()
    };
    let mut findings: Vec<Finding> = Vec::new();
    let mut skipped = Vec::new();
    let mut notes = Vec::new();
    let mut not_objects = 0;
    let mut scan = vec![false; sources.len()];
    for (id, p) in parsed.into_iter().enumerate() {
        let src = &sources[id];
        match p {
            Err(e) => io_errors.push(e),
            Ok((p, has_marker)) => {
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
    for (i, o) in objects.iter_mut().enumerate() {
        o.id = i;
    }

    timings.mark("collect objects");
    let index = Index::new(&objects);
    let registry = rules::registry();
    let mut cx = rules::Context::new(&index, catalog);
    cx.cluster.merge(&opts.cluster);
    timings.mark("index + simulator");
    findings.extend(rules::run(&registry, &cx));
    timings.mark("rules");
    let plan = if opts.plan {
        crate::report::plan::rows(&cx)
    } else {
        Vec::new()
    };
    let applied = suppress::apply(findings, &objects, &sources, &scan, &rules::known_ids());
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
    if index.nodepools().next().is_none()
        && objects.iter().any(|o| !o.context && o.kind.is_workload())
    {
        notes.push(
            "no NodePool or Provisioner found: scheduling rules were not run; pass the directory that holds your NodePools with --context".into(),
        );
    }
    if !cx.cluster.has_static_capacity()
        && objects.iter().any(|o| {
            !o.context
                && o.workload()
                    .and_then(|w| w.pod_spec())
                    .and_then(|s| cluster::static_only(o, s))
                    .is_some()
        })
    {
        notes.push(
            "no node group, Node or Fargate profile found: pods that only run outside Karpenter (such as its controller) were not checked against static capacity; pass your eksctl ClusterConfig with --context, or list node groups under `cluster.nodeGroups` in .karplint.yaml".into(),
        );
    }
    findings.sort_by(|a, b| {
        (&sources[a.source].name, a.span.offset, a.rule, &a.message).cmp(&(
            &sources[b.source].name,
            b.span.offset,
            b.rule,
            &b.message,
        ))
    });
    report::count(&mut summary, &findings);
    timings.mark("suppress + sort");
    drop(cx);
    drop(index);
    Ok(Outcome {
        model: objects,
        plan,
        report: Report {
            sources,
            findings,
            summary,
            skipped,
            not_objects,
            notes,
        },
        io_errors,
    })
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

/// Reads and parses a source; the flag tells whether its text holds a suppression comment.
fn read_and_parse(id: usize, src: &Source, max: u64) -> Result<(ParsedSource, bool), String> {
    let owned;
    let text: &str = match (src.stdin_text(), src.path()) {
        (Some(t), _) => t,
        (None, Some(path)) => {
            let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", src.name))?;
            if meta.is_dir() {
                return Err(format!("{}: is a directory", src.name));
            }
            if meta.len() > max {
                return Ok((
                    ParsedSource {
                        skipped: Some(SkipReason::TooLarge {
                            bytes: meta.len(),
                            limit: max,
                        }),
                        ..Default::default()
                    },
                    false,
                ));
            }
            let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", src.name))?;
            if bytes.contains(&0) {
                return Ok((
                    ParsedSource {
                        skipped: Some(SkipReason::Binary),
                        ..Default::default()
                    },
                    false,
                ));
            }
            match String::from_utf8(bytes) {
                Ok(s) => {
                    owned = s;
                    &owned
                }
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    return Ok((
                        ParsedSource {
                            problems: vec![parse::ParseProblem {
                                span: Span::new(at, 0),
                                message: format!(
                                    "file is not valid UTF-8 (invalid byte at offset {at}); Kubernetes manifests must be UTF-8"
                                ),
                            }],
                            ..Default::default()
                        },
                        false,
                    ));
                }
            }
        }
        (None, None) => "",
    };
    let helm = src.path().is_some_and(discover::is_helm_template);
    let marker = !src.context && text.contains(suppress::MARKER);
    Ok((parse::parse_source(id, text, src.context, helm), marker))
}
