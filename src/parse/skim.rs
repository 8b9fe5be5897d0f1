//! Parse stage, documents of kinds the model does not use: check the YAML without
//! deserializing it.
//!
//! A ConfigMap or a CustomResourceDefinition only needs its header (`apiVersion`, `kind`,
//! `metadata`) and the assurance that it is valid YAML, so that a broken document is still
//! a `parse-error`. serde-saphyr's deserializer does much more per event than the parser
//! underneath it (budgets, key fingerprints, scalar resolution), so the rest of such a
//! document is only run through the parser's event stream here, at less than half the cost.
//!
//! [`plainly_valid`] is conservative: it says yes only when serde-saphyr would certainly
//! accept the document too (no parse error, no duplicate key, within the depth and size
//! budgets), and it says no at the first feature whose meaning it does not model (anchors,
//! aliases, tags, merge keys, complex keys, integer-like keys, scalars that could be
//! non-finite floats). On a no, the caller deserializes the document in full, so every
//! message is serde-saphyr's own.

use super::keys::{MapKeys, OpenKeys};
use granit_parser::{Event, Parser, ScalarStyle, StrInput};

enum Frame<'a> {
    Seq,
    Map {
        keys: MapKeys<'a>,
        /// The next child is a key (not a value).
        at_key: bool,
    },
}

/// Whether serde-saphyr, with karplint's [`super::options`], certainly accepts `text` (one
/// YAML document) when it deserializes it into `IgnoredAny`, and the document visitor
/// ([`super::document`]) can read every top-level key as a name.
pub fn plainly_valid(text: &str) -> bool {
    let budget = super::budget();
    let mut parser = Parser::with_options(StrInput::new(text), parser_options());
    let mut stack: Vec<Frame> = Vec::new();
    let mut keys = OpenKeys::default();
    let (mut events, mut nodes, mut scalar_bytes, mut documents) = (0usize, 0usize, 0usize, 0);
    while let Some(item) = parser.next_event() {
        let Ok((event, _)) = item else {
            return false;
        };
        events += 1;
        if events > budget.max_events {
            return false;
        }
        let (key, collection) = match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => continue,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return false;
                }
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(Frame::Map { keys: map, .. }) = stack.pop() {
                    keys.close(&map);
                }
                continue;
            }
            Event::Scalar(value, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return false;
                }
                scalar_bytes += value.len();
                if style == ScalarStyle::Plain && maybe_non_finite(&value) {
                    return false;
                }
                (Some((value, style)), None)
            }
            Event::SequenceStart(_, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return false;
                }
                (None, Some(Frame::Seq))
            }
            Event::MappingStart(_, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return false;
                }
                (
                    None,
                    Some(Frame::Map {
                        keys: keys.open(),
                        at_key: true,
                    }),
                )
            }
            // Aliases, anchors, comments: meanings this check does not model.
            _ => return false,
        };
        nodes += 1;
        if nodes > budget.max_nodes || scalar_bytes > budget.max_total_scalar_bytes {
            return false;
        }
        if let Some(Frame::Map { keys: map, at_key }) = stack.last_mut() {
            if *at_key {
                // A mapping key: only scalars whose identity is their text.
                let Some((value, style)) = key else {
                    return false;
                };
                if style == ScalarStyle::Plain && !plain_key_is_text(&value) {
                    return false;
                }
                if !keys.insert(map, value) {
                    return false;
                }
            }
            *at_key = !*at_key;
        }
        if let Some(frame) = collection {
            stack.push(frame);
            // serde-saphyr's depth budget counts nested collections.
            if stack.len() >= budget.max_depth {
                return false;
            }
        }
    }
    true
}

/// The parser's options as serde-saphyr sets them from karplint's [`super::budget`], without
/// comments.
pub(super) fn parser_options() -> granit_parser::Options {
    let budget = super::budget();
    granit_parser::options! {
        emit_comments: false,
        simple_key_max_lookahead: budget.simple_key_max_lookahead,
        flow_nesting_limit: budget.flow_nesting_limit,
        block_nesting_limit: granit_parser::Options::default()
            .block_nesting_limit
            .max(budget.max_depth.saturating_add(1)),
    }
}

/// For tests and fuzzing: whether serde-saphyr, with karplint's options, deserializes `text`
/// into `IgnoredAny` (the bar [`plainly_valid`] must never be laxer than).
pub fn ignored_any_accepts(text: &str) -> bool {
    serde_saphyr::with_deserializer_from_str_with_options(text, super::options(), |d| {
        <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d)
    })
    .is_ok()
}

/// For tests and fuzzing, on one document as production treats it: whether it is of an
/// unmodelled kind, the skim accepts it, and yet the full document path rejects it (the
/// one outcome that would hide a `parse-error`).
pub fn hides_an_error(text: &str) -> bool {
    use super::{DocRoot, deserialize};
    matches!(deserialize(text, None, true), Ok(DocRoot::Header(_)))
        && plainly_valid(text)
        && deserialize(text, None, false).is_err()
}

/// A plain key serde-saphyr reads as text and compares by its text: not one it reads as an
/// integer (`1` and `0x1` are the same key to it), not a null (which the document visitor
/// cannot read as a top-level key name), and not a merge key.
fn plain_key_is_text(key: &str) -> bool {
    !matches!(
        key.as_bytes().first(),
        Some(b'0'..=b'9' | b'+' | b'-' | b'.')
    ) && !matches!(key, "" | "~" | "null" | "Null" | "NULL" | "<<")
}

/// A plain scalar that might resolve to an infinite or NaN float, which serde-saphyr
/// rejects: `.inf`, `.nan`, or a number with an exponent or too many digits to be finite.
/// (`512Mi` or `v1.2` cannot be floats at all.)
fn maybe_non_finite(s: &str) -> bool {
    let t = s.trim_start_matches(['+', '-']);
    match t.as_bytes().first() {
        Some(b'.') => true,
        Some(b'0'..=b'9') => t.len() > 300 || t.bytes().any(|b| b == b'e' || b == b'E'),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{hides_an_error, ignored_any_accepts, plainly_valid};

    #[test]
    fn plain_documents_are_valid() {
        for text in [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  a.yaml: |\n    x: 1\n  b: \"2\"\n",
            "{\"apiVersion\": \"v1\", \"kind\": \"Service\", \"spec\": {\"ports\": [{\"port\": 80}]}}",
            "",
            "# only a comment\n",
            "a: [1, 2.5, -3, true, null, ~, \"x\", 'y', 512Mi, 100m, 0x1F]\n",
        ] {
            assert!(plainly_valid(text), "{text}");
            assert!(ignored_any_accepts(text), "{text}");
        }
    }

    #[test]
    fn doubtful_documents_go_to_serde() {
        for text in [
            "a: 1\na: 2\n",
            "m:\n  k: 1\n  k: 2\n",
            "1: a\n0x1: b\n",
            "a: &x 1\nb: *x\n",
            "a: !!binary aGk=\n",
            "<<: {a: 1}\n",
            "? [a, b]\n: c\n",
            "a: .inf\n",
            "a: 1e999\n",
            "a: 1.5e400\n",
            "a: -.INF\n",
            "a: [\n",
            "a: b: c\n",
            "~: 1\n",
            "null: 1\n",
            ": 1\n",
            "? \n: 1\n",
            "{a: 1, : 2}\n",
        ] {
            assert!(!plainly_valid(text), "{text}");
        }
    }

    #[test]
    fn large_mappings_still_find_duplicates() {
        let mut text: String = (0..100).map(|i| format!("k{i}: {i}\n")).collect();
        assert!(plainly_valid(&text));
        text.push_str("k42: again\n");
        assert!(!plainly_valid(&text));
        assert!(!ignored_any_accepts(&text));
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(4000))]
        /// After a ConfigMap's header, whatever the skim accepts the document visitor
        /// accepts too.
        #[test]
        fn never_laxer_than_the_document_path(tokens in proptest::collection::vec(proptest::sample::select(vec![
            "a", "b", "k", ":", ": ", " ", "  ", "\n", "\n  ", "- ", "[", "]", "{", "}", ", ",
            "\"", "'", "\"q\"", "&x ", "*x", "!!str ", "1", "0x1", "1e999", ".inf", "-", "~",
            "null", "true", "\t", "# c", "|\n", "? ", "<<", "apiVersion", "kind", "metadata",
        ]), 0..30)) {
            let text = format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: a}}\ndata: 1\n{}", tokens.concat());
            proptest::prop_assert!(!hides_an_error(&text), "{:?}", text);
        }


        /// Whatever the skim accepts, serde-saphyr accepts too.
        #[test]
        fn never_laxer_than_serde(tokens in proptest::collection::vec(proptest::sample::select(vec![
            "a", "b", "k", ":", ": ", " ", "  ", "\n", "\n  ", "- ", "[", "]", "{", "}", ", ",
            "\"", "'", "\"q\"", "&x ", "*x", "!!str ", "!t ", "1", "01", "0x1", "1e999", ".inf",
            "-", "+", "~", "null", "true", "\t", "# c", "|\n", ">-\n", "? ", "<<", "---", "...",
            "\\", "%YAML 1.2\n", "\r\n", "é",
        ]), 0..40)) {
            let text: String = tokens.concat();
            if plainly_valid(&text) {
                proptest::prop_assert!(ignored_any_accepts(&text), "{:?}", text);
            }
        }
    }

    #[test]
    fn depth_is_bounded() {
        let deep = format!("a: {}{}\n", "[".repeat(200), "]".repeat(200));
        assert!(!plainly_valid(&deep));
        let fine = format!("a: {}{}\n", "[".repeat(20), "]".repeat(20));
        assert!(plainly_valid(&fine));
    }
}
