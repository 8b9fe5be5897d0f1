//! Simulator: for one pod template, decide offline what Karpenter would decide.
//!
//! NodePools are tried in weight order through the stages of SPEC §3.3 — taints,
//! requirements, instance types (requirements ∩ type labels, requests + DaemonSet overhead
//! ≤ allocatable), limits — for each requirement attempt of the pod's relaxation (§3.4).
//! When no pool takes the pod, the verdict keeps every pool's failure, ordered so the
//! closest pool (the one that got furthest, then by weight and name) comes first. Rules turn
//! verdicts into findings; this module only decides.

use super::catalog::Catalog;
use super::pod::{self, Attempt, Ignored, Requests};
use super::pool::Pool;
use super::requirements::{IncompatibleError, Requirements, TypeRow};
use super::taints::{self, Effect, Taint, Toleration};
use crate::index::Index;
use crate::model::workload::PodSpec;
use crate::model::{Kind, Object, Span};
use crate::quantity::{Quantity, ResourceList};
use rayon::prelude::*;
use std::borrow::Cow;

/// The stage at which a NodePool rejected a pod, in the order Karpenter checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Taints,
    Requirements,
    InstanceTypes,
    Limits,
}

impl Stage {
    /// The rule that reports a failure at this stage.
    pub fn rule(self) -> &'static str {
        match self {
            Stage::Taints => "untolerated-taint",
            Stage::Requirements => "incompatible-requirements",
            Stage::InstanceTypes => "no-instance-type-fits",
            Stage::Limits => "replicas-exceed-capacity",
        }
    }
}

/// Why one NodePool cannot take the pod.
#[derive(Debug, Clone)]
pub struct PoolFailure {
    /// Index into [`Simulator::pools`].
    pub pool: usize,
    pub stage: Stage,
    /// Karpenter's own words for the failure.
    pub reason: String,
    /// The same, without the requirement and resource dumps, for a headline.
    pub short: String,
    /// The NodePool field involved (a taint, a requirement, a limit), or its name.
    pub pool_span: Span,
    /// The pod field to change, when one can be named.
    pub pod_span: Option<Span>,
    pub help: String,
    /// For a taint failure: the pool would take the pod if it tolerated its taints. Only
    /// then is the toleration worth suggesting beside another pool's failure.
    pub fits_if_tolerated: bool,
}

/// Where a pod lands.
#[derive(Debug, Clone)]
pub struct Placement {
    pub pool: usize,
    /// Instance types that fit the pod (with DaemonSet overhead).
    pub fitting_types: usize,
    /// The smallest fitting type by memory, then cpu.
    pub smallest: crate::model::de::Str,
}

#[derive(Debug, Clone)]
pub enum Verdict {
    /// DaemonSets, pods with `nodeName`: Karpenter never provisions for them.
    NotProvisionable,
    Ignored(Ignored),
    Schedules(Placement),
    /// No pool takes the pod; failures sorted closest first.
    Pending(Vec<PoolFailure>),
}

pub struct Simulator<'a, 'c> {
    pub pools: Vec<Pool<'a, 'c>>,
    /// Per pool: DaemonSet requests on every node, and those that depend on the type.
    overheads: Vec<PoolOverhead>,
    /// A NodeOverlay can add extended resources Karpenter otherwise sees as 0.
    overlays_present: bool,
    /// [`super::topology::Reach`]'s pool lists per (requirement attempts, tolerations):
    /// the many workloads that select and tolerate alike are matched against the pools once.
    pub(super) reach_memo: super::memo::Memo<ReachKey, ReachLists>,
    /// Topology domains of a key over a set of pools, as [`super::topology`] unions them:
    /// workloads that reach the same pools share one union (a monorepo has hundreds of
    /// NodePools and thousands of spread constraints).
    pub(super) domain_memo: super::memo::Memo<(String, Vec<usize>), super::topology::Domains>,
}

/// A pod's requirement attempts and tolerations: pods alike in both reach the same pools.
pub(super) type ReachKey = (Vec<Requirements>, Vec<Toleration>);

/// The pools a pod is compatible with, and of those the pools whose taints it tolerates.
pub(super) type ReachLists = std::sync::Arc<(Vec<usize>, Vec<usize>)>;

#[derive(Default)]
struct PoolOverhead {
    always: ResourceList,
    by_type: Vec<(Requirements, ResourceList)>,
}

struct DaemonSetPod<'a> {
    attempt: Attempt,
    tolerations: Vec<Toleration>,
    requests: ResourceList,
    _obj: &'a Object,
}

/// Resources the catalog knows; any other extended resource has capacity 0 (§6.2).
fn known_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "pods" | "ephemeral-storage")
        || super::catalog::EXTENDED_RESOURCES.contains(&name)
        || name == super::catalog::RESOURCE_PRIVATE_IPV4
}

/// A type whose capacity exceeds any of the pool's limits is never launched (§6.5).
fn within_limits(pool: &Pool, t: &super::pool::PoolType) -> bool {
    pool.limits
        .iter()
        .all(|(k, lim)| t.it.capacity.get(k).is_none_or(|c| c <= lim))
}

/// `needed + overhead ≤ allocatable` for every resource, without building the sum.
fn fits_with(
    needed: &ResourceList,
    overhead: &ResourceList,
    alloc: &super::pool::Allocatable,
) -> bool {
    let ok = |k: &str| {
        let sum = needed
            .get_or_zero(k)
            .saturating_add(overhead.get_or_zero(k));
        sum.is_zero() || sum <= alloc.get_or_zero(k)
    };
    needed.iter().all(|(k, _)| ok(k)) && overhead.iter().all(|(k, _)| ok(k))
}

fn tolerates_all(tolerations: &[Toleration], taints: &[(Taint, Span)]) -> Option<usize> {
    // PreferNoSchedule taints are relaxed last (§3.4): they never keep a pod off a pool for
    // good, so they do not count here.
    taints.iter().position(|(t, _)| {
        t.effect != Effect::PreferNoSchedule && !taints::is_tolerated(tolerations, t)
    })
}

impl<'a, 'c> Simulator<'a, 'c> {
    pub fn new(index: &Index<'a>, catalog: &'c Catalog) -> Self {
        let cache = std::sync::Mutex::new(super::pool::TypeRequirementCache::default());
        // Static NodePools are skipped by the dynamic scheduler.
        let dynamic: Vec<&Object> = index
            .nodepools()
            .filter(|o| o.nodepool().is_some_and(|np| np.replicas.is_none()))
            .collect();
        // Filtering 1,363 instance types per pool is the simulator's set-up cost: in
        // parallel, with the shared per-flavour and per-kubelet tables behind a lock.
        let mut pools: Vec<Pool> = dynamic
            .par_iter()
            .filter_map(|o| Some(Pool::new(o, o.nodepool()?, index, catalog, &cache)))
            .collect();
        pools.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.name.cmp(&b.name)));
        let daemonsets: Vec<DaemonSetPod> = index
            .of_kind(Kind::DaemonSet)
            .filter_map(|o| {
                let spec = o.workload()?.pod_spec()?;
                let attempt = pod::attempts(o, spec).ok()?.pop()?;
                Some(DaemonSetPod {
                    attempt,
                    tolerations: pod::tolerations(spec),
                    requests: pod::requests(o, spec).total,
                    _obj: o,
                })
            })
            .collect();
        let overlays_present = index.objects().iter().any(|o| o.kind_name == "NodeOverlay");
        let overheads = pools
            .iter()
            .map(|pool| {
                let mut o = PoolOverhead::default();
                for ds in &daemonsets {
                    // DaemonSets run where they tolerate the taints (startup taints ignored)
                    // and their requirements fit the template (§6.4).
                    if tolerates_all(&ds.tolerations, &pool.taints).is_some()
                        || !pool
                            .requirements
                            .compatible_with_ok(&ds.attempt.requirements, pool.flavor)
                    {
                        continue;
                    }
                    if ds.attempt.requirements.is_empty() {
                        o.always.add(&ds.requests);
                    } else {
                        o.by_type
                            .push((ds.attempt.requirements.clone(), ds.requests.clone()));
                    }
                }
                o
            })
            .collect();
        Simulator {
            pools,
            overheads,
            overlays_present,
            reach_memo: Default::default(),
            domain_memo: Default::default(),
        }
    }

    /// DaemonSet overhead on one instance type of a pool (§6.4).
    fn daemon_overhead(&self, pool: usize, type_reqs: TypeRow) -> Cow<'_, ResourceList> {
        let o = &self.overheads[pool];
        if o.by_type.is_empty() {
            return Cow::Borrowed(&o.always);
        }
        let mut total = o.always.clone();
        for (reqs, requests) in &o.by_type {
            if type_reqs.intersects_ok(reqs) {
                total.add(requests);
            }
        }
        Cow::Owned(total)
    }

    /// What Karpenter would do with the pod template of `obj`.
    /// `exhaustive` counts every fitting instance type (for `plan`); otherwise the first
    /// one that fits settles where the pod goes.
    pub fn schedule(
        &self,
        obj: &Object,
        spec: &PodSpec,
        replicas: i64,
        exhaustive: bool,
    ) -> Verdict {
        if obj.kind == Kind::DaemonSet || spec.node_name.is_some() {
            return Verdict::NotProvisionable;
        }
        let attempts = match pod::attempts(obj, spec) {
            Ok(a) => a,
            Err(i) => return Verdict::Ignored(i),
        };
        let tolerations = pod::tolerations(spec);
        let requests = pod::requests(obj, spec);
        // Point at the pod's tolerations when it has some: that is where one is missing.
        let tolerations_span = spec
            .tolerations
            .first()
            .and_then(|t| t.key.as_ref().or(t.operator.as_ref()).or(t.effect.as_ref()))
            .map(|s| obj.span(s));
        let mut last = Vec::new();
        for attempt in &attempts {
            let mut failures = Vec::new();
            for (i, pool) in self.pools.iter().enumerate() {
                match self.try_pool(
                    i,
                    pool,
                    obj,
                    attempt,
                    &tolerations,
                    tolerations_span,
                    &requests,
                    replicas,
                    exhaustive,
                ) {
                    Ok(p) => return Verdict::Schedules(p),
                    Err(f) => failures.push(*f),
                }
            }
            last = failures;
        }
        last.sort_by(|a, b| {
            b.stage
                .cmp(&a.stage)
                .then_with(|| self.pools[b.pool].weight.cmp(&self.pools[a.pool].weight))
                .then_with(|| self.pools[a.pool].name.cmp(&self.pools[b.pool].name))
        });
        Verdict::Pending(last)
    }

    #[allow(clippy::too_many_arguments)]
    fn try_pool(
        &self,
        i: usize,
        pool: &Pool,
        obj: &Object,
        attempt: &Attempt,
        tolerations: &[Toleration],
        tolerations_span: Option<Span>,
        requests: &Requests,
        replicas: i64,
        exhaustive: bool,
    ) -> Result<Placement, Box<PoolFailure>> {
        let fail = |stage, reason: String, pool_span, pod_span, help: String| {
            Box::new(PoolFailure {
                pool: i,
                stage,
                short: reason
                    .split(", requirements=")
                    .next()
                    .unwrap_or(&reason)
                    .to_string(),
                reason,
                pool_span,
                pod_span,
                help,
                fits_if_tolerated: false,
            })
        };
        // 1. Taints.
        if let Some(t) = tolerates_all(tolerations, &pool.taints) {
            let (taint, span) = &pool.taints[t];
            let suggestion = taints::toleration_yaml(&taints::suggested_toleration(taint), 2);
            let suggestion = suggestion.trim_end();
            let tolerate_all = [Toleration {
                key: String::new(),
                operator: taints::TolerationOperator::Exists,
                value: String::new(),
                effect: None,
            }];
            let fits_if_tolerated = self
                .try_pool(
                    i,
                    pool,
                    obj,
                    attempt,
                    &tolerate_all,
                    None,
                    requests,
                    replicas,
                    false,
                )
                .is_ok();
            let mut f = fail(
                Stage::Taints,
                taints::untolerated_taint_message(taint),
                *span,
                tolerations_span,
                format!(
                    "if this pod should run on NodePool \"{}\", add this toleration to the pod spec's `tolerations`:\n{suggestion}",
                    pool.name
                ),
            );
            f.fits_if_tolerated = fits_if_tolerated;
            return Err(f);
        }
        // 2. Requirements.
        if let Err(e) = pool
            .requirements
            .compatible_with(&attempt.requirements, pool.flavor)
        {
            let key = e.key().to_string();
            let pod_span = attempt.spans.get(&key).copied();
            let pool_span = pool.requirement_span(&key);
            let help = match &e {
                IncompatibleError::UndefinedLabel { .. } => format!(
                    "no NodePool defines label \"{key}\", so Karpenter cannot launch a node that has it: remove the selector (managed node group labels such as `eks.amazonaws.com/nodegroup` do not exist on Karpenter nodes), or add `{{key: {key}, operator: Exists}}` to NodePool \"{}\"'s requirements; if a node group outside Karpenter carries the label, declare it under `cluster.nodeGroups` in .karplint.yaml",
                    pool.name
                ),
                IncompatibleError::Conflict { node, .. } => format!(
                    "change the pod's selector for \"{key}\" to a value NodePool \"{}\" allows ({node}), or widen that NodePool's requirement",
                    pool.name
                ),
            };
            return Err(fail(
                Stage::Requirements,
                e.karpenter_message(),
                pool_span,
                pod_span,
                help,
            ));
        }
        // 3. Instance types.
        let mut reqs = pool.requirements.clone();
        reqs.add_all(&attempt.requirements);
        let mut needed = requests.total.clone();
        let unknown: Vec<String> = needed
            .iter()
            .filter(|(k, q)| !known_resource(k) && !q.is_zero())
            .map(|(k, _)| k.to_string())
            .collect();
        if !unknown.is_empty() && self.overlays_present {
            // A NodeOverlay may provide it: do not judge those resources.
            for k in &unknown {
                needed.remove(k);
            }
        }
        if !pool.node_class_known {
            // Root volume size unknown: ephemeral-storage is not judged.
            needed.remove("ephemeral-storage");
        }
        let mut met_requirements = 0usize;
        let mut fitting: Vec<super::pool::PoolType> = Vec::new();
        let mut largest: Option<(super::pool::PoolType, ResourceList)> = None;
        let pod_reqs = &attempt.requirements;
        for t in pool.types() {
            if !pod_reqs.is_empty() && !t.requirements.intersects_ok(pod_reqs) {
                continue;
            }
            met_requirements += 1;
            let overhead = self.daemon_overhead(i, t.requirements);
            if fits_with(&needed, &overhead, t.allocatable()) {
                fitting.push(t);
                // One type that fits within the limits settles the verdict; only `plan`
                // wants every fitting type counted.
                if !exhaustive && within_limits(pool, &t) {
                    break;
                }
            } else {
                let bigger = largest.as_ref().is_none_or(|(l, _)| {
                    (
                        t.allocatable().get_or_zero("cpu"),
                        t.allocatable().get_or_zero("memory"),
                    ) > (
                        l.allocatable().get_or_zero("cpu"),
                        l.allocatable().get_or_zero("memory"),
                    )
                });
                if bigger {
                    largest = Some((t, overhead.into_owned()));
                }
            }
        }
        let req_text = format!("requirements={reqs}");
        if met_requirements == 0 {
            return Err(fail(
                Stage::InstanceTypes,
                format!("no instance type met all requirements, {req_text}"),
                pool.name_span(),
                attempt.spans.values().next().copied(),
                format!(
                    "the pod's node selectors and NodePool \"{}\"'s requirements together rule out every instance type; relax one of them",
                    pool.name
                ),
            ));
        }
        if fitting.is_empty() {
            let Some((t, overhead)) = largest else {
                return Err(fail(
                    Stage::InstanceTypes,
                    format!("no instance type has enough resources, {req_text}"),
                    pool.name_span(),
                    None,
                    String::new(),
                ));
            };
            let mut with = needed.clone();
            with.add(&overhead);
            let short = with
                .fits(&t.allocatable().to_list())
                .err()
                .unwrap_or_default();
            let resource = short
                .iter()
                .find(|r| *r != "pods")
                .cloned()
                .unwrap_or_else(|| short.first().cloned().unwrap_or_default());
            let pod_span = requests.spans.get(&resource).copied();
            let mut reason = format!(
                "no instance type has enough resources, {req_text}, resources={}",
                requests.total.to_json_string()
            );
            if requests
                .total
                .get("cpu")
                .is_some_and(|c| c >= Quantity::from_units(1_000_000))
            {
                reason.push_str(" (CPU request >= 1 Million, m vs M typo?)");
            }
            let alloc = t.allocatable().get_or_zero(&resource);
            let daemon = overhead.get_or_zero(&resource);
            let help = if !known_resource(&resource) {
                format!(
                    "no EC2 instance type offers `{resource}`: Karpenter sees its capacity as 0; install the device plugin and describe it with a NodeOverlay, or remove the request"
                )
            } else if alloc.is_zero() {
                format!(
                    "no instance type NodePool \"{}\" allows offers `{resource}`; add a NodePool whose requirements allow types that have it (e.g. a GPU family for nvidia.com/gpu)",
                    pool.name
                )
            } else {
                format!(
                    "the largest instance type NodePool \"{}\" allows is {} with {} {resource} allocatable{}; lower the request or allow larger instance types",
                    pool.name,
                    t.it.name,
                    alloc.display_for(&resource),
                    if daemon.is_zero() {
                        String::new()
                    } else {
                        format!(" (DaemonSets take {} of it)", daemon.display_for(&resource))
                    }
                )
            };
            return Err(fail(
                Stage::InstanceTypes,
                reason,
                pool.name_span(),
                pod_span,
                help,
            ));
        }
        // 4. Limits: a type whose capacity exceeds a limit is never launched, and all
        // replicas together need at least their requests in capacity.
        if !pool.limits.is_empty() {
            let within: Vec<_> = fitting.iter().filter(|t| within_limits(pool, t)).collect();
            let limit_msg = format!(
                "all available instance types exceed limits for nodepool (NodePool={})",
                pool.name
            );
            if within.is_empty() {
                let (k, _) = pool.limits.iter().next().unwrap_or(("cpu", Quantity::ZERO));
                return Err(fail(
                    Stage::Limits,
                    limit_msg,
                    pool.limit_spans
                        .get(k)
                        .copied()
                        .unwrap_or_else(|| pool.name_span()),
                    None,
                    format!(
                        "every instance type that fits the pod has more capacity than NodePool \"{}\"'s `limits` allow; raise the limits",
                        pool.name
                    ),
                ));
            }
            for (k, lim) in pool.limits.iter() {
                let Some(per_pod) = requests.total.get(k) else {
                    continue;
                };
                let demand = Quantity::from_millis(
                    per_pod
                        .as_millis()
                        .saturating_mul(i128::from(replicas.max(0))),
                );
                if demand > lim {
                    return Err(fail(
                        Stage::Limits,
                        format!(
                            "{limit_msg}: {replicas} replicas request {} {k}, the limit is {}",
                            demand.display_for(k),
                            lim.display_for(k)
                        ),
                        pool.limit_spans
                            .get(k)
                            .copied()
                            .unwrap_or_else(|| pool.name_span()),
                        obj.workload()
                            .and_then(|w| w.replicas.as_ref())
                            .map(|r| obj.span(r)),
                        format!(
                            "raise NodePool \"{}\"'s `limits.{k}` to at least {} (more with DaemonSets and other workloads), or lower the replicas",
                            pool.name,
                            demand.display_for(k)
                        ),
                    ));
                }
            }
        }
        let size = |t: &&super::pool::PoolType| {
            (
                t.it.capacity.get_or_zero("memory"),
                t.it.capacity.get_or_zero("cpu"),
            )
        };
        let smallest = fitting
            .iter()
            .min_by(|a, b| {
                size(a)
                    .cmp(&size(b))
                    .then_with(|| a.it.name.cmp(&b.it.name))
            })
            .map(|t| t.it.name.as_str().into())
            .unwrap_or_default();
        Ok(Placement {
            pool: i,
            fitting_types: fitting.len(),
            smallest,
        })
    }
}
