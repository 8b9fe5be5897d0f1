//! Model stage, serde helpers: the few deserializers every typed object needs.
//!
//! Kubernetes YAML is loose where Rust types are strict: a label value may be written as a
//! number, a list may be `null`, a map may be empty. These helpers keep the typed model
//! strict about shape (a wrong shape is a `parse-error` with a span) and lenient about the
//! forms Kubernetes itself accepts.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::fmt;

/// A value with the byte span, relative to its document, where it was written.
///
/// serde-saphyr's own `Spanned` carries two full locations (line, column, character and
/// byte spans, source id: 56 bytes); the model keeps millions of these on a large tree, so
/// it is read through serde-saphyr's and kept as a document-relative byte offset and length
/// (8 bytes). [`crate::model::Object::span`] makes it absolute in the file.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    pub value: T,
    /// Byte offset in the document.
    pub offset: u32,
    /// Length in bytes; zero for containers (maps and sequences).
    pub len: u32,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        if span_hook::ACTIVE.get() {
            return d.deserialize_newtype_struct(span_hook::NAME, span_hook::SpannedVisitor::new());
        }
        let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
        let span = s.referenced.span();
        Ok(Spanned {
            value: s.value,
            offset: u32::try_from(span.byte_offset().unwrap_or(0)).unwrap_or(u32::MAX),
            len: u32::try_from(span.byte_len().unwrap_or(0)).unwrap_or(0),
        })
    }
}

/// How a deserializer other than serde-saphyr (the parse stage's fast path) gives a
/// [`Spanned`] its span: while [`span_hook::with`] runs, a `Spanned<T>` asks for the
/// newtype struct [`span_hook::NAME`], and the deserializer, which alone knows where the
/// next value was written, leaves its span with [`span_hook::offer`] just before it calls
/// the visitor. A deserializer that does not offer one makes the value an error.
pub mod span_hook {
    use super::Spanned;
    use serde::Deserialize;
    use serde::de::{self, Deserializer, Visitor};
    use std::cell::Cell;
    use std::fmt;
    use std::marker::PhantomData;

    /// The newtype struct name a `Spanned<T>` asks for while the hook is on.
    pub const NAME: &str = "__karplint_spanned";

    thread_local! {
        pub(super) static ACTIVE: Cell<bool> = const { Cell::new(false) };
        static SPAN: Cell<Option<(u32, u32)>> = const { Cell::new(None) };
    }

    /// Runs `f`, one document's deserialization by a deserializer that offers spans, with
    /// the hook on.
    pub fn with<R>(f: impl FnOnce() -> R) -> R {
        struct Restore(bool);
        impl Drop for Restore {
            fn drop(&mut self) {
                ACTIVE.set(self.0);
                SPAN.set(None);
            }
        }
        let _restore = Restore(ACTIVE.replace(true));
        f()
    }

    /// The span (document-relative byte offset and length) of the value the visitor of
    /// [`NAME`] is about to read.
    pub fn offer(offset: u32, len: u32) {
        SPAN.set(Some((offset, len)));
    }

    pub(super) struct SpannedVisitor<T>(PhantomData<T>);

    impl<T> SpannedVisitor<T> {
        pub(super) fn new() -> Self {
            SpannedVisitor(PhantomData)
        }
    }

    impl<'de, T: Deserialize<'de>> Visitor<'de> for SpannedVisitor<T> {
        type Value = Spanned<T>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a value with its span")
        }
        fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Spanned<T>, D::Error> {
            let (offset, len) = SPAN
                .take()
                .ok_or_else(|| de::Error::custom("no span offered for a spanned value"))?;
            Ok(Spanned {
                value: T::deserialize(d)?,
                offset,
                len,
            })
        }
    }
}

/// The model's strings: inline up to 24 bytes (label keys and values, names, quantities),
/// so most of them cost no allocation of their own.
pub type Str = compact_str::CompactString;

/// A scalar read as text whatever its YAML type: `cpu: 2`, `cpu: "2"` and `cpu: 2.0` all
/// become text, as the Kubernetes API server stores quantities and label values.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(pub Str);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, number or boolean")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(Text(Str::from(v)))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Text, E> {
                Ok(Text(Str::from(v)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Text, E> {
                Ok(Text(compact_str::ToCompactString::to_compact_string(&v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Text, E> {
                Ok(Text(compact_str::ToCompactString::to_compact_string(&v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Text, E> {
                Ok(Text(compact_str::ToCompactString::to_compact_string(&v)))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<Text, E> {
                Ok(Text(compact_str::ToCompactString::to_compact_string(&v)))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<Text, E> {
                Ok(Text(compact_str::ToCompactString::to_compact_string(&v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Text, E> {
                Ok(Text(compact_str::ToCompactString::to_compact_string(&v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text(Str::default()))
            }
            fn visit_none<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text(Str::default()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A string-keyed map that keeps the span of every key and value (labels, nodeSelector,
/// resource lists), in document order.
///
/// A boxed slice, not a vector: the model holds a dozen of these per workload, most empty
/// or of one to three entries, and never grows them after parsing.
#[derive(Debug, Clone, Default)]
pub struct SpannedMap(pub Box<[(Spanned<Str>, Spanned<Text>)]>);

impl SpannedMap {
    pub fn get(&self, key: &str) -> Option<&Spanned<Text>> {
        self.0.iter().find(|(k, _)| k.value == key).map(|(_, v)| v)
    }
    pub fn entry(&self, key: &str) -> Option<(&Spanned<Str>, &Spanned<Text>)> {
        self.0
            .iter()
            .find(|(k, _)| k.value == key)
            .map(|(k, v)| (k, v))
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .iter()
            .map(|(k, v)| (k.value.as_str(), v.value.as_str()))
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

impl<'de> Deserialize<'de> for SpannedMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(MapVisitor { keep: |_| true })
    }
}

/// Reads a string map, keeping the entries whose key `keep` accepts; the values of the
/// others are skipped without being built.
struct MapVisitor {
    keep: fn(&str) -> bool,
}

impl<'de> Visitor<'de> for MapVisitor {
    type Value = SpannedMap;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of strings")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<SpannedMap, A::Error> {
        let mut out = Vec::new();
        while let Some(k) = m.next_key::<Spanned<Str>>()? {
            if (self.keep)(&k.value) {
                let v = m.next_value::<Spanned<Text>>()?;
                out.push((k, v));
            } else {
                m.next_value::<de::IgnoredAny>()?;
            }
        }
        // Most maps hold one to three entries; the growth slack would otherwise be kept for
        // every object of the run.
        Ok(SpannedMap(out.into_boxed_slice()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<SpannedMap, E> {
        Ok(SpannedMap::default())
    }
    fn visit_none<E: de::Error>(self) -> Result<SpannedMap, E> {
        Ok(SpannedMap::default())
    }
}

/// A field most objects leave out, kept boxed: `None` costs 8 bytes and reads as the empty
/// value.
#[derive(Debug, Clone, Default)]
pub struct Rare<T>(Option<Box<T>>);

/// The shared empty value a missing [`Rare`] field reads as.
pub trait Empty: 'static {
    fn empty() -> &'static Self;
}

impl<T> Rare<T> {
    /// Whether the field was written.
    pub fn is_set(&self) -> bool {
        self.0.is_some()
    }
}

impl<T: Empty> std::ops::Deref for Rare<T> {
    type Target = T;
    fn deref(&self) -> &T {
        match &self.0 {
            Some(b) => b,
            None => T::empty(),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Rare<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Rare(Option::<T>::deserialize(d)?.map(Box::new)))
    }
}

/// `null` (or an empty value) where Kubernetes allows it reads as the type's default.
pub fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A string map keeping only the entries whose key `keep` accepts (see [`super::kept`]):
/// the values of the others are skipped without being built.
pub fn filtered_map<'de, D: Deserializer<'de>>(
    d: D,
    keep: fn(&str) -> bool,
) -> Result<SpannedMap, D::Error> {
    d.deserialize_any(MapVisitor { keep })
}

/// `env:`, keeping only the variables of [`super::kept::ENV_VARS`]: the others are dropped
/// as they are read.
/// Read as `Option<Vec<_>>` is (an option, then a sequence), so a wrong shape gets the same
/// message and position as every other list field.
pub fn env_vars<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Box<[super::workload::EnvVar]>, D::Error> {
    type Kept = Box<[super::workload::EnvVar]>;
    struct Seq;
    impl<'de> Visitor<'de> for Seq {
        type Value = Kept;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a sequence")
        }
        fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Kept, A::Error> {
            let mut kept = Vec::new();
            while let Some(e) = seq.next_element::<super::workload::EnvVar>()? {
                if e.name.as_deref().is_some_and(super::kept::env_kept) {
                    kept.push(e);
                }
            }
            Ok(kept.into_boxed_slice())
        }
    }
    struct Opt;
    impl<'de> Visitor<'de> for Opt {
        type Value = Kept;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("option")
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Kept, D::Error> {
            d.deserialize_seq(Seq)
        }
        fn visit_none<E: de::Error>(self) -> Result<Kept, E> {
            Ok(Kept::default())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Kept, E> {
            Ok(Kept::default())
        }
    }
    d.deserialize_option(Opt)
}

/// A list field kept as a vector, shrunk to its length: only for the fields of the static
/// empty [`super::workload::Affinity`], whose empty lists must be built in a `const`
/// (`Vec::new()`). Every other list is a [`list`].
pub fn seq<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let mut v: Vec<T> = nullable(d)?;
    v.shrink_to_fit();
    Ok(v)
}

/// A list field, kept as a boxed slice: `null` reads as empty. serde's sequences grow by
/// doubling (one container takes room for four), and the model keeps every list of every
/// object of the run, so each is kept at its length, in two words.
pub fn list<'de, D, T>(d: D) -> Result<Box<[T]>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(nullable::<D, Vec<T>>(d)?.into_boxed_slice())
}

/// An integer field's value that the API server would refuse to decode, found while one
/// document was deserialized: a string (`replicas: "3"`), a boolean, a fraction, or an
/// unrendered template placeholder (`replicas: $WORKERS`). The field reads as absent; the
/// parse stage reports the value as a `parse-error` (see [`collect_rejected`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedInt {
    /// Byte offset in the document.
    pub offset: u32,
    pub len: u32,
    pub message: String,
}

thread_local! {
    /// The [`RejectedInt`]s of the document being deserialized on this thread. A document is
    /// deserialized on one thread from start to end, inside [`collect_rejected`].
    static REJECTED_INTS: std::cell::RefCell<Vec<RejectedInt>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f`, one document's deserialization, and returns with its result the integer values
/// that [`int`] turned away while it ran.
pub fn collect_rejected<R>(f: impl FnOnce() -> R) -> (R, Vec<RejectedInt>) {
    let outer = REJECTED_INTS.with(|r| std::mem::take(&mut *r.borrow_mut()));
    let out = f();
    let found = REJECTED_INTS.with(|r| std::mem::replace(&mut *r.borrow_mut(), outer));
    (out, found)
}

/// One scalar of an integer field, as YAML typed it.
enum IntScalar {
    Int(i128),
    Float(f64),
    Bool(bool),
    Str(Str),
    Null,
}

impl<'de> Deserialize<'de> for IntScalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IntScalar;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<IntScalar, E> {
                Ok(IntScalar::Int(v.into()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<IntScalar, E> {
                Ok(IntScalar::Int(v.into()))
            }
            fn visit_i128<E: de::Error>(self, v: i128) -> Result<IntScalar, E> {
                Ok(IntScalar::Int(v))
            }
            fn visit_u128<E: de::Error>(self, v: u128) -> Result<IntScalar, E> {
                Ok(IntScalar::Int(i128::try_from(v).unwrap_or(i128::MAX)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<IntScalar, E> {
                Ok(IntScalar::Float(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<IntScalar, E> {
                Ok(IntScalar::Bool(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<IntScalar, E> {
                Ok(IntScalar::Str(Str::from(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<IntScalar, E> {
                Ok(IntScalar::Null)
            }
            fn visit_none<E: de::Error>(self) -> Result<IntScalar, E> {
                Ok(IntScalar::Null)
            }
        }
        d.deserialize_any(V)
    }
}

/// Whether `s` is an envsubst-style placeholder left unrendered: `$NAME` or `${…}`.
pub fn is_placeholder(s: &str) -> bool {
    let s = s.trim();
    match s.strip_prefix('$') {
        Some(rest) if rest.starts_with('{') => rest.ends_with('}'),
        Some(rest) => {
            !rest.is_empty()
                && rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Why the API server would refuse `v` for an integer field, or its value.
///
/// Manifests reach the API server as JSON (`kubectl`, Argo CD and Flux convert YAML with
/// `sigs.k8s.io/yaml`), and Go's decoder refuses a JSON string, boolean or fraction for an
/// integer field ("json: cannot unmarshal string into Go struct field … of type int32";
/// a custom resource's schema says "must be of type integer"). A whole float such as `3.0`
/// or `1e3` is written to JSON as `3` and `1000` and accepted.
fn int_value(v: &IntScalar) -> Result<Option<i64>, String> {
    let out_of_range = |n: &dyn fmt::Display| format!("the API server rejects {n}: out of range");
    match v {
        IntScalar::Null => Ok(None),
        IntScalar::Int(n) => i64::try_from(*n).map(Some).map_err(|_| out_of_range(n)),
        IntScalar::Float(f) if f.is_finite() && f.fract() == 0.0 => {
            if f.abs() < 9.2e18 {
                // Whole and within i64: the cast is exact.
                Ok(Some(*f as i64))
            } else {
                Err(out_of_range(f))
            }
        }
        IntScalar::Float(f) => Err(format!(
            "the API server rejects {f}: the field is an integer"
        )),
        IntScalar::Bool(b) => Err(format!(
            "the API server rejects {b}: the field is an integer, not a boolean"
        )),
        IntScalar::Str(s) if is_placeholder(s) => Err(format!(
            "unrendered template placeholder {} where an integer is expected: the API server rejects it",
            quoted(s)
        )),
        IntScalar::Str(s) => Err(format!(
            "the API server rejects the string {}: the field is an integer (write it without quotes)",
            quoted(s)
        )),
    }
}

/// An integer field (`replicas`, `weight`, `maxSkew`, …), lenient as the model must be: a
/// value the API server would refuse reads as absent and is noted as a [`RejectedInt`]
/// instead of failing the whole document.
pub fn int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Spanned<i64>>, D::Error> {
    let s = Spanned::<IntScalar>::deserialize(d)?;
    match int_value(&s.value) {
        Ok(v) => Ok(v.map(|value| Spanned {
            value,
            offset: s.offset,
            len: s.len,
        })),
        Err(message) => {
            REJECTED_INTS.with(|r| {
                r.borrow_mut().push(RejectedInt {
                    offset: s.offset,
                    len: s.len,
                    message,
                })
            });
            Ok(None)
        }
    }
}

/// The most characters of a value a message quotes.
const QUOTED_MAX: usize = 80;

/// `s` as a message quotes it: in double quotes with escapes, cut to [`QUOTED_MAX`]
/// characters with `…` after, so that a message never carries more than a short excerpt of
/// a file (a 5,000-character value is not repeated whole).
pub(crate) fn quoted(s: &str) -> String {
    match s.char_indices().nth(QUOTED_MAX) {
        None => format!("{s:?}"),
        Some((end, _)) => format!("{:?}…", &s[..end]),
    }
}

/// `s` cut as [`quoted`] cuts it, without the quotes: for a key in a field path.
pub(crate) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(QUOTED_MAX) {
        None => s.to_string(),
        Some((end, _)) => format!("{}…", &s[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(default, deserialize_with = "int")]
        n: Option<Spanned<i64>>,
    }

    fn read(yaml: &str) -> (Option<i64>, Vec<RejectedInt>) {
        let (h, rejected) = collect_rejected(|| serde_saphyr::from_str::<Holder>(yaml));
        (h.unwrap().n.map(|n| n.value), rejected)
    }

    /// What the API server decodes an integer field to once kubectl has turned the YAML into
    /// JSON: whole numbers in any YAML spelling, never a string, boolean or fraction.
    #[test]
    fn integer_fields_read_as_the_api_server_decodes_them() {
        for (yaml, want) in [
            ("n: 3", 3),
            ("n: +3", 3),
            ("n: 3.0", 3),
            ("n: 1e3", 1000),
            ("n: -2", -2),
            ("n: 0x10", 16),
        ] {
            assert_eq!(read(yaml), (Some(want), vec![]), "{yaml}");
        }
        for yaml in ["n: ~", "{}"] {
            assert_eq!(read(yaml), (None, vec![]), "{yaml}");
        }
        for (yaml, says) in [
            ("n: \"3\"", "the API server rejects the string \"3\""),
            ("n: '3'", "the API server rejects the string \"3\""),
            ("n: 2.5", "the API server rejects 2.5"),
            ("n: true", "the API server rejects true"),
            (
                "n: $WORKERS",
                "unrendered template placeholder \"$WORKERS\"",
            ),
            (
                "n: ${WORKERS}",
                "unrendered template placeholder \"${WORKERS}\"",
            ),
            ("n: 99999999999999999999", "out of range"),
        ] {
            let (n, rejected) = read(yaml);
            assert_eq!(n, None, "{yaml}");
            assert_eq!(rejected.len(), 1, "{yaml}");
            assert!(rejected[0].message.contains(says), "{yaml}: {rejected:?}");
            assert_eq!(rejected[0].offset, 3, "{yaml}");
        }
    }
}
