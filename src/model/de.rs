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
        let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
        let span = s.referenced.span();
        Ok(Spanned {
            value: s.value,
            offset: u32::try_from(span.byte_offset().unwrap_or(0)).unwrap_or(u32::MAX),
            len: u32::try_from(span.byte_len().unwrap_or(0)).unwrap_or(0),
        })
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
