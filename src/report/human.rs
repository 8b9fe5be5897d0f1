//! Human output, in rustc's form: a header `error[rule-id]: message` (the severity in
//! words, then the rule), the source snippet with a primary label under the exact key or
//! value (drawn by miette), each related location as a `note:` with its own snippet, the
//! help; then a closing summary with the counts per rule and where to read more
//! (`karplint explain RULE`).
//!
//! Each finding and note hands miette a [`Snippet`]: only the lines around its span, cut
//! through the source's line index, so a file with thousands of findings is not copied and
//! rescanned for each one. Text from the manifests (messages, names, the quoted lines) is
//! escaped first (see [`super::escape`]): no control character reaches the terminal.

use super::escape::{self, Sanitized};
use super::{Position, Report, Shown, Texts};
use crate::diagnostic::{Finding, Severity};
use crate::model::SourceId;
use anstyle::{AnsiColor, Style as Ansi};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};
use std::collections::BTreeMap;
use std::fmt;

/// Lines of context miette shows either side of a label; a snippet holds just these.
const CONTEXT_LINES: usize = 1;

/// How to draw reports.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

/// One piece miette draws: a snippet with its label, or the help alone. Its message is
/// empty: karplint writes the header line itself, and drops the line miette gives it.
struct Part {
    severity: miette::Severity,
    source: Option<Snippet>,
    labels: Vec<LabeledSpan>,
    help: String,
}

/// The lines of one source around one span, as miette quotes them: control characters
/// replaced by one visible character each, so the label columns still line up, and the
/// span moved to match.
struct Snippet {
    /// The file name, escaped.
    name: String,
    text: String,
    /// 0-based line of the source where `text` starts.
    first_line: usize,
}

impl Snippet {
    /// The snippet of source `id` around `pos`, and `pos` as an offset and length in it.
    fn around(
        report: &Report,
        texts: &Texts,
        id: SourceId,
        pos: Position,
    ) -> (Self, (usize, usize)) {
        let lines = texts.lines_around(id, pos, CONTEXT_LINES);
        let clean = Sanitized::new(counted(lines.text));
        let local = |offset: usize| clean.map(offset.saturating_sub(lines.start));
        let start = local(pos.offset);
        let end = local(pos.offset.saturating_add(pos.length)).max(start);
        let snippet = Snippet {
            name: escape::line(&report.sources[id].name).into_owned(),
            text: clean.text,
            first_line: lines.first_line,
        };
        (snippet, (start, end - start))
    }
}

impl SourceCode for Snippet {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner =
            self.text
                .as_str()
                .read_span(span, context_lines_before, context_lines_after)?;
        let offset = inner.span().offset();
        // The column in characters, as every other format counts it.
        let line_start = self
            .text
            .get(..offset)
            .and_then(|t| t.rfind('\n'))
            .map_or(0, |i| i + 1);
        let column = self
            .text
            .get(line_start..offset)
            .map_or(inner.column(), |t| t.chars().count());
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            self.first_line + inner.line(),
            column,
            inner.line_count(),
        )))
    }
}

impl fmt::Debug for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("part")
    }
}
impl fmt::Display for Part {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        Ok(())
    }
}
impl std::error::Error for Part {}

impl Diagnostic for Part {
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        (!self.help.is_empty()).then(|| Box::new(&self.help) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
}

/// The styles of the header lines (anstyle), drawn when colour is on.
struct Paint {
    color: bool,
}

impl Paint {
    fn severity(&self, s: Severity) -> Ansi {
        let color = match s {
            Severity::Error => AnsiColor::Red,
            Severity::Warning => AnsiColor::Yellow,
            Severity::Info => AnsiColor::Cyan,
        };
        BOLD.fg_color(Some(color.into()))
    }

    /// `text` in `style`, reset after.
    fn paint(&self, style: Ansi, text: &str) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }
}

const BOLD: Ansi = Ansi::new().bold();
const NOTE: Ansi = BOLD.fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));

/// Draws one finding: header, snippet, notes, help.
struct Drawer {
    handler: GraphicalReportHandler,
    paint: Paint,
}

impl Drawer {
    fn new(style: Style) -> Self {
        let theme = if style.color {
            GraphicalTheme::unicode()
        } else {
            GraphicalTheme::unicode_nocolor()
        };
        let handler = GraphicalReportHandler::new_themed(theme)
            .with_width(style.width)
            .with_links(false)
            .with_urls(false)
            .with_context_lines(CONTEXT_LINES);
        Drawer {
            handler,
            paint: Paint { color: style.color },
        }
    }

    /// What miette draws for `part`, without the (empty) message line it starts with.
    fn part(&self, out: &mut String, part: &Part) {
        let mut drawn = String::new();
        if self.handler.render_report(&mut drawn, part).is_err() {
            return;
        }
        if let Some((_, rest)) = drawn.split_once('\n') {
            out.push_str(rest);
        }
    }

    fn finding(&self, out: &mut String, report: &Report, texts: &Texts, f: &Finding) {
        let severity = self.paint.paint(
            self.paint.severity(f.severity),
            &format!("{}[{}]", f.severity, f.rule),
        );
        let message = self
            .paint
            .paint(BOLD, &format!(": {}", escape::text(&f.message)));
        out.push_str(&format!("{severity}{message}\n"));
        let (source, span) =
            Snippet::around(report, texts, f.source, texts.position(f.source, f.span));
        let label = (!f.label.is_empty()).then(|| escape::text(&f.label).into_owned());
        self.part(
            out,
            &Part {
                severity: miette_severity(f.severity),
                source: Some(source),
                labels: vec![LabeledSpan::new_primary_with_span(label, span)],
                help: String::new(),
            },
        );
        for r in &f.related {
            let (source, span) =
                Snippet::around(report, texts, r.source, texts.position(r.source, r.span));
            let note = self.paint.paint(NOTE, "note");
            out.push_str(&format!("{note}: {}\n", escape::text(&r.message)));
            self.part(
                out,
                &Part {
                    severity: miette::Severity::Advice,
                    source: Some(source),
                    labels: vec![LabeledSpan::new_with_span(None, span)],
                    help: String::new(),
                },
            );
        }
        if !f.help.is_empty() {
            self.part(
                out,
                &Part {
                    severity: miette_severity(f.severity),
                    source: None,
                    labels: Vec::new(),
                    help: escape::text(&f.help).into_owned(),
                },
            );
        }
    }
}

fn miette_severity(s: Severity) -> miette::Severity {
    match s {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    }
}

/// Renders every finding and the summary.
pub fn render(report: &Report, texts: &Texts, style: Style) -> String {
    render_shown(report, texts, style, Shown::default())
}

/// Renders the findings `shown` lists, then (unless quiet) the summary.
pub fn render_shown(report: &Report, texts: &Texts, style: Style, shown: Shown) -> String {
    let drawer = Drawer::new(style);
    let mut out = String::new();
    for f in report.findings.iter().filter(|f| shown.includes(f)) {
        drawer.finding(&mut out, report, texts, f);
        out.push('\n');
    }
    if !shown.quiet {
        out.push_str(&by_rule(report));
        out.push_str(&summary_text(report));
    }
    out
}

/// One line per finding: `path:line:col: severity[rule] message`, then (unless quiet) the
/// summary.
pub fn render_concise(report: &Report, texts: &Texts, style: Style, shown: Shown) -> String {
    let paint = Paint { color: style.color };
    let mut out = String::new();
    for f in report.findings.iter().filter(|f| shown.includes(f)) {
        let p = texts.position(f.source, f.span);
        out.push_str(&format!(
            "{}:{}:{}: {} {}\n",
            escape::line(&report.sources[f.source].name),
            p.line,
            p.column,
            paint.paint(
                paint.severity(f.severity),
                &format!("{}[{}]", f.severity, f.rule)
            ),
            escape::line(&f.message)
        ));
    }
    if !shown.quiet {
        out.push_str(&summary_text(report));
    }
    out
}

/// Findings per rule and severity, most severe and most frequent first.
fn counts(report: &Report) -> Vec<(&'static str, [usize; 3])> {
    let mut by: BTreeMap<&'static str, [usize; 3]> = BTreeMap::new();
    for f in &report.findings {
        let c = by.entry(f.rule).or_default();
        match f.severity {
            Severity::Error => c[0] += 1,
            Severity::Warning => c[1] += 1,
            Severity::Info => c[2] += 1,
        }
    }
    let mut rows: Vec<_> = by.into_iter().collect();
    // Stable over the rules' alphabetical order.
    rows.sort_by_key(|(_, c)| std::cmp::Reverse(*c));
    rows
}

/// The closing counts per rule, and where to read what a rule checks.
fn by_rule(report: &Report) -> String {
    let rows = counts(report);
    let Some((first, _)) = rows.first() else {
        return String::new();
    };
    let width = rows.iter().map(|(r, _)| r.len()).max().unwrap_or(0);
    let mut out = String::from("findings by rule:\n");
    for (rule, c) in &rows {
        let parts: Vec<String> = [("error", c[0]), ("warning", c[1]), ("info", c[2])]
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| format!("{n} {s}(s)"))
            .collect();
        out.push_str(&format!("  {rule:<width$}  {}\n", parts.join(", ")));
    }
    out.push_str(&format!(
        "see `karplint explain RULE` for what a rule checks and how to fix it, e.g. `karplint explain {first}`\n"
    ));
    out
}

/// `--statistics`: a table of findings per rule and severity, with totals, then (unless
/// quiet) the summary.
pub fn statistics(report: &Report, shown: Shown) -> String {
    let rows = counts(report);
    let width = rows
        .iter()
        .map(|(r, _)| r.len())
        .chain(["RULE".len(), "TOTAL".len()])
        .max()
        .unwrap_or(0);
    let line = |name: &str, c: [usize; 3]| {
        format!(
            "{name:<width$}  {:>5}  {:>7}  {:>4}  {:>5}\n",
            c[0],
            c[1],
            c[2],
            c[0] + c[1] + c[2]
        )
    };
    let mut out = format!(
        "{:<width$}  {:>5}  {:>7}  {:>4}  {:>5}\n",
        "RULE", "ERROR", "WARNING", "INFO", "TOTAL"
    );
    let mut total = [0; 3];
    for (rule, c) in &rows {
        out.push_str(&line(rule, *c));
        for i in 0..3 {
            total[i] += c[i];
        }
    }
    out.push_str(&line("TOTAL", total));
    if !shown.quiet {
        out.push_str(&summary_text(report));
    }
    out
}

fn counted(s: &str) -> &str {
    #[cfg(test)]
    SOURCE_BYTES.with(|c| c.set(c.get() + s.len()));
    s
}

#[cfg(test)]
#[test]
fn counts_are_in_their_number() {
    assert_eq!(severity_counts(0, 0, 0), "0 errors, 0 warnings, 0 infos");
    assert_eq!(severity_counts(1, 1, 1), "1 error, 1 warning, 1 info");
    assert_eq!(severity_counts(2, 3, 4), "2 errors, 3 warnings, 4 infos");
}

#[cfg(test)]
thread_local! {
    static SOURCE_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// "1 error, 2 warnings, 0 infos": the counts by severity, each in its number.
pub(crate) fn severity_counts(errors: usize, warnings: usize, infos: usize) -> String {
    let word = |n: usize, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    format!(
        "{}, {}, {}",
        word(errors, "error"),
        word(warnings, "warning"),
        word(infos, "info")
    )
}

/// Skipped files the summary names; the others are counted.
const SKIPPED_LINES: usize = 10;

/// The closing lines: counts, then each skipped file with its reason (the first
/// [`SKIPPED_LINES`]), then notes.
pub fn summary_text(report: &Report) -> String {
    let s = &report.summary;
    let mut out = format!(
        "karplint: {} file(s), {} document(s), {} object(s): {}",
        s.files,
        s.documents,
        s.objects,
        severity_counts(s.errors, s.warnings, s.infos)
    );
    if s.suppressed > 0 {
        out.push_str(&format!(", {} suppressed", s.suppressed));
    }
    if let Some(n) = s.baselined {
        out.push_str(&format!(", {n} finding(s) in the baseline"));
    }
    if report.not_objects > 0 {
        out.push_str(&format!(
            "; {} document(s) without apiVersion/kind ignored",
            report.not_objects
        ));
    }
    if s.skipped > 0 {
        out.push_str(&format!("; {} file(s) skipped", s.skipped));
    }
    out.push('\n');
    for (id, reason) in report.skipped.iter().take(SKIPPED_LINES) {
        out.push_str(&format!(
            "  skipped {}: {}\n",
            escape::line(&report.sources[*id].name),
            escape::text(&reason.to_string())
        ));
    }
    if let Some(more) = report.skipped.len().checked_sub(SKIPPED_LINES)
        && more > 0
    {
        out.push_str(&format!(
            "  and {more} more file(s) skipped (`--format json` lists them all)\n"
        ));
    }
    for note in &report.notes {
        out.push_str(&format!("  note: {}\n", escape::text(&note.message)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many findings in one file: the report hands miette a few lines around each span,
    /// never the whole file again (handing it the whole file per finding, 8,000 findings in a
    /// 1.3 MB file took 46 s).
    #[test]
    fn source_text_is_quoted_line_by_line_not_file_by_finding() {
        let mut text = String::new();
        for i in 0..400 {
            text.push_str(&format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  namespace: team\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"
            ));
        }
        let report = crate::engine::lint_str(&text).expect("lints");
        let related: usize = report.findings.iter().map(|f| f.related.len()).sum();
        let quoted = report.findings.len() + related;
        assert!(quoted >= 400, "{quoted} findings and notes");
        let texts = Texts::load(&report);
        super::super::LINE_INDEXES.with(|c| c.set(0));
        SOURCE_BYTES.with(|c| c.set(0));
        let out = render(
            &report,
            &texts,
            Style {
                color: false,
                width: 100,
            },
        );
        let bytes = SOURCE_BYTES.with(|c| c.get());
        assert_eq!(
            out.matches("warning[missing-resource-requests]: ").count(),
            400
        );
        // The source was indexed when loaded: drawing its findings and notes builds no
        // line index again, whatever their number.
        assert_eq!(super::super::LINE_INDEXES.with(|c| c.get()), 0);
        // A snippet is the span's lines and one line either side: well under 1 KiB here.
        assert!(
            bytes <= quoted * 1024,
            "{bytes} source bytes handed to miette for {quoted} findings and notes in a {}-byte file",
            text.len()
        );
    }
}
