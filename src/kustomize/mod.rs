//! Sources stage, kustomize: what the cluster receives from a kustomization, not the files
//! as written.
//!
//! A directory holding `kustomization.yaml` (or `.yml`, or `Kustomization`) is a
//! kustomization; those no other kustomization of the run includes are its *roots*, the
//! overlays a pipeline builds. Each root is rendered with the real tool (`kustomize build`,
//! else `kubectl kustomize`) with origin annotations, and the rendered stream is linted in
//! place of the files the kustomizations use; [`remap`] points findings back at the file
//! and key each object came from. Without the tool (or with `kustomize: off`), the
//! kustomizations are still read: files they use as patches are not linted as objects, and
//! their `namespace`, `namePrefix`/`nameSuffix` and `commonLabels` are applied to the
//! resources they list ([`Transform`]).
//!
//! Kustomizations that reach the network (remote bases) are never built: karplint is
//! offline, and their files are linted as written.

mod cache;
pub mod remap;
mod remote;
mod tool;

pub use cache::Cache;
pub use tool::{Chosen, Isolation, Tool, ToolError, isolation, untrusted_trees};

use crate::model::de::{Spanned, SpannedMap, Str, Text, nullable};
use crate::model::{Body, Kind, Object};
use crate::progress::{Counting, Progress};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `kustomize:` in the config, `--kustomize` on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Mode {
    /// Render with the tool when one is on `PATH`, else read the kustomizations.
    #[default]
    Auto,
    /// Render, and fail the run when no tool is found.
    Always,
    /// Never run the tool; read the kustomizations.
    Off,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Mode::Auto),
            "always" => Ok(Mode::Always),
            "off" => Ok(Mode::Off),
            other => Err(format!(
                "unknown kustomize mode {other:?}: use auto, always or off"
            )),
        }
    }
}

/// The file names kustomize looks for in a directory, in its order.
pub const FILE_NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Whether `path` names a kustomization file.
pub fn is_kustomization(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| FILE_NAMES.contains(&n))
}

/// The fields of a kustomization that say which files it uses and how it changes them.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Kustomization {
    #[serde(deserialize_with = "nullable")]
    kind: Option<String>,
    #[serde(deserialize_with = "nullable")]
    resources: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    bases: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    components: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    patches: Vec<PatchRef>,
    #[serde(deserialize_with = "nullable")]
    patches_strategic_merge: Vec<String>,
    #[serde(deserialize_with = "nullable")]
    patches_json6902: Vec<PatchRef>,
    #[serde(deserialize_with = "nullable")]
    namespace: Option<String>,
    #[serde(deserialize_with = "nullable")]
    name_prefix: Option<String>,
    #[serde(deserialize_with = "nullable")]
    name_suffix: Option<String>,
    #[serde(deserialize_with = "nullable")]
    common_labels: BTreeMap<String, String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PatchRef {
    path: Option<String>,
}

/// What a kustomization does to the resources it lists, as far as karplint applies it
/// without the tool.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Transform {
    pub namespace: Option<String>,
    pub name_prefix: String,
    pub name_suffix: String,
    pub labels: BTreeMap<String, String>,
}

impl Transform {
    /// `inner` (a nested kustomization's) applied first, then this one.
    fn over(&self, inner: &Transform) -> Transform {
        let mut labels = inner.labels.clone();
        labels.extend(self.labels.clone());
        Transform {
            namespace: self.namespace.clone().or_else(|| inner.namespace.clone()),
            name_prefix: format!("{}{}", self.name_prefix, inner.name_prefix),
            name_suffix: format!("{}{}", inner.name_suffix, self.name_suffix),
            labels,
        }
    }

    fn is_empty(&self) -> bool {
        *self == Transform::default()
    }

    /// What kustomize's namespace, prefix/suffix and `commonLabels` transformers do to `o`,
    /// as far as rules read it: the namespace of namespaced kinds, every name and the
    /// autoscaler's reference to its target, labels on the object, its pod template and its
    /// selector. The values change; their spans stay where the file wrote them.
    pub fn apply(&self, o: &mut Object) {
        let namespaced = !matches!(
            o.kind,
            Kind::Namespace
                | Kind::Node
                | Kind::NodePool
                | Kind::Provisioner
                | Kind::EC2NodeClass
                | Kind::AWSNodeTemplate
                | Kind::EksNodeClass
                | Kind::NodeOverlay
                | Kind::StorageClass
                | Kind::PersistentVolume
                | Kind::ClusterConfig
        );
        let at = o.meta.name.as_ref().map_or((0, 0), |n| (n.offset, n.len));
        if let (Some(ns), true) = (&self.namespace, namespaced) {
            let value = Str::from(ns.as_str());
            match &mut o.meta.namespace {
                Some(n) => n.value = value,
                None => o.meta.namespace = Some(spanned(value, at)),
            }
        }
        let rename = |n: &mut Spanned<Str>| {
            n.value = Str::from(format!(
                "{}{}{}",
                self.name_prefix, n.value, self.name_suffix
            ));
        };
        if let Some(n) = &mut o.meta.name {
            rename(n);
        }
        match &mut o.body {
            Body::Autoscaler(a) => {
                if let Some(n) = &mut a.scale_target_ref.name {
                    rename(n);
                }
            }
            // kustomize's `commonLabels` field specs name the built-in workload kinds only.
            Body::Workload(w) if !self.labels.is_empty() && !matches!(o.kind, Kind::Crd(_)) => {
                add_labels(&mut w.template.metadata.labels, &self.labels, at);
                if let Some(sel) = &mut w.selector {
                    add_labels(&mut sel.match_labels, &self.labels, at);
                }
            }
            _ => {}
        }
        add_labels(o.meta.labels_mut(), &self.labels, at);
    }
}

fn spanned<T>(value: T, (offset, len): (u32, u32)) -> Spanned<T> {
    Spanned { value, offset, len }
}

/// Sets each of `labels` in `map` (replacing a value written there), at span `at`.
fn add_labels(map: &mut SpannedMap, labels: &BTreeMap<String, String>, at: (u32, u32)) {
    if labels.is_empty() {
        return;
    }
    let mut entries = std::mem::take(&mut map.0).into_vec();
    for (k, v) in labels {
        let value = spanned(Text(Str::from(v.as_str())), at);
        match entries.iter_mut().find(|(key, _)| key.value == k.as_str()) {
            Some((_, old)) => old.value = value.value,
            None => entries.push((spanned(Str::from(k.as_str()), at), value)),
        }
    }
    map.0 = entries.into_boxed_slice();
}

/// One kustomization directory, read.
#[derive(Debug)]
struct Dir {
    /// The kustomization file, as discovered.
    file: PathBuf,
    /// Whether it was found under `--context`.
    context: bool,
    /// Resource files it lists (resolved, lexically normalised).
    resource_files: Vec<PathBuf>,
    /// Kustomization directories it includes (resources, bases, components).
    includes: Vec<PathBuf>,
    /// Patch files.
    patches: Vec<PathBuf>,
    transform: Transform,
    /// What it names that is remote (or missing): never built.
    remote: Option<String>,
    /// The file could not be read as a kustomization.
    unreadable: Option<String>,
    /// A `kind: Component`: built only as part of the kustomizations that list it.
    component: bool,
    /// It lists its own directory (`.`).
    includes_itself: bool,
    /// The kustomization file and the local files its values may name: what a cached
    /// render's key reads.
    named: Vec<PathBuf>,
    /// A field whose inputs a cache key cannot see ([`cache::UNCACHEABLE_FIELDS`]).
    uncacheable: Option<&'static str>,
}

/// A discovered file, as the planner sees it.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'p> {
    pub path: &'p Path,
    pub context: bool,
}

/// A root rendered by the tool.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The root's kustomization file, as discovered (the rendered source's name is derived
    /// from it).
    pub file: PathBuf,
    pub context: bool,
    pub text: String,
    /// The directory the origin annotations' paths are relative to.
    pub origin_base: PathBuf,
    /// The patch files its kustomizations apply (absolute, normal).
    pub patches: Vec<PathBuf>,
}

/// What the kustomizations of a run change about its inputs.
#[derive(Debug, Default)]
pub struct Plan {
    /// Rendered roots, linted in place of the files they use.
    pub rendered: Vec<Rendered>,
    /// Files not to lint as written (used by a rendered root, or patches).
    pub replaced: BTreeSet<PathBuf>,
    /// Files linted as written with a kustomization's changes applied.
    pub transforms: BTreeMap<PathBuf, Arc<Transform>>,
    /// What the run should be told.
    pub notes: Vec<String>,
    /// Files two unrendered roots change differently: linted as written.
    conflicting: BTreeSet<PathBuf>,
    /// Roots not rendered because the run's render deadline passed.
    pub deadline_missed: usize,
    /// How the rendered roots were had.
    pub counts: RenderCounts,
}

/// How many roots the tool rendered, how many came from the cache, and how many were
/// read as written because no named file feeds them.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct RenderCounts {
    pub rendered: usize,
    pub cached: usize,
    pub not_fed: usize,
}

/// What became of one root.
enum Outcome {
    /// Rendered, by the tool or (`true`) from the cache.
    Rendered(Rendered, bool),
    /// With files named one by one, a root none of them feeds, not in the cache.
    NotFed,
    Failed(BuildError),
    /// Not for the tool: no tool, a remote or repeated part, a component.
    NotBuilt,
}

/// What every root's render shares.
struct Renderer<'a> {
    tool: Option<&'a Tool>,
    /// [`Tool::identity`], for cache keys.
    identity: String,
    cache: Option<&'a Cache>,
    fed_only: bool,
    deadline: Instant,
    max: u64,
}

impl Renderer<'_> {
    /// One root: from the cache when its files are unchanged, else by the tool (unless no
    /// linted file feeds it and only those are rendered).
    fn render(
        &self,
        root: &Path,
        dir: &Dir,
        used: &Used,
        dirs: &BTreeMap<PathBuf, Dir>,
        linted: &BTreeSet<PathBuf>,
    ) -> Outcome {
        let Some(tool) = self.tool else {
            return Outcome::NotBuilt;
        };
        if used.remote.is_some() || used.repeated.is_some() || dir.component {
            return Outcome::NotBuilt;
        }
        let fed = (used.resources.keys().chain(&used.patches)).any(|p| linted.contains(p));
        let context = dir.context && !fed;
        let visited = || used.visited.iter().filter_map(|d| dirs.get(d));
        let keyed = self
            .cache
            .filter(|_| visited().all(|d| d.uncacheable.is_none()))
            .and_then(|cache| {
                let mut named: Vec<PathBuf> = visited().flat_map(|d| d.named.clone()).collect();
                named.sort();
                named.dedup();
                let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
                Some((cache, Cache::key(&self.identity, &real, &named, self.max)?))
            });
        if let Some(entry) = keyed.as_ref().and_then(|(c, k)| c.get(k)) {
            let rendered = Rendered {
                file: dir.file.clone(),
                context,
                text: entry.text,
                origin_base: entry.origin_base,
                patches: Vec::new(),
            };
            return Outcome::Rendered(rendered, true);
        }
        if self.fed_only && !fed && !shapes_the_cluster(dir, used, dirs, self.max) {
            return Outcome::NotFed;
        }
        match build(tool, dir, root, self.deadline, self.max) {
            Ok(mut rendered) => {
                if let Some((cache, key)) = &keyed {
                    cache.put(key, &rendered.origin_base, &rendered.text);
                }
                rendered.context = context;
                Outcome::Rendered(rendered, false)
            }
            Err(why) => Outcome::Failed(why),
        }
    }
}

/// Whether a root's kustomizations, resources or patches may hold objects every workload
/// is judged against (NodePools, node classes, DaemonSets, LimitRanges, …: the byte scan
/// [`crate::parse::scan::may_shape_the_cluster`]). Such a root is rendered even when no
/// named file feeds it, so that the cluster is read as the overlays patch it. A file that
/// cannot be read within `max` bytes is taken to shape it.
fn shapes_the_cluster(dir: &Dir, used: &Used, dirs: &BTreeMap<PathBuf, Dir>, max: u64) -> bool {
    let kustomizations = (used.visited.iter())
        .filter_map(|d| dirs.get(d))
        .map(|d| &d.file);
    let files = (used.resources.keys()).chain(&used.patches);
    std::iter::once(&dir.file)
        .chain(kustomizations)
        .chain(files)
        .any(|f| {
            crate::discover::read_regular_file_at_most(f, max)
                .ok()
                .is_none_or(|text| crate::parse::scan::may_shape_the_cluster(&text))
        })
}

/// Why a run cannot go on (exit code 2).
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum KustomizeError {
    #[error("kustomize: always, but neither kustomize nor kubectl is on PATH")]
    #[diagnostic(
        code(karplint::kustomize),
        help(
            "install kustomize (https://kubectl.docs.kubernetes.io/installation/kustomize/) or kubectl, or set `kustomize: auto`"
        )
    )]
    NoTool,
    #[error(transparent)]
    #[diagnostic(transparent)]
    Tool(#[from] ToolError),
}

/// The limits every render of a run shares.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest kustomization file read, and the largest rendered output kept
    /// (`--max-file-size`).
    pub max_file_size: u64,
    /// How long all renders of the run may take together (`--kustomize-timeout`).
    pub deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_size: 256 * 1024 * 1024,
            deadline: DEFAULT_DEADLINE,
        }
    }
}

/// The default of `--kustomize-timeout`: all renders of a run, together.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(300);

/// Reads the kustomizations among `files` and decides what each root becomes: those no
/// other includes, and the directories of `also_roots` (bases applied on their own too).
/// A root is taken from `cache` when its files are unchanged, and kept there once
/// rendered; with `fed_only` (files named one by one), a root no linted file feeds is
/// rendered only from the cache.
pub fn plan(
    files: &[Candidate<'_>],
    mode: Mode,
    tool: Option<Tool>,
    limits: Limits,
    also_roots: &[PathBuf],
    cache: Option<&Cache>,
    fed_only: bool,
) -> Result<Plan, KustomizeError> {
    // Each kustomization is read and parsed on its own: side by side.
    let dirs: BTreeMap<PathBuf, Dir> = {
        use rayon::prelude::*;
        let read: Vec<(PathBuf, Dir)> = (files.par_iter())
            .filter(|f| is_kustomization(f.path))
            .filter_map(|f| Some((normal(f.path.parent()?), read_dir(f, limits.max_file_size))))
            .collect();
        read.into_iter().collect()
    };
    let mut plan = Plan::default();
    if dirs.is_empty() {
        return Ok(plan);
    }
    let tool = match (mode, tool) {
        (Mode::Off, _) => None,
        (Mode::Always, None) => return Err(KustomizeError::NoTool),
        (_, tool) => tool,
    };
    let also: BTreeSet<PathBuf> = also_roots.iter().map(|p| normal(p)).collect();
    let included: BTreeSet<&PathBuf> = (dirs.values().flat_map(|d| &d.includes))
        .filter(|p| !also.contains(*p))
        .collect();
    if tool.is_some() {
        // Without the tool every file is linted as written, bases included.
        plan.note_bases(&dirs, &included);
    }
    let mut roots = Vec::new();
    for (root, dir) in dirs.iter().filter(|(p, _)| !included.contains(p)) {
        if let Some(why) = &dir.unreadable {
            plan.notes.push(format!(
                "{}: not read as a kustomization ({why}); the files of its directory are linted as written",
                dir.file.display()
            ));
            continue;
        }
        let mut used = Used::default();
        used.walk(root, &dirs, &Transform::default());
        roots.push((root, dir, used));
    }
    let deadline = Instant::now() + limits.deadline;
    // Which files feed a root matters only to a render.
    let here = crate::discover::Normal::here();
    let linted: BTreeSet<PathBuf> = (files.iter().filter(|f| tool.is_some() && !f.context))
        .map(|f| here.of(f.path))
        .collect();
    let renderer = Renderer {
        tool: tool.as_ref(),
        identity: tool.as_ref().map(Tool::identity).unwrap_or_default(),
        cache,
        fed_only,
        deadline,
        max: limits.max_file_size,
    };
    // Each build is a process of its own: they run side by side, and are taken in order.
    let outcomes: Vec<Outcome> = {
        use rayon::prelude::*;
        let progress = Progress::counting(Counting {
            verb: "rendered",
            what: "kustomizations",
            total: roots.len(),
        });
        (roots.par_iter())
            .map(|(root, dir, used)| {
                let outcome = renderer.render(root, dir, used, &dirs, &linted);
                progress.tick();
                outcome
            })
            .collect()
    };
    if let Some(cache) =
        cache.filter(|_| outcomes.iter().any(|o| matches!(o, Outcome::Rendered(..))))
    {
        cache.prune();
    }
    let mut not_fed = Vec::new();
    for ((root, dir, used), outcome) in roots.into_iter().zip(outcomes) {
        match outcome {
            Outcome::Rendered(mut rendered, cached) => {
                if cached {
                    plan.counts.cached += 1;
                } else {
                    plan.counts.rendered += 1;
                }
                rendered.patches = used.patches.iter().cloned().collect();
                plan.replaced.extend(used.resources.into_keys());
                plan.replaced.extend(used.patches);
                plan.rendered.push(rendered);
            }
            Outcome::NotFed => {
                not_fed.push(root_name(&dir.file));
                plan.add_unrendered(used);
            }
            Outcome::Failed(why) => {
                plan.note_failure(tool.as_ref(), root, why, limits.deadline);
                plan.add_unrendered(used);
            }
            Outcome::NotBuilt => {
                if let Some((file, why)) = &used.remote {
                    plan.notes.push(format!(
                        "{} {why} and was not built (karplint does not go online); its local files are linted as written",
                        file.display()
                    ));
                } else if let (Some(again), Some(_)) = (&used.repeated, &tool) {
                    plan.notes.push(format!(
                        "{} reaches {} by more than one path (a directory listed twice, or a cycle), which kustomize refuses after work that doubles with each level; not built, its files are linted as written",
                        dir.file.display(),
                        relative_to_cwd(again).display()
                    ));
                }
                plan.add_unrendered(used);
            }
        }
    }
    if !not_fed.is_empty() {
        plan.counts.not_fed = not_fed.len();
        plan.notes.push(format!(
            "{} kustomization(s) that no named file feeds were not rendered (only named files are linted, and the cache held no render of them): {}; their files are read as written, with their namespace, name prefix and labels applied; a run on the whole tree fills the cache",
            not_fed.len(),
            crate::discover::first_names(&not_fed, 5)
        ));
    }
    plan.note_tool(tool.as_ref(), mode);
    Ok(plan)
}

/// A kustomization's directory as notes name it: as discovered, without a leading `./`.
fn root_name(file: &Path) -> String {
    let dir = file
        .parent()
        .unwrap_or(Path::new("."))
        .display()
        .to_string();
    dir.strip_prefix("./").map(str::to_owned).unwrap_or(dir)
}

/// Why a build gave nothing.
#[derive(Debug)]
enum BuildError {
    /// The tool failed, or could not be run: what it said.
    Failed(String),
    /// Killed at the end of its own time limit.
    TimedOut(Duration),
    /// Not started, or killed, because the run's render deadline passed.
    Deadline,
    /// Its output went over `--max-file-size`.
    TooLarge(u64),
}

impl Plan {
    /// The note naming the kustomizations linted only through those that include them.
    fn note_bases(&mut self, dirs: &BTreeMap<PathBuf, Dir>, included: &BTreeSet<&PathBuf>) {
        let bases: Vec<String> = (dirs.iter())
            .filter(|(p, d)| included.contains(p) && !d.component)
            .map(|(_, d)| root_name(&d.file))
            .collect();
        if bases.is_empty() {
            return;
        }
        self.notes.push(format!(
            "{} kustomization(s) are linted only as the kustomizations that include them render them: {}; a base that is also applied on its own (a lab, a sandbox) is not linted as such: list its directory under `kustomize: {{roots: [...]}}` in .karplint.yaml",
            bases.len(),
            crate::discover::first_names(&bases, 5)
        ));
    }

    /// The note on a root the tool did not render.
    fn note_failure(
        &mut self,
        tool: Option<&Tool>,
        root: &Path,
        why: BuildError,
        deadline: Duration,
    ) {
        let tool = tool.map(Tool::describe).unwrap_or_default();
        let root = root.display();
        self.notes.push(match why {
            BuildError::Failed(why) => format!(
                "{tool} failed for {root} ({why}); its files are linted as written, with its namespace, name prefix and labels applied"
            ),
            BuildError::TimedOut(after) => format!(
                "{tool} for {root} was stopped after {} s; its files are linted as written, with its namespace, name prefix and labels applied",
                after.as_secs()
            ),
            BuildError::TooLarge(max) => format!(
                "{tool} for {root} printed more than {max} bytes (--max-file-size) and was stopped; its files are linted as written, with its namespace, name prefix and labels applied"
            ),
            BuildError::Deadline => {
                self.deadline_missed += 1;
                format!(
                    "{root} was not rendered: the {} s render deadline of the run passed (--kustomize-timeout); its files are linted as written, with its namespace, name prefix and labels applied",
                    deadline.as_secs()
                )
            }
        });
    }

    /// The note on what rendered the roots (the binary, by its path, and whether it ran
    /// without network), or on why nothing did.
    fn note_tool(&mut self, tool: Option<&Tool>, mode: Mode) {
        if let (Some(tool), false) = (tool, self.rendered.is_empty()) {
            let roots: Vec<String> = (self.rendered.iter()).map(|r| root_name(&r.file)).collect();
            let network = match isolation() {
                Isolation::Namespace(_) => "without network access".to_string(),
                Isolation::None(why) => format!(
                    "with network access ({why}; fields that fetch were refused beforehand)"
                ),
            };
            self.notes.push(format!(
                "rendered {} kustomization(s) with `{}`, {network}: {}; findings point at the files the objects came from",
                roots.len(),
                tool.describe(),
                crate::discover::first_names(&roots, 5)
            ));
        }
        if tool.is_none() && mode == Mode::Auto {
            let patches = self.replaced.len();
            self.notes.push(format!(
                "kustomizations were not rendered: neither kustomize nor kubectl is on PATH (outside the linted trees); {patches} patch file(s) were not linted as objects, and namespace, name prefix and labels were applied by karplint; install kustomize for what the cluster receives"
            ));
        }
    }

    /// A root linted without the tool: its resources with its changes, its patches left
    /// out. A file two overlays change differently is linted as written, and said so.
    fn add_unrendered(&mut self, used: Used) {
        for (file, t) in used.resources {
            if t.is_empty() || self.conflicting.contains(&file) {
                continue;
            }
            match self.transforms.get(&file) {
                Some(had) if **had != t => {
                    self.transforms.remove(&file);
                    self.notes.push(format!(
                        "{} is changed differently by two kustomizations; without the tool it is linted as written",
                        file.display()
                    ));
                    self.conflicting.insert(file);
                }
                Some(_) => {}
                None => {
                    self.transforms.insert(file, Arc::new(t));
                }
            }
        }
        self.replaced.extend(used.patches);
    }
}

/// The files one root uses, with what its kustomizations do to each.
#[derive(Default)]
struct Used {
    resources: BTreeMap<PathBuf, Transform>,
    patches: BTreeSet<PathBuf>,
    /// The first kustomization met that names something remote or missing, and what.
    remote: Option<(PathBuf, String)>,
    /// The kustomization directories walked: each once, however often it is included.
    visited: BTreeSet<PathBuf>,
    /// A directory the root reaches by a second path (a base listed twice, a cycle, a
    /// kustomization listing itself): kustomize refuses these, but only after work that
    /// doubles with each level, so such a root is not built.
    repeated: Option<PathBuf>,
}

impl Used {
    /// The files of the kustomization at `dir`, under the changes of the kustomizations that
    /// include it (`outer`). Each directory is walked once: a directory included twice
    /// (`resources: [".", "./"]`, or two paths to one base) adds nothing the first visit did
    /// not, and a cycle ends where it closes.
    fn walk(&mut self, dir: &Path, dirs: &BTreeMap<PathBuf, Dir>, outer: &Transform) {
        let Some(k) = dirs.get(dir) else { return };
        if !self.visited.insert(dir.to_path_buf()) {
            self.repeated.get_or_insert_with(|| dir.to_path_buf());
            return;
        }
        if k.includes_itself {
            self.repeated.get_or_insert_with(|| dir.to_path_buf());
        }
        if self.remote.is_none() {
            self.remote = k.remote.clone().map(|why| (k.file.clone(), why));
        }
        let t = outer.over(&k.transform);
        self.patches.extend(k.patches.iter().cloned());
        self.resources.insert(normal(&k.file), Transform::default());
        for f in &k.resource_files {
            self.resources.entry(f.clone()).or_insert_with(|| t.clone());
        }
        for inc in &k.includes {
            self.walk(inc, dirs, &t);
        }
    }
}

/// Reads one kustomization file, of at most `max` bytes.
fn read_dir(f: &Candidate<'_>, max: u64) -> Dir {
    let base = normal(f.path.parent().unwrap_or(Path::new(".")));
    let mut dir = Dir {
        file: f.path.to_path_buf(),
        context: f.context,
        resource_files: Vec::new(),
        includes: Vec::new(),
        patches: Vec::new(),
        transform: Transform::default(),
        remote: None,
        unreadable: None,
        component: false,
        includes_itself: false,
        named: vec![normal(f.path)],
        uncacheable: None,
    };
    let (k, fields) = match read_kustomization(f.path, max) {
        Ok(k) => k,
        Err(why) => {
            dir.unreadable = Some(why);
            return dir;
        }
    };
    dir.remote = remote::remote_field(&fields).map(|f| format!("names a remote `{f}` entry"));
    cache::named_files(&fields, &base, &mut dir.named);
    dir.uncacheable = (cache::UNCACHEABLE_FIELDS.into_iter()).find(|f| fields.get(f).is_some());
    for r in k.resources.iter().chain(&k.bases).chain(&k.components) {
        // kustomize reads a remote spelling as remote before it looks on disk.
        if remote::url_like(r) {
            continue;
        }
        let p = normal(&base.join(r));
        if p == base {
            // The kustomization itself (`.`): kustomize refuses the cycle.
            dir.includes_itself = true;
        } else if p.is_dir() {
            dir.includes.push(p);
        } else if p.is_file() {
            dir.resource_files.push(p);
        } else if dir.remote.is_none() {
            dir.remote = Some("names a missing resource".into());
        }
    }
    let patch_paths = (k.patches.iter().chain(&k.patches_json6902)).filter_map(|p| p.path.as_ref());
    // `patchesStrategicMerge` entries are paths or inline patches (several lines).
    let inline = k
        .patches_strategic_merge
        .iter()
        .filter(|p| !p.contains('\n'));
    dir.patches = patch_paths
        .chain(inline)
        .filter(|p| !remote::url_like(p))
        .map(|p| normal(&base.join(p)))
        .collect();
    dir.component = k.kind.as_deref() == Some("Component");
    dir.transform = Transform {
        namespace: k.namespace,
        name_prefix: k.name_prefix.unwrap_or_default(),
        name_suffix: k.name_suffix.unwrap_or_default(),
        labels: k.common_labels,
    };
    dir
}

/// The kustomization at `path` (at most `max` bytes), typed, and as a generic value for
/// [`remote::remote_field`].
fn read_kustomization(path: &Path, max: u64) -> Result<(Kustomization, serde_json::Value), String> {
    let bytes = crate::discover::read_file_at_most(path, max)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("over the {max}-byte limit (--max-file-size)"))?;
    let text = String::from_utf8(bytes).map_err(|e| format!("not UTF-8: {}", e.utf8_error()))?;
    let parse_error = |e: serde_saphyr::Error| first_line(&e.to_string());
    let k =
        serde_saphyr::from_str_with_options(&text, crate::parse::options()).map_err(parse_error)?;
    let fields =
        serde_saphyr::from_str_with_options(&text, crate::parse::options()).map_err(parse_error)?;
    Ok((k, fields))
}

/// The first line of a parse error, at most 200 characters of it.
fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= 200 {
        return line.to_string();
    }
    let cut: String = line.chars().take(200).collect();
    format!("{cut}…")
}

/// `p` (absolute) relative to the working directory when below it, as notes show paths.
fn relative_to_cwd(p: &Path) -> PathBuf {
    let cwd = std::env::current_dir().map(|d| normal(&d));
    match cwd.as_ref().ok().and_then(|d| p.strip_prefix(d).ok()) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.to_path_buf(),
        Some(_) => PathBuf::from("."),
        None => p.to_path_buf(),
    }
}

pub use crate::discover::normal;

/// Renders one root with origin annotations. The root's own kustomization is not changed:
/// a kustomization in a temporary directory lists the root (by a relative path, as
/// kustomize loads no absolute root) and asks for `buildMetadata: [originAnnotations]`.
/// Not started once `deadline` has passed; killed when it is reached.
fn build(
    tool: &Tool,
    dir: &Dir,
    root: &Path,
    deadline: Instant,
    max: u64,
) -> Result<Rendered, BuildError> {
    if Instant::now() >= deadline {
        return Err(BuildError::Deadline);
    }
    let failed = |e: std::io::Error| BuildError::Failed(e.to_string());
    let wrapper = tempfile::tempdir().map_err(failed)?;
    // kustomize resolves symbolic links in the roots it loads (a temporary directory under
    // /var on macOS is /private/var): the relative path is between real paths.
    let base = std::fs::canonicalize(wrapper.path()).map_err(failed)?;
    let root = std::fs::canonicalize(root).map_err(failed)?;
    let rel = relative(&base, &root)
        .ok_or_else(|| BuildError::Failed("the root is on another drive".into()))?;
    let kustomization = format!(
        "resources:\n  - {}\nbuildMetadata: [originAnnotations]\n",
        serde_json::to_string(&rel.to_string_lossy())
            .map_err(|e| BuildError::Failed(e.to_string()))?
    );
    std::fs::write(base.join("kustomization.yaml"), kustomization).map_err(failed)?;
    tool::prepare_home(&base).map_err(failed)?;
    let own = Instant::now() + tool::BUILD_TIMEOUT;
    let ran = tool::run_bounded(tool.command(&base), own.min(deadline), max, &base)
        .map_err(BuildError::Failed)?;
    let out = match ran {
        tool::Ran::Done(out) => out,
        tool::Ran::TooLarge(max) => return Err(BuildError::TooLarge(max)),
        tool::Ran::TimedOut(_) if deadline <= own => return Err(BuildError::Deadline),
        tool::Ran::TimedOut(after) => return Err(BuildError::TimedOut(after)),
    };
    if !out.status.success() {
        return Err(BuildError::Failed(cause(&String::from_utf8_lossy(
            &out.stderr,
        ))));
    }
    let text = String::from_utf8(out.stdout)
        .map_err(|_| BuildError::Failed("output is not UTF-8".into()))?;
    Ok(Rendered {
        file: dir.file.clone(),
        context: dir.context,
        text,
        origin_base: base,
        patches: Vec::new(),
    })
}

/// The longest cause a failure note quotes, in characters.
const MAX_CAUSE: usize = 300;

/// Why the tool failed, from its standard error: its last `Error:` line (else its last
/// line), whose end is the cause (kustomize chains the context first); a long one keeps
/// its end.
fn cause(stderr: &str) -> String {
    let lines = || {
        stderr
            .lines()
            .rev()
            .map(str::trim)
            .filter(|l| !l.is_empty())
    };
    let line = lines()
        .find(|l| l.starts_with("Error:") || l.starts_with("error:"))
        .or_else(|| lines().next())
        .unwrap_or("no output");
    let count = line.chars().count();
    if count <= MAX_CAUSE {
        return line.to_string();
    }
    let tail: String = line.chars().skip(count - MAX_CAUSE).collect();
    format!("…{tail}")
}

/// `to` relative to `from`, both absolute and normal.
fn relative(from: &Path, to: &Path) -> Option<PathBuf> {
    let f: Vec<Component> = from.components().collect();
    let t: Vec<Component> = to.components().collect();
    if f.first() != t.first() {
        return None;
    }
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_cause_keeps_the_end_of_kustomizes_error_chain() {
        let long = format!(
            "Error: accumulating resources: {}: the real cause\n",
            "context ".repeat(100)
        );
        let c = cause(&long);
        assert!(c.ends_with("the real cause"), "{c}");
        assert!(c.starts_with('…'));
        assert_eq!(
            cause("warning: x\nError: missing file\n\n"),
            "Error: missing file"
        );
    }

    #[test]
    fn relative_paths_climb_to_the_common_ancestor() {
        let r = relative(Path::new("/tmp/a/b"), Path::new("/work/x")).unwrap();
        assert_eq!(r, PathBuf::from("../../../work/x"));
        assert_eq!(
            relative(Path::new("/a"), Path::new("/a/b")).unwrap(),
            PathBuf::from("b")
        );
    }

    #[test]
    fn outer_transforms_wrap_inner_ones() {
        let inner = Transform {
            namespace: Some("base".into()),
            name_prefix: "b-".into(),
            name_suffix: "-b".into(),
            labels: [("a".to_string(), "1".to_string())].into(),
        };
        let outer = Transform {
            namespace: Some("prod".into()),
            name_prefix: "p-".into(),
            name_suffix: "-p".into(),
            labels: [("a".to_string(), "2".to_string())].into(),
        };
        let t = outer.over(&inner);
        assert_eq!(t.namespace.as_deref(), Some("prod"));
        assert_eq!(t.name_prefix, "p-b-");
        assert_eq!(t.name_suffix, "-b-p");
        assert_eq!(t.labels["a"], "2");
    }
}
