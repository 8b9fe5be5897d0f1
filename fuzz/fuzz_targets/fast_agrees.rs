//! The typed model's fast path against serde-saphyr: it may decline more, never read a
//! document otherwise.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    karplint::fuzzing::fast_agrees(data);
    karplint::fuzzing::fast_agrees(karplint::fuzzing::manifest_from_bytes(data).as_bytes());
});
