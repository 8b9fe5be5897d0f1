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
//!
//! The log is written from typed structs named after the SARIF 2.1.0 schema's objects
//! (`sarifLog`, `run`, `result`, `location`, `region`, `reportingDescriptor`, …), with
//! only the properties karplint fills. Not the `serde-sarif` crate (measured 2026-12-01,
//! `cargo add serde-sarif` 0.8.0): it locks 13 more packages (syn 1, a second strum,
//! typed-builder, schemafy's code generator, anyhow, uriparse, …), and its `Run` holds the
//! results as a `Vec`, where the log here streams them one at a time (see `Results`).
//! Each struct's fields are in alphabetical order, the order `serde_json::Value` writes
//! (the log was built from `json!` values before), so the output is unchanged.

use super::{Origin, Report, Source, Texts};
use crate::diagnostic::{Finding, Severity};
use crate::model::{SourceId, Span};
use crate::rules;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_encode};
use serde::Serialize;

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
fn artifact(source: &Source) -> ArtifactLocation {
    let bytes = path_bytes(source);
    if bytes.first() == Some(&b'/') {
        ArtifactLocation {
            uri: format!("file://{}", encode(&bytes)),
            uri_base_id: None,
        }
    } else {
        ArtifactLocation {
            uri: encode(&bytes),
            uri_base_id: Some("%SRCROOT%"),
        }
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

/// What is percent-encoded in a URI path: all but RFC 3986's unreserved characters, `/`,
/// and the sub-delimiters and `@` a path segment may hold. `:` is encoded too: a relative
/// reference whose first segment holds one would read as a scheme
/// (`javascript:alert(1).yaml`). Bytes outside ASCII are always encoded.
const URI_PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/')
    .remove(b'!')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b'+')
    .remove(b',')
    .remove(b';')
    .remove(b'=')
    .remove(b'@');

/// A path percent-encoded byte by byte for a URI.
fn encode(path: &[u8]) -> String {
    percent_encode(path, URI_PATH).to_string()
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

/// `message` / `multiformatMessageString` with text only.
#[derive(Serialize)]
struct Message<'a> {
    text: &'a str,
}

/// `multiformatMessageString` with both forms: a rule's help.
#[derive(Serialize)]
struct Help<'a> {
    markdown: &'a str,
    text: &'a str,
}

/// `artifactLocation`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

/// `region`: 1-based lines, columns in code points, bytes from the file's start.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    byte_length: usize,
    byte_offset: usize,
    end_column: usize,
    end_line: usize,
    start_column: usize,
    start_line: usize,
}

/// `physicalLocation`: a whole file when it has no region.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

/// `logicalLocation`: the object a finding is about.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation<'a> {
    fully_qualified_name: String,
    kind: &'static str,
    name: &'a str,
}

/// `location`; `id` only for a related location.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    logical_locations: Vec<LogicalLocation<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Message<'a>>,
    physical_location: PhysicalLocation,
}

/// `partialFingerprints`.
#[derive(Serialize)]
struct Fingerprints<'a> {
    #[serde(rename = "karplint/v1")]
    karplint_v1: &'a str,
}

/// `result`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    level: &'static str,
    locations: [Location<'a>; 1],
    message: Message<'a>,
    partial_fingerprints: Fingerprints<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location<'a>>,
    rule_id: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule_index: Option<usize>,
}

/// `reportingConfiguration`.
#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

/// `propertyBag`.
#[derive(Serialize)]
struct Properties {
    tags: [&'static str; 2],
}

/// `reportingDescriptor`: a rule.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    default_configuration: Configuration,
    full_description: Message<'a>,
    help: Help<'a>,
    help_uri: String,
    id: &'static str,
    name: String,
    properties: Properties,
    short_description: Message<'a>,
}

/// `toolComponent`: karplint.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    information_uri: &'static str,
    name: &'static str,
    rules: Vec<Rule<'a>>,
    semantic_version: &'static str,
}

/// `tool`.
#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

/// The `tool` object: karplint and every rule it has.
fn tool<'a>(meta: &'a [RuleMeta], descriptions: &'a [String]) -> Tool<'a> {
    let rules = meta
        .iter()
        .zip(descriptions)
        .map(|(r, full)| Rule {
            default_configuration: Configuration {
                level: level(r.severity),
            },
            full_description: Message { text: full },
            help: Help {
                markdown: r.doc,
                text: r.doc,
            },
            help_uri: rules::doc_url(r.id),
            id: r.id,
            name: pascal(r.id),
            properties: Properties {
                tags: ["kubernetes", "karpenter"],
            },
            short_description: Message { text: r.summary },
        })
        .collect();
    Tool {
        driver: Driver {
            information_uri: env!("CARGO_PKG_REPOSITORY"),
            name: "karplint",
            rules,
            semantic_version: env!("CARGO_PKG_VERSION"),
        },
    }
}

/// A physical location: the artifact and its region.
fn physical(report: &Report, texts: &Texts, source: SourceId, span: Span) -> PhysicalLocation {
    let p = texts.position(source, span);
    PhysicalLocation {
        artifact_location: artifact(&report.sources[source]),
        region: Some(Region {
            byte_length: p.length,
            byte_offset: p.offset,
            end_column: p.end_column,
            end_line: p.end_line,
            start_column: p.column,
            start_line: p.line,
        }),
    }
}

/// The finding's own location: where, the object, and the label.
fn location<'a>(report: &Report, texts: &Texts, f: &'a Finding) -> Location<'a> {
    let logical_locations = (f.object.iter())
        .map(|o| LogicalLocation {
            fully_qualified_name: o.to_string(),
            kind: "object",
            name: o.name.as_str(),
        })
        .collect();
    Location {
        id: None,
        logical_locations,
        message: (!f.label.is_empty()).then_some(Message { text: &f.label }),
        physical_location: physical(report, texts, f.source, f.span),
    }
}

/// Writes one finding's SARIF result to `s`: its message with its help, its location,
/// related locations, and fingerprint.
fn serialize_result<S: serde::ser::SerializeSeq>(
    s: &mut S,
    res: &Results<'_>,
    f: &Finding,
    fingerprint: &str,
) -> Result<(), S::Error> {
    #[cfg(test)]
    RESULTS_BUILT.with(|c| c.set(c.get() + 1));
    let related_locations = (f.related.iter().enumerate())
        .map(|(i, r)| Location {
            id: Some(i + 1),
            logical_locations: Vec::new(),
            message: Some(Message { text: &r.message }),
            physical_location: physical(res.report, res.texts, r.source, r.span),
        })
        .collect();
    let text = if f.help.is_empty() {
        f.message.clone()
    } else {
        format!("{}\nhelp: {}", f.message, f.help)
    };
    s.serialize_element(&SarifResult {
        level: level(f.severity),
        locations: [location(res.report, res.texts, f)],
        message: Message { text: &text },
        partial_fingerprints: Fingerprints {
            karplint_v1: fingerprint,
        },
        related_locations,
        rule_id: f.rule,
        rule_index: res.meta.iter().position(|m| m.id == f.rule),
    })
}

/// `sarifLog`, serialised as it is written: one result is built at a time, never the
/// whole log in memory (83 MB of SARIF once took 994 MB as one `serde_json::Value`).
#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    runs: [Run<'a>; 1],
    version: &'static str,
}

/// `run`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    column_kind: &'static str,
    /// One invocation, carrying the run's notes and skipped files.
    invocations: [Invocation<'a>; 1],
    results: Results<'a>,
    tool: Tool<'a>,
}

/// `invocation`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation<'a> {
    execution_successful: bool,
    tool_execution_notifications: Vec<Notification<'a>>,
}

/// `reportingDescriptorReference`.
#[derive(Serialize)]
struct Descriptor {
    id: &'static str,
}

/// `notification`: a note of the run or a skipped file.
#[derive(Serialize)]
struct Notification<'a> {
    descriptor: Descriptor,
    level: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location<'a>>,
    message: Message<'a>,
}

/// The invocation: notes and skipped files as `toolExecutionNotifications`.
fn invocation<'a>(report: &'a Report, skipped: &'a [String]) -> Invocation<'a> {
    let notes = report.notes.iter().map(|n| Notification {
        descriptor: Descriptor { id: n.kind },
        level: if n.is_warning() { "warning" } else { "note" },
        locations: Vec::new(),
        message: Message { text: &n.message },
    });
    let skipped = (report.skipped.iter().zip(skipped)).map(|((id, _), text)| Notification {
        descriptor: Descriptor { id: "skipped" },
        level: "note",
        locations: vec![Location {
            id: None,
            logical_locations: Vec::new(),
            message: None,
            physical_location: PhysicalLocation {
                artifact_location: artifact(&report.sources[*id]),
                region: None,
            },
        }],
        message: Message { text },
    });
    Invocation {
        execution_successful: true,
        tool_execution_notifications: notes.chain(skipped).collect(),
    }
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
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.report.findings.len()))?;
        for (f, fp) in self.report.findings.iter().zip(self.fingerprints) {
            serialize_result(&mut seq, self, f, fp)?;
        }
        seq.end()
    }
}

/// Writes the report to `w` as it is serialised.
pub fn write(report: &Report, texts: &Texts, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    let meta = rule_metadata();
    let descriptions: Vec<String> = meta.iter().map(full_description).collect();
    let fingerprints = super::baseline::fingerprints(report);
    let skipped: Vec<String> = (report.skipped.iter())
        .map(|(id, reason)| format!("skipped {}: {reason}", report.sources[*id].name))
        .collect();
    let log = Log {
        schema: SCHEMA,
        runs: [Run {
            column_kind: "unicodeCodePoints",
            invocations: [invocation(report, &skipped)],
            results: Results {
                report,
                texts,
                meta: &meta,
                fingerprints: &fingerprints,
            },
            tool: tool(&meta, &descriptions),
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
    use serde_json::{Value, json};

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
        let artifact = |s: &Source| serde_json::to_value(artifact(s)).expect("serialises");
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
            serde_json::to_value(artifact(&Source::file(p, false))).expect("serialises"),
            json!({"uri": "caf%E9.yaml", "uriBaseId": "%SRCROOT%"})
        );
    }
}
