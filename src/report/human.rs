//! Human output: miette's graphical reports, one per finding, with the source snippet, a
//! primary label under the exact key or value, related labels on other objects, the help
//! text and the rule id; then a summary.

use super::{Report, Texts};
use crate::diagnostic::{Finding, Severity};
use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode,
};
use std::fmt;

/// How to draw reports.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub color: bool,
    pub width: usize,
}

struct Rendered<'a> {
    finding: &'a Finding,
    source: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    related: Vec<RelatedNote>,
}

struct RelatedNote {
    message: String,
    source: NamedSource<String>,
    label: LabeledSpan,
}

impl fmt::Debug for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.finding.message)
    }
}
impl fmt::Display for Rendered<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.finding.message)
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
        (!self.finding.help.is_empty())
            .then(|| Box::new(&self.finding.help) as Box<dyn fmt::Display>)
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
        .with_urls(false);
    let mut out = String::new();
    for f in &report.findings {
        let name = &report.sources[f.source].name;
        let pos = texts.position(f.source, f.span);
        let label_text = (!f.label.is_empty()).then(|| f.label.clone());
        let rendered = Rendered {
            finding: f,
            source: NamedSource::new(name, texts.get(f.source).to_string()),
            labels: vec![LabeledSpan::new_primary_with_span(
                label_text,
                (pos.offset, pos.length),
            )],
            related: f
                .related
                .iter()
                .map(|r| {
                    let rp = texts.position(r.source, r.span);
                    RelatedNote {
                        message: r.message.clone(),
                        source: NamedSource::new(
                            &report.sources[r.source].name,
                            texts.get(r.source).to_string(),
                        ),
                        label: LabeledSpan::new_with_span(None, (rp.offset, rp.length)),
                    }
                })
                .collect(),
        };
        if handler.render_report(&mut out, &rendered).is_err() {
            out.push_str(&format!("{}: {}: {}\n", name, f.rule, f.message));
        }
        out.push('\n');
    }
    out.push_str(&summary_text(report));
    out
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
            report.sources[*id].name, reason
        ));
    }
    for note in &report.notes {
        out.push_str(&format!("  note: {note}\n"));
    }
    out
}
