//! `karplint diff`: a git repository with two commits, one kind of change in each test, and
//! what every format reports of it (human and Markdown as snapshots).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

const NODEPOOL: &str = r#"apiVersion: karpenter.sh/v1
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
          values: ["on-demand"]
        - key: karpenter.k8s.aws/instance-family
          operator: In
          values: ["m5", "c5"]
        - key: topology.kubernetes.io/zone
          operator: In
          values: ["us-east-1a", "us-east-1b"]
  limits:
    cpu: "40"
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  role: KarpenterNodeRole
  amiSelectorTerms:
    - alias: al2023@latest
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: demo}
"#;

const APPS: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: example.com/web:1
          resources:
            requests: {cpu: "1", memory: 2Gi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: zonal
  namespace: shop
spec:
  replicas: 1
  selector:
    matchLabels: {app: zonal}
  template:
    metadata:
      labels: {app: zonal}
    spec:
      nodeSelector:
        topology.kubernetes.io/zone: us-east-1b
      containers:
        - name: zonal
          image: example.com/zonal:1
          resources:
            requests: {cpu: 500m, memory: 1Gi}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: web
  namespace: shop
spec:
  maxUnavailable: 1
  selector:
    matchLabels: {app: web}
"#;

const BATCH: &str = r#"apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
  namespace: batch
spec:
  limits:
    - type: Container
      defaultRequest: {cpu: 250m, memory: 256Mi}
      default: {cpu: 500m, memory: 512Mi}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
  namespace: batch
spec:
  replicas: 1
  selector:
    matchLabels: {app: worker}
  template:
    metadata:
      labels: {app: worker}
    spec:
      containers:
        - name: worker
          image: example.com/worker:1
"#;

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=karplint", "-c", "user.email=k@example.com"])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A repository whose first commit is the base tree, and whose second is the base with
/// `change` made to `file`.
fn repo(file: &str, change: impl Fn(&str) -> String) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"]);
    write(d, "cluster/nodepool.yaml", NODEPOOL);
    write(d, "apps/shop.yaml", APPS);
    write(d, "apps/batch.yaml", BATCH);
    write(d, ".karplint.yaml", "rules:\n  missing-limit-range: off\n");
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    let before = std::fs::read_to_string(d.join(file)).unwrap();
    let after = change(&before);
    assert_ne!(before, after, "the change changes {file}");
    write(d, file, &after);
    git(d, &["commit", "-q", "-a", "-m", "change"]);
    dir
}

struct Out {
    stdout: String,
    stderr: String,
    code: i32,
}

fn diff(dir: &Path, args: &[&str]) -> Out {
    let out = Command::cargo_bin("karplint")
        .unwrap()
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env("COLUMNS", "100")
        .arg("diff")
        .args(args)
        .output()
        .unwrap();
    Out {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code().unwrap_or(-1),
    }
}

/// Every format of `diff HEAD~1 HEAD` in `dir`: (human, json, markdown, sarif, github),
/// checked to agree on the exit code.
struct Formats {
    human: String,
    json: Value,
    markdown: String,
    sarif: Value,
    github: String,
    code: i32,
}

fn formats(dir: &Path) -> Formats {
    let run = |format: &str| diff(dir, &["HEAD~1", "HEAD", "--format", format]);
    let human = run("human");
    let codes: Vec<i32> = ["json", "markdown", "sarif", "github"]
        .iter()
        .map(|f| run(f).code)
        .collect();
    assert!(
        codes.iter().all(|c| *c == human.code),
        "{codes:?} {}",
        human.code
    );
    assert!(human.code < 2, "{}{}", human.stdout, human.stderr);
    Formats {
        json: serde_json::from_str(&run("json").stdout).expect("json"),
        markdown: run("markdown").stdout,
        sarif: serde_json::from_str(&run("sarif").stdout).expect("sarif"),
        github: run("github").stdout,
        code: human.code,
        human: human.stdout,
    }
}

impl Formats {
    /// The rule ids of the new findings, as the JSON, SARIF and github formats list them.
    fn new_rules(&self) -> Vec<String> {
        let json: Vec<String> = (self.json["findings"]["diagnostics"].as_array().unwrap())
            .iter()
            .map(|d| d["rule"].as_str().unwrap().to_string())
            .collect();
        let sarif: Vec<String> = (self.sarif["runs"][0]["results"].as_array().unwrap())
            .iter()
            .map(|r| r["ruleId"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(json, sarif, "SARIF carries the new findings only");
        for rule in &json {
            assert!(
                self.github.contains(&format!("title=karplint {rule}::")),
                "{rule}: {}",
                self.github
            );
        }
        assert_eq!(
            (self.github.lines())
                .filter(|l| l.starts_with("::") && l.contains(" file="))
                .count(),
            json.len(),
            "{}",
            self.github
        );
        json
    }

    /// The JSON placement change of workload `name`.
    fn placement(&self, name: &str) -> &Value {
        (self.json["placement"].as_array().unwrap())
            .iter()
            .find(|c| c["object"]["name"] == name)
            .unwrap_or_else(|| panic!("no placement change of {name}: {:#}", self.json))
    }

    fn snapshot(&self, name: &str) {
        insta::assert_snapshot!(format!("{name}__human"), self.human);
        insta::assert_snapshot!(format!("{name}__markdown"), self.markdown);
    }
}

#[test]
fn a_nodepool_that_loses_a_zone_leaves_its_zonal_workload_pending() {
    let dir = repo("cluster/nodepool.yaml", |t| {
        t.replace(r#"["us-east-1a", "us-east-1b"]"#, r#"["us-east-1a"]"#)
    });
    let f = formats(dir.path());
    assert_eq!(f.code, 1, "a workload is newly Pending");
    let zonal = f.placement("zonal");
    assert_eq!(zonal["before"]["pending"], 0);
    assert_eq!(zonal["after"]["pending"], 1);
    assert!(
        zonal["after"]["reason"]
            .as_str()
            .unwrap()
            .contains("us-east-1b")
    );
    assert_eq!(f.new_rules(), ["incompatible-requirements"]);
    assert!(
        f.human
            .contains("Deployment shop/zonal: 1 replica(s) on default")
    );
    assert!(f.markdown.contains("### Newly Pending"));
    f.snapshot("zone_lost");
}

#[test]
fn a_taint_added_to_a_pool_leaves_its_workloads_pending() {
    let dir = repo("cluster/nodepool.yaml", |t| {
        t.replace(
            "      requirements:\n",
            "      taints:\n        - {key: dedicated, value: gpu, effect: NoSchedule}\n      requirements:\n",
        )
    });
    let f = formats(dir.path());
    assert_eq!(f.code, 1);
    for name in ["web", "zonal", "worker"] {
        let p = f.placement(name);
        assert_eq!(
            p["after"]["pending"], p["after"]["replicas"],
            "{name}: {p:#}"
        );
        assert!(
            p["after"]["reason"].as_str().unwrap().contains("taint"),
            "{p:#}"
        );
    }
    assert!(f.new_rules().iter().all(|r| r == "untolerated-taint"));
    assert_eq!(
        f.json["cost"]["after"]["node_count"], 0,
        "no node is launched"
    );
    f.snapshot("taint_added");
}

#[test]
fn a_limitrange_default_raised_past_every_type_leaves_the_pod_pending() {
    let dir = repo("apps/batch.yaml", |t| {
        t.replace(
            "defaultRequest: {cpu: 250m",
            "defaultRequest: {cpu: \"200\"",
        )
        .replace("default: {cpu: 500m", "default: {cpu: \"200\"")
    });
    let f = formats(dir.path());
    assert_eq!(f.code, 1);
    let worker = f.placement("worker");
    assert_eq!(worker["before"]["pending"], 0);
    assert_eq!(worker["after"]["pending"], 1, "{worker:#}");
    assert!(!f.new_rules().is_empty());
    assert!(f.human.contains("Deployment batch/worker"), "{}", f.human);
    f.snapshot("limitrange_raised");
}

#[test]
fn replicas_raised_past_the_pool_limits_stay_pending_and_cost_more() {
    let dir = repo("apps/shop.yaml", |t| {
        t.replacen("replicas: 3", "replicas: 50", 1)
    });
    let f = formats(dir.path());
    assert_eq!(f.code, 1);
    let web = f.placement("web");
    assert_eq!(web["before"]["pending"], 0);
    assert!(web["after"]["pending"].as_u64().unwrap() > 0, "{web:#}");
    assert!(
        web["after"]["reason"].as_str().unwrap().contains("limits"),
        "{web:#}"
    );
    assert!(
        f.new_rules()
            .contains(&"replicas-exceed-capacity".to_string())
    );
    assert!(f.json["cost"]["monthly_difference"].as_f64().unwrap() > 0.0);
    f.snapshot("replicas_past_limits");
}

#[test]
fn a_tightened_pdb_newly_blocks_consolidation_and_passes() {
    let dir = repo("apps/shop.yaml", |t| {
        t.replace("maxUnavailable: 1", "maxUnavailable: 0")
    });
    let f = formats(dir.path());
    assert_eq!(f.code, 0, "a warning does not fail the check");
    assert_eq!(f.new_rules(), ["consolidation-blocked"]);
    let blocked = f.json["disruption"]["newly_blocked"].as_array().unwrap();
    assert_eq!(blocked.len(), 1, "{:#}", f.json);
    assert!(f.json["placement"].as_array().unwrap().is_empty());
    assert!(
        f.human
            .contains("Disruption:\n  newly blocked: PodDisruptionBudget")
    );
    assert!(f.markdown.contains("### Disruption"));
    f.snapshot("pdb_tightened");
}

#[test]
fn an_instance_family_removed_changes_the_cost_and_the_family() {
    let dir = repo("cluster/nodepool.yaml", |t| {
        t.replace(r#"["m5", "c5"]"#, r#"["c5"]"#)
    });
    let f = formats(dir.path());
    assert_eq!(f.code, 0, "nothing is Pending, nothing new");
    assert!(f.new_rules().is_empty());
    let web = f.placement("web");
    assert_eq!(web["before"]["families"], serde_json::json!(["m5"]));
    assert_eq!(web["after"]["families"], serde_json::json!(["c5"]));
    let nodes = f.json["cost"]["nodes"].as_array().unwrap();
    assert!(
        nodes
            .iter()
            .any(|n| n["instance_type"] == "m5.xlarge" && n["after"] == 0)
    );
    assert_ne!(f.json["cost"]["monthly_difference"], 0.0);
    assert_eq!(f.json["cost"]["after"]["region"], "us-east-1");
    f.snapshot("family_removed");
}

#[test]
fn budgets_that_change_are_reported() {
    let dir = repo("cluster/nodepool.yaml", |t| {
        t.replace(
            "  limits:\n",
            "  disruption:\n    budgets:\n      - nodes: \"0\"\n  limits:\n",
        )
    });
    let f = formats(dir.path());
    let budgets = f.json["disruption"]["budgets"].as_array().unwrap();
    assert_eq!(budgets.len(), 1, "{:#}", f.json);
    assert_eq!(
        budgets[0]["after"]["budgets"],
        serde_json::json!(["nodes=0"])
    );
    assert!(
        f.human
            .contains("NodePool default: budgets: default (nodes=10%) → budgets: nodes=0"),
        "{}",
        f.human
    );
}

#[test]
fn head_defaults_to_the_working_tree_and_findings_at_base_are_not_new() {
    let dir = repo("apps/shop.yaml", |t| {
        t.replacen("replicas: 3", "replicas: 50", 1)
    });
    // The working tree moves the finding two lines down: its fingerprint is the same.
    let text = std::fs::read_to_string(dir.path().join("apps/shop.yaml")).unwrap();
    write(
        dir.path(),
        "apps/shop.yaml",
        &format!("# moved\n# down\n{text}"),
    );
    let out = diff(dir.path(), &["HEAD", "--format", "json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["head"], "working tree");
    assert_eq!(v["findings"]["diagnostics"], serde_json::json!([]), "{v:#}");
    assert!(v["findings"]["summary"]["baselined"].as_u64().unwrap() > 0);
    // The work tree is left as it was.
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(dir.path())
        .args(["status", "--porcelain"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&status.stdout),
        " M apps/shop.yaml\n"
    );
}

#[test]
fn usage_errors_exit_2_with_a_message() {
    let dir = repo("apps/shop.yaml", |t| {
        t.replacen("replicas: 3", "replicas: 4", 1)
    });
    let bad = diff(dir.path(), &["no-such-branch"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown revision \"no-such-branch\""),
        "{}",
        bad.stderr
    );
    let flag = diff(dir.path(), &["--", "-x"]);
    assert_eq!(flag.code, 2, "{}", flag.stderr);
    let concise = diff(dir.path(), &["HEAD", "--format", "concise"]);
    assert_eq!(concise.code, 2);
    assert!(
        concise.stderr.contains("no concise format"),
        "{}",
        concise.stderr
    );
    let plain = tempfile::tempdir().unwrap();
    let none = diff(plain.path(), &["HEAD"]);
    assert_eq!(none.code, 2);
    assert!(
        none.stderr.contains("is not inside a git repository"),
        "{}",
        none.stderr
    );
    assert!(!none.stderr.contains("panicked"));
}

#[test]
fn the_comment_stays_under_64_kib() {
    // Three hundred workloads newly Pending: the comment is cut, the marker stays.
    let mut many = String::new();
    for i in 0..300 {
        many.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: zonal-{i:03}-with-a-long-name-to-fill-the-comment\n  namespace: shop\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: z{i}}}\n  template:\n    metadata:\n      labels: {{app: z{i}}}\n    spec:\n      nodeSelector:\n        topology.kubernetes.io/zone: us-east-1b\n      containers:\n        - name: z\n          image: example.com/z:1\n          resources:\n            requests: {{cpu: 100m, memory: 64Mi}}\n"
        ));
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"]);
    write(d, "cluster/nodepool.yaml", NODEPOOL);
    write(d, "apps/many.yaml", &many);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    write(
        d,
        "cluster/nodepool.yaml",
        &NODEPOOL.replace(r#"["us-east-1a", "us-east-1b"]"#, r#"["us-east-1a"]"#),
    );
    let out = diff(d, &["HEAD", "--format", "markdown"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.len() < 64 * 1024, "{} bytes", out.stdout.len());
    assert!(out.stdout.starts_with("<!-- karplint-diff -->\n"));
    assert!(out.stdout.contains("<details>") && out.stdout.contains("</details>"));
    assert!(
        out.stdout
            .contains("`karplint diff --format json` lists them all")
    );
}

#[test]
fn paths_after_the_revisions_narrow_both_sides() {
    let dir = repo("apps/shop.yaml", |t| {
        t.replacen("replicas: 3", "replicas: 50", 1)
    });
    let d = dir.path();
    let json = |args: &[&str]| {
        let out = diff(d, args);
        let v: Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", out.stdout, out.stderr));
        (out.code, v)
    };
    let placed = |v: &Value| -> Vec<String> {
        (v["placement"].as_array().unwrap().iter())
            .map(|p| p["object"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let between =
        |paths: &[&str]| json(&[&["HEAD~1", "HEAD", "--format", "json", "--"], paths].concat());
    // The change is in apps/shop.yaml: reading the pools and apps/batch.yaml, nothing moves.
    let (code, v) = between(&["cluster", "apps/batch.yaml"]);
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(placed(&v), Vec::<String>::new(), "{v:#}");
    // With apps/shop.yaml too, its web Deployment stays Pending after the change.
    let (code, v) = between(&["cluster", "apps/shop.yaml"]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(placed(&v), vec!["web".to_string()], "{v:#}");
    // A directory only one side has is empty on the other: HEAD adds apps/new.
    write(
        d,
        "apps/new/job.yaml",
        &APPS.replace("name: web", "name: fresh"),
    );
    let (code, v) = json(&["HEAD", "--format", "json", "--", "cluster", "apps/new"]);
    assert!(code <= 1, "{v:#}");
    assert_eq!(v["head"], "working tree");
    // A path neither side has, or one outside the work tree, is a usage error.
    for bad in ["nowhere", "../outside", "/etc"] {
        let out = diff(d, &["HEAD~1", "HEAD", "--", bad]);
        assert_eq!(out.code, 2, "{bad}: {}", out.stderr);
        assert!(out.stderr.contains(bad), "{}", out.stderr);
    }
}

/// A symbolic link in a revision is written as a link, as a checkout has it: with `--follow`
/// both sides read the NodePool it points at.
#[cfg(unix)]
#[test]
fn symbolic_links_in_a_revision_are_links() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    git(d, &["init", "-q"]);
    write(d, "pools/nodepool.yaml", NODEPOOL);
    std::fs::create_dir_all(d.join("cluster")).unwrap();
    std::os::unix::fs::symlink("../pools/nodepool.yaml", d.join("cluster/nodepool.yaml")).unwrap();
    write(d, "apps/shop.yaml", APPS);
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    write(
        d,
        "apps/shop.yaml",
        &APPS.replacen("replicas: 3", "replicas: 4", 1),
    );
    git(d, &["commit", "-q", "-a", "-m", "change"]);
    let out = diff(
        d,
        &[
            "HEAD~1", "HEAD", "--follow", "--format", "json", "--", "cluster", "apps",
        ],
    );
    let v: Value =
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.stderr));
    for side in ["before", "after"] {
        let pools = v["cost"][side]["nodepools"].as_array().unwrap();
        assert!(
            pools.iter().any(|p| p["nodepool"] == "default"),
            "{side}: {v:#}"
        );
    }
}

/// Two commits are judged alike whether HEAD is the checkout (linted in place, BASE's
/// unchanged files linked to it) or not (both written from git, BASE's unchanged files
/// linked to HEAD's).
#[test]
fn two_commits_read_alike_checked_out_or_not() {
    let dir = repo("apps/shop.yaml", |t| {
        t.replacen("replicas: 3", "replicas: 50", 1)
    });
    let d = dir.path();
    let run = || {
        let out = diff(d, &["main~1", "main", "--format", "json"]);
        let v: Value = serde_json::from_str(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", out.stdout, out.stderr));
        (out.code, v)
    };
    let (code, checked_out) = run();
    assert_eq!(code, 1, "{checked_out:#}");
    git(d, &["checkout", "-q", "main~1"]);
    let (code, elsewhere) = run();
    assert_eq!(code, 1, "{elsewhere:#}");
    assert_eq!(checked_out, elsewhere);
    assert!(!checked_out["placement"].as_array().unwrap().is_empty());
    // Neither run wrote into the work tree.
    let status = std::process::Command::new("git")
        .arg("-C")
        .arg(d)
        .args(["status", "--porcelain", "--ignored"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&status.stdout), "");
}
