//! Discover stage: which files to lint, in a sorted, deterministic order.
//!
//! Directories are walked with walkdir (hidden directories such as `.git` skipped, symlinks
//! not followed unless asked); `*.yaml`, `*.yml` and `*.json` are taken, filtered by the
//! `--include`/`--exclude` globs. A file named on the command line is linted whatever its
//! extension. `-` is standard input; a named FIFO, `/dev/stdin` or a process substitution
//! (`<(kustomize build)`) is a stream, read once. An excluded directory is not entered.
//! The same file named twice (`.` and `./app.yaml`, or linted and also given as context) is
//! one input: inputs are told apart by their canonical path.

use globset::{Glob, GlobSet, GlobSetBuilder};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

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

#[derive(Debug, Default)]
pub struct Filters {
    include: Option<GlobSet>,
    exclude: Option<GlobSet>,
}

impl Filters {
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, DiscoverError> {
        Ok(Filters {
            include: build(include)?,
            exclude: build(exclude)?,
        })
    }

    fn excluded(&self, path: &Path) -> bool {
        let p = path.strip_prefix("./").unwrap_or(path);
        self.exclude
            .as_ref()
            .is_some_and(|g| g.is_match(p) || p.file_name().is_some_and(|n| g.is_match(n)))
    }

    fn included(&self, path: &Path) -> bool {
        let p = path.strip_prefix("./").unwrap_or(path);
        match &self.include {
            Some(g) => g.is_match(p) || p.file_name().is_some_and(|n| g.is_match(n)),
            None => matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml" | "json")
            ),
        }
    }
}

fn build(globs: &[String]) -> Result<Option<GlobSet>, DiscoverError> {
    if globs.is_empty() {
        return Ok(None);
    }
    let mut b = GlobSetBuilder::new();
    for g in globs {
        // A bare directory or file name matches anywhere in the tree, as in .gitignore.
        let pattern = if g.contains('/') || g.starts_with("**") {
            g.clone()
        } else {
            format!("**/{g}")
        };
        b.add(Glob::new(&pattern).map_err(|e| DiscoverError::Glob {
            glob: g.clone(),
            message: e.to_string(),
        })?);
        if !g.ends_with("/**") && !g.contains('*') {
            b.add(
                Glob::new(&format!("{pattern}/**")).map_err(|e| DiscoverError::Glob {
                    glob: g.clone(),
                    message: e.to_string(),
                })?,
            );
        }
    }
    b.build().map(Some).map_err(|e| DiscoverError::Glob {
        glob: globs.join(","),
        message: e.to_string(),
    })
}

/// Expands the command-line paths into inputs. Errors (a missing path, an unreadable
/// directory) are returned beside the inputs that could be found: the run goes on.
pub fn discover(
    paths: &[PathBuf],
    context: bool,
    follow: bool,
    filters: &Filters,
) -> (Vec<Input>, Vec<DiscoverError>) {
    let mut inputs = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        let meta = if follow {
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
                errors.push(DiscoverError::Missing {
                    path: p.display().to_string(),
                })
            }
            // A symlink loop, a permission problem, …: say which.
            Err(e) => errors.push(DiscoverError::Walk {
                path: p.display().to_string(),
                message: e.to_string(),
            }),
            Ok(m) if m.is_file() => inputs.push(Input::File {
                path: p.clone(),
                context,
            }),
            Ok(m) if !m.is_dir() => inputs.push(Input::Stream {
                path: p.clone(),
                context,
            }),
            Ok(_) => walk(p, context, follow, filters, &mut inputs, &mut errors),
        }
    }
    inputs.sort();
    inputs.dedup();
    (inputs, errors)
}

fn walk(
    root: &Path,
    context: bool,
    follow: bool,
    filters: &Filters,
    inputs: &mut Vec<Input>,
    errors: &mut Vec<DiscoverError>,
) {
    let walker = WalkDir::new(root)
        .follow_links(follow)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !e.file_type().is_dir()
                // An excluded directory is not entered: nothing under it is linted, and a
                // link loop inside it (with --follow) is never met.
                || !(filters.excluded(e.path())
                    || e.depth() > 0
                        && e.file_name().to_str().is_some_and(|n| n.starts_with('.')))
        });
    for entry in walker {
        match entry {
            Ok(e) => {
                if !e.file_type().is_file() {
                    continue;
                }
                let path = e.path();
                if filters.included(path) && !filters.excluded(path) {
                    inputs.push(Input::File {
                        path: path.to_path_buf(),
                        context,
                    });
                }
            }
            Err(e) => {
                let path = e
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| root.display().to_string());
                let message = match e.io_error() {
                    Some(io) => io.to_string(),
                    None => e.to_string(),
                };
                errors.push(DiscoverError::Walk { path, message });
            }
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

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
