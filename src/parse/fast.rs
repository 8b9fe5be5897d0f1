//! Parse stage, the typed model read straight from the parser's events.
//!
//! serde-saphyr does much more per event than the parser underneath it (budgets, locations
//! of every event, key fingerprints, scalar views, comments), and the typed model is read
//! through it at about twice the cost of the event stream alone. The manifests the model
//! reads are nearly always plain block YAML: mappings, sequences and scalars without
//! anchors, aliases, tags or merge keys. This deserializer reads those from granit's events
//! with serde-saphyr's meaning (its `deserialize_any`, `deserialize_str`,
//! `deserialize_option` and map and sequence rules, with karplint's [`super::options`]),
//! and gives [`crate::model::de::Spanned`] the span serde-saphyr would
//! ([`location_from_span`]).
//!
//! It declines ([`Declined`]) at the first thing whose meaning it does not model, and at
//! any error, its own or a visitor's: an anchor, alias or tag, a scalar whose type it does
//! not resolve with certainty (`0.5e3`, `0755`, `.inf`, `yes` as a key), a duplicate key, a
//! merge key, a complex key, a document deeper than [`MAX_DEPTH`] or longer than
//! [`MAX_BYTES`]. The caller then deserializes the document with serde-saphyr, so every
//! value it cannot vouch for, and every message, is serde-saphyr's own.

use super::fields::Recorded;
use super::keys::{MapKeys, OpenKeys};
use crate::model::de::span_hook;
use granit_parser::{Event, Parser, ScalarStyle, Span, StrInput};
use serde::de::{self, DeserializeSeed, Visitor};
use std::borrow::Cow;
use std::fmt;

/// Collections nested deeper than this are left to serde-saphyr (whose budget is 128).
const MAX_DEPTH: usize = 100;

/// Documents longer than this are left to serde-saphyr, whose event and scalar budgets such
/// a document could reach.
const MAX_BYTES: usize = 4 << 20;

/// The document is not one this deserializer reads with certainty: deserialize it with
/// serde-saphyr.
#[derive(Debug)]
pub struct Declined;

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("left to serde-saphyr")
    }
}

impl std::error::Error for Declined {}

impl de::Error for Declined {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Declined
    }
}

/// Deserializes `text`, one YAML document whose root is a mapping, with `seed`, and gives
/// its events as well, recorded for the unknown-field walk.
pub fn deserialize<'a, S: DeserializeSeed<'a>>(
    text: &'a str,
    seed: S,
) -> Result<(S::Value, Recorded<'a>), Declined> {
    if text.len() > MAX_BYTES {
        return Err(Declined);
    }
    let mut events = Events {
        parser: Parser::with_options(StrInput::new(text), super::skim::parser_options()),
        peeked: None,
        depth: 0,
        keys: OpenKeys::default(),
        record: Recorded::for_text(text.len()),
    };
    if !matches!(events.next()?.0, Event::StreamStart)
        || !matches!(events.next()?.0, Event::DocumentStart(_, None))
        || !matches!(events.peek()?.0, Event::MappingStart(..))
    {
        return Err(Declined);
    }
    let value = span_hook::with(|| seed.deserialize(Deserializer { ev: &mut events }))?;
    if !matches!(events.next()?.0, Event::DocumentEnd)
        || !matches!(events.next()?.0, Event::StreamEnd)
        || events.parser.next_event().is_some()
    {
        return Err(Declined);
    }
    Ok((value, events.record))
}

struct Events<'a> {
    parser: Parser<'a, StrInput<'a>>,
    peeked: Option<(Event<'a>, Span)>,
    /// Collections open.
    depth: usize,
    /// The keys of the open mappings, for the duplicate-key check.
    keys: OpenKeys<'a>,
    /// Each event pulled.
    record: Recorded<'a>,
}

impl<'a> Events<'a> {
    fn peek(&mut self) -> Result<&(Event<'a>, Span), Declined> {
        if self.peeked.is_none() {
            self.peeked = Some(self.pull()?);
        }
        self.peeked.as_ref().ok_or(Declined)
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), Declined> {
        match self.peeked.take() {
            Some(e) => Ok(e),
            None => self.pull(),
        }
    }

    fn pull(&mut self) -> Result<(Event<'a>, Span), Declined> {
        let next = self.parser.next_event();
        if let Some(Ok((event, span))) = &next {
            self.record.push(event, span);
        }
        match next {
            Some(Ok(e)) => Ok(e),
            _ => Err(Declined),
        }
    }

    /// The next event, a scalar without anchor or tag: its value and style.
    fn scalar(&mut self) -> Result<(Cow<'a, str>, ScalarStyle), Declined> {
        match self.next()?.0 {
            Event::Scalar(value, style, 0, None) => Ok((value, style)),
            _ => Err(Declined),
        }
    }

    /// Consumes the start of a collection without anchor or tag.
    fn open(&mut self, mapping: bool) -> Result<(), Declined> {
        match self.next()?.0 {
            Event::MappingStart(_, 0, None) if mapping => {}
            Event::SequenceStart(_, 0, None) if !mapping => {}
            _ => return Err(Declined),
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Declined);
        }
        Ok(())
    }

    /// Consumes the end of the innermost open collection, if it comes next.
    fn close(&mut self, mapping: bool) -> Result<bool, Declined> {
        let end = match self.peek()?.0 {
            Event::MappingEnd => mapping,
            Event::SequenceEnd => !mapping,
            _ => false,
        };
        if end {
            self.next()?;
            self.depth -= 1;
        }
        Ok(end)
    }
}

/// The byte span serde-saphyr's `location_from_span` gives an event, as
/// [`crate::model::de::Spanned`] keeps it: the start's byte offset and the length up to the
/// end's, both zero when the parser gave no byte offsets.
fn span_of(span: &Span) -> (u32, u32) {
    match (span.start.byte_offset(), span.end.byte_offset()) {
        (Some(start), Some(end)) => (
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(end.saturating_sub(start)).unwrap_or(0),
        ),
        _ => (0, 0),
    }
}

/// A plain scalar as serde-saphyr's `deserialize_any` types it, when that is certain.
#[derive(Debug, PartialEq)]
enum Plain {
    Null,
    Bool(bool),
    Int(u64),
    Negative(i64),
    Float(f64),
    Str,
}

/// serde-saphyr's `scalar_is_nullish` for a plain scalar without tag.
fn is_null(v: &str) -> bool {
    matches!(v, "" | "~" | "null" | "Null" | "NULL")
}

/// serde-saphyr's `parse_yaml11_bool` (its `strict_booleans` is off).
fn yaml11_bool(v: &str) -> Option<bool> {
    let t = v.trim_matches([' ', '\t', '\r', '\n']);
    let is = |w: &str| t.eq_ignore_ascii_case(w);
    if is("true") || is("yes") || is("y") || is("on") {
        Some(true)
    } else if is("false") || is("no") || is("n") || is("off") {
        Some(false)
    } else {
        None
    }
}

/// Resolves a plain scalar as serde-saphyr's `deserialize_any` does, in its order (null,
/// boolean, integer, float, string), for the spellings whose outcome is certain: decimal
/// integers without leading zero, unsigned or negative, decimal fractions `D.D`, and text
/// that no numeric parser can read (a byte no number's spelling holds, such as the `m` of
/// `100m` or the `:` of `10.0.2.15:3260`, or two points, as in `3.4.0`; serde-saphyr has
/// no sexagesimal numbers). Anything else is `None`.
fn resolve(v: &str) -> Option<Plain> {
    if is_null(v) {
        return Some(Plain::Null);
    }
    if let Some(b) = yaml11_bool(v) {
        return Some(Plain::Bool(b));
    }
    let bytes = v.as_bytes();
    let decimal = |d: &[u8]| {
        !d.is_empty() && d.iter().all(u8::is_ascii_digit) && (d.len() == 1 || d[0] != b'0')
    };
    if decimal(bytes) {
        return v.parse().ok().map(Plain::Int);
    }
    if let Some(magnitude) = v.strip_prefix('-')
        && decimal(magnitude.as_bytes())
    {
        return (magnitude.parse::<i64>().ok()).map(|n| Plain::Negative(-n));
    }
    if let Some((whole, fraction)) = v.split_once('.')
        && decimal(whole.as_bytes())
        && !fraction.is_empty()
        && fraction.bytes().all(|b| b.is_ascii_digit())
        && v.len() <= 17
    {
        return v.parse().ok().map(Plain::Float);
    }
    let unsigned = v.strip_prefix(['+', '-']).unwrap_or(v);
    match unsigned.as_bytes().first() {
        None | Some(b' ' | b'\t' | b'\r' | b'\n') => None,
        // A number's spelling (decimal, radix, octal, fraction, exponent, `.inf`, `.nan`)
        // uses only these; `100m` or `512Mi` cannot be one.
        Some(b'0'..=b'9' | b'.')
            if unsigned.bytes().all(|b| NUMERIC.contains(&b))
                && unsigned.bytes().filter(|&b| b == b'.').count() < 2 =>
        {
            None
        }
        Some(b'0'..=b'9' | b'.') => Some(Plain::Str),
        Some(_)
            if ["inf", "infinity", "nan"]
                .iter()
                .any(|w| unsigned.eq_ignore_ascii_case(w)) =>
        {
            None
        }
        Some(_) => Some(Plain::Str),
    }
}

/// Every byte a numeric spelling may hold: digits, sign, point, underscore, exponent, radix
/// prefixes, hexadecimal digits, and the letters of `inf`, `infinity` and `nan`.
const NUMERIC: &[u8] = b"0123456789+-._eExXoObBaAcCdDfFiInNtTyY";

fn visit_str<'a, V: Visitor<'a>>(value: Cow<'a, str>, visitor: V) -> Result<V::Value, Declined> {
    match value {
        Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
        Cow::Owned(s) => visitor.visit_string(s),
    }
}

/// The integer methods of a [`de::Deserializer`], each reading a plain decimal integer,
/// negative for the signed only ([`Deserializer::integer`]).
macro_rules! integers {
    ($($signed:ident)* => signed, $($unsigned:ident)* => unsigned,) => {
        $(fn $signed<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
            self.integer(true, visitor)
        })*
        $(fn $unsigned<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
            self.integer(false, visitor)
        })*
    };
}

/// Methods of a [`de::Deserializer`] that the model never calls: left to serde-saphyr.
macro_rules! declined {
    ($($method:ident($($arg:ty),*))*) => {
        $(fn $method<V: Visitor<'a>>(self, $(_: $arg,)* _: V) -> Result<V::Value, Declined> {
            Err(Declined)
        })*
    };
}

struct Deserializer<'e, 'a> {
    ev: &'e mut Events<'a>,
}

impl<'a> Deserializer<'_, 'a> {
    /// A plain decimal integer for the integer visitors, negative for the signed only.
    fn integer<V: Visitor<'a>>(self, signed: bool, visitor: V) -> Result<V::Value, Declined> {
        match self.ev.scalar()? {
            (value, ScalarStyle::Plain) => match resolve(&value) {
                Some(Plain::Int(n)) => visitor.visit_u64(n),
                Some(Plain::Negative(n)) if signed => visitor.visit_i64(n),
                _ => Err(Declined),
            },
            _ => Err(Declined),
        }
    }
}

impl<'a> de::Deserializer<'a> for Deserializer<'_, 'a> {
    type Error = Declined;

    fn deserialize_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        match &self.ev.peek()?.0 {
            Event::MappingStart(..) => self.deserialize_map(visitor),
            Event::SequenceStart(..) => self.deserialize_seq(visitor),
            Event::Scalar(..) => {
                let (value, style) = self.ev.scalar()?;
                if style != ScalarStyle::Plain {
                    return visit_str(value, visitor);
                }
                match resolve(&value).ok_or(Declined)? {
                    Plain::Null => visitor.visit_unit(),
                    Plain::Bool(b) => visitor.visit_bool(b),
                    Plain::Int(n) => visitor.visit_u64(n),
                    Plain::Negative(n) => visitor.visit_i64(n),
                    Plain::Float(f) => visitor.visit_f64(f),
                    Plain::Str => visit_str(value, visitor),
                }
            }
            _ => Err(Declined),
        }
    }

    fn deserialize_bool<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        match self.ev.scalar()? {
            (value, ScalarStyle::Plain) => visitor.visit_bool(yaml11_bool(&value).ok_or(Declined)?),
            _ => Err(Declined),
        }
    }

    integers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 => signed,
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 => unsigned,
    }

    fn deserialize_f32<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        self.deserialize_f64(visitor)
    }
    fn deserialize_f64<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        let (value, style) = self.ev.scalar()?;
        match (style, resolve(&value)) {
            (ScalarStyle::Plain, Some(Plain::Float(f))) => visitor.visit_f64(f),
            // Rounded to the nearest float, as parsing its text is.
            (ScalarStyle::Plain, Some(Plain::Int(n))) => visitor.visit_f64(n as f64),
            (ScalarStyle::Plain, Some(Plain::Negative(n))) => visitor.visit_f64(n as f64),
            _ => Err(Declined),
        }
    }

    /// serde-saphyr's `deserialize_str`: any scalar's text, except a plain null, which it
    /// refuses for a string.
    fn deserialize_str<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        let (value, style) = self.ev.scalar()?;
        if style == ScalarStyle::Plain && is_null(&value) {
            return Err(Declined);
        }
        visit_str(value, visitor)
    }
    fn deserialize_string<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        self.deserialize_str(visitor)
    }
    fn deserialize_identifier<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        self.deserialize_str(visitor)
    }

    /// serde-saphyr's `deserialize_option`: a plain null is `None`, anything else `Some`.
    fn deserialize_option<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        match &self.ev.peek()?.0 {
            Event::Scalar(value, ScalarStyle::Plain, 0, None) if is_null(value) => {
                self.ev.next()?;
                visitor.visit_none()
            }
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'a>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Declined> {
        if name == span_hook::NAME {
            let (offset, len) = span_of(&self.ev.peek()?.1);
            span_hook::offer(offset, len);
        } else if name.starts_with("__yaml_") {
            // serde-saphyr's own wrappers (`Spanned`, anchors): its meaning, not ours.
            return Err(Declined);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        self.ev.open(false)?;
        let mut seq = Seq {
            ev: &mut *self.ev,
            done: false,
        };
        let value = visitor.visit_seq(&mut seq)?;
        if !seq.done {
            return Err(Declined);
        }
        Ok(value)
    }

    fn deserialize_map<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        self.ev.open(true)?;
        let keys = self.ev.keys.open();
        let mut map = Map {
            ev: &mut *self.ev,
            keys,
            done: false,
        };
        let value = visitor.visit_map(&mut map)?;
        if !map.done {
            return Err(Declined);
        }
        Ok(value)
    }

    fn deserialize_struct<V: Visitor<'a>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Declined> {
        self.deserialize_map(visitor)
    }

    /// serde-saphyr reads an ignored value as `deserialize_any` does, errors included.
    fn deserialize_ignored_any<V: Visitor<'a>>(self, visitor: V) -> Result<V::Value, Declined> {
        self.deserialize_any(visitor)
    }

    declined! {
        deserialize_i128() deserialize_u128() deserialize_char() deserialize_bytes()
        deserialize_byte_buf() deserialize_unit() deserialize_unit_struct(&'static str)
        deserialize_tuple(usize) deserialize_tuple_struct(&'static str, usize)
        deserialize_enum(&'static str, &'static [&'static str])
    }
}

struct Seq<'e, 'a> {
    ev: &'e mut Events<'a>,
    done: bool,
}

impl<'a> de::SeqAccess<'a> for &mut Seq<'_, 'a> {
    type Error = Declined;

    fn next_element_seed<T: DeserializeSeed<'a>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Declined> {
        if self.done {
            return Ok(None);
        }
        if self.ev.close(false)? {
            self.done = true;
            return Ok(None);
        }
        seed.deserialize(Deserializer { ev: &mut *self.ev })
            .map(Some)
    }
}

struct Map<'e, 'a> {
    ev: &'e mut Events<'a>,
    keys: MapKeys<'a>,
    done: bool,
}

impl<'a> de::MapAccess<'a> for &mut Map<'_, 'a> {
    type Error = Declined;

    fn next_key_seed<K: DeserializeSeed<'a>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Declined> {
        if self.done {
            return Ok(None);
        }
        if self.ev.close(true)? {
            self.ev.keys.close(&self.keys);
            self.done = true;
            return Ok(None);
        }
        let key = match &self.ev.peek()?.0 {
            // A key serde-saphyr compares by its text: quoted, or plain text that is no
            // null, boolean or number (`1` and `0x1`, `on` and `true` are the same key to
            // it), and not a merge key.
            Event::Scalar(value, style, 0, None)
                if *style != ScalarStyle::Plain
                    || (resolve(value) == Some(Plain::Str) && value != "<<") =>
            {
                value.clone()
            }
            _ => return Err(Declined),
        };
        // serde-saphyr refuses a duplicate key.
        if !self.ev.keys.insert(&mut self.keys, key) {
            return Err(Declined);
        }
        seed.deserialize(Deserializer { ev: &mut *self.ev })
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'a>>(&mut self, seed: V) -> Result<V::Value, Declined> {
        seed.deserialize(Deserializer { ev: &mut *self.ev })
    }
}

#[cfg(test)]
mod tests {
    use super::{Plain, resolve};
    use crate::parse::{fast_disagrees, fast_path_reads, split_documents};

    /// Every document of the repository's fixtures and examples is read as serde-saphyr
    /// reads it, and the fast path reads nearly all of them.
    #[test]
    fn fixtures_read_as_serde_saphyr_reads_them() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut documents, mut fast) = (0, 0);
        for dir in ["fixtures", "examples", "tests/fixtures"] {
            for entry in walkdir::WalkDir::new(root.join(dir)) {
                let Ok(entry) = entry else { continue };
                let path = entry.path();
                if !path.extension().is_some_and(|e| e == "yaml" || e == "json") {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(path) else {
                    continue;
                };
                for (_, doc) in split_documents(&text) {
                    documents += 1;
                    fast += usize::from(fast_path_reads(doc));
                    let disagreement = fast_disagrees(doc);
                    assert!(
                        disagreement.is_none(),
                        "{}: {disagreement:?}",
                        path.display()
                    );
                }
            }
        }
        assert!(documents > 500, "{documents} documents");
        assert!(
            fast * 10 >= documents * 9,
            "{fast} of {documents} read fast"
        );
    }

    /// What the fast path declines, and what it reads: each declined document is one
    /// serde-saphyr reads (or refuses) by a rule the fast path does not model.
    #[test]
    fn declines_what_it_does_not_model() {
        let head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n";
        for body in [
            "spec: {replicas: &r 2}\n",
            "spec: {replicas: !!int 2}\n",
            "spec: {replicas: 2, replicas: 3}\n",
            "spec: {<<: {replicas: 2}}\n",
            "spec: {? [a]: b}\n",
            "spec: {replicas: 0x2}\n",
            "spec: {replicas: 1e3}\n",
            "spec: {replicas: .inf}\n",
            "spec: {replicas: [}\n",
            "spec:\n  template:\n    metadata:\n      labels: {yes: a}\n",
            "spec:\n  template:\n    metadata:\n      labels: {1: a}\n",
            "spec:\n  template:\n    metadata:\n      labels: {~: a}\n",
        ] {
            let doc = format!("{head}{body}");
            assert!(!fast_path_reads(&doc), "{doc}");
        }
        for body in [
            "spec: {replicas: 2}\n",
            "spec: {replicas: \"2\"}\n",
            "spec: {replicas: 2.0}\n",
            "spec:\n  template:\n    metadata:\n      labels: {\"yes\": a, b: on, c: 100m}\n",
        ] {
            let doc = format!("{head}{body}");
            assert!(fast_path_reads(&doc), "{doc}");
            assert_eq!(fast_disagrees(&doc), None, "{doc}");
        }
    }

    /// serde-saphyr's `deserialize_any` on the plain scalars whose type is certain, and the
    /// ones left to it.
    #[test]
    fn plain_scalars_resolve_as_serde_saphyr_types_them() {
        for (text, want) in [
            ("", Some(Plain::Null)),
            ("~", Some(Plain::Null)),
            ("NULL", Some(Plain::Null)),
            ("nULL", Some(Plain::Str)),
            ("yes", Some(Plain::Bool(true))),
            ("Off", Some(Plain::Bool(false))),
            ("n", Some(Plain::Bool(false))),
            ("8080", Some(Plain::Int(8080))),
            ("0", Some(Plain::Int(0))),
            ("0.5", Some(Plain::Float(0.5))),
            ("2.0", Some(Plain::Float(2.0))),
            ("100m", Some(Plain::Str)),
            ("1Gi", Some(Plain::Str)),
            ("-100m", Some(Plain::Str)),
            ("1.2.3", Some(Plain::Str)),
            ("3.4.0", Some(Plain::Str)),
            ("10.0.2.15:3260", Some(Plain::Str)),
            ("10:30", Some(Plain::Str)),
            ("-3", Some(Plain::Negative(-3))),
            ("-0", Some(Plain::Negative(0))),
            ("-03", None),
            ("-9223372036854775808", None),
            ("2Ti", None),
            ("512Mi", Some(Plain::Str)),
            ("v1.2", Some(Plain::Str)),
            ("nginx:1.25", Some(Plain::Str)),
            ("-abc", Some(Plain::Str)),
            ("<<", Some(Plain::Str)),
            ("0755", None),
            ("0x1F", None),
            ("+3", None),
            ("1e3", None),
            (".inf", None),
            (".NaN", None),
            (".5m", Some(Plain::Str)),
            ("Infinity", None),
            ("-nan", None),
            ("99999999999999999999", None),
            ("01.5", None),
        ] {
            assert_eq!(resolve(text), want, "{text:?}");
        }
    }
}
