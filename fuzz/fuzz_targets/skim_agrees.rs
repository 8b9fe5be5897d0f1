//! The skim of unmodelled kinds against serde-saphyr: it may reject more, never accept more.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    karplint::fuzzing::skim_agrees(data);
});
