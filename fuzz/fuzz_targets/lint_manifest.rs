//! Manifest-shaped YAML (real kinds and fields, odd values) through the whole pipeline.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let text = karplint::fuzzing::manifest_from_bytes(data);
    karplint::fuzzing::lint_text(&text);
});
