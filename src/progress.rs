//! Progress on stderr for long runs: `parsed N/M files`, redrawn in place by indicatif. A
//! file counts once it is parsed and, for most files, linted (see `engine`).
//!
//! Shown only when the CLI turns it on (stderr is a terminal and the output format is the
//! human one) and only once the parse stage has run for a second, so quick runs, pipes, CI
//! logs and JSON output never see it: the bar starts hidden, and the first tick after a
//! second gives it stderr and a steady redraw. indicatif also draws nothing when stderr is
//! not a terminal, and clears the line when the bar is dropped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set by the CLI when progress may be drawn.
pub static ENABLED: AtomicBool = AtomicBool::new(false);

const DELAY: Duration = Duration::from_secs(1);
const TICK: Duration = Duration::from_millis(100);
const TEMPLATE: &str = "karplint: parsed {pos}/{len} files";

/// A running progress line; dropping it clears the line.
pub struct Progress {
    bar: ProgressBar,
    start: Instant,
    /// Whether the bar may still be shown: on, and not shown yet.
    pending: AtomicBool,
}

impl Progress {
    pub fn start(total: usize) -> Progress {
        let len = u64::try_from(total).unwrap_or(u64::MAX);
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
        if let Ok(style) = ProgressStyle::with_template(TEMPLATE) {
            bar.set_style(style);
        }
        Progress {
            bar,
            start: Instant::now(),
            pending: AtomicBool::new(ENABLED.load(Ordering::Relaxed)),
        }
    }

    /// One more file parsed.
    pub fn tick(&self) {
        self.bar.inc(1);
        if self.pending.load(Ordering::Relaxed)
            && self.start.elapsed() >= DELAY
            && self.pending.swap(false, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(TICK);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
