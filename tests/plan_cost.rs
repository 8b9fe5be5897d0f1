//! `karplint plan`'s projected nodes and cost: per workload, per NodePool and in total, in
//! the region of the config, with spot and unpriced nodes counted and never priced.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

fn pool(capacity: &str) -> String {
    format!(
        r#"apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: {capacity}
spec:
  template:
    metadata:
      labels: {{tier: {capacity}}}
    spec:
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}
      requirements:
        - {{key: karpenter.sh/capacity-type, operator: In, values: ["{capacity}"]}}
        - {{key: karpenter.k8s.aws/instance-family, operator: In, values: ["m5"]}}
---
"#
    )
}

fn app(name: &str, tier: &str, replicas: u32) -> String {
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
  selector: {{matchLabels: {{app: {name}}}}}
  template:
    metadata:
      labels: {{app: {name}}}
    spec:
      nodeSelector: {{tier: {tier}}}
      containers:
        - name: app
          image: example.com/app:1
          resources:
            requests: {{cpu: "1", memory: 2Gi}}
---
"#
    )
}

fn tree(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}{}{}{}",
        pool("on-demand"),
        pool("spot"),
        app("steady", "on-demand", 3),
        app("cheap", "spot", 2)
    );
    std::fs::write(dir.path().join("all.yaml"), text).unwrap();
    std::fs::write(dir.path().join(".karplint.yaml"), config).unwrap();
    dir
}

fn plan(dir: &Path, format: &str) -> String {
    let out = Command::cargo_bin("karplint")
        .unwrap()
        .current_dir(dir)
        .args(["plan", "--format", format])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn plan_prices_on_demand_nodes_in_the_configured_region_and_counts_spot() {
    let dir = tree("cluster:\n  region: eu-west-1\n");
    let v: Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
    // The existing shape is kept.
    assert_eq!(v["version"], 1);
    assert_eq!(v["workloads"].as_array().unwrap().len(), 2);
    let cost = &v["cost"];
    assert_eq!(cost["region"], "eu-west-1", "{cost:#}");
    assert_eq!(cost["region_from"], "cluster.region");
    // The provider has no static table for eu-west-1: it prices from us-east-1's.
    assert_eq!(cost["price_table"], "us-east-1");
    assert_eq!(cost["provider"].as_str().unwrap().split(' ').count(), 2);
    let steady = &v["workloads"][0];
    assert_eq!(steady["object"]["name"], "steady");
    let types = steady["instance_types"].as_array().unwrap();
    assert_eq!(types[0]["capacity_type"], "on-demand");
    assert_eq!(types[0]["pods"], 3);
    assert!(steady["monthly_cost"].as_f64().unwrap() > 0.0);
    let cheap = &v["workloads"][1];
    assert_eq!(cheap["instance_types"][0]["capacity_type"], "spot");
    assert!(
        cheap.get("monthly_cost").is_none(),
        "spot is never priced: {cheap:#}"
    );
    assert!(cost["unpriced_nodes"].as_u64().unwrap() >= 1);
    let pools = cost["nodepools"].as_array().unwrap();
    assert_eq!(pools.len(), 2);
    let total: f64 = pools.iter().map(|p| p["monthly"].as_f64().unwrap()).sum();
    assert!((total - cost["monthly"].as_f64().unwrap()).abs() < 1e-6);
    let text = plan(dir.path(), "human");
    assert!(
        text.contains("Projected nodes and monthly on-demand cost (eu-west-1):"),
        "{text}"
    );
    assert!(
        text.contains("region eu-west-1 (from cluster.region), priced from us-east-1's table"),
        "{text}"
    );
    assert!(text.contains("have no known price (spot"), "{text}");
    let md = plan(dir.path(), "markdown");
    assert!(
        md.contains("### Projected nodes and monthly on-demand cost (eu-west-1)"),
        "{md}"
    );
}

#[test]
fn the_region_comes_from_the_zones_else_the_fallback() {
    let dir = tree("cluster:\n  zones: [ap-southeast-2a]\n");
    let v: Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
    assert_eq!(v["cost"]["region"], "ap-southeast-2");
    assert_eq!(v["cost"]["region_from"], "cluster zones");
    let dir = tree("cluster:\n  region: cn-north-1\n");
    let v: Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
    assert_eq!(v["cost"]["price_table"], "cn-north-1");
    assert_eq!(v["cost"]["currency"], "CNY");
    let dir = tree("failOn: error\n");
    let v: Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
    assert_eq!(v["cost"]["region"], "us-east-1");
    assert_eq!(v["cost"]["region_from"], "fallback");
}

/// The instance type a NodeClaim launches is the cheapest in the cluster's region:
/// c4.xlarge costs more than m5.xlarge in us-east-1 and less in us-gov-west-1.
#[test]
fn the_launched_type_is_the_cheapest_in_the_cluster_region() {
    let launched = |config: &str| {
        let dir = tempfile::tempdir().unwrap();
        let text = pool("on-demand").replace(
            r#"values: ["m5"]"#,
            r#"values: ["m5", "c4"]}
        - {key: karpenter.k8s.aws/instance-size, operator: In, values: ["xlarge"]"#,
        ) + &app("steady", "on-demand", 1);
        std::fs::write(dir.path().join("all.yaml"), text).unwrap();
        std::fs::write(dir.path().join(".karplint.yaml"), config).unwrap();
        let v: Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
        let row = &v["workloads"][0];
        row["instance_types"][0]["instance_type"]
            .as_str()
            .unwrap_or_else(|| panic!("{v:#}"))
            .to_string()
    };
    assert_eq!(launched(""), "m5.xlarge");
    assert_eq!(launched("cluster:\n  region: us-gov-west-1\n"), "c4.xlarge");
}

/// A NodeOverlay's `price` is the price the launch orders types by and the cost reports
/// (core `AdjustedPrice`; the AWS provider's fleet request takes the cheapest offering);
/// `karpenter.featureGates.nodeOverlay: false` turns it off.
#[test]
fn a_node_overlay_price_orders_the_launch_and_prices_the_node() {
    let run = |config: &str| {
        let dir = tempfile::tempdir().unwrap();
        let text = pool("on-demand").replace(r#"values: ["m5"]"#, r#"values: ["m5", "r5"]"#)
            + r#"apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata:
  name: r5-savings-plan
spec:
  requirements:
    - {key: node.kubernetes.io/instance-type, operator: In, values: ["r5.large"]}
    - {key: karpenter.sh/capacity-type, operator: In, values: ["on-demand"]}
  price: "0.01"
---
"# + &app("steady", "on-demand", 1);
        std::fs::write(dir.path().join("all.yaml"), text).unwrap();
        std::fs::write(dir.path().join(".karplint.yaml"), config).unwrap();
        let v: Value = serde_json::from_str(&plan(dir.path(), "json")).unwrap();
        let launched = v["workloads"][0]["instance_types"][0]["instance_type"]
            .as_str()
            .unwrap_or_else(|| panic!("{v:#}"))
            .to_string();
        (
            launched,
            v["cost"]["nodes"][0]["hourly"].as_f64().unwrap(),
            v["notes"].clone(),
        )
    };
    let (launched, hourly, notes) = run("");
    assert_eq!(launched, "r5.large");
    assert!((hourly - 0.01).abs() < 1e-9, "{hourly}");
    assert!(notes.is_null(), "no note: {notes:#}");
    let (launched, hourly, notes) = run("karpenter:\n  featureGates: {nodeOverlay: false}\n");
    assert_eq!(launched, "m5.large");
    assert!(hourly > 0.05, "{hourly}");
    assert!(
        notes.to_string().contains("nodeOverlay is false"),
        "{notes:#}"
    );
}
