//! The built binary: exit codes, stdin, JSON shape, subcommands, skipped Helm templates,
//! parse errors with spans, determinism across thread counts.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn karplint() -> Command {
    let mut c = Command::cargo_bin("karplint").expect("binary");
    c.env_remove("NO_COLOR")
        .env_remove("KARPLINT_TIMINGS")
        .env("COLUMNS", "100");
    c
}

fn json(args: &[&str]) -> (Value, i32) {
    let out = karplint()
        .args(args)
        .arg("--format")
        .arg("json")
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    (v, out.status.code().unwrap_or(-1))
}

#[test]
fn exit_codes() {
    karplint()
        .arg("fixtures/in-tree-storage-plugin/quiet.yaml")
        .assert()
        .code(0);
    karplint()
        .arg("fixtures/in-tree-storage-plugin/fire.yaml")
        .assert()
        .code(1);
    karplint()
        .args([
            "--fail-on",
            "never",
            "fixtures/in-tree-storage-plugin/fire.yaml",
        ])
        .assert()
        .code(0);
    // Only warnings: clean at the default level, failing at --fail-on warning.
    karplint()
        .arg("fixtures/missing-resource-requests/fire.yaml")
        .assert()
        .code(0);
    karplint()
        .args([
            "--fail-on",
            "warning",
            "fixtures/missing-resource-requests/fire.yaml",
        ])
        .assert()
        .code(1);
    karplint()
        .arg("does/not/exist.yaml")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "does/not/exist.yaml: no such file or directory",
        ));
    karplint().arg("--format=xml").assert().code(2);
}

#[test]
fn stdin_is_linted() {
    let yaml =
        std::fs::read_to_string("fixtures/in-tree-storage-plugin/fire.yaml").expect("fixture");
    let out = karplint()
        .args(["--format", "json", "-"])
        .write_stdin(yaml)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let d = &v["diagnostics"][0];
    assert_eq!(d["file"], "<stdin>");
    assert_eq!(d["rule"], "in-tree-storage-plugin");
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(9), Some(3))
    );
}

#[test]
fn json_shape_is_the_contract() {
    let (v, code) = json(&["fixtures/in-tree-storage-plugin/fire.yaml"]);
    assert_eq!(code, 1);
    assert_eq!(v["version"], 1);
    let d = &v["diagnostics"][0];
    let keys: Vec<&str> = d
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "rule",
        "severity",
        "message",
        "help",
        "file",
        "line",
        "column",
        "end_line",
        "end_column",
        "offset",
        "length",
        "object",
        "related",
    ] {
        assert!(keys.contains(&k), "diagnostic lacks {k}: {keys:?}");
    }
    assert_eq!(d["object"]["apiVersion"], "v1");
    assert_eq!(d["object"]["kind"], "PersistentVolume");
    assert_eq!(d["object"]["namespace"], Value::Null);
    assert_eq!(d["object"]["name"], "data");
    assert_eq!(d["severity"], "error");
    for k in [
        "files",
        "documents",
        "objects",
        "skipped",
        "errors",
        "warnings",
        "infos",
    ] {
        assert!(v["summary"][k].is_u64(), "summary lacks {k}");
    }
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["summary"]["warnings"], 1);
}

#[test]
fn spans_are_exact_with_crlf_and_non_ascii() {
    let path = "fixtures/missing-resource-requests/fire-crlf-unicode.yaml";
    let (v, _) = json(&[path]);
    let text = std::fs::read(path).expect("fixture");
    let d = v["diagnostics"]
        .as_array()
        .expect("list")
        .iter()
        .find(|d| d["rule"] == "missing-resource-requests")
        .expect("finding");
    let (off, len) = (
        d["offset"].as_u64().unwrap_or(0) as usize,
        d["length"].as_u64().unwrap_or(0) as usize,
    );
    assert_eq!(
        std::str::from_utf8(&text[off..off + len]).expect("utf8"),
        "éclair"
    );
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(10), Some(17))
    );
    assert_eq!(
        (d["end_line"].as_u64(), d["end_column"].as_u64()),
        (Some(10), Some(23))
    );
    // The caret line sits exactly under the name in the human output.
    let out = karplint()
        .args(["--no-color", path])
        .output()
        .expect("runs");
    let s = String::from_utf8(out.stdout).expect("utf8");
    let lines: Vec<&str> = s.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.contains("- name: éclair"))
        .expect("snippet line");
    let col = |l: &str, pat: &str| l.find(pat).map(|b| l[..b].chars().count());
    assert_eq!(col(lines[i], "éclair"), col(lines[i + 1], "───"));
}

#[test]
fn parse_errors_have_spans_and_other_documents_still_lint() {
    let (v, code) = json(&["fixtures/parse-error/fire-syntax.yaml"]);
    assert_eq!(code, 1);
    let diags = v["diagnostics"].as_array().expect("list");
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0]["rule"], "parse-error");
    assert_eq!(
        (diags[0]["line"].as_u64(), diags[0]["column"].as_u64()),
        (Some(13), Some(7))
    );
    // Three documents, two of them objects.
    assert_eq!(v["summary"]["documents"], 3);
    assert_eq!(v["summary"]["objects"], 2);
}

#[test]
fn helm_templates_are_skipped_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let chart = dir.path().join("chart");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    )
    .expect("write");
    std::fs::write(
        chart.join("templates/deploy.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n",
    )
    .expect("write");
    // Outside a chart, a file that fails to parse and holds `{{` is a template too.
    std::fs::write(
        dir.path().join("loose.yaml"),
        "kind: Pod\nmetadata:\n  {{- include \"labels\" . }}\n",
    )
    .expect("write");
    let out = karplint()
        .arg("--no-color")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("2 file(s) skipped"), "{s}");
    assert!(s.contains("helm template"), "{s}");
    assert!(!s.contains("parse-error"), "{s}");
}

#[test]
fn rules_and_explain() {
    let out = karplint().arg("rules").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    for r in karplint::rules::registry() {
        assert!(s.contains(r.meta().id), "rules table lacks {}", r.meta().id);
    }
    assert!(s.contains("parse-error"));
    karplint()
        .args(["explain", "in-tree-storage-plugin"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("## Why it matters"));
    karplint()
        .args(["explain", "no-such-rule"])
        .assert()
        .code(2);
}

#[test]
fn output_is_identical_at_any_thread_count() {
    for format in ["json", "human"] {
        let run = |j: &str| {
            karplint()
                .args(["--no-color", "-j", j, "--format", format, "fixtures"])
                .output()
                .expect("runs")
                .stdout
        };
        assert_eq!(run("1"), run("2"), "format {format}");
    }
}

#[test]
fn binary_and_non_utf8_files_are_reported_not_fatal() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a-binary.yaml"), b"\x00\x01\x02ELF").expect("write");
    std::fs::write(
        dir.path().join("b-latin1.yaml"),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\xe9\n",
    )
    .expect("write");
    std::fs::copy(
        "fixtures/in-tree-storage-plugin/fire.yaml",
        dir.path().join("c-good.yaml"),
    )
    .expect("copy");
    let (v, code) = json(&[dir.path().to_str().expect("utf8 path")]);
    assert_eq!(code, 1);
    let rules: Vec<&str> = v["diagnostics"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|d| d["rule"].as_str())
        .collect();
    assert!(rules.contains(&"parse-error"), "{rules:?}");
    assert!(rules.contains(&"in-tree-storage-plugin"), "{rules:?}");
    assert_eq!(v["summary"]["skipped"], 1);
}

/// A tree of many manifests never makes karplint exit 2 or panic, and every finding has a
/// line: the corpus of real manifests named by `KARPLINT_CORPUS` when set (it must be a
/// directory), otherwise every fixture of the repository linted as one tree.
#[test]
fn a_tree_of_manifests_lints_without_crashing() {
    let corpus = std::env::var_os("KARPLINT_CORPUS").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        std::path::PathBuf::from,
    );
    assert!(corpus.is_dir(), "{}: not a directory", corpus.display());
    let (v, code) = json(&[corpus.to_str().expect("utf8")]);
    assert!(code == 0 || code == 1, "exit code {code}");
    assert!(
        v["summary"]["files"].as_u64().unwrap_or(0) > 1,
        "{}",
        v["summary"]
    );
    for d in v["diagnostics"].as_array().expect("list") {
        assert!(d["line"].as_u64().unwrap_or(0) >= 1, "{d}");
    }
}

#[test]
fn plan_shows_where_each_workload_lands() {
    let out = karplint()
        .args([
            "plan",
            "fixtures/untolerated-taint/quiet-tainted-and-plain.yaml",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("Deployment plain-pool"), "{s}");
    assert!(s.contains("plain"), "{s}");
    let out = karplint()
        .args([
            "plan",
            "--format",
            "json",
            "fixtures/untolerated-taint/fire-no-toleration.yaml",
        ])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1, "{v:#}");
    let v = &v["workloads"];
    assert_eq!(v[0]["outcome"], "pending");
    assert!(
        v[0]["reason"]
            .as_str()
            .unwrap_or("")
            .contains("did not tolerate taint (taint=dedicated=ml:NoSchedule)")
    );
    // Every NodePool's refusal, in the order Karpenter tries them, with its class.
    let failures = v[0]["failures"].as_array().expect("failures");
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0]["kind"], "taint");
    assert!(
        failures[0]["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("did not tolerate taint")
    );
}

/// `plan` places every replica as Karpenter places a batch: two pods that bind one host port
/// never share a node, and the first NodeClaim spends the NodePool's whole `limits.cpu: 2`
/// (it may launch a 2-vCPU type), so the second replica stays pending.
#[test]
fn plan_lists_each_replica_of_the_batch() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("w.yaml"),
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: np\nspec:\n  limits: {cpu: \"2\"}\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nc}\n      requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: [\"3\"]}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 2\n  template:\n    spec:\n      containers:\n        - name: c\n          image: x\n          ports: [{containerPort: 80, hostPort: 80}]\n          resources: {requests: {cpu: 100m}}\n",
    )
    .expect("write");
    let out = karplint()
        .args(["plan", "--format", "json"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let v = &v["workloads"];
    assert_eq!(v[0]["outcome"], "schedules", "{v:#}");
    let pods = v[0]["pods"].as_array().expect("pods");
    assert_eq!(pods.len(), 2, "{v:#}");
    assert_eq!(pods[0]["outcome"], "schedules");
    assert_eq!(pods[0]["nodepool"], "np");
    assert_eq!(pods[1]["outcome"], "pending");
    assert_eq!(pods[1]["kind"], "limits");
    // The table counts the replica the batch leaves Pending, and `plan` fails on it.
    assert_eq!(out.status.code(), Some(1));
    let out = karplint()
        .args(["plan", "--no-color"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("  2 (1 pending)  "), "{table}");
    assert!(
        table.contains("; 1 replica(s) of scheduling workloads stay Pending"),
        "{table}"
    );
    assert_eq!(out.status.code(), Some(1), "{table}");
    let out = karplint()
        .args(["plan", "--fail-on", "never"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
}

/// A workload whose pod fits the NodePool but none of whose replicas the batch places (the
/// pool's `limits.cpu: 2` is spent on the first workload's NodeClaim) reads `pending`, with
/// the words of its replicas' failure, not the `schedules` of its pod template.
#[test]
fn plan_row_is_pending_when_the_batch_places_no_replica() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = |name: &str| {
        format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  replicas: 1\n  template:\n    spec:\n      containers:\n        - name: c\n          image: x\n          resources: {{requests: {{cpu: 1500m}}}}\n"
        )
    };
    std::fs::write(
        dir.path().join("w.yaml"),
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: np\nspec:\n  limits: {cpu: \"2\"}\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nc}\n      requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: [\"3\"]}]\n".to_string()
            + &app("first")
            + &app("second"),
    )
    .expect("write");
    let out = karplint()
        .args(["plan", "--format", "json"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = v["workloads"].as_array().expect("workloads");
    let row = |name: &str| {
        (rows.iter())
            .find(|r| r["object"]["name"] == name)
            .unwrap_or_else(|| panic!("no row {name}: {v:#}"))
    };
    assert_eq!(row("first")["outcome"], "schedules", "{v:#}");
    assert_eq!(row("first")["nodepool"], "np");
    let second = row("second");
    assert_eq!(second["outcome"], "pending", "{second:#}");
    assert_eq!(second["nodepool"], Value::Null);
    assert_eq!(second["pods"][0]["kind"], "limits");
    assert_eq!(
        second["reason"],
        "NodePool \"np\": all available instance types exceed limits for nodepool (NodePool=np)"
    );
    assert_eq!(second["failures"][0]["kind"], "limits");
    assert_eq!(second["failures"][0]["nodepool"], "np");
    assert_eq!(out.status.code(), Some(1));
}

/// The hidden `debug instance-types` prints what the simulator assumes of each NodePool's
/// types (for the oracle): every catalog type, offered in every zone of `cluster.zones`,
/// with capacity − overhead = the allocatable Karpenter's docs list.
#[test]
fn debug_instance_types_exports_capacity_and_overhead() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("np.yaml"),
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: np\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: nc}\n      requirements: []\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: nc\nspec:\n  amiSelectorTerms: [{alias: al2023@latest}]\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "cluster:\n  zones: [us-east-1a, us-east-1b]\n",
    )
    .expect("write");
    let out = karplint()
        .current_dir(dir.path())
        .args(["debug", "instance-types", "."])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["zones"], serde_json::json!(["us-east-1a", "us-east-1b"]));
    let types = v["nodePools"]["np"].as_array().expect("np");
    let a1 = types
        .iter()
        .find(|t| t["name"] == "a1.medium")
        .expect("a1.medium");
    // karpenter-model §6.1: a1.medium ⇒ memory 1392Mi allocatable = 1835Mi − 343Mi − 100Mi.
    assert_eq!(a1["capacity"]["memory"], "1835Mi");
    assert_eq!(a1["overhead"]["kubeReserved"]["memory"], "343Mi");
    assert_eq!(a1["overhead"]["evictionThreshold"]["memory"], "100Mi");
    assert_eq!(a1["offerings"].as_array().map(Vec::len), Some(4));
    assert!(
        a1["requirements"]
            .as_array()
            .expect("requirements")
            .iter()
            .any(|r| r["key"] == "karpenter.k8s.aws/instance-gpu-count"
                && r["operator"] == "DoesNotExist")
    );
}

/// The `plan` of one fixture, as JSON rows.
fn plan_json(path: &str) -> Value {
    let out = karplint()
        .args(["plan", "--format", "json", path])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["version"], 1, "{v:#}");
    v["workloads"].clone()
}

#[test]
fn plan_reads_pod_level_resources() {
    // Pod-level requests (8 CPUs) replace the containers' 2: no 4-vCPU type fits.
    let v = plan_json("fixtures/no-instance-type-fits/fire-pod-level-resources.yaml");
    assert_eq!(v[0]["outcome"], "pending", "{v}");
    assert_eq!(v[0]["cpu"], "8", "{v}");
}

#[test]
fn plan_reads_ephemeral_storage_from_the_node_class() {
    // RAID0 over m6id's NVMe instance store holds 200Gi; the smallest that does is 2xlarge.
    let v = plan_json("fixtures/no-instance-type-fits/quiet-raid0-instance-store.yaml");
    assert_eq!(v[0]["outcome"], "schedules", "{v}");
    assert_eq!(v[0]["nodepool"], "nvme", "{v}");
    assert_eq!(v[0]["smallest_type"], "m6id.2xlarge", "{v}");
    // The rootVolume mapping (200Gi) wins over /dev/xvda (20Gi).
    let v = plan_json("fixtures/no-instance-type-fits/quiet-root-volume.yaml");
    assert_eq!(v[0]["outcome"], "schedules", "{v}");
    // Bottlerocket's /dev/xvda is its OS volume: the 20Gi data volume cannot hold 50Gi.
    let v = plan_json("fixtures/no-instance-type-fits/fire-bottlerocket-os-volume.yaml");
    assert_eq!(v[0]["outcome"], "pending", "{v}");
}

#[test]
fn instance_types_file_replaces_the_catalog() {
    // Only m5.large, g4dn.xlarge and t4g.small exist: a 6-CPU pod fits none.
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("w.yaml");
    std::fs::write(
        &f,
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: any\nspec:\n  template:\n    spec:\n      requirements: []\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: six\nspec:\n  containers:\n    - name: c\n      image: x\n      resources:\n        requests: {cpu: \"6\", memory: 1Gi}\n",
    )
    .expect("write");
    karplint().arg(&f).assert().code(0);
    karplint()
        .arg(&f)
        .args([
            "--instance-types",
            "tests/fixtures/describe-instance-types.json",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("no-instance-type-fits"));
    karplint()
        .arg(&f)
        .args(["--instance-types", "does-not-exist.json"])
        .assert()
        .code(2);
}

/// A selector for a label only a managed node group carries: Karpenter cannot provision for
/// it (incompatible-requirements), unless the config says such a node group exists.
#[test]
fn static_node_groups_from_config_silence_pending_findings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("app.yaml");
    std::fs::copy(
        "fixtures/incompatible-requirements/fire-managed-node-group.yaml",
        &f,
    )
    .expect("copy");
    karplint()
        .arg("--no-config")
        .arg(&f)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("incompatible-requirements"));
    let cfg = dir.path().join("karplint.yaml");
    std::fs::write(
        &cfg,
        "cluster:\n  nodeGroups:\n    - name: app-nodes\n      instanceType: m5.large\n      count: 2\n      labels:\n        eks.amazonaws.com/nodegroup: app-nodes\n",
    )
    .expect("write");
    karplint()
        .arg("--config")
        .arg(&cfg)
        .arg(&f)
        .assert()
        .code(0);
}

#[test]
fn timings_go_to_stderr_and_leave_the_report_alone() {
    let args = ["--format", "json", "fixtures/showcase"];
    let plain = karplint().args(args).output().expect("runs");
    let timed = karplint()
        .env("KARPLINT_TIMINGS", "1")
        .args(args)
        .output()
        .expect("runs");
    assert_eq!(plain.stdout, timed.stdout);
    assert_eq!(plain.status.code(), timed.status.code());
    let stderr = String::from_utf8_lossy(&timed.stderr);
    for phase in [
        "discover files",
        "kustomize: 0 rendered, 0 from the cache, 0 not rendered (no named file feeds them)",
        "cluster phase: read + parse held documents",
        "cluster phase: index + simulator",
        "workload phase",
        "run phase",
    ] {
        assert!(
            stderr.contains(&format!("karplint: timings: {phase}: ")),
            "{phase} missing from {stderr}"
        );
    }
    assert!(!String::from_utf8_lossy(&plain.stderr).contains("timings"));
}

/// EKS's `ExtendedResourceToleration` admission plugin is assumed (a GPU pod tolerates a
/// `nvidia.com/gpu:NoSchedule` taint); `cluster.admission.extendedResourceToleration: false`
/// judges the pod as written, for clusters that do not run the plugin.
#[test]
fn extended_resource_toleration_is_on_by_default_and_can_be_turned_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = "fixtures/untolerated-taint/quiet-extended-resource-toleration.yaml";
    std::fs::copy(fixture, dir.path().join("gpu.yaml")).expect("copy");
    let rules = |v: &Value| -> Vec<String> {
        (v["diagnostics"].as_array().expect("diagnostics").iter())
            .map(|d| d["rule"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let run = || {
        let out = karplint()
            .current_dir(dir.path())
            .args(["--format", "json", "gpu.yaml"])
            .output()
            .expect("runs");
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    assert!(!rules(&run()).contains(&"untolerated-taint".to_string()));
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "cluster:\n  admission:\n    extendedResourceToleration: false\n",
    )
    .expect("write");
    assert!(rules(&run()).contains(&"untolerated-taint".to_string()));
}

/// The kustomize tree of `tests/data/kustomize` (a base, a `prod` overlay with a namespace,
/// a name prefix and two patches, and a NodePool beside them), linted as JSON with `args`
/// and `path` as `PATH`: `(rule, file, line)` of each finding, and the notes' text.
fn kustomize_run(args: &[&str], path: &str) -> (Vec<(String, String, u64)>, String, i32) {
    let out = karplint()
        .current_dir("tests/data/kustomize")
        .env("PATH", path)
        .args(["--format", "json", "--no-color", "."])
        .args(args)
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let findings = (v["diagnostics"].as_array().into_iter().flatten())
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or("").to_string();
            (s("rule"), s("file"), d["line"].as_u64().unwrap_or(0))
        })
        .collect();
    let human = karplint()
        .current_dir("tests/data/kustomize")
        .env("PATH", path)
        .args(["--no-color", "."])
        .args(args)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&human.stdout).into_owned();
    (findings, text, out.status.code().unwrap_or(-1))
}

/// With kustomize (or kubectl) on PATH the overlay is rendered: the patch's memory request
/// counts, the pod affinity target is found in the overlay's namespace, and the patch's
/// nodeSelector is reported at its line in the patch file.
#[test]
fn kustomize_renders_overlays_and_maps_findings_to_their_files() {
    if !render_tool_present() {
        return;
    }
    let path = std::env::var("PATH").unwrap_or_default();
    let (findings, text, code) = kustomize_run(&[], &path);
    assert_eq!(
        findings,
        [(
            "incompatible-requirements".to_string(),
            "overlays/prod/placement.yaml".to_string(),
            9
        )],
        "{text}"
    );
    assert_eq!(code, 1);
    assert!(
        text.contains("rendered 1 kustomization(s) with `"),
        "{text}"
    );
}

/// A value no file holds as rendered (here the nodeSelector a JSON 6902 patch inlined in
/// the overlay adds) is reported on the overlay's kustomization file, at its `patches:`,
/// with the object it was rendered from as a related place: never on the rendered text,
/// which GitHub annotations and code scanning cannot place. The base, linted only through
/// the overlay, is named in a note, and `kustomize.roots` renders it as a root of its own.
#[test]
fn a_finding_no_file_holds_as_rendered_stands_on_the_kustomization() {
    if !render_tool_present() {
        return;
    }
    let out = karplint()
        .current_dir("tests/data/kustomize-inline-patch")
        .args(["--format", "json", "."])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let d = &v["diagnostics"][0];
    assert_eq!(d["rule"], "incompatible-requirements", "{v:#}");
    assert_eq!(d["file"], "overlays/dev/kustomization.yaml", "{v:#}");
    assert_eq!(d["line"], 2, "{v:#}");
    let related: Vec<&str> = (d["related"].as_array().into_iter().flatten())
        .filter_map(|r| r["file"].as_str())
        .collect();
    assert!(related.contains(&"base/deploy.yaml"), "{related:?}");
    assert!(
        !v.to_string().contains("(kustomize build)"),
        "no place on the rendered text: {v:#}"
    );
    // The base is linted only through the overlay, and a note says how to lint it alone.
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("1 kustomization(s) are linted only as the kustomizations that include them render them: base;"),
        "{notes}"
    );
    // `kustomize.roots` renders it as a root of its own.
    let config = tempfile::tempdir().expect("tempdir");
    let base = std::fs::canonicalize("tests/data/kustomize-inline-patch/base").expect("base");
    let file = config.path().join(".karplint.yaml");
    std::fs::write(
        &file,
        format!("kustomize:\n  roots: [{:?}]\n", base.display().to_string()),
    )
    .expect("write");
    let out = karplint()
        .current_dir("tests/data/kustomize-inline-patch")
        .args(["--format", "json", "--config"])
        .arg(&file)
        .arg(".")
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let notes = v["notes"].to_string();
    assert!(notes.contains("rendered 2 kustomization(s)"), "{notes}");
    assert!(!notes.contains("linted only as"), "{notes}");
}

/// Without the tool the kustomizations are still read: patch files are not linted as
/// workloads, the overlay's namespace is applied, and a note names the tool to install.
#[test]
fn kustomize_without_the_tool_reads_the_kustomizations() {
    let empty = tempfile::tempdir().expect("tempdir");
    let path = empty.path().to_str().expect("utf-8 path");
    let (findings, text, _) = kustomize_run(&[], path);
    // The base's own gap stays (the patch is not merged); the patches' containers, which
    // have no image and no requests of their own, are not reported.
    assert!(
        findings
            .iter()
            .all(|(_, file, _)| file == "base/deployment.yaml"),
        "{findings:?}"
    );
    assert!(
        text.contains("namespace \"prod\" has no LimitRange"),
        "{text}"
    );
    assert!(text.contains("install kustomize"), "{text}");
    let (off, _, _) = kustomize_run(&["--kustomize", "off"], &path_with_tools());
    assert_eq!(off, findings);
    let (_, _, code) = kustomize_run(&["--kustomize", "always"], path);
    assert_eq!(code, 2);
}

fn path_with_tools() -> String {
    std::env::var("PATH").unwrap_or_default()
}

/// `cluster.addons` declares device plugins installed outside the manifests (Helm,
/// Terraform): `missing-device-plugin` then stays quiet; an unknown name is a config error
/// with the closest known one.
#[test]
fn cluster_addons_declare_device_plugins() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::copy(
        "fixtures/missing-device-plugin/fire-gpu.yaml",
        dir.path().join("gpu.yaml"),
    )
    .expect("copy");
    let run = || {
        karplint()
            .current_dir(dir.path())
            .args(["--format", "json", "gpu.yaml"])
            .output()
            .expect("runs")
    };
    let fires = |out: &std::process::Output| {
        String::from_utf8_lossy(&out.stdout).contains("\"missing-device-plugin\"")
    };
    assert!(fires(&run()));
    let config = dir.path().join(".karplint.yaml");
    std::fs::write(&config, "cluster:\n  addons: [nvidia-device-plugin]\n").expect("write");
    assert!(!fires(&run()));
    std::fs::write(&config, "cluster:\n  addons: [nvidia-device-plugn]\n").expect("write");
    let out = run();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("did you mean `nvidia-device-plugin`"),
        "{stderr}"
    );
}

/// A finding a linted workload causes on a NodePool read with `--context` is reported at
/// the workload, with the NodePool as a related location (it used to be dropped with the
/// context object).
#[test]
fn context_pool_findings_caused_by_a_workload_stand_on_the_workload() {
    let (v, _) = json(&[
        "tests/data/context-csi/app",
        "--context",
        "tests/data/context-csi/platform",
    ]);
    let csi: Vec<&Value> = (v["diagnostics"].as_array().expect("diagnostics").iter())
        .filter(|d| d["rule"] == "missing-csi-startup-taint")
        .collect();
    assert_eq!(csi.len(), 1, "{v}");
    assert_eq!(csi[0]["file"], "tests/data/context-csi/app/db.yaml");
    assert_eq!(
        csi[0]["related"][0]["file"],
        "tests/data/context-csi/platform/np.yaml"
    );
}

/// No silent pass: a tree without manifests exits 0 with a `warning:` naming the paths, and
/// a hint when standard input is a pipe that `-` was not given to read; an
/// `--instance-types` file listing no types is an error (exit 2).
#[test]
fn nothing_linted_is_never_silent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = karplint()
        .current_dir(dir.path())
        .write_stdin("apiVersion: v1\nkind: Pod\n")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning: no Kubernetes manifests found in ."),
        "{stderr}"
    );
    assert!(stderr.contains("pass `-`"), "{stderr}");
    std::fs::write(dir.path().join("it.json"), "{\"InstanceTypes\": []}").expect("write");
    std::fs::write(
        dir.path().join("pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
    )
    .expect("write");
    let out = karplint()
        .current_dir(dir.path())
        .args(["--instance-types", "it.json", "pod.yaml"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("lists no instance types"));
}

/// A value the API server rejects inside a readable object is a finding on that object: JSON
/// names it, and the object's `karplint.io/ignore` annotation suppresses it.
#[test]
fn a_rejected_value_names_its_object_and_its_annotation_suppresses_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("app.yaml");
    let yaml = |annotation: &str| {
        format!(
            "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
{annotation}spec:
  replicas: \"3\"
  template:
    spec:
      containers:
        - name: web
          image: nginx
          resources:
            requests: {{cpu: \"-1\", memory: 256Mi}}
"
        )
    };
    std::fs::write(&path, yaml("")).expect("write");
    let (v, _) = json(&[path.to_str().expect("utf-8")]);
    let parse_errors: Vec<&serde_json::Value> = (v["diagnostics"].as_array().expect("diagnostics"))
        .iter()
        .filter(|d| d["rule"] == "parse-error")
        .collect();
    assert_eq!(parse_errors.len(), 2, "{v}");
    for d in &parse_errors {
        assert_eq!(d["object"]["kind"], "Deployment", "{d}");
        assert_eq!(d["object"]["namespace"], "shop", "{d}");
        assert_eq!(d["object"]["name"], "web", "{d}");
    }
    std::fs::write(
        &path,
        yaml("  annotations:\n    karplint.io/ignore: parse-error\n"),
    )
    .expect("write");
    let (v, _) = json(&[path.to_str().expect("utf-8")]);
    assert!(
        !(v["diagnostics"].as_array().expect("diagnostics"))
            .iter()
            .any(|d| d["rule"] == "parse-error"),
        "{v}"
    );
}

/// A Deployment with one quantity the API server rejects still gets its other findings: the
/// bad value is a `parse-error` at its span and is read as absent, nothing more.
#[test]
fn a_rejected_value_costs_only_itself() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("app.yaml");
    std::fs::write(
        &path,
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints:
        - {key: nvidia.com/gpu, effect: NoSchedule}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: \"2\"
  template:
    spec:
      containers:
        - name: web
          image: nginx
          resources:
            requests: {cpu: 1e3m, memory: 256Mi}
",
    )
    .expect("write");
    let (v, code) = json(&[path.to_str().expect("utf-8")]);
    assert_eq!(code, 1);
    let found: Vec<(String, String)> = v["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap_or_default().to_string(),
                d["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let parse_errors: Vec<&String> = (found.iter())
        .filter(|(rule, _)| rule == "parse-error")
        .map(|(_, m)| m)
        .collect();
    assert_eq!(parse_errors.len(), 2, "{found:?}");
    assert!(parse_errors[0].contains("\"2\""), "{found:?}");
    assert!(parse_errors[1].contains("\"1e3m\""), "{found:?}");
    assert!(
        found.iter().any(|(rule, _)| rule == "untolerated-taint"),
        "the Deployment is still linted: {found:?}"
    );
}

/// A `karplint.io/ignore` annotation in a base suppresses a finding on the rendered object
/// that is moved back to the base file (the annotation is read where the object was
/// rendered), and is not reported unused.
#[test]
fn kustomize_findings_honour_annotation_suppressions() {
    if !render_tool_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("base");
    let overlay = dir.path().join("overlay");
    std::fs::create_dir_all(&base).expect("mkdir");
    std::fs::create_dir_all(&overlay).expect("mkdir");
    std::fs::write(base.join("kustomization.yaml"), "resources: [app.yaml]\n").expect("write");
    std::fs::write(
        base.join("app.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  annotations:\n    karplint.io/ignore: missing-resource-requests\nspec:\n  template:\n    spec:\n      containers:\n        - name: app\n          image: example.com/app:1\n",
    )
    .expect("write");
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "namespace: prod\nresources: [../base]\n",
    )
    .expect("write");
    let out = karplint()
        .current_dir(dir.path())
        .args(["--format", "json", "--fail-on", "info", "."])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let rules: Vec<&str> = (v["diagnostics"].as_array().expect("diagnostics").iter())
        .filter_map(|d| d["rule"].as_str())
        .collect();
    assert!(
        !rules.contains(&"missing-resource-requests") && !rules.contains(&"unused-suppression"),
        "{v}"
    );
    assert_eq!(v["summary"]["suppressed"], 1, "{v}");
}

/// `karpenter.version` in the config and `--karpenter-version` choose the Karpenter release
/// judged by (the flag wins), the note names it, and a version karplint does not model is a
/// usage or config error (exit 2) with the closest known one.
#[test]
fn karpenter_version_from_config_and_flag() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join(".git")).expect("repository root");
    std::fs::copy(
        "fixtures/deprecated-karpenter-api/fire-v1beta1.yaml",
        dir.path().join("pools.yaml"),
    )
    .expect("copy");
    let run = |args: &[&str]| {
        let out = karplint()
            .current_dir(dir.path())
            .args(["--format", "json", "pools.yaml"])
            .args(args)
            .output()
            .expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (
            v,
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let severities = |v: &Value| -> Vec<String> {
        (v["diagnostics"].as_array().expect("diagnostics").iter())
            .filter(|d| d["rule"] == "deprecated-karpenter-api")
            .map(|d| d["severity"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let notes = |v: &Value| -> Vec<String> {
        (v["notes"].as_array().expect("notes").iter())
            .filter(|n| n["kind"] == "config")
            .map(|n| n["message"].as_str().unwrap_or("").to_string())
            .collect()
    };
    // Default: the newest version, where v1beta1 is deprecated; no note without a choice.
    let (v, _, _) = run(&[]);
    assert_eq!(severities(&v), ["warning", "warning"]);
    assert!(notes(&v).is_empty(), "{:?}", notes(&v));
    // The flag alone: v1beta1 is current on v0.37.
    let (v, _, _) = run(&["--karpenter-version", "v0.37.2"]);
    assert_eq!(severities(&v), ["info", "info"]);
    assert_eq!(
        notes(&v),
        ["judged as Karpenter v0.37 (--karpenter-version)"]
    );
    // The config, unquoted; the flag wins over it.
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "karpenter:\n  version: 0.36\n",
    )
    .expect("write");
    let (v, _, _) = run(&[]);
    assert_eq!(severities(&v), ["info", "info"]);
    assert_eq!(
        notes(&v),
        ["config .karplint.yaml applied, judged as Karpenter v0.36"]
    );
    let (v, _, _) = run(&["--karpenter-version", "1.0"]);
    assert_eq!(severities(&v), ["warning", "warning"]);
    assert_eq!(
        notes(&v),
        ["config .karplint.yaml applied, judged as Karpenter v1.0"]
    );
    // Errors: exit 2 with a suggestion, or the supported range.
    let (_, code, stderr) = run(&["--karpenter-version", "1.15"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("did you mean `v1.14`?"), "{stderr}");
    let (_, code, stderr) = run(&["--karpenter-version", "0.31"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("versions v0.32 to v1.14 are supported"),
        "{stderr}"
    );
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "karpenter:\n  version: 1.8x\n",
    )
    .expect("write");
    let (_, code, stderr) = run(&[]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("did you mean `v1.8`?"), "{stderr}");
}

/// Pod-level resources count from Karpenter v1.8: judged as v1.7, only the containers'
/// 2 CPUs count and the workload schedules.
#[test]
fn plan_reads_pod_level_resources_only_from_karpenter_v1_8() {
    let out = karplint()
        .args([
            "plan",
            "--no-config",
            "--format",
            "json",
            "--karpenter-version",
            "1.7",
            "fixtures/no-instance-type-fits/fire-pod-level-resources.yaml",
        ])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["workloads"][0]["outcome"], "schedules", "{v}");
    assert_eq!(v["workloads"][0]["cpu"], "2", "{v}");
}

/// `--require-nodepools` (or `requireNodePools: true`) fails a run whose scheduling rules
/// could not run for want of a NodePool with exit 2, after the report; a run that read one
/// is judged as usual.
#[test]
fn require_nodepools_fails_a_run_without_nodepools() {
    let no_pool = "fixtures/missing-resource-requests/fire.yaml";
    karplint().arg(no_pool).assert().code(0);
    karplint()
        .args(["--require-nodepools", no_pool])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("missing-resource-requests"))
        .stderr(predicate::str::contains(
            "no NodePool or Provisioner was read, so the scheduling rules did not run (--require-nodepools)",
        ));
    karplint()
        .args(["plan", "--require-nodepools", no_pool])
        .assert()
        .code(2);
    let with_pool = "fixtures/untolerated-taint/quiet.yaml";
    karplint()
        .args(["--require-nodepools", with_pool])
        .assert()
        .code(0);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "requireNodePools: true\n",
    )
    .unwrap();
    std::fs::copy(no_pool, dir.path().join("web.yaml")).unwrap();
    karplint()
        .current_dir(dir.path())
        .arg("web.yaml")
        .assert()
        .code(2);
    std::fs::write(
        dir.path().join(".karplint.yaml"),
        "requireNodePools: false\n",
    )
    .unwrap();
    karplint()
        .current_dir(dir.path())
        .arg("web.yaml")
        .assert()
        .code(0);
}

/// Each subcommand's options change its output or are refused with exit 2: none is
/// accepted and ignored.
#[test]
fn every_flag_is_honoured_or_refused() {
    let out = |args: &[&str]| {
        let o = karplint().args(args).output().expect("runs");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let fire = "fixtures/in-tree-storage-plugin/fire.yaml";
    // Honoured: the output differs from the run without the flag.
    for (plain, with) in [
        (vec!["rules"], vec!["rules", "--format", "json"]),
        (
            vec!["explain", "untolerated-taint"],
            vec!["explain", "untolerated-taint", "--format", "json"],
        ),
        (vec![fire], vec!["--statistics", fire]),
        (
            vec![fire],
            vec!["--statistics", "--format", "concise", fire],
        ),
        (vec!["plan", fire], vec!["plan", "--format", "json", fire]),
    ] {
        let (a, b) = (out(&plain), out(&with));
        assert_ne!(a.1, b.1, "{with:?} printed what {plain:?} prints");
        assert_ne!(b.0, Some(2), "{with:?}: {}", b.2);
    }
    // Refused: exit 2, naming the subcommand and the option, with nothing on stdout.
    for (args, says) in [
        (
            &["rules", "--fail-on", "never"][..],
            "`karplint rules` does not take --fail-on",
        ),
        (
            &["rules", "--quiet"],
            "`karplint rules` does not take --quiet",
        ),
        (
            &["--statistics", "rules"],
            "`karplint rules` does not take --statistics",
        ),
        (
            &["rules", "--format", "sarif"],
            "`karplint rules` prints human or json, not --format sarif",
        ),
        (
            &["explain", "untolerated-taint", "--color", "always"],
            "`karplint explain` does not take --color",
        ),
        (
            &["explain", "untolerated-taint", "--format", "markdown"],
            "not --format markdown",
        ),
        (
            &["man", "--format", "json"],
            "`karplint man` does not take --format",
        ),
        (
            &["completions", "bash", "-j", "2"],
            "`karplint completions` does not take --threads",
        ),
        (
            &["plan", "--statistics", fire],
            "`karplint plan` does not take --statistics",
        ),
        (
            &["--statistics", "--format", "json", fire],
            "--statistics is a table of the human and concise formats, not of --format json",
        ),
        (
            &["--statistics", "--format", "markdown", fire],
            "not of --format markdown",
        ),
    ] {
        let (code, stdout, stderr) = out(args);
        assert_eq!(code, Some(2), "{args:?}: {stdout}{stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
    let v: Value = serde_json::from_str(&out(&["rules", "--format", "json"]).1).unwrap();
    assert_eq!(v["version"], 1);
    let rule = (v["rules"].as_array().unwrap().iter())
        .find(|r| r["id"] == "untolerated-taint")
        .unwrap();
    assert_eq!(rule["severity"], "error");
    assert!(
        rule["url"]
            .as_str()
            .unwrap()
            .ends_with("/lints/untolerated-taint.md")
    );
    let v: Value =
        serde_json::from_str(&out(&["explain", "untolerated-taint", "--format", "json"]).1)
            .unwrap();
    assert_eq!(v["id"], "untolerated-taint");
    assert!(
        v["doc"]
            .as_str()
            .unwrap()
            .starts_with("# untolerated-taint\n")
    );
}

/// A path that does not exist is one error, with no "no manifests" warning and no
/// summary after it.
#[test]
fn a_missing_path_is_one_clear_error() {
    let o = karplint().arg("nonexist").output().expect("runs");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("nonexist: no such file or directory"),
        "{stderr}"
    );
}

/// Each finding of the JSON report carries its rule's doc page.
#[test]
fn json_findings_carry_their_docs_url() {
    let (v, code) = json(&["fixtures/in-tree-storage-plugin/fire.yaml"]);
    assert_eq!(code, 1);
    let d = &v["diagnostics"][0];
    assert_eq!(
        d["url"],
        format!(
            "https://github.com/karplint/karplint/blob/v{}/lints/in-tree-storage-plugin.md",
            env!("CARGO_PKG_VERSION")
        )
    );
}

/// An unused comment names the line of the nearest finding of its rule; a misspelt rule
/// id gets a did-you-mean.
#[test]
fn unused_suppressions_point_at_the_finding_and_suggest_the_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let yaml = "\
apiVersion: v1
kind: PersistentVolume
metadata:
  name: data
spec:
  # karplint-ignore: in-tree-storage-plugin
  capacity:
    storage: 100Gi
  accessModes: [ReadWriteOnce]
  awsElasticBlockStore:
    volumeID: vol-0123456789abcdef0
---
apiVersion: v1
kind: Namespace
metadata:
  name: shop
  annotations:
    karplint.io/ignore: untolerated-tain
";
    std::fs::write(dir.path().join("pv.yaml"), yaml).unwrap();
    let out = karplint()
        .current_dir(dir.path())
        .args(["--no-config", "--format", "json", "pv.yaml"])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let helps: Vec<(&str, &str)> = (v["diagnostics"].as_array().unwrap().iter())
        .filter(|d| d["rule"] == "unused-suppression")
        .map(|d| (d["message"].as_str().unwrap(), d["help"].as_str().unwrap()))
        .collect();
    assert_eq!(
        helps,
        [
            (
                "suppression of `in-tree-storage-plugin` matched no finding",
                "move the comment to the line above line 10, where `in-tree-storage-plugin` fires (it covers line 7), or to the end of that line; or remove it"
            ),
            (
                "suppression names unknown rule `untolerated-tain`",
                "did you mean `untolerated-taint`? fix the rule id (`karplint rules` lists them) or remove the suppression"
            ),
        ],
        "{v}"
    );
}

/// The config is found from the linted path, not only from the working directory: `karplint
/// tree` from the parent applies `tree/.karplint.yaml` as a run inside `tree` does, its
/// path globs anchored at its directory; paths under different configs linted together are
/// named in a note.
#[test]
fn config_is_discovered_from_each_linted_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    std::fs::create_dir(root.join(".git")).unwrap();
    let tree = root.join("tree");
    std::fs::create_dir_all(tree.join("generated")).unwrap();
    std::fs::create_dir_all(root.join("other")).unwrap();
    let warning_only =
        std::fs::read_to_string("fixtures/missing-resource-requests/fire.yaml").expect("fixture");
    std::fs::write(tree.join("web.yaml"), &warning_only).unwrap();
    std::fs::write(tree.join("generated/gen.yaml"), &warning_only).unwrap();
    std::fs::write(root.join("other/web.yaml"), &warning_only).unwrap();
    std::fs::write(
        tree.join(".karplint.yaml"),
        "failOn: warning\nexclude: [generated/**]\n",
    )
    .unwrap();
    let run = |cwd: &std::path::Path, args: &[&str]| {
        let out = karplint()
            .current_dir(cwd)
            .args(["--format", "json"])
            .args(args)
            .output()
            .expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (v, out.status.code())
    };
    let notes = |v: &Value| -> Vec<String> {
        (v["notes"].as_array().unwrap().iter())
            .filter(|n| n["kind"] == "config")
            .map(|n| n["message"].as_str().unwrap().to_string())
            .collect()
    };
    let (inside, code) = run(&tree, &["."]);
    assert_eq!(code, Some(1), "{inside}");
    let (parent, code) = run(root, &["tree"]);
    assert_eq!(code, Some(1), "{parent}");
    assert_eq!(
        inside["summary"]["warnings"], parent["summary"]["warnings"],
        "{parent}"
    );
    // `generated/**` is anchored at tree/: the generated file is excluded from both.
    assert_eq!(parent["summary"]["files"], 1, "{parent}");
    assert_eq!(notes(&parent), ["config tree/.karplint.yaml applied"]);
    // A file named directly finds its directory's config too.
    assert_eq!(run(root, &["tree/web.yaml"]).1, Some(1));
    // Two paths, one under the config and one under none: the config applies, and a note
    // names the other path.
    let (both, _) = run(root, &["tree", "other"]);
    assert_eq!(
        notes(&both),
        [
            "config tree/.karplint.yaml applied".to_string(),
            "config tree/.karplint.yaml applied to every path of this run, also to other under no config; lint those paths in a run of their own to apply their config".to_string(),
        ]
    );
    // Outside any config, nothing applies.
    let (alone, code) = run(root, &["other"]);
    assert_eq!(code, Some(0), "{alone}");
    assert!(notes(&alone).is_empty(), "{alone}");
}

/// The summary counts each severity in its number: "0 infos", never "0 info(s)".
#[test]
fn summary_counts_are_in_their_number() {
    karplint()
        .arg("fixtures/in-tree-storage-plugin/quiet.yaml")
        .assert()
        .code(0)
        .stdout(predicate::str::contains(": 0 errors, 0 warnings, 0 infos"));
    karplint()
        .args([
            "--format",
            "markdown",
            "fixtures/in-tree-storage-plugin/fire.yaml",
        ])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("**1 error, 1 warning, 0 infos**"));
}

/// Whether a render tool is on `PATH`; CI installs one, so there its absence fails.
fn render_tool_present() -> bool {
    let path = std::env::var("PATH").unwrap_or_default();
    let has = |tool: &str| std::env::split_paths(&path).any(|d| d.join(tool).is_file());
    if has("kustomize") || has("kubectl") {
        return true;
    }
    assert_ne!(
        std::env::var("CI").as_deref(),
        Ok("true"),
        "CI installs kustomize or kubectl"
    );
    eprintln!("skipped: neither kustomize nor kubectl is on PATH");
    false
}

/// A copy of `tests/data/kustomize` in a temporary directory, with the prod overlay
/// copied as a second one, `staging`.
fn kustomize_tree_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for e in walkdir::WalkDir::new("tests/data/kustomize") {
        let e = e.expect("walk");
        let rel = e
            .path()
            .strip_prefix("tests/data/kustomize")
            .expect("under");
        let to = dir.path().join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&to).expect("mkdir");
        } else {
            std::fs::copy(e.path(), &to).expect("copy");
        }
    }
    let staging = dir.path().join("overlays/staging");
    std::fs::create_dir_all(&staging).expect("mkdir");
    for f in ["kustomization.yaml", "resources.yaml", "placement.yaml"] {
        let text = std::fs::read_to_string(dir.path().join("overlays/prod").join(f)).expect("read");
        std::fs::write(staging.join(f), text.replace("prod", "staging")).expect("write");
    }
    dir
}

/// `--statistics`' line on the renders of a run that rendered, took from the cache and did
/// not render these many kustomization roots.
fn renders(rendered: usize, cached: usize, not_fed: usize) -> String {
    format!(
        "kustomizations: {rendered} rendered, {cached} from the cache, {not_fed} not rendered (no named file feeds them)"
    )
}

/// `--statistics`' line on the renders, and the JSON findings, of one run in `tree`.
fn cached_run(tree: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> (String, Value) {
    let run = |extra: &[&str]| {
        karplint()
            .current_dir(tree)
            .env("KARPLINT_CACHE_DIR", cache)
            .args(["--fail-on", "never"])
            .args(extra)
            .args(args)
            .output()
            .expect("runs")
    };
    let stats = String::from_utf8_lossy(&run(&["--statistics"]).stdout).into_owned();
    let line = (stats.lines())
        .find(|l| l.starts_with("kustomizations:"))
        .unwrap_or_default()
        .to_string();
    let json = run(&["--format", "json"]);
    let mut v: Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    v["summary"] = Value::Null;
    (line, v)
}

/// Files named one by one still render a root that no named file feeds when it holds
/// objects every workload is judged against: here a platform kustomization that taints its
/// NodePool, so the named overlay's pods are judged against the tainted pool.
#[test]
fn named_files_render_the_kustomizations_that_shape_the_cluster() {
    if !render_tool_present() {
        return;
    }
    let tree = kustomize_tree_copy();
    let platform = tree.path().join("platform");
    std::fs::write(
        platform.join("kustomization.yaml"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - nodepool.yaml\npatches:\n  - path: taint.yaml\n",
    )
    .expect("write");
    std::fs::write(
        platform.join("taint.yaml"),
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      taints:\n        - {key: dedicated, value: batch, effect: NoSchedule}\n",
    )
    .expect("write");
    let cache = tempfile::tempdir().expect("tempdir");
    let named = ["--context", ".", "overlays/prod/resources.yaml"];
    let (line, v) = cached_run(tree.path(), cache.path(), &named);
    assert_eq!(line, renders(2, 0, 1));
    assert!(
        (v["diagnostics"].as_array().into_iter().flatten())
            .any(|d| d["rule"] == "untolerated-taint"),
        "{v}"
    );
}

/// A second run takes each unchanged root from the cache and reports the same; a change
/// to a file a root uses renders that root again; `--no-cache` renders every root.
#[test]
fn unchanged_kustomizations_come_from_the_cache() {
    if !render_tool_present() {
        return;
    }
    let tree = kustomize_tree_copy();
    let cache = tempfile::tempdir().expect("tempdir");
    let (first, cold) = cached_run(tree.path(), cache.path(), &["."]);
    assert_eq!(first, renders(2, 0, 0));
    let (second, warm) = cached_run(tree.path(), cache.path(), &["."]);
    assert_eq!(second, renders(0, 2, 0));
    assert_eq!(cold, warm);
    assert!(!cold["diagnostics"].as_array().expect("list").is_empty());
    let patch = tree.path().join("overlays/staging/resources.yaml");
    let text = std::fs::read_to_string(&patch).expect("read");
    std::fs::write(&patch, format!("{text}\n")).expect("write");
    let (changed, _) = cached_run(tree.path(), cache.path(), &["."]);
    assert_eq!(changed, renders(1, 1, 0));
    let (off, _) = cached_run(tree.path(), cache.path(), &["--no-cache", "."]);
    assert_eq!(off, renders(2, 0, 0));
}

/// Files named one by one (a pre-commit hook) render only the roots they feed: the other
/// overlay, not in the cache, is read as written and named in a note. The base's file, named
/// alone, is linted as the overlays render it.
#[test]
fn named_files_render_only_the_kustomizations_they_feed() {
    if !render_tool_present() {
        return;
    }
    let tree = kustomize_tree_copy();
    let cache = tempfile::tempdir().expect("tempdir");
    let named = ["--context", ".", "overlays/prod/placement.yaml"];
    let (line, v) = cached_run(tree.path(), cache.path(), &named);
    assert_eq!(line, renders(1, 0, 1));
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("that no named file feeds were not rendered"),
        "{notes}"
    );
    assert!(notes.contains("overlays/staging"), "{notes}");
    let files: Vec<&str> = (v["diagnostics"].as_array().into_iter().flatten())
        .filter_map(|d| d["file"].as_str())
        .collect();
    assert_eq!(files, ["overlays/prod/placement.yaml"], "{v}");
    let (base, v) = cached_run(
        tree.path(),
        cache.path(),
        &["--context", ".", "base/deployment.yaml"],
    );
    assert_eq!(base, renders(1, 1, 0));
    assert!(
        (v["diagnostics"].as_array().into_iter().flatten())
            .any(|d| d["rule"] == "incompatible-requirements"),
        "{v}"
    );
}

/// Writes two clusters side by side, each with a NodePool `default` in its own zone, a
/// staging app that asks for prod's zone, and a shared app under no cluster's directory.
fn two_clusters(dir: &std::path::Path) {
    for (cluster, zone) in [("prod", "us-east-1a"), ("staging", "us-east-1b")] {
        let d = dir.join("clusters").join(cluster);
        std::fs::create_dir_all(&d).expect("mkdir");
        std::fs::write(
            d.join("pool.yaml"),
            format!(
                "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements:\n        - key: topology.kubernetes.io/zone\n          operator: In\n          values: [{zone}]\n"
            ),
        )
        .expect("write");
    }
    let app = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  replicas: 1\n  selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      nodeSelector:\n        topology.kubernetes.io/zone: us-east-1a\n      containers:\n        - name: app\n          image: nginx:1.27\n          resources: {{requests: {{cpu: 100m, memory: 128Mi}}, limits: {{memory: 128Mi}}}}\n"
        )
    };
    std::fs::write(dir.join("clusters/staging/app.yaml"), app("web")).expect("write");
    std::fs::create_dir_all(dir.join("apps")).expect("mkdir");
    std::fs::write(dir.join("apps/shared.yaml"), app("shared")).expect("write");
}

#[test]
fn clusters_judge_each_clusters_workloads_against_its_own_nodepools() {
    let dir = tempfile::tempdir().expect("tempdir");
    two_clusters(dir.path());
    let root = dir.path().to_str().expect("utf-8");
    // As one cluster: the two NodePools `default` are a duplicate, and both apps pass.
    let (v, code) = json(&[root, "--no-config"]);
    let rules: Vec<&str> = (v["diagnostics"].as_array().expect("array").iter())
        .map(|d| d["rule"].as_str().expect("rule"))
        .collect();
    assert_eq!(rules, ["duplicate-object"], "{v}");
    assert_eq!(code, 0);

    let config = dir.path().join(".karplint.yaml");
    std::fs::write(
        &config,
        "clusters:\n  - name: prod\n    paths: [clusters/prod]\n  - name: staging\n    paths: [clusters/staging]\n",
    )
    .expect("write");
    let (v, code) = json(&[root, "--config", config.to_str().expect("utf-8")]);
    let found: Vec<(String, String, String)> = (v["diagnostics"].as_array().expect("array"))
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().expect("rule").to_string(),
                d["file"]
                    .as_str()
                    .expect("file")
                    .rsplit("clusters/")
                    .next()
                    .unwrap_or_default()
                    .rsplit("apps/")
                    .next()
                    .unwrap_or_default()
                    .to_string(),
                d["cluster"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    // The staging app asks for prod's zone; the shared app schedules in prod only.
    let expect = |file: &str| {
        (
            "incompatible-requirements".to_string(),
            file.to_string(),
            "staging".to_string(),
        )
    };
    assert_eq!(
        found,
        [expect("shared.yaml"), expect("staging/app.yaml")],
        "{v}"
    );
    let messages: Vec<&str> = (v["diagnostics"].as_array().expect("array").iter())
        .map(|d| d["message"].as_str().expect("message"))
        .collect();
    assert!(
        messages[0].starts_with("in cluster staging: no NodePool can schedule this pod"),
        "{v}"
    );
    assert!(
        messages[1].starts_with("no NodePool can schedule this pod"),
        "{v}"
    );
    assert_eq!(code, 1);
}

/// The `clusters:` config of [`two_clusters`], written beside it; its path.
fn two_clusters_config(dir: &std::path::Path) -> String {
    let config = dir.join(".karplint.yaml");
    std::fs::write(
        &config,
        "clusters:\n  - name: prod\n    paths: [clusters/prod]\n  - name: staging\n    paths: [clusters/staging]\n",
    )
    .expect("write");
    config.to_str().expect("utf-8").to_string()
}

/// `plan` in a run of several clusters: a row per workload and cluster that judges it,
/// naming the cluster, with the NodePools by their qualified names; the table says which
/// cluster each row is.
#[test]
fn clusters_plan_names_each_rows_cluster() {
    let dir = tempfile::tempdir().expect("tempdir");
    two_clusters(dir.path());
    let config = two_clusters_config(dir.path());
    let out = karplint()
        .current_dir(dir.path())
        .args(["plan", "--format", "json", "--config", &config, "."])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let mut rows: Vec<(String, String, String, String)> = (v["workloads"].as_array())
        .expect("workloads")
        .iter()
        .map(|w| {
            let s = |k: &str| w[k].as_str().unwrap_or("-").to_string();
            (s("file"), s("cluster"), s("outcome"), s("nodepool"))
        })
        .collect();
    rows.sort();
    let row = |file: &str, cluster: &str, outcome: &str, pool: &str| {
        (file.into(), cluster.into(), outcome.into(), pool.into())
    };
    assert_eq!(
        rows,
        [
            row("apps/shared.yaml", "prod", "schedules", "prod/default"),
            row("apps/shared.yaml", "staging", "pending", "-"),
            row("clusters/staging/app.yaml", "staging", "pending", "-"),
        ],
        "{v:#}"
    );
    let staging = (v["workloads"].as_array().expect("workloads").iter())
        .find(|w| w["file"] == "clusters/staging/app.yaml")
        .expect("row");
    assert_eq!(
        staging["failures"][0]["nodepool"], "staging/default",
        "{v:#}"
    );
    let out = karplint()
        .current_dir(dir.path())
        .args(["plan", "--no-color", "--config", &config, "."])
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("Deployment default/shared in prod") && table.contains("prod/default"),
        "{table}"
    );
    assert!(
        table.contains("Deployment default/web in staging"),
        "{table}"
    );
}

/// Named files are judged by the clusters they lie in only, and a cluster no linted file
/// lies in is not judged: silently when files are named (a pre-commit hook), with a note
/// when a directory was walked.
#[test]
fn clusters_judge_only_the_clusters_the_linted_files_lie_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    two_clusters(dir.path());
    let config = two_clusters_config(dir.path());
    let run = |path: &str| {
        let out = karplint()
            .current_dir(dir.path())
            .args(["--format", "json", "--config", &config, path])
            .output()
            .expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        (v, out.status.code())
    };
    let (v, code) = run("clusters/staging/app.yaml");
    let d = &v["diagnostics"];
    assert_eq!(d.as_array().map(Vec::len), Some(1), "{v:#}");
    assert_eq!(d[0]["rule"], "incompatible-requirements", "{v:#}");
    assert_eq!(d[0]["cluster"], "staging", "{v:#}");
    assert!(
        (d[0]["message"].as_str().expect("message")).starts_with("no NodePool can schedule"),
        "{v:#}"
    );
    let notes: Vec<&str> = (v["notes"].as_array().expect("notes").iter())
        .filter_map(|n| n["message"].as_str())
        .collect();
    assert!(!notes.iter().any(|n| n.contains("not judged")), "{notes:?}");
    // The file and its cluster's NodePool; prod's NodePool is not read.
    assert_eq!(v["summary"]["files"], 2, "{v:#}");
    assert_eq!(code, Some(1));

    let (v, code) = run("clusters/prod");
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(0), "{v:#}");
    let notes: Vec<&str> = (v["notes"].as_array().expect("notes").iter())
        .filter_map(|n| n["message"].as_str())
        .collect();
    assert!(
        notes.contains(&"cluster staging: no linted file lies under its paths; it was not judged"),
        "{notes:?}"
    );
    assert_eq!(code, Some(0));
}

/// A suppression on a file several clusters read silences the finding of each cluster that
/// finds it, and is not reported unused by a cluster that finds nothing there.
#[test]
fn clusters_honour_a_suppression_on_a_shared_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    two_clusters(dir.path());
    let config = two_clusters_config(dir.path());
    let shared = dir.path().join("apps/shared.yaml");
    let text = std::fs::read_to_string(&shared).expect("read");
    std::fs::write(
        &shared,
        text.replace(
            "metadata: {name: shared, namespace: default}",
            "metadata:\n  name: shared\n  namespace: default\n  annotations: {karplint.io/ignore: incompatible-requirements}",
        ),
    )
    .expect("write");
    let out = karplint()
        .current_dir(dir.path())
        .args([
            "--format",
            "json",
            "--fail-on",
            "info",
            "--config",
            &config,
            ".",
        ])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let files: Vec<(&str, &str)> = (v["diagnostics"].as_array().expect("diagnostics").iter())
        .map(|d| {
            (
                d["rule"].as_str().unwrap_or(""),
                d["file"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        files,
        [("incompatible-requirements", "clusters/staging/app.yaml")],
        "{v:#}"
    );
    assert_eq!(v["summary"]["suppressed"], 1, "{v:#}");
}

/// A kustomization rendered in a cluster's directory belongs to that cluster, though its
/// base lies outside every cluster: the rendered objects meet that cluster's NodePools only.
#[test]
fn clusters_judge_a_kustomization_by_its_roots_cluster() {
    if !render_tool_present() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    two_clusters(dir.path());
    let config = two_clusters_config(dir.path());
    std::fs::remove_file(dir.path().join("clusters/staging/app.yaml")).expect("rm");
    std::fs::create_dir_all(dir.path().join("base")).expect("mkdir");
    std::fs::rename(
        dir.path().join("apps/shared.yaml"),
        dir.path().join("base/app.yaml"),
    )
    .expect("mv");
    std::fs::write(
        dir.path().join("base/kustomization.yaml"),
        "resources: [app.yaml]\n",
    )
    .expect("write");
    for cluster in ["prod", "staging"] {
        let overlay = dir.path().join("clusters").join(cluster).join("web");
        std::fs::create_dir_all(&overlay).expect("mkdir");
        std::fs::write(
            overlay.join("kustomization.yaml"),
            format!("namePrefix: {cluster}-\nresources: [../../../base]\n"),
        )
        .expect("write");
    }
    let out = karplint()
        .current_dir(dir.path())
        .args(["--format", "json", "--config", &config, "."])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    let found: Vec<(&str, &str, &str)> = (v["diagnostics"].as_array().expect("diagnostics"))
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or("");
            (s("rule"), s("file"), s("cluster"))
        })
        .collect();
    // Only staging's render asks for a zone its NodePool lacks; prod's schedules.
    assert_eq!(
        found,
        [("incompatible-requirements", "base/app.yaml", "staging")],
        "{v:#}"
    );
}

/// A chart `web` under `charts/web` whose two templates compute the zone and the memory
/// from the chart's values, a NodePool in `platform`, and what `helm template rel
/// charts/web` renders: the web Deployment in `us-east-1a` with 128Mi, the worker in no
/// zone with 90000Gi (in this chart, each template has its own values).
fn helm_chart(dir: &std::path::Path) -> String {
    let chart = dir.join("charts/web");
    std::fs::create_dir_all(chart.join("templates")).expect("mkdir");
    std::fs::create_dir_all(dir.join("platform")).expect("mkdir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .expect("write");
    let template = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}-web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      {{- with .Values.zone }}\n      nodeSelector:\n        topology.kubernetes.io/zone: {{ . }}\n      {{- end }}\n      containers:\n        - name: web\n          image: \"{{ .Values.image }}\"\n          resources:\n            requests:\n              cpu: 100m\n              memory: {{ .Values.memory }}\n";
    std::fs::write(chart.join("templates/deploy.yaml"), template).expect("write");
    std::fs::write(
        chart.join("templates/worker.yaml"),
        template.replace("-web\n", "-worker\n"),
    )
    .expect("write");
    std::fs::write(
        dir.join("platform/pool.yaml"),
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - key: topology.kubernetes.io/zone\n          operator: In\n          values: [us-east-1b]\n",
    )
    .expect("write");
    ["---\n# Source: web/templates/deploy.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: rel-web\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      nodeSelector:\n        topology.kubernetes.io/zone: us-east-1a\n      containers:\n        - name: web\n          image: \"nginx:1.27\"\n          resources:\n            requests:\n              cpu: 100m\n              memory: 128Mi\n", "---\n# Source: web/templates/worker.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: rel-worker\nspec:\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n        - name: web\n          image: \"nginx:1.27\"\n          resources:\n            requests:\n              cpu: 100m\n              memory: 90000Gi\n"].concat()
}

/// `helm template … | karplint -` run in `dir` with the NodePools of [`helm_chart`] as
/// context: the JSON report and the exit code.
fn lint_helm_output(dir: &std::path::Path, rendered: String) -> (Value, Option<i32>) {
    let out = karplint()
        .current_dir(dir)
        .args([
            "--no-config",
            "--context",
            "platform",
            "--format",
            "json",
            "-",
        ])
        .write_stdin(rendered)
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    (v, out.status.code())
}

/// `helm template … | karplint -`: a finding on a key the template writes as rendered lands
/// on that key of the template; one on a value the template computes lands on the action
/// that writes it, with the rendered value beside it.
#[test]
fn helm_output_on_stdin_points_at_the_templates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rendered = helm_chart(dir.path());
    let (v, code) = lint_helm_output(dir.path(), rendered);
    let found: Vec<(&str, &str, u64, u64)> = (v["diagnostics"].as_array().expect("array"))
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().expect("number");
            (
                d["rule"].as_str().expect("rule"),
                d["file"].as_str().expect("file"),
                n("line"),
                n("column"),
            )
        })
        .collect();
    let template = "charts/web/templates/deploy.yaml";
    assert_eq!(
        found,
        [
            ("incompatible-requirements", template, 14, 9),
            (
                "no-instance-type-fits",
                "charts/web/templates/worker.yaml",
                22,
                23
            ),
        ],
        "{v:#}"
    );
    let fits = &v["diagnostics"][1];
    let rendered_at = (fits["related"].as_array().expect("related").iter())
        .find(|r| r["file"] == "<stdin>")
        .expect("the rendered value");
    assert_eq!(rendered_at["message"], "as `helm template` rendered it");
    assert_eq!(rendered_at["line"], 42, "{v:#}");
    assert_eq!(code, Some(1));
}

/// A `karplint.io/ignore` annotation a template renders silences the rule on its object,
/// whose finding would land on the template.
#[test]
fn helm_output_keeps_the_suppressions_its_templates_render() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rendered = helm_chart(dir.path()).replace(
        "  name: rel-worker\n",
        "  name: rel-worker\n  annotations:\n    karplint.io/ignore: no-instance-type-fits\n",
    );
    let (v, code) = lint_helm_output(dir.path(), rendered);
    let found: Vec<(&str, &str)> = (v["diagnostics"].as_array().expect("array").iter())
        .map(|d| {
            (
                d["rule"].as_str().expect("rule"),
                d["file"].as_str().expect("file"),
            )
        })
        .collect();
    assert_eq!(
        found,
        [(
            "incompatible-requirements",
            "charts/web/templates/deploy.yaml"
        )],
        "{v:#}"
    );
    assert_eq!(code, Some(1));
}

/// A template no chart under the working directory holds: the findings stay on the stream,
/// and a note names the template.
#[test]
fn helm_output_from_a_chart_not_in_the_tree_stays_on_stdin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rendered = helm_chart(dir.path()).replace("# Source: web/", "# Source: api/");
    let (v, code) = lint_helm_output(dir.path(), rendered);
    let files: Vec<&str> = (v["diagnostics"].as_array().expect("array").iter())
        .map(|d| d["file"].as_str().expect("file"))
        .collect();
    assert_eq!(files, ["<stdin>", "<stdin>"], "{v:#}");
    assert_eq!(code, Some(1));
    let notes: Vec<&str> = (v["notes"].as_array().expect("notes").iter())
        .filter_map(|n| n["message"].as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("names api/templates/deploy.yaml, which no chart")),
        "{notes:?}"
    );
}

/// With `cluster.zones`, a NodePool without a zone requirement offers exactly those zones
/// (the AWS provider's offerings), so zonal self anti-affinity over more replicas than
/// zones is reported; without them the zones are open, and it is not.
#[test]
fn cluster_zones_bound_the_zone_domains_of_anti_affinity() {
    let manifests = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: np\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: []\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: zonal\nspec:\n  replicas: 3\n  selector:\n    matchLabels: {app: zonal}\n  template:\n    metadata:\n      labels: {app: zonal}\n    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            - topologyKey: topology.kubernetes.io/zone\n              labelSelector:\n                matchLabels: {app: zonal}\n      containers:\n        - name: c\n          image: example.com/c:1\n          resources:\n            requests: {cpu: 250m, memory: 256Mi}\n";
    let findings = |config: Option<&str>| {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("m.yaml"), manifests).expect("write");
        if let Some(config) = config {
            std::fs::write(dir.path().join(".karplint.yaml"), config).expect("write");
        }
        let out = karplint()
            .current_dir(dir.path())
            .args(["--format", "json", "."])
            .output()
            .expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        (v["diagnostics"].as_array().expect("diagnostics").iter())
            .filter(|d| d["rule"] == "unsatisfiable-pod-affinity")
            .map(|d| d["message"].as_str().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(findings(None), Vec::<String>::new());
    let bounded = findings(Some("cluster:\n  zones: [us-east-1a, us-east-1b]\n"));
    assert_eq!(bounded.len(), 1, "{bounded:?}");
    assert!(
        bounded[0].contains("offer 2 topology.kubernetes.io/zone domain(s) [us-east-1a us-east-1b], so 1 replicas stay Pending"),
        "{bounded:?}"
    );
}
