//! Rules must not contradict each other: following one rule's advice never makes another
//! rule fire.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use karplint::engine::{LintOptions, lint};
use std::path::PathBuf;

fn rules_fired(path: PathBuf) -> Vec<&'static str> {
    let opts = LintOptions {
        paths: vec![path],
        ..Default::default()
    };
    lint(&opts, &mut std::io::empty())
        .expect("lint runs")
        .report
        .findings
        .iter()
        .map(|f| f.rule)
        .collect()
}

/// `missing-csi-startup-taint` says to add `ebs.csi.aws.com/agent-not-ready:NoExecute` to
/// the NodePool's `startupTaints`; the EBS CSI node agent that removes it is an EKS add-on,
/// usually not in the linted files, and `startup-taint-without-agent` must not object.
#[test]
fn ebs_csi_startup_taint_advice_is_quiet_for_startup_taint_without_agent() {
    let fire = PathBuf::from("fixtures/missing-csi-startup-taint/fire.yaml");
    assert!(rules_fired(fire.clone()).contains(&"missing-csi-startup-taint"));

    let text = std::fs::read_to_string(&fire).expect("fixture");
    let anchor = "      nodeClassRef:";
    let at = text.find(anchor).expect("NodePool has a nodeClassRef");
    let line_end = at + text[at..].find('\n').expect("line end") + 1;
    let fixed = format!(
        "{}      startupTaints:\n        - key: ebs.csi.aws.com/agent-not-ready\n          effect: NoExecute\n{}",
        &text[..line_end],
        &text[line_end..]
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fixed.yaml");
    std::fs::write(&path, fixed).expect("write");
    let fired = rules_fired(path);
    assert!(
        !fired.contains(&"missing-csi-startup-taint"),
        "advice applied, still fires: {fired:?}"
    );
    assert!(
        !fired.contains(&"startup-taint-without-agent"),
        "following missing-csi-startup-taint's advice fired startup-taint-without-agent"
    );
}
