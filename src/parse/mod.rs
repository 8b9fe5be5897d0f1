//! Parse stage: bytes of one source → typed, spanned objects, in parallel per document.
//!
//! Each source is checked (UTF-8, binary, BOM), split into YAML documents at column-0
//! `---` markers (which YAML forbids inside content, so the split is exact), and each
//! document is deserialized on its own: a broken document becomes one `parse-error` and the
//! others are still linted. A document is read by [`fast`] from the parser's events when
//! serde-saphyr's meaning for every value is certain, and by serde-saphyr otherwise. A
//! document of a kind the model does not use is deserialized only as far as its header,
//! and the rest is checked by [`skim`]. A document that fails
//! to parse only because of template syntax (Helm, Handlebars, Terraform: [`template`]) is
//! skipped with a note naming the language instead of being reported as a syntax error;
//! the other documents of its file are still linted.

pub(crate) mod document;
pub(crate) mod fast;
pub(crate) mod fields;
mod keys;
pub(crate) mod pods;
pub(crate) mod scan;
pub(crate) mod skim;
pub mod template;

use crate::diagnostic::ObjectRef;
use crate::model::de::Str;
use crate::model::de::{Spanned, Text};
use crate::model::{Body, Kind, Object, ObjectMeta, SourceId, Span};
use document::{DocRoot, DocSeed, RawDoc};
use rayon::prelude::*;
use serde::de::DeserializeSeed;
use std::cell::RefCell;
pub use template::Template;

/// Why a whole source was not linted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// An unrendered template: a Helm chart's `templates/`, a `*.tftpl` or `*.hbs` file, or
    /// a file whose every document is one.
    Template(Template),
    Binary,
    TooLarge {
        bytes: u64,
        limit: u64,
    },
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::Template(t) => t.fmt(f),
            SkipReason::Binary => f.write_str("binary file (contains NUL bytes)"),
            SkipReason::TooLarge { bytes, limit } => {
                write!(
                    f,
                    "file is {bytes} bytes, over the {limit}-byte limit (--max-file-size)"
                )
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
    /// [`crate::model::rejected`]): the rest of the object is linted. Otherwise the
    /// document could not be read.
    pub rejected_value: bool,
    /// The object the value belongs to, when its identity was read: suppressions and
    /// baselines reach the finding through it.
    pub object: Option<Box<crate::diagnostic::ObjectRef>>,
    /// For a document that could not be read, the object its header names (apiVersion,
    /// kind and metadata), with nothing else: its `karplint.io/ignore` annotation reaches
    /// the finding.
    pub header: Option<Box<Object>>,
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
    /// Documents skipped as unrendered templates (they fail to parse only because of
    /// template syntax): each one's offset, 1-based line and language. Not counted in
    /// `documents`.
    pub templates: Vec<(usize, usize, Template)>,
    /// Documents of the source that the part parsed did not take.
    pub left_out: usize,
    /// `(kind, apiVersion)` of each object of an unmodelled kind that holds a pod template
    /// ([`pods`]): workloads karplint does not analyse.
    pub pod_holders: Vec<(Str, Str)>,
}

/// Documents per chunk handed to one rayon task: large multi-document files are parsed in
/// parallel, small ones stay on one thread.
const DOCS_PER_TASK: usize = 64;

/// Bytes per chunk, at least: a stream of tiny documents (bare `---` separators) is not
/// cut into thousands of tasks, each with its own result.
const BYTES_PER_TASK: usize = 16 * 1024;

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

/// The serde-saphyr options for every document: Kubernetes' legacy octal and [`budget`],
/// and the document's share of its file's alias budget ([`alias_share`]) while a file is
/// parsed.
pub fn options() -> serde_saphyr::Options {
    let mut o = serde_saphyr::options! {
        budget: Some(budget()),
        legacy_octal_numbers: true,
        with_snippet: false,
    };
    if let Some(share) = ALIAS_SHARE.get() {
        o.alias_limits.max_total_replayed_events = share;
    }
    o
}

thread_local! {
    /// The events each document of the file being parsed on this thread may replay from
    /// aliases ([`alias_share`]); `None` outside [`parse_part`].
    static ALIAS_SHARE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Events a file may replay from aliases, at least: as many as one document could before.
const FILE_ALIAS_EVENTS: usize = 1_000_000;
/// The least share of a document that uses aliases.
const MIN_ALIAS_SHARE: usize = 64;

/// How many events each document of `body` may replay from aliases. The budget is the
/// file's, not each document's: `max(1,000,000, half a byte's worth of events per byte)`,
/// shared equally among the documents that use an alias, so that a file of many small
/// alias bombs costs what one large one does (a few tenths of a second), not that per
/// document.
pub fn alias_share(body: &str) -> usize {
    let with_aliases = documents(body).filter(|(_, d)| uses_alias(d)).count();
    let budget = FILE_ALIAS_EVENTS.max(body.len() / 2);
    (budget / with_aliases.max(1)).max(MIN_ALIAS_SHARE)
}

/// Whether `doc` may hold an alias: a `*` where a node starts, followed by an anchor name.
fn uses_alias(doc: &str) -> bool {
    let b = doc.as_bytes();
    memchr::memchr_iter(b'*', b).any(|i| {
        let before = i.checked_sub(1).map(|j| b[j]);
        let after = b.get(i + 1).copied();
        matches!(
            before,
            None | Some(b' ' | b'\t' | b'[' | b'{' | b',' | b':' | b'-' | b'\n')
        ) && after.is_some_and(|c| !c.is_ascii_whitespace() && !b",[]{}".contains(&c))
    })
}

/// Parses the text of one source. `helm_chart_file` is true for files under a chart's
/// `templates/` directory.
pub fn parse_source(
    id: SourceId,
    text: &str,
    context: bool,
    helm_chart_file: bool,
) -> ParsedSource {
    let whole = helm_chart_file.then_some(Template::Helm);
    parse_part(id, text, context, whole, Part::All)
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
    pub fn merge(&mut self, mut other: ParsedSource) {
        self.skipped = self.skipped.take().or(other.skipped.take());
        // The other part's documents are the ones this part left out.
        let left_out = std::mem::take(&mut other.left_out);
        self.append(other);
        self.templates.sort_unstable();
        self.left_out = left_out;
    }

    /// Adds the objects, problems and counts of a batch of the same part.
    fn append(&mut self, other: ParsedSource) {
        self.objects.extend(other.objects);
        self.object_count += other.object_count;
        self.problems.extend(other.problems);
        self.documents += other.documents;
        self.not_objects += other.not_objects;
        self.templates.extend(other.templates);
        self.left_out += other.left_out;
        self.pod_holders.extend(other.pod_holders);
    }
}

/// Parses the documents of one source that `part` takes. `whole_template` names the
/// language of a file that is a template whole (see [`Template::of_file_name`]).
pub fn parse_part(
    id: SourceId,
    text: &str,
    context: bool,
    whole_template: Option<Template>,
    part: Part,
) -> ParsedSource {
    if let Some(template) = whole_template {
        return ParsedSource {
            skipped: Some(SkipReason::Template(template)),
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
    let body = &text[base..];
    // Each task re-splits its own byte range: a stream of tiny documents costs a few bytes
    // per task, never a slot per document.
    let share = alias_share(body);
    let parse_batch = |&(from, to): &(usize, usize)| {
        let mut out = ParsedSource::default();
        let _share = AliasShare::set(share);
        for (off, d) in documents(&body[from..to]) {
            if part.takes(d) {
                out.add(parse_document(id, base + from + off, d, context));
            } else {
                out.left_out += 1;
            }
        }
        out
    };
    let batches = batches(body);
    let parts: Vec<ParsedSource> = if batches.len() > 1 {
        batches.par_iter().map(parse_batch).collect()
    } else {
        batches.iter().map(parse_batch).collect()
    };
    let mut out = ParsedSource::default();
    // Sized once: the batches' objects are moved in without regrowing the vector.
    out.objects
        .reserve_exact(parts.iter().map(|p| p.objects.len()).sum());
    for p in parts {
        out.append(p);
    }
    if !out.templates.is_empty() {
        let starts: Vec<usize> = line_starts(text.as_bytes()).collect();
        for (offset, line, _) in &mut out.templates {
            *line = starts.partition_point(|&s| s <= *offset);
        }
    }
    out
}

/// [`ALIAS_SHARE`] set for the current thread while it lives.
struct AliasShare(Option<usize>);

impl AliasShare {
    fn set(share: usize) -> AliasShare {
        AliasShare(ALIAS_SHARE.replace(Some(share)))
    }
}

impl Drop for AliasShare {
    fn drop(&mut self) {
        ALIAS_SHARE.set(self.0);
    }
}

/// The byte ranges of consecutive documents handed to one task each: at least
/// [`DOCS_PER_TASK`] documents and [`BYTES_PER_TASK`] bytes (the last one may hold fewer).
fn batches(body: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut docs = documents(body);
    while let Some((from, first)) = docs.next() {
        let (mut to, mut count) = (from + first.len(), 1);
        while count < DOCS_PER_TASK || to - from < BYTES_PER_TASK {
            let Some((off, d)) = docs.next() else { break };
            to = off + d.len();
            count += 1;
        }
        out.push((from, to));
    }
    out
}

impl ParsedSource {
    /// Adds one document's result.
    fn add(&mut self, r: DocResult) {
        match r {
            DocResult::Empty => {}
            DocResult::NotObject => {
                self.documents += 1;
                self.not_objects += 1;
            }
            DocResult::Objects(objs, count, invalid, holder) => {
                self.documents += 1;
                self.pod_holders.extend(holder);
                self.object_count += count;
                self.objects.extend(objs);
                self.problems.extend(invalid);
            }
            DocResult::Problem(p) => {
                self.documents += 1;
                self.problems.push(p);
            }
            DocResult::Template(offset, language) => self.templates.push((offset, 0, language)),
        }
    }
}

/// Splits a YAML stream into `(offset, document text)` at lines starting with `---` or `...`
/// followed by whitespace or end of line. The marker line stays with the document it opens,
/// and so do the directives (`%YAML`, `%TAG`) before it. Lines end at LF, CRLF or a lone CR,
/// YAML's three line breaks.
pub fn split_documents(text: &str) -> Vec<(usize, &str)> {
    documents(text).collect()
}

/// The documents of a YAML stream, one at a time (see [`split_documents`]).
pub fn documents(text: &str) -> Documents<'_> {
    Documents {
        text,
        start: 0,
        next_line: 0,
    }
}

/// An iterator over the documents of a YAML stream: see [`documents`].
pub struct Documents<'t> {
    text: &'t str,
    /// Where the document being read starts.
    start: usize,
    /// Where the next line to look at starts.
    next_line: usize,
}

impl<'t> Iterator for Documents<'t> {
    type Item = (usize, &'t str);

    fn next(&mut self) -> Option<(usize, &'t str)> {
        let bytes = self.text.as_bytes();
        while self.next_line < bytes.len() {
            let line_start = self.next_line;
            let line_end = memchr::memchr2(b'\n', b'\r', &bytes[line_start..])
                .map_or(bytes.len(), |p| line_start + p);
            self.next_line = next_line(bytes, line_end);
            // Only lines that start with `-` or `.` can be markers.
            if !matches!(bytes[line_start], b'-' | b'.') {
                continue;
            }
            let line = &bytes[line_start..line_end];
            let cut = if line_start > 0 && is_marker(line, b"---") {
                (!is_directive_prelude(&bytes[self.start..line_start])).then_some(line_start)
            } else if is_marker(line, b"...") {
                // The document ends here; the next line starts a new one.
                Some(self.next_line)
            } else {
                None
            };
            if let Some(at) = cut {
                let start = std::mem::replace(&mut self.start, at);
                if start < at {
                    return Some((start, &self.text[start..at]));
                }
            }
        }
        let start = std::mem::replace(&mut self.start, bytes.len());
        (start < bytes.len()).then(|| (start, &self.text[start..]))
    }
}

/// Where each line after the first starts: after LF, CRLF or a lone CR.
pub fn line_starts(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    std::iter::once(0).chain(
        memchr::memchr2_iter(b'\n', b'\r', bytes)
            .filter(|&p| !(bytes[p] == b'\r' && bytes.get(p + 1) == Some(&b'\n')))
            .map(|p| p + 1),
    )
}

/// The start of the line after the one ending at `line_end` (a line break or the end).
fn next_line(bytes: &[u8], line_end: usize) -> usize {
    match bytes.get(line_end..line_end + 2) {
        Some(b"\r\n") => line_end + 2,
        _ => (line_end + 1).min(bytes.len()),
    }
}

/// Is `chunk` the directives of a document yet to start: directive lines (`%` in column 0)
/// and blank or comment lines only, with at least one directive?
fn is_directive_prelude(chunk: &[u8]) -> bool {
    if !matches!(
        chunk.first(),
        Some(b'%' | b'#' | b' ' | b'\t' | b'\n' | b'\r')
    ) {
        return false;
    }
    let mut directive = false;
    let mut from = 0;
    while from < chunk.len() {
        let end = memchr::memchr2(b'\n', b'\r', &chunk[from..]).map_or(chunk.len(), |p| from + p);
        let line = &chunk[from..end];
        let trimmed = line.trim_ascii_start();
        if line.first() == Some(&b'%') {
            directive = true;
        } else if !(trimmed.is_empty() || trimmed.starts_with(b"#")) {
            return false;
        }
        from = end + 1;
    }
    directive
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
    /// The objects kept, how many were found, their invalid values, and the kind and
    /// apiVersion of an unmodelled object that holds a pod template ([`pods`]).
    Objects(Vec<Object>, usize, Vec<ParseProblem>, Option<(Str, Str)>),
    Problem(ParseProblem),
    /// An unrendered template, at this offset: see [`template_syntax_breaks`].
    Template(usize, Template),
}

fn parse_document(id: SourceId, offset: usize, text: &str, context: bool) -> DocResult {
    let root = match deserialize_recorded(text, None, true) {
        // An unmodelled kind: only the header is needed, and the assurance that the rest is
        // valid YAML; when in doubt, the whole document is deserialized for serde-saphyr's
        // own verdict.
        Ok((DocRoot::Header(doc), _)) if skim::plainly_valid(text) => Ok((DocRoot::Map(doc), None)),
        Ok((DocRoot::Header(_), _)) => deserialize_recorded(text, None, false),
        root => root,
    };
    match root {
        Err(p) => match template_syntax_breaks(text) {
            Some(language) => DocResult::Template(offset, language),
            None => DocResult::Problem(unreadable(id, offset, text, context, p)),
        },
        Ok((DocRoot::Null, _)) => DocResult::Empty,
        Ok((DocRoot::NotAMap, _)) => DocResult::NotObject,
        Ok((DocRoot::Map(doc) | DocRoot::Header(doc), recorded)) => {
            let (doc, recorded) = if doc.needs_reparse {
                let kind = classify(&doc);
                match deserialize_recorded(text, kind, false) {
                    Ok((DocRoot::Map(d), recorded)) => (d, recorded),
                    Ok(_) => (doc, recorded),
                    Err(p) => {
                        if let Some(language) = template_syntax_breaks(text) {
                            return DocResult::Template(offset, language);
                        }
                        return DocResult::Problem(unreadable(id, offset, text, context, p));
                    }
                }
            } else {
                (doc, recorded)
            };
            if doc.api_version.is_none() || doc.kind.is_none() {
                return DocResult::NotObject;
            }
            let holder = match classify(&doc) {
                Some(Kind::Other) => pods::holder(&doc, text),
                _ => None,
            };
            let list = classify(&doc) == Some(Kind::List);
            let mut doc = *doc;
            let rejected_ints = std::mem::take(&mut doc.rejected_ints);
            let mut objects = Vec::new();
            let count = if list {
                let items = std::mem::take(&mut doc.items);
                let kinds = items.iter().map(item_kind).collect();
                let mut from = Vec::with_capacity(items.len());
                let mut count = 0;
                for item in items {
                    let start = objects.len();
                    count += into_objects(id, offset, item, context, &mut objects);
                    from.push(start..objects.len());
                }
                if !context {
                    check_list_fields(text, kinds, &from, &mut objects, recorded);
                }
                count
            } else {
                let count = into_objects(id, offset, doc, context, &mut objects);
                if !context {
                    check_fields(text, &mut objects, recorded);
                }
                count
            };
            // A document read as several workloads is one object read once per pod template
            // (a CRD): an integer it rejects belongs to the object as a whole.
            let owner = objects.first().map(|o| Box::new(ObjectRef::of(o).whole()));
            let ints: Vec<ParseProblem> = (rejected_ints.into_iter())
                .map(|r| ParseProblem {
                    span: Span::new(offset + r.offset as usize, r.len as usize),
                    message: r.message,
                    rejected_value: true,
                    object: owner.clone(),
                    header: None,
                })
                .collect();
            let mut invalid: Vec<ParseProblem> = objects
                .iter()
                .flat_map(|o| {
                    let object = Box::new(ObjectRef::of(o));
                    (crate::model::rejected::rejected_values(o).into_iter()).map(move |q| {
                        ParseProblem {
                            span: q.span,
                            message: q.message,
                            rejected_value: true,
                            object: Some(object.clone()),
                            header: None,
                        }
                    })
                })
                .chain(ints)
                .collect();
            invalid.sort_by_key(|p| (p.span.offset, p.span.len));
            DocResult::Objects(objects, count, invalid, holder)
        }
    }
}

/// Finds the keys of a document's objects that their schemas do not declare
/// ([`fields`]): the whole object for the kinds with a schema, the pod templates of a
/// workload CRD whose template is a plain `PodTemplateSpec` (not Knative's
/// `RevisionTemplateSpec`).
fn check_fields(text: &str, objects: &mut [Object], recorded: Option<fields::Recorded<'_>>) {
    use crate::model::crd::CrdKind;
    let Some(first) = objects.first() else { return };
    match first.kind {
        Kind::Crd(CrdKind::KnativeService | CrdKind::KnativeConfiguration) => {}
        Kind::Crd(_) => {
            let templates: Vec<(usize, String)> = (objects.iter().enumerate())
                .filter_map(|(i, o)| {
                    let part = o.workload()?.part.as_ref()?;
                    let path = part.spec_path.as_deref()?.strip_suffix(".spec")?;
                    Some((i, path.to_string()))
                })
                .collect();
            if templates.is_empty() {
                return;
            }
            let paths = templates.iter().map(|(_, p)| p.clone()).collect();
            let (api, kind) = (first.api_version.clone(), first.kind_name.clone());
            let found = fields::unknown_fields(
                text,
                &api,
                &kind,
                &fields::Entry::Templates(paths),
                recorded,
            );
            let mut per_object: Vec<Vec<crate::model::UnknownField>> =
                vec![Vec::new(); objects.len()];
            for (t, f) in found {
                if let Some((i, _)) = templates.get(t) {
                    per_object[*i].push(f);
                }
            }
            for (o, found) in objects.iter_mut().zip(per_object) {
                o.unknown_fields = found.into_boxed_slice();
            }
        }
        _ if objects.len() == 1
            && fields::schemas().checks(&first.api_version, &first.kind_name) =>
        {
            let (api, kind) = (first.api_version.clone(), first.kind_name.clone());
            let found = fields::unknown_fields(text, &api, &kind, &fields::Entry::Object, recorded);
            objects[0].unknown_fields = found.into_iter().map(|(_, f)| f).collect();
        }
        _ => {}
    }
}

/// A List item's apiVersion and kind.
fn item_kind(item: &RawDoc) -> Option<(String, String)> {
    let api = item.api_version.as_ref()?.value.to_string();
    Some((api, item.kind.as_ref()?.value.to_string()))
}

/// [`check_fields`] for the items of a `kind: List` of `kinds`: the objects of item `i`
/// are `objects[from[i]]`. An item read as one object of a kind with a schema is checked
/// whole; a workload CRD's templates in a List are not looked into.
fn check_list_fields(
    text: &str,
    kinds: Vec<Option<(String, String)>>,
    from: &[std::ops::Range<usize>],
    objects: &mut [Object],
    recorded: Option<fields::Recorded<'_>>,
) {
    let s = fields::schemas();
    let checked = |i: usize| {
        from.get(i)
            .filter(|r| r.len() == 1)
            .map(|r| r.start)
            .filter(|&at| {
                let o = &objects[at];
                s.checks(&o.api_version, &o.kind_name)
            })
    };
    if !(0..kinds.len()).any(|i| checked(i).is_some()) {
        return;
    }
    let found = fields::unknown_fields(text, "v1", "List", &fields::Entry::Items(kinds), recorded);
    let mut per_object: Vec<Vec<crate::model::UnknownField>> = vec![Vec::new(); objects.len()];
    for (i, f) in found {
        if let Some(at) = checked(i) {
            per_object[at].push(f);
        }
    }
    for (o, found) in objects.iter_mut().zip(per_object) {
        if !found.is_empty() {
            o.unknown_fields = found.into_boxed_slice();
        }
    }
}

/// Does this document, which failed to parse, fail only because of template syntax, and
/// of which language? It does when it parses once the template's constructs are blanked out
/// (duplicate keys allowed where the template has branches, as `if`/`else` write the same
/// key twice): see [`template::breaking_language`]. A document that quotes `{{` or `${` in a valid string
/// (Prometheus alert text) and fails for another reason is a `parse-error` like any other.
fn template_syntax_breaks(text: &str) -> Option<Template> {
    template::breaking_language(text, |blanked, duplicates| {
        let mut opts = options();
        if duplicates {
            opts.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::LastWins;
        }
        // Rejected integers of the blanked text are not the document's: dropped.
        let parse = |preset| {
            crate::model::de::collect_rejected(|| {
                serde_saphyr::with_deserializer_from_str_with_options(blanked, opts.clone(), |d| {
                    DocSeed {
                        preset,
                        header_only: None,
                    }
                    .deserialize(d)
                })
            })
            .0
        };
        let at = |e: serde_saphyr::Error| to_doc_error(blanked, &e).span.offset;
        match parse(None) {
            Ok(DocRoot::Map(doc)) if doc.needs_reparse => {
                parse(classify(&doc)).map(drop).map_err(at)
            }
            r => r.map(drop).map_err(at),
        }
    })
}

fn classify(doc: &RawDoc) -> Option<Kind> {
    match (&doc.api_version, &doc.kind) {
        (Some(a), Some(k)) => Some(Kind::classify(a.value.as_str(), k.value.as_str())),
        _ => None,
    }
}

/// The problem of a document that could not be read (`p`), with the object its header
/// names when the header alone reads: a value that breaks the document's YAML (an unquoted
/// `1e2147483647`) lies in its body, which the header-only pass skips.
fn unreadable(id: SourceId, offset: usize, text: &str, context: bool, p: DocError) -> ParseProblem {
    let header = match deserialize(text, Some(Kind::Other), true) {
        Ok(DocRoot::Header(doc) | DocRoot::Map(doc)) => {
            let doc = *doc;
            let kind = classify(&doc);
            match (kind, doc.api_version, doc.kind) {
                (Some(kind), Some(api), Some(k)) if kind != Kind::List => Some(object(
                    (id, offset, context),
                    (&api, &k),
                    Kind::Other,
                    doc.meta,
                    Body::Other,
                )),
                _ => None,
            }
        }
        _ => None,
    };
    ParseProblem {
        span: Span::new(offset + p.span.offset, p.span.len),
        message: p.message,
        rejected_value: false,
        object: header.as_ref().map(|o| Box::new(ObjectRef::of(o))),
        header: header.map(Box::new),
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
    let mut meta = doc.meta;
    // A workload CRD is one object per pod template, each with the CRD's header.
    let bodies: Vec<(Kind, Body)> = match (kind, doc.body) {
        (Kind::Crd(_), _) if !doc.templates.is_empty() => (doc.templates.into_iter())
            .map(|w| (kind, Body::Workload(Box::new(w))))
            .collect(),
        (Kind::Crd(_), _) | (_, None) => vec![(Kind::Other, Body::Other)],
        (_, Some(body)) => vec![(kind, body)],
    };
    // Unmodelled kinds are counted as objects but carry nothing rules read.
    meta.retain_read_labels(bodies[0].0);
    let count = bodies.len();
    for (i, (kind, body)) in bodies.into_iter().enumerate() {
        let meta = if i + 1 == count {
            std::mem::take(&mut meta)
        } else {
            meta.clone()
        };
        let o = object((id, offset, context), (&api, &k), kind, meta, body);
        if o.is_read() {
            out.push(o);
        }
    }
    1
}

/// The object of source `id`'s document at `offset`, written with `apiVersion` `api` and
/// `kind` `k`.
fn object(
    (id, offset, context): (SourceId, usize, bool),
    (api, k): (&Spanned<Text>, &Spanned<Text>),
    kind: Kind,
    meta: ObjectMeta,
    body: Body,
) -> Object {
    let mut o = Object {
        id: 0,
        source: id,
        doc_offset: offset,
        context,
        api_version: Str::from(api.value.as_str()),
        api_version_span: Span::default(),
        kind,
        kind_name: Str::from(k.value.as_str()),
        kind_span: Span::default(),
        meta,
        body,
        unknown_fields: Box::default(),
    };
    o.kind_span = o.span(k);
    o.api_version_span = o.span(api);
    o
}

#[derive(Debug)]
struct DocError {
    span: Span,
    message: String,
}

/// Deserializes one document. With `header_only`, a document of an unmodelled kind comes
/// back as [`DocRoot::Header`], read only as far as its header.
fn deserialize(text: &str, preset: Option<Kind>, header_only: bool) -> Result<DocRoot, DocError> {
    deserialize_recorded(text, preset, header_only).map(|(root, _)| root)
}

/// [`deserialize`], with the document's events when [`fast`] read it whole (for the
/// unknown-field walk).
fn deserialize_recorded(
    text: &str,
    preset: Option<Kind>,
    header_only: bool,
) -> Result<(DocRoot, Option<fields::Recorded<'_>>), DocError> {
    match deserialize_fast(text, preset, header_only) {
        Some(read) => Ok(read),
        None => deserialize_saphyr(text, preset, header_only).map(|root| (root, None)),
    }
}

/// [`deserialize`] by serde-saphyr.
fn deserialize_saphyr(
    text: &str,
    preset: Option<Kind>,
    header_only: bool,
) -> Result<DocRoot, DocError> {
    read_root(preset, header_only, |seed| {
        serde_saphyr::with_deserializer_from_str_with_options(text, options(), |d| {
            seed.deserialize(d)
        })
    })
    .map_err(|e| to_doc_error(text, &e))
}

/// [`deserialize_recorded`] by [`fast`], when it reads the document with certainty.
fn deserialize_fast(
    text: &str,
    preset: Option<Kind>,
    header_only: bool,
) -> Option<(DocRoot, Option<fields::Recorded<'_>>)> {
    let mut recorded = None;
    let root = read_root(preset, header_only, |seed| {
        let (root, events) = fast::deserialize(text, seed)?;
        recorded = Some(events);
        Ok::<_, fast::Declined>(root)
    })
    .ok()?;
    Some((root, recorded))
}

/// Runs `read`, one deserializer over a document, with the document seed, and gives the
/// root with the integer values it rejected. A document of an unmodelled kind read with
/// `header_only` is its header, whatever stopped the deserializer after it.
fn read_root<E>(
    preset: Option<Kind>,
    header_only: bool,
    read: impl FnOnce(DocSeed<'_>) -> Result<DocRoot, E>,
) -> Result<DocRoot, E> {
    let header = RefCell::new(None);
    let (result, rejected_ints) = crate::model::de::collect_rejected(|| {
        read(DocSeed {
            preset,
            header_only: header_only.then_some(&header),
        })
    });
    match (result, header.into_inner()) {
        (_, Some(doc)) => Ok(DocRoot::Header(doc)),
        (Ok(DocRoot::Map(mut doc)), None) => {
            doc.rejected_ints = rejected_ints;
            Ok(DocRoot::Map(doc))
        }
        (result, None) => result,
    }
}

/// For tests and fuzzing: where [`fast`] reads `text` (one document, with and without
/// `header_only`) otherwise than serde-saphyr does, both readings.
pub fn fast_disagrees(text: &str) -> Option<(String, String)> {
    [true, false].into_iter().find_map(|header_only| {
        let (fast, _) = deserialize_fast(text, None, header_only)?;
        let saphyr = deserialize_saphyr(text, None, header_only);
        let (fast, saphyr) = (
            format!("{:?}", Ok::<_, DocError>(fast)),
            format!("{saphyr:?}"),
        );
        (fast != saphyr).then_some((fast, saphyr))
    })
}

/// For tests and benchmarks: whether [`fast`] reads `text` in full.
pub fn fast_path_reads(text: &str) -> bool {
    matches!(
        deserialize_fast(text, None, false),
        Some((DocRoot::Map(_), _))
    )
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
        "cannot deserialize null into string; use Option<String>" => {
            "expected a string, found null (`~`, `null` or nothing); a key or value here must be text".into()
        }
        "invalid char: cannot deserialize null; use Option<char>" => {
            "expected a character, found null".into()
        }
        _ if m.contains("alias replay limit") || m.contains("alias expansion") => format!(
            "{m}: the aliases of this file replay more than its alias budget allows (shared by all its documents)"
        ),
        _ => m,
    }
}

/// Byte offset of a 1-based line and character column (lines end at LF, CRLF or a lone CR).
pub fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut starts = line_starts(text.as_bytes()).skip(line.saturating_sub(1));
    let Some(start) = starts.next() else {
        return text.len();
    };
    let end = starts.next().unwrap_or(text.len());
    start
        + text[start..end]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(end - start, |(b, _)| b)
}

#[cfg(test)]
mod tests {
    use super::{is_marker, split_documents};

    /// The splitting rule, line by line and without shortcuts.
    fn split_by_lines(text: &str) -> Vec<(usize, &str)> {
        // Lines with their break: LF, CRLF or a lone CR.
        let mut lines = Vec::new();
        let mut from = 0;
        let b = text.as_bytes();
        for i in 0..b.len() {
            let ends = b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n'));
            if ends {
                lines.push(&text[from..=i]);
                from = i + 1;
            }
        }
        if from < text.len() {
            lines.push(&text[from..]);
        }
        let mut starts = vec![0usize];
        let mut at = 0;
        for line in lines {
            let bare = line.trim_end_matches(['\n', '\r']).as_bytes();
            let doc_start = *starts.last().unwrap_or(&0);
            let prelude = text[doc_start..at].split(['\n', '\r']).all(|l| {
                l.starts_with('%') || l.trim().is_empty() || l.trim_start().starts_with('#')
            }) && text[doc_start..at]
                .split(['\n', '\r'])
                .any(|l| l.starts_with('%'));
            if at > 0 && is_marker(bare, b"---") && !prelude {
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
            "a: 1", "- x", "  ---", "", "--- # c", "\r", "%YAML 1.2", "%TAG ! tag:x,2000:",
            "# c", "...\r", "---\r- y",
        ]), 0..24), newline_at_end: bool, cr: bool) {
            let mut text = lines.join(if cr { "\r" } else { "\n" });
            if newline_at_end {
                text.push('\n');
            }
            proptest::prop_assert_eq!(split_documents(&text), split_by_lines(&text));
        }
    }
}
