//! Phase durations on stderr when `KARPLINT_TIMINGS` is set.

/// Phase durations on stderr when `KARPLINT_TIMINGS` is set: where a run's time goes,
/// without a profiler (see docs/performance.md).
pub(super) struct Timings(Option<std::time::Instant>);

impl Timings {
    pub(super) fn from_env() -> Self {
        Timings(std::env::var_os("KARPLINT_TIMINGS").map(|_| std::time::Instant::now()))
    }

    pub(super) fn mark(&mut self, phase: &str) {
        if let Some(start) = &mut self.0 {
            // Resident memory so far, where the kernel reports it (Linux; kB there are KiB,
            // and MB here MiB, as in scripts/bench.sh).
            let rss = std::fs::read_to_string("/proc/self/status")
                .ok()
                .and_then(|s| {
                    let kb = |key: &str| {
                        s.lines()
                            .find_map(|l| l.strip_prefix(key))
                            .and_then(|v| v.trim().trim_end_matches(" kB").parse::<u64>().ok())
                    };
                    Some(format!(
                        ", RSS {} MB (peak {} MB)",
                        kb("VmRSS:")? / 1024,
                        kb("VmHWM:")? / 1024
                    ))
                })
                .unwrap_or_default();
            eprintln!(
                "karplint: timings: {phase}: {:.3} s{rss}",
                start.elapsed().as_secs_f64()
            );
            *start = std::time::Instant::now();
        }
    }
}
