//! Markdown output (`--format markdown`): a summary line and a findings table, for
//! `$GITHUB_STEP_SUMMARY` and pull-request comments. Cell text is escaped so a `|` in a
//! message cannot break the table and a newline cannot end the row; any other control
//! character is written as `\u{1b}` (see [`super::escape`]).

use super::{Report, Texts, escape};
use crate::diagnostic::Severity;

/// Escapes text for a GitHub-flavoured Markdown table cell.
pub fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' => out.push_str("<br>"),
            '\r' => {}
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push_str(&escape::text(c.encode_utf8(&mut [0; 4]))),
        }
    }
    out
}

/// Escapes text placed inside a code span in a table cell.
fn code(s: &str) -> String {
    format!(
        "`{}`",
        escape::line(s).replace('`', "'").replace('|', "\\|")
    )
}

fn badge(s: Severity) -> &'static str {
    match s {
        Severity::Error => "🔴 error",
        Severity::Warning => "🟡 warning",
        Severity::Info => "🔵 info",
    }
}

pub fn render(report: &Report, texts: &Texts) -> String {
    let s = &report.summary;
    let mut out = String::from("## karplint\n\n");
    out.push_str(&format!(
        "**{} error(s), {} warning(s), {} info(s)** in {} file(s), {} object(s)",
        s.errors, s.warnings, s.infos, s.files, s.objects
    ));
    if s.suppressed > 0 {
        out.push_str(&format!("; {} suppressed", s.suppressed));
    }
    if s.skipped > 0 {
        out.push_str(&format!("; {} file(s) skipped", s.skipped));
    }
    out.push_str("\n\n");
    if report.findings.is_empty() {
        out.push_str("No findings.\n");
    } else {
        out.push_str("| Severity | Rule | Location | Object | Message | Fix |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        for f in &report.findings {
            let p = texts.position(f.source, f.span);
            let location = format!("{}:{}:{}", report.sources[f.source].name, p.line, p.column);
            let object = f
                .object
                .as_ref()
                .map(|o| cell(&o.to_string()))
                .unwrap_or_default();
            let mut message = cell(&f.message);
            for r in &f.related {
                let rp = texts.position(r.source, r.span);
                message.push_str(&format!(
                    "<br>note: {} {}",
                    code(&format!(
                        "{}:{}:{}",
                        report.sources[r.source].name, rp.line, rp.column
                    )),
                    cell(&r.message)
                ));
            }
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} |\n",
                badge(f.severity),
                code(f.rule),
                code(&location),
                object,
                message,
                cell(&f.help),
            ));
        }
    }
    for note in &report.notes {
        out.push_str(&format!("\n> note: {}\n", cell(&note.message)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped() {
        assert_eq!(cell("a|b\nc <d>"), "a\\|b<br>c &lt;d&gt;");
        assert_eq!(code("x|y`"), "`x\\|y'`");
        assert_eq!(cell("a\u{1b}[2J\rb"), "a\\u{1b}[2Jb");
        assert_eq!(code("a\u{7}"), "`a\\u{7}`");
    }
}
