//! Parse stage, objects of unmodelled kinds that hold pod templates: an operator's custom
//! resource with a `containers:` list is a workload karplint does not analyse, and the run
//! says so in a note instead of passing over it in silence.
//!
//! The check is cheap first and exact second: only a document of a custom resource (an API
//! group with a dot, not a `*.k8s.io` group of Kubernetes itself) whose text holds
//! `containers` is read a second time, and it counts only when a `containers` key under a
//! `spec` or `template` key holds a list of containers, one of them with a concrete `image`
//! (a policy's pattern such as Kyverno's `image: "!*:latest"` is not a container). Other
//! documents cost one substring search.

use super::document::RawDoc;
use crate::model::de::Str;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// `(kind, apiVersion)` of a document of an unmodelled kind that holds a pod template.
pub fn holder(doc: &RawDoc, text: &str) -> Option<(Str, Str)> {
    let api = doc.api_version.as_ref()?.value.as_str();
    let kind = doc.kind.as_ref()?.value.as_str();
    let (group, _) = api.rsplit_once('/')?;
    let kubernetes = group.ends_with(".k8s.io") && !group.ends_with(".x-k8s.io");
    if !group.contains('.') || kubernetes || kind == "CustomResourceDefinition" {
        return None;
    }
    memchr::memmem::find(text.as_bytes(), b"containers")?;
    let found =
        serde_saphyr::with_deserializer_from_str_with_options(text, super::options(), |d| {
            Find { parent: None }.deserialize(d)
        });
    found
        .unwrap_or(false)
        .then(|| (Str::from(kind), Str::from(api)))
}

/// The visitor methods of every scalar (and null), each answering `$value`: a scalar holds
/// no pod template.
macro_rules! scalars_are {
    ($ty:ty, $value:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<$ty, E> {
            Ok($value)
        }
        fn visit_none<E: de::Error>(self) -> Result<$ty, E> {
            Ok($value)
        }
    };
}

/// Looks for a pod's `containers` list anywhere in a value; `parent` is the key the value
/// sits under.
struct Find<'k> {
    parent: Option<&'k str>,
}

impl<'de> DeserializeSeed<'de> for Find<'_> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Find<'_> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<bool, A::Error> {
        let mut found = false;
        let pod_spec = matches!(self.parent, Some("spec" | "template"));
        while let Some(key) = m.next_key::<Str>()? {
            found |= if found {
                m.next_value::<IgnoredAny>().map(|_| true)?
            } else if pod_spec && key == "containers" {
                m.next_value_seed(Containers)?
            } else {
                m.next_value_seed(Find {
                    parent: Some(key.as_str()),
                })?
            };
        }
        Ok(found)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(f) = s.next_element_seed(Find { parent: None })? {
            found |= f;
        }
        Ok(found)
    }
    scalars_are!(bool, false);
}

/// A `containers` value: a list of maps, one with a concrete `image`.
struct Containers;

impl<'de> DeserializeSeed<'de> for Containers {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Containers {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<bool, A::Error> {
        let mut found = false;
        while let Some(c) = s.next_element::<Option<ContainerImage>>()? {
            found |= c.is_some_and(|c| c.0);
        }
        Ok(found)
    }
    fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<bool, A::Error> {
        IgnoredAny.visit_map(m).map(|_| false)
    }
    scalars_are!(bool, false);
}

/// One list item: true when it is a map with an `image` that names an image rather than
/// a pattern or a template.
struct ContainerImage(bool);

impl<'de> serde::Deserialize<'de> for ContainerImage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ContainerImage;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<ContainerImage, A::Error> {
                let mut concrete = false;
                while let Some(key) = m.next_key::<Str>()? {
                    if key == "image" {
                        let image = m.next_value::<Option<crate::model::de::Text>>()?;
                        concrete |= image.is_some_and(|i| {
                            let i = i.as_str();
                            !i.is_empty() && !i.contains(['*', '?', '!', '{', '$', '|'])
                        });
                    } else {
                        m.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(ContainerImage(concrete))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, s: A) -> Result<ContainerImage, A::Error> {
                IgnoredAny.visit_seq(s).map(|_| ContainerImage(false))
            }
            scalars_are!(ContainerImage, ContainerImage(false));
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::parse_source;

    fn holders(yaml: &str) -> Vec<(String, String)> {
        (parse_source(0, yaml, false, false).pod_holders.iter())
            .map(|(k, a)| (k.to_string(), a.to_string()))
            .collect()
    }

    #[test]
    fn custom_resources_with_containers_are_noted() {
        let yaml = "apiVersion: example.com/v1\nkind: Foo\nmetadata: {name: a}\nspec:\n  pod:\n    template:\n      spec:\n        containers: [{name: c, image: example.com/c:1}]\n";
        assert_eq!(
            holders(yaml),
            [("Foo".to_string(), "example.com/v1".to_string())]
        );
    }

    #[test]
    fn policies_configmaps_and_modelled_kinds_are_not() {
        for yaml in [
            // A Kyverno pattern: an image pattern, not an image.
            "apiVersion: kyverno.io/v1\nkind: ClusterPolicy\nmetadata: {name: p}\nspec:\n  rules:\n  - validate:\n      pattern:\n        spec:\n          containers:\n          - image: \"!*:latest\"\n",
            // A core kind with YAML in a string.
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  x: |\n    spec:\n      containers: [{image: a}]\n",
            // A CRD's schema.
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: c}\nspec:\n  containers: [{image: a}]\n",
            // Values in a string.
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec:\n  source:\n    helm:\n      values: |\n        spec:\n          containers: [{image: a}]\n",
            // A modelled CRD.
            "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {name: r}\nspec:\n  template:\n    spec:\n      containers: [{name: c, image: a}]\n",
        ] {
            assert!(holders(yaml).is_empty(), "{yaml}");
        }
    }
}
