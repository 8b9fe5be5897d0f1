//! Human output: miette's graphical reports, one per finding, with the source snippet, a
//! primary label under the exact key or value, related labels on other objects, the help
//! text and the rule id; then a summary.
//!
//! Each finding and note hands miette a [`Snippet`]: only the lines around its span, cut
//! through the source's line index, so a file with thousands of findings is not copied and
//! rescanned for each one. Text from the manifests (messages, names, the quoted lines) is
//! escaped first (see [`super::escape`]): no control character reaches the terminal.

use super::escape::{self, Sanitized};
use super::{Position, Report, Texts};
use crate::diagnostic::{Finding, Severity};
use crate::model::SourceId;
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};
use std::fmt;

/// Lines of context miette shows either side of a label; a snippet holds just these.
const CONTEXT_LINES: usize = 1;

/// How to draw reports.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

struct Rendered<'a> {
    finding: &'a Finding,
    /// The finding's texts, escaped.
    message: String,
    help: String,
    source: Snippet,
    labels: Vec<LabeledSpan>,
    related: Vec<RelatedNote>,
}

struct RelatedNote {
    message: String,
    source: Snippet,
    label: LabeledSpan,
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

impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for Rendered<'_> {}

impl Diagnostic for Rendered<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.finding.rule))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        (!self.help.is_empty()).then(|| Box::new(&self.help) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn Diagnostic> + 'b>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(self.related.iter().map(|r| r as &dyn Diagnostic)))
    }
}

impl fmt::Debug for RelatedNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl fmt::Display for RelatedNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for RelatedNote {}
impl Diagnostic for RelatedNote {
    fn severity(&self) -> Option<miette::Severity> {
        Some(miette::Severity::Advice)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(std::iter::once(self.label.clone())))
    }
}

/// What miette draws for finding `f`: its escaped texts, the snippet under its span and one
/// snippet per related note.
fn rendered<'a>(report: &Report, texts: &Texts, f: &'a Finding) -> Rendered<'a> {
    let (source, span) = Snippet::around(report, texts, f.source, texts.position(f.source, f.span));
    let label_text = (!f.label.is_empty()).then(|| escape::text(&f.label).into_owned());
    let related = f
        .related
        .iter()
        .map(|r| {
            let (source, span) =
                Snippet::around(report, texts, r.source, texts.position(r.source, r.span));
            RelatedNote {
                message: escape::text(&r.message).into_owned(),
                source,
                label: LabeledSpan::new_with_span(None, span),
            }
        })
        .collect();
    Rendered {
        finding: f,
        message: escape::text(&f.message).into_owned(),
        help: escape::text(&f.help).into_owned(),
        source,
        labels: vec![LabeledSpan::new_primary_with_span(label_text, span)],
        related,
    }
}

/// Renders every finding and the summary.
pub fn render(report: &Report, texts: &Texts, style: Style) -> String {
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
    let mut out = String::new();
    for f in &report.findings {
        let rendered = rendered(report, texts, f);
        if handler.render_report(&mut out, &rendered).is_err() {
            out.push_str(&format!(
                "{}: {}: {}\n",
                rendered.source.name, f.rule, rendered.message
            ));
        }
        out.push('\n');
    }
    out.push_str(&summary_text(report));
    out
}

fn counted(s: &str) -> &str {
    #[cfg(test)]
    SOURCE_BYTES.with(|c| c.set(c.get() + s.len()));
    s
}

#[cfg(test)]
thread_local! {
    static SOURCE_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The closing lines: counts, then each skipped file with its reason, then notes.
pub fn summary_text(report: &Report) -> String {
    let s = &report.summary;
    let mut out = format!(
        "karplint: {} file(s), {} document(s), {} object(s): {} error(s), {} warning(s), {} info(s)",
        s.files, s.documents, s.objects, s.errors, s.warnings, s.infos
    );
    if s.suppressed > 0 {
        out.push_str(&format!(", {} suppressed", s.suppressed));
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
    for (id, reason) in &report.skipped {
        out.push_str(&format!(
            "  skipped {}: {}\n",
            escape::line(&report.sources[*id].name),
            escape::text(&reason.to_string())
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
    /// never the whole file again (#18: 8,000 findings in a 1.3 MB file took 46 s).
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
        assert_eq!(out.matches("missing-resource-requests").count(), 400);
        // A snippet is the span's lines and one line either side: well under 1 KiB here.
        assert!(
            bytes <= quoted * 1024,
            "{bytes} source bytes handed to miette for {quoted} findings and notes in a {}-byte file",
            text.len()
        );
    }
}
