//! Every rule's doc has its sections; the rendered diagnostics of each rule's fixtures are
//! snapshots; the docs' examples work.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

mod common;
use common::{facts_for, rule_ids};
use karplint::engine::{LintOptions, lint};
use karplint::karpenter::cluster::ClusterFacts;
use karplint::report::{self, Texts, human};
use std::path::{Path, PathBuf};

fn lint_paths(paths: Vec<PathBuf>) -> report::Report {
    lint_paths_for("", paths)
}

fn lint_paths_for(id: &str, paths: Vec<PathBuf>) -> report::Report {
    let opts = LintOptions {
        paths,
        cluster: facts_for(id),
        ..Default::default()
    };
    lint(&opts, &mut std::io::empty())
        .expect("lint runs")
        .report
}

/// Human output of one rule's findings, without colour, at a fixed width.
fn render_rule(mut r: report::Report, rule: &str) -> String {
    r.findings.retain(|f| f.rule == rule);
    report::count(&mut r.summary, &r.findings);
    r.notes.clear();
    let texts = Texts::load(&r);
    human::render(
        &r,
        &texts,
        human::Style {
            color: false,
            width: 100,
        },
    )
}

fn files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix))
    });
    v.sort();
    v
}

/// (That each fixture fires or stays quiet on the lines it marks is `tests/fixtures.rs`.)
#[test]
fn every_rule_doc_has_its_sections() {
    let mut missing = Vec::new();
    for id in rule_ids() {
        let doc = std::fs::read_to_string(format!("lints/{id}.md")).unwrap_or_default();
        for section in [
            "## What it checks",
            "## Why it matters",
            "## Example",
            "## Fix",
        ] {
            if !doc.contains(section) {
                missing.push(format!("lints/{id}.md lacks {section}"));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// Each fixture file is linted on its own (NodePools of one scenario must not rescue the
/// pods of another), and the rule's rendered findings of all files form one snapshot.
#[test]
fn fixture_snapshots() {
    for id in rule_ids() {
        let mut out = String::new();
        for f in files(&PathBuf::from(format!("fixtures/{id}")), "") {
            let r = lint_paths_for(id, vec![f.clone()]);
            out.push_str(&format!("=== {}\n", f.display()));
            out.push_str(&render_rule(r, id));
        }
        insta::assert_snapshot!(format!("fixtures__{id}"), out);
    }
}

/// The YAML block under a `## <section>` heading of a rule doc.
fn yaml_block(doc: &str, section: &str) -> String {
    let start = doc
        .find(&format!("## {section}"))
        .unwrap_or_else(|| panic!("no {section}"));
    let rest = &doc[start..];
    let open = rest.find("```yaml\n").expect("yaml block") + "```yaml\n".len();
    let close = rest[open..].find("```").expect("closed block");
    rest[open..open + close].to_string()
}

#[test]
fn doc_examples_fire_and_fixes_do_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    for id in rule_ids() {
        let doc = karplint::cli::explain(id).expect("explain knows every rule");
        for (section, should_fire) in [("Example", true), ("Fix", false)] {
            let path = dir.path().join(format!("{id}-{section}.yaml"));
            std::fs::write(&path, yaml_block(doc, section)).expect("write");
            let r = lint_paths_for(id, vec![path]);
            let fired = r.findings.iter().any(|f| f.rule == id);
            assert_eq!(
                fired,
                should_fire,
                "lints/{id}.md {section} should {}fire",
                if should_fire { "" } else { "not " }
            );
        }
    }
}

#[test]
fn subnet_ip_exhaustion_is_silent_without_subnet_facts() {
    let r = lint_paths(vec![PathBuf::from(
        "fixtures/subnet-ip-exhaustion/fire.yaml",
    )]);
    assert!(!r.findings.iter().any(|f| f.rule == "subnet-ip-exhaustion"));
    // Subnets outside the NodePool's zone do not count, and do not fire either.
    let mut facts = ClusterFacts::default();
    facts.add_subnet("subnet-b", Some("us-west-2b"), 10);
    let opts = LintOptions {
        paths: vec![PathBuf::from("fixtures/subnet-ip-exhaustion/fire.yaml")],
        cluster: facts,
        ..Default::default()
    };
    let r = lint(&opts, &mut std::io::empty())
        .expect("lint runs")
        .report;
    assert!(!r.findings.iter().any(|f| f.rule == "subnet-ip-exhaustion"));
}

#[test]
fn readme_lists_every_rule() {
    let readme = std::fs::read_to_string("README.md").expect("README.md");
    for id in rule_ids() {
        assert!(
            readme.contains(&format!("| `{id}` |")),
            "README.md rules table lacks {id}"
        );
    }
}
