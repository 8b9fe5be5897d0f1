//! Baselines, for adopting karplint in a repository that already has findings: between the
//! run and the report, `--write-baseline FILE` records the run's findings and
//! `--baseline FILE` takes the recorded ones out of the report, counting them, so only new
//! findings are listed and decide the exit code.
//!
//! A finding is recorded by its rule, file, object and a fingerprint that survives line
//! shifts: a hash of those and of the trimmed text of the primary span's lines, never the
//! line number. Matching is one to one: a baseline entry stands for one finding, so a
//! second finding of the same kind on an identical line is new. The file is versioned JSON
//! with one entry per finding in a stable order, so its diff in a pull request reads as
//! "these findings were fixed".
//!
//! Entries name their files relative to the baseline file's directory (`paths:
//! "baseline"`), so the same baseline matches from any working directory. A baseline
//! without `paths` was written when entries were relative to the working directory, and is
//! still read that way. When a baseline matches none of the findings of the files it has
//! entries for, or names no file of the run at all, a note says which and why.

use super::{LineIndex, Note, Report};
use crate::diagnostic::Finding;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The version of the baseline file format.
const VERSION: u32 = 1;

/// A baseline file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub version: u32,
    /// What entries' `file` is relative to: `"baseline"`, the baseline file's directory;
    /// absent in older baselines, whose paths are relative to the working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paths: Option<String>,
    pub findings: Vec<Entry>,
}

/// The `paths` of a baseline whose entries are relative to its directory.
const RELATIVE_TO_BASELINE: &str = "baseline";

/// How the entries of a baseline at a path name the run's files.
#[derive(Debug, Clone)]
pub enum Names {
    /// As the report names them (relative to the working directory, as given).
    AsGiven,
    /// Relative to this directory (the baseline file's).
    RelativeTo(PathBuf),
}

impl Names {
    /// The names of a baseline file at `path`, written now.
    pub fn of_baseline_at(path: &Path) -> Names {
        let dir = path.parent().unwrap_or(Path::new(""));
        Names::RelativeTo(crate::discover::normal(dir))
    }

    /// How `baseline`, read from `path`, names files.
    fn read_from(baseline: &Baseline, path: &Path) -> Names {
        match baseline.paths.as_deref() {
            Some(RELATIVE_TO_BASELINE) => Names::of_baseline_at(path),
            _ => Names::AsGiven,
        }
    }

    /// The name of `source` in a baseline.
    fn name(&self, source: &super::Source) -> String {
        match (self, source.path()) {
            (Names::RelativeTo(dir), Some(p)) => relative(dir, &crate::discover::normal(p)),
            _ => source.name.clone(),
        }
    }
}

/// The path of `file` from `dir` (both absolute and normal), with `/` separators and `..`
/// where `file` is not below `dir`.
fn relative(dir: &Path, file: &Path) -> String {
    let d: Vec<_> = dir.components().collect();
    let f: Vec<_> = file.components().collect();
    let common = d.iter().zip(&f).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return file.display().to_string();
    }
    let ups = std::iter::repeat_n("..".to_string(), d.len() - common);
    let downs = f[common..]
        .iter()
        .map(|c| c.as_os_str().to_string_lossy().into_owned());
    ups.chain(downs).collect::<Vec<_>>().join("/")
}

/// One recorded finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Entry {
    pub file: String,
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<EntryObject>,
    /// Hash of the rule, file, object and the primary span's trimmed lines (16 hex digits).
    pub fingerprint: String,
    /// The message when recorded: for the reader, not matched.
    #[serde(default)]
    pub message: String,
}

/// The object of a recorded finding.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct EntryObject {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// A baseline that cannot be read or written (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    #[error("reading baseline {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("baseline {path} is not a karplint baseline: {source}")]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "baseline {path} has version {found}; this karplint reads version {VERSION}, rewrite it with --write-baseline"
    )]
    Version { path: PathBuf, found: u32 },
    #[error("writing baseline {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl Baseline {
    /// The entries of the report's findings, sorted, for a baseline file at `path`.
    pub fn of(report: &Report, path: &Path) -> Self {
        let mut findings = entries(report, &Names::of_baseline_at(path));
        findings.sort();
        Baseline {
            version: VERSION,
            paths: Some(RELATIVE_TO_BASELINE.to_string()),
            findings,
        }
    }

    /// The entries of the report's findings, sorted, naming files as the report does: to
    /// match another run of the same tree from the same directory (`karplint diff`).
    pub fn as_given(report: &Report) -> Self {
        let mut findings = entries(report, &Names::AsGiven);
        findings.sort();
        Baseline {
            version: VERSION,
            paths: None,
            findings,
        }
    }

    /// Reads the baseline at `path`: a regular file of at most `max` bytes
    /// (`--max-file-size`), UTF-8 with or without a byte-order mark.
    pub fn read(path: &Path, max: u64) -> Result<Self, BaselineError> {
        let read = |source| BaselineError::Read {
            path: path.to_path_buf(),
            source,
        };
        let bytes = crate::discover::read_regular_file_at_most(path, max).map_err(read)?;
        let text = String::from_utf8(bytes)
            .map_err(|e| read(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        // The version first: a later format may not parse as this one.
        #[derive(Deserialize)]
        struct Versioned {
            version: u32,
        }
        let parse = |source| BaselineError::Parse {
            path: path.to_path_buf(),
            source,
        };
        let found = serde_json::from_str::<Versioned>(text)
            .map_err(parse)?
            .version;
        if found != VERSION {
            return Err(BaselineError::Version {
                path: path.to_path_buf(),
                found,
            });
        }
        serde_json::from_str(text).map_err(parse)
    }

    /// Writes the baseline as pretty JSON with a final newline.
    pub fn write(&self, path: &Path) -> Result<(), BaselineError> {
        use std::io::Write;
        let text = super::json_string(self);
        super::create_output(path)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|source| BaselineError::Write {
                path: path.to_path_buf(),
                source,
            })
    }
}

/// What applying a baseline did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Applied {
    /// Findings of the run that the baseline holds, taken out of the report.
    pub matched: usize,
    /// Entries for files of this run that no finding matched any more.
    pub stale: usize,
}

/// Takes the findings the baseline holds out of the report, recounts the summary, records
/// how many in `summary.baselined` and says so in the notes, with a note on the entries
/// that no longer match. Entries for files outside this run (a run on changed files) are
/// neither matched nor stale. `path` is where the baseline was read from.
pub fn apply(report: &mut Report, baseline: &Baseline, path: &Path) -> Applied {
    let name = &path.display().to_string();
    let names = Names::read_from(baseline, path);
    let keys = entries(report, &names);
    let mut left: BTreeMap<(&str, &str, &str), usize> = BTreeMap::new();
    for e in &baseline.findings {
        *left
            .entry((e.file.as_str(), e.rule.as_str(), e.fingerprint.as_str()))
            .or_default() += 1;
    }
    let mut keep = Vec::with_capacity(keys.len());
    for k in &keys {
        let slot = left.get_mut(&(k.file.as_str(), k.rule.as_str(), k.fingerprint.as_str()));
        match slot {
            Some(n) if *n > 0 => {
                *n -= 1;
                keep.push(false);
            }
            _ => keep.push(true),
        }
    }
    let matched = keep.iter().filter(|k| !**k).count();
    let mut flags = keep.into_iter();
    report.findings.retain(|_| flags.next().unwrap_or(true));
    super::count(&mut report.summary, &report.findings);
    report.summary.baselined = Some(matched);
    let linted: BTreeSet<String> = (report.sources.iter())
        .filter(|s| !s.context)
        .map(|s| names.name(s))
        .collect();
    let stale = (left.iter())
        .filter(|((file, _, _), _)| linted.contains(*file))
        .map(|(_, n)| n)
        .sum();
    if matched == 0
        && let Some(why) = unmatched_why(baseline, name, &names, &linted, stale)
    {
        report.notes.push(Note::new("baseline", why));
    }
    if matched > 0 {
        report.notes.push(Note::new(
            "baseline",
            format!("{matched} finding(s) in the baseline {name} not reported"),
        ));
    }
    if stale > 0 && matched > 0 {
        report.notes.push(Note::new(
            "baseline",
            format!(
                "{stale} baseline entries no longer match; rewrite it with --write-baseline {name}"
            ),
        ));
    }
    Applied { matched, stale }
}

/// The fingerprint of each finding, in the report's order, with files named as the report
/// names them: SARIF's `partialFingerprints`. A second finding with the same fingerprint
/// (two ids of one suppression comment) gets `:2`, and so on, so no two results share one.
pub(crate) fn fingerprints(report: &Report) -> Vec<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    (entries(report, &Names::AsGiven).into_iter())
        .map(|e| {
            let n = seen.entry(e.fingerprint.clone()).or_default();
            *n += 1;
            match *n {
                1 => e.fingerprint,
                n => format!("{}:{n}", e.fingerprint),
            }
        })
        .collect()
}

/// Why a baseline with entries matched no finding of the run: the findings of the files it
/// names changed, or none of its entries names a file that exists from here (their paths,
/// relative to what, against the run's). `None` when its entries name other files that
/// exist: a run on changed files.
fn unmatched_why(
    baseline: &Baseline,
    name: &str,
    names: &Names,
    linted: &BTreeSet<String>,
    stale: usize,
) -> Option<String> {
    let n = baseline.findings.len();
    if stale > 0 {
        return Some(format!(
            "the baseline {name} matched none of this run's findings: its {stale} entries for the files of this run no longer match (the findings were fixed, or their lines changed); rewrite it with --write-baseline {name}"
        ));
    }
    let exists = |file: &str| match names {
        Names::RelativeTo(dir) => dir.join(file).exists(),
        Names::AsGiven => Path::new(file).exists(),
    };
    if n == 0 || baseline.findings.iter().any(|e| exists(&e.file)) {
        return None;
    }
    let relative_to = match names {
        Names::RelativeTo(_) => "the baseline's directory".to_string(),
        Names::AsGiven => {
            "the working directory it was written in (an older baseline; rewrite it with --write-baseline to make it work from any directory)".to_string()
        }
    };
    let example = |it: &mut dyn Iterator<Item = &str>| it.next().unwrap_or("").to_string();
    let entry = example(&mut baseline.findings.iter().map(|e| e.file.as_str()));
    let file = example(&mut linted.iter().map(String::as_str));
    Some(format!(
        "the baseline {name} matched no finding: none of its {n} entries names a file that exists from here (its paths are relative to {relative_to}: an entry names {entry:?}, a file of this run is {file:?})"
    ))
}

/// One entry per finding, in the report's order. Each source with findings is read once.
fn entries(report: &Report, names: &Names) -> Vec<Entry> {
    let mut by_source: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (i, f) in report.findings.iter().enumerate() {
        by_source.entry(f.source).or_default().push(i);
    }
    let mut out: Vec<Option<Entry>> = vec![None; report.findings.len()];
    for (id, idx) in by_source {
        let source = &report.sources[id];
        let text = source.reread();
        let lines = LineIndex::new(&text);
        let name = names.name(source);
        for i in idx {
            let f = &report.findings[i];
            out[i] = Some(entry(f, &name, &span_lines(&text, &lines, f)));
        }
    }
    out.into_iter().flatten().collect()
}

/// The primary span's lines, each trimmed, joined by newlines.
fn span_lines(text: &str, lines: &LineIndex, f: &Finding) -> String {
    let p = lines.resolve(text, f.span);
    (p.line..=p.end_line.max(p.line))
        .map(|l| lines.line(text, l).trim())
        .collect::<Vec<_>>()
        .join("\n")
}

fn entry(f: &Finding, file: &str, span_text: &str) -> Entry {
    let object = f.object.as_deref().map(|o| EntryObject {
        kind: o.kind.to_string(),
        namespace: o.namespace.as_ref().map(|n| n.to_string()),
        name: o.name.to_string(),
        role: o.role.as_ref().map(|r| r.to_string()),
    });
    let (kind, namespace, name, role) = object.as_ref().map_or(("", "", "", ""), |o| {
        let ns = o.namespace.as_deref().unwrap_or("");
        (
            o.kind.as_str(),
            ns,
            o.name.as_str(),
            o.role.as_deref().unwrap_or(""),
        )
    });
    let fingerprint = if object.is_some() {
        fingerprint(&[f.rule, file, kind, namespace, name, role, span_text])
    } else {
        fingerprint(&[f.rule, file, span_text])
    };
    Entry {
        file: file.to_string(),
        rule: f.rule.to_string(),
        object,
        fingerprint,
        message: f.message.clone(),
    }
}

/// The 64-bit FNV-1a hash of `parts`, each followed by a 0xff separator (so ("ab", "c")
/// and ("a", "bc") differ), as 16 hex digits: stable across platforms and releases, unlike
/// std's hasher. Users' baseline files store it: it must never change (see the pinned
/// values in the tests).
fn fingerprint(parts: &[&str]) -> String {
    use std::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    for part in parts {
        // Bytes written explicitly, not through `Hash for str`, whose framing is std's to
        // choose.
        h.write(part.as_bytes());
        h.write(&[0xff]);
    }
    format!("{:016x}", h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_from_the_baseline_directory() {
        for (dir, file, want) in [
            ("/r", "/r/a.yaml", "a.yaml"),
            ("/r", "/r/tree/a.yaml", "tree/a.yaml"),
            ("/r/tree", "/r/tree/a.yaml", "a.yaml"),
            ("/r/ci", "/r/tree/a.yaml", "../tree/a.yaml"),
            ("/r/a/b", "/r/c.yaml", "../../c.yaml"),
        ] {
            assert_eq!(
                relative(Path::new(dir), Path::new(file)),
                want,
                "{dir} {file}"
            );
        }
        assert_eq!(
            crate::discover::normal(Path::new("/r/./a/../b.yaml")),
            PathBuf::from("/r/b.yaml")
        );
    }

    #[test]
    fn fnv_is_the_published_function() {
        // FNV-1a 64 of "a" is af63dc4c8601ec8c; `fingerprint` adds the 0xff separator.
        use std::hash::Hasher;
        let mut h = fnv::FnvHasher::default();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }

    /// Fingerprints stored in users' baselines: pinned, so a change of the hash (or of
    /// how the fields are joined) fails here rather than orphaning every baseline entry.
    #[test]
    fn fingerprints_are_pinned() {
        for (parts, want) in [
            (&[""][..], "af64724c8602eb6e"),
            (&["a"], "089bc907b544c769"),
            (&["ab", "c"], "20ba9b3025a8b421"),
            (&["a", "bc"], "a0a3542c19b900ab"),
            (
                &[
                    "missing-requests",
                    "deploy.yaml",
                    "Deployment",
                    "shop",
                    "web",
                    "",
                    "image: nginx",
                ],
                "0928c3f8f4134213",
            ),
            (
                &["parse-error", "caf\u{e9}.yaml", "kind: [\n\u{e9}"],
                "89e1b5520adb8302",
            ),
        ] {
            assert_eq!(fingerprint(parts), want, "{parts:?}");
        }
    }

    /// The fingerprints of a whole lint run, end to end (span text, file name, object).
    #[test]
    fn fingerprints_of_a_run_are_pinned() {
        let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n";
        let r = crate::engine::lint_str(doc).expect("lints");
        let got: Vec<(String, String)> = Baseline::of(&r, Path::new("b.json"))
            .findings
            .into_iter()
            .map(|e| (e.rule, e.fingerprint))
            .collect();
        let want: Vec<(String, String)> = PINNED_RUN
            .iter()
            .map(|(r, f)| (r.to_string(), f.to_string()))
            .collect();
        assert_eq!(got, want);
    }

    const PINNED_RUN: &[(&str, &str)] = &[
        ("missing-limit-range", "e5e7dc2652068030"),
        ("missing-resource-requests", "ccf4f538bca832ab"),
    ];

    #[test]
    fn fingerprint_survives_a_line_shift_but_not_an_edit() {
        let doc = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx\n";
        let a = crate::engine::lint_str(doc).expect("lints");
        let b = crate::engine::lint_str(&format!("# a comment\n\n{doc}")).expect("lints");
        let c = crate::engine::lint_str(&doc.replace("name: web\n", "name: api\n")).expect("lints");
        let fp = |r: &Report| {
            Baseline::of(r, Path::new("b.json"))
                .findings
                .iter()
                .map(|e| (e.rule.clone(), e.fingerprint.clone()))
                .collect::<Vec<_>>()
        };
        assert!(!fp(&a).is_empty());
        assert_eq!(fp(&a), fp(&b));
        assert_ne!(fp(&a), fp(&c));
    }
}
