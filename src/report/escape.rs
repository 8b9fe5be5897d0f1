//! Report stage: what of a manifest may reach a terminal. Names, values, file names and
//! parse-error snippets come from the linted files; a control character among them (an
//! `ESC ]8;;` hyperlink, a screen clear, a title change, a carriage return that overwrites
//! the line) must not be sent raw to the terminal or the CI log.
//!
//! Two forms, one per kind of text:
//! - **Text** (messages, labels, help, file and object names) writes each such character as
//!   a Rust-style escape, `\u{1b}`, so the reader sees exactly which byte was there.
//! - **Source snippets** (the lines miette quotes) replace each such character with *one*
//!   visible character: the Control Picture of a C0 character or DEL (`␛` for ESC, U+2400
//!   block), U+FFFD for the others. One character stays one character, so the label columns
//!   under the snippet still line up; byte offsets move, and [`Sanitized::map`] maps them.
//!
//! JSON and SARIF need neither: serde_json writes every control character as `\u00XX`.
//!
//! The characters escaped are Unicode's controls (`char::is_control`: C0, DEL, C1) and the
//! bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what a
//! terminal shows, and the line and paragraph separators (U+2028, U+2029), which some
//! viewers and JavaScript parsers take as line ends. Newline and tab are kept in text; a snippet also keeps the `\r` of a
//! `\r\n` line end.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal raw.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}'..='\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with every unsafe character but newline and tab written as `\u{XX}`.
pub fn text(s: &str) -> Cow<'_, str> {
    escape(s, |c| c == '\n' || c == '\t')
}

/// `s` with every unsafe character written as `\u{XX}`, newline and tab too: for a cell
/// of a one-line-per-row table.
pub fn line(s: &str) -> Cow<'_, str> {
    escape(s, |_| false)
}

fn escape(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) && !keep(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The one visible character that stands for `c` in a source snippet.
fn picture(c: char) -> char {
    match u32::from(c) {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{fffd}'),
        0x7f => '\u{2421}',
        _ => '\u{fffd}',
    }
}

/// A piece of source text with its unsafe characters replaced by pictures, and where the
/// replacements moved the bytes after them.
pub struct Sanitized {
    pub text: String,
    /// `(original offset, sanitized offset)` just after each replaced character, in order.
    shifts: Vec<(usize, usize)>,
}

impl Sanitized {
    /// Sanitizes `s`; a `\r` is kept before `\n` and a lone one becomes `\n` (it ends a line),
    /// and every newline and tab is kept.
    pub fn new(s: &str) -> Self {
        let mut text = String::with_capacity(s.len());
        let mut shifts = Vec::new();
        let mut chars = s.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let crlf = c == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n');
            if c == '\r' && !crlf {
                // A lone CR ends a line, as YAML and the line index count it: one byte for
                // one byte, so nothing after it moves.
                text.push('\n');
            } else if unsafe_char(c) && !matches!(c, '\n' | '\t') && !crlf {
                text.push(picture(c));
                shifts.push((i + c.len_utf8(), text.len()));
            } else {
                text.push(c);
            }
        }
        Sanitized { text, shifts }
    }

    /// The offset in [`Sanitized::text`] of byte `offset` of the original text.
    pub fn map(&self, offset: usize) -> usize {
        let i = self.shifts.partition_point(|&(o, _)| o <= offset);
        match i.checked_sub(1).map(|i| self.shifts[i]) {
            Some((o, s)) => s + (offset - o),
            None => offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_escapes_controls_and_keeps_layout() {
        assert_eq!(text("a\u{1b}]8;;x\u{7}b"), "a\\u{1b}]8;;x\\u{7}b");
        assert_eq!(text("line\n\tnext"), "line\n\tnext");
        assert_eq!(text("a\rb\u{9b}c\u{202e}"), "a\\u{d}b\\u{9b}c\\u{202e}");
        assert_eq!(line("a\nb\tc"), "a\\u{a}b\\u{9}c");
        assert_eq!(text("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert!(matches!(text("plain é"), Cow::Borrowed(_)));
    }

    #[test]
    fn snippet_keeps_one_char_per_char_and_maps_offsets() {
        let s = "k: \u{1b}[2J\u{9b}x\r\ny\rz\n";
        let san = Sanitized::new(s);
        assert_eq!(san.text, "k: \u{241b}[2J\u{fffd}x\r\ny\nz\n");
        assert_eq!(s.chars().count(), san.text.chars().count());
        // Every character boundary maps to the boundary of the same character.
        for (n, (i, _)) in s.char_indices().enumerate() {
            let j = san.map(i);
            assert_eq!(san.text[..j].chars().count(), n, "offset {i}");
        }
        assert_eq!(san.map(s.len()), san.text.len());
    }
}
