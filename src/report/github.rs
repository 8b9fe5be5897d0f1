//! GitHub Actions workflow commands (`--format github`): one `::error`, `::warning` or
//! `::notice` line per finding, which GitHub shows as an annotation on the exact lines and
//! columns of the pull request diff.
//!
//! Escaping follows the runner's rules: in the message `%`, `\r` and `\n` are
//! percent-encoded; in properties `:` and `,` are too, so a path or title cannot end the
//! property list early. Control characters from the manifests are escaped before that
//! (`\u{1b}`, see [`super::escape`]): the log viewer would run their ANSI sequences.

use super::{Report, Texts, escape};
use crate::diagnostic::Severity;

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

pub fn render(report: &Report, texts: &Texts) -> String {
    let mut out = String::new();
    for f in &report.findings {
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
        out.push_str(&format!(
            "::{} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
            command(f.severity),
            escape_property(&escape::line(&report.sources[f.source].name)),
            p.line,
            p.column,
            p.end_line,
            p.end_column,
            escape_property(&format!("karplint {}", f.rule)),
            escape_data(&escape::text(&message)),
        ));
    }
    // The run's notes, a check that did not run as a warning, and each skipped file.
    for n in &report.notes {
        out.push_str(&format!(
            "::{} title={}::{}\n",
            if n.is_warning() { "warning" } else { "notice" },
            escape_property(&format!("karplint {}", n.kind)),
            escape_data(&escape::text(&n.message)),
        ));
    }
    for (id, reason) in &report.skipped {
        out.push_str(&format!(
            "::notice file={},title=karplint skipped::{}\n",
            escape_property(&escape::line(&report.sources[*id].name)),
            escape_data(&escape::text(&format!("skipped: {reason}"))),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(escape_data("50% of\r\nnodes"), "50%25 of%0D%0Anodes");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
