//! The SARIF output validates against the official SARIF 2.1.0 JSON schema (vendored in
//! `tests/data/`, see its README for where it comes from).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use assert_cmd::Command;
use std::path::Path;

#[test]
fn sarif_output_matches_the_2_1_0_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("tests/data/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::draft4::new(&schema).unwrap();
    let out = Command::cargo_bin("karplint")
        .unwrap()
        .current_dir(root.join("tests/fixtures/integrations"))
        .args(["--no-config", "--format", "sarif", "."])
        .output()
        .unwrap();
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    // The run is not vacuous: results, related locations and rule help are there.
    let run = &sarif["runs"][0];
    assert!(run["results"].as_array().unwrap().len() >= 4);
    assert!(
        run["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r.get("relatedLocations").is_some())
    );
    assert!(
        run["tool"]["driver"]["rules"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| !r["help"]["text"].as_str().unwrap().is_empty())
    );
    // A document that breaks the schema is caught, so the check has teeth.
    let mut broken = sarif.clone();
    broken["runs"][0]["results"][0]["level"] = "fatal".into();
    assert!(!validator.is_valid(&broken));
}
