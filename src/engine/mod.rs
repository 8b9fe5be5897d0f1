//! The run, end to end, as named phases:
//!
//! 1. **discover** the inputs ([`crate::discover`]) and read them as [`Source`]s
//!    ([`sources`]);
//! 2. the **cluster phase** ([`cluster`]): the documents every workload is judged against
//!    (NodePools, node classes, DaemonSets, PVCs, budgets, …) are parsed and held, and the
//!    index, the simulator and every rule's [`Context`] are built from them;
//! 3. the **workload phase** ([`workload`]): the other documents are streamed, a few files
//!    per task, checked object by object by the per-object hooks, and dropped, leaving each
//!    workload's facts ([`crate::facts`]);
//! 4. the **run phase** ([`run`]): the hooks that look across workloads, the parse problems,
//!    suppressions, configured levels and the report's order.
//!
//! If the cluster phase's byte scan let a held kind through to the workload phase (its
//! `kind` spelled with an escape, an alias, or on its own line), phases 2 and 3 run once
//! more with those files held whole: [`lint`] is the one place that decides it.
//!
//! The CLI only turns arguments into [`LintOptions`] and the [`Outcome`] into output and an
//! exit code.

mod cluster;
mod kustomized;
mod run;
mod scopes;
mod sources;
mod timings;
mod verdict;
mod workload;

use crate::config::Level;
pub use crate::discover::WalkOptions;
use crate::discover::{self, DiscoverError, Filters, Hidden, Input};
use crate::index::Index;
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::ClusterFacts;
use crate::model::Object;
use crate::progress::Progress;
use crate::report::Report;
use crate::rules::Context;
pub use run::NO_NODEPOOL;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use timings::Timings;

#[derive(Debug, Clone)]
pub struct LintOptions {
    pub paths: Vec<PathBuf>,
    pub context: Vec<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// How directories are walked: `--follow`, `--hidden`, `--no-ignore`.
    pub walk: WalkOptions,
    /// Files larger than this are skipped with a note.
    pub max_file_size: u64,
    /// The most pods Karpenter's batch places in one run (`--max-batch-pods`): a workload
    /// whose replicas would pass it is judged one pod at a time, with a note.
    pub max_batch_pods: usize,
    /// Per-rule levels from the config and `--rule`: applied after suppressions.
    pub rules: BTreeMap<String, Level>,
    /// `aws ec2 describe-instance-types` JSON replacing the built-in catalog.
    pub instance_types: Option<PathBuf>,
    /// Build the `karplint plan` rows (every fitting instance type counted), and place
    /// every row's replicas in one batch, as Karpenter's scheduler would (the rows' `pods`).
    pub plan: bool,
    /// With `plan`, count every fitting instance type of each row (`karplint plan`'s TYPES
    /// and SMALLEST), asking the simulator again; without it the rows take the lint's own
    /// verdict, which stops at the first fitting type (`karplint diff`, which shows neither).
    pub plan_counts_types: bool,
    /// Export the instance types each NodePool can launch (`karplint debug instance-types`).
    pub export_instance_types: bool,
    /// Cluster facts stated outside the manifests (the config file's `cluster:`), merged
    /// with those read from eksctl `ClusterConfig`s and `Node`s.
    pub cluster: ClusterFacts,
    /// Whether kustomizations are rendered with the real tool (`kustomize:`).
    pub kustomize: crate::kustomize::Mode,
    /// The render tool `--kustomize-bin` (or the config's `kustomizeBin`) names, and
    /// where it was named.
    pub kustomize_bin: Option<(PathBuf, crate::kustomize::Chosen)>,
    /// How long all renders of the run may take together (`--kustomize-timeout`).
    pub kustomize_timeout: std::time::Duration,
    /// Kustomization directories rendered as roots although others include them
    /// (`kustomizeRoots`).
    pub kustomize_roots: Vec<PathBuf>,
    /// Directories beside the linted and context trees that no program may come from
    /// (the applied config's directory).
    pub untrusted: Vec<PathBuf>,
    /// Where rendered kustomizations are kept between runs (`--cache-dir`); none with
    /// `--no-cache`.
    pub cache_dir: Option<PathBuf>,
    /// The clusters a repository keeps side by side (`clusters:`): each judged on its own.
    pub clusters: Vec<ClusterScope>,
}

/// One cluster of `clusters:`: the files under its directories are judged against its
/// own NodePools and cluster objects, and the files under no cluster's against each's.
#[derive(Debug, Clone)]
pub struct ClusterScope {
    pub name: String,
    /// Its linted and context directories (or files).
    pub dirs: Vec<PathBuf>,
    /// Its own `cluster:` facts; the run's when `None`.
    pub facts: Option<ClusterFacts>,
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            paths: vec![PathBuf::from(".")],
            context: Vec::new(),
            include: Vec::new(),
            exclude: Vec::new(),
            walk: WalkOptions::default(),
            max_file_size: 256 * 1024 * 1024,
            max_batch_pods: DEFAULT_MAX_BATCH_PODS,
            instance_types: None,
            rules: BTreeMap::new(),
            cluster: ClusterFacts::default(),
            plan: false,
            plan_counts_types: true,
            export_instance_types: false,
            kustomize: crate::kustomize::Mode::Auto,
            kustomize_bin: None,
            kustomize_timeout: crate::kustomize::DEFAULT_DEADLINE,
            kustomize_roots: Vec::new(),
            untrusted: Vec::new(),
            cache_dir: None,
            clusters: Vec::new(),
        }
    }
}

impl LintOptions {
    /// Whether the run builds plan rows, and whether they count every fitting type.
    pub(crate) fn plan_rows(&self) -> Option<bool> {
        self.plan.then_some(self.plan_counts_types)
    }
}

/// The default of [`LintOptions::max_batch_pods`]: a tree of 14,000 files holds about
/// 115,000 pods; `replicas: 2147483647` must not allocate them.
pub const DEFAULT_MAX_BATCH_PODS: usize = 250_000;

/// Errors that stop a run before linting (exit code 2).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum LintError {
    #[error(transparent)]
    #[diagnostic(transparent)]
    Discover(#[from] DiscoverError),
    #[error(transparent)]
    #[diagnostic(transparent)]
    Kustomize(#[from] crate::kustomize::KustomizeError),
    #[error("{path}: cannot read instance types: {source}")]
    #[diagnostic(
        code(karplint::instance_types),
        help("pass the JSON printed by `aws ec2 describe-instance-types`")
    )]
    InstanceTypes {
        path: String,
        #[source]
        source: InstanceTypesError,
    },
}

/// Why an `--instance-types` file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum InstanceTypesError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The catalog's complaint, cut to a short excerpt: it may quote the file's values.
    #[error("{0}")]
    Catalog(String),
    #[error(transparent)]
    NotUtf8(std::string::FromUtf8Error),
}

/// A source that could not be read (exit code 2; the run goes on without it).
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Discover(#[from] DiscoverError),
    #[error("{name}: {error}")]
    Io {
        name: String,
        #[source]
        error: std::io::Error,
    },
    #[error("{name}: is a directory")]
    Directory { name: String },
    /// A stream (standard input, a FIFO) longer than `--max-file-size`: not linted.
    #[error("{name}: more than {limit} bytes, over the limit (--max-file-size); not linted")]
    TooLarge { name: String, limit: u64 },
    /// The run's render deadline passed before these kustomizations were rendered: linted
    /// as written, and the run is incomplete.
    #[error(
        "{roots} kustomization(s) not rendered: the {secs} s render deadline passed (--kustomize-timeout); their files are linted as written"
    )]
    RenderDeadline { roots: usize, secs: u64 },
    /// Every source is parsed by the end of a run; this one was not (a bug).
    #[error("{name}: not read (internal error)")]
    NotRead { name: String },
}

/// The result of a run: the report, and the sources that could not be read.
pub struct Outcome {
    pub report: Report,
    /// One row per linted workload: where Karpenter would put it (`karplint plan`).
    pub plan: Vec<crate::report::plan::PlanRow>,
    /// The nodes the plan's rounds launch and their monthly cost (with the plan rows).
    pub cost: Option<crate::report::cost::Cost>,
    /// Each NodePool's disruption settings (with the plan rows).
    pub disruption: Vec<crate::report::plan::PoolDisruption>,
    /// The NodePools' instance types, when [`LintOptions::export_instance_types`] asked.
    pub instance_types: Option<crate::karpenter::export::InstanceTypes>,
    pub read_errors: Vec<ReadError>,
    /// How the kustomization roots were rendered: by the tool, from the cache, or not.
    pub render_counts: crate::kustomize::RenderCounts,
}

/// Runs the whole pipeline. `stdin` is read when `-` is among the paths.
pub fn lint(opts: &LintOptions, stdin: &mut dyn std::io::Read) -> Result<Outcome, LintError> {
    let mut timings = Timings::from_env();
    let loaded = opts
        .instance_types
        .as_deref()
        .map(|p| load_catalog(p, opts.max_file_size))
        .transpose()?;
    let catalog: &Catalog = loaded.as_ref().unwrap_or_else(|| Catalog::builtin());
    let found = discover_inputs(opts)?;
    timings.mark("discover files");
    let (inputs, hidden, mut read_errors) = (found.inputs, found.hidden, found.read_errors);
    let (inputs, kustomized) = kustomize_inputs(opts, inputs, found.named_only)?;
    let render_counts = kustomized.plan.counts;
    timings.mark(&format!(
        "kustomize: {} rendered, {} from the cache, {} not rendered (no named file feeds them)",
        render_counts.rendered, render_counts.cached, render_counts.not_fed
    ));
    if kustomized.plan.deadline_missed > 0 {
        read_errors.push(ReadError::RenderDeadline {
            roots: kustomized.plan.deadline_missed,
            secs: opts.kustomize_timeout.as_secs(),
        });
    }
    let (mut sources, stdin_errors) = sources::sources(inputs, stdin, opts.max_file_size);
    read_errors.extend(stdin_errors);
    let renders = sources::add_kustomized(&mut sources, kustomized.plan);

    let linted: Vec<bool> = sources.iter().map(|s| !s.context).collect();
    let places = || scopes::places(&sources, &renders);
    let scopes = scopes::Scopes::new(&opts.clusters, places, &linted);
    let mut files: Vec<cluster::FileState> = (0..sources.len())
        .map(|_| cluster::FileState::Outside)
        .collect();
    let mut annotations = crate::suppress::Annotations::default();
    let mut judged = Vec::new();
    let mut instance_types: Option<crate::karpenter::export::InstanceTypes> = None;
    for scope in &scopes.list {
        let one = judge_scope(opts, catalog, &sources, scope, &mut timings);
        for (id, state) in one.files.into_iter().enumerate() {
            if scope.counted[id] {
                files[id] = state;
            }
        }
        annotations.merge(one.annotations);
        if let Some(mut new) = one.instance_types {
            new.node_pools = (new.node_pools.into_iter())
                .map(|(pool, types)| (scope.qualified(&pool), types))
                .collect();
            match &mut instance_types {
                None => instance_types = Some(new),
                Some(all) => all.node_pools.extend(new.node_pools),
            }
        }
        judged.push(one.judged);
    }
    let judged = scopes.merge(judged);
    let finished = run::finish(run::RunInput {
        opts,
        sources: &sources,
        files,
        annotations,
        judged,
        renders: &renders,
        notes: &kustomized.notes,
    });
    timings.mark("run phase");
    read_errors.extend(finished.read_errors);
    let mut report = finished.report;
    report.summary.skipped_hidden = hidden.len();
    report
        .notes
        .extend(discover::hidden_note(&hidden).map(|n| crate::report::Note::new("skipped", n)));
    report.notes.extend(found.notes.iter().cloned());
    if !found.named_only {
        report.notes.extend(scopes.idle.iter().map(|name| {
            crate::report::Note::new(
                "skipped",
                format!("cluster {name}: no linted file lies under its paths; it was not judged"),
            )
        }));
    }
    report.sources = sources;
    report.sources.extend(finished.mapped_sources);
    Ok(Outcome {
        report,
        plan: finished.plan,
        cost: finished.cost,
        disruption: finished.disruption,
        instance_types,
        read_errors,
        render_counts,
    })
}

/// What judging one scope leaves for the run.
struct ScopeJudged {
    files: Vec<cluster::FileState>,
    annotations: crate::suppress::Annotations,
    judged: run::Judged,
    instance_types: Option<crate::karpenter::export::InstanceTypes>,
}

/// The cluster and workload phases of one scope, and its judgement. If the cluster
/// phase's byte scan let a held kind through, both run once more with those files held
/// whole.
fn judge_scope(
    opts: &LintOptions,
    catalog: &Catalog,
    sources: &[crate::report::Source],
    scope: &scopes::Scope,
    timings: &mut Timings,
) -> ScopeJudged {
    let facts = scope.facts.unwrap_or(&opts.cluster);
    let mut hold_whole = vec![false; sources.len()];
    loop {
        let progress = Progress::start(sources.len());
        let mut held = cluster::parse_held(opts, sources, &scope.member, &hold_whole, &progress);
        timings.mark("cluster phase: read + parse held documents");
        let index = Index::new(&held.objects);
        let cx = Context::new(&index, catalog, facts);
        timings.mark("cluster phase: index + simulator");
        let instance_types = opts
            .export_instance_types
            .then(|| crate::karpenter::export::instance_types(cx.sim.as_ref(), &cx.cluster.zones));
        let mut workloads = workload::stream(
            opts,
            sources,
            &mut held.files,
            &cx,
            held.objects.len(),
            &progress,
        );
        drop(progress);
        timings.mark("workload phase");
        if !workloads.missed.is_empty() {
            // The byte scan let held kinds through in these files: hold them whole.
            for id in workloads.missed {
                hold_whole[id] = true;
            }
            continue;
        }
        // The held objects' own hooks, facts and plan rows, beside the streamed ones'.
        let held_checked = workload::check_all(&held.objects, &cx, opts.plan_rows());
        workloads.checked = workloads.checked.merge(held_checked);
        timings.mark("workload phase: held objects");
        let judged = run::judge(opts, sources, &cx, workloads.checked);
        let mut annotations = workloads.annotations;
        annotations.add(&held.objects);
        annotations.keep_sources(|id| scope.counted[id]);
        return ScopeJudged {
            files: held.files,
            annotations,
            judged,
            instance_types,
        };
    }
}

/// `aws ec2 describe-instance-types` JSON as a catalog, at most `max` bytes of it.
fn load_catalog(path: &Path, max: u64) -> Result<Catalog, LintError> {
    let err = |source: InstanceTypesError| LintError::InstanceTypes {
        path: crate::report::escape::line(&path.display().to_string()).into_owned(),
        source,
    };
    let bytes = discover::read_regular_file_at_most(path, max).map_err(|e| err(e.into()))?;
    let text = String::from_utf8(bytes).map_err(|e| err(InstanceTypesError::NotUtf8(e)))?;
    Catalog::from_describe_instance_types_json(&text).map_err(|e| {
        err(InstanceTypesError::Catalog(crate::config::shorten(
            &e.to_string(),
            crate::config::MAX_MESSAGE,
        )))
    })
}

/// The linted inputs, then the `--context` inputs not already linted; each file once,
/// whatever its spelling (see [`discover::identity`]). Beside them, the hidden entries the
/// walks left out, the paths that could not be read, and notes on what the globs did.
struct DiscoveredInputs {
    inputs: Vec<Input>,
    hidden: Vec<Hidden>,
    read_errors: Vec<ReadError>,
    /// Named files an exclude glob left out; globs that matched nothing in a walked tree.
    notes: Vec<crate::report::Note>,
    /// The linted paths are files named one by one (a pre-commit hook), no tree walked.
    named_only: bool,
}

fn discover_inputs(opts: &LintOptions) -> Result<DiscoveredInputs, LintError> {
    let filters = Filters::new(&opts.include, &opts.exclude)?;
    let linted = discover::discover(&opts.paths, false, opts.walk, &filters);
    let context = discover::discover(&opts.context, true, opts.walk, &filters);
    let read_errors = (linted.errors.into_iter().chain(context.errors))
        .map(ReadError::from)
        .collect();
    let mut hidden = linted.hidden;
    hidden.extend(context.hidden);
    hidden.sort();
    hidden.dedup();
    let mut excluded = linted.excluded;
    excluded.extend(context.excluded);
    let mut notes: Vec<crate::report::Note> = discover::excluded_note(&excluded)
        .map(|n| crate::report::Note::new("skipped", n))
        .into_iter()
        .collect();
    // Only a walk tries every glob: files named one by one (a pre-commit hook) meet few.
    if linted.walked || context.walked {
        notes.extend(
            discover::unmatched_globs_note(&filters).map(|n| crate::report::Note::new("config", n)),
        );
    }
    let named_only = !linted.walked && !opts.paths.iter().any(|p| p.as_os_str() == "-");
    // One tree walked without following links lists each file once, under one spelling:
    // nothing to resolve (a path resolved costs a system call per component).
    let inputs = if opts.paths.len() + opts.context.len() == 1 && !opts.walk.follow {
        linted.inputs.into_iter().chain(context.inputs).collect()
    } else {
        discover::first_of_each(linted.inputs, context.inputs, discover::identity)
    };
    Ok(DiscoveredInputs {
        named_only,
        inputs,
        hidden,
        read_errors,
        notes,
    })
}

/// The inputs once kustomizations are read: the files they use replaced by the rendered
/// roots, or kept with their changes noted ([`crate::kustomize::plan`]).
fn kustomize_inputs(
    opts: &LintOptions,
    inputs: Vec<Input>,
    named_only: bool,
) -> Result<(Vec<Input>, Kustomized), LintError> {
    let candidates: Vec<crate::kustomize::Candidate> = (inputs.iter())
        .filter_map(|i| match i {
            Input::File { path, context } => Some(crate::kustomize::Candidate {
                path,
                context: *context,
            }),
            _ => None,
        })
        .collect();
    if !candidates
        .iter()
        .any(|c| crate::kustomize::is_kustomization(c.path))
    {
        return Ok((inputs, Kustomized::default()));
    }
    let tool = render_tool(opts)?;
    let limits = crate::kustomize::Limits {
        max_file_size: opts.max_file_size,
        deadline: opts.kustomize_timeout,
    };
    let cache = opts.cache_dir.as_deref().map(crate::kustomize::Cache::at);
    let mut plan = crate::kustomize::plan(
        &candidates,
        opts.kustomize,
        tool,
        limits,
        &opts.kustomize_roots,
        cache.as_ref(),
        named_only,
    )?;
    let notes = (std::mem::take(&mut plan.notes).into_iter())
        .map(|n| crate::report::Note::new("kustomize", n))
        .collect();
    let mut inputs = inputs;
    if !plan.replaced.is_empty() {
        // A path is normalised only when its file's name is one of a replaced file's (a
        // normal path ends with the same name as the path it was made from).
        let names: std::collections::HashSet<&std::ffi::OsStr> =
            plan.replaced.iter().filter_map(|p| p.file_name()).collect();
        let normal = discover::Normal::here();
        inputs.retain(|i| match i {
            Input::File { path, .. } => {
                path.file_name().is_some_and(|n| !names.contains(n))
                    || !plan.replaced.contains(&normal.of(path))
            }
            _ => true,
        });
    }
    Ok((inputs, Kustomized { plan, notes }))
}

/// The render tool of the run: the one named, else one found on `PATH`; never one from
/// the linted or context trees, nor with `kustomize: off`.
fn render_tool(opts: &LintOptions) -> Result<Option<crate::kustomize::Tool>, LintError> {
    if opts.kustomize == crate::kustomize::Mode::Off {
        return Ok(None);
    }
    let mut trees: Vec<PathBuf> = opts.paths.iter().chain(&opts.context).cloned().collect();
    trees.extend(opts.untrusted.iter().cloned());
    let untrusted = crate::kustomize::untrusted_trees(&trees);
    match &opts.kustomize_bin {
        Some((program, from)) => Ok(Some(
            crate::kustomize::Tool::chosen(program, *from, &untrusted)
                .map_err(crate::kustomize::KustomizeError::from)?,
        )),
        None => Ok(crate::kustomize::Tool::find(&untrusted)),
    }
}

/// What reading the kustomizations left for the run.
#[derive(Default)]
struct Kustomized {
    plan: crate::kustomize::Plan,
    notes: Vec<crate::report::Note>,
}

/// Numbers objects from `base` in their order: an object's id is unique in the run (held
/// objects from 0, so that their id is their place in the held list; each streamed task's
/// objects from the next free id).
fn number(objects: &mut [Object], base: usize) {
    for (i, o) in objects.iter_mut().enumerate() {
        o.id = base + i;
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A mutex's value once every task is done (a panicked task only poisons it).
fn into_inner<T>(m: Mutex<T>) -> T {
    m.into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
