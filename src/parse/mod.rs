//! Parse stage: bytes of one source → typed, spanned objects, in parallel per document.
//!
//! Each source is checked (UTF-8, binary, BOM), split into YAML documents at column-0
//! `---` markers (which YAML forbids inside content, so the split is exact), and each
//! document is deserialized on its own: a broken document becomes one `parse-error` and the
//! others are still linted. A document of a kind the model does not use is deserialized
//! only as far as its header, and the rest is checked by [`skim`]. Unrendered Helm
//! templates are recognised and skipped with a note instead of being reported as syntax
//! errors.

pub(crate) mod document;
pub(crate) mod scan;
pub(crate) mod skim;

use crate::model::de::Str;
use crate::model::{Body, Kind, Object, SourceId, Span};
use document::{DocRoot, DocSeed, RawDoc};
use rayon::prelude::*;
use serde::de::DeserializeSeed;
use std::cell::RefCell;

/// Why a whole source was not linted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    HelmTemplate,
    Binary,
    TooLarge { bytes: u64, limit: u64 },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::HelmTemplate => f.write_str(
                "unrendered Helm template: lint the rendered output with `helm template <release> <chart> | karplint -`",
            ),
            SkipReason::Binary => f.write_str("binary file (contains NUL bytes)"),
            SkipReason::TooLarge { bytes, limit } => {
                write!(f, "file is {bytes} bytes, over the {limit}-byte limit (--max-file-size)")
            }
        }
    }
}

/// A syntax or shape problem, reported under `parse-error`.
#[derive(Debug, Clone)]
pub struct ParseProblem {
    pub span: Span,
    pub message: String,
    /// A value the API server would reject in an object that was read (see
    /// [`crate::model::quantities`]): the rest of the object is linted. Otherwise the
    /// document could not be read.
    pub rejected_value: bool,
}

/// Everything the parse stage learned from one source.
#[derive(Debug, Default)]
pub struct ParsedSource {
    /// The objects rules read (see [`Object::is_read`]).
    pub objects: Vec<Object>,
    /// Objects found, including those of unmodelled kinds that are only counted.
    pub object_count: usize,
    pub problems: Vec<ParseProblem>,
    /// Non-empty documents seen.
    pub documents: usize,
    /// Documents without `apiVersion`/`kind` (values files, kustomization.yaml, …).
    pub not_objects: usize,
    pub skipped: Option<SkipReason>,
    /// Documents of the source that the part parsed did not take.
    pub left_out: usize,
}

/// Documents per chunk handed to one rayon task: large multi-document files are parsed in
/// parallel, small ones stay on one thread.
const DOCS_PER_TASK: usize = 64;

/// The serde-saphyr budget for every document: raised for large bundles, depth and alias
/// limits kept.
pub fn budget() -> serde_saphyr::Budget {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_reader_input_bytes = None;
    budget.max_events = 50_000_000;
    budget.max_nodes = 20_000_000;
    budget.max_documents = 1_000_000;
    budget.max_total_scalar_bytes = 1 << 30;
    budget.max_depth = 128;
    budget
}

/// The serde-saphyr options for every document: Kubernetes' legacy octal and [`budget`].
pub fn options() -> serde_saphyr::Options {
    serde_saphyr::options! {
        budget: Some(budget()),
        legacy_octal_numbers: true,
        with_snippet: false,
    }
}

/// Parses the text of one source. `helm_chart_file` is true for files under a chart's
/// `templates/` directory.
pub fn parse_source(
    id: SourceId,
    text: &str,
    context: bool,
    helm_chart_file: bool,
) -> ParsedSource {
    parse_part(id, text, context, helm_chart_file, Part::All)
}

/// Which documents of a source to parse: the pipeline parses the documents that may hold
/// objects the whole run needs first ([`scan`]), and the others later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    All,
    /// Documents [`scan::may_hold_cluster_objects`] picks.
    Held,
    /// The other documents.
    Streamed,
}

impl Part {
    fn takes(self, doc: &str) -> bool {
        match self {
            Part::All => true,
            Part::Held => scan::may_hold_cluster_objects(doc.as_bytes()),
            Part::Streamed => !scan::may_hold_cluster_objects(doc.as_bytes()),
        }
    }
}

impl ParsedSource {
    /// Adds the result of parsing another part of the same source.
    pub fn merge(&mut self, other: ParsedSource) {
        self.objects.extend(other.objects);
        self.object_count += other.object_count;
        self.problems.extend(other.problems);
        self.documents += other.documents;
        self.not_objects += other.not_objects;
        self.skipped = self.skipped.take().or(other.skipped);
        self.left_out = other.left_out;
    }
}

/// Parses the documents of one source that `part` takes.
pub fn parse_part(
    id: SourceId,
    text: &str,
    context: bool,
    helm_chart_file: bool,
    part: Part,
) -> ParsedSource {
    if helm_chart_file {
        return ParsedSource {
            skipped: Some(SkipReason::HelmTemplate),
            ..Default::default()
        };
    }
    if text.as_bytes().contains(&0) {
        return ParsedSource {
            skipped: Some(SkipReason::Binary),
            ..Default::default()
        };
    }
    let base = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut docs = split_documents(&text[base..]);
    let all = docs.len();
    if part != Part::All {
        docs.retain(|(_, d)| part.takes(d));
    }
    let left_out = all - docs.len();
    let results: Vec<DocResult> = if docs.len() > DOCS_PER_TASK {
        docs.par_chunks(DOCS_PER_TASK)
            .flat_map_iter(|chunk| {
                chunk
                    .iter()
                    .map(|(off, d)| parse_document(id, base + off, d, context))
                    .collect::<Vec<_>>()
            })
            .collect()
    } else {
        docs.iter()
            .map(|(off, d)| parse_document(id, base + off, d, context))
            .collect()
    };
    let mut out = ParsedSource {
        left_out,
        ..Default::default()
    };
    let mut rejected_values = Vec::new();
    // Sized once: the documents' objects are moved in without regrowing the vector.
    out.objects.reserve_exact(
        results
            .iter()
            .map(|r| match r {
                DocResult::Objects(o, ..) => o.len(),
                _ => 0,
            })
            .sum(),
    );
    for r in results {
        match r {
            DocResult::Empty => {}
            DocResult::NotObject => {
                out.documents += 1;
                out.not_objects += 1;
            }
            DocResult::Objects(objs, count, invalid) => {
                out.documents += 1;
                out.object_count += count;
                out.objects.extend(objs);
                rejected_values.extend(invalid);
            }
            DocResult::Problem(p) => {
                out.documents += 1;
                out.problems.push(p);
            }
        }
    }
    if !out.problems.is_empty() && text.contains("{{") {
        return ParsedSource {
            skipped: Some(SkipReason::HelmTemplate),
            ..Default::default()
        };
    }
    out.problems.append(&mut rejected_values);
    out
}

/// Splits a YAML stream into `(offset, document text)` at lines starting with `---` or `...`
/// followed by whitespace or end of line. The marker line stays with the document it opens.
pub fn split_documents(text: &str) -> Vec<(usize, &str)> {
    let mut starts = vec![0usize];
    let bytes = text.as_bytes();
    // Only lines that start with `-` or `.` can be markers: the newlines are found with
    // memchr, and only those lines are looked at.
    let line_starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', bytes).map(|p| p + 1));
    for line_start in line_starts {
        if !matches!(bytes.get(line_start), Some(b'-' | b'.')) {
            continue;
        }
        let line_end =
            memchr::memchr(b'\n', &bytes[line_start..]).map_or(bytes.len(), |p| line_start + p);
        let line = &bytes[line_start..line_end];
        if line_start > 0 && is_marker(line, b"---") {
            starts.push(line_start);
        } else if is_marker(line, b"...") {
            // The document ends here; the next line starts a new one.
            let next = (line_end + 1).min(bytes.len());
            if next < bytes.len() {
                starts.push(next);
            }
        }
    }
    starts.dedup();
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(text.len());
        if s < e {
            out.push((s, &text[s..e]));
        }
    }
    out
}

fn is_marker(line: &[u8], marker: &[u8]) -> bool {
    line.starts_with(marker)
        && line
            .get(3)
            .is_none_or(|c| matches!(c, b' ' | b'\t' | b'\r'))
}

enum DocResult {
    Empty,
    NotObject,
    /// The objects kept, how many were found, and their invalid values.
    Objects(Vec<Object>, usize, Vec<ParseProblem>),
    Problem(ParseProblem),
}

fn parse_document(id: SourceId, offset: usize, text: &str, context: bool) -> DocResult {
    let root = match deserialize(text, None, true) {
        // An unmodelled kind: only the header is needed, and the assurance that the rest is
        // valid YAML; when in doubt, the whole document is deserialized for serde-saphyr's
        // own verdict.
        Ok(DocRoot::Header(doc)) if skim::plainly_valid(text) => Ok(DocRoot::Map(doc)),
        Ok(DocRoot::Header(_)) => deserialize(text, None, false),
        root => root,
    };
    match root {
        Err(p) => DocResult::Problem(ParseProblem {
            span: Span::new(offset + p.span.offset, p.span.len),
            message: p.message,
            rejected_value: false,
        }),
        Ok(DocRoot::Null) => DocResult::Empty,
        Ok(DocRoot::NotAMap) => DocResult::NotObject,
        Ok(DocRoot::Map(doc) | DocRoot::Header(doc)) => {
            let doc = if doc.needs_reparse {
                let kind = classify(&doc);
                match deserialize(text, kind, false) {
                    Ok(DocRoot::Map(d)) => d,
                    Ok(_) => doc,
                    Err(p) => {
                        return DocResult::Problem(ParseProblem {
                            span: Span::new(offset + p.span.offset, p.span.len),
                            message: p.message,
                            rejected_value: false,
                        });
                    }
                }
            } else {
                doc
            };
            if doc.api_version.is_none() || doc.kind.is_none() {
                return DocResult::NotObject;
            }
            let mut objects = Vec::new();
            let count = into_objects(id, offset, *doc, context, &mut objects);
            let invalid = objects
                .iter()
                .flat_map(crate::model::quantities::invalid_quantities)
                .map(|q| ParseProblem {
                    span: q.span,
                    message: q.message,
                    rejected_value: true,
                })
                .collect();
            DocResult::Objects(objects, count, invalid)
        }
    }
}

fn classify(doc: &RawDoc) -> Option<Kind> {
    match (&doc.api_version, &doc.kind) {
        (Some(a), Some(k)) => Some(Kind::classify(a.value.as_str(), k.value.as_str())),
        _ => None,
    }
}

/// Turns a document (and the items of a List) into objects, and returns how many it found.
/// Objects of kinds the model does not use are counted; only those rules read are kept, as
/// header-only objects.
fn into_objects(
    id: SourceId,
    offset: usize,
    doc: RawDoc,
    context: bool,
    out: &mut Vec<Object>,
) -> usize {
    let Some(kind) = classify(&doc) else { return 0 };
    let (Some(api), Some(k)) = (doc.api_version, doc.kind) else {
        return 0;
    };
    if kind == Kind::List {
        return doc
            .items
            .into_iter()
            .map(|item| into_objects(id, offset, item, context, out))
            .sum();
    }
    // Unmodelled kinds are counted as objects but carry nothing rules read.
    let (kind, body) = match doc.body {
        Some(body) => (kind, body),
        None => (Kind::Other, Body::Other),
    };
    let mut meta = doc.meta;
    meta.retain_read_labels(kind);
    let mut o = Object {
        id: 0,
        source: id,
        doc_offset: offset,
        context,
        api_version: Str::default(),
        api_version_span: Span::default(),
        kind,
        kind_name: Str::default(),
        kind_span: Span::default(),
        meta,
        body,
    };
    o.kind_span = o.span(&k);
    o.api_version_span = o.span(&api);
    o.api_version = api.value.0;
    o.kind_name = k.value.0;
    if o.is_read() {
        out.push(o);
    }
    1
}

struct DocError {
    span: Span,
    message: String,
}

/// Deserializes one document. With `header_only`, a document of an unmodelled kind comes
/// back as [`DocRoot::Header`], read only as far as its header.
fn deserialize(text: &str, preset: Option<Kind>, header_only: bool) -> Result<DocRoot, DocError> {
    let header = RefCell::new(None);
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options(), |d| {
        DocSeed {
            preset,
            header_only: header_only.then_some(&header),
        }
        .deserialize(d)
    });
    match (result, header.into_inner()) {
        (_, Some(doc)) => Ok(DocRoot::Header(doc)),
        (Ok(root), None) => Ok(root),
        (Err(e), None) => Err(to_doc_error(text, &e)),
    }
}

fn to_doc_error(text: &str, e: &serde_saphyr::Error) -> DocError {
    let rendered = e.to_string();
    let message = match rendered.rfind(" at line ") {
        Some(i) => rendered[..i].to_string(),
        None => rendered,
    };
    let message = friendly(&message);
    let span = match e.location() {
        Some(loc) => {
            let s = loc.span();
            match s.byte_offset() {
                Some(off) => Span::new(off as usize, s.byte_len().unwrap_or(0) as usize),
                None => Span::new(
                    offset_of(text, loc.line() as usize, loc.column() as usize),
                    0,
                ),
            }
        }
        None => Span::default(),
    };
    let offset = span.offset.min(text.len());
    // A zero-length error position points at the character there, so the report stage
    // does not mistake it for a container span to widen.
    let len = match span.len {
        0 => text[offset..]
            .chars()
            .next()
            .filter(|c| *c != '\n' && *c != '\r')
            .map(char::len_utf8)
            .unwrap_or(0),
        n => n.min(text.len() - offset),
    };
    DocError {
        span: Span::new(offset, len),
        message,
    }
}

/// serde-saphyr's messages, in the words of a Kubernetes user.
fn friendly(message: &str) -> String {
    let m = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    match m.as_str() {
        "invalid i64" | "invalid u64" | "invalid i32" | "invalid u32" => {
            "expected an integer".into()
        }
        "invalid bool" => "expected true or false".into(),
        "recursion limit exceeded" => {
            "nested too deeply (recursion limit exceeded); karplint reads at most 128 levels".into()
        }
        _ => m,
    }
}

/// Byte offset of a 1-based line and character column.
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut off = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return off
                + l.char_indices()
                    .nth(column.saturating_sub(1))
                    .map(|(b, _)| b)
                    .unwrap_or(l.len());
        }
        off += l.len();
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::{is_marker, split_documents};

    /// The splitting rule, line by line and without shortcuts.
    fn split_by_lines(text: &str) -> Vec<(usize, &str)> {
        let mut starts = vec![0usize];
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            let bare = line.trim_end_matches('\n').as_bytes();
            if at > 0 && is_marker(bare, b"---") {
                starts.push(at);
            } else if is_marker(bare, b"...") && at + line.len() < text.len() {
                starts.push(at + line.len());
            }
            at += line.len();
        }
        starts.dedup();
        let ends = starts.iter().skip(1).copied().chain([text.len()]);
        starts
            .iter()
            .zip(ends)
            .filter(|(s, e)| **s < *e)
            .map(|(&s, e)| (s, &text[s..e]))
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]

        #[test]
        fn splits_where_the_line_rule_does(lines in proptest::collection::vec(proptest::sample::select(vec![
            "---", "--- ", "---\t", "---\r", "----", "--", "...", "... x", "....", ".", "-",
            "a: 1", "- x", "  ---", "", "--- # c", "\r",
        ]), 0..24), newline_at_end: bool) {
            let mut text = lines.join("\n");
            if newline_at_end {
                text.push('\n');
            }
            proptest::prop_assert_eq!(split_documents(&text), split_by_lines(&text));
        }
    }
}
