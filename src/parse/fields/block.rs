//! Parse stage, field names: the events of a document written in plain block style, read
//! line by line without the YAML event parser.
//!
//! The unknown-field walk only needs the structure of a document and the place of each key.
//! Most manifests are written in a small part of YAML: block mappings and sequences (also
//! compact `- key: value` items and sequences indented as far as their key), one-line
//! plain and quoted scalars, block scalars (`|`, `>-`), one-line flow sequences of scalars,
//! empty flow collections and comments. [`events`] reads such a document in one pass over
//! its lines and gives the events the event parser would give ([`Ev`]), at a fraction of its
//! cost. At the first construct outside that part (an anchor, an alias, a tag, a complex or
//! quoted key, a flow mapping, a scalar over several lines, a tab, a second document, …) it
//! gives up, and the caller runs the event parser: it never guesses.
//!
//! It reads only documents serde-saphyr has accepted, so it need not reject invalid YAML; a
//! test compares its events with the event parser's on every document it reads.

use std::borrow::Cow;
use std::ops::Range;

/// One event of a document, as the walk reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ev<'a> {
    MapStart,
    MapEnd,
    SeqStart,
    SeqEnd,
    /// A scalar: its text (as written, for a value that is not plain) and its bytes.
    Scalar(Cow<'a, str>, Option<Range<usize>>),
    /// A node the walk does not look into (an alias).
    Other,
    /// The end of the document.
    End,
}

/// The construct is outside what this reader reads: use the event parser.
struct GiveUp;

type Read<T> = Result<T, GiveUp>;

/// The events of `text` (one document), or `None` when it uses a construct this reader
/// leaves to the event parser.
pub(super) fn events(text: &str) -> Option<Vec<Ev<'_>>> {
    if text.contains(['\t', '\r', '\u{feff}']) {
        return None;
    }
    let mut r = Reader {
        text,
        lines: lines(text),
        at: 0,
        out: Vec::new(),
    };
    r.document().ok()?;
    Some(r.out)
}

/// A line with content: where it starts in the text, its indentation, and its text after
/// the indentation (without the line break).
#[derive(Clone, Copy)]
struct Line<'a> {
    start: usize,
    indent: usize,
    body: &'a str,
}

/// The lines that hold content: blank and comment-only lines are left out (a block scalar's
/// blank lines, and the lines of a scalar's own that begin with `#`, are skipped by
/// indentation, which leaving them out does not change).
fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        let body = line.trim_start_matches(' ');
        if !body.is_empty() && !body.starts_with('#') {
            out.push(Line {
                start,
                indent: line.len() - body.len(),
                body,
            });
        }
        start += raw.len();
    }
    out
}

struct Reader<'a> {
    text: &'a str,
    lines: Vec<Line<'a>>,
    /// The line being read.
    at: usize,
    out: Vec<Ev<'a>>,
}

impl<'a> Reader<'a> {
    fn document(&mut self) -> Read<()> {
        if let Some(first) = self.lines.first()
            && first.indent == 0
            && first.body.starts_with("---")
        {
            // `---` alone (or before a comment): anything after it on the line is not read.
            if !rest_is_empty(&first.body[3..]) {
                return Err(GiveUp);
            }
            self.at = 1;
        }
        let Some(line) = self.lines.get(self.at).copied() else {
            return Err(GiveUp);
        };
        if line.body.starts_with("---") || line.body.starts_with("...") {
            return Err(GiveUp);
        }
        match start_of(line.body)? {
            Start::Key(_) => self.mapping(line.indent, line.start + line.indent)?,
            _ => return Err(GiveUp),
        }
        // One document: anything after its root node is left to the event parser.
        if self.at < self.lines.len() {
            return Err(GiveUp);
        }
        self.out.push(Ev::End);
        Ok(())
    }

    /// The line being read, if any is left.
    fn line(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    /// A block mapping whose first key starts at byte `from`, on the line being read, at
    /// column `column`.
    fn mapping(&mut self, column: usize, mut from: usize) -> Read<()> {
        self.out.push(Ev::MapStart);
        loop {
            let line = self.line().ok_or(GiveUp)?;
            let body = &self.text[from..line.start + line.body.len() + line.indent];
            let Start::Key(colon) = start_of(body)? else {
                return Err(GiveUp);
            };
            let key = &body[..colon];
            if key.ends_with(' ') {
                return Err(GiveUp);
            }
            self.out
                .push(Ev::Scalar(Cow::Borrowed(key), Some(from..from + colon)));
            let value_at = from + colon + 1;
            self.value(column, value_at)?;
            match self.line() {
                Some(next) if next.indent == column && !is_dash(next.body) => {
                    from = next.start + next.indent;
                }
                Some(next) if next.indent > column => return Err(GiveUp),
                _ => break,
            }
        }
        self.out.push(Ev::MapEnd);
        Ok(())
    }

    /// A block sequence whose dashes are at column `column`, the first one at byte `from`.
    fn sequence(&mut self, column: usize, mut from: usize) -> Read<()> {
        self.out.push(Ev::SeqStart);
        loop {
            let line = self.line().ok_or(GiveUp)?;
            let end = line.start + line.indent + line.body.len();
            let after = &self.text[from + 1..end];
            let content = after.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                // The item is on the lines below, or empty.
                self.at += 1;
                self.nested_or_empty(column, false)?;
            } else {
                let at = end - content.len();
                let item_column = column + (at - from);
                match start_of(content)? {
                    Start::Dash => self.sequence(item_column, at)?,
                    Start::Key(_) => self.mapping(item_column, at)?,
                    Start::Node => self.inline(column, at, end)?,
                }
            }
            match self.line() {
                Some(next) if next.indent == column && is_dash(next.body) => {
                    from = next.start + next.indent;
                }
                Some(next) if next.indent > column => return Err(GiveUp),
                _ => break,
            }
        }
        self.out.push(Ev::SeqEnd);
        Ok(())
    }

    /// The value of a key of a mapping at `column`, which starts after the key's colon at
    /// byte `at` of the line being read.
    fn value(&mut self, column: usize, at: usize) -> Read<()> {
        let line = self.line().ok_or(GiveUp)?;
        let end = line.start + line.indent + line.body.len();
        let rest = &self.text[at..end];
        let content = rest.trim_start_matches(' ');
        if content.is_empty() || content.starts_with('#') {
            self.at += 1;
            return self.nested_or_empty(column, true);
        }
        if !rest.starts_with(' ') {
            return Err(GiveUp);
        }
        self.inline(column, end - content.len(), end)
    }

    /// A node on the lines below a key or a dash at `column`: more indented, or a sequence
    /// at the same column under a key; else an empty scalar.
    fn nested_or_empty(&mut self, column: usize, under_key: bool) -> Read<()> {
        match self.line() {
            Some(next) if next.indent > column => {
                let from = next.start + next.indent;
                match start_of(next.body)? {
                    Start::Dash => self.sequence(next.indent, from),
                    Start::Key(_) => self.mapping(next.indent, from),
                    // A scalar on the lines below its key: not read here.
                    Start::Node => Err(GiveUp),
                }
            }
            Some(next) if under_key && next.indent == column && is_dash(next.body) => {
                self.sequence(column, next.start + next.indent)
            }
            _ => {
                self.out.push(Ev::Scalar(Cow::Borrowed(""), None));
                Ok(())
            }
        }
    }

    /// A node that starts at byte `at` of the line being read and ends on it (but for a
    /// block scalar's lines), in a collection at `column`.
    fn inline(&mut self, column: usize, at: usize, end: usize) -> Read<()> {
        let content = &self.text[at..end];
        let first = content.as_bytes()[0];
        match first {
            b'"' | b'\'' => {
                let close = quoted_end(content).ok_or(GiveUp)?;
                if !rest_is_empty(&content[close..]) {
                    return Err(GiveUp);
                }
                self.out.push(Ev::Scalar(
                    Cow::Borrowed(&content[..close]),
                    Some(at..at + close),
                ));
            }
            b'|' | b'>' => {
                let header = content[1..]
                    .trim_start_matches(['+', '-', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
                if !rest_is_empty(header) {
                    return Err(GiveUp);
                }
                self.out.push(Ev::Scalar(Cow::Borrowed(""), None));
                self.at += 1;
                // Its lines are those indented deeper than the collection it is in.
                while self.line().is_some_and(|l| l.indent > column) {
                    self.at += 1;
                }
                return Ok(());
            }
            b'[' | b'{' => {
                let close = self.flow(at, end)?;
                if !rest_is_empty(&self.text[close..end]) {
                    return Err(GiveUp);
                }
            }
            b'&' | b'*' | b'!' | b'?' | b'%' | b'@' | b'`' | b',' | b']' | b'}' | b'#' => {
                return Err(GiveUp);
            }
            b'-' if is_dash(content) => return Err(GiveUp),
            _ => {
                let len = plain_end(content);
                if content[..len].contains(": ") || content[..len].ends_with(':') {
                    return Err(GiveUp);
                }
                self.out.push(Ev::Scalar(
                    Cow::Borrowed(&content[..len]),
                    Some(at..at + len),
                ));
            }
        }
        self.at += 1;
        // A scalar goes on over the lines indented deeper: not read here.
        match self.line() {
            Some(next) if next.indent > column => Err(GiveUp),
            _ => Ok(()),
        }
    }

    /// A flow collection that starts at byte `at` (`[` or `{`) and ends on its line, which
    /// ends at `end`: where it ends. Its keys are plain; its scalars are plain or quoted.
    fn flow(&mut self, at: usize, end: usize) -> Read<usize> {
        let text = self.text;
        let map = text.as_bytes()[at] == b'{';
        let close = if map { b'}' } else { b']' };
        self.out.push(if map { Ev::MapStart } else { Ev::SeqStart });
        let mut i = skip_spaces(text, at + 1, end);
        loop {
            match text.as_bytes().get(i) {
                Some(&b) if b == close => break,
                None => return Err(GiveUp),
                Some(_) => {}
            }
            if map {
                let key = &text[i..end];
                let colon = key.find(": ").ok_or(GiveUp)?;
                let name = &key[..colon];
                if !plain_in_flow(name) || name.ends_with(' ') {
                    return Err(GiveUp);
                }
                self.out
                    .push(Ev::Scalar(Cow::Borrowed(name), Some(i..i + colon)));
                i = skip_spaces(text, i + colon + 1, end);
            }
            i = self.flow_node(i, end)?;
            i = skip_spaces(text, i, end);
            match text.as_bytes().get(i) {
                Some(b',') => i = skip_spaces(text, i + 1, end),
                Some(&b) if b == close => {}
                _ => return Err(GiveUp),
            }
        }
        self.out.push(if map { Ev::MapEnd } else { Ev::SeqEnd });
        Ok(i + 1)
    }

    /// A node inside a flow collection, at byte `at`: where it ends.
    fn flow_node(&mut self, at: usize, end: usize) -> Read<usize> {
        let rest = &self.text[at..end];
        let len = match rest.as_bytes().first() {
            Some(b'[' | b'{') => return self.flow(at, end),
            Some(b'"' | b'\'') => quoted_end(rest).ok_or(GiveUp)?,
            Some(_) => {
                let len = rest.find([',', ']', '}']).ok_or(GiveUp)?;
                let item = rest[..len].trim_end_matches(' ');
                if !plain_in_flow(item) {
                    return Err(GiveUp);
                }
                item.len()
            }
            None => return Err(GiveUp),
        };
        self.out
            .push(Ev::Scalar(Cow::Borrowed(&rest[..len]), Some(at..at + len)));
        Ok(at + len)
    }
}

/// Whether `s` is a plain scalar inside a flow collection that this reader reads: not empty,
/// no indicator first, no colon, comment, comma or bracket inside.
fn plain_in_flow(s: &str) -> bool {
    let bad_start = s.starts_with([
        '[', ']', '{', '}', ',', '&', '*', '!', '?', '|', '>', '%', '@', '`', '#', '\'', '"',
    ]) || is_dash(s);
    !s.is_empty() && !bad_start && !s.contains([':', '#', ',', '{', '}', '[', ']'])
}

/// The first byte at or after `i` (before `end`) that is not a space.
fn skip_spaces(text: &str, i: usize, end: usize) -> usize {
    let rest = &text[i.min(end)..end];
    end - rest.trim_start_matches(' ').len()
}

/// Whether `body` starts a block sequence item: `-` then a space or nothing.
fn is_dash(body: &str) -> bool {
    body == "-" || body.starts_with("- ")
}

/// Whether what follows a node on its line is nothing or a comment.
fn rest_is_empty(rest: &str) -> bool {
    let trimmed = rest.trim_start_matches(' ');
    trimmed.is_empty() || (trimmed.starts_with('#') && trimmed.len() < rest.len())
}

/// What a node that starts a line's content (or follows a dash) is.
enum Start {
    Dash,
    /// A `key: …` line, with the colon's place.
    Key(usize),
    /// Anything else: a scalar, a flow collection or a block scalar ([`Reader::inline`]).
    Node,
}

fn start_of(content: &str) -> Read<Start> {
    if is_dash(content) {
        return Ok(Start::Dash);
    }
    if content.starts_with(['"', '\'']) {
        // A quoted key is left to the event parser; a quoted scalar is read.
        let close = quoted_end(content).ok_or(GiveUp)?;
        if content[close..].trim_start_matches(' ').starts_with(':') {
            return Err(GiveUp);
        }
        return Ok(Start::Node);
    }
    if content.starts_with(['[', '{', '|', '>']) {
        return Ok(Start::Node);
    }
    Ok(key_of(content)?.map_or(Start::Node, Start::Key))
}

/// Where the colon of a plain key ends `body` (a line's content from the key's start):
/// `None` when `body` is not a `key: …` line. A key this reader does not read (quoted,
/// complex, with an anchor or a tag, …) is given up on.
fn key_of(body: &str) -> Read<Option<usize>> {
    let bytes = body.as_bytes();
    match bytes.first() {
        None => return Ok(None),
        Some(
            b'"' | b'\'' | b'{' | b'[' | b'&' | b'*' | b'!' | b'?' | b'|' | b'>' | b'%' | b'@'
            | b'`' | b',' | b'#',
        ) => {
            return Err(GiveUp);
        }
        _ => {}
    }
    if is_dash(body) {
        return Ok(None);
    }
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b':' if bytes.get(i + 1).is_none_or(|&n| n == b' ') => {
                return if i == 0 { Err(GiveUp) } else { Ok(Some(i)) };
            }
            b'#' if bytes[i - 1] == b' ' => return Ok(None),
            _ => {}
        }
    }
    Ok(None)
}

/// The length of a plain scalar that starts `content`: up to a comment or the line's end,
/// without the spaces before either.
fn plain_end(content: &str) -> usize {
    let end = content.find(" #").unwrap_or(content.len());
    content[..end].trim_end_matches(' ').len()
}

/// The length of the quoted scalar that starts `content`, quotes included, when it ends on
/// the line.
fn quoted_end(content: &str) -> Option<usize> {
    let bytes = content.as_bytes();
    let quote = bytes[0];
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            b if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::Source;
    use super::*;
    use granit_parser::{Parser, StrInput};
    use proptest::prelude::*;

    /// The events as the walk compares them: every event's kind, and a key's text and
    /// bytes (a value's are not read).
    fn shape(events: &[Ev]) -> Vec<Ev<'static>> {
        // Per open collection: a mapping, and whether its next node is a key.
        let mut open: Vec<(bool, bool)> = Vec::new();
        let mut out = Vec::new();
        for e in events {
            let at_key = matches!(open.last(), Some((true, true)));
            if let Some((true, next_is_key)) = open.last_mut()
                && !matches!(e, Ev::MapEnd)
            {
                *next_is_key = !*next_is_key;
            }
            out.push(match e {
                Ev::Scalar(text, span) if at_key => {
                    Ev::Scalar(Cow::Owned(text.to_string()), span.clone())
                }
                Ev::Scalar(..) => Ev::Scalar(Cow::Borrowed(""), None),
                e => e.clone().into_owned(),
            });
            match e {
                Ev::MapStart => open.push((true, true)),
                Ev::SeqStart => open.push((false, false)),
                Ev::MapEnd | Ev::SeqEnd => {
                    open.pop();
                }
                _ => {}
            }
        }
        out
    }

    /// The event parser's events of `text`, `None` when it fails.
    fn parsed(text: &str) -> Option<Vec<Ev<'_>>> {
        let mut source = Source::Parser(Box::new(Parser::new(StrInput::new(text))));
        let mut out = Vec::new();
        loop {
            let e = source.next()?;
            let end = e == Ev::End;
            out.push(e);
            if end {
                return Some(out);
            }
        }
    }

    /// Whether this reader reads `text`; when it does, its events must be the parser's.
    fn read_as_the_parser(text: &str) -> bool {
        let Some(fast) = events(text) else {
            return false;
        };
        let slow = parsed(text).expect("the event parser reads what this reader reads");
        assert_eq!(shape(&fast), shape(&slow), "{text}");
        true
    }

    impl Ev<'_> {
        fn into_owned(self) -> Ev<'static> {
            match self {
                Ev::Scalar(t, s) => Ev::Scalar(Cow::Owned(t.into_owned()), s),
                Ev::MapStart => Ev::MapStart,
                Ev::MapEnd => Ev::MapEnd,
                Ev::SeqStart => Ev::SeqStart,
                Ev::SeqEnd => Ev::SeqEnd,
                Ev::Other => Ev::Other,
                Ev::End => Ev::End,
            }
        }
    }

    #[test]
    fn plain_block_documents_are_read_as_the_parser_reads_them() {
        let read = [
            "a: 1\n",
            "---\na: 1\nb:\n  c: x\n  d: 'y'\n",
            "--- # c\na: \"x: #y\" # c\n",
            "a:\n- x\n- y: 1\n  z: 2\n-\n  w: 1\n- - n\n  - m\nb: ~\n",
            "a:\n  - name: c\n    env:\n    - name: X\n      value: \"1\"\n    args: [\"--a\", '--b', c]\n  - name: d\n",
            "a: |\n  text: not a key\n  - nor an item\n\n  # nor a comment\nb: >-\n    folded\nc: |+2\n   x\n",
            "# head\na: {}\nb: []\nc: [ ]\nd: [a, b,]\ne: -1\nf: http://x:80/y\ng: a#b\n",
            "a:\nb:\n  # only a comment\nc: x\n",
            "  a: 1\n  b:\n    c: 2\n",
            "a: 'it''s'\nb: \"q\\\"uote\"\n-c: 1\nd/e.f: x\n",
            "a:\n  b:\n  - 1\n  c: 2\n",
            "a:\n  - - x\n    - y\n  - z\n",
            "a: {b: 1, c: [x, \"y\", []], d: {e: f g}, h: {}, }\nt:\n  - {key: k, operator: Exists} # c\n",
            "a: [b, [c], {d: e}]\n",
        ];
        for text in read {
            assert!(read_as_the_parser(text), "not read: {text}");
        }
    }

    #[test]
    fn other_constructs_are_left_to_the_parser() {
        let left = [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "? a\n: 1\n",
            "\"a\": 1\n",
            "a: {\"b\": 1}\n",
            "a: {b}\n",
            "a: {b, c: d}\n",
            "a: {b: 1} c\n",
            "a: [b,\n  c]\n",
            "a: multi\n  line\n",
            "a: \"multi\n  line\"\n",
            "a:\n\t- x\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n...\n",
            "- a\n",
            "just a scalar\n",
            "--- a: 1\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: [b: c]\n",
            "a: [x #y\n  ]\n",
            "a: 1\r\nb: 2\r\n",
            "a : 1\n",
            "<<: *base\n",
        ];
        for text in left {
            assert!(events(text).is_none(), "read: {text}");
        }
    }

    /// Every document of the repository's fixtures that this reader reads is read as the
    /// event parser reads it, and it reads most of them.
    #[test]
    fn the_fixtures_are_read_as_the_parser_reads_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for dir in ["fixtures", "tests", "examples"] {
            collect(&root.join(dir), &mut files);
        }
        let (mut docs, mut read) = (0, 0);
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            for (_, doc) in crate::parse::split_documents(&text) {
                if parsed(doc).is_none() {
                    continue;
                }
                docs += 1;
                read += usize::from(read_as_the_parser(doc));
            }
        }
        assert!(docs > 300, "{docs} documents");
        assert!(read * 10 > docs * 9, "{read} of {docs} documents read");
    }

    fn collect(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path.is_dir() {
                collect(&path, out);
            } else if path.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                out.push(path);
            }
        }
    }

    /// A random document in the styles this reader reads, and some it leaves.
    fn node(depth: u32) -> BoxedStrategy<String> {
        let scalar = prop_oneof![
            Just("x".to_string()),
            Just("\"a: #b\"".to_string()),
            Just("'c'' d'".to_string()),
            Just("-1".to_string()),
            Just("http://h:80".to_string()),
            Just("v # comment".to_string()),
            Just("[a, \"b\", c]".to_string()),
            Just("{}".to_string()),
            Just("{k: v w, l: [x, 'y'], m: {n: o}}".to_string()),
            Just("{a, b: c}".to_string()),
            Just("[]".to_string()),
            Just("|\n  block: text\n\n  - x".to_string()),
            Just(">-\n  folded".to_string()),
            Just("&a x".to_string()),
            Just("multi\n  line".to_string()),
            Just("".to_string()),
        ];
        if depth == 0 {
            return scalar.boxed();
        }
        let key = prop_oneof![
            Just("a"),
            Just("bb"),
            Just("c-d"),
            Just("e.f/g"),
            Just("h:i")
        ];
        let map = proptest::collection::vec((key, node(depth - 1)), 1..4).prop_map(|entries| {
            Doc::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            )
            .render()
        });
        let seq = proptest::collection::vec(node(depth - 1), 1..4)
            .prop_map(|items| Doc::Seq(items).render());
        prop_oneof![scalar, map, seq].boxed()
    }

    /// A collection rendered at column 0; nested ones are indented when placed.
    enum Doc {
        Map(Vec<(String, String)>),
        Seq(Vec<String>),
    }

    impl Doc {
        fn render(self) -> String {
            let mut out = String::from("\u{0}");
            match self {
                Doc::Map(entries) => {
                    for (k, v) in entries {
                        out.push_str(&format!("{k}:{}\n", place(&v, 2)));
                    }
                }
                Doc::Seq(items) => {
                    for v in items {
                        out.push_str(&format!("-{}\n", place(&v, 2)));
                    }
                }
            }
            out
        }
    }

    /// A node after `key:` or `-`: a collection (marked with a NUL) on the lines below,
    /// indented by `by`, a scalar on the same line.
    fn place(v: &str, by: usize) -> String {
        match v.strip_prefix('\u{0}') {
            Some(collection) => {
                let pad = " ".repeat(by);
                let lines: Vec<String> = (collection.lines())
                    .map(|l| {
                        if l.is_empty() {
                            String::new()
                        } else {
                            format!("{pad}{l}")
                        }
                    })
                    .collect();
                format!("\n{}", lines.join("\n"))
            }
            None if v.is_empty() => String::new(),
            None => {
                let pad = " ".repeat(by);
                format!(" {}", v.replace('\n', &format!("\n{pad}")))
            }
        }
    }

    proptest! {
        #[test]
        fn random_documents_are_read_as_the_parser_reads_them(
            entries in proptest::collection::vec((prop_oneof![Just("k"), Just("spec")], node(3)), 1..4)
        ) {
            let mut text = String::new();
            for (k, v) in entries {
                text.push_str(&format!("{k}:{}\n", place(&v, 2)));
            }
            if parsed(&text).is_some() {
                read_as_the_parser(&text);
            }
        }
    }
}
