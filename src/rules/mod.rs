//! Rules stage: the registry, the [`Rule`] trait and the engine that runs every rule over
//! every object in parallel and sorts what they find, so output is identical at any thread
//! count.
//!
//! A rule lives in one file named after its id (`untolerated-taint` → `untolerated_taint.rs`),
//! with its doc in `lints/<id>.md` and fixtures in `fixtures/<id>/`; adding one touches only
//! those and one line in [`registry`].

mod consolidation_blocked;
mod deprecated_karpenter_api;
mod in_tree_storage_plugin;
mod karpenter_label_on_static_node;
mod missing_csi_startup_taint;
mod missing_device_plugin;
mod missing_limit_range;
mod missing_resource_requests;
mod pvc_workload_not_spread;
mod restricted_label_selector;
mod scheduling;
mod startup_taint_without_agent;
mod subnet_ip_exhaustion;
mod unsatisfiable_pod_affinity;
mod unsatisfiable_topology_spread;
mod volume_zone_conflict;
mod windows_os_mismatch;

use crate::diagnostic::{Finding, Severity};
use crate::index::{Digest, Index, Workloads};
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::ClusterFacts;
use crate::karpenter::sim::{Simulator, Verdict};
use crate::karpenter::topology::Reach;
use crate::model::Object;
use rayon::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Mutex;

/// What every rule can see.
///
/// The run's workloads are not all held at once: most are linted file by file as they are
/// parsed and then dropped (see `lint.rs`). The index holds every object of the other kinds
/// (NodePools, node classes, DaemonSets, PVCs, budgets, …) and the few workloads that share
/// a document with them; every workload, held or not, leaves a [`Digest`] in
/// [`Context::workloads`], which is complete once all files are parsed. Questions about
/// other workloads are therefore asked of the digests, in [`Rule::check_all`] or through
/// [`Context::unless`].
pub struct Context<'a, 'c> {
    pub index: &'a Index<'a>,
    /// The Karpenter simulator, when the run has NodePools.
    pub sim: Option<Simulator<'a, 'c>>,
    /// Capacity outside Karpenter (node groups, Nodes, Fargate) and subnets.
    pub cluster: ClusterFacts,
    pub catalog: &'c Catalog,
    /// Every workload of the run, in source order; filled before [`Rule::check_all`] runs.
    pub workloads: Workloads,
    /// Findings that stand unless some workload of the run says otherwise.
    deferred: Mutex<Vec<Deferred>>,
    /// This context's number, which keys the per-thread memos.
    run: u64,
}

/// A finding held back until every workload is known, and the test that withdraws it.
type Deferred = (Finding, Box<dyn Fn(&Digest) -> bool + Send>);

/// Contexts made so far in this process (tests and embedders lint several times).
static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// (context, object id, its reach or verdict).
type Slot<T> = (u64, usize, Option<Rc<T>>);

thread_local! {
    /// The last [`Reach`] worked out on this thread: (context, object id, reach). Rules run
    /// object by object, so the topology, affinity and volume rules asking about the same
    /// object share one computation; a run-wide cache would hold a pool list per workload
    /// (tens of MB on a monorepo with hundreds of NodePools).
    static LAST_REACH: RefCell<Option<Slot<Reach>>> = const { RefCell::new(None) };
    /// The last [`Verdict`] worked out on this thread, shared the same way.
    static LAST_VERDICT: RefCell<Option<Slot<Verdict>>> = const { RefCell::new(None) };
}

/// `compute` for `obj`, or the value this thread last computed for it in this run.
fn memo<T>(
    slot: &'static std::thread::LocalKey<RefCell<Option<Slot<T>>>>,
    run: u64,
    obj: &Object,
    compute: impl FnOnce() -> Option<T>,
) -> Option<Rc<T>> {
    slot.with(|slot| {
        let mut slot = slot.borrow_mut();
        if let Some((r, id, value)) = &*slot
            && *r == run
            && *id == obj.id
        {
            return value.clone();
        }
        let value = compute().map(Rc::new);
        *slot = Some((run, obj.id, value.clone()));
        value
    })
}

impl<'a, 'c> Context<'a, 'c> {
    /// Builds the facts every rule shares: the simulator (when there are NodePools) and the
    /// capacity outside Karpenter.
    pub fn new(index: &'a Index<'a>, catalog: &'c Catalog) -> Self {
        let sim = index
            .nodepools()
            .next()
            .is_some()
            .then(|| Simulator::new(index, catalog));
        Context {
            index,
            sim,
            cluster: ClusterFacts::from_index(index),
            catalog,
            workloads: Workloads::default(),
            deferred: Mutex::new(Vec::new()),
            run: RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Reports `finding` at the end of the run unless some workload's digest passes
    /// `withdraw`: for per-object checks that ask about the other workloads.
    pub fn unless(&self, finding: Finding, withdraw: impl Fn(&Digest) -> bool + Send + 'static) {
        self.deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((finding, Box::new(withdraw)));
    }

    /// The [`Digest`] of a workload object, or `None` for other kinds: taken while its rules
    /// run (its verdict is memoised then), or for held objects before any rule runs.
    pub fn digest(&self, obj: &Object) -> Option<Digest> {
        let w = obj.workload()?;
        let linted = !obj.context;
        let verdict = self.verdict(obj);
        let claims = || crate::karpenter::volumes::claim_volumes(self.index, obj);
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
            object: crate::diagnostic::ObjectRef::of(obj),
            namespace: obj.effective_namespace().into(),
            name_span: obj.name_span(),
            replicas: w.replicas.as_ref().map(|r| (r.value, obj.span(r))),
            pod_labels: crate::karpenter::topology::pod_labels(obj).clone(),
            lacking_requests: if linted {
                missing_resource_requests::lacking(obj, self.index).len()
            } else {
                0
            },
            ebs_pool,
            unbound_classes,
            devices: missing_device_plugin::provided(obj),
        })
    }

    /// [`Reach::of`] the pod template of `obj`, computed once while its rules run.
    pub fn reach(&self, obj: &Object) -> Option<Rc<Reach>> {
        let sim = self.sim.as_ref()?;
        memo(&LAST_REACH, self.run, obj, || {
            Reach::of(sim, obj, obj.workload()?.pod_spec()?)
        })
    }

    /// A linted workload Karpenter would provision for (scheduled or pending, not ignored),
    /// with the simulator and its pod spec: what topology and affinity rules examine.
    pub fn provisioned<'o>(
        &self,
        obj: &'o Object,
    ) -> Option<(
        &Simulator<'a, 'c>,
        &'o crate::model::workload::Workload,
        &'o crate::model::workload::PodSpec,
    )> {
        let sim = self.sim.as_ref()?;
        let w = obj.workload()?;
        let spec = w.pod_spec()?;
        match *self.verdict(obj)? {
            Verdict::Schedules(_) | Verdict::Pending(_) => Some((sim, w, spec)),
            Verdict::Ignored(_) | Verdict::NotProvisionable => None,
        }
    }

    /// Where Karpenter would put a linted workload's pods, computed once while its rules
    /// run.
    pub fn verdict(&self, obj: &Object) -> Option<Rc<Verdict>> {
        let sim = self.sim.as_ref()?;
        let w = obj.workload().filter(|_| !obj.context)?;
        memo(&LAST_VERDICT, self.run, obj, || {
            Some(sim.schedule(obj, w.pod_spec()?, w.replica_count(), false))
        })
    }
}

pub trait Rule: Send + Sync {
    fn id(&self) -> &'static str;
    fn default_severity(&self) -> Severity;
    /// One line for `karplint rules`.
    fn summary(&self) -> &'static str;
    /// `lints/<id>.md`, embedded: the `karplint explain` text.
    fn doc(&self) -> &'static str;
    /// Findings about one object. Called for every object that is linted (not context).
    /// Most workloads are checked while files are still being parsed, when
    /// [`Context::workloads`] is still empty: a check that asks about other workloads files
    /// its finding with [`Context::unless`]. Objects of the held kinds (budgets, NodePools,
    /// …) are checked after every file is parsed, and may read the digests.
    fn check(&self, _obj: &Object, _cx: &Context, _out: &mut Vec<Finding>) {}
    /// Findings that need the whole tree at once (per namespace, per NodePool, …).
    fn check_all(&self, _cx: &Context, _out: &mut Vec<Finding>) {}
}

/// Every rule, in id order. `parse-error` is produced by the parse stage, not here.
pub fn registry() -> Vec<Box<dyn Rule>> {
    vec![
        Box::new(consolidation_blocked::ConsolidationBlocked),
        Box::new(deprecated_karpenter_api::DeprecatedKarpenterApi),
        Box::new(in_tree_storage_plugin::InTreeStoragePlugin),
        Box::new(scheduling::IncompatibleRequirements),
        Box::new(karpenter_label_on_static_node::KarpenterLabelOnStaticNode),
        Box::new(missing_csi_startup_taint::MissingCsiStartupTaint),
        Box::new(missing_device_plugin::MissingDevicePlugin),
        Box::new(missing_limit_range::MissingLimitRange),
        Box::new(missing_resource_requests::MissingResourceRequests),
        Box::new(scheduling::NoInstanceTypeFits),
        Box::new(pvc_workload_not_spread::PvcWorkloadNotSpread),
        Box::new(scheduling::ReplicasExceedCapacity),
        Box::new(restricted_label_selector::RestrictedLabelSelector),
        Box::new(startup_taint_without_agent::StartupTaintWithoutAgent),
        Box::new(subnet_ip_exhaustion::SubnetIpExhaustion),
        Box::new(unsatisfiable_pod_affinity::UnsatisfiablePodAffinity),
        Box::new(unsatisfiable_topology_spread::UnsatisfiableTopologySpread),
        Box::new(scheduling::UntoleratedTaint),
        Box::new(volume_zone_conflict::VolumeZoneConflict),
        Box::new(windows_os_mismatch::WindowsOsMismatch),
    ]
}

/// Rules that are not in the registry because another stage produces their findings.
pub const BUILTIN_RULES: &[(&str, Severity, &str)] = &[
    (
        "parse-error",
        Severity::Error,
        "a YAML syntax error, duplicate key or invalid value of a field karplint reads",
    ),
    (
        "unused-suppression",
        Severity::Info,
        "a karplint-ignore comment or karplint.io/ignore annotation that matched no finding",
    ),
];

/// The `lints/<id>.md` text of a rule in [`BUILTIN_RULES`].
pub fn builtin_doc(id: &str) -> Option<&'static str> {
    match id {
        "parse-error" => Some(include_str!("../../lints/parse-error.md")),
        "unused-suppression" => Some(include_str!("../../lints/unused-suppression.md")),
        _ => None,
    }
}

/// Every rule id, built-in and registered, sorted: what config and suppressions may name.
pub fn known_ids() -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = BUILTIN_RULES.iter().map(|r| r.0).collect();
    ids.extend(registry().iter().map(|r| r.id()));
    ids.sort_unstable();
    ids
}

/// Runs every rule's per-object check over the linted objects of `objects`, in parallel.
pub fn check_objects(rules: &[Box<dyn Rule>], cx: &Context, objects: &[Object]) -> Vec<Finding> {
    objects
        .par_iter()
        .filter(|o| !o.context)
        .flat_map_iter(|o| {
            let mut out = Vec::new();
            check_object(rules, cx, o, &mut out);
            out
        })
        .collect()
}

/// Runs every rule's per-object check on one linted object; findings on context objects
/// are dropped.
pub fn check_object(rules: &[Box<dyn Rule>], cx: &Context, obj: &Object, out: &mut Vec<Finding>) {
    let before = out.len();
    for rule in rules {
        rule.check(obj, cx, out);
    }
    let mut kept = before;
    for i in before..out.len() {
        if !out[i].on_context {
            out.swap(kept, i);
            kept += 1;
        }
    }
    out.truncate(kept);
}

/// Runs the checks that need the whole run, once every workload's digest is in
/// [`Context::workloads`]: each rule's [`Rule::check_all`], then the deferred findings no
/// workload withdrew.
pub fn check_run(rules: &[Box<dyn Rule>], cx: &Context) -> Vec<Finding> {
    let mut findings: Vec<Finding> = rules
        .par_iter()
        .flat_map_iter(|rule| {
            let mut out = Vec::new();
            rule.check_all(cx, &mut out);
            out
        })
        .collect();
    let deferred = std::mem::take(
        &mut *cx
            .deferred
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    findings.extend(
        deferred
            .into_iter()
            .filter(|(_, withdraw)| !cx.workloads.iter().any(withdraw))
            .map(|(f, _)| f),
    );
    findings.retain(|f| !f.on_context);
    findings
}

/// A related note naming the values of `key` a NodePool offers, on the requirement that
/// defines them.
pub fn offers_note(
    f: crate::diagnostic::Finding,
    p: &crate::karpenter::pool::Pool,
    key: &str,
) -> crate::diagnostic::Finding {
    f.related(
        p.obj,
        p.requirement_span(key),
        format!(
            "NodePool \"{}\" offers {key} {}",
            p.name,
            crate::karpenter::topology::pool_domains(p, key, None).render()
        ),
    )
}
