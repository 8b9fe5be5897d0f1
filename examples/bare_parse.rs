//! The parser's limit: the baseline karplint's throughput is measured against.
//!
//! Reads the same files karplint would (`*.yaml`, `*.yml`, `*.json`, hidden directories
//! skipped), splits each into documents exactly as karplint does, and parses every document
//! with serde-saphyr into `serde::de::IgnoredAny` with karplint's own options, in parallel
//! with rayon. With `--read-only` it only reads the files (the I/O floor).
//!
//! ```text
//! cargo run --release --example bare_parse -- [-j N] [--read-only] DIR...
//! ```

use karplint::parse::{options, split_documents};
use rayon::prelude::*;
use serde::de::IgnoredAny;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let mut threads = None;
    let mut read_only = false;
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "-j" | "--threads" => threads = args.next().and_then(|n| n.parse::<usize>().ok()),
            "--read-only" => read_only = true,
            _ => roots.push(PathBuf::from(a)),
        }
    }
    if let Some(n) = threads {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global();
    }
    let start = Instant::now();
    let mut files = Vec::new();
    for root in &roots {
        let walker = walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| {
                e.depth() == 0
                    || !(e.file_type().is_dir()
                        && e.file_name().to_str().is_some_and(|n| n.starts_with('.')))
            });
        for e in walker.flatten() {
            let ext = e.path().extension().and_then(|x| x.to_str());
            if e.file_type().is_file() && matches!(ext, Some("yaml" | "yml" | "json")) {
                files.push(e.into_path());
            }
        }
    }
    // (bytes, documents, documents that failed to parse)
    let (bytes, docs, errors) = files
        .par_iter()
        .map(|p| {
            let Ok(bytes) = std::fs::read(p) else {
                return (0, 0, 0);
            };
            let n = bytes.len();
            if read_only {
                return (n, 0, 0);
            }
            let Ok(text) = String::from_utf8(bytes) else {
                return (n, 0, 1);
            };
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            let parts = split_documents(text);
            let parse = |d: &str| -> (usize, usize) {
                let r = serde_saphyr::with_deserializer_from_str_with_options(d, options(), |de| {
                    <IgnoredAny as serde::Deserialize>::deserialize(de)
                });
                match r {
                    Ok(_) => (1, 0),
                    Err(_) => (1, 1),
                }
            };
            let (d, e) = if parts.len() > 64 {
                parts
                    .par_chunks(64)
                    .map(|c| c.iter().map(|(_, d)| parse(d)).fold((0, 0), add2))
                    .reduce(|| (0, 0), add2)
            } else {
                parts.iter().map(|(_, d)| parse(d)).fold((0, 0), add2)
            };
            (n, d, e)
        })
        .reduce(|| (0, 0, 0), |a, b| (a.0 + b.0, a.1 + b.1, a.2 + b.2));
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{} files, {:.1} MB, {} documents ({} with errors) in {:.3} s: {:.1} MB/s",
        files.len(),
        bytes as f64 / 1e6,
        docs,
        errors,
        secs,
        bytes as f64 / 1e6 / secs
    );
}

fn add2(a: (usize, usize), b: (usize, usize)) -> (usize, usize) {
    (a.0 + b.0, a.1 + b.1)
}
