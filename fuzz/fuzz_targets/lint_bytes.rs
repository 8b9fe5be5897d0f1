//! Arbitrary bytes through parse → model → index → rules → human and JSON reports.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    karplint::fuzzing::lint_bytes(data);
});
