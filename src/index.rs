//! Index stage: the objects the run holds (linted paths and `--context`), queryable by kind,
//! namespace, name and label selector, so rules can ask cross-object questions ("is there a LimitRange in
//! this namespace?", "which NodePools exist?") without scanning.
//!
//! It holds every object of the cluster-level kinds (NodePools, node classes, DaemonSets,
//! PVCs, budgets, …) but few workloads: those in a document that also holds such an object
//! (a `List`), or in a file held whole (a held file with `{{` in it, or one whose kind the
//! byte scan missed). The others are
//! linted as their files are parsed and then dropped (see `lint.rs`); rules ask about
//! workloads through their digests ([`Digest`], [`Workloads`]).

use crate::diagnostic::{ObjectRef, Subject};
use crate::model::de::{SpannedMap, Str};
use crate::model::workload::LabelSelector;
use crate::model::{Kind, Object, SourceId, Span};
use std::collections::{BTreeMap, HashMap};

pub struct Index<'a> {
    objects: &'a [Object],
    by_kind: BTreeMap<Kind, Vec<usize>>,
    /// (kind, effective namespace) → objects: per-namespace questions ("the PVC of this
    /// claim", "the autoscalers of this namespace") stay linear in the namespace, not the run.
    by_namespace: HashMap<(Kind, &'a str), Vec<usize>>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &'a [Object]) -> Self {
        let mut by_kind: BTreeMap<Kind, Vec<usize>> = BTreeMap::new();
        let mut by_namespace: HashMap<(Kind, &'a str), Vec<usize>> = HashMap::new();
        for (i, o) in objects.iter().enumerate() {
            by_kind.entry(o.kind).or_default().push(i);
            by_namespace
                .entry((o.kind, o.effective_namespace()))
                .or_default()
                .push(i);
        }
        Index {
            objects,
            by_kind,
            by_namespace,
        }
    }

    pub fn objects(&self) -> &'a [Object] {
        self.objects
    }

    fn at<'s>(&'s self, ids: Option<&'s Vec<usize>>) -> impl Iterator<Item = &'a Object> + 's {
        ids.into_iter().flatten().map(|&i| &self.objects[i])
    }

    /// Objects of one kind, in source order.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &'a Object> + '_ {
        self.at(self.by_kind.get(&kind))
    }

    /// Objects of one kind in a namespace (objects without one count as `default`), in
    /// source order.
    pub fn in_namespace<'s>(
        &'s self,
        kind: Kind,
        ns: &'s str,
    ) -> impl Iterator<Item = &'a Object> + 's {
        self.at(self.by_namespace.get(&(kind, ns)))
    }

    pub fn get(&self, kind: Kind, ns: Option<&str>, name: &str) -> Option<&'a Object> {
        match ns {
            Some(ns) => self.in_namespace(kind, ns).find(|o| o.name() == name),
            None => self.of_kind(kind).find(|o| o.name() == name),
        }
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

/// One workload, as the rules that look across workloads see it: what they need of each,
/// so that a workload's typed model can be dropped as soon as its own rules have run. Taken
/// of every workload of the run, linted or `--context`, held or streamed (see `lint.rs`,
/// and `rules::Context::digest`); each field names the rule that reads it.
#[derive(Debug)]
pub struct Digest {
    /// The object's id: unique in the run, not an index.
    pub id: usize,
    pub source: SourceId,
    /// Its place in the run's object order (`lint::order`).
    pub order: (usize, usize, usize),
    pub context: bool,
    pub kind: Kind,
    pub object: ObjectRef,
    /// The namespace, `default` when none is written.
    pub namespace: Str,
    pub name_span: Span,
    /// `spec.replicas` and its span.
    pub replicas: Option<(i64, Span)>,
    /// The labels its pods carry (budgets and pod affinity select on them).
    pub pod_labels: SpannedMap,
    /// Containers without requests no LimitRange defaults (`missing-limit-range`).
    pub lacking_requests: usize,
    /// The pool it schedules to, when it mounts EBS volumes (`missing-csi-startup-taint`).
    pub ebs_pool: Option<usize>,
    /// StorageClass object ids of its unbound claims, when Karpenter provisions for it
    /// (`volume-zone-conflict`).
    pub unbound_classes: Box<[usize]>,
    /// Bit `i` set: it runs the agent of `missing-device-plugin`'s device `i`.
    pub devices: u8,
}

impl Digest {
    pub fn name(&self) -> &str {
        &self.object.name
    }

    pub fn kind_name(&self) -> &str {
        &self.object.kind
    }
}

impl Subject for Digest {
    fn source(&self) -> SourceId {
        self.source
    }
    fn object_ref(&self) -> ObjectRef {
        self.object.clone()
    }
    fn is_context(&self) -> bool {
        self.context
    }
}

/// Every workload's digest, in the run's object order.
#[derive(Debug, Default)]
pub struct Workloads {
    all: Vec<Digest>,
    /// Namespace → positions in `all`, in order.
    by_namespace: HashMap<Str, Vec<usize>>,
}

impl Workloads {
    /// Sorts digests gathered in any order into object order.
    pub fn new(mut all: Vec<Digest>) -> Self {
        all.sort_unstable_by_key(|d| d.order);
        all.shrink_to_fit();
        let mut by_namespace: HashMap<Str, Vec<usize>> = HashMap::new();
        for (i, d) in all.iter().enumerate() {
            by_namespace.entry(d.namespace.clone()).or_default().push(i);
        }
        Workloads { all, by_namespace }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Digest> {
        self.all.iter()
    }

    /// The workloads of a namespace, in object order.
    pub fn in_namespace(&self, ns: &str) -> impl Iterator<Item = &Digest> + '_ {
        self.by_namespace
            .get(ns)
            .into_iter()
            .flatten()
            .map(|&i| &self.all[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_queries_keep_source_order_and_default_namespace() {
        let yaml = "\
apiVersion: apps/v1
kind: Deployment
metadata: {name: a, namespace: team}
---
apiVersion: v1
kind: Pod
metadata: {name: b}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: c, namespace: team}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: d, namespace: team}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: e, namespace: default}
";
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let index = Index::new(&objects);
        let names = |it: &mut dyn Iterator<Item = &Object>| -> Vec<String> {
            it.map(|o| o.name().to_string()).collect()
        };
        assert_eq!(names(&mut index.in_namespace(Kind::Pod, "default")), ["b"]);
        assert_eq!(names(&mut index.of_kind(Kind::Deployment)), ["a", "e"]);
        assert_eq!(
            names(&mut index.in_namespace(Kind::Deployment, "default")),
            ["e"]
        );
        assert_eq!(
            names(&mut index.in_namespace(Kind::PodDisruptionBudget, "team")),
            ["c"]
        );
        assert!(
            index
                .in_namespace(Kind::PodDisruptionBudget, "x")
                .next()
                .is_none()
        );
        assert_eq!(
            index
                .get(Kind::Deployment, Some("team"), "a")
                .map(|o| o.name()),
            Some("a")
        );
        assert!(index.get(Kind::Deployment, Some("default"), "a").is_none());
        assert_eq!(
            index.get(Kind::Deployment, None, "e").map(|o| o.name()),
            Some("e")
        );
    }
}
