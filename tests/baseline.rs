//! `--write-baseline` and `--baseline`: adopting karplint in a tree that already has
//! findings. A baseline survives line shifts, reports only new findings (exit code from
//! them alone), counts the rest, and says when entries no longer match.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

const LEGACY: &str = "\
apiVersion: v1
kind: PersistentVolume
metadata:
  name: data
spec:
  capacity:
    storage: 100Gi
  accessModes: [ReadWriteOnce]
  awsElasticBlockStore:
    volumeID: vol-0123456789abcdef0
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
";

const NEW_PROBLEM: &str = "\
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp2
provisioner: kubernetes.io/aws-ebs
";

fn karplint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("karplint").expect("binary");
    c.current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("KARPLINT_TIMINGS")
        .env("COLUMNS", "100");
    c
}

fn json(dir: &Path, args: &[&str]) -> (Value, i32) {
    let out = karplint(dir)
        .args(args)
        .args(["--format", "json", "--no-config", "manifests"])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    (v, out.status.code().unwrap_or(-1))
}

fn rules(v: &Value) -> Vec<String> {
    v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| format!("{}:{}", d["rule"].as_str().unwrap(), d["line"]))
        .collect()
}

/// A tree with today's findings and its baseline.
fn adopted() -> (tempfile::TempDir, usize) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("manifests")).unwrap();
    std::fs::write(dir.path().join("manifests/app.yaml"), LEGACY).unwrap();
    let (before, code) = json(dir.path(), &[]);
    assert_eq!(code, 1, "{before}");
    let n = before["diagnostics"].as_array().unwrap().len();
    assert!(n >= 2, "{before}");
    let out = karplint(dir.path())
        .args(["--no-config", "--write-baseline", ".karplint-baseline.json"])
        .arg("manifests")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("karplint: {n} finding(s) recorded in the baseline .karplint-baseline.json\n")
    );
    (dir, n)
}

#[test]
fn baseline_file_is_versioned_sorted_and_has_no_line_numbers() {
    let (dir, n) = adopted();
    let text = std::fs::read_to_string(dir.path().join(".karplint-baseline.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 1);
    let entries = v["findings"].as_array().unwrap();
    assert_eq!(entries.len(), n);
    for e in entries {
        assert_eq!(e["file"], "manifests/app.yaml");
        assert!(e["rule"].is_string() && e["message"].is_string(), "{e}");
        assert_eq!(e["fingerprint"].as_str().unwrap().len(), 16, "{e}");
        assert!(e.get("line").is_none(), "{e}");
    }
    let keys: Vec<(String, String)> = entries
        .iter()
        .map(|e| (e["rule"].to_string(), e["fingerprint"].to_string()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    let web = entries
        .iter()
        .find(|e| e["object"]["name"] == "web")
        .unwrap();
    assert_eq!(web["object"]["kind"], "Deployment");
    assert_eq!(web["object"]["namespace"], "shop");
    // Writing again gives the same bytes.
    karplint(dir.path())
        .args(["--no-config", "--write-baseline", ".karplint-baseline.json"])
        .arg("manifests")
        .assert()
        .code(0);
    let again = std::fs::read_to_string(dir.path().join(".karplint-baseline.json")).unwrap();
    assert_eq!(text, again);
}

#[test]
fn shifted_lines_still_match_and_new_problems_are_reported() {
    let (dir, n) = adopted();
    let file = dir.path().join("manifests/app.yaml");
    // Lines shift: a comment at the top.
    std::fs::write(
        &file,
        format!("# owned by team shop\n# see the wiki\n{LEGACY}"),
    )
    .unwrap();
    // At --fail-on warning, the baselined warnings would fail the run.
    let args = [
        "--baseline",
        ".karplint-baseline.json",
        "--fail-on",
        "warning",
    ];
    let (v, code) = json(dir.path(), &args);
    assert_eq!(code, 0, "{v}");
    assert_eq!(rules(&v), Vec::<String>::new());
    assert_eq!(v["summary"]["baselined"], n);
    assert_eq!(v["summary"]["errors"], 0);
    assert_eq!(v["summary"]["warnings"], 0);
    let notes: Vec<&str> = (v["notes"].as_array().unwrap().iter())
        .filter(|n| n["kind"] == "baseline")
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        notes,
        [format!(
            "{n} finding(s) in the baseline .karplint-baseline.json not reported"
        )]
    );
    // Without --baseline the summary has no `baselined`.
    let (plain, _) = json(dir.path(), &[]);
    assert!(plain["summary"].get("baselined").is_none());

    // A new problem: only it is reported, and it alone sets the exit code.
    std::fs::write(
        &file,
        format!("# owned by team shop\n# see the wiki\n{LEGACY}{NEW_PROBLEM}"),
    )
    .unwrap();
    let (v, code) = json(dir.path(), &args);
    assert_eq!(code, 1, "{v}");
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{v}");
    assert_eq!(diags[0]["rule"], "in-tree-storage-plugin");
    assert_eq!(diags[0]["object"]["kind"], "StorageClass");
    assert_eq!(v["summary"]["baselined"], n);
    assert_eq!(v["summary"]["errors"], 0);
    assert_eq!(v["summary"]["warnings"], 1);

    // The human summary counts the baselined findings.
    let out = karplint(dir.path())
        .args(args)
        .args(["--no-config", "manifests"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(&format!(", {n} finding(s) in the baseline\n")),
        "{stdout}"
    );
}

#[test]
fn fixed_findings_leave_stale_entries_and_other_files_are_not_stale() {
    let (dir, _) = adopted();
    // The PersistentVolume is fixed: its entry no longer matches.
    let fixed = LEGACY.replace(
        "  awsElasticBlockStore:\n    volumeID: vol-0123456789abcdef0\n",
        "  csi:\n    driver: ebs.csi.aws.com\n    volumeHandle: vol-0123456789abcdef0\n",
    );
    assert_ne!(fixed, LEGACY);
    std::fs::write(dir.path().join("manifests/app.yaml"), &fixed).unwrap();
    let (v, code) = json(dir.path(), &["--baseline", ".karplint-baseline.json"]);
    assert_eq!(code, 0, "{v}");
    let stale: Vec<&str> = (v["notes"].as_array().unwrap().iter())
        .filter_map(|n| n["message"].as_str())
        .filter(|m| m.contains("no longer match"))
        .collect();
    assert_eq!(
        stale,
        [
            "1 baseline entries no longer match; rewrite it with --write-baseline .karplint-baseline.json"
        ]
    );
    // A run on another file (a pre-commit run on changed files) finds nothing stale.
    std::fs::write(
        dir.path().join("manifests/other.yaml"),
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n",
    )
    .unwrap();
    let out = karplint(dir.path())
        .args([
            "--no-config",
            "--baseline",
            ".karplint-baseline.json",
            "--format",
            "json",
        ])
        .arg("manifests/other.yaml")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["baselined"], 0, "{v}");
    assert!(!v.to_string().contains("no longer match"), "{v}");
}

#[test]
fn unreadable_or_foreign_baselines_are_usage_errors() {
    let (dir, _) = adopted();
    let run = |baseline: &str| {
        karplint(dir.path())
            .args(["--no-config", "--baseline", baseline, "manifests"])
            .output()
            .unwrap()
    };
    let out = run("missing.json");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("karplint: reading baseline missing.json: "),
        "{stderr}"
    );
    std::fs::write(
        dir.path().join("v9.json"),
        "{\"version\": 9, \"entries\": []}",
    )
    .unwrap();
    let out = run("v9.json");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("baseline v9.json has version 9"),
        "{stderr}"
    );
    std::fs::write(dir.path().join("junk.json"), "[1, 2]").unwrap();
    assert_eq!(run("junk.json").status.code(), Some(2));
    // A baseline never overwrites a manifest it lints.
    let out = karplint(dir.path())
        .args([
            "--no-config",
            "--write-baseline",
            "manifests/app.yaml",
            "manifests",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("refusing to write the baseline to manifests/app.yaml"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("manifests/app.yaml")).unwrap(),
        LEGACY
    );
    // The two flags do not go together.
    karplint(dir.path())
        .args([
            "--baseline",
            "a.json",
            "--write-baseline",
            "b.json",
            "manifests",
        ])
        .assert()
        .code(2);
}

/// Entries are relative to the baseline's directory: a baseline written inside a tree
/// matches from its parent, and one written from the parent matches from inside.
#[test]
fn baselines_match_from_any_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("app.yaml"), LEGACY).unwrap();
    karplint(&tree)
        .args([
            "--no-config",
            "--write-baseline",
            ".karplint-baseline.json",
            ".",
        ])
        .assert()
        .code(0);
    let text = std::fs::read_to_string(tree.join(".karplint-baseline.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["paths"], "baseline");
    assert_eq!(v["findings"][0]["file"], "app.yaml", "{v}");
    let from_parent = |baseline: &str, path: &str| {
        let out = karplint(dir.path())
            .args([
                "--no-config",
                "--format",
                "json",
                "--baseline",
                baseline,
                path,
            ])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        (v, out.status.code())
    };
    let (v, code) = from_parent("tree/.karplint-baseline.json", "tree");
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 0, "{v}");
    // Written from the parent, read from inside the tree.
    karplint(dir.path())
        .args(["--no-config", "--write-baseline", "base.json", "tree"])
        .assert()
        .code(0);
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("base.json")).unwrap())
            .unwrap();
    assert_eq!(v["findings"][0]["file"], "tree/app.yaml");
    let out = karplint(&tree)
        .args([
            "--no-config",
            "--format",
            "json",
            "--baseline",
            "../base.json",
            "app.yaml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A baseline without `paths` (entries relative to the working directory it was written
/// in) still matches from there; from elsewhere it matches nothing, and a note says why.
#[test]
fn older_baselines_are_read_relative_to_the_working_directory() {
    let (dir, n) = adopted();
    let path = dir.path().join(".karplint-baseline.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["paths"], "baseline");
    // The older shape: no `paths`; the same entries (the baseline lies in the working
    // directory, so its names and fingerprints are the same).
    v.as_object_mut().unwrap().remove("paths");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let (v, code) = json(dir.path(), &["--baseline", ".karplint-baseline.json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["summary"]["baselined"], n);
    // From inside `manifests/`, the entries name `manifests/app.yaml`, which is not there.
    let out = karplint(&dir.path().join("manifests"))
        .args([
            "--no-config",
            "--format",
            "json",
            "--baseline",
            "../.karplint-baseline.json",
            "app.yaml",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{v}");
    let notes: Vec<&str> = (v["notes"].as_array().unwrap().iter())
        .filter(|n| n["kind"] == "baseline")
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        notes,
        [format!(
            "the baseline ../.karplint-baseline.json matched no finding: none of its {n} entries names a file that exists from here (its paths are relative to the working directory it was written in (an older baseline; rewrite it with --write-baseline to make it work from any directory): an entry names \"manifests/app.yaml\", a file of this run is \"app.yaml\")"
        )]
    );
}

/// A baseline whose entries for the run's files all changed says so in one note.
#[test]
fn a_baseline_that_matches_nothing_says_why() {
    let (dir, _) = adopted();
    std::fs::write(
        dir.path().join("manifests/app.yaml"),
        LEGACY.replace("name: ", "name: x"),
    )
    .unwrap();
    let (v, _) = json(dir.path(), &["--baseline", ".karplint-baseline.json"]);
    let notes: Vec<&str> = (v["notes"].as_array().unwrap().iter())
        .filter(|n| n["kind"] == "baseline")
        .map(|n| n["message"].as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 1, "{v}");
    assert!(
        notes[0].starts_with(
            "the baseline .karplint-baseline.json matched none of this run's findings: its "
        ),
        "{notes:?}"
    );
}
