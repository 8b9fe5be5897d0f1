//! Discover stage: which files to lint, in a sorted, deterministic order.
//!
//! Directories are walked with the `ignore` crate (ripgrep's walker), in file-name order:
//! `*.yaml`, `*.yml` and `*.json` are taken, filtered by the `--include`/`--exclude` globs.
//! What the tree's `.gitignore`, `.ignore` and `.git/info/exclude` files ignore is not
//! walked, whether or not the tree is a git repository (the user's global gitignore is not
//! read, so a run depends on the tree alone; `--no-ignore` reads none of them). Hidden
//! directories and files are skipped unless `--hidden`, and counted so the summary can
//! name them; `.git` is never walked. Symlinks are not followed unless asked. A file named
//! on the command line is linted whatever its extension or ignore files. `-` is standard
//! input; a named FIFO, `/dev/stdin` or a process substitution (`<(kustomize build)`) is a
//! stream, read once. An excluded directory is not entered, and a file named on the
//! command line that an exclude glob matches is left out (unless `--no-force-exclude`);
//! context paths are read even when an exclude glob matches them.
//! The same file named twice (`.` and `./app.yaml`, or linted and also given as context) is
//! one input: inputs are told apart by their canonical path.

use globset::{Glob, GlobSet, GlobSetBuilder};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Input {
    Stdin,
    File {
        path: PathBuf,
        context: bool,
    },
    /// A named file that is not a regular file (a FIFO, `/dev/stdin`, `/dev/fd/63`): it can
    /// be read only once, and its size is not known before reading it.
    Stream {
        path: PathBuf,
        context: bool,
    },
}

impl Input {
    /// The file it names; `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::Stdin => None,
            Input::File { path, .. } | Input::Stream { path, .. } => Some(path),
        }
    }
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum DiscoverError {
    #[error("{path}: no such file or directory")]
    #[diagnostic(code(karplint::io))]
    Missing { path: String },
    #[error("{path}: {message}")]
    #[diagnostic(code(karplint::io))]
    Walk { path: String, message: String },
    #[error("invalid glob {glob:?}: {message}")]
    #[diagnostic(code(karplint::usage))]
    Glob { glob: String, message: String },
}

impl DiscoverError {
    /// The path it concerns; `None` for a glob.
    fn path(&self) -> Option<&Path> {
        match self {
            DiscoverError::Missing { path } | DiscoverError::Walk { path, .. } => {
                Some(Path::new(path))
            }
            DiscoverError::Glob { .. } => None,
        }
    }
}

/// A path as an error or note names it: control characters written as `\u{XX}`, so that a
/// file name cannot drive the terminal (the stages below the report name paths too).
pub fn printable(path: &Path) -> String {
    let mut out = String::new();
    for c in path.display().to_string().chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// The `--include`/`--exclude` globs (or the config's). Each remembers whether it matched
/// any path, so that a glob that matched nothing (a typo, a directory since renamed) can be
/// named in a note; the clones a walk makes share that record.
#[derive(Debug, Default, Clone)]
pub struct Filters {
    include: Option<Globs>,
    exclude: Option<Globs>,
}

impl Filters {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, DiscoverError> {
        Ok(Filters {
            include: Globs::new(include)?,
            exclude: Globs::new(exclude)?,
        })
    }

    fn excluded(&self, path: &Path) -> bool {
        self.exclude.as_ref().is_some_and(|g| g.matches(path))
    }

    fn included(&self, path: &Path) -> bool {
        match &self.include {
            Some(g) => g.matches(path),
            None => matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            ),
        }
    }

    /// The globs that matched no path so far, as (`include` or `exclude`, the glob as
    /// written), in the order given.
    pub fn unmatched(&self) -> Vec<(&'static str, String)> {
        let named = |kind: &'static str, g: &Option<Globs>| {
            g.iter()
                .flat_map(|g| g.unmatched())
                .map(move |glob| (kind, glob))
                .collect::<Vec<_>>()
        };
        let mut out = named("include", &self.include);
        out.extend(named("exclude", &self.exclude));
        out
    }
}

/// A list of the user's globs, compiled.
#[derive(Debug, Clone)]
struct Globs {
    set: GlobSet,
    /// For each glob of `set`, the index of the user's glob it was made from.
    owner: Vec<usize>,
    /// The user's globs, as written.
    written: Vec<String>,
    /// Which of the user's globs matched a path.
    hit: Arc<Vec<AtomicBool>>,
}

impl Globs {
    fn new(globs: &[String]) -> Result<Option<Globs>, DiscoverError> {
        if globs.is_empty() {
            return Ok(None);
        }
        let mut b = GlobSetBuilder::new();
        let mut owner = Vec::new();
        let compile = |glob: &str, pattern: &str| {
            Glob::new(pattern).map_err(|e| DiscoverError::Glob {
                glob: glob.to_string(),
                message: e.to_string(),
            })
        };
        for (i, g) in globs.iter().enumerate() {
            // A bare directory or file name matches anywhere in the tree, as in .gitignore.
            let pattern = if g.contains('/') || g.starts_with("**") {
                g.clone()
            } else {
                format!("**/{g}")
            };
            b.add(compile(g, &pattern)?);
            owner.push(i);
            if !g.ends_with("/**") && !g.contains('*') {
                b.add(compile(g, &format!("{pattern}/**"))?);
                owner.push(i);
            }
        }
        let set = b.build().map_err(|e| DiscoverError::Glob {
            glob: globs.join(","),
            message: e.to_string(),
        })?;
        Ok(Some(Globs {
            set,
            owner,
            written: globs.to_vec(),
            hit: Arc::new(globs.iter().map(|_| AtomicBool::new(false)).collect()),
        }))
    }

    /// Whether `path` (or its file name) matches; the globs that match are recorded.
    fn matches(&self, path: &Path) -> bool {
        let p = path.strip_prefix("./").unwrap_or(path);
        let name = p.file_name().map(Path::new);
        let on_path = self.set.is_match(p);
        let on_name = name.is_some_and(|n| self.set.is_match(n));
        if !on_path && !on_name {
            return false;
        }
        // Only matching paths pay for finding which globs matched.
        let which = self.set.matches(p).into_iter();
        let which = which.chain(name.map(|n| self.set.matches(n)).into_iter().flatten());
        for i in which {
            if let Some(hit) = self.owner.get(i).and_then(|&o| self.hit.get(o)) {
                hit.store(true, Ordering::Relaxed);
            }
        }
        true
    }

    fn all_matched(&self) -> bool {
        self.hit.iter().all(|h| h.load(Ordering::Relaxed))
    }

    fn unmatched(&self) -> Vec<String> {
        (self.written.iter().zip(self.hit.iter()))
            .filter(|(_, hit)| !hit.load(Ordering::Relaxed))
            .map(|(g, _)| g.clone())
            .collect()
    }
}

/// How directories are walked.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkOptions {
    /// Follow symbolic links (`--follow`).
    pub follow: bool,
    /// Walk hidden directories and files too (`--hidden`); `.git` never.
    pub hidden: bool,
    /// Read no `.gitignore`, `.ignore` or `.git/info/exclude` (`--no-ignore`).
    pub no_ignore: bool,
    /// Lint a file named on the command line even when an exclude glob matches it
    /// (`--no-force-exclude`). By default excludes apply to named files too, as ruff's
    /// `--force-exclude`: a pre-commit hook names the changed files one by one.
    pub no_force_exclude: bool,
}

/// A hidden directory, or a hidden file that would have been linted, left out of a walk.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Hidden {
    pub path: PathBuf,
    pub dir: bool,
}

/// What [`discover`] found: the inputs, the paths it could not read, and the hidden
/// entries it left out.
#[derive(Debug, Default)]
pub struct Discovered {
    pub inputs: Vec<Input>,
    pub errors: Vec<DiscoverError>,
    /// Sorted by path.
    pub hidden: Vec<Hidden>,
    /// Files named on the command line that an exclude glob left out, in the order named.
    pub excluded: Vec<PathBuf>,
    /// Whether a directory was walked (the globs were tried on a tree).
    pub walked: bool,
}

/// Expands the command-line paths into inputs. Errors (a missing path, an unreadable
/// directory) are returned beside the inputs that could be found: the run goes on.
pub fn discover(
    paths: &[PathBuf],
    context: bool,
    walk_options: WalkOptions,
    filters: &Filters,
) -> Discovered {
    let mut out = Discovered::default();
    for p in paths {
        if p.as_os_str() == "-" {
            out.inputs.push(Input::Stdin);
            continue;
        }
        let meta = if walk_options.follow {
            std::fs::metadata(p)
        } else {
            std::fs::symlink_metadata(p).and_then(|m| {
                if m.file_type().is_symlink() {
                    std::fs::metadata(p)
                } else {
                    Ok(m)
                }
            })
        };
        match meta {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.errors.push(DiscoverError::Missing {
                    path: p.display().to_string(),
                })
            }
            // A symlink loop, a permission problem, …: say which.
            Err(e) => out.errors.push(DiscoverError::Walk {
                path: p.display().to_string(),
                message: e.to_string(),
            }),
            // A context path is read even when an exclude glob matches it (`exclude:
            // [platform]` keeps the platform team's objects out of the report, `context:
            // [platform]` reads them as cluster facts); inside one the globs still apply.
            Ok(m) if m.is_dir() && context && filters.excluded(p) => {
                out.walked = true;
                let inside = Filters {
                    include: filters.include.clone(),
                    exclude: None,
                };
                walk(p, context, walk_options, &inside, &mut out)
            }
            Ok(m) if m.is_dir() => {
                out.walked = true;
                walk(p, context, walk_options, filters, &mut out)
            }
            Ok(_) if !context && !walk_options.no_force_exclude && filters.excluded(p) => {
                out.excluded.push(p.clone())
            }
            Ok(m) if m.is_file() => out.inputs.push(Input::File {
                path: p.clone(),
                context,
            }),
            Ok(_) => out.inputs.push(Input::Stream {
                path: p.clone(),
                context,
            }),
        }
    }
    out.inputs.sort();
    out.inputs.dedup();
    out.hidden.sort();
    out.hidden.dedup();
    out
}

/// The note on files named on the command line that exclude globs left out, naming the
/// first few and how to lint them. `None` when there are none.
pub fn excluded_note(excluded: &[PathBuf]) -> Option<String> {
    let names: Vec<String> = (excluded.iter()).map(|p| p.display().to_string()).collect();
    let (count, them) = match names.len() {
        0 => return None,
        1 => ("1 file".to_string(), "it"),
        n => (format!("{n} files"), "them"),
    };
    Some(format!(
        "{count} named on the command line left out by an exclude glob ({}); use --no-force-exclude to lint {them}",
        first_names(&names, HIDDEN_NAMES_SHOWN)
    ))
}

/// The note on include and exclude globs that matched no path of the run: a typo, or a
/// directory renamed since the config was written.
pub fn unmatched_globs_note(filters: &Filters) -> Option<String> {
    let unmatched = filters.unmatched();
    if unmatched.is_empty() {
        return None;
    }
    let globs: Vec<String> = (unmatched.iter())
        .map(|(kind, g)| format!("{kind} `{g}`"))
        .collect();
    let what = if globs.len() == 1 { "glob" } else { "globs" };
    Some(format!(
        "{what} matched no path: {}",
        first_names(&globs, HIDDEN_NAMES_SHOWN)
    ))
}

/// The name of karplint's own config file, hidden in every tree that has one: not worth a
/// word when hidden files are skipped.
const CONFIG_FILE_NAME: &str = ".karplint.yaml";

fn walk(root: &Path, context: bool, options: WalkOptions, filters: &Filters, out: &mut Discovered) {
    let ignore_files = !options.no_ignore;
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .standard_filters(false)
        .ignore(ignore_files)
        .git_ignore(ignore_files)
        .git_exclude(ignore_files)
        // Only the ignore files of the linted tree: none above it (outside a repository
        // that would reach a home directory's), so the tree alone decides.
        .parents(false)
        // A tree's ignore files apply whether or not it is a git checkout (an export, a
        // container build context): the same tree lints the same files.
        .require_git(false)
        .follow_links(options.follow);
    let hidden = Arc::new(Mutex::new(Vec::new()));
    let (keep_filters, keep_hidden) = (filters.clone(), Arc::clone(&hidden));
    builder.filter_entry(move |e| keep(e, &keep_filters, options.hidden, &keep_hidden));
    // The directories entered, when ignore files may hide paths the excludes name.
    let mut entered = Vec::new();
    let (first_input, first_error) = (out.inputs.len(), out.errors.len());
    for entry in builder.build() {
        match entry {
            Ok(e) => {
                if !e.file_type().is_some_and(|t| t.is_file()) {
                    if ignore_files && e.file_type().is_some_and(|t| t.is_dir()) {
                        entered.push(e.into_path());
                    }
                    continue;
                }
                let path = e.path();
                if e.depth() > 0 && filters.included(path) && !filters.excluded(path) {
                    out.inputs.push(Input::File {
                        path: e.into_path(),
                        context,
                    });
                }
            }
            Err(e) => out.errors.push(walk_error(root, e)),
        }
    }
    // In the order of a walk sorted by file name, directory by directory (which a path's
    // order, component by component, is), sorted once rather than each directory's
    // entries by a name worked out again at every comparison.
    out.inputs[first_input..].sort_unstable_by(|a, b| walk_order(a.path(), b.path()));
    out.errors[first_error..].sort_by(|a, b| walk_order(a.path(), b.path()));
    if ignore_files {
        note_excludes_of_ignored(&entered, filters);
    }
    // The builder still holds the filter's handle: take the list out of the shared one.
    let mut noted = hidden
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    out.hidden.append(&mut noted);
}

/// The walk never shows an exclude glob what the ignore files ignore (`node_modules/` in
/// both `.gitignore` and `exclude:`): such a glob still matches a path of the tree, and is
/// no typo to note. When an exclude glob has matched nothing, the entries of the
/// directories entered are tried on it (one listing per directory, nothing descended).
fn note_excludes_of_ignored(entered: &[PathBuf], filters: &Filters) {
    let Some(exclude) = &filters.exclude else {
        return;
    };
    for dir in entered {
        if exclude.all_matched() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            exclude.matches(&entry.path());
        }
    }
}

/// Whether the walk takes `e`: `.git` never, an excluded directory not (nothing under it
/// is linted, and a link loop inside it with `--follow` is never met), a hidden entry only
/// with `--hidden` (otherwise noted in `hidden` when it is a directory or a file that would
/// be linted).
fn keep(
    e: &ignore::DirEntry,
    filters: &Filters,
    show_hidden: bool,
    hidden: &Mutex<Vec<Hidden>>,
) -> bool {
    if e.depth() == 0 {
        return true;
    }
    let name = e.file_name();
    if name == ".git" {
        return false;
    }
    let dir = e.file_type().is_some_and(|t| t.is_dir());
    let path = e.path();
    if dir && filters.excluded(path) {
        return false;
    }
    let is_hidden = name.to_str().is_some_and(|n| n.starts_with('.'));
    if !is_hidden || show_hidden {
        return true;
    }
    let noted =
        dir || name != CONFIG_FILE_NAME && filters.included(path) && !filters.excluded(path);
    if noted {
        let path = path.strip_prefix("./").unwrap_or(path).to_path_buf();
        hidden
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(Hidden { path, dir });
    }
    false
}

/// The order of a walk sorted by file name, directory by directory: paths compared
/// component by component, which is their bytes compared with a separator before any byte
/// of a name (the paths of one walk are joined from its root, without `.` or `//`).
fn walk_order(a: Option<&Path>, b: Option<&Path>) -> std::cmp::Ordering {
    let (a, b) = (path_bytes(a), path_bytes(b));
    let common = common_prefix(a, b);
    let next = |s: &[u8]| {
        (s.get(common)).map(|&c| match std::path::is_separator(char::from(c)) {
            true => 0,
            false => u16::from(c) + 1,
        })
    };
    next(a).cmp(&next(b))
}

/// The length of the prefix `a` and `b` share: eight bytes at a time, then byte by byte.
/// The paths of one walk share their root and most directories, and a sort compares each
/// about log2(n) times.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let (words_a, words_b) = (a.as_chunks::<8>().0, b.as_chunks::<8>().0);
    let whole = 8
        * (words_a.iter().zip(words_b))
            .take_while(|(x, y)| x == y)
            .count();
    whole
        + (a[whole..].iter().zip(&b[whole..]))
            .take_while(|(x, y)| x == y)
            .count()
}

fn path_bytes(p: Option<&Path>) -> &[u8] {
    p.map_or(&[], |p| p.as_os_str().as_encoded_bytes())
}

/// A walk error as a [`DiscoverError`] naming the path it concerns.
fn walk_error(root: &Path, e: ignore::Error) -> DiscoverError {
    match e {
        ignore::Error::WithPath { path, err } => DiscoverError::Walk {
            path: path.display().to_string(),
            message: err
                .io_error()
                .map_or_else(|| err.to_string(), ToString::to_string),
        },
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            walk_error(root, *err)
        }
        ignore::Error::Loop { ancestor, child } => DiscoverError::Walk {
            path: child.display().to_string(),
            message: format!(
                "symbolic link loop: it leads back to {}",
                ancestor.display()
            ),
        },
        other => DiscoverError::Walk {
            path: root.display().to_string(),
            message: other.to_string(),
        },
    }
}

/// How many hidden names a note shows before "and N more".
const HIDDEN_NAMES_SHOWN: usize = 5;

/// The summary's word on hidden entries left out: how many directories and files, the
/// first few paths, and how to lint them. `None` when there are none.
pub fn hidden_note(hidden: &[Hidden]) -> Option<String> {
    if hidden.is_empty() {
        return None;
    }
    let dirs = hidden.iter().filter(|h| h.dir).count();
    let files = hidden.len() - dirs;
    let count = |n: usize, one: &str, many: &str| match n {
        0 => None,
        1 => Some(format!("1 hidden {one}")),
        n => Some(format!("{n} hidden {many}")),
    };
    let what: Vec<String> = [
        count(dirs, "directory", "directories"),
        count(files, "file", "files"),
    ]
    .into_iter()
    .flatten()
    .collect();
    // Directories first, each group in path order.
    let mut ordered: Vec<&Hidden> = hidden.iter().collect();
    ordered.sort_by_key(|h| (!h.dir, &h.path));
    let names: Vec<String> = (ordered.iter())
        .map(|h| h.path.display().to_string())
        .collect();
    Some(format!(
        "{} skipped ({}); use --hidden to lint them",
        what.join(" and "),
        first_names(&names, HIDDEN_NAMES_SHOWN)
    ))
}

/// At most `n` of `names`, joined with commas, and "and N more" for the rest.
pub fn first_names(names: &[String], n: usize) -> String {
    let mut shown = names[..names.len().min(n)].join(", ");
    if names.len() > n {
        shown.push_str(&format!(", and {} more", names.len() - n));
    }
    shown
}

/// True when `path` lies in a Helm chart's `templates/` directory (a `Chart.yaml` beside it).
pub fn is_helm_template(path: &Path) -> bool {
    path.ancestors().skip(1).any(|dir| {
        dir.file_name().is_some_and(|n| n == "templates")
            && dir
                .parent()
                .is_some_and(|chart| chart.join("Chart.yaml").is_file())
    })
}

/// Reads at most `max` bytes: `Ok(None)` when there are more (the reader is left part-read),
/// so that `/dev/zero` or an endless pipe costs `max + 1` bytes, never more.
pub fn read_at_most(reader: impl Read, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    reader.take(max.saturating_add(1)).read_to_end(&mut buf)?;
    Ok((buf.len() as u64 <= max).then_some(buf))
}

/// The file `path` names, read whole when it holds at most `max` bytes (`Ok(None)` when
/// larger). A regular file's size is checked before reading; anything else is read as a
/// stream, and stops after `max + 1` bytes.
pub fn read_file_at_most(path: &Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_file() && meta.len() > max {
        return Ok(None);
    }
    read_at_most(file, max)
}

/// The regular file `path` names, read whole when it holds at most `max` bytes; an error
/// for anything else, where a stream makes no sense (a FIFO would block, `/dev/zero`
/// never ends) and for a larger file. Opening does not wait for a FIFO's writer.
pub fn read_regular_file_at_most(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other(
            "not a regular file (a pipe, device or directory); give a file",
        ));
    }
    let too_large =
        || std::io::Error::other(format!("over the {max}-byte limit (--max-file-size)"));
    if meta.len() > max {
        return Err(too_large());
    }
    read_at_most(file, max)?.ok_or_else(too_large)
}

/// What tells two inputs apart: the canonical path of a file (two spellings of one file, or
/// a link and its target, are one input), `None` for standard input and inputs whose path
/// cannot be resolved (those are kept as given).
pub fn identity(input: &Input) -> Option<PathBuf> {
    match input {
        Input::Stdin => None,
        Input::File { path, .. } | Input::Stream { path, .. } => {
            Some(std::fs::canonicalize(path).unwrap_or_else(|_| path.clone()))
        }
    }
}

/// `first` then `then`, each input kept only at its first occurrence by `key` (inputs whose
/// key is `None` are all kept): a file both linted and given as context is linted. One set
/// lookup per input, so 10,000 files cost 10,000 lookups, not 50 million comparisons.
pub fn first_of_each<K: std::hash::Hash + Eq>(
    first: Vec<Input>,
    then: Vec<Input>,
    key: impl Fn(&Input) -> Option<K>,
) -> Vec<Input> {
    let mut seen = HashSet::new();
    first
        .into_iter()
        .chain(then)
        .filter(|i| key(i).is_none_or(|k| seen.insert(k)))
        .collect()
}

/// `p` made absolute and lexically normal (`.` and `..` resolved, symlinks kept), so that
/// paths named in different ways (kustomizations, baselines, arguments) compare equal.
pub fn normal(p: &Path) -> PathBuf {
    if p.is_absolute() {
        Normal(PathBuf::new()).of(p)
    } else {
        Normal::here().of(p)
    }
}

/// [`normal`] for many paths: the working directory is asked once, not once per path.
pub struct Normal(PathBuf);

impl Normal {
    /// Relative paths are taken from the working directory as it is now.
    pub fn here() -> Normal {
        Normal(std::env::current_dir().unwrap_or_default())
    }

    pub fn of(&self, p: &Path) -> PathBuf {
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.0.join(p)
        };
        if is_normal(&abs) { abs } else { rebuilt(&abs) }
    }
}

/// `abs` rebuilt from its components, `.` dropped and `..` resolved lexically.
fn rebuilt(abs: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether `abs` is already as [`normal`] would rebuild it from its components: `/`
/// followed by names joined by single `/`, none of them `.` or `..` (most paths a walk
/// yields). Elsewhere than on Unix, no path is taken as normal without the rebuild.
fn is_normal(abs: &Path) -> bool {
    if !cfg!(unix) {
        return false;
    }
    let bytes = abs.as_os_str().as_encoded_bytes();
    match bytes.split_first() {
        Some((b'/', [])) => true,
        Some((b'/', rest)) => rest
            .split(|&b| b == b'/')
            .all(|name| !matches!(name, b"" | b"." | b"..")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    proptest::proptest! {
        /// A path taken as normal is the one its rebuild gives, and every rebuilt path is
        /// taken as normal.
        #[test]
        fn a_path_taken_as_normal_is_its_own_rebuild(
            names in proptest::collection::vec(
                proptest::sample::select(vec!["a", "bc", ".", "..", "", ".d", "e.."]),
                0..8,
            )
        ) {
            let p = PathBuf::from(format!("/{}", names.join("/")));
            if is_normal(&p) {
                proptest::prop_assert_eq!(rebuilt(&p), p.clone());
            }
            proptest::prop_assert!(is_normal(&rebuilt(&p)), "{:?}", rebuilt(&p));
        }

        /// Two paths of one walk come in the order of their components, each compared as
        /// a name: the order of a walk sorted by file name in every directory.
        #[test]
        fn walk_order_is_the_order_of_the_components(
            a in proptest::collection::vec(
                proptest::sample::select(vec!["a", "a.b", "a-b", "ab", "b", "A", "0", "a b"]),
                1..5,
            ),
            b in proptest::collection::vec(
                proptest::sample::select(vec!["a", "a.b", "a-b", "ab", "b", "A", "0", "a b"]),
                1..5,
            ),
        ) {
            let (a, b) = (PathBuf::from(format!("root/{}", a.join("/"))), PathBuf::from(format!("root/{}", b.join("/"))));
            proptest::prop_assert_eq!(walk_order(Some(&a), Some(&b)), a.cmp(&b));
        }
    }

    proptest::proptest! {
        /// The word-at-a-time shared prefix is the byte-by-byte one.
        #[test]
        fn common_prefix_is_the_bytewise_one(
            a in proptest::collection::vec(0u8..3, 0..40),
            b in proptest::collection::vec(0u8..3, 0..40),
        ) {
            let bytewise = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            proptest::prop_assert_eq!(common_prefix(&a, &b), bytewise);
            let mut c = a.clone();
            c.extend(&b);
            let bytewise = a.iter().zip(&c).take_while(|(x, y)| x == y).count();
            proptest::prop_assert_eq!(common_prefix(&a, &c), bytewise);
        }
    }

    thread_local! {
        static COMPARED: Cell<usize> = const { Cell::new(0) };
    }

    /// A key that counts how often it is compared.
    struct Counted(PathBuf);

    impl std::hash::Hash for Counted {
        fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
            self.0.hash(h);
        }
    }

    impl PartialEq for Counted {
        fn eq(&self, other: &Self) -> bool {
            COMPARED.with(|c| c.set(c.get() + 1));
            self.0 == other.0
        }
    }
    impl Eq for Counted {}

    fn files(n: usize, context: bool) -> Vec<Input> {
        (0..n)
            .map(|i| Input::File {
                path: PathBuf::from(format!("f{i}.yaml")),
                context,
            })
            .collect()
    }

    #[test]
    fn context_deduplication_is_linear() {
        let n = 10_000;
        let mut ctx = files(n, true);
        // Half the context files are also linted.
        ctx.truncate(n / 2);
        ctx.extend((n..n + n / 2).map(|i| Input::File {
            path: PathBuf::from(format!("f{i}.yaml")),
            context: true,
        }));
        COMPARED.with(|c| c.set(0));
        let key = |i: &Input| match i {
            Input::File { path, .. } => Some(Counted(path.clone())),
            _ => None,
        };
        let merged = first_of_each(files(n, false), ctx, key);
        assert_eq!(merged.len(), n + n / 2);
        assert!(
            merged[..n]
                .iter()
                .all(|i| matches!(i, Input::File { context: false, .. }))
        );
        let compared = COMPARED.with(Cell::get);
        // One lookup per input, a comparison for each hit (and the odd hash collision):
        // the pairwise scan made n²/2 = 50 million.
        assert!(compared <= 2 * n, "{compared} comparisons for {n} files");
    }
}
