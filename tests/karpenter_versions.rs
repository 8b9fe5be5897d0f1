//! The Karpenter version switch (`karpenter.version`, `--karpenter-version`): the fixtures
//! under `tests/fixtures/karpenter-versions/<version>/` are linted as that version, and
//! `deprecated-karpenter-api` fires on `fire*.yaml` and stays quiet on `quiet*.yaml` there;
//! the rendered findings are a snapshot. The fixtures of `fixtures/<rule>/` are judged as
//! the default (newest) version.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use karplint::engine::{LintOptions, lint};
use karplint::karpenter::cluster::ClusterFacts;
use karplint::karpenter::version::KarpenterVersion;
use karplint::report::{self, Texts, human};
use std::path::{Path, PathBuf};

const RULE: &str = "deprecated-karpenter-api";
const ROOT: &str = "tests/fixtures/karpenter-versions";

fn lint_as(version: KarpenterVersion, path: &Path) -> report::Report {
    let opts = LintOptions {
        paths: vec![path.to_path_buf()],
        cluster: ClusterFacts {
            karpenter: version,
            ..Default::default()
        },
        ..Default::default()
    };
    lint(&opts, &mut std::io::empty())
        .expect("lint runs")
        .report
}

fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("readable fixture directory")
        .map(|e| e.expect("entry").path())
        .collect();
    v.sort();
    v
}

/// The rule's findings of `path` on `version`, rendered without colour at a fixed width.
fn render(mut r: report::Report) -> String {
    r.findings.retain(|f| f.rule == RULE);
    report::count(&mut r.summary, &r.findings);
    r.notes.clear();
    let texts = Texts::load(&r);
    let style = human::Style {
        color: false,
        width: 100,
    };
    human::render(&r, &texts, style)
}

#[test]
fn version_fixtures_fire_and_stay_quiet() {
    let mut out = String::new();
    for dir in sorted_entries(Path::new(ROOT)) {
        let name = dir.file_name().and_then(|n| n.to_str()).expect("name");
        let version = KarpenterVersion::parse(name).expect("a directory named after a version");
        for f in sorted_entries(&dir) {
            let file = f.file_name().and_then(|n| n.to_str()).expect("name");
            let r = lint_as(version, &f);
            let fired = r.findings.iter().any(|x| x.rule == RULE);
            if file.starts_with("fire") {
                assert!(fired, "{} should fire {RULE} on {version}", f.display());
            } else {
                assert!(
                    !fired,
                    "{} should not fire {RULE} on {version}",
                    f.display()
                );
            }
            out.push_str(&format!("=== {} ({version})\n", f.display()));
            out.push_str(&render(r));
        }
    }
    insta::assert_snapshot!("karpenter_versions__deprecated-karpenter-api", out);
}

/// The severity of the rule's finding on `file` of `dir`, linted as `version`.
fn severity(dir: &str, file: &str, version: &str) -> Option<String> {
    let version = KarpenterVersion::parse(version).expect("version");
    let r = lint_as(version, &Path::new(dir).join(file));
    r.findings
        .iter()
        .find(|f| f.rule == RULE)
        .map(|f| f.severity.to_string())
}

/// A generation the configured version serves is advised, not called removed: info while
/// current, a warning while deprecated; the newest version keeps the error of a removed API.
#[test]
fn api_generations_are_judged_on_the_configured_version() {
    let v32 = format!("{ROOT}/v0.32");
    let v37 = format!("{ROOT}/v0.37");
    let alpha = "fire-v1alpha5-deprecated.yaml";
    let beta = "fire-v1beta1-current.yaml";
    assert_eq!(severity(&v32, alpha, "0.32"), Some("warning".into()));
    assert_eq!(severity(&v32, alpha, "0.33"), Some("error".into()));
    assert_eq!(severity(&v32, alpha, "1.14"), Some("error".into()));
    assert_eq!(severity(&v37, beta, "0.32"), Some("info".into()));
    assert_eq!(severity(&v37, beta, "0.37"), Some("info".into()));
    assert_eq!(severity(&v37, beta, "1.0"), Some("warning".into()));
    assert_eq!(severity(&v37, beta, "1.14"), Some("warning".into()));
}

/// `karpenter.sh/do-not-consolidate` in a NodePool template: honoured up to v0.37, and
/// the message says so on the configured version.
#[test]
fn nodepool_do_not_consolidate_names_the_versions_that_honour_it() {
    let f = Path::new("fixtures/deprecated-karpenter-api/fire-nodepool-do-not-consolidate.yaml");
    let message = |v: &str| {
        let r = lint_as(KarpenterVersion::parse(v).expect("version"), f);
        let found = r.findings.iter().find(|x| x.rule == RULE).expect("fires");
        found.message.clone()
    };
    assert!(
        message("0.37")
            .ends_with("Karpenter v0.37 still honours it, v1.0 and later do not honour it"),
        "{}",
        message("0.37")
    );
    assert!(
        message("1.14").ends_with("Karpenter v1 no longer honours it"),
        "{}",
        message("1.14")
    );
}
