//! Markdown output (`--format markdown`): a summary line and a findings table, for
//! `$GITHUB_STEP_SUMMARY` and pull-request comments. Cell text is escaped so a `|` in a
//! message cannot break the table and a newline cannot end the row; any other control
//! character is written as `\u{1b}` (see [`super::escape`]).
//!
//! Errors come first, then warnings, then infos, so what to fix first tops the table; and
//! the report stays below the 1 MiB GitHub keeps of a step summary: rows that do not fit
//! are counted in a closing line that says where the full report is.

use super::{Report, Shown, Texts, escape};
use crate::diagnostic::{Finding, Severity};

/// GitHub keeps 1 MiB of a job's step summary; a report is cut short of it, leaving room
/// for the closing lines.
pub const LIMIT: usize = 1024 * 1024 - 16 * 1024;

/// Bytes left under [`LIMIT`].
pub struct Budget {
    used: usize,
    limit: usize,
}

impl Budget {
    pub fn new(used: usize) -> Self {
        Budget { used, limit: LIMIT }
    }

    /// Spends `n` bytes if they fit.
    pub fn take(&mut self, n: usize) -> bool {
        if self.used.saturating_add(n) > self.limit {
            return false;
        }
        self.used += n;
        true
    }
}

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
            // Brackets open links and images (`[x](url)`, `![x](url)`).
            '[' => out.push_str("\\["),
            ']' => out.push_str("\\]"),
            _ => out.push_str(&escape::text(c.encode_utf8(&mut [0; 4]))),
        }
    }
    no_autolinks(&out)
}

/// `s` with GitHub's bare-URL autolinks (`https://…`, `www.…`) broken by a zero-width
/// space, so that a name or value from a manifest never becomes a live link.
fn no_autolinks(s: &str) -> String {
    s.replace("://", ":/\u{200b}/")
        .replace("www.", "www\u{200b}.")
        .replace("WWW.", "WWW\u{200b}.")
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

/// Renders the report; `full` names where the whole report is (another output of the
/// run), for the line that says what was left out.
pub fn render(report: &Report, texts: &Texts, shown: Shown, full: Option<&str>) -> String {
    render_within(report, texts, shown, full, LIMIT)
}

/// [`render`] within `limit` bytes (`karplint diff` fits its comment in less).
pub fn render_within(
    report: &Report,
    texts: &Texts,
    shown: Shown,
    full: Option<&str>,
    limit: usize,
) -> String {
    let s = &report.summary;
    let mut out = String::from("## karplint\n\n");
    out.push_str(&format!(
        "**{}** in {} file(s), {} object(s)",
        super::human::severity_counts(s.errors, s.warnings, s.infos),
        s.files,
        s.objects
    ));
    if s.suppressed > 0 {
        out.push_str(&format!("; {} suppressed", s.suppressed));
    }
    if let Some(n) = s.baselined {
        out.push_str(&format!("; {n} finding(s) in the baseline"));
    }
    if s.skipped > 0 {
        out.push_str(&format!("; {} file(s) skipped", s.skipped));
    }
    out.push_str("\n\n");
    let findings = shown.most_severe_first(report);
    if findings.is_empty() {
        out.push_str("No findings.\n");
    } else {
        out.push_str("| Severity | Rule | Location | Object | Message | Fix |\n");
        out.push_str("|---|---|---|---|---|---|\n");
        let mut budget = Budget {
            used: out.len(),
            limit,
        };
        for (i, f) in findings.iter().enumerate() {
            let row = row(report, texts, f);
            if !budget.take(row.len()) {
                out.push_str(&left_out(&findings[i..], findings.len(), full));
                break;
            }
            out.push_str(&row);
        }
    }
    if !shown.quiet {
        // A check that did not run first, as a warning: a summary must not read as a pass
        // that checked everything.
        let (warnings, others): (Vec<_>, Vec<_>) =
            report.notes.iter().partition(|n| n.is_warning());
        for note in warnings {
            out.push_str(&format!("\n> **warning:** {}\n", cell(&note.message)));
        }
        for note in others {
            out.push_str(&format!("\n> note: {}\n", cell(&note.message)));
        }
    }
    out
}

/// One table row.
fn row(report: &Report, texts: &Texts, f: &Finding) -> String {
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
    format!(
        "| {} | {} | {} | {} | {} | {} |\n",
        badge(f.severity),
        code(f.rule),
        code(&location),
        object,
        message,
        fix(&f.help),
    )
}

/// The Fix cell: the help's prose as text, and each run of its indented lines (the YAML to
/// add) as a `<pre>` block with the common indentation taken off and the rest kept, one
/// `<br>` per line: a table cell holds one line of Markdown, so no fenced block fits in it.
fn fix(help: &str) -> String {
    let mut out = String::new();
    let mut block: Vec<&str> = Vec::new();
    let flush = |block: &mut Vec<&str>, out: &mut String| {
        if block.is_empty() {
            return;
        }
        let indent = (block.iter())
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.len() - l.trim_start().len())
            .min()
            .unwrap_or(0);
        let lines: Vec<String> = (block.iter())
            .map(|l| pre_line(l.get(indent..).unwrap_or("").trim_end()))
            .collect();
        out.push_str(&format!("<pre>{}</pre>", lines.join("<br>")));
        block.clear();
    };
    for line in help.lines() {
        if line.starts_with([' ', '\t']) && !line.trim().is_empty() {
            block.push(line);
            continue;
        }
        flush(&mut block, &mut out);
        if !out.is_empty() && !out.ends_with("</pre>") {
            out.push_str("<br>");
        }
        out.push_str(&cell(line));
    }
    flush(&mut block, &mut out);
    out
}

/// One line of a `<pre>` block in a table cell: HTML and the cell's `|` escaped, spaces
/// kept, nothing made a link.
fn pre_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            _ => out.push_str(&escape::text(c.encode_utf8(&mut [0; 4]))),
        }
    }
    no_autolinks(&out)
}

/// The line after a table cut short: what was left out, and where all of it is.
fn left_out(rest: &[&Finding], total: usize, full: Option<&str>) -> String {
    let count = |s: Severity| rest.iter().filter(|f| f.severity == s).count();
    let whole = match full {
        Some(file) => format!("the full report is in {}", code(file)),
        None => "run `karplint --format json` for all of them".to_string(),
    };
    format!(
        "\n**{} of {total} findings shown**: {} more left out to stay under GitHub's 1 MiB step summary limit; {whole}\n",
        total - rest.len(),
        super::human::severity_counts(
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped() {
        assert_eq!(cell("a|b\nc <d>"), "a\\|b<br>c &lt;d&gt;");
        assert_eq!(code("x|y`"), "`x\\|y'`");
        assert_eq!(cell("a\u{1b}[2J\rb"), "a\\u{1b}\\[2Jb");
        assert_eq!(code("a\u{7}"), "`a\\u{7}`");
    }

    #[test]
    fn fix_yaml_is_a_pre_block_with_its_indentation() {
        let help = "add this toleration to the pod spec's\n`tolerations`:\n  - key: \"a|b\"\n    operator: \"Exists\"\nthen apply it";
        assert_eq!(
            fix(help),
            "add this toleration to the pod spec's<br>`tolerations`:<pre>- key: \"a\\|b\"<br>  operator: \"Exists\"</pre>then apply it"
        );
        assert_eq!(fix("set requests"), "set requests");
        assert_eq!(fix("x:\n    <y>"), "x:<pre>&lt;y&gt;</pre>");
    }

    #[test]
    fn links_and_images_from_names_are_inert() {
        let c = cell("![x](https://evil.example/p.png) [y](javascript:alert(1)) www.evil.example");
        assert!(!c.replace("\\]", "").contains("]("), "{c}");
        assert!(!c.contains("://"), "{c}");
        assert!(!c.contains("www."), "{c}");
    }

    /// A table over the limit is cut between rows, errors kept first, and says what it
    /// left out and where the rest is.
    #[test]
    fn tables_are_capped_with_a_closing_line() {
        let mut text = String::new();
        for i in 0..60 {
            text.push_str(&format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  namespace: team\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"
            ));
        }
        let report = crate::engine::lint_str(&text).expect("lints");
        let texts = Texts::load_with(&report, false);
        let whole = render_within(&report, &texts, Shown::default(), None, usize::MAX);
        let limit = whole.len() / 2;
        let cut = render_within(&report, &texts, Shown::default(), Some("k.json"), limit);
        assert!(cut.len() < limit + 1024, "{} bytes over {limit}", cut.len());
        let rows = cut.lines().filter(|l| l.starts_with("| 🟡")).count();
        let all = report.findings.len();
        assert!(rows > 0 && rows < all, "{rows} of {all}");
        assert!(
            cut.contains(&format!("**{rows} of {all} findings shown**")),
            "{cut}"
        );
        assert!(cut.contains("the full report is in `k.json`"), "{cut}");
    }
}
