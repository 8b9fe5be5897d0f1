//! Facts stage: what the run-wide checks know of each workload once its typed model is
//! dropped. Workloads are checked file by file and dropped (see `engine`); each leaves one
//! [`WorkloadFacts`], neutral data about the workload and where Karpenter puts it, that no
//! single rule owns. Rules that look across workloads ([`crate::rules::Rule::check_run`])
//! read these.

use crate::diagnostic::{ObjectRef, Subject};
use crate::index::Index;
use crate::karpenter::sim::{Failure, Verdict};
use crate::model::de::{SpannedMap, Str};
use crate::model::workload::Container;
use crate::model::{Body, Kind, Object, SourceId, Span};
use std::collections::HashMap;

/// One workload of the run, linted or `--context`, held or streamed.
#[derive(Debug)]
pub struct WorkloadFacts {
    /// The object's id: unique in the run, not an index.
    pub id: usize,
    pub source: SourceId,
    /// Its place in the run's object order ([`order`]).
    pub order: (usize, usize, usize),
    pub context: bool,
    pub kind: Kind,
    pub object: ObjectRef,
    /// The namespace, `default` when none is written.
    pub namespace: Str,
    pub name_span: Span,
    /// `spec.replicas` and its span.
    pub replicas: Option<(i64, Span)>,
    /// The labels its pods carry.
    pub pod_labels: SpannedMap,
    /// Container images (init containers included), as written.
    pub images: Box<[Str]>,
    /// Environment variables with a value of its containers (not init containers, which do
    /// not run the agents rules look for), of the names the model keeps ([`crate::model::kept::ENV_VARS`]); read through [`Self::env_values`].
    env: Box<[(Str, Str)]>,
    /// Containers that end up without a cpu or memory request
    /// ([`containers_without_requests`]); 0 for `--context` workloads.
    pub containers_without_requests: usize,
    /// Where Karpenter puts its pods, for a linted workload in a run with NodePools.
    pub scheduling: Scheduling,
    /// When its pod template stays Pending: the NodePool its scheduling finding leads with
    /// ([`crate::karpenter::sim::Simulator::headline`]).
    pub pending_on: Option<usize>,
    /// Its volume claims, when Karpenter provisions for it.
    pub claims: Box<[ClaimFacts]>,
    /// Whether Karpenter evicts its pods when it drains their node, so that their
    /// PodDisruptionBudget is consulted: not when they tolerate `karpenter.sh/disrupted:NoSchedule`
    /// or carry `karpenter.sh/do-not-disrupt: "true"` (core `pkg/utils/pod` `IsEvictable`).
    pub evictable: bool,
    /// The rules the per-object hooks reported on it: a finding of the batch yields to one
    /// of the same rule that already names the field to change.
    pub reported: Box<[&'static str]>,
    /// The most replicas a scheduling finding of the per-object hooks says stay Pending
    /// (`usize::MAX` for every one); `None` when none was reported.
    pub claimed: Option<usize>,
    /// A static node group outside Karpenter could run its pods.
    pub static_capacity: bool,
    /// A Pod that is a template something else fills in ([`Object::is_pod_template`]): its
    /// requests are not judged.
    pub pod_template: bool,
    /// What Karpenter's batch decided for its replicas, once every pod of the run was
    /// placed together (the verdict phase); `None` when it was not in the batch. Boxed:
    /// every workload's facts are held through the workload phase, before any is placed.
    pub batch: Option<Box<Batched>>,
}

/// A workload's replicas as Karpenter's batch places them with every other pod of the run.
#[derive(Debug, Clone, Default)]
pub struct Batched {
    /// The replicas the batch placed: those Karpenter provisions for at once.
    pub replicas: usize,
    /// How many of them stay Pending.
    pub pending: usize,
    /// The failure the first Pending replica's error starts with, and its pool (an index
    /// into the simulator's pools); `None` when Karpenter skipped every pool.
    pub first: Option<(usize, Failure)>,
    /// The failure Karpenter's error gave the NodePool of [`WorkloadFacts::pending_on`]
    /// when it last refused a replica, if its error named that pool.
    pub on_meant: Option<Failure>,
    /// What one replica requests, as Karpenter reads it.
    pub requests: crate::quantity::ResourceList,
}

/// Where Karpenter puts a workload's pods, without the reasons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduling {
    /// Not judged: a `--context` workload, or a run without NodePools.
    Unknown,
    /// Karpenter never provisions for it (DaemonSets, `nodeName`, pods it ignores).
    NotProvisioned,
    /// On a node of this pool (an index into the simulator's pools).
    Schedules(usize),
    Pending,
}

impl Scheduling {
    /// Karpenter provisions for the pods (they schedule or stay pending).
    pub fn provisioned(self) -> bool {
        matches!(self, Scheduling::Schedules(_) | Scheduling::Pending)
    }
}

/// One volume claim of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimFacts {
    /// An EBS volume (CSI or in-tree, by PV or StorageClass).
    pub ebs: bool,
    /// Bound to a PersistentVolume written in the tree.
    pub bound: bool,
    /// The StorageClass object's id, when named (or the default class) and found.
    pub storage_class: Option<usize>,
}

impl WorkloadFacts {
    /// The values its containers give environment variable `name`. Debug builds panic if
    /// the model drops that variable ([`crate::model::kept`]).
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn env_values<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> {
        crate::model::kept::debug_check_env(name);
        (self.env.iter())
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The facts of a workload object, or `None` for other kinds; `verdict` is Karpenter's
    /// on its pod template, when it was judged.
    pub fn of(
        obj: &Object,
        verdict: Option<&Verdict>,
        index: &Index,
        defaulted: &Defaulted,
    ) -> Option<WorkloadFacts> {
        let w = obj.workload()?;
        let scheduling = match verdict {
            None => Scheduling::Unknown,
            Some(Verdict::NotProvisionable | Verdict::Ignored(_)) => Scheduling::NotProvisioned,
            Some(Verdict::Schedules(p)) => Scheduling::Schedules(p.pool),
            Some(Verdict::Pending(_)) => Scheduling::Pending,
        };
        let claims = if scheduling.provisioned() {
            crate::karpenter::volumes::claim_volumes(index, obj)
                .iter()
                .map(|v| ClaimFacts {
                    ebs: v.is_ebs(),
                    bound: v.pv.is_some(),
                    storage_class: v.storage_class.map(|s| s.id),
                })
                .collect()
        } else {
            Box::default()
        };
        let containers = || {
            (w.pod_spec().into_iter()).flat_map(|s| s.containers.iter().chain(&s.init_containers))
        };
        Some(WorkloadFacts {
            id: obj.id,
            source: obj.source,
            order: order(obj),
            context: obj.context,
            kind: obj.kind,
            object: ObjectRef::of(obj),
            namespace: obj.effective_namespace().into(),
            name_span: obj.name_span(),
            replicas: w.replicas.as_ref().map(|r| (r.value, obj.span(r))),
            pod_labels: crate::karpenter::topology::pod_labels(obj).clone(),
            images: containers()
                .filter_map(|c| c.image.as_ref().map(|i| i.value.clone()))
                .collect(),
            env: (w.pod_spec().into_iter())
                .flat_map(|s| s.containers.iter().flat_map(|c| c.env.iter()))
                .filter_map(|e| Some((e.name.clone()?, Str::from(e.value.as_ref()?.as_str()))))
                .collect(),
            containers_without_requests: if obj.context {
                0
            } else {
                containers_without_requests(obj, defaulted).len()
            },
            scheduling,
            pending_on: None,
            claims,
            evictable: evictable(w),
            reported: Box::default(),
            claimed: None,
            static_capacity: false,
            pod_template: obj.is_pod_template(),
            batch: None,
        })
    }

    pub fn name(&self) -> &str {
        &self.object.name
    }

    pub fn kind_name(&self) -> &str {
        &self.object.kind
    }
}

impl Subject for WorkloadFacts {
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

/// Mirrors `pkg/utils/pod/scheduling.go` `IsEvictable` (core v1.14.3) for what a template
/// shows: pods that tolerate the disrupted taint or whose do-not-disrupt annotation is
/// `"true"` are left on the node (a duration expires, after which they are evicted).
fn evictable(w: &crate::model::workload::Workload) -> bool {
    let do_not_disrupt = (w.template.metadata.annotations)
        .entry("karpenter.sh/do-not-disrupt")
        .is_some_and(|(_, v)| v.value.as_str() == "true");
    let tolerates = w
        .pod_spec()
        .is_some_and(crate::karpenter::pod::tolerates_disrupted_taint);
    !do_not_disrupt && !tolerates
}

/// An object's place in the run's order: its source, its document, its place among the
/// document's objects (ids grow within a document, which is parsed in one step).
pub fn order(o: &Object) -> (usize, usize, usize) {
    (o.source, o.doc_offset, o.id)
}

/// Every workload's facts, in the run's object order.
#[derive(Debug, Default)]
pub struct Workloads {
    all: Vec<WorkloadFacts>,
    /// Namespace → positions in `all`, in order.
    by_namespace: HashMap<Str, Vec<usize>>,
}

impl Workloads {
    /// Sorts facts gathered in any order into object order.
    pub fn new(mut all: Vec<WorkloadFacts>) -> Self {
        all.sort_unstable_by_key(|d| d.order);
        all.shrink_to_fit();
        let mut by_namespace: HashMap<Str, Vec<usize>> = HashMap::new();
        for (i, d) in all.iter().enumerate() {
            by_namespace.entry(d.namespace.clone()).or_default().push(i);
        }
        Workloads { all, by_namespace }
    }

    pub fn iter(&self) -> std::slice::Iter<'_, WorkloadFacts> {
        self.all.iter()
    }

    /// The workload at `order` in the run's object order ([`order`]).
    pub fn at(&self, order: (usize, usize, usize)) -> Option<&WorkloadFacts> {
        let i = self.all.binary_search_by_key(&order, |w| w.order).ok()?;
        Some(&self.all[i])
    }

    /// The workloads of a namespace written in one source, in object order (found by
    /// bisection: a namespace's list is in source order).
    pub fn in_namespace_and_source(
        &self,
        ns: &str,
        source: usize,
    ) -> impl Iterator<Item = &WorkloadFacts> + '_ {
        let list = self.by_namespace.get(ns).map_or(&[][..], Vec::as_slice);
        let start = list.partition_point(|&i| self.all[i].order.0 < source);
        let end = list.partition_point(|&i| self.all[i].order.0 <= source);
        list[start..end].iter().map(|&i| &self.all[i])
    }

    /// The workloads of a namespace, in object order.
    pub fn in_namespace(&self, ns: &str) -> impl Iterator<Item = &WorkloadFacts> + '_ {
        self.by_namespace
            .get(ns)
            .into_iter()
            .flatten()
            .map(|&i| &self.all[i])
    }
}

const RESOURCES: [&str; 2] = ["cpu", "memory"];

/// A container and the resources it lacks a request for.
pub struct Lacking<'a> {
    pub container: &'a Container,
    pub missing: Vec<&'static str>,
}

/// Containers (and init containers) of a workload that end up without a cpu or memory
/// request (none on a Pod that is a template: [`Object::is_pod_template`]): neither
/// `requests` nor `limits` (which Kubernetes copies into requests) sets it, and no
/// LimitRange in the namespace gives a default request for it
/// ([`crate::karpenter::pod::default_requests`]: `defaultRequest`, `default`, `max` or
/// `min`).
pub fn containers_without_requests<'a>(obj: &'a Object, defaulted: &Defaulted) -> Vec<Lacking<'a>> {
    let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
        return Vec::new();
    };
    // A pod template another tool fills in sets the requests itself.
    if obj.is_pod_template() {
        return Vec::new();
    }
    let lacking: Vec<Lacking> = spec
        .containers
        .iter()
        .chain(&spec.init_containers)
        .filter_map(|c| {
            let res = c.resources.as_ref().map(|r| &r.value);
            let missing: Vec<&'static str> = RESOURCES
                .into_iter()
                .filter(|r| {
                    res.is_none_or(|res| {
                        res.requests.get(r).is_none() && res.limits.get(r).is_none()
                    })
                })
                .collect();
            (!missing.is_empty()).then_some(Lacking {
                container: c,
                missing,
            })
        })
        .collect();
    if lacking.is_empty() {
        return lacking;
    }
    let defaulted = defaulted.in_namespace(obj.effective_namespace());
    (lacking.into_iter())
        .filter_map(|mut l| {
            l.missing.retain(|r| !defaulted.contains(r));
            (!l.missing.is_empty()).then_some(l)
        })
        .collect()
}

/// Per namespace, the [`RESOURCES`] some LimitRange of it gives a default request for:
/// worked out once per run, asked of every workload.
#[derive(Default)]
pub struct Defaulted(HashMap<String, Vec<&'static str>>);

impl Defaulted {
    pub fn new(index: &Index) -> Self {
        let mut by_namespace: HashMap<String, Vec<&'static str>> = HashMap::new();
        for lr in index.of_kind(Kind::LimitRange) {
            let Body::LimitRange(spec) = &lr.body else {
                continue;
            };
            let defaults = crate::karpenter::pod::default_requests(spec);
            let defaulted = (by_namespace.entry(lr.effective_namespace().to_string())).or_default();
            for r in RESOURCES {
                if !defaulted.contains(&r) && defaults.get(r).is_some() {
                    defaulted.push(r);
                }
            }
        }
        Defaulted(by_namespace)
    }

    fn in_namespace(&self, ns: &str) -> &[&'static str] {
        self.0.get(ns).map_or(&[], Vec::as_slice)
    }
}
