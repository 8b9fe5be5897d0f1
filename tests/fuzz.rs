//! Fuzzing on stable: replays every input the fuzzers found interesting
//! (`tests/fuzz_regressions/`), then runs a short randomized pass of both fuzz targets'
//! drivers. The long runs use cargo-fuzz on the targets in `fuzz/` (see docs/performance.md).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use karplint::fuzzing::{fast_agrees, lint_bytes, lint_text, manifest_from_bytes, skim_agrees};
use proptest::prelude::*;

#[test]
fn regressions_replay_without_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("tests/fuzz_regressions exists") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("readable");
        // Both targets: the raw bytes, and the manifest they generate.
        lint_bytes(&bytes);
        lint_text(&manifest_from_bytes(&bytes));
        skim_agrees(&bytes);
        skim_agrees(manifest_from_bytes(&bytes).as_bytes());
        fast_agrees(&bytes);
        fast_agrees(manifest_from_bytes(&bytes).as_bytes());
        n += 1;
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        lint_bytes(&data);
    }

    #[test]
    fn skim_never_accepts_more(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        skim_agrees(&data);
        skim_agrees(manifest_from_bytes(&data).as_bytes());
    }

    #[test]
    fn fast_path_never_reads_otherwise(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fast_agrees(&data);
        fast_agrees(manifest_from_bytes(&data).as_bytes());
    }

    #[test]
    fn structured_manifests(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        lint_text(&manifest_from_bytes(&data));
    }
}
