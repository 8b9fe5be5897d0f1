//! Reports on hostile input, on the built binary: control characters from manifests
//! never reach the terminal raw, and a pod that no NodePool of a large fleet takes gets a
//! bounded number of related notes in every format.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn karplint(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("karplint").expect("binary");
    c.current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("KARPLINT_TIMINGS")
        .env("COLUMNS", "100");
    c
}

fn stdout(dir: &Path, args: &[&str]) -> String {
    let out = karplint(dir)
        .args(args)
        .args(["--no-config", "--fail-on", "never"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_no_controls(&stderr, &format!("stderr of {args:?}"));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Fails on any control character but newline, and on a bidirectional override.
fn assert_no_controls(text: &str, what: &str) {
    for (i, c) in text.char_indices() {
        let bidi = matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
        assert!(
            !(bidi || c.is_control() && c != '\n'),
            "{what}: raw {c:?} at byte {i}:\n{}",
            text.get(i.saturating_sub(200)..(i + 200).min(text.len()))
                .unwrap_or(text)
        );
    }
}

/// A tainted NodePool, a Deployment that does not tolerate it (untolerated-taint, quoting
/// the pool's name and taint), one without requests (missing-resource-requests), and a
/// document whose raw bytes hold an escape sequence, in a file whose name holds one too.
const HOSTILE: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: \"pool\\e]0;pwned\\a\"
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints:
        - key: \"ded\\e[2Jicated\"
          value: \"ml\\u009b31m\"
          effect: NoSchedule
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: \"app\\e]8;;https://evil.example/\\e\\\\click\\e]8;;\\e\\\\\"
  namespace: \"team\\u202e\"
spec:
  replicas: 1
  template:
    spec:
      containers:
        - name: \"c\\r\\e[1A\"
          image: \"nginx\\e[?1049h\"
";

const RAW: &[u8] = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: raw\n  \x1b]0;title\x07: [\x1b[2J\nbad: \x9b\r: x\n";

#[test]
fn control_characters_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let name = "evil\u{1b}]0;t\u{7}\r.yaml";
    std::fs::write(dir.path().join(name), HOSTILE).expect("write");
    std::fs::write(dir.path().join("raw.yaml"), RAW).expect("write");
    for format in ["human", "concise", "github", "markdown"] {
        let out = stdout(dir.path(), &["--format", format, "."]);
        assert_no_controls(&out, format);
        for rule in [
            "untolerated-taint",
            "missing-resource-requests",
            "parse-error",
        ] {
            assert!(out.contains(rule), "{format} lacks {rule}:\n{out}");
        }
        // The escapes are shown, not dropped.
        assert!(out.contains("\\u{1b}"), "{format}:\n{out}");
    }
    let human = stdout(dir.path(), &["--format", "human", "."]);
    // The quoted source shows each control character as one Control Picture.
    assert!(human.contains("\u{241b}]0;title\u{2407}"), "{human}");
    for format in ["human", "concise", "markdown"] {
        let plan = stdout(dir.path(), &["plan", "--format", format, "."]);
        assert_no_controls(&plan, &format!("plan --format {format}"));
        // Markdown also escapes the bracket, which could open a link.
        assert!(
            plan.contains("app\\u{1b}]8;;") || plan.contains("app\\u{1b}\\]8;;"),
            "{plan}"
        );
        // The file name too, in the location column.
        assert!(plan.contains("evil\\u{1b}]0;t\\u{7}"), "{plan}");
    }
    // JSON keeps the exact text (serde_json writes `\u001b`).
    let json: Value =
        serde_json::from_str(&stdout(dir.path(), &["--format", "json", "."])).expect("JSON");
    let names: Vec<&str> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["object"]["name"].as_str())
        .collect();
    assert!(
        names.contains(&"app\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\"),
        "{names:?}"
    );
}

/// `n` NodePools, each tainted by `taint(i)`, and one Deployment that tolerates none.
fn fleet(n: usize, taint: impl Fn(usize) -> String) -> String {
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!(
            "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: pool-{i:03}
spec:
  template:
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      taints:
        - key: {}
          effect: NoSchedule
---
",
            taint(i)
        ));
    }
    s.push_str(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
        - name: app
          image: nginx
          resources:
            requests: {cpu: 250m, memory: 256Mi}
",
    );
    s
}

/// The related notes of the one untolerated-taint finding, as JSON and SARIF give them.
fn pending_notes(text: &str) -> (Vec<String>, usize, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("fleet.yaml"), text).expect("write");
    let json: Value =
        serde_json::from_str(&stdout(dir.path(), &["--format", "json", "."])).expect("JSON");
    let found: Vec<&Value> = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["rule"] == "untolerated-taint")
        .collect();
    assert_eq!(found.len(), 1, "{json:#}");
    let notes = found[0]["related"]
        .as_array()
        .expect("related is a list")
        .iter()
        .map(|r| r["message"].as_str().expect("message").to_owned())
        .collect();
    let sarif: Value =
        serde_json::from_str(&stdout(dir.path(), &["--format", "sarif", "."])).expect("SARIF");
    let sarif_notes = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|r| r["ruleId"] == "untolerated-taint")
        .and_then(|r| r["relatedLocations"].as_array())
        .map_or(0, Vec::len);
    let human = stdout(dir.path(), &["--format", "human", "."]);
    (notes, sarif_notes, human)
}

#[test]
fn pools_failing_the_same_way_are_one_note() {
    let (notes, sarif, human) = pending_notes(&fleet(40, |_| "dedicated".into()));
    assert_eq!(notes.len(), 4, "{notes:#?}");
    // Equal weights: Karpenter tries them by name, descending (`OrderByWeight`).
    assert!(notes[0].starts_with("NodePool \"pool-039\""), "{notes:#?}");
    assert!(notes[2].starts_with("NodePool \"pool-037\""), "{notes:#?}");
    assert_eq!(notes[3], "and 37 more NodePools fail the same way");
    assert_eq!(sarif, 4);
    assert_eq!(human.matches("\nnote: ").count(), 4, "{human}");
}

#[test]
fn pools_failing_in_many_ways_are_capped() {
    let (notes, sarif, _) = pending_notes(&fleet(40, |i| format!("dedicated-{i:03}")));
    assert_eq!(notes.len(), 11, "{notes:#?}");
    assert!(notes[9].starts_with("NodePool \"pool-030\""), "{notes:#?}");
    assert_eq!(notes[10], "and 30 more NodePools fail in other ways");
    assert_eq!(sarif, 11);
}
