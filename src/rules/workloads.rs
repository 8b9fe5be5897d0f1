//! Workload digests: what the rules that look across workloads need of each one, so that a
//! workload's typed model can be dropped as soon as its own rules have run.
//!
//! A digest is taken of every workload of the run, linted or `--context`, held in the index
//! or streamed (see `lint.rs`). Each field names the rule that reads it.

use super::Context;
use crate::diagnostic::{ObjectRef, Subject};
use crate::karpenter::sim::Verdict;
use crate::karpenter::volumes;
use crate::model::de::{SpannedMap, Str};
use crate::model::{Kind, Object, SourceId, Span};
use std::collections::HashMap;

/// One workload, as the cross-workload rules see it.
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
    /// The digest of a workload object, or `None` for other kinds. Reads the context's
    /// index and simulator, so it is taken once those are built.
    pub fn of(obj: &Object, cx: &Context) -> Option<Digest> {
        let w = obj.workload()?;
        let linted = !obj.context;
        let verdict = cx.verdict(obj);
        let claims = || volumes::claim_volumes(cx.index, obj);
        let ebs_pool = match verdict.as_deref() {
            Some(Verdict::Schedules(p)) if claims().iter().any(|v| v.is_ebs()) => Some(p.pool),
            _ => None,
        };
        let unbound_classes = match verdict.as_deref() {
            Some(Verdict::Schedules(_) | Verdict::Pending(_)) => claims()
                .iter()
                .filter(|v| v.pv.is_none())
                .filter_map(|v| v.storage_class.map(|s| s.id))
                .collect(),
            _ => Box::default(),
        };
        Some(Digest {
            id: obj.id,
            source: obj.source,
            order: crate::lint::order(obj),
            context: obj.context,
            kind: obj.kind,
            object: ObjectRef::of(obj),
            namespace: obj.effective_namespace().into(),
            name_span: obj.name_span(),
            replicas: w.replicas.as_ref().map(|r| (r.value, obj.span(r))),
            pod_labels: crate::karpenter::topology::pod_labels(obj).clone(),
            lacking_requests: if linted {
                super::missing_resource_requests::lacking(obj, cx.index).len()
            } else {
                0
            },
            ebs_pool,
            unbound_classes,
            devices: super::missing_device_plugin::provided(obj),
        })
    }

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
