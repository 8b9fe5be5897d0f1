//! Integration formats, suppressions and configuration, end to end through the binary: every
//! format is snapshotted over the same fixture set (`tests/fixtures/integrations/`), and
//! config precedence is checked in temporary directories.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/integrations")
}

fn karplint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("karplint").unwrap();
    c.current_dir(dir)
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .env_remove("GITHUB_STEP_SUMMARY");
    c
}

/// Runs over the fixtures in one format; returns (exit code, stdout).
fn run_format(format: &str) -> (i32, String) {
    let out = karplint(&fixtures())
        .args(["--no-config", "--format", format, "."])
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

#[test]
fn human_snapshot() {
    let (code, out) = run_format("human");
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn json_snapshot() {
    let (code, out) = run_format("json");
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn sarif_snapshot() {
    let (code, out) = run_format("sarif");
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn github_snapshot() {
    let (code, out) = run_format("github");
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

#[test]
fn markdown_snapshot() {
    let (code, out) = run_format("markdown");
    assert_eq!(code, 1);
    insta::assert_snapshot!(out);
}

fn json_of(dir: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = karplint(dir)
        .args(["--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap(), v)
}

/// (rule, line) of every diagnostic in `file`.
fn hits(v: &serde_json::Value, file: &str) -> Vec<(String, u64)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["file"] == file)
        .map(|d| {
            (
                d["rule"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_suppression_form() {
    let (_, v) = json_of(&fixtures(), &["--no-config", "."]);
    let web = hits(&v, "web.yaml");
    // Only container "web" is left: "proxy" (comment above), "logger" (comment at the end
    // of the line), Deployment "worker" (pod template annotation) are suppressed.
    let requests: Vec<u64> = web
        .iter()
        .filter(|h| h.0 == "missing-resource-requests")
        .map(|h| h.1)
        .collect();
    assert_eq!(requests, vec![14]);
    // The object annotation on "api" names two rules that did not fire; the comment above
    // container "api" names a rule that does not exist.
    let unused: Vec<u64> = web
        .iter()
        .filter(|h| h.0 == "unused-suppression")
        .map(|h| h.1)
        .collect();
    assert_eq!(unused, vec![44, 44, 49]);
    // The file-wide comment hides the Pod's finding.
    let legacy = hits(&v, "legacy,storage.yaml");
    assert_eq!(legacy, vec![("in-tree-storage-plugin".to_string(), 9)]);
    assert_eq!(v["summary"]["suppressed"], 4);
}

#[test]
fn unused_suppression_is_a_listed_rule() {
    let out = karplint(&fixtures()).arg("rules").output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("unused-suppression"), "{text}");
    let out = karplint(&fixtures())
        .args(["explain", "unused-suppression"])
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains("## Fix"));
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

const POD: &str = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ns\nspec:\n  containers:\n    - name: c\n      image: nginx\n";

#[test]
fn config_is_found_in_parents_and_flags_override_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        ".karplint.yaml",
        "rules:\n  missing-resource-requests: off\nfailOn: warning\n",
    );
    write(root, "apps/pod.yaml", POD);
    let apps = root.join("apps");
    // From the file: the rule is off, missing-limit-range (warning) fails the run.
    let (code, v) = json_of(&apps, &["."]);
    assert_eq!(
        hits(&v, "pod.yaml"),
        vec![("missing-limit-range".into(), 4)]
    );
    assert_eq!(code, 1);
    // --fail-on beats failOn.
    let (code, _) = json_of(&apps, &["--fail-on", "error", "."]);
    assert_eq!(code, 0);
    // --rule beats rules:.
    let (code, v) = json_of(
        &apps,
        &[
            "--rule",
            "missing-resource-requests=error",
            "--rule",
            "missing-limit-range=info",
            ".",
        ],
    );
    let mut rules: Vec<(String, String)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap().into(),
                d["severity"].as_str().unwrap().into(),
            )
        })
        .collect();
    rules.sort();
    assert_eq!(
        rules,
        vec![
            ("missing-limit-range".into(), "info".into()),
            ("missing-resource-requests".into(), "error".into())
        ]
    );
    assert_eq!(code, 1);
    // --no-config: defaults (warnings do not fail).
    let (code, v) = json_of(&apps, &["--no-config", "."]);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 2);
    assert_eq!(code, 0);
    // --config names another file.
    write(root, "strict.yaml", "failOn: info\n");
    let (code, _) = json_of(&apps, &["--config", "../strict.yaml", "."]);
    assert_eq!(code, 1);
}

#[test]
fn config_context_is_relative_to_the_config_file() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(root, ".karplint.yaml", "context: [platform]\n");
    write(
        root,
        "platform/limits.yaml",
        "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: d\n  namespace: ns\nspec:\n  limits:\n    - type: Container\n      defaultRequest: {cpu: 100m, memory: 128Mi}\n",
    );
    write(root, "apps/pod.yaml", POD);
    let (_, v) = json_of(&root.join("apps"), &["."]);
    assert_eq!(v["diagnostics"].as_array().unwrap().len(), 0, "{v}");
}

#[test]
fn config_errors_point_into_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        ".karplint.yaml",
        "rules:\n  missing-resource-request: off\n",
    );
    write(tmp.path(), "pod.yaml", POD);
    let out = karplint(tmp.path()).arg(".").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("unknown rule \"missing-resource-request\" in config"),
        "{err}"
    );
    assert!(err.contains(".karplint.yaml:2:3"), "{err}");
    assert!(
        err.contains("did you mean `missing-resource-requests`"),
        "{err}"
    );

    write(tmp.path(), ".karplint.yaml", "failon: warning\n");
    let out = karplint(tmp.path()).arg(".").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("failon"), "{err}");
    assert!(err.contains(".karplint.yaml:1:1"), "{err}");

    // Flags are as strict as the file.
    for bad in [
        "nope=off",
        "missing-limit-range=loud",
        "missing-limit-range",
    ] {
        let out = karplint(tmp.path())
            .args(["--no-config", "--rule", bad, "."])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--rule {bad}");
    }
}

#[test]
fn several_formats_in_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let sarif = tmp.path().join("k.sarif");
    let md = tmp.path().join("k.md");
    let out = karplint(&fixtures())
        .args([
            "--no-config",
            "--format",
            "github",
            "--format",
            "sarif",
            "--format",
            "markdown",
        ])
        .args(["--output", "-", "--output"])
        .arg(&sarif)
        .arg("--output")
        .arg(&md)
        .arg(".")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        run_format("github").1
    );
    assert_eq!(
        std::fs::read_to_string(&sarif).unwrap(),
        run_format("sarif").1
    );
    assert_eq!(
        std::fs::read_to_string(&md).unwrap(),
        run_format("markdown").1
    );
    // Two formats with nowhere to go but stdout is a usage error.
    let out = karplint(&fixtures())
        .args(["--no-config", "--format", "json", "--format", "sarif", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn completions_and_man_page() {
    for shell in ["bash", "zsh", "fish"] {
        let out = karplint(&fixtures())
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("fail-on"), "{shell}: {text}");
    }
    let out = karplint(&fixtures()).arg("man").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(".ie") || text.contains(".TH karplint"),
        "{text}"
    );
}
