//! Report stage: findings and counts → text. Only this stage writes to stdout.
//!
//! Sources are re-read here, and only those with findings, so earlier stages never keep a
//! file's text. Zero-length spans of YAML containers are widened to the key that owns them,
//! and byte offsets become 1-based lines and character columns.

pub mod baseline;
pub mod cost;
pub(crate) mod escape;
pub(crate) mod github;
pub mod human;
pub(crate) mod json;
pub(crate) mod markdown;
pub(crate) mod plan;
pub(crate) mod sarif;

use crate::diagnostic::{Finding, Severity};
use crate::model::{SourceId, Span};
use crate::parse::SkipReason;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One input of the run: a file or standard input.
#[derive(Debug, Clone)]
pub struct Source {
    /// Path as shown to the user (relative as given on the command line), `<stdin>` for `-`.
    pub name: String,
    /// Where the text is read again for reports.
    pub origin: Origin,
    pub context: bool,
    /// A kustomization's changes karplint applies itself, when the tool did not render it.
    pub kustomized: Option<std::sync::Arc<crate::kustomize::Transform>>,
}

/// Where a source's text comes from. A large tree has one source per file, so the path is
/// kept once: as the name wherever the name reads back as the same path.
#[derive(Debug, Clone)]
pub enum Origin {
    /// Standard input or another stream named as a path (a FIFO, `/dev/stdin`, a process
    /// substitution), kept whole because it cannot be read twice (`None` when reading it
    /// failed or it was over `--max-file-size`, or for a second `-`).
    Stdin(Option<String>),
    /// The file at [`Source::name`].
    Named,
    /// A file whose path is not valid UTF-8, so the name shows it lossily.
    Path(PathBuf),
}

impl Source {
    /// A file to read; `name` is the path as shown (a leading `./` dropped).
    pub fn file(path: PathBuf, context: bool) -> Self {
        let name = path.display().to_string();
        let name = name.strip_prefix("./").unwrap_or(&name).to_owned();
        let origin = if path.to_str().is_some() {
            Origin::Named
        } else {
            Origin::Path(path)
        };
        Source {
            name,
            origin,
            context,
            kustomized: None,
        }
    }

    /// The file's path; `None` for standard input.
    pub fn path(&self) -> Option<&Path> {
        match &self.origin {
            Origin::Stdin(_) => None,
            Origin::Named => Some(Path::new(&self.name)),
            Origin::Path(p) => Some(p),
        }
    }

    /// Standard input's text, held in memory.
    pub fn stdin_text(&self) -> Option<&str> {
        match &self.origin {
            Origin::Stdin(t) => t.as_deref(),
            _ => None,
        }
    }

    /// The text again, for a report: invalid UTF-8 replaced, an unreadable file empty.
    pub fn reread(&self) -> String {
        match (self.stdin_text(), self.path()) {
            (Some(t), _) => t.to_owned(),
            (None, Some(p)) => std::fs::read(p)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default(),
            (None, None) => String::new(),
        }
    }
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Summary {
    pub files: usize,
    pub documents: usize,
    pub objects: usize,
    pub skipped: usize,
    /// Documents skipped as unrendered templates (Helm, Handlebars, Terraform) in files
    /// otherwise linted.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_documents: usize,
    /// Hidden directories, and hidden files that would have been linted, left out of the
    /// walk (`--hidden` lints them; `.git` is never walked nor counted).
    pub skipped_hidden: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    /// Findings hidden by `karplint-ignore` comments or `karplint.io/ignore` annotations.
    pub suppressed: usize,
    /// With `--baseline`: findings the baseline holds, not reported (present only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baselined: Option<usize>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Everything a report needs.
pub struct Report {
    pub sources: Vec<Source>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    pub skipped: Vec<(SourceId, SkipReason)>,
    /// Documents without apiVersion/kind, which are counted but not linted.
    pub not_objects: usize,
    /// What the run could not do or assumed (no NodePool found, objects not analysed,
    /// kustomize not rendered): every format carries them.
    pub notes: Vec<Note>,
}

/// Which findings a text report lists: all of them, or with `--quiet` only those at or
/// above `--fail-on` (none when it is `never`), without the summary and notes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shown {
    pub quiet: bool,
    /// With `quiet`: the least severity listed.
    pub at_least: Option<Severity>,
}

impl Shown {
    pub fn includes(&self, f: &Finding) -> bool {
        !self.quiet || self.at_least.is_some_and(|t| f.severity >= t)
    }

    /// The findings of `report` shown, most severe first; the sort is stable, so each
    /// severity keeps the report's order (the CI formats list errors first).
    pub fn most_severe_first<'r>(&self, report: &'r Report) -> Vec<&'r Finding> {
        let mut findings: Vec<&Finding> = report
            .findings
            .iter()
            .filter(|f| self.includes(f))
            .collect();
        findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
        findings
    }
}

/// A note on the run, with a kind scripts can match on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Note {
    /// `checks-not-run` (a check the run could not make), `not-analysed` (objects karplint
    /// does not read), `skipped` (documents or files left out), `assumed` (how the run read
    /// objects: identical copies as one, image-less Pods as templates), `overlay-not-applied`
    /// (a NodeOverlay Karpenter would not apply), `kustomize`, `config`, `baseline`.
    pub kind: &'static str,
    pub message: String,
}

impl Note {
    pub fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Note {
            kind,
            message: message.into(),
        }
    }

    /// Whether the note says a check did not run: a warning where the format has levels.
    pub fn is_warning(&self) -> bool {
        self.kind == "checks-not-run"
    }
}

/// A finding's location, resolved against its source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub offset: usize,
    pub length: usize,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
}

/// Source texts loaded for rendering.
pub struct Texts {
    /// Whole texts with their line starts, kept only for output that quotes the source
    /// (human reports): each source is read and indexed once, however many findings quote it.
    texts: BTreeMap<SourceId, (String, LineIndex)>,
    /// Every finding's and related location's position, resolved once.
    positions: BTreeMap<(SourceId, Span), Position>,
}

impl Texts {
    /// Loads the text of every source that has a finding or a related location, one source
    /// at a time, and resolves their positions. With `keep_text` false (machine formats)
    /// each text is dropped once its positions are known, so a run with findings in every
    /// file never holds the whole tree in memory.
    pub fn load_with(report: &Report, keep_text: bool) -> Self {
        let mut wanted: BTreeMap<SourceId, Vec<Span>> = BTreeMap::new();
        for f in &report.findings {
            wanted.entry(f.source).or_default().push(f.span);
            for r in &f.related {
                wanted.entry(r.source).or_default().push(r.span);
            }
        }
        // Files are re-read in parallel: a large tree's findings span thousands of files.
        let loaded: Vec<_> = wanted
            .into_par_iter()
            .map(|(id, spans)| {
                let src = &report.sources[id];
                let text = src.reread();
                let lines = LineIndex::new(&text);
                let positions: Vec<_> = spans
                    .into_iter()
                    .map(|span| ((id, span), lines.resolve(&text, span)))
                    .collect();
                (id, keep_text.then_some((text, lines)), positions)
            })
            .collect();
        let mut texts = BTreeMap::new();
        let mut positions = BTreeMap::new();
        for (id, text, spans) in loaded {
            positions.extend(spans);
            if let Some(text) = text {
                texts.insert(id, text);
            }
        }
        Texts { texts, positions }
    }

    /// [`Texts::load_with`], keeping the texts.
    pub fn load(report: &Report) -> Self {
        Self::load_with(report, true)
    }

    pub fn get(&self, id: SourceId) -> &str {
        self.texts.get(&id).map_or("", |(t, _)| t.as_str())
    }

    /// The position of a span, widening a container's zero-length span to its key.
    pub fn position(&self, id: SourceId, span: Span) -> Position {
        self.positions
            .get(&(id, span))
            .copied()
            .unwrap_or_else(|| match self.texts.get(&id) {
                Some((text, lines)) => lines.resolve(text, span),
                None => LineIndex::new("").resolve("", span),
            })
    }

    /// The whole lines of source `id` that hold `pos`, with `context` more lines either
    /// side: found through the line index, so quoting costs the lines and not the file.
    /// Empty (at offset 0) for a source whose text was not kept.
    pub fn lines_around(&self, id: SourceId, pos: Position, context: usize) -> Lines<'_> {
        let Some((text, index)) = self.texts.get(&id) else {
            return Lines {
                start: 0,
                first_line: 0,
                text: "",
            };
        };
        let first_line = index.line_of(text, pos.offset).saturating_sub(context);
        let last_line = index.line_of(text, pos.offset.saturating_add(pos.length)) + context;
        let start = index.starts[first_line];
        let end = index
            .starts
            .get(last_line + 1)
            .copied()
            .unwrap_or(text.len());
        Lines {
            start,
            first_line,
            text: &text[start..end],
        }
    }
}

/// Whole lines cut from a source by [`Texts::lines_around`].
pub struct Lines<'a> {
    /// Byte offset of the first line in the source.
    pub start: usize,
    /// 0-based number of the first line.
    pub first_line: usize,
    pub text: &'a str,
}

/// Where each line of a text starts, so many positions in one file cost a binary search
/// each rather than a scan from the top.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(text: &str) -> Self {
        #[cfg(test)]
        LINE_INDEXES.with(|c| c.set(c.get() + 1));
        LineIndex {
            starts: crate::parse::line_starts(text.as_bytes()).collect(),
        }
    }

    /// 0-based line of a byte offset (the last line past the end).
    fn line_of(&self, text: &str, offset: usize) -> usize {
        let offset = offset.min(text.len());
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// How many lines the text has.
    pub(crate) fn count(&self) -> usize {
        self.starts.len()
    }

    /// Where 1-based `line` starts (the text's end past the last line).
    pub(crate) fn start(&self, line: usize) -> usize {
        self.starts
            .get(line.wrapping_sub(1))
            .copied()
            .unwrap_or(usize::MAX)
    }

    /// The text of 1-based `line`, without its line break.
    pub(crate) fn line<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let start = self.start(line).min(text.len());
        let end = self.start(line + 1).min(text.len());
        text[start..end].trim_end_matches(['\n', '\r'])
    }

    /// 1-based line and character column of a byte offset. Lines end at LF, CRLF or a lone
    /// CR, as YAML's do; a byte order mark is not a column.
    pub(crate) fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let offset = floor_char_boundary(text, offset.min(text.len()));
        let line = self.starts.partition_point(|&s| s <= offset);
        let mut start = self.starts[line - 1];
        if start == 0 && text.starts_with('\u{feff}') && offset >= 3 {
            start = 3;
        }
        (line, text[start..offset].chars().count() + 1)
    }

    fn resolve(&self, text: &str, span: Span) -> Position {
        let span = widen(text, span);
        let (line, column) = self.line_col(text, span.offset);
        let (end_line, end_column) = self.line_col(text, span.offset + span.len);
        Position {
            offset: span.offset,
            length: span.len,
            line,
            column,
            end_line,
            end_column,
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Line indexes built on this thread, for the tests on counted work.
    pub(crate) static LINE_INDEXES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Writes a JSON report pretty-printed, with a final newline, as it is serialised: a large
/// run's report (megabytes) is never held whole.
pub(crate) fn write_json(
    value: &impl serde::Serialize,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(&mut *w, Separators::default());
    value.serialize(&mut ser)?;
    w.write_all(b"\n")
}

/// A JSON report as one string, as [`write_json`] writes it.
pub(crate) fn json_string(value: &impl serde::Serialize) -> String {
    let mut out = Vec::new();
    if let Err(e) = write_json(value, &mut out) {
        return format!("{{\"error\": \"{e}\"}}\n");
    }
    String::from_utf8(out).unwrap_or_default()
}

/// serde_json's pretty printing, with the line and paragraph separators (U+2028, U+2029)
/// written as `\u2028` and `\u2029`: valid JSON either way, but raw they end a line in
/// JavaScript before ES2019 and in some viewers.
#[derive(Default)]
struct Separators(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for Separators {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut rest = fragment;
        while let Some(i) = rest.find(['\u{2028}', '\u{2029}']) {
            w.write_all(&rest.as_bytes()[..i])?;
            let c = rest[i..].chars().next().unwrap_or('\u{2028}');
            write!(w, "\\u{:04x}", u32::from(c))?;
            rest = &rest[i + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// 1-based line and character column of a byte offset (see [`LineIndex::line_col`]; for
/// many offsets in one text, build the index once).
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    LineIndex::new(text).line_col(text, offset)
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// serde-saphyr gives a mapping or sequence value a zero-length span at its first token.
/// Point at the key that owns it instead (`awsElasticBlockStore:` rather than the first
/// key inside it): walk back over indentation, `- ` and `{`/`[`, then expect `key:`.
pub fn widen(text: &str, span: Span) -> Span {
    if span.len > 0 || span.offset > text.len() {
        return span;
    }
    let bytes = text.as_bytes();
    let mut i = floor_char_boundary(text, span.offset);
    // Walk back over whitespace, sequence dashes, flow openers and whole comment lines.
    loop {
        while i > 0 && matches!(bytes[i - 1], b' ' | b'\t' | b'-' | b'{' | b'[') {
            i -= 1;
        }
        if i > 0 && matches!(bytes[i - 1], b'\n' | b'\r') {
            i -= 1;
            if i > 0 && bytes[i] == b'\n' && bytes[i - 1] == b'\r' {
                i -= 1;
            }
            // Drop a trailing comment of the previous line.
            let line_start = text[..i].rfind(['\n', '\r']).map(|p| p + 1).unwrap_or(0);
            if let Some(h) = text[line_start..i].find(" #").map(|h| line_start + h) {
                i = h;
            } else if text[line_start..i].trim_start().starts_with('#') {
                i = line_start;
            }
            continue;
        }
        break;
    }
    if i == 0 || bytes[i - 1] != b':' {
        return span;
    }
    let colon = i - 1;
    let mut end = colon;
    while end > 0 && bytes[end - 1] == b' ' {
        end -= 1;
    }
    let mut start = end;
    if start > 0 && matches!(bytes[start - 1], b'"' | b'\'') {
        let q = bytes[start - 1];
        start -= 1;
        while start > 0 && bytes[start - 1] != q {
            start -= 1;
        }
        start = start.saturating_sub(1);
    } else {
        while start > 0 && !matches!(bytes[start - 1], b' ' | b'\n' | b'\t' | b'{' | b',' | b'-') {
            start -= 1;
        }
    }
    if start == end {
        return span;
    }
    Span::new(start, end - start)
}

/// Counts findings by severity into the summary.
pub fn count(summary: &mut Summary, findings: &[Finding]) {
    summary.errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    summary.warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    summary.infos = findings
        .iter()
        .filter(|f| f.severity == Severity::Info)
        .count();
}

/// Creates (or truncates) the file at `path` for a report or a baseline, never through a
/// symbolic link: a link planted at an output path (`-o report.json` pointing at
/// `~/.bashrc`) would have karplint overwrite its target.
pub fn create_output(path: &Path) -> std::io::Result<std::fs::File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(std::io::Error::other(
            "it is a symbolic link; karplint does not write through one",
        ));
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        // A link made between the check and the open fails the open.
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

#[cfg(test)]
mod json_tests {
    #[test]
    fn json_escapes_line_and_paragraph_separators() {
        let s = super::json_string(&serde_json::json!({"k": ["a\u{2028}b\u{2029}"]}));
        assert!(s.contains("a\\u2028b\\u2029"), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).expect("valid JSON");
        assert_eq!(back["k"][0], "a\u{2028}b\u{2029}");
        // The layout is serde_json's pretty printing.
        assert_eq!(
            s,
            serde_json::to_string_pretty(&back)
                .expect("json")
                .replace('\u{2028}', "\\u2028")
                .replace('\u{2029}', "\\u2029")
                + "\n"
        );
    }
}
