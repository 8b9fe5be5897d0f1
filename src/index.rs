//! Index stage: every object of the run (linted paths and `--context`), queryable by kind,
//! namespace, name and label selector, so rules can ask cross-object questions ("is there a
//! LimitRange in this namespace?", "which NodePools exist?") without scanning.

use crate::model::workload::LabelSelector;
use crate::model::{Kind, Object};
use std::collections::BTreeMap;

pub struct Index<'a> {
    objects: &'a [Object],
    by_kind: BTreeMap<Kind, Vec<usize>>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &'a [Object]) -> Self {
        let mut by_kind: BTreeMap<Kind, Vec<usize>> = BTreeMap::new();
        for (i, o) in objects.iter().enumerate() {
            by_kind.entry(o.kind).or_default().push(i);
        }
        Index { objects, by_kind }
    }

    pub fn objects(&self) -> &'a [Object] {
        self.objects
    }

    /// Objects of one kind, in source order.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &'a Object> + '_ {
        self.by_kind
            .get(&kind)
            .into_iter()
            .flatten()
            .map(|&i| &self.objects[i])
    }

    /// Objects of one kind in a namespace (objects without one count as `default`).
    pub fn in_namespace<'s>(
        &'s self,
        kind: Kind,
        ns: &'s str,
    ) -> impl Iterator<Item = &'a Object> + 's {
        self.of_kind(kind)
            .filter(move |o| o.effective_namespace() == ns)
    }

    pub fn get(&self, kind: Kind, ns: Option<&str>, name: &str) -> Option<&'a Object> {
        self.of_kind(kind)
            .find(|o| o.name() == name && ns.is_none_or(|ns| o.effective_namespace() == ns))
    }

    /// Workloads of every kind, in source order.
    pub fn workloads(&self) -> impl Iterator<Item = &'a Object> + '_ {
        self.objects.iter().filter(|o| o.kind.is_workload())
    }

    pub fn nodepools(&self) -> impl Iterator<Item = &'a Object> + '_ {
        self.of_kind(Kind::NodePool)
            .chain(self.of_kind(Kind::Provisioner))
    }
}

/// Does a label selector select these labels? An empty selector selects everything, as in
/// Kubernetes; an unknown operator selects nothing.
pub fn selector_matches<'l>(sel: &LabelSelector, labels: impl Fn(&str) -> Option<&'l str>) -> bool {
    sel.match_labels.iter().all(|(k, v)| labels(k) == Some(v))
        && sel.match_expressions.iter().all(|e| {
            let have = labels(&e.key.value);
            let values = || e.values.iter().map(|v| v.value.as_str());
            match e.operator.value.as_str() {
                "In" => have.is_some_and(|h| values().any(|v| v == h)),
                "NotIn" => have.is_none_or(|h| values().all(|v| v != h)),
                "Exists" => have.is_some(),
                "DoesNotExist" => have.is_none(),
                _ => false,
            }
        })
}
