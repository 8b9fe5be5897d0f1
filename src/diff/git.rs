//! Reading a revision's tree from git without touching the work tree: `git ls-tree` lists
//! its files and `git cat-file --batch` streams their contents into a directory of their
//! own, which a `.git` directory marks as a repository root (so that config discovery stops
//! there and `.gitignore` files apply, as in a checkout).

use std::io::{BufRead, BufReader, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// Why git could not give karplint a revision (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("cannot run git: {0}")]
    Spawn(std::io::Error),
    #[error("{0} is not inside a git repository (karplint diff compares two revisions of one)")]
    NotARepository(String),
    #[error("unknown revision {rev:?}: {message}")]
    BadRevision { rev: String, message: String },
    #[error("git {command}: {message}")]
    Failed { command: String, message: String },
    #[error("writing {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// The repository around a directory.
#[derive(Debug, Clone)]
pub struct Repo {
    /// The work tree's root.
    pub root: PathBuf,
    /// The directory, relative to the root (empty at the root).
    pub prefix: PathBuf,
}

/// Runs git with `args` in `dir`; its standard output, or its standard error as the error.
fn git(dir: &Path, args: &[&str]) -> Result<Result<Vec<u8>, String>, GitError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    if out.status.success() {
        Ok(Ok(out.stdout))
    } else {
        let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Ok(Err(crate::report::escape::line(&message).into_owned()))
    }
}

/// The repository whose work tree holds `dir`.
pub fn open(dir: &Path) -> Result<Repo, GitError> {
    let shown = crate::report::escape::line(&dir.display().to_string()).into_owned();
    let out = git(dir, &["rev-parse", "--show-toplevel", "--show-prefix"])?
        .map_err(|_| GitError::NotARepository(shown.clone()))?;
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.lines();
    let root = lines.next().filter(|r| !r.is_empty());
    let Some(root) = root else {
        return Err(GitError::NotARepository(shown));
    };
    Ok(Repo {
        root: PathBuf::from(root),
        prefix: PathBuf::from(lines.next().unwrap_or("").trim_end_matches('/')),
    })
}

impl Repo {
    /// The commit `rev` names.
    pub fn commit(&self, rev: &str) -> Result<String, GitError> {
        let bad = |message: String| GitError::BadRevision {
            rev: crate::report::escape::line(rev).into_owned(),
            message,
        };
        if rev.starts_with('-') || rev.is_empty() {
            return Err(bad("not a revision".into()));
        }
        let spec = format!("{rev}^{{commit}}");
        let out = git(&self.root, &["rev-parse", "--verify", "--quiet", &spec])?
            .map_err(|_| bad("git knows no commit of that name".into()))?;
        let sha = String::from_utf8_lossy(&out).trim().to_string();
        if sha.is_empty() {
            return Err(bad("git knows no commit of that name".into()));
        }
        Ok(sha)
    }

    /// Whether the work tree is `commit` exactly: it is checked out, and nothing differs
    /// from it (no change, no untracked or ignored file, no submodule, whose files a
    /// revision's tree does not hold), so that linting the work tree is linting `commit`.
    pub fn is_checked_out(&self, commit: &str) -> Result<bool, GitError> {
        if self.root.join(".gitmodules").exists() {
            return Ok(false);
        }
        let head = git(&self.root, &["rev-parse", "--verify", "--quiet", "HEAD"])?;
        if head.map(|h| String::from_utf8_lossy(&h).trim() == commit) != Ok(true) {
            return Ok(false);
        }
        let status = git(
            &self.root,
            &[
                "status",
                "--porcelain",
                "--ignored",
                "--untracked-files=all",
                "-z",
            ],
        )?;
        Ok(status.is_ok_and(|s| s.is_empty()))
    }

    /// Whether `commit`'s tree holds `path` (relative to the root; empty for the root).
    pub fn has_path(&self, commit: &str, path: &Path) -> Result<bool, GitError> {
        let Some(path) = path.to_str() else {
            return Ok(false);
        };
        let spec = format!("{commit}:{path}");
        Ok(git(&self.root, &["cat-file", "-e", &spec])?.is_ok())
    }

    /// Writes the files of `commit`'s tree under `dest`, with an empty `.git` directory at
    /// its root. A file whose content `like` (a tree extracted before) already holds is a
    /// hard link to it: two revisions share most of their files, and a link costs a tenth
    /// of a write.
    pub fn extract(
        &self,
        commit: &str,
        dest: &Path,
        like: Option<&Extracted>,
    ) -> Result<Extracted, GitError> {
        let (blobs, left_out) = self.ls_tree(commit)?;
        let write_err = |path: &Path, source| GitError::Write {
            path: path.display().to_string(),
            source,
        };
        let marker = dest.join(".git");
        std::fs::create_dir_all(&marker).map_err(|e| write_err(&marker, e))?;
        let mut made = std::collections::HashSet::new();
        let mut to_write = Vec::new();
        for blob in blobs.iter() {
            let file = dest.join(&blob.path);
            let linked = (like.and_then(|l| Some(l.root.join(l.files.get(&blob.id)?))))
                .filter(|_| !blob.link)
                .is_some_and(|from| {
                    make_parent(&file, &mut made).is_ok() && std::fs::hard_link(from, &file).is_ok()
                });
            if !linked {
                to_write.push(blob);
            }
        }
        self.cat_blobs(&to_write, dest, &mut made)?;
        Ok(Extracted {
            root: dest.to_path_buf(),
            files: Extracted::files_of(blobs),
            left_out,
        })
    }

    /// The work tree as the tree of `commit`, which it is ([`Repo::is_checked_out`]): its
    /// files, written by the checkout.
    pub fn checked_out(&self, commit: &str) -> Result<Extracted, GitError> {
        let (blobs, left_out) = self.ls_tree(commit)?;
        Ok(Extracted {
            root: self.root.clone(),
            files: Extracted::files_of(blobs),
            left_out,
        })
    }

    /// The files of `commit`'s tree, and what is left out of them.
    fn ls_tree(&self, commit: &str) -> Result<(Vec<Blob>, LeftOut), GitError> {
        let listed = git(&self.root, &["ls-tree", "-r", "-z", "--full-tree", commit])?.map_err(
            |message| GitError::Failed {
                command: "ls-tree".into(),
                message,
            },
        )?;
        Ok(blobs(&listed))
    }

    /// Streams `blobs` from `git cat-file --batch` into their files under `dest`.
    fn cat_blobs(
        &self,
        blobs: &[&Blob],
        dest: &Path,
        made: &mut std::collections::HashSet<PathBuf>,
    ) -> Result<(), GitError> {
        let failed = |message: String| GitError::Failed {
            command: "cat-file".into(),
            message,
        };
        let mut child = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(GitError::Spawn)?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(failed("no pipe to git".into()));
        };
        let ids: Vec<String> = blobs.iter().map(|b| format!("{}\n", b.id)).collect();
        // Written from a thread: git answers while it reads, and both pipes are bounded.
        let writer = std::thread::spawn(move || {
            let mut stdin = std::io::BufWriter::new(&mut stdin);
            for id in ids {
                if stdin.write_all(id.as_bytes()).is_err() {
                    break;
                }
            }
            let _ = stdin.flush();
        });
        let mut out = BufReader::new(stdout);
        let read = (blobs.iter()).try_for_each(|blob| {
            let content = read_blob(&mut out).map_err(|e| failed(e.to_string()))?;
            let file = dest.join(&blob.path);
            let write = |p: &Path, e| GitError::Write {
                path: p.display().to_string(),
                source: e,
            };
            make_parent(&file, made).map_err(|e| write(&file, e))?;
            write_blob(&file, content, blob.link).map_err(|e| write(&file, e))
        });
        let _ = writer.join();
        let _ = child.kill();
        let _ = child.wait();
        read
    }
}

/// A revision's tree written out ([`Repo::extract`]).
#[derive(Debug)]
pub struct Extracted {
    root: PathBuf,
    /// Each file's path under `root`, by object id (symbolic links aside).
    files: std::collections::HashMap<String, PathBuf>,
    /// What was not written.
    pub left_out: LeftOut,
}

impl Extracted {
    /// The path of each of `blobs` by object id, symbolic links aside.
    fn files_of(blobs: Vec<Blob>) -> std::collections::HashMap<String, PathBuf> {
        (blobs.into_iter())
            .filter(|b| !b.link)
            .map(|b| (b.id, b.path))
            .collect()
    }
}

/// Creates the directory `file` goes in, unless `made` says it was.
fn make_parent(file: &Path, made: &mut std::collections::HashSet<PathBuf>) -> std::io::Result<()> {
    match file.parent() {
        Some(dir) if !made.contains(dir) => {
            std::fs::create_dir_all(dir)?;
            made.insert(dir.to_path_buf());
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What a revision's tree holds that is not written out: its submodules (a checkout
/// without `--recurse-submodules` has none of their files either), and the entries git
/// lists under a name that is not UTF-8 or would leave the tree. Their paths, as git lists
/// them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct LeftOut {
    pub submodules: Vec<String>,
    pub unreadable: Vec<String>,
}

impl LeftOut {
    /// What was left out, in a few words; `None` when nothing was.
    pub fn describe(&self) -> Option<String> {
        let parts: Vec<String> = [
            (&self.submodules, "submodule(s)"),
            (
                &self.unreadable,
                "file(s) with a name karplint cannot write",
            ),
        ]
        .into_iter()
        .filter(|(paths, _)| !paths.is_empty())
        .map(|(paths, what)| {
            let first = crate::report::escape::line(&paths[0]).into_owned();
            format!("{} {what} (first: {first})", paths.len())
        })
        .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }
}

/// A file of a revision's tree: its object id, its path, and whether it is a symbolic link
/// (mode 120000; its content is the link's target).
#[derive(Debug, PartialEq, Eq)]
struct Blob {
    id: String,
    path: PathBuf,
    link: bool,
}

/// The files of `git ls-tree -r -z` output ([`Blob`]), and what is left out ([`LeftOut`]).
fn blobs(listed: &[u8]) -> (Vec<Blob>, LeftOut) {
    let mut files = Vec::new();
    let mut left_out = LeftOut::default();
    for entry in listed.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        let mut meta = meta.split(' ');
        let (Some(mode), Some(kind), Some(id)) = (meta.next(), meta.next(), meta.next()) else {
            continue;
        };
        let inside = Path::new(path)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
        if kind == "commit" {
            left_out.submodules.push(path.to_string());
        } else if kind != "blob" {
            continue;
        } else if !inside || path.contains(char::REPLACEMENT_CHARACTER) {
            left_out.unreadable.push(path.to_string());
        } else {
            files.push(Blob {
                id: id.to_string(),
                path: PathBuf::from(path),
                link: mode == "120000",
            });
        }
    }
    (files, left_out)
}

/// Writes `content` at `file`: a file, or for a symbolic link a link to the target it
/// holds, as a checkout writes it (where links cannot be made, the target's text).
fn write_blob(file: &Path, content: Vec<u8>, link: bool) -> std::io::Result<()> {
    #[cfg(unix)]
    if link {
        use std::os::unix::ffi::OsStringExt;
        let target = std::ffi::OsString::from_vec(content);
        return std::os::unix::fs::symlink(target, file);
    }
    let _ = link;
    std::fs::write(file, content)
}

/// One answer of `git cat-file --batch`: `<id> blob <size>\n<content>\n`.
fn read_blob(out: &mut impl BufRead) -> std::io::Result<Vec<u8>> {
    let mut header = String::new();
    out.read_line(&mut header)?;
    let size = (header.split_whitespace().nth(2))
        .and_then(|s| s.parse::<usize>().ok())
        .ok_or_else(|| std::io::Error::other(format!("unexpected answer {:?}", header.trim())))?;
    let mut content = vec![0; size];
    out.read_exact(&mut content)?;
    let mut newline = [0u8; 1];
    out.read_exact(&mut newline)?;
    Ok(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ls_tree_keeps_files_and_links_inside_the_tree() {
        let listed = [
            "100644 blob aaa\ta/b.yaml",
            "120000 blob bbb\tlink",
            "160000 commit ccc\tsub",
            "100755 blob ddd\tx y.yaml",
            "100644 blob eee\t../out.yaml",
        ]
        .join("\0");
        let listed = listed.as_bytes();
        let (got, left_out) = blobs(listed);
        let blob = |id: &str, path: &str, link| Blob {
            id: id.into(),
            path: path.into(),
            link,
        };
        assert_eq!(
            got,
            vec![
                blob("aaa", "a/b.yaml", false),
                blob("bbb", "link", true),
                blob("ddd", "x y.yaml", false)
            ]
        );
        assert_eq!(
            left_out,
            LeftOut {
                submodules: vec!["sub".into()],
                unreadable: vec!["../out.yaml".into()],
            }
        );
        assert_eq!(
            left_out.describe().as_deref(),
            Some(
                "1 submodule(s) (first: sub), 1 file(s) with a name karplint cannot write (first: ../out.yaml)"
            )
        );
    }

    #[test]
    fn a_batch_answer_is_read_whole() {
        let mut r = std::io::Cursor::new(b"abc blob 3\nxyz\nabd blob 0\n\n".to_vec());
        assert_eq!(read_blob(&mut r).unwrap(), b"xyz");
        assert_eq!(read_blob(&mut r).unwrap(), b"");
        assert!(read_blob(&mut r).is_err());
    }
}
