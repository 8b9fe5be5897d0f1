//! SARIF 2.1.0 output (`--format sarif`), for GitHub code scanning
//! (`github/codeql-action/upload-sarif`) and other SARIF viewers.
//!
//! One run; `tool.driver.rules` carries every rule with its summary and its `lints/<id>.md`
//! text as help; each result has the exact region (1-based lines, columns in Unicode code
//! points as `columnKind` says, plus byte offset and length), the object as a logical
//! location and related objects as related locations. Paths relative to the working
//! directory are written as relative URIs against `%SRCROOT%`. Each rule has a `helpUri`
//! (its `lints/<id>.md` page) and a `fullDescription` (the doc's "What it checks"); each
//! result has `partialFingerprints` (`karplint/v1`: the baseline's fingerprint, which
//! survives line shifts), so code scanning follows a finding across commits.

use super::{Origin, Report, Source, Texts};
use crate::diagnostic::{Finding, Severity};
use crate::model::{SourceId, Span};
use crate::rules;
use serde::Serialize;
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
fn artifact(source: &Source) -> Value {
    let bytes = path_bytes(source);
    if bytes.first() == Some(&b'/') {
        json!({ "uri": format!("file://{}", encode(&bytes)) })
    } else {
        json!({ "uri": encode(&bytes), "uriBaseId": "%SRCROOT%" })
    }
}

/// The bytes of a source's path as written (those of a path that is not UTF-8 too, not
/// its lossy name), `\` as `/`, without a leading `./`.
fn path_bytes(source: &Source) -> Vec<u8> {
    let raw: Vec<u8> = match &source.origin {
        #[cfg(unix)]
        Origin::Path(p) => {
            use std::os::unix::ffi::OsStrExt;
            p.as_os_str().as_bytes().to_vec()
        }
        _ => source.name.as_bytes().to_vec(),
    };
    let mut out: Vec<u8> = raw
        .into_iter()
        .map(|b| if b == b'\\' { b'/' } else { b })
        .collect();
    while out.starts_with(b"./") {
        out.drain(..2);
    }
    out
}

/// Percent-encodes what may not appear in a URI path, byte by byte. `:` is encoded too: a
/// relative reference whose first segment holds one would read as a scheme
/// (`javascript:alert(1).yaml`).
fn encode(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len());
    for &b in path {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A rule's `fullDescription`: the first paragraph of its doc's "What it checks", on one
/// line; the summary when the doc has none.
fn full_description(r: &RuleMeta) -> String {
    let section = r
        .doc
        .split_once("## What it checks")
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(""));
    let paragraph = section
        .and_then(|s| s.trim().split("\n\n").next())
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty());
    paragraph.unwrap_or_else(|| r.summary.to_string())
}

/// The `tool` object: karplint and every rule it has.
fn tool(meta: &[RuleMeta]) -> Value {
    let rules_json: Vec<Value> = meta
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": pascal(r.id),
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": full_description(r) },
                "helpUri": rules::doc_url(r.id),
                "help": { "text": r.doc, "markdown": r.doc },
                "defaultConfiguration": { "level": level(r.severity) },
                "properties": { "tags": ["kubernetes", "karpenter"] },
            })
        })
        .collect();
    json!({
        "driver": {
            "name": "karplint",
            "semanticVersion": env!("CARGO_PKG_VERSION"),
            "informationUri": env!("CARGO_PKG_REPOSITORY"),
            "rules": rules_json,
        },
    })
}

/// A physical location: the artifact and its region.
fn physical(report: &Report, texts: &Texts, source: SourceId, span: Span) -> Value {
    let p = texts.position(source, span);
    json!({
        "artifactLocation": artifact(&report.sources[source]),
        "region": {
            "startLine": p.line,
            "startColumn": p.column,
            "endLine": p.end_line,
            "endColumn": p.end_column,
            "byteOffset": p.offset,
            "byteLength": p.length,
        },
    })
}

/// The SARIF result of one finding.
fn result(report: &Report, texts: &Texts, meta: &[RuleMeta], f: &Finding) -> Value {
    #[cfg(test)]
    RESULTS_BUILT.with(|c| c.set(c.get() + 1));
    let mut location = json!({ "physicalLocation": physical(report, texts, f.source, f.span) });
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
            json!({
                "id": i + 1,
                "message": { "text": r.message },
                "physicalLocation": physical(report, texts, r.source, r.span),
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
}

/// The log, serialised as it is written: one result is built at a time, never the whole
/// log as one `serde_json::Value` (83 MB of SARIF once took 994 MB). The fields are in the
/// order `serde_json::Value` writes them (sorted), so the bytes are those of the value.
#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    runs: [Run<'a>; 1],
    version: &'static str,
}

#[derive(Serialize)]
struct Run<'a> {
    #[serde(rename = "columnKind")]
    column_kind: &'static str,
    /// One invocation, carrying the run's notes and skipped files.
    invocations: [Value; 1],
    results: Results<'a>,
    tool: Value,
}

/// The invocation: notes and skipped files as `toolExecutionNotifications`.
fn invocation(report: &Report) -> Value {
    let notes = report.notes.iter().map(|n| {
        json!({
            "descriptor": {"id": n.kind},
            "level": if n.is_warning() { "warning" } else { "note" },
            "message": {"text": n.message},
        })
    });
    let skipped = report.skipped.iter().map(|(id, reason)| {
        json!({
            "descriptor": {"id": "skipped"},
            "level": "note",
            "locations": [{"physicalLocation": {"artifactLocation": artifact(&report.sources[*id])}}],
            "message": {"text": format!("skipped {}: {reason}", report.sources[*id].name)},
        })
    });
    json!({
        "executionSuccessful": true,
        "toolExecutionNotifications": notes.chain(skipped).collect::<Vec<_>>(),
    })
}

/// The results, built one by one as the serializer asks for them.
struct Results<'a> {
    report: &'a Report,
    texts: &'a Texts,
    meta: &'a [RuleMeta],
    /// The baseline fingerprint of each finding, in the report's order.
    fingerprints: &'a [String],
}

impl Serialize for Results<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.report
                .findings
                .iter()
                .zip(self.fingerprints)
                .map(|(f, fp)| {
                    let mut r = result(self.report, self.texts, self.meta, f);
                    r["partialFingerprints"] = json!({ "karplint/v1": fp });
                    r
                }),
        )
    }
}

/// Writes the report to `w` as it is serialised.
pub fn write(report: &Report, texts: &Texts, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let meta = rule_metadata();
    let fingerprints = super::baseline::fingerprints(report);
    let log = Log {
        schema: SCHEMA,
        runs: [Run {
            column_kind: "unicodeCodePoints",
            invocations: [invocation(report)],
            results: Results {
                report,
                texts,
                meta: &meta,
                fingerprints: &fingerprints,
            },
            tool: tool(&meta),
        }],
        version: "2.1.0",
    };
    super::write_json(&log, w)
}

#[cfg(test)]
thread_local! {
    /// Results turned into JSON so far, for the streaming test.
    static RESULTS_BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records how many results were built when the first byte reached the writer.
    struct FirstWrite(Option<usize>, Vec<u8>);
    impl std::io::Write for FirstWrite {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.0.is_none() {
                self.0 = Some(RESULTS_BUILT.with(|c| c.get()));
            }
            self.1.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The log streams: writing starts before the results are built, one at a time, so a
    /// large run's SARIF is never one `serde_json::Value` (83 MB of output took 994 MB).
    #[test]
    fn results_stream_to_the_writer() {
        let mut text = String::new();
        for i in 0..50 {
            text.push_str(&format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\nspec:\n  template:\n    spec:\n      containers:\n      - name: app\n        image: nginx\n"
            ));
        }
        let report = crate::engine::lint_str(&text).expect("lints");
        assert!(report.findings.len() >= 50);
        let texts = Texts::load_with(&report, false);
        RESULTS_BUILT.with(|c| c.set(0));
        let mut w = FirstWrite(None, Vec::new());
        write(&report, &texts, &mut w).expect("writes");
        assert_eq!(RESULTS_BUILT.with(|c| c.get()), report.findings.len());
        assert!(
            w.0.is_some_and(|n| n <= 1),
            "{:?} results built before the first write",
            w.0
        );
        let log: Value = serde_json::from_slice(&w.1).expect("valid JSON");
        assert_eq!(
            log["runs"][0]["results"].as_array().map(Vec::len),
            Some(report.findings.len())
        );
    }

    #[test]
    fn names_and_uris() {
        assert_eq!(pascal("no-instance-type-fits"), "NoInstanceTypeFits");
        let file = |p: &str| Source::file(p.into(), false);
        assert_eq!(
            artifact(&file("a b/c.yaml")),
            json!({"uri": "a%20b/c.yaml", "uriBaseId": "%SRCROOT%"})
        );
        assert_eq!(
            artifact(&file("/abs/x.yaml")),
            json!({"uri": "file:///abs/x.yaml"})
        );
        // A relative URI never carries a scheme.
        assert_eq!(
            artifact(&file("javascript:alert(1).yaml")),
            json!({"uri": "javascript%3Aalert(1).yaml", "uriBaseId": "%SRCROOT%"})
        );
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_names_are_percent_encoded_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let p = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(b"./caf\xe9.yaml"));
        assert_eq!(
            artifact(&Source::file(p, false)),
            json!({"uri": "caf%E9.yaml", "uriBaseId": "%SRCROOT%"})
        );
    }
}
