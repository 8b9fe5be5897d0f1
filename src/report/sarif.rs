//! SARIF 2.1.0 output (`--format sarif`), for GitHub code scanning
//! (`github/codeql-action/upload-sarif`) and other SARIF viewers.
//!
//! One run; `tool.driver.rules` carries every rule with its summary and its `lints/<id>.md`
//! text as help; each result has the exact region (1-based lines, columns in Unicode code
//! points as `columnKind` says, plus byte offset and length), the object as a logical
//! location and related objects as related locations. Paths relative to the working
//! directory are written as relative URIs against `%SRCROOT%`.

use super::{Report, Texts};
use crate::diagnostic::Severity;
use crate::rules;
use serde_json::{Value, json};

/// The `$schema` written into every log.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// A rule as SARIF describes it.
struct RuleMeta {
    id: &'static str,
    severity: Severity,
    summary: &'static str,
    doc: &'static str,
}

fn rule_metadata() -> Vec<RuleMeta> {
    let mut out: Vec<RuleMeta> = rules::BUILTIN_RULES
        .iter()
        .map(|(id, severity, summary)| RuleMeta {
            id,
            severity: *severity,
            summary,
            doc: rules::builtin_doc(id).unwrap_or(""),
        })
        .collect();
    out.extend(rules::registry().iter().map(|r| RuleMeta {
        id: r.meta().id,
        severity: r.meta().severity,
        summary: r.meta().summary,
        doc: r.meta().doc,
    }));
    out.sort_by_key(|r| r.id);
    out
}

/// SARIF's name for a severity.
pub fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// `kebab-case` → `PascalCase`, SARIF's convention for `rule.name`.
fn pascal(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().chain(c).collect::<String>(),
                None => String::new(),
            }
        })
        .collect()
}

/// An artifact location: relative paths against `%SRCROOT%`, absolute ones as `file://`.
fn artifact(name: &str) -> Value {
    let path = name.replace('\\', "/");
    if path.starts_with('/') {
        json!({ "uri": format!("file://{}", encode(&path)) })
    } else {
        json!({ "uri": encode(&path), "uriBaseId": "%SRCROOT%" })
    }
}

/// Percent-encodes what may not appear in a URI path.
fn encode(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub fn build(report: &Report, texts: &Texts) -> Value {
    let meta = rule_metadata();
    let rules_json: Vec<Value> = meta
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": pascal(r.id),
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": r.summary },
                "help": { "text": r.doc, "markdown": r.doc },
                "defaultConfiguration": { "level": level(r.severity) },
                "properties": { "tags": ["kubernetes", "karpenter"] },
            })
        })
        .collect();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let p = texts.position(f.source, f.span);
            let mut location = json!({
                "physicalLocation": {
                    "artifactLocation": artifact(&report.sources[f.source].name),
                    "region": {
                        "startLine": p.line,
                        "startColumn": p.column,
                        "endLine": p.end_line,
                        "endColumn": p.end_column,
                        "byteOffset": p.offset,
                        "byteLength": p.length,
                    },
                },
            });
            if let Some(o) = &f.object {
                location["logicalLocations"] = json!([{
                    "name": o.name,
                    "fullyQualifiedName": o.to_string(),
                    "kind": "object",
                }]);
            }
            if !f.label.is_empty() {
                location["message"] = json!({ "text": f.label });
            }
            let related: Vec<Value> = f
                .related
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let rp = texts.position(r.source, r.span);
                    json!({
                        "id": i + 1,
                        "message": { "text": r.message },
                        "physicalLocation": {
                            "artifactLocation": artifact(&report.sources[r.source].name),
                            "region": {
                                "startLine": rp.line,
                                "startColumn": rp.column,
                                "endLine": rp.end_line,
                                "endColumn": rp.end_column,
                                "byteOffset": rp.offset,
                                "byteLength": rp.length,
                            },
                        },
                    })
                })
                .collect();
            let text = if f.help.is_empty() {
                f.message.clone()
            } else {
                format!("{}\nhelp: {}", f.message, f.help)
            };
            let mut result = json!({
                "ruleId": f.rule,
                "level": level(f.severity),
                "message": { "text": text },
                "locations": [location],
            });
            if let Some(i) = meta.iter().position(|m| m.id == f.rule) {
                result["ruleIndex"] = json!(i);
            }
            if !related.is_empty() {
                result["relatedLocations"] = Value::Array(related);
            }
            result
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "karplint",
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "informationUri": env!("CARGO_PKG_REPOSITORY"),
                    "rules": rules_json,
                },
            },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Writes the report to `w` as it is serialised.
pub fn write(report: &Report, texts: &Texts, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    super::write_json(&build(report, texts), w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_uris() {
        assert_eq!(pascal("no-instance-type-fits"), "NoInstanceTypeFits");
        assert_eq!(
            artifact("a b/c.yaml"),
            json!({"uri": "a%20b/c.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact("/abs/x.yaml"),
            json!({"uri": "file:///abs/x.yaml"})
        );
    }
}
