//! Rendered roots kept between runs, as ruff keeps `.ruff_cache/`: a root whose files have
//! not changed is not rendered again.
//!
//! - **Where.** `--cache-dir` (or `KARPLINT_CACHE_DIR`), else the user's cache directory
//!   (`$XDG_CACHE_HOME/karplint`, `~/.cache/karplint`, `%LOCALAPPDATA%\karplint`); never a
//!   directory the linted tree or its config names, so a tree cannot plant renders.
//!   `--no-cache` turns it off.
//! - **The key.** SHA-256 over the cache format, karplint's version, the render tool (its
//!   path, size and modification time: an upgrade changes them), the root's real path, and,
//!   for every kustomization the root walks, its file and every local file one of its
//!   string values names (resources, patches, generator files and env files, replacements,
//!   CRDs, configurations), with the contents of those that exist. Only regular files
//!   within `--max-file-size` are read: a pipe, a device or a larger file makes the root
//!   uncacheable.
//! - **Bypassed.** A root with a remote part is never built at all; one whose
//!   kustomizations name generators, transformers, validators or Helm charts (whose inputs
//!   the key cannot see) is rendered every time. Failures are never kept.
//! - **Kept.** One file per key: the directory the origin annotations are relative to, then
//!   the rendered text. Written to a temporary file and renamed, so a reader sees a whole
//!   entry or none. Entries not used for [`MAX_AGE`] are removed.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The first line of every entry; a change of layout changes it.
const MAGIC: &str = "karplint kustomize cache 1";

/// Entries unused for this long are removed when a run writes one.
const MAX_AGE: Duration = Duration::from_secs(30 * 24 * 3600);

/// Kustomization fields whose inputs the key cannot see: a root naming one is rendered
/// every time.
pub(super) const UNCACHEABLE_FIELDS: [&str; 5] = [
    "generators",
    "transformers",
    "validators",
    "helmCharts",
    "helmChartInflationGenerator",
];

/// Where rendered roots are kept.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// A root's cache key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Key(String);

/// A kept render.
pub(super) struct Entry {
    pub origin_base: PathBuf,
    pub text: String,
}

impl Cache {
    /// The cache under `dir` (its `kustomize` subdirectory).
    pub fn at(dir: &Path) -> Cache {
        Cache {
            dir: dir.join("kustomize"),
        }
    }

    /// The user's cache directory for karplint, when the environment names a home.
    pub fn default_dir() -> Option<PathBuf> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        if cfg!(windows) {
            return var("LOCALAPPDATA").map(|d| d.join("karplint"));
        }
        (var("XDG_CACHE_HOME").filter(|d| d.is_absolute()))
            .or_else(|| var("HOME").map(|h| h.join(".cache")))
            .map(|d| d.join("karplint"))
    }

    /// The key of a render: the tool, the root and the files (path and contents, or their
    /// absence) its kustomizations name, each read only as a regular file of at most `max`
    /// bytes. `None` (not cacheable) when one is something else: a pipe or device (which
    /// could block, or change unseen), an unreadable or larger file.
    pub(super) fn key(tool: &str, root: &Path, files: &[PathBuf], max: u64) -> Option<Key> {
        let mut h = Sha256::new();
        for part in [MAGIC, env!("CARGO_PKG_VERSION"), tool] {
            h.update(part.as_bytes());
            h.update([0]);
        }
        h.update(root.as_os_str().as_encoded_bytes());
        h.update([0]);
        for f in files {
            h.update(f.as_os_str().as_encoded_bytes());
            match std::fs::metadata(f) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => h.update([2]),
                Ok(m) if m.is_dir() => h.update([3]),
                Ok(m) if m.is_file() => {
                    let bytes = crate::discover::read_regular_file_at_most(f, max).ok()?;
                    h.update([1]);
                    h.update((bytes.len() as u64).to_le_bytes());
                    h.update(&bytes);
                }
                _ => return None,
            }
        }
        Some(Key(format!("{:x}", h.finalize())))
    }

    fn path(&self, key: &Key) -> PathBuf {
        self.dir.join(&key.0)
    }

    /// The kept render of `key`, if any (and marked used).
    pub(super) fn get(&self, key: &Key) -> Option<Entry> {
        let path = self.path(key);
        let text = std::fs::read_to_string(&path).ok()?;
        let rest = text.strip_prefix(MAGIC)?.strip_prefix('\n')?;
        let (base, text) = rest.split_once('\n')?;
        if let Ok(f) = std::fs::File::options().append(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(Entry {
            origin_base: PathBuf::from(base),
            text: text.to_string(),
        })
    }

    /// Keeps a render; a cache that cannot be written is only a slower next run.
    pub(super) fn put(&self, key: &Key, origin_base: &Path, text: &str) {
        let Some(base) = origin_base.to_str().filter(|b| !b.contains('\n')) else {
            return;
        };
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&self.dir)?;
            let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
            write!(tmp, "{MAGIC}\n{base}\n")?;
            tmp.write_all(text.as_bytes())?;
            tmp.persist(self.path(key)).map_err(|e| e.error)?;
            Ok(())
        };
        let _ = write();
    }

    /// Removes the entries not used for [`MAX_AGE`].
    pub(super) fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        for e in entries.flatten() {
            let old = (e.metadata().and_then(|m| m.modified()).ok())
                .and_then(|t| now.duration_since(t).ok())
                .is_some_and(|age| age > MAX_AGE);
            if old {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

/// The local files a kustomization's string values may name, relative to its directory
/// `base`: each string, and the part after `=` of `key=path` (generator `files:`).
pub(super) fn named_files(fields: &serde_json::Value, base: &Path, out: &mut Vec<PathBuf>) {
    match fields {
        serde_json::Value::String(s) => {
            if s.is_empty() || s.contains('\n') || s.len() > 4096 || super::remote::url_like(s) {
                return;
            }
            out.push(super::normal(&base.join(s)));
            if let Some((_, path)) = s.split_once('=').filter(|(_, p)| !p.is_empty()) {
                out.push(super::normal(&base.join(path)));
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                named_files(v, base, out);
            }
        }
        serde_json::Value::Object(map) => {
            for v in map.values() {
                named_files(v, base, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX: u64 = 1 << 20;

    #[test]
    fn a_render_is_kept_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let key = Cache::key("kustomize 1", Path::new("/r"), &[], MAX).unwrap();
        assert!(cache.get(&key).is_none());
        cache.put(&key, Path::new("/tmp/base"), "kind: A\n---\nkind: B\n");
        let e = cache.get(&key).unwrap();
        assert_eq!(e.origin_base, Path::new("/tmp/base"));
        assert_eq!(e.text, "kind: A\n---\nkind: B\n");
    }

    #[test]
    fn the_key_follows_every_named_file_its_contents_and_the_tool() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("deploy.yaml");
        let missing = dir.path().join("later.yaml");
        std::fs::write(&f, "a").unwrap();
        let files = [f.clone(), missing.clone()];
        let k1 = Cache::key("kustomize 1", dir.path(), &files, MAX).unwrap();
        assert_eq!(
            k1,
            Cache::key("kustomize 1", dir.path(), &files, MAX).unwrap()
        );
        assert_ne!(
            k1,
            Cache::key("kustomize 2", dir.path(), &files, MAX).unwrap()
        );
        assert_ne!(
            k1,
            Cache::key("kustomize 1", Path::new("/elsewhere"), &files, MAX).unwrap()
        );
        std::fs::write(&f, "b").unwrap();
        let k2 = Cache::key("kustomize 1", dir.path(), &files, MAX).unwrap();
        assert_ne!(k1, k2);
        std::fs::write(&missing, "").unwrap();
        assert_ne!(
            k2,
            Cache::key("kustomize 1", dir.path(), &files, MAX).unwrap()
        );
    }

    /// A value naming a device or a file over the size limit makes the root uncacheable,
    /// and is never read whole (`/dev/zero` never ends).
    #[test]
    fn a_device_or_a_large_file_is_not_read_for_a_key() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 2048]).unwrap();
        assert!(Cache::key("t", dir.path(), &[big], 1024).is_none());
        #[cfg(unix)]
        assert!(Cache::key("t", dir.path(), &[PathBuf::from("/dev/zero")], MAX).is_none());
        assert!(Cache::key("t", dir.path(), &[dir.path().to_path_buf()], MAX).is_some());
    }

    #[test]
    fn named_files_reads_paths_and_generator_sources() {
        let fields = serde_json::json!({
            "resources": ["deploy.yaml", "../base", "https://github.com/x/y"],
            "configMapGenerator": [{"name": "c", "files": ["app.conf=conf/app.conf"]}],
            "replicas": [{"name": "web", "count": 3}],
        });
        let mut out = Vec::new();
        named_files(&fields, Path::new("/r/overlay"), &mut out);
        for want in [
            "/r/overlay/deploy.yaml",
            "/r/base",
            "/r/overlay/conf/app.conf",
        ] {
            assert!(out.contains(&PathBuf::from(want)), "{want} in {out:?}");
        }
        assert!(!out.iter().any(|p| p.to_string_lossy().contains("github")));
    }

    #[test]
    fn an_entry_of_another_layout_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::at(dir.path());
        let key = Cache::key("t", Path::new("/r"), &[], MAX).unwrap();
        std::fs::create_dir_all(&cache.dir).unwrap();
        std::fs::write(cache.path(&key), "something else\n/b\nkind: A\n").unwrap();
        assert!(cache.get(&key).is_none());
    }
}
