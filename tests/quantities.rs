//! Quantities the API server would reject, on the built binary: each is a `parse-error` at
//! its value, in the API server's words, and the rest of the object is still linted.
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
  name: default
spec:
  LIMITS
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: [c, m, r]
---
";

fn deployment(name: &str, containers: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: 1
  template:
    spec:
      containers:
{containers}---
"
    )
}

/// The JSON report on one file holding `yaml`, with `args`.
fn lint(yaml: &str, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("app.yaml"), yaml).expect("write");
    let out = Command::cargo_bin("karplint")
        .expect("binary")
        .current_dir(dir.path())
        .args(["--format", "json", "--fail-on", "never"])
        .args(args)
        .arg("app.yaml")
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("JSON ({e}): {stderr}"))
}

/// `(rule, message, the text its span covers)` of every finding.
fn findings(yaml: &str, report: &Value) -> Vec<(String, String, String)> {
    report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            let offset = d["offset"].as_u64().expect("offset") as usize;
            let len = d["length"].as_u64().expect("length") as usize;
            (
                d["rule"].as_str().unwrap_or_default().to_string(),
                d["message"].as_str().unwrap_or_default().to_string(),
                yaml.get(offset..offset + len).unwrap_or("?").to_string(),
            )
        })
        .collect()
}

fn of<'f>(found: &'f [(String, String, String)], rule: &str) -> Vec<&'f (String, String, String)> {
    found.iter().filter(|f| f.0 == rule).collect()
}

#[test]
fn an_overflowing_nodepool_limit_is_a_parse_error_not_a_tiny_limit() {
    // `1e2147483647` wrapped an i32 exponent and read as 1m: every type then exceeded it.
    let yaml = POOL.replace("LIMITS", "limits: {cpu: \"1e2147483647\"}")
        + &deployment(
            "web",
            "        - {name: app, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}\n",
        );
    let found = findings(&yaml, &lint(&yaml, &[]));
    let errors = of(&found, "parse-error");
    assert_eq!(errors.len(), 1, "{found:#?}");
    assert_eq!(errors[0].2, "\"1e2147483647\"");
    assert!(errors[0].1.contains("spec.limits[cpu]"), "{}", errors[0].1);
    assert!(errors[0].1.contains("too large"), "{}", errors[0].1);
    // The pool still schedules the Deployment: no limits finding.
    assert_eq!(found.len(), 1, "{found:#?}");
}

#[test]
fn a_negative_request_is_rejected_and_offsets_nothing() {
    // 500 CPUs fit no type; a second container's -499 used to bring the pod down to 1.
    let yaml = POOL.replace("LIMITS", "")
        + &deployment(
            "huge",
            "        - {name: a, image: x, resources: {requests: {cpu: \"500\", memory: 1Gi}}}
        - {name: b, image: x, resources: {requests: {cpu: \"-499\", memory: 1Gi}}}\n",
        );
    let found = findings(&yaml, &lint(&yaml, &[]));
    let errors = of(&found, "parse-error");
    assert_eq!(errors.len(), 1, "{found:#?}");
    assert_eq!(errors[0].2, "\"-499\"");
    assert!(
        errors[0]
            .1
            .starts_with("spec.template.spec.containers[1].resources.requests[cpu]: invalid value \"-499\": the API server rejects it: must be greater than or equal to 0"),
        "{}",
        errors[0].1
    );
    assert_eq!(of(&found, "no-instance-type-fits").len(), 1, "{found:#?}");
}

#[test]
fn malformed_quantities_are_reported_where_they_are_written() {
    let yaml = POOL.replace("LIMITS", "limits: {memory: 10 Gi}")
        + &deployment(
            "web",
            "        - {name: app, image: x, resources: {requests: {cpu: 1x, memory: 1Gi}, limits: {memory: \"\"}}}\n",
        )
        + "apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
    - type: Container
      default: {cpu: \"-1\"}
      defaultRequest: {memory: lots}
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiSelectorTerms: [{alias: al2023@latest}]
  kubelet:
    kubeReserved: {cpu: \"-100m\"}
    evictionHard: {memory.available: 5%, nodefs.available: ten}
";
    let found = findings(&yaml, &lint(&yaml, &[]));
    let errors: Vec<(&str, &str)> = of(&found, "parse-error")
        .iter()
        .map(|f| (f.2.as_str(), f.1.split(": invalid").next().unwrap_or("")))
        .collect();
    assert_eq!(
        errors,
        [
            ("10 Gi", "spec.limits[memory]"),
            (
                "1x",
                "spec.template.spec.containers[0].resources.requests[cpu]"
            ),
            (
                "\"\"",
                "spec.template.spec.containers[0].resources.limits[memory]"
            ),
            ("\"-1\"", "spec.limits[0].default[cpu]"),
            ("lots", "spec.limits[0].defaultRequest[memory]"),
            ("\"-100m\"", "spec.kubelet.kubeReserved[cpu]"),
            ("ten", "spec.kubelet.evictionHard[nodefs.available]"),
        ],
        "{found:#?}"
    );
    let regex = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    assert!(
        found.iter().any(|f| f.2 == "1x" && f.1.ends_with(regex)),
        "{found:#?}"
    );
}

#[test]
fn rejected_values_in_a_context_file_are_noted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pool = POOL.replace("LIMITS", "limits: {cpu: \"1e2147483647\"}");
    std::fs::write(dir.path().join("pools.yaml"), pool).expect("write");
    let app = deployment(
        "web",
        "        - {name: app, image: x, resources: {requests: {cpu: 500m, memory: 1Gi}}}\n",
    );
    std::fs::write(dir.path().join("app.yaml"), &app).expect("write");
    let out = Command::cargo_bin("karplint")
        .expect("binary")
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .args(["--fail-on", "never", "--context", "pools.yaml", "app.yaml"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("pools.yaml has 1 invalid value(s)"),
        "{stdout}"
    );
    assert!(!stdout.contains("exceed limits"), "{stdout}");
}

/// A rejected value is quoted, not copied: a 5,000-character quantity is still a
/// `parse-error` at its whole span, but its message quotes only the start of it (no error
/// carries more than a short excerpt of a file).
#[test]
fn a_long_rejected_value_is_quoted_short() {
    let long = "9".repeat(5000);
    let yaml = deployment(
        "web",
        &format!(
            "        - name: app\n          image: nginx\n          resources:\n            requests: {{cpu: \"{long}x\", memory: 1Gi}}\n            limits: {{? {long}\n              : \"-\"}}\n          ports: [{{containerPort: \"{long}\"}}]\n"
        ),
    );
    let found = findings(&yaml, &lint(&yaml, &[]));
    let errors = of(&found, "parse-error");
    // The request, the limit under a long resource name, the port.
    assert_eq!(errors.len(), 3, "{found:?}");
    for (_, message, _) in &errors {
        assert!(message.len() <= 300, "{} bytes: {message}", message.len());
        assert!(message.contains('…'), "{message}");
    }
    assert!(
        errors
            .iter()
            .any(|e| e.2.starts_with("\"999") && e.2.len() > 5000),
        "the span still covers the value: {found:?}"
    );
}
