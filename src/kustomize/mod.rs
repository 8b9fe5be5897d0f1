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

pub mod remap;

use crate::model::de::{Spanned, SpannedMap, Str, Text, nullable};
use crate::model::{Body, Kind, Object};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

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
    /// It names a remote resource: never built.
    remote: bool,
    /// The file could not be read as a kustomization.
    unreadable: Option<String>,
    /// A `kind: Component`: built only as part of the kustomizations that list it.
    component: bool,
}

/// A discovered file, as the planner sees it.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub path: PathBuf,
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
}

/// The tool that renders kustomizations.
#[derive(Debug, Clone)]
pub struct Tool {
    program: PathBuf,
    /// `build` for kustomize, `kustomize` for kubectl.
    verb: &'static str,
}

impl Tool {
    /// `kustomize` on `PATH`, else `kubectl`.
    pub fn find() -> Option<Tool> {
        let path = std::env::var_os("PATH")?;
        let find = |name: &str| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| is_executable(p))
        };
        find("kustomize")
            .map(|program| Tool {
                program,
                verb: "build",
            })
            .or_else(|| {
                find("kubectl").map(|program| Tool {
                    program,
                    verb: "kustomize",
                })
            })
    }

    fn describe(&self) -> String {
        let name = self
            .program
            .file_name()
            .unwrap_or_default()
            .to_string_lossy();
        format!("{name} {}", self.verb)
    }
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file() || p.with_extension("exe").is_file()
    }
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
}

/// Reads the kustomizations among `files` and decides what each root becomes.
pub fn plan(files: &[Candidate], mode: Mode, tool: Option<Tool>) -> Result<Plan, KustomizeError> {
    let dirs: BTreeMap<PathBuf, Dir> = files
        .iter()
        .filter(|f| is_kustomization(&f.path))
        .filter_map(|f| Some((normal(f.path.parent()?), read_dir(f))))
        .collect();
    let mut plan = Plan::default();
    if dirs.is_empty() {
        return Ok(plan);
    }
    let tool = match (mode, tool) {
        (Mode::Off, _) => None,
        (Mode::Always, None) => return Err(KustomizeError::NoTool),
        (_, tool) => tool,
    };
    let included: BTreeSet<&PathBuf> = dirs.values().flat_map(|d| &d.includes).collect();
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
        used.walk(root, &dirs, &Transform::default(), 0);
        roots.push((root, dir, used));
    }
    // Each build is a process of its own: they run side by side, and are taken in order.
    let builds: Vec<_> = {
        use rayon::prelude::*;
        (roots.par_iter())
            .map(|(root, dir, used)| match &tool {
                Some(tool) if !used.remote && !dir.component => Some(build(tool, dir, root)),
                _ => None,
            })
            .collect()
    };
    for ((root, dir, used), built) in roots.into_iter().zip(builds) {
        match built {
            Some(Ok(mut rendered)) => {
                rendered.patches = used.patches.iter().cloned().collect();
                plan.replaced.extend(used.resources.into_keys());
                plan.replaced.extend(used.patches);
                plan.rendered.push(rendered);
            }
            failed => {
                if let Some(Err(why)) = failed {
                    plan.notes.push(format!(
                        "{} failed for {} ({why}); its files are linted as written, with its namespace, name prefix and labels applied",
                        tool.as_ref().map(Tool::describe).unwrap_or_default(),
                        root.display()
                    ));
                } else if used.remote {
                    plan.notes.push(format!(
                        "{} names a remote or missing resource and was not built (karplint does not go online); its local files are linted as written",
                        dir.file.display()
                    ));
                }
                plan.add_unrendered(used);
            }
        }
    }
    if let (Some(tool), false) = (&tool, plan.rendered.is_empty()) {
        let roots: Vec<String> = (plan.rendered.iter())
            .map(|r| {
                let dir = r
                    .file
                    .parent()
                    .unwrap_or(Path::new("."))
                    .display()
                    .to_string();
                dir.strip_prefix("./").map(str::to_owned).unwrap_or(dir)
            })
            .collect();
        plan.notes.push(format!(
            "rendered {} kustomization(s) with `{}`: {}; findings point at the files the objects came from",
            roots.len(),
            tool.describe(),
            crate::discover::first_names(&roots, 5)
        ));
    }
    if tool.is_none() && mode == Mode::Auto {
        let patches = plan.replaced.len();
        plan.notes.push(format!(
            "kustomizations were not rendered: neither kustomize nor kubectl is on PATH; {patches} patch file(s) were not linted as objects, and namespace, name prefix and labels were applied by karplint; install kustomize for what the cluster receives"
        ));
    }
    Ok(plan)
}

impl Plan {
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
    remote: bool,
}

impl Used {
    /// The files of the kustomization at `dir`, under the changes of the kustomizations that
    /// include it (`outer`).
    fn walk(&mut self, dir: &Path, dirs: &BTreeMap<PathBuf, Dir>, outer: &Transform, depth: usize) {
        let Some(k) = dirs.get(dir) else { return };
        // A cycle, or a chain deeper than any real tree: kustomize itself refuses these.
        if depth > 32 {
            return;
        }
        self.remote |= k.remote;
        let t = outer.over(&k.transform);
        self.patches.extend(k.patches.iter().cloned());
        self.resources.insert(normal(&k.file), Transform::default());
        for f in &k.resource_files {
            self.resources.entry(f.clone()).or_insert_with(|| t.clone());
        }
        for inc in &k.includes {
            self.walk(inc, dirs, &t, depth + 1);
        }
    }
}

/// Reads one kustomization file.
fn read_dir(f: &Candidate) -> Dir {
    let base = normal(f.path.parent().unwrap_or(Path::new(".")));
    let mut dir = Dir {
        file: f.path.clone(),
        context: f.context,
        resource_files: Vec::new(),
        includes: Vec::new(),
        patches: Vec::new(),
        transform: Transform::default(),
        remote: false,
        unreadable: None,
        component: false,
    };
    let k: Kustomization = match std::fs::read_to_string(&f.path)
        .map_err(|e| e.to_string())
        .and_then(|t| {
            serde_saphyr::from_str_with_options(&t, crate::parse::options())
                .map_err(|e| first_line(&e.to_string()))
        }) {
        Ok(k) => k,
        Err(why) => {
            dir.unreadable = Some(why);
            return dir;
        }
    };
    for r in k.resources.iter().chain(&k.bases).chain(&k.components) {
        // Anything not on disk is a remote resource (`github.com/org/repo//dir?ref=…`, a
        // URL) or missing: kustomize would go online for it, or fail.
        let p = normal(&base.join(r));
        if p.is_dir() {
            dir.includes.push(p);
        } else if p.is_file() {
            dir.resource_files.push(p);
        } else {
            dir.remote = true;
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

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or("").to_string()
}

/// `p` made absolute and lexically normal (`.` and `..` resolved, symlinks kept), so that
/// paths from different kustomizations compare equal.
pub fn normal(p: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(p)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Renders one root with origin annotations. The root's own kustomization is not changed:
/// a kustomization in a temporary directory lists the root (by a relative path, as
/// kustomize loads no absolute root) and asks for `buildMetadata: [originAnnotations]`.
fn build(tool: &Tool, dir: &Dir, root: &Path) -> Result<Rendered, String> {
    let wrapper = tempfile::tempdir().map_err(|e| e.to_string())?;
    // kustomize resolves symbolic links in the roots it loads (a temporary directory under
    // /var on macOS is /private/var): the relative path is between real paths.
    let base = std::fs::canonicalize(wrapper.path()).map_err(|e| e.to_string())?;
    let root = std::fs::canonicalize(root).map_err(|e| e.to_string())?;
    let rel = relative(&base, &root).ok_or("the root is on another drive")?;
    let kustomization = format!(
        "resources:\n  - {}\nbuildMetadata: [originAnnotations]\n",
        serde_json::to_string(&rel.to_string_lossy()).map_err(|e| e.to_string())?
    );
    std::fs::write(base.join("kustomization.yaml"), kustomization).map_err(|e| e.to_string())?;
    let mut command = Command::new(&tool.program);
    // Never a prompt for credentials: a remote base karplint missed fails instead.
    command
        .arg(tool.verb)
        .arg(&base)
        .env("GIT_TERMINAL_PROMPT", "0");
    let out = output_within(command, BUILD_TIMEOUT)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no output");
        return Err(why.chars().take(200).collect());
    }
    let text = String::from_utf8(out.stdout).map_err(|_| "output is not UTF-8".to_string())?;
    Ok(Rendered {
        file: dir.file.clone(),
        context: dir.context,
        text,
        origin_base: base,
        patches: Vec::new(),
    })
}

/// How long one `kustomize build` may take before karplint gives up on it.
const BUILD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The output of `command`, killed when it runs longer than `limit`.
fn output_within(
    mut command: Command,
    limit: std::time::Duration,
) -> Result<std::process::Output, String> {
    use std::process::Stdio;
    let mut child = (command.stdin(Stdio::null()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // The pipes are drained while the child runs, so a large output cannot block it.
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = std::time::Instant::now();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if start.elapsed() > limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", limit.as_secs()));
            }
            None => std::thread::sleep(std::time::Duration::from_millis(10)),
        }
    };
    Ok(std::process::Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
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
