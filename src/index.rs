//! Index stage: the objects the run holds (linted paths and `--context`), queryable by kind,
//! namespace, name and label selector, so rules can ask cross-object questions ("is there a LimitRange in
//! this namespace?", "which NodePools exist?") without scanning.
//!
//! It holds every object of the cluster-level kinds (NodePools, node classes, DaemonSets,
//! PVCs, budgets, …) but few workloads: those in a document that also holds such an object
//! (a `List`), or in a file held whole (a held file with `{{` in it, or one whose kind the
//! byte scan missed). The others are checked as their files are parsed and then dropped
//! (see `engine`); rules ask about workloads through their facts (`facts`).
//!
//! Definitions of one object ([`identity`]) that are the same in every field karplint reads
//! are one object: the index holds the first and lists the others as copies
//! ([`Index::copies`]), so 15 copies of a NodePool are tried as one pool. Different
//! definitions are all held, and `duplicate-object` reports them.

use crate::model::identity::{Identity, fingerprint, identity, repeats};
use crate::model::workload::LabelSelector;
use crate::model::{Kind, Object};
use std::collections::{BTreeMap, HashMap};

pub struct Index<'a> {
    objects: &'a [Object],
    by_kind: BTreeMap<Kind, Vec<usize>>,
    /// (kind, effective namespace) → objects: per-namespace questions ("the PVC of this
    /// claim", "the autoscalers of this namespace") stay linear in the namespace, not the run.
    by_namespace: HashMap<(Kind, &'a str), Vec<usize>>,
    /// Definitions of one object ([`identity`]), several per group.
    recurring: Vec<Vec<usize>>,
    /// (the definition held, a later identical definition left out), in object order.
    copies: Vec<(usize, usize)>,
}

impl<'a> Index<'a> {
    pub fn new(objects: &'a [Object]) -> Self {
        let mut by_kind: BTreeMap<Kind, Vec<usize>> = BTreeMap::new();
        let mut by_namespace: HashMap<(Kind, &'a str), Vec<usize>> = HashMap::new();
        let recurring = recurring(objects);
        let copies = identical_copies(objects, &recurring);
        let mut copy = copies.iter().map(|&(_, c)| c).peekable();
        for (i, o) in objects.iter().enumerate() {
            if copy.next_if_eq(&i).is_some() {
                continue;
            }
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
            recurring,
            copies,
        }
    }

    /// The objects defined more than once in the run: each group's definitions in run order
    /// (held ones and copies alike), groups in the order of their first definition. Each
    /// definition comes with whether it is an identical copy of the group's first
    /// ([`fingerprint`]).
    pub fn recurring(&self) -> impl Iterator<Item = Vec<(&'a Object, bool)>> + '_ {
        (self.recurring.iter()).map(|g| {
            let copy_of_first = |i: usize| {
                (self.copies.binary_search_by_key(&i, |&(_, c)| c))
                    .is_ok_and(|at| self.copies[at].0 == g[0])
            };
            g.iter()
                .map(|&i| (&self.objects[i], copy_of_first(i)))
                .collect()
        })
    }

    /// The definitions left out as identical copies, each with the one held.
    pub fn copies(&self) -> impl Iterator<Item = (&'a Object, &'a Object)> + '_ {
        (self.copies.iter()).map(|&(held, copy)| (&self.objects[held], &self.objects[copy]))
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

/// The definitions of `objects` that share an identity with another ([`identity`]), group
/// by group in the order of their first.
fn recurring(objects: &[Object]) -> Vec<Vec<usize>> {
    let mut by_identity: HashMap<Identity, Vec<usize>> = HashMap::new();
    for (i, o) in objects.iter().enumerate() {
        if let Some(id) = identity(o) {
            by_identity.entry(id).or_default().push(i);
        }
    }
    let mut groups: Vec<Vec<usize>> = by_identity.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_unstable();
    groups
}

/// The (held, copy) pairs of the recurring definitions: a definition the same as an earlier
/// one of its identity ([`fingerprint`]) is a copy of the first such. Sorted by copy.
fn identical_copies(objects: &[Object], recurring: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let mut copies = repeats(recurring, |_, _| false, |i| fingerprint(&objects[i]));
    copies.sort_unstable_by_key(|&(_, c)| c);
    copies
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

    /// Copies the same in every field karplint reads are one object (the API server stores
    /// one per identity): the first is held and the others are listed as its copies, however
    /// far apart and however laid out; a copy that differs is held beside it.
    #[test]
    fn identical_copies_are_one_object() {
        let np = |weight: u32, comment: &str| {
            format!(
                "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: default}}\n{comment}spec: {{weight: {weight}, template: {{spec: {{nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}}, requirements: []}}}}}}\n---\n"
            )
        };
        let pdb = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: api}\nspec: {minAvailable: 1}\n---\n";
        let yaml = [
            np(10, ""),
            pdb.into(),
            np(10, "# a copy\n"),
            np(20, ""),
            np(10, ""),
        ]
        .concat();
        let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
        let index = Index::new(&objects);
        assert_eq!(index.nodepools().count(), 2);
        let copies: Vec<(usize, usize)> = index
            .copies()
            .map(|(held, copy)| (held.doc_offset, copy.doc_offset))
            .collect();
        let first = objects[0].doc_offset;
        assert_eq!(
            copies,
            [
                (first, objects[2].doc_offset),
                (first, objects[4].doc_offset)
            ]
        );
        assert_eq!(index.of_kind(Kind::PodDisruptionBudget).count(), 1);
    }
}
