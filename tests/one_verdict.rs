//! The lint and `karplint plan` read one verdict: on every fixture with NodePools, the
//! workloads a finding of a scheduling rule names are the workloads `plan` says stay
//! Pending (wholly, or some replicas once every pod of the run is placed). Without a
//! NodePool, `plan` has no rows, and only the static node groups' capacity is judged.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The rules that report a pod Karpenter would leave Pending.
const SCHEDULING_RULES: [&str; 7] = [
    "incompatible-requirements",
    "no-instance-type-fits",
    "replicas-exceed-capacity",
    "restricted-label-selector",
    "unsatisfiable-pod-affinity",
    "unsatisfiable-topology-spread",
    "untolerated-taint",
];

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml") {
            out.push(p);
        }
    }
}

/// `(kind, namespace, name, role)` of a workload, as both JSON outputs name it.
type Name = (String, String, String, String);

fn name(o: &serde_json::Value) -> Name {
    let field = |k: &str| o[k].as_str().unwrap_or_default().to_string();
    (
        field("kind"),
        field("namespace"),
        field("name"),
        field("role"),
    )
}

/// The JSON `karplint` prints for `args`.
fn json(args: &[&str]) -> serde_json::Value {
    let out = assert_cmd::Command::cargo_bin("karplint")
        .expect("binary")
        .args(args)
        .output()
        .expect("runs");
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// The diagnostics of the lint's JSON report on a tree of one file, `yaml`, with
/// `cluster.zones` set to `zones` in its config when any are given.
fn lint_tree(yaml: &str, zones: &[&str]) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("tree.yaml"), yaml).expect("write");
    if !zones.is_empty() {
        let config = format!("cluster:\n  zones: [{}]\n", zones.join(", "));
        std::fs::write(dir.path().join(".karplint.yaml"), config).expect("write");
    }
    let root = dir.path().to_str().expect("UTF-8 path");
    let v = json(&["--format", "json", "--fail-on", "never", root]);
    v["diagnostics"].as_array().cloned().unwrap_or_default()
}

/// Each diagnostic's rule and message.
fn rules_and_messages(diagnostics: &[serde_json::Value]) -> Vec<(String, String)> {
    (diagnostics.iter())
        .map(|d| {
            let text = |k: &str| d[k].as_str().unwrap_or_default().to_string();
            (text("rule"), text("message"))
        })
        .collect()
}

#[test]
fn lint_and_plan_name_the_same_pending_workloads_on_every_fixture() {
    let mut files = Vec::new();
    yaml_files(Path::new("fixtures"), &mut files);
    let mut disagreements = Vec::new();
    for file in files {
        let path = file.to_str().expect("UTF-8 path");
        let findings = json(&["--format", "json", "--fail-on", "never", path]);
        let plan = json(&["plan", "--format", "json", "--fail-on", "never", path]);
        let linted: BTreeSet<Name> = (findings["diagnostics"].as_array().into_iter().flatten())
            .filter(|f| SCHEDULING_RULES.iter().any(|r| f["rule"] == *r))
            .map(|f| name(&f["object"]))
            .collect();
        let planned: BTreeSet<Name> = (plan["workloads"].as_array().into_iter().flatten())
            .filter(|r| match r["pods"].as_array() {
                Some(pods) => pods.iter().any(|p| p["outcome"] == "pending"),
                None => r["outcome"] == "pending" || r["outcome"] == "ignored",
            })
            .map(|r| name(&r["object"]))
            .collect();
        let has_rows = plan["workloads"].as_array().is_some_and(|w| !w.is_empty());
        if has_rows && linted != planned {
            disagreements.push(format!(
                "{path}: only the lint {:?}, only plan {:?}",
                linted.difference(&planned).collect::<Vec<_>>(),
                planned.difference(&linted).collect::<Vec<_>>()
            ));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} fixture(s) where the lint and plan disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

/// A pod asks for a zone that no NodePool's zones (`cluster.zones`) hold, and spreads over
/// zones. Karpenter counts the spread before it filters instance types
/// (`Topology.AddRequirements` in `NodeClaim.CanAdd`), so its error for the NodePool that
/// allows every zone is the spread's. The lint reports that too, beside the per-template
/// finding on the zone no instance type offers.
#[test]
fn a_spread_is_counted_before_the_offerings_of_the_pool_it_was_meant_for() {
    let pool = |name: &str, requirement: &str| {
        format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements: [{requirement}]\n---\n"
        )
    };
    let yaml = format!(
        "{}{}{}",
        pool(
            "zoned",
            "{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}"
        ),
        pool(
            "general",
            "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}"
        ),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      nodeSelector: {topology.kubernetes.io/zone: us-east-1c}\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n      containers: [{name: web, image: x, resources: {requests: {cpu: 250m}}}]\n"
    );
    let findings = rules_and_messages(&lint_tree(&yaml, &["us-east-1a", "us-east-1b"]));
    let spread = (findings.iter())
        .find(|(rule, _)| rule == "unsatisfiable-topology-spread")
        .unwrap_or_else(|| panic!("no spread finding: {findings:?}"));
    assert!(
        spread.1.starts_with(
            "2 of 2 replicas stay Pending once every pod of the run is placed: NodePool \"general\": unsatisfiable topology constraint for topology spread"
        ),
        "{spread:?}"
    );
    assert!(
        (findings.iter()).any(|(rule, message)| rule == "no-instance-type-fits"
            && message
                .ends_with("NodePool \"general\": no instance type has the required offering")),
        "{findings:?}"
    );
}

/// A spread that counts the zone of a NodePool whose taint the pod does not tolerate lets
/// one replica run; Karpenter's error for the others starts with that NodePool (the higher
/// weight, tried first): "did not tolerate taint". Both findings stand, each with its fix
/// (oracle scenario s20261205-5730).
#[test]
fn replicas_a_spread_holds_back_are_also_reported_in_the_words_karpenter_starts_with() {
    let yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: tainted}\nspec:\n  weight: 100\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]\n      taints: [{key: dedicated, value: blue, effect: NoSchedule}]\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: zoned}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms: [{matchExpressions: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}]}]\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n      containers: [{name: web, image: x, resources: {requests: {cpu: 250m}}}]\n";
    let findings = rules_and_messages(&lint_tree(yaml, &["us-east-1a", "us-east-1b"]));
    assert!(
        (findings.iter()).any(|(rule, message)| rule == "unsatisfiable-topology-spread"
            && message.ends_with(
                "only 1 of 3 replicas can schedule in [us-east-1a], so 2 replicas stay Pending"
            )),
        "{findings:?}"
    );
    assert!(
        (findings.iter()).any(|(rule, message)| rule == "untolerated-taint"
            && message.starts_with(
                "2 of 3 replicas stay Pending once every pod of the run is placed: NodePool \"tainted\": did not tolerate taint"
            )),
        "{findings:?}"
    );
}

/// Karpenter schedules again until a round places nothing, and a Pending pod's error is
/// the last round's. Two replicas land on nodes of rounds 1 and 2, which spend the pool's
/// memory limit; the third's relaxed step (family `g4dn` alone) made its zone group in
/// round 2 before the second replica was bound, so it counted one pod there and failed on
/// the instance types. Round 3 counts both launched nodes' pods, so every step fails on
/// the spread (`minDomains: 3`, one zone offered), and so does the finding (oracle
/// scenario s20270130-5).
#[test]
fn a_pod_left_pending_takes_the_error_of_a_round_that_counts_every_launched_node() {
    let yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: np-a}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements:\n        - {key: karpenter.k8s.aws/instance-family, operator: NotIn, values: [m6i, c6i, p3]}\n        - {key: kubernetes.io/arch, operator: In, values: [amd64]}\n        - {key: topology.kubernetes.io/zone, operator: In, values: [us-east-1b]}\n  limits: {cpu: \"1000\", memory: 64Gi}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-b}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: b}}\n    spec:\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n              - matchExpressions: [{key: karpenter.k8s.aws/instance-category, operator: In, values: [g]}]\n              - matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [g4dn]}]\n      topologySpreadConstraints:\n        - {maxSkew: 2, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, minDomains: 3, labelSelector: {matchLabels: {app: b}}}\n        - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: b}}}\n      containers: [{name: main, image: x, resources: {requests: {cpu: 250m, memory: 16Gi, nvidia.com/gpu: \"1\"}}}]\n";
    let mut findings = rules_and_messages(&lint_tree(yaml, &["us-east-1a", "us-east-1b"]));
    findings.retain(|(rule, _)| SCHEDULING_RULES.contains(&rule.as_str()));
    assert!(
        matches!(findings.as_slice(), [(rule, message)] if rule == "unsatisfiable-topology-spread"
            && message.starts_with("unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone: minDomains is 3")
            && message.ends_with("2 of 3 replicas schedule, so 1 replicas stay Pending")),
        "{findings:?}"
    );
}

/// Zone anti-affinity on a pod that requires a zone the cluster does not have: no NodePool
/// gives it a node, and Karpenter's error for the pool it may use is the anti-affinity
/// term (`nextDomainAntiAffinity` finds no empty domain among the pod's). The finding says
/// which zones that pool offers (oracle scenario s20261205-1434).
#[test]
fn anti_affinity_in_a_zone_no_pool_offers_names_the_zones_the_pools_offer() {
    let yaml = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: tainted}\nspec:\n  weight: 48\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      taints: [{key: workload, value: batch, effect: NoExecute}]\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: general}\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}\n      requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      nodeSelector: {topology.kubernetes.io/zone: us-east-1d}\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: web}}}]\n      containers: [{name: web, image: x, resources: {requests: {cpu: 250m, memory: 128Mi}}}]\n";
    let diagnostics = lint_tree(yaml, &["us-east-1a", "us-east-1b", "us-east-1c"]);
    let affinity = (diagnostics.iter())
        .find(|d| d["rule"] == "unsatisfiable-pod-affinity")
        .unwrap_or_else(|| panic!("no pod affinity finding: {diagnostics:?}"));
    let notes: Vec<&str> = (affinity["related"].as_array().into_iter().flatten())
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert_eq!(
        notes,
        [
            "NodePool \"general\" offers topology.kubernetes.io/zone [us-east-1a us-east-1b us-east-1c]"
        ],
        "{affinity}"
    );
}

/// The notes on what each NodePool offers name five pools, and one more note counts the
/// rest: a fleet of pools must not make every topology finding a page long.
#[test]
fn the_notes_on_what_pools_offer_are_capped() {
    let mut yaml = String::new();
    for i in 0..8 {
        yaml.push_str(&format!(
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: pool-{i}}}\nspec:\n  template:\n    spec:\n      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}\n      requirements: [{{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}}]\n---\n"
        ));
    }
    yaml.push_str("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      affinity:\n        podAntiAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: web}}}]\n      containers: [{name: web, image: x, resources: {requests: {cpu: 250m, memory: 128Mi}}}]\n");
    let diagnostics = lint_tree(&yaml, &[]);
    let affinity = (diagnostics.iter())
        .find(|d| d["rule"] == "unsatisfiable-pod-affinity")
        .unwrap_or_else(|| panic!("no pod affinity finding: {diagnostics:?}"));
    let notes: Vec<&str> = (affinity["related"].as_array().into_iter().flatten())
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert_eq!(notes.len(), 6, "{notes:?}");
    assert!(
        notes[..5].iter().all(|n| n.starts_with("NodePool \"pool-")
            && n.ends_with("\" offers topology.kubernetes.io/zone [us-east-1a]")),
        "{notes:?}"
    );
    assert_eq!(notes[5], "and 3 more NodePool(s) this pod can use");
}
