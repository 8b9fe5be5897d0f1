//! Hostile and odd input on the built binary. Each case sits in a tree beside a good file
//! with a known finding: the run must end in bounded time without a panic, say something
//! clear about the odd file (a diagnostic, a skip with its reason, or an I/O error naming the
//! path), and still report the good file's finding.

use assert_cmd::Command;
use std::path::Path;
use std::time::Duration;

mod common;
use common::{GOOD, Run, json_run};

fn run_in(dir: &Path, args: &[&str], timeout: u64) -> Run {
    let mut c = common::karplint(dir, timeout);
    c.args(["--format", "json", "--fail-on", "never"])
        .args(args);
    json_run(c)
}

/// A tree holding the good file and `name` with `bytes`; returns the run over the tree.
fn lint_with(name: &str, bytes: &[u8]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
    std::fs::write(dir.path().join(name), bytes).expect("write");
    let run = run_in(dir.path(), &["."], 60);
    run.assert_good_reported();
    run
}

fn parse_error_message(run: &Run, file: &str) -> String {
    let errs = run.of("parse-error", file);
    assert!(
        !errs.is_empty(),
        "expected a parse-error in {file}: {:#}",
        run.json
    );
    errs[0]["message"].as_str().unwrap_or_default().to_string()
}

/// "Billion laughs": nine levels of nine aliases, 9^9 nodes if expanded.
fn bomb(indent: &str) -> String {
    let mut y = format!("{indent}a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10u8 {
        let (p, c) = ((b'a' + i - 1) as char, (b'a' + i) as char);
        y.push_str(&format!(
            "{indent}{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        ));
    }
    y
}

#[test]
fn alias_bomb_is_bounded() {
    // In an unmodelled kind, skipped without building anything.
    let cm = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n{}",
        bomb("  ")
    );
    let run = lint_with("bomb.yaml", cm.as_bytes());
    for e in run.of("parse-error", "bomb.yaml") {
        assert!(!e["message"].as_str().unwrap_or_default().is_empty());
    }
    // In fields the model reads, expanded into typed values: the alias budget stops it.
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bomb\nx:\n{}spec:\n  containers:\n  - name: c\n    args: *j\n",
        bomb("  ")
    );
    let run = lint_with("bomb.yaml", pod.as_bytes());
    let _ = run.of("parse-error", "bomb.yaml");
}

#[test]
fn deep_nesting_is_a_parse_error() {
    let depth = 10_000;
    let doc = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    let run = lint_with("deep.yaml", doc.as_bytes());
    let msg = parse_error_message(&run, "deep.yaml");
    assert!(msg.contains("depth") || msg.contains("nest"), "{msg}");
    let maps = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: deep\nspec: {}{}\n",
        "{a: ".repeat(depth),
        "}".repeat(depth)
    );
    let run = lint_with("deep.yaml", maps.as_bytes());
    parse_error_message(&run, "deep.yaml");
}

/// About 100 MB in one file: 40,000 Deployments that all set requests, and one at the end
/// that does not. A few seconds with the project's dev profile (opt-level 1, dependencies
/// at 2).
#[test]
fn hundred_megabyte_file() {
    let with_requests = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: big
  namespace: team
  labels: {app: big, tier: backend, owner: platform}
spec:
  replicas: 3
  template:
    metadata:
      labels: {app: big}
    spec:
      containers:
      - name: app
        image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/app:2024.11.3
        env:
        - {name: A, value: \"0123456789012345678901234567890123456789\"}
        - {name: B, value: \"0123456789012345678901234567890123456789\"}
        - {name: C, value: \"0123456789012345678901234567890123456789\"}
        - {name: D, value: \"0123456789012345678901234567890123456789\"}
        resources:
          requests: {cpu: 500m, memory: 1Gi}
          limits: {memory: 1Gi}
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
# padding comment padding comment padding comment padding comment padding comment
---
";
    let n = 100_000_000 / with_requests.len() + 1;
    let mut text = with_requests.repeat(n);
    text.push_str(&GOOD.replace("name: good", "name: last"));
    assert!(text.len() >= 100_000_000);
    let run = lint_with("big.yaml", text.as_bytes());
    assert_eq!(run.of("missing-resource-requests", "big.yaml").len(), 1);
    assert_eq!(run.json["summary"]["documents"], n + 2);
}

#[test]
fn hundred_thousand_tiny_documents() {
    let mut text = String::with_capacity(3_000_000);
    for i in 0..100_000 {
        text.push_str(&format!("---\nk: {i}\n"));
    }
    let run = lint_with("tiny.yaml", text.as_bytes());
    // 100,000 documents without apiVersion/kind, plus the good file's one.
    assert_eq!(run.json["summary"]["documents"], 100_001);
}

#[test]
fn invalid_utf8_names_the_offset() {
    let run = lint_with(
        "latin1.yaml",
        b"apiVersion: v1\nkind: ConfigMap\ndata:\n  k: caf\xe9\n",
    );
    let msg = parse_error_message(&run, "latin1.yaml");
    assert!(msg.contains("not valid UTF-8"), "{msg}");
    assert_eq!(run.of("parse-error", "latin1.yaml")[0]["offset"], 45);
}

#[test]
fn binary_file_is_skipped() {
    let bytes: Vec<u8> = (0..4096u32).map(|i| (i * 7 % 256) as u8).collect();
    let run = lint_with("blob.yaml", &bytes);
    assert_eq!(run.json["summary"]["skipped"], 1);
    assert!(run.of("parse-error", "blob.yaml").is_empty());
}

#[test]
fn empty_and_marker_only_files_are_quiet() {
    let run = lint_with("empty.yaml", b"");
    assert!(run.of("parse-error", "empty.yaml").is_empty());
    let run = lint_with("dashes.yaml", b"---\n---\n---\n");
    assert!(run.of("parse-error", "dashes.yaml").is_empty());
    let run = lint_with("dash.yaml", b"---");
    assert!(run.of("parse-error", "dash.yaml").is_empty());
}

#[cfg(unix)]
#[test]
fn symlink_loops() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
    std::os::unix::fs::symlink(".", dir.path().join("loop")).expect("symlink");
    std::os::unix::fs::symlink("self.yaml", dir.path().join("self.yaml")).expect("symlink");
    // Symlinks are not followed by default: nothing to report about them.
    let run = run_in(dir.path(), &["."], 60);
    run.assert_good_reported();
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Followed, the directory loop is an I/O error naming the path; the findings stay.
    let run = run_in(dir.path(), &["--follow", "."], 60);
    run.assert_good_reported();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("loop"), "{}", run.stderr);
    // A self-referencing link named on the command line: an error that says why.
    let run = run_in(dir.path(), &["good.yaml", "self.yaml"], 60);
    run.assert_good_reported();
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("self.yaml"), "{}", run.stderr);
    assert!(
        !run.stderr.contains("no such file"),
        "a loop is not a missing file: {}",
        run.stderr
    );
}

#[cfg(unix)]
#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
    let secret = dir.path().join("secret.yaml");
    std::fs::write(&secret, "apiVersion: v1\nkind: Namespace\n").expect("write");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let run = run_in(dir.path(), &["."], 60);
    run.assert_good_reported();
    if std::fs::read(&secret).is_ok() {
        // Root (as in CI) reads through mode 000: there is no error to see. The run above
        // still proves the tree is linted; the assertion below needs an ordinary user.
        eprintln!("unreadable_file: running as root, mode 000 does not stop reading; skipped");
        return;
    }
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("secret.yaml"), "{}", run.stderr);
    assert!(
        run.stderr.to_lowercase().contains("permission denied"),
        "{}",
        run.stderr
    );
}

#[test]
fn directory_where_a_file_is_expected() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("good.yaml"), GOOD).expect("write");
    std::fs::create_dir(dir.path().join("looks-like-a-file.yaml")).expect("mkdir");
    std::fs::write(
        dir.path().join("looks-like-a-file.yaml/inner.yaml"),
        GOOD.replace("good", "inner"),
    )
    .expect("write");
    // Named on the command line and met while walking, a directory is walked.
    let run = run_in(dir.path(), &["good.yaml", "looks-like-a-file.yaml"], 60);
    run.assert_good_reported();
    assert_eq!(run.of("missing-resource-requests", "inner.yaml").len(), 1);
    // As --context, which expects cluster files, a directory is walked too.
    let run = run_in(
        dir.path(),
        &["good.yaml", "--context", "looks-like-a-file.yaml"],
        60,
    );
    run.assert_good_reported();
    assert_eq!(run.code, 0, "{}", run.stderr);
}

#[test]
fn tab_indentation_is_a_parse_error() {
    let run = lint_with(
        "tabs.yaml",
        b"apiVersion: v1\nkind: Pod\nmetadata:\n\tname: tabs\n",
    );
    let errs = run.of("parse-error", "tabs.yaml");
    assert_eq!(errs.len(), 1, "{:#}", run.json);
    assert_eq!(errs[0]["line"], 4);
}

#[test]
fn bom_and_crlf_keep_exact_positions() {
    let crlf = GOOD
        .replace("name: good", "name: odd")
        .replace('\n', "\r\n");
    let mut bytes = "\u{feff}".as_bytes().to_vec();
    bytes.extend_from_slice(crlf.as_bytes());
    let run = lint_with("odd.yaml", &bytes);
    let f = run.of("missing-resource-requests", "odd.yaml");
    assert_eq!(f.len(), 1, "{:#}", run.json);
    let text = String::from_utf8(bytes).expect("utf8");
    let offset = f[0]["offset"].as_u64().expect("offset") as usize;
    let len = f[0]["length"].as_u64().expect("length") as usize;
    // The span covers text the rule names, on the line it reports.
    let line = text[..offset].matches('\n').count() + 1;
    assert_eq!(f[0]["line"], line);
    assert!(text.is_char_boundary(offset) && text.is_char_boundary(offset + len));
    assert!(!text[offset..offset + len].contains('\r'));
}

#[test]
fn duplicate_keys_are_a_parse_error() {
    let run = lint_with(
        "dup.yaml",
        b"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  name: b\n",
    );
    let msg = parse_error_message(&run, "dup.yaml");
    assert!(msg.contains("duplicate"), "{msg}");
}

#[test]
fn yaml_11_booleans_and_octal() {
    // `yes`/`on` as label values are text; `0644` is octal as Kubernetes reads it.
    let doc = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: legacy
  namespace: team
  labels: {enabled: yes, mode: on, perms: 0644}
spec:
  replicas: 010
  template:
    spec:
      hostNetwork: yes
      containers:
      - name: app
        image: nginx
        resources:
          requests: {cpu: 1, memory: 0644}
";
    let run = lint_with("legacy.yaml", doc.as_bytes());
    // No crash, and whatever is said about the file has a span inside it.
    for d in run.diagnostics() {
        if d["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("legacy.yaml"))
        {
            assert!(d["offset"].as_u64().expect("offset") as usize <= doc.len());
        }
    }
}

#[test]
fn very_long_lines() {
    let long = "x".repeat(10_000_000);
    let doc = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long\n  annotations:\n    a: {long}\ndata:\n  k: \"{long}\"\n"
    );
    let run = lint_with("long.yaml", doc.as_bytes());
    assert!(run.of("parse-error", "long.yaml").is_empty());
    // A finding on a very long line renders in the human report without trouble.
    let dir = tempfile::tempdir().expect("tempdir");
    let pod = format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {{a: {long}}}\nspec: {{containers: [{{name: c, image: {long}}}]}}\n"
    );
    std::fs::write(dir.path().join("pod.yaml"), pod).expect("write");
    let out = Command::cargo_bin("karplint")
        .expect("binary")
        .current_dir(dir.path())
        .args(["--no-color", "."])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("missing-resource-requests"));
}

/// Unmodelled kinds are only read as far as their header, and the rest is checked by the
/// parser alone: errors after the header are still reported, where serde-saphyr puts them.
#[test]
fn errors_after_the_header_of_unmodelled_kinds() {
    let header = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n";
    let dup = format!("{header}  a: \"1\"\n  b: \"2\"\n  a: \"3\"\n");
    let run = lint_with("dup.yaml", dup.as_bytes());
    assert!(parse_error_message(&run, "dup.yaml").contains("duplicate"));
    assert_eq!(run.of("parse-error", "dup.yaml")[0]["line"], 8);

    let broken = format!("{header}  a: [1, 2\n  b: c\n");
    let run = lint_with("broken.yaml", broken.as_bytes());
    parse_error_message(&run, "broken.yaml");
    assert_eq!(
        run.json["summary"]["objects"], 1,
        "only the good file's object"
    );

    // A null top-level key after the header: the document visitor cannot read it as a name.
    let null_key = format!("{header}  a: \"1\"\n~: 1\n");
    let run = lint_with("null-key.yaml", null_key.as_bytes());
    parse_error_message(&run, "null-key.yaml");
    assert_eq!(run.of("parse-error", "null-key.yaml")[0]["line"], 7);

    let fine = format!("{header}  a: \"1\"\n  b: [1, 2]\n");
    let run = lint_with("fine.yaml", fine.as_bytes());
    assert!(run.of("parse-error", "fine.yaml").is_empty());
    assert_eq!(run.json["summary"]["objects"], 2);
}
