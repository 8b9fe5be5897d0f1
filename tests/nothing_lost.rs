//! No finding is lost in silence, on the built binary: Helm template syntax skips
//! only the documents it breaks, suppression comments are read from real YAML comments,
//! YAML directives and odd line breaks keep every document and exact positions, and a
//! run-level finding does not depend on which file sorts first.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A Deployment in namespace `team` whose container has no requests.
fn deployment(name: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: team
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
"
    )
}

const NODEPOOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [on-demand]
      taints:
      - key: dedicated
        value: gpu
        effect: NoSchedule
";

struct Run {
    json: Value,
    stdout: String,
}

impl Run {
    fn diagnostics(&self) -> &[Value] {
        self.json["diagnostics"].as_array().map_or(&[], |v| v)
    }
    /// Diagnostics of `rule` in files whose name ends with `file`.
    fn of(&self, rule: &str, file: &str) -> Vec<&Value> {
        self.diagnostics()
            .iter()
            .filter(|d| d["rule"] == rule && d["file"].as_str().is_some_and(|f| f.ends_with(file)))
            .collect()
    }
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    let out = Command::cargo_bin("karplint")
        .expect("binary")
        .current_dir(dir)
        .args(["--fail-on", "never"])
        .args(args)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = if args.contains(&"json") {
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stdout}"))
    } else {
        Value::Null
    };
    Run { json, stdout }
}

/// A tree of `files`, linted as JSON.
fn lint(files: &[(&str, &[u8])]) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, bytes).expect("write");
    }
    run_in(dir.path(), &["--format", "json", "."])
}

/// 1-based line of a byte offset, counting YAML's line breaks (CRLF, CR, LF).
fn yaml_line(text: &str, offset: usize) -> usize {
    let b = &text.as_bytes()[..offset];
    let lf = b.iter().filter(|&&c| c == b'\n').count();
    let lone_cr = (0..b.len())
        .filter(|&i| b[i] == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n'))
        .count();
    lf + lone_cr + 1
}

// ---- `{{` skips only the documents it breaks ----------------------------------------------------

const PROMETHEUS_RULES: &str = "apiVersion: v1
kind: ConfigMap
metadata:
  name: alerts
  namespace: team
data:
  rules.yaml: \"summary: instance {{ $labels.instance }} is down\"
";

#[test]
fn template_braces_in_a_string_do_not_hide_other_documents() {
    // A valid ConfigMap quoting Prometheus' `{{ }}`, a broken document, and a workload.
    let file = format!(
        "{PROMETHEUS_RULES}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n\tbad: tab\n---\n{}",
        deployment("web")
    );
    let run = lint(&[("app.yaml", file.as_bytes())]);
    assert_eq!(run.of("parse-error", "app.yaml").len(), 1, "{:#}", run.json);
    assert_eq!(
        run.of("missing-resource-requests", "app.yaml").len(),
        1,
        "{:#}",
        run.json
    );
    assert_eq!(run.json["summary"]["skipped"], 0, "{:#}", run.json);
}

#[test]
fn standard_input_with_template_braces_is_linted() {
    // `helm template … | karplint -` output that quotes Prometheus' `{{ }}`, beside a
    // broken document: the stream is linted, not skipped whole.
    let stream = format!(
        "{PROMETHEUS_RULES}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n\tbad: tab\n---\n{}",
        deployment("web")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::cargo_bin("karplint")
        .expect("binary")
        .current_dir(dir.path())
        .args(["--no-config", "--fail-on", "never", "--format", "json", "-"])
        .write_stdin(stream)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let json: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rules: Vec<&str> = (json["diagnostics"].as_array().expect("diagnostics").iter())
        .filter_map(|d| d["rule"].as_str())
        .collect();
    assert!(rules.contains(&"parse-error"), "{json:#}");
    assert!(rules.contains(&"missing-resource-requests"), "{json:#}");
    assert_eq!(json["summary"]["skipped"], 0, "{json:#}");
}

#[test]
fn a_context_file_with_template_braces_keeps_its_nodepools() {
    // The NodePool taints its nodes: a workload without a toleration fits no NodePool.
    let context = format!(
        "{NODEPOOL}---\n{PROMETHEUS_RULES}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n\tbad: tab\n"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("cluster")).expect("mkdir");
    std::fs::write(dir.path().join("cluster/pools.yaml"), context).expect("write");
    std::fs::write(dir.path().join("app.yaml"), deployment("web")).expect("write");
    let run = run_in(
        dir.path(),
        &["--format", "json", "app.yaml", "--context", "cluster"],
    );
    assert!(
        !run.of("untolerated-taint", "app.yaml").is_empty(),
        "the context file's NodePool must be read: {:#}",
        run.json
    );
}

#[test]
fn an_unrendered_template_document_is_skipped_alone_and_said_so() {
    let file = format!(
        "{}---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    {{{{- include \"labels\" . | nindent 4 }}}}\nspec:\n  containers: {{{{ .Values.containers }}}}\n",
        deployment("web")
    );
    let run = lint(&[("mixed.yaml", file.as_bytes())]);
    assert!(
        run.of("parse-error", "mixed.yaml").is_empty(),
        "{:#}",
        run.json
    );
    assert_eq!(
        run.of("missing-resource-requests", "mixed.yaml").len(),
        1,
        "{:#}",
        run.json
    );
    assert_eq!(
        run.json["summary"]["skipped_documents"], 1,
        "{:#}",
        run.json
    );
    // The human report says which document was skipped, and why.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("mixed.yaml"), &file).expect("write");
    let human = run_in(dir.path(), &["--no-color", "."]);
    assert!(
        human
            .stdout
            .contains("skipped the document at mixed.yaml:12: unrendered Helm template"),
        "{}",
        human.stdout
    );
}

// ---- directives, line breaks, BOM ---------------------------------------------------------------

#[test]
fn yaml_directive_is_no_parse_error() {
    let file = format!("%YAML 1.2\n---\n{}", deployment("web"));
    let run = lint(&[("d.yaml", file.as_bytes())]);
    assert!(run.of("parse-error", "d.yaml").is_empty(), "{:#}", run.json);
    assert_eq!(run.of("missing-resource-requests", "d.yaml").len(), 1);
}

#[test]
fn tag_directive_keeps_its_document() {
    let file = format!(
        "%TAG !k! tag:example.com,2024:\n---\n{}",
        deployment("web").replace("image: nginx", "image: !k!image nginx")
    );
    let run = lint(&[("t.yaml", file.as_bytes())]);
    assert!(run.of("parse-error", "t.yaml").is_empty(), "{:#}", run.json);
    assert_eq!(
        run.of("missing-resource-requests", "t.yaml").len(),
        1,
        "{:#}",
        run.json
    );
}

#[test]
fn cr_only_line_breaks_keep_every_document_and_line() {
    let file = format!("{}---\n{}", deployment("a"), deployment("b")).replace('\n', "\r");
    let run = lint(&[("cr.yaml", file.as_bytes())]);
    assert!(
        run.of("parse-error", "cr.yaml").is_empty(),
        "{:#}",
        run.json
    );
    let found = run.of("missing-resource-requests", "cr.yaml");
    assert_eq!(found.len(), 2, "{:#}", run.json);
    for f in found {
        let offset = f["offset"].as_u64().expect("offset") as usize;
        assert_eq!(f["line"], yaml_line(&file, offset), "{f:#}");
    }
}

#[test]
fn a_lone_cr_counts_as_one_line_break() {
    // One lone CR in an LF file: YAML (and editors) see a line break there.
    let file = format!("# generated\r{}", deployment("web"));
    let run = lint(&[("lone.yaml", file.as_bytes())]);
    let found = run.of("missing-resource-requests", "lone.yaml");
    assert_eq!(found.len(), 1, "{:#}", run.json);
    let offset = found[0]["offset"].as_u64().expect("offset") as usize;
    assert_eq!(found[0]["line"], yaml_line(&file, offset), "{:#}", found[0]);
}

#[test]
fn a_bom_is_not_a_column() {
    let file = "\u{feff}{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: team}, spec: {template: {spec: {containers: [{name: app, image: nginx}]}}}}\n";
    let run = lint(&[("bom.yaml", file.as_bytes())]);
    let found = run.of("missing-resource-requests", "bom.yaml");
    assert_eq!(found.len(), 1, "{:#}", run.json);
    let offset = found[0]["offset"].as_u64().expect("offset") as usize;
    assert_eq!(found[0]["line"], 1);
    // Characters before the span, the BOM not counted.
    assert_eq!(
        found[0]["column"],
        file[3..offset].chars().count() + 1,
        "{:#}",
        found[0]
    );
}

// ---- suppressions are read from real comments only ----------------------------------------------

#[test]
fn suppression_markers_inside_scalars_suppress_nothing() {
    let block = "apiVersion: v1
kind: ConfigMap
metadata:
  name: docs
  namespace: team
data:
  README: |
    # karplint-ignore-file
    lines of a script that mention the marker
  quoted: \"x # karplint-ignore-file\"
  single: 'y # karplint-ignore-file: all'
  multi: \"first line
    # karplint-ignore-file
    last line\"
---
";
    let file = format!("{block}{}", deployment("web"));
    let run = lint(&[("app.yaml", file.as_bytes())]);
    assert_eq!(
        run.of("missing-resource-requests", "app.yaml").len(),
        1,
        "{:#}",
        run.json
    );
    assert_eq!(run.json["summary"]["suppressed"], 0, "{:#}", run.json);
    // A real comment still suppresses.
    let file = format!(
        "{block}# karplint-ignore-file: missing-resource-requests\n{}",
        deployment("web")
    );
    let run = lint(&[("app.yaml", file.as_bytes())]);
    assert!(
        run.of("missing-resource-requests", "app.yaml").is_empty(),
        "{:#}",
        run.json
    );
}

// ---- run-level findings do not depend on file order ---------------------------------------------

#[test]
fn a_file_suppression_hides_a_namespace_finding_only_in_its_file() {
    let ignore = "# karplint-ignore-file: missing-limit-range\n";
    for suppressed in ["a.yaml", "b.yaml"] {
        let text = |name: &str| {
            let d = deployment(name.trim_end_matches(".yaml"));
            if name == suppressed {
                format!("{ignore}{d}")
            } else {
                d
            }
        };
        let (a, b) = (text("a.yaml"), text("b.yaml"));
        let run = lint(&[("a.yaml", a.as_bytes()), ("b.yaml", b.as_bytes())]);
        let found = run.of("missing-limit-range", ".yaml");
        assert_eq!(found.len(), 1, "suppressed in {suppressed}: {:#}", run.json);
        assert_ne!(found[0]["file"], suppressed, "{:#}", run.json);
        assert!(
            run.of("unused-suppression", ".yaml").is_empty(),
            "{:#}",
            run.json
        );
    }
    // Suppressed in every file it concerns, it is gone.
    let (a, b) = (
        format!("{ignore}{}", deployment("a")),
        format!("{ignore}{}", deployment("b")),
    );
    let run = lint(&[("a.yaml", a.as_bytes()), ("b.yaml", b.as_bytes())]);
    assert!(
        run.of("missing-limit-range", ".yaml").is_empty(),
        "{:#}",
        run.json
    );
    assert!(
        run.of("unused-suppression", ".yaml").is_empty(),
        "{:#}",
        run.json
    );
}
