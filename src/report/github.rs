//! GitHub Actions workflow commands (`--format github`): one `::error`, `::warning` or
//! `::notice` line per finding, which GitHub shows as an annotation on the exact lines and
//! columns of the pull request diff.
//!
//! Escaping follows the runner's rules: in the message `%`, `\r` and `\n` are
//! percent-encoded; in properties `:` and `,` are too, so a path or title cannot end the
//! property list early. Control characters from the manifests are escaped before that
//! (`\u{1b}`, see [`super::escape`]): the log viewer would run their ANSI sequences.
//!
//! GitHub turns at most 10 error, 10 warning and 10 notice annotations of a step into
//! annotations, and 50 of a job (actions/toolkit, docs/problem-matchers.md, "Limitations");
//! the rest stay lines of the log. So errors come first, then warnings, then notices, the
//! run's notes first among their level (a check that did not run is never crowded out),
//! and a first line says how many annotations GitHub will show.

use super::{Report, Shown, Texts, escape};
use crate::diagnostic::{Finding, Severity};

/// Annotations of one level GitHub shows per step.
pub const PER_STEP: usize = 10;
/// Annotations GitHub shows per job, all steps together.
pub const PER_JOB: usize = 50;

/// Escapes the message part of a workflow command.
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value of a workflow command.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

pub fn render(report: &Report, texts: &Texts, shown: Shown) -> String {
    let findings = shown.most_severe_first(report);
    let notes = if shown.quiet {
        &[][..]
    } else {
        &report.notes[..]
    };
    let skipped = if shown.quiet {
        &[][..]
    } else {
        &report.skipped[..]
    };
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let warning_notes = notes.iter().filter(|n| n.is_warning()).count();
    let levels = [
        count(Severity::Error),
        count(Severity::Warning) + warning_notes,
        count(Severity::Info) + notes.len() - warning_notes + skipped.len(),
    ];
    let mut out = annotation_count(levels);
    let by_level = |s: Severity| findings.iter().filter(move |f| f.severity == s);
    for f in by_level(Severity::Error) {
        out.push_str(&finding(report, texts, f));
    }
    // The run's notes, a check that did not run as a warning, and each skipped file.
    let note = |n: &super::Note| {
        format!(
            "::{} title={}::{}\n",
            if n.is_warning() { "warning" } else { "notice" },
            escape_property(&format!("karplint {}", n.kind)),
            escape_data(&escape::text(&n.message)),
        )
    };
    for n in notes.iter().filter(|n| n.is_warning()) {
        out.push_str(&note(n));
    }
    for f in by_level(Severity::Warning) {
        out.push_str(&finding(report, texts, f));
    }
    for n in notes.iter().filter(|n| !n.is_warning()) {
        out.push_str(&note(n));
    }
    for (id, reason) in skipped {
        out.push_str(&format!(
            "::notice file={},title=karplint skipped::{}\n",
            escape_property(&escape::line(&report.sources[*id].name)),
            escape_data(&escape::text(&format!("skipped: {reason}"))),
        ));
    }
    for f in by_level(Severity::Info) {
        out.push_str(&finding(report, texts, f));
    }
    out
}

/// The first line: how many annotations of each level the run makes, and how many of them
/// GitHub will show. A plain log line, not an annotation, so it takes no annotation's place.
fn annotation_count([errors, warnings, notices]: [usize; 3]) -> String {
    let shown = [errors, warnings, notices].map(|n| n.min(PER_STEP));
    let total = errors + warnings + notices;
    let on_page = shown.iter().sum::<usize>().min(PER_JOB);
    let mut out = format!(
        "karplint: {errors} error, {warnings} warning and {notices} notice annotation(s); GitHub shows {on_page} of them"
    );
    if on_page < total {
        out.push_str(&format!(
            " (at most {PER_STEP} of each level per step and {PER_JOB} per job): the other {} are in this log only, and all of them in `--format sarif` or `--format json`",
            total - on_page
        ));
    }
    out.push('\n');
    out
}

/// The workflow command of one finding.
fn finding(report: &Report, texts: &Texts, f: &Finding) -> String {
    let p = texts.position(f.source, f.span);
    let mut message = f.message.clone();
    if let Some(o) = &f.object {
        message.push_str(&format!(" ({o})"));
    }
    if !f.help.is_empty() {
        message.push_str(&format!("\nhelp: {}", f.help));
    }
    for r in &f.related {
        let rp = texts.position(r.source, r.span);
        message.push_str(&format!(
            "\nnote: {}:{}:{}: {}",
            escape::line(&report.sources[r.source].name),
            rp.line,
            rp.column,
            r.message
        ));
    }
    format!(
        "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
        command(f.severity),
        escape_property(&escape::line(&report.sources[f.source].name)),
        p.line,
        p.column,
        p.end_line,
        p.end_column,
        escape_property(&format!("karplint {}", f.rule)),
        escape_data(&escape::text(&message)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_data("50% of\r\nnodes"), "50%25 of%0D%0Anodes");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn the_first_line_counts_what_github_shows() {
        assert_eq!(
            annotation_count([2, 3, 0]),
            "karplint: 2 error, 3 warning and 0 notice annotation(s); GitHub shows 5 of them\n"
        );
        let cut = annotation_count([25, 4, 12]);
        assert!(cut.contains("GitHub shows 24 of them"), "{cut}");
        assert!(cut.contains("the other 17 are in this log only"), "{cut}");
    }
}
