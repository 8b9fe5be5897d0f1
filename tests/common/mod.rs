//! What the CLI test binaries share: a known-good manifest, and a karplint run on the built
//! binary with its JSON report, standard error and exit code.
#![allow(dead_code)] // each test binary uses its own part

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A Deployment without requests: one `missing-resource-requests` finding that a run must
/// keep reporting whatever else is in the tree.
pub const GOOD: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: good
  namespace: team
spec:
  template:
    spec:
      containers:
      - name: app
        image: nginx
";

pub struct Run {
    pub json: Value,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    pub fn diagnostics(&self) -> &[Value] {
        self.json["diagnostics"].as_array().map_or(&[], |v| v)
    }

    /// Diagnostics of `rule` in files whose name ends with `file`.
    pub fn of(&self, rule: &str, file: &str) -> Vec<&Value> {
        self.diagnostics()
            .iter()
            .filter(|d| d["rule"] == rule && d["file"].as_str().is_some_and(|f| f.ends_with(file)))
            .collect()
    }

    /// How many diagnostics of `rule` there are.
    pub fn rules(&self, rule: &str) -> usize {
        self.diagnostics()
            .iter()
            .filter(|d| d["rule"] == rule)
            .count()
    }

    /// The finding of [`GOOD`], linted as `good.yaml`, is reported.
    pub fn assert_good_reported(&self) {
        assert_eq!(
            self.of("missing-resource-requests", "good.yaml").len(),
            1,
            "the good file's finding must survive: {:#}\nstderr: {}",
            self.json,
            self.stderr
        );
    }

    pub fn files(&self) -> u64 {
        self.json["summary"]["files"].as_u64().unwrap_or(0)
    }
}

/// The built binary, run in `dir`, killed after `timeout` seconds.
pub fn karplint(dir: &Path, timeout: u64) -> Command {
    let mut c = Command::cargo_bin("karplint").expect("binary");
    c.current_dir(dir).timeout(Duration::from_secs(timeout));
    c
}

/// Runs `c`, which prints a JSON report: never a panic, always an exit code.
pub fn json_run(mut c: Command) -> Run {
    let out = c.output().expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
    let code = out
        .status
        .code()
        .expect("exited (not killed by the timeout)");
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON on stdout ({e}); stderr: {stderr}"));
    Run { json, stderr, code }
}

/// Every rule id, registered and built-in, sorted.
pub fn rule_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = karplint::rules::registry()
        .iter()
        .map(|r| r.meta().id)
        .collect();
    ids.extend(karplint::rules::BUILTIN_RULES.iter().map(|(id, _, _)| *id));
    ids.sort();
    ids
}

/// Facts no manifest carries, given to the rules that need them (as the config file's
/// `cluster:` section would).
pub fn facts_for(id: &str) -> karplint::karpenter::cluster::ClusterFacts {
    let mut facts = karplint::karpenter::cluster::ClusterFacts::default();
    if id == "subnet-ip-exhaustion" {
        facts.add_subnet("subnet-a", Some("us-west-2a"), 4000);
        facts.add_subnet("subnet-b", Some("us-west-2b"), 4000);
    }
    facts
}
