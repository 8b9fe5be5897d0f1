//! The parse stage's memory on counted bytes: a global allocator that tracks the peak of
//! live heap bytes. Alone in its binary, so that no other test's allocations count.
#![allow(
    unsafe_code,
    reason = "a counting global allocator measures peak memory"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// 100,000 bare `---` separators: each empty document once cost a slot in the split list
/// and another in the result list (17 times the input); the documents are now split and
/// parsed in batches, and an empty one costs nothing that outlives it.
#[test]
fn bare_separators_cost_less_than_the_input() {
    let text = "---\n".repeat(100_000);
    // The thread pool and the parser's tables, set up once before measuring.
    drop(karplint::parse::parse_source(
        0,
        &"---\n".repeat(200),
        false,
        false,
    ));
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let parsed = karplint::parse::parse_source(0, &text, false, false);
    let peak = PEAK.load(Ordering::Relaxed) - before;
    eprintln!("peak {peak} heap bytes for {} bytes of input", text.len());
    assert!(parsed.problems.is_empty() && parsed.objects.is_empty());
    assert!(
        peak <= text.len() / 2,
        "parsing {} bytes of separators peaked at {peak} heap bytes",
        text.len()
    );
}
