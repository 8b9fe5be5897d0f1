//! JSON output (`--format json`): the stable shape every other machine format derives
//! from. Field names and meanings are a contract (see DESIGN.md).

use super::{Report, Texts};
use crate::diagnostic::ObjectRef;
use serde::Serialize;

#[derive(Serialize)]
pub struct JsonReport<'a> {
    pub version: u32,
    pub diagnostics: Vec<JsonDiagnostic<'a>>,
    pub summary: &'a super::Summary,
    /// What the run could not do or assumed.
    pub notes: &'a [super::Note],
    /// Files skipped whole, with the reason (their count is `summary.skipped`).
    pub skipped: Vec<JsonSkipped<'a>>,
}

#[derive(Serialize)]
pub struct JsonSkipped<'a> {
    pub file: &'a str,
    pub reason: String,
}

#[derive(Serialize)]
pub struct JsonDiagnostic<'a> {
    pub rule: &'a str,
    pub severity: &'a str,
    pub message: &'a str,
    pub help: &'a str,
    pub file: &'a str,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub offset: usize,
    pub length: usize,
    pub object: Option<&'a ObjectRef>,
    pub related: Vec<JsonRelated<'a>>,
    /// The cluster of `clusters:` the finding was judged in, when it is one cluster's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<&'a str>,
    /// The rule's doc page (`lints/<rule>.md` in the repository).
    pub url: String,
}

#[derive(Serialize)]
pub struct JsonRelated<'a> {
    pub file: &'a str,
    pub line: usize,
    pub column: usize,
    pub message: &'a str,
}

pub fn build<'a>(report: &'a Report, texts: &Texts) -> JsonReport<'a> {
    let diagnostics = report
        .findings
        .iter()
        .map(|f| {
            let p = texts.position(f.source, f.span);
            JsonDiagnostic {
                rule: f.rule,
                severity: f.severity.as_str(),
                message: &f.message,
                help: &f.help,
                file: &report.sources[f.source].name,
                line: p.line,
                column: p.column,
                end_line: p.end_line,
                end_column: p.end_column,
                offset: p.offset,
                length: p.length,
                object: f.object.as_deref(),
                related: f
                    .related
                    .iter()
                    .map(|r| {
                        let rp = texts.position(r.source, r.span);
                        JsonRelated {
                            file: &report.sources[r.source].name,
                            line: rp.line,
                            column: rp.column,
                            message: &r.message,
                        }
                    })
                    .collect(),
                cluster: f.cluster.as_deref(),
                url: crate::rules::doc_url(f.rule),
            }
        })
        .collect();
    JsonReport {
        version: 1,
        diagnostics,
        summary: &report.summary,
        notes: &report.notes,
        skipped: (report.skipped.iter())
            .map(|(id, reason)| JsonSkipped {
                file: &report.sources[*id].name,
                reason: reason.to_string(),
            })
            .collect(),
    }
}

/// Writes the report to `w` as it is serialised.
pub fn write(report: &Report, texts: &Texts, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    super::write_json(&build(report, texts), w)
}

pub fn render(report: &Report, texts: &Texts) -> String {
    super::json_string(&build(report, texts))
}
