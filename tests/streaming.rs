//! Workloads are linted file by file and dropped (see `src/engine/`): questions about other
//! workloads must still see every one of them, whatever file holds it and in whatever order
//! the files are parsed; and an object of a held kind that the byte scan misses must not
//! change what is reported.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;

const POOL: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
";

/// `app` pods, `replicas` of them, optionally with required pod affinity to `wants` pods.
fn deployment(app: &str, replicas: u32, wants: Option<&str>) -> String {
    let affinity = wants
        .map(|w| {
            format!(
                "      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - topologyKey: kubernetes.io/hostname
              labelSelector:
                matchLabels: {{app: {w}}}
"
            )
        })
        .unwrap_or_default();
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {app}
  namespace: shop
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: {app}}}
  template:
    metadata:
      labels: {{app: {app}}}
    spec:
{affinity}      containers:
        - name: {app}
          image: example.com/{app}:1
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
"
    )
}

/// A budget over `app` pods that allows no eviction, its `kind` written as `kind`.
fn budget(app: &str, kind: &str) -> String {
    format!(
        "apiVersion: policy/v1
kind: {kind}
metadata:
  name: {app}
  namespace: shop
spec:
  minAvailable: 2
  selector:
    matchLabels: {{app: {app}}}
"
    )
}

type Found = Vec<(String, String, String, Vec<String>)>;

/// Lints a tree of `(file name, text)`; returns `(rule, file, message, related files)` of
/// every finding.
fn lint(files: &[(&str, &str)]) -> Found {
    lint_passes(files).0
}

/// [`lint`], and how many passes over the files the run took.
fn lint_passes(files: &[(&str, &str)]) -> (Found, usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).expect("write");
    }
    let out = Command::cargo_bin("karplint")
        .expect("binary")
        .current_dir(dir.path())
        .env("KARPLINT_TIMINGS", "1")
        .args(["--format", "json", "--fail-on", "never", "."])
        .output()
        .expect("runs");
    let passes = String::from_utf8_lossy(&out.stderr)
        .matches("timings: cluster phase: read + parse held documents")
        .count();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let found = json["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|f| {
            let related = f["related"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|r| s(&r["file"]))
                .collect();
            (s(&f["rule"]), s(&f["file"]), s(&f["message"]), related)
        })
        .collect();
    (found, passes)
}

fn rules(findings: &Found) -> Vec<&str> {
    findings.iter().map(|f| f.0.as_str()).collect()
}

#[test]
fn a_budget_sees_workloads_of_other_files() {
    let web = deployment("web", 2, None);
    let pdb = budget("web", "PodDisruptionBudget");
    let found = lint(&[
        ("pool.yaml", POOL),
        ("a-pdb.yaml", &pdb),
        ("z-web.yaml", &web),
    ]);
    let blocked: Vec<_> = found
        .iter()
        .filter(|f| f.0 == "consolidation-blocked")
        .collect();
    assert_eq!(blocked.len(), 1, "{found:?}");
    assert!(blocked[0].2.contains("minAvailable: 2"), "{found:?}");
    // The selected Deployment, in its own file, is the related note.
    assert_eq!(blocked[0].3, ["z-web.yaml"], "{found:?}");
}

#[test]
fn pod_affinity_targets_in_later_files_are_found() {
    let front = deployment("front", 1, Some("cache"));
    let cache = deployment("cache", 1, None);
    let with_target = lint(&[
        ("pool.yaml", POOL),
        ("a-front.yaml", &front),
        ("z-cache.yaml", &cache),
    ]);
    assert!(
        !rules(&with_target).contains(&"unsatisfiable-pod-affinity"),
        "{with_target:?}"
    );
    let without = lint(&[("pool.yaml", POOL), ("a-front.yaml", &front)]);
    assert!(
        rules(&without).contains(&"unsatisfiable-pod-affinity"),
        "{without:?}"
    );
}

#[test]
fn a_held_kind_the_scan_cannot_read_is_still_held() {
    let web = deployment("web", 2, None);
    let plain = budget("web", "PodDisruptionBudget");
    // A double-quoted escape: the byte scan reads no kind name, the parser reads
    // PodDisruptionBudget. The run finds out while streaming and runs again holding it.
    let escaped = budget("web", "\"Pod\\x44isruptionBudget\"");
    let (a, once) = lint_passes(&[
        ("pool.yaml", POOL),
        ("a-pdb.yaml", &plain),
        ("z-web.yaml", &web),
    ]);
    let (b, twice) = lint_passes(&[
        ("pool.yaml", POOL),
        ("a-pdb.yaml", &escaped),
        ("z-web.yaml", &web),
    ]);
    assert!(rules(&a).contains(&"consolidation-blocked"), "{a:?}");
    assert_eq!(a, b);
    assert_eq!((once, twice), (1, 2));
    // The same with the budget beside the workload it selects, in one file.
    let one = |pdb: &str| format!("{web}---\n{pdb}");
    let (one_plain, one_escaped) = (one(&plain), one(&escaped));
    let (c, once) = lint_passes(&[("pool.yaml", POOL), ("app.yaml", &one_plain)]);
    let (d, twice) = lint_passes(&[("pool.yaml", POOL), ("app.yaml", &one_escaped)]);
    assert!(rules(&c).contains(&"consolidation-blocked"), "{c:?}");
    assert_eq!(c, d);
    assert_eq!((once, twice), (1, 2));
}

#[test]
fn annotations_suppress_in_files_split_between_the_cluster_and_workload_phases() {
    // No requests: missing-resource-requests fires on each copy unless suppressed.
    let bare = |name: &str, annotation: &str| {
        format!(
            "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  namespace: shop
spec:
  template:
    metadata:
      annotations: {{{annotation}}}
    spec:
      containers:
        - name: app
          image: example.com/app:1
"
        )
    };
    let ignored = bare("web", "karplint.io/ignore: missing-resource-requests");
    let plain = bare("web", "team: shop");
    // The budget's document is parsed in the first step, the Deployments' in the second; the
    // second copy is the same object in another document, so the annotation is not its.
    let file = format!(
        "{}---\n{ignored}---\n{plain}",
        budget("web", "PodDisruptionBudget")
    );
    let found = lint(&[("pool.yaml", POOL), ("app.yaml", &file)]);
    let lacking: Vec<_> = found
        .iter()
        .filter(|f| f.0 == "missing-resource-requests")
        .collect();
    assert_eq!(lacking.len(), 1, "{found:?}");
    assert!(!rules(&found).contains(&"unused-suppression"), "{found:?}");
}
