//! Discover stage: which files to lint, in a sorted, deterministic order.
//!
//! Directories are walked with walkdir (hidden directories such as `.git` skipped, symlinks
//! not followed unless asked); `*.yaml`, `*.yml` and `*.json` are taken, filtered by the
//! `--include`/`--exclude` globs. A file named on the command line is linted whatever its
//! extension. `-` is standard input.

use globset::{Glob, GlobSet, GlobSetBuilder};
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Input {
    Stdin,
    File { path: PathBuf, context: bool },
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
            e.depth() == 0
                || !(e.file_type().is_dir()
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
