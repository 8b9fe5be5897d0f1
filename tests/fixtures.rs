//! One test per rule fixture, named `<rule>::<file>`, so that one failing fixture does not
//! hide the others (`cargo test --test fixtures untolerated-taint` runs one rule's).
//!
//! A fixture marks the lines its rule must report on, as clippy's UI tests and compiletest's
//! `//~` annotations do: a line where the rule reports a finding ends in `# expect: <rule>`
//! (the id repeated, comma-separated, for several findings on one line). A `fire*` file must
//! report exactly the marked lines; a `quiet*` file must report nothing and mark nothing.
//! `KARPLINT_BLESS=1 cargo test --test fixtures` rewrites the markers of the `fire*` files
//! from what the rule reports, for review in the diff.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    reason = "a test fails by panicking"
)]

mod common;
use common::{facts_for, rule_ids};
use karplint::engine::{LintOptions, lint};
use karplint::report::Texts;
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What marks a line: `# expect: rule[, rule…]` at its end.
const MARKER: &str = " # expect: ";

fn main() {
    let args = Arguments::from_args();
    let bless = std::env::var_os("KARPLINT_BLESS").is_some();
    let mut trials = Vec::new();
    for id in rule_ids() {
        for path in fixtures(id) {
            let name = format!(
                "{id}::{}",
                path.file_stem().and_then(|s| s.to_str()).unwrap_or("?")
            );
            trials.push(Trial::test(name, move || check(id, &path, bless)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The `fire*` and `quiet*` files of a rule's fixture folder.
fn fixtures(id: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(format!("fixtures/{id}"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("fire") || n.starts_with("quiet"))
    });
    v.sort();
    v
}

/// The 1-based lines where rule `id` reports on the file linted alone, each as often as it
/// reports there.
fn reported(id: &str, path: &Path) -> Result<Vec<usize>, Failed> {
    let opts = LintOptions {
        paths: vec![path.to_path_buf()],
        cluster: facts_for(id),
        ..Default::default()
    };
    let report = lint(&opts, &mut std::io::empty())
        .map_err(|e| format!("lint failed: {e}"))?
        .report;
    let texts = Texts::load(&report);
    let mut lines: Vec<usize> = report
        .findings
        .iter()
        .filter(|f| f.rule == id)
        .map(|f| texts.position(f.source, f.span).line)
        .collect();
    lines.sort_unstable();
    Ok(lines)
}

/// The lines the file marks for rule `id`, and the markers naming another rule.
fn marked(id: &str, text: &str) -> (Vec<usize>, Vec<String>) {
    let mut lines = Vec::new();
    let mut others = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((_, ids)) = line.split_once(MARKER) else {
            continue;
        };
        for rule in ids.split(',').map(str::trim) {
            if rule == id {
                lines.push(i + 1);
            } else {
                others.push(format!("line {}: {rule}", i + 1));
            }
        }
    }
    (lines, others)
}

fn check(id: &str, path: &Path, bless: bool) -> Result<(), Failed> {
    let fire = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("fire"));
    if bless && fire {
        rewrite_markers(id, path)?;
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let (expected, others) = marked(id, &text);
    if !others.is_empty() {
        return Err(format!("markers for another rule: {others:?}").into());
    }
    let got = reported(id, path)?;
    match (fire, got == expected) {
        (true, _) if got.is_empty() => Err(format!("{id} does not fire").into()),
        (false, _) if !expected.is_empty() => {
            Err(format!("a quiet fixture marks lines {expected:?}").into())
        }
        (_, true) => Ok(()),
        (_, false) => Err(format!(
            "{id} reports on lines {got:?}, the fixture marks {expected:?} \
             (KARPLINT_BLESS=1 rewrites the markers)"
        )
        .into()),
    }
}

/// Rewrites the markers of a `fire*` file from the lines the rule reports on.
fn rewrite_markers(id: &str, path: &Path) -> Result<(), Failed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let bare: String = text
        .split_inclusive('\n')
        .map(|l| match l.split_once(MARKER) {
            Some((code, _)) if l.ends_with('\n') => format!("{code}\n"),
            Some((code, _)) => code.to_string(),
            None => l.to_string(),
        })
        .collect();
    std::fs::write(path, &bare).map_err(|e| format!("write: {e}"))?;
    let mut counts: BTreeMap<usize, usize> = BTreeMap::new();
    for line in reported(id, path)? {
        *counts.entry(line).or_default() += 1;
    }
    let marked: String = bare
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| match counts.get(&(i + 1)) {
            Some(&n) => {
                let (code, nl) = l.strip_suffix('\n').map_or((l, ""), |c| (c, "\n"));
                format!("{code}{MARKER}{}{nl}", vec![id; n].join(", "))
            }
            None => l.to_string(),
        })
        .collect();
    std::fs::write(path, marked).map_err(|e| format!("write: {e}"))?;
    Ok(())
}
