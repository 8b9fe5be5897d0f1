//! Simulator: for one pod template, decide offline what Karpenter would decide.
//!
//! NodePools are tried in Karpenter's order (`OrderByWeight`) for each requirement attempt
//! of the pod's relaxation (karpenter-model §3.4), through the stages Karpenter applies: the pool's
//! gate, decided before any pod (`NewScheduler` skips pools whose own requirements leave no
//! instance type, offering or `minValues`; `addToNewNodeClaim` refuses pools whose limits
//! leave no type), then `NodeClaim.CanAdd`: taints, requirements, instance types
//! (requirements ∩ type labels, requests + DaemonSet overhead ≤ allocatable, host ports,
//! offerings, `minValues`). Each stage is one function below, in that order. It judges one
//! pod: how many replicas get a node is the batch's to decide ([`super::scheduler`]). When no pool takes the pod, the verdict keeps every
//! pool's [`Failure`], ordered so the closest pool (the one that got furthest, then in the
//! order Karpenter tries pools) comes first. A failure is data plus Karpenter's own wording
//! of it; rules decide what to advise, and this module knows nothing of them. Where a whole
//! batch of pods decides (shared NodeClaims, limits spent in whole instances), see
//! [`super::scheduler`].

use super::catalog::Catalog;
use super::pod::{self, Attempt, HostPort, Ignored, Requests};
use super::pool::{Demand, Exclusion, Pool, PoolType};
use super::preferences;
use super::requirements::{Requirements, TypeRow};
use super::taints::{self, Effect, Taint, Toleration};
use super::version::KarpenterVersion;
use crate::index::Index;
use crate::model::workload::PodSpec;
use crate::model::{Kind, Object, Span};
use crate::quantity::{Quantity, ResourceList};
use rayon::prelude::*;
use std::borrow::Cow;
use std::collections::HashMap;

mod bound;
mod failure;

pub(super) use bound::TypeBound;

pub use failure::{Failure, LargestType, NO_NODEPOOL_LEFT, PoolFailure, Stage};

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
    /// The run's DaemonSets, for the nodes the batch launches ([`Simulator::daemons_on_node`]).
    daemonsets: Vec<DaemonSetPod<'a>>,
    /// The run's NodeOverlays that Karpenter applies, heaviest first.
    overlays: Vec<super::overlay::Overlay<'a>>,
    /// The NodeOverlays Karpenter never applies, and why.
    ignored_overlays: Vec<super::overlay::Ignored<'a>>,
    /// The names of the overlays left out for a conflict, each with the name of the
    /// overlay of the same weight it conflicts with.
    conflicting_overlays: Vec<(String, String)>,
    /// The `NodeOverlay` feature gate is on (the default; `karpenter.featureGates`).
    node_overlays: bool,
    /// The shared tables the pools were built from, for when overlays change them.
    tables: std::sync::Mutex<super::pool::TypeRequirementCache>,
    /// [`super::topology::Reach`]'s pool lists per (requirement attempts, tolerations):
    /// the many workloads that select and tolerate alike are matched against the pools once.
    pub(super) reach_memo: super::memo::Memo<ReachKey, ReachLists>,
    /// Topology domains of a key over a set of pools, as [`super::topology`] unions them:
    /// workloads that reach the same pools share one union (a monorepo has hundreds of
    /// NodePools and thousands of spread constraints).
    pub(super) domain_memo: super::memo::Memo<(String, Vec<usize>), super::topology::Domains>,
    /// Per topology key, the domains every NodePool offers (`buildDomainGroups`), which
    /// every round of the batch counts pods in.
    pub(super) universe_memo: super::memo::Memo<String, std::sync::Arc<DomainUniverse>>,
    /// Per pool: what is decided before any pod is tried ([`gate`]).
    gates: Vec<Option<Failure>>,
    /// Some pool has a `PreferNoSchedule` taint: Karpenter's last relaxation tolerates them.
    prefer_no_schedule: bool,
    /// What admission adds to every pod the simulator is asked about.
    pub(super) admission: pod::Admission,
    /// What admission writes into pods from the run's objects (LimitRange defaults,
    /// RuntimeClasses).
    pub(super) admitted: pod::Admitted,
    /// The Karpenter release whose behaviour is simulated.
    pub(super) version: KarpenterVersion,
    /// The cluster's zones, where every type is offered; empty when unknown (any zone).
    zones: Vec<String>,
    /// The region whose on-demand prices order the instance types a NodeClaim launches
    /// ([`ClusterFacts::region`](super::cluster::ClusterFacts::region)).
    price_region: String,
    /// Per pool: the number of its template, shared by pools whose stages read the same
    /// ([`Pool::template_key`] and DaemonSet overhead).
    template_of: Vec<usize>,
    /// How many times a pool's stages ran.
    evaluations: std::sync::atomic::AtomicUsize,
}

/// A pod's requirement attempts and tolerations: pods alike in both reach the same pools.
pub(super) type ReachKey = (Vec<Requirements>, Vec<Toleration>);

/// The pools a pod is compatible with, and of those the pools whose taints it tolerates.
pub(super) type ReachLists = std::sync::Arc<(Vec<usize>, Vec<usize>)>;

/// Every value of a topology key some NodePool offers, each with the taints of every
/// NodePool that offers it.
pub(super) type DomainUniverse = std::collections::BTreeMap<String, Vec<Vec<Taint>>>;

#[derive(Default, PartialEq, Eq, Hash)]
struct PoolOverhead {
    always: ResourceList,
    by_type: Vec<(Requirements, ResourceList)>,
    /// The DaemonSets' host ports, each with the DaemonSet's requirements (empty: every
    /// type).
    ports: Vec<(Requirements, HostPort)>,
}

struct DaemonSetPod<'a> {
    /// Its last requirement attempt, which a NodePool's template is judged by.
    attempt: Attempt,
    /// Its nodeSelector and first required term (`NewStrictPodRequirements`), which a
    /// node's labels are judged by.
    strict: Requirements,
    /// The host ports its pod binds, on every Karpenter release (a NodeClaim knows them
    /// only from v1.4 on: [`KarpenterVersion::daemonset_host_ports`]).
    host_ports: Vec<HostPort>,
    tolerations: Vec<Toleration>,
    requests: ResourceList,
    _obj: &'a Object,
}

/// DaemonSets run where they tolerate the taints (startup taints aside) and their
/// requirements fit the template (karpenter-model §6.4; core `isDaemonPodCompatible`).
fn daemon_runs_on(pool: &Pool, tolerations: &[Toleration], attempt: &Attempt) -> bool {
    !any_untolerated(tolerations, &pool.taints, true)
        && (pool.requirements).compatible_with_ok(&attempt.requirements, pool.flavor)
}

/// Resources the catalog knows; any other extended resource has capacity 0 (karpenter-model §6.2).
pub fn known_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "pods" | "ephemeral-storage")
        || super::catalog::EXTENDED_RESOURCES.contains(&name)
        || name == super::catalog::RESOURCE_PRIVATE_IPV4
}

/// What a pool's instance types are offered as: every type in every zone of the cluster
/// (when karplint knows them), on-demand and spot, and reserved when the node class selects
/// capacity reservations. The AWS provider derives the types' zone and capacity-type
/// requirements from these (`computeRequirements`).
#[derive(Clone, Copy)]
pub(super) struct Offered<'z> {
    zones: &'z [String],
    reserved: bool,
}

impl<'z> Offered<'z> {
    /// The values every type has for `key` through its offerings; `None` for other keys and
    /// for zones when the cluster's are unknown.
    pub(super) fn values(&self, key: &str) -> Option<Vec<&'z str>> {
        match key {
            super::requirements::LABEL_ZONE if !self.zones.is_empty() => {
                Some(self.zones.iter().map(String::as_str).collect())
            }
            super::requirements::LABEL_CAPACITY_TYPE => {
                let reserved = self.reserved.then_some("reserved");
                Some(["on-demand", "spot"].into_iter().chain(reserved).collect())
            }
            _ => None,
        }
    }

    /// Some offering is compatible with every set of `reqs` together (`fits` →
    /// `IsCompatible` on the offering's zone and capacity type).
    pub(super) fn allow(&self, reqs: &[&Requirements]) -> bool {
        [
            super::requirements::LABEL_ZONE,
            super::requirements::LABEL_CAPACITY_TYPE,
        ]
        .into_iter()
        .all(|key| match self.values(key) {
            Some(values) => values
                .iter()
                .any(|v| reqs.iter().all(|r| r.get(key).is_none_or(|r| r.has(v)))),
            None => true,
        })
    }
}

/// The keys of `requirements` whose `minValues` the `types` do not meet: fewer distinct
/// values the requirement allows among the types' labels, or among the zones and capacity
/// types they are `offered` in (core `InstanceTypes.SatisfiesMinValues`). Zones are not
/// judged when the cluster's are unknown.
pub(super) fn unmet_min_values(
    requirements: &Requirements,
    types: &[PoolType],
    offered: Offered,
) -> Vec<String> {
    let mut unmet = Vec::new();
    for r in requirements.iter() {
        let Some(min) = r.min_values() else { continue };
        let values: std::collections::BTreeSet<&str> = match offered.values(r.key()) {
            _ if types.is_empty() => Default::default(),
            Some(values) => values.into_iter().filter(|v| r.has(v)).collect(),
            None if !types[0].requirements.has(r.key()) => continue,
            None => types
                .iter()
                .filter_map(|t| t.requirements.get(r.key()).value())
                .filter(|v| r.has(v))
                .collect(),
        };
        if values.len() < min as usize {
            unmet.push(r.key().to_string());
        }
    }
    unmet.sort();
    unmet
}

/// What Karpenter decides of pool `pool` before it tries a pod: skipped when its own
/// requirements leave no type, no offering, or miss their `minValues` (`NewScheduler`),
/// refused when a
/// `nodes` limit is 0 or every type exceeds a limit (`addToNewNodeClaim`:
/// `filterByRemainingResources`).
fn gate(pool: &Pool, offered: Offered) -> Option<Failure> {
    if pool.usable_types().next().is_none() || !offered.allow(&[&pool.requirements]) {
        return Some(Failure::NoCompatibleInstanceTypes { min_values: false });
    }
    let min_values = pool.requirements.has_min_values();
    if min_values {
        let types: Vec<PoolType> = pool.usable_types().collect();
        if !unmet_min_values(&pool.requirements, &types, offered).is_empty() {
            return Some(Failure::NoCompatibleInstanceTypes { min_values: true });
        }
    }
    if pool.limits.get("nodes").is_some_and(|n| n.is_zero()) {
        return Some(Failure::NodeLimitsExhausted);
    }
    // A type whose capacity exceeds any of the pool's limits is never launched
    // (karpenter-model §6.5).
    if !pool.limits.is_empty() && !pool.some_usable_type(pool.within_limits()) {
        return Some(Failure::AllTypesExceedLimits);
    }
    None
}

/// Per pool, the number of its template: pools equal in template and DaemonSet overhead
/// share one.
fn templates(pools: &[Pool], overheads: &[PoolOverhead]) -> Vec<usize> {
    let mut seen: HashMap<(super::pool::TemplateKey, &PoolOverhead), usize> = HashMap::new();
    pools
        .iter()
        .zip(overheads)
        .map(|(p, o)| {
            let next = seen.len();
            *seen.entry((p.template_key(), o)).or_insert(next)
        })
        .collect()
}

/// `needed + overhead ≤ allocatable` for every resource, without building the sum.
pub(super) fn fits_with(
    needed: &ResourceList,
    overhead: &ResourceList,
    alloc: &super::pool::Allocatable,
) -> bool {
    if alloc.any_negative() {
        return false;
    }
    let ok = |k: &str| {
        let sum = needed
            .get_or_zero(k)
            .saturating_add(overhead.get_or_zero(k));
        sum.is_zero() || sum <= alloc.get_or_zero(k)
    };
    needed.iter().all(|(k, _)| ok(k)) && overhead.iter().all(|(k, _)| ok(k))
}

/// The taints of `taints` the `tolerations` do not tolerate, in order (`Taints.Tolerates`).
/// PreferNoSchedule taints count unless `prefer_no_schedule_tolerated`: a pod must tolerate
/// them until Karpenter's last relaxation (karpenter-model §3.4), a DaemonSet never
/// (karpenter-model §6.4).
fn untolerated<'t>(
    tolerations: &'t [Toleration],
    taints: &'t [(Taint, Span)],
    prefer_no_schedule_tolerated: bool,
) -> impl Iterator<Item = &'t Taint> {
    taints.iter().map(|(t, _)| t).filter(move |t| {
        let relaxed = prefer_no_schedule_tolerated && t.effect == Effect::PreferNoSchedule;
        !relaxed && !taints::is_tolerated(tolerations, t)
    })
}

/// Whether some taint of `taints` is not tolerated ([`untolerated`]).
pub(super) fn any_untolerated(
    tolerations: &[Toleration],
    taints: &[(Taint, Span)],
    prefer_no_schedule_tolerated: bool,
) -> bool {
    untolerated(tolerations, taints, prefer_no_schedule_tolerated)
        .next()
        .is_some()
}

impl<'a, 'c> Simulator<'a, 'c> {
    /// The simulator for the NodePools and DaemonSets of `index`, with pods as `admission`
    /// leaves them, as the newest Karpenter release karplint models decides.
    pub fn new(index: &Index<'a>, catalog: &'c Catalog, admission: pod::Admission) -> Self {
        Self::for_version(index, catalog, admission, KarpenterVersion::NEWEST)
    }

    /// [`Simulator::new`] as Karpenter `version` decides: pod-level resources and
    /// DaemonSet host ports count only on the releases that read them.
    pub fn for_version(
        index: &Index<'a>,
        catalog: &'c Catalog,
        admission: pod::Admission,
        version: KarpenterVersion,
    ) -> Self {
        let admitted = pod::Admitted::from_index(index);
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
        // Karpenter's order (`nodepoolutils.OrderByWeight`): heaviest first, equal weights
        // by name, descending.
        pools.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| b.name.cmp(&a.name)));
        let daemonsets: Vec<DaemonSetPod> = index
            .of_kind(Kind::DaemonSet)
            .filter_map(|o| {
                let spec = o.workload()?.pod_spec()?;
                let mut attempts = admitted.attempts(o, spec).ok()?;
                let strict = attempts.first()?.strict.clone();
                Some(DaemonSetPod {
                    attempt: attempts.pop()?,
                    strict,
                    host_ports: pod::host_ports(spec),
                    tolerations: admitted.tolerations(o, spec, admission),
                    requests: admitted.requests(o, spec, version).total,
                    _obj: o,
                })
            })
            .collect();
        let (overlays, ignored_overlays) = super::overlay::read(index);
        let overheads: Vec<PoolOverhead> = pools
            .iter()
            .map(|pool| {
                let mut o = PoolOverhead::default();
                for ds in &daemonsets {
                    if !daemon_runs_on(pool, &ds.tolerations, &ds.attempt) {
                        continue;
                    }
                    // Before v1.4 a new NodeClaim does not know its DaemonSets' host ports
                    // ([`KarpenterVersion::daemonset_host_ports`]).
                    let ports = ds
                        .host_ports
                        .iter()
                        .filter(|_| version.daemonset_host_ports());
                    for port in ports {
                        o.ports
                            .push((ds.attempt.requirements.clone(), port.clone()));
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
        let template_of = templates(&pools, &overheads);
        let gates = Vec::new();
        let prefer_no_schedule = pools.iter().any(|p| {
            p.taints
                .iter()
                .any(|(t, _)| t.effect == Effect::PreferNoSchedule)
        });
        let mut sim = Simulator {
            pools,
            gates,
            prefer_no_schedule,
            admission,
            admitted,
            version,
            zones: Vec::new(),
            price_region: super::prices::FALLBACK_REGION.to_string(),
            overheads,
            daemonsets,
            overlays,
            ignored_overlays,
            conflicting_overlays: Vec::new(),
            node_overlays: true,
            tables: cache,
            reach_memo: Default::default(),
            domain_memo: Default::default(),
            universe_memo: Default::default(),
            template_of,
            evaluations: Default::default(),
        };
        sim.apply_overlays();
        sim.gate_pools();
        sim
    }

    /// The pools with what the applied NodeOverlays give their types
    /// ([`super::overlay::apply`]), under the zones the simulator knows.
    fn apply_overlays(&mut self) {
        if self.overlays.is_empty() {
            return;
        }
        let on: &[super::overlay::Overlay] = if self.node_overlays {
            &self.overlays
        } else {
            &[]
        };
        let (per_pool, conflicting) = super::overlay::apply(on, &self.pools, &self.zones);
        self.conflicting_overlays = (conflicting.iter())
            .map(|c| {
                (
                    c.overlay.obj.name().to_string(),
                    c.with.obj.name().to_string(),
                )
            })
            .collect();
        for (pool, o) in self.pools.iter_mut().zip(per_pool) {
            pool.overlaid(o, &self.tables);
        }
        self.template_of = templates(&self.pools, &self.overheads);
    }

    /// The simulator for a Karpenter whose `NodeOverlay` feature gate is `on`.
    pub fn with_node_overlays(mut self, on: bool) -> Self {
        if on != self.node_overlays {
            self.node_overlays = on;
            self.apply_overlays();
            self.gate_pools();
        }
        self
    }

    /// The cluster's zones; empty when unknown.
    pub fn zones(&self) -> &[String] {
        &self.zones
    }

    /// What the run's NodeOverlays did not do, one line each: those Karpenter never applies
    /// (and why), and those left out for a conflict.
    pub fn overlay_notes(&self) -> Vec<String> {
        if !self.node_overlays {
            return match self.overlays.len() + self.ignored_overlays.len() {
                0 => Vec::new(),
                n => vec![format!(
                    "{n} NodeOverlay(s) change nothing: karpenter.featureGates.nodeOverlay is false"
                )],
            };
        }
        let ignored = self.ignored_overlays.iter().map(|i| {
            format!(
                "NodeOverlay {} is never applied (Karpenter's validation rejects it): {}",
                i.obj.name(),
                i.reason
            )
        });
        let conflicting = self.conflicting_overlays.iter().map(|(name, with)| {
            format!(
                "NodeOverlay {name} is not applied: NodeOverlay {with}, of the same weight and applied first (equal weights go by name, descending), already sets what it sets on some of the same instance types (Karpenter sets its ValidationSucceeded condition to False, reason Conflict); give one of them another weight or make their requirements exclusive"
            )
        });
        ignored.chain(conflicting).collect()
    }

    /// The Karpenter release whose behaviour is simulated.
    pub fn version(&self) -> KarpenterVersion {
        self.version
    }

    /// What admission writes into the pods it is asked about (LimitRange defaults,
    /// RuntimeClasses): [`pod::Admitted::requests`] are the requests it judges.
    pub fn admitted(&self) -> &pod::Admitted {
        &self.admitted
    }

    /// Whether DaemonSet `obj` runs on the nodes of pool `pool`: on the pool's template, as
    /// its overhead is counted ([`daemon_runs_on`]), and on the labels of at least one of
    /// the pool's instance types.
    pub fn daemonset_runs_on(&self, pool: usize, obj: &Object) -> bool {
        let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
            return false;
        };
        let Some(attempt) = pod::attempts(obj, spec).ok().and_then(|mut a| a.pop()) else {
            return false;
        };
        let p = &self.pools[pool];
        // The pool's requirements, then its types' own labels: a Windows AMI family makes
        // every type `kubernetes.io/os=windows` without the NodePool saying so.
        let reqs = &attempt.requirements;
        daemon_runs_on(p, &pod::tolerations(spec, self.admission), &attempt)
            && (reqs.is_empty() || p.usable_types().any(|t| t.requirements.intersects_ok(reqs)))
    }

    /// DaemonSet overhead on one instance type of a pool (karpenter-model §6.4).
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

    /// The simulator for a cluster in `zones` (every type is offered in each): a pool or pod
    /// that allows none of them has no offering. Pools whose own requirements allow no
    /// offering are skipped, as Karpenter skips them.
    /// The simulator for a cluster in `region`, whose prices order the instance types its
    /// NodeClaims launch.
    pub fn with_price_region(mut self, region: String) -> Self {
        self.price_region = region;
        self
    }

    /// See [`Simulator::with_price_region`].
    pub fn price_region(&self) -> &str {
        &self.price_region
    }

    pub fn with_zones(mut self, zones: &[String]) -> Self {
        if zones.is_empty() {
            return self;
        }
        self.zones = zones.to_vec();
        if !self.overlays.is_empty() {
            // An overlay may select offerings by zone: every pool is judged again.
            self.apply_overlays();
            self.gate_pools();
            return self;
        }
        // Known zones only add reasons to skip a pool, and a skipped pool is skipped before
        // its limits are looked at: every pool not skipped yet is judged again.
        let open: Vec<usize> = (0..self.pools.len())
            .filter(|&i| self.gates[i].as_ref().is_none_or(|g| !g.skips_pool()))
            .collect();
        let regated: Vec<(usize, Option<Failure>)> = open
            .into_par_iter()
            .map(|i| (i, gate(&self.pools[i], self.offered(i))))
            .collect();
        for (i, g) in regated {
            self.gates[i] = g;
        }
        self
    }

    /// Each pool's [`gate`], under the offerings the simulator knows.
    fn gate_pools(&mut self) {
        self.gates = (0..self.pools.len())
            .into_par_iter()
            .map(|i| gate(&self.pools[i], self.offered(i)))
            .collect();
    }

    /// What pool `i`'s instance types are offered as.
    pub(super) fn offered(&self, i: usize) -> Offered<'_> {
        Offered {
            zones: &self.zones,
            reserved: self.pools[i].reservations,
        }
    }

    /// The values pool `i`'s offerings have for `key` ([`Offered::values`]).
    pub(super) fn offered_values(&self, i: usize, key: &str) -> Option<Vec<&str>> {
        self.offered(i).values(key)
    }

    /// What Karpenter decided of pool `i` before any pod ([`gate`]).
    pub(crate) fn gate(&self, i: usize) -> Option<&Failure> {
        self.gates[i].as_ref()
    }

    /// The pod's relaxation steps: its requirement `attempts`, then, when a pool has a
    /// `PreferNoSchedule` taint, the last one again tolerating those taints (karpenter-model §3.4,
    /// [`preferences::tolerating_prefer_no_schedule`]).
    pub(super) fn relaxations(&self, attempts: Vec<Attempt>) -> Vec<Attempt> {
        preferences::tolerating_prefer_no_schedule(attempts, self.prefer_no_schedule)
    }

    /// Whether some NodePool has a `PreferNoSchedule` taint: Karpenter's last relaxation
    /// then tolerates them (`ToleratePreferNoSchedule`).
    pub(super) fn prefer_no_schedule(&self) -> bool {
        self.prefer_no_schedule
    }

    /// The DaemonSet overhead of pool `pool` when it is the same on each of its types
    /// (no DaemonSet's requirements tell its types apart).
    pub(super) fn fixed_overhead(&self, pool: usize) -> Option<&ResourceList> {
        let o = &self.overheads[pool];
        o.by_type.is_empty().then_some(&o.always)
    }

    /// What `requests` and the DaemonSet overhead ask of type `t` of pool `pool`, where
    /// the overhead may differ by type.
    pub(super) fn demand(&self, pool: usize, requests: &ResourceList, t: &PoolType) -> Demand {
        Demand::of(requests, &self.daemon_overhead(pool, t.requirements))
    }

    /// The first stages of `NodeClaim.CanAdd` for a new NodeClaim of pool `i`: taints and
    /// requirements. The batch runs topology, then [`Simulator::instance_types`].
    /// Karpenter's words need only the taints: whether the pool would take the pod were
    /// they tolerated, a whole verdict, is left unasked.
    pub(super) fn claim_stages(&self, i: usize, pod: &PodData) -> Result<(), Box<Failure>> {
        self.untolerated_taints(i, pod).map_err(|taints| {
            Box::new(Failure::Taint {
                taints,
                fits_if_tolerated: None,
            })
        })?;
        self.requirements(i, pod)
    }

    /// Whether [`Simulator::claim_stages`] passes for a pod with `attempt` and
    /// `tolerations`, without building its failure.
    pub(super) fn claim_stages_pass(
        &self,
        i: usize,
        attempt: &Attempt,
        tolerations: &[Toleration],
    ) -> bool {
        let pool = &self.pools[i];
        let pns = attempt.tolerates_prefer_no_schedule;
        !any_untolerated(tolerations, &pool.taints, pns)
            && (pool.requirements).compatible_with_ok(&attempt.requirements, pool.flavor)
    }

    /// Whether a DaemonSet on type `type_reqs` of pool `pool` binds one of `ports`: the
    /// type's DaemonSet group then cannot take the pod (`HostPortUsage.Conflicts` in
    /// `filterInstanceTypesByRequirements`).
    pub(super) fn daemon_port_taken(
        &self,
        pool: usize,
        type_reqs: TypeRow,
        ports: &[HostPort],
    ) -> Option<HostPort> {
        // Whether a DaemonSet runs on the type is a requirements match: asked only of the
        // DaemonSets binding one of `ports` (none, mostly).
        (self.overheads[pool].ports.iter())
            .filter(|(_, taken)| ports.iter().any(|p| p.matches(taken)))
            .find(|(reqs, _)| reqs.is_empty() || type_reqs.intersects_ok(reqs))
            .map(|(_, taken)| taken.clone())
    }

    /// The host ports the DaemonSets that run on type `t` of pool `pool` bind.
    fn daemon_ports_on_type<'s>(
        &'s self,
        pool: usize,
        t: TypeRow<'s>,
    ) -> impl Iterator<Item = &'s HostPort> + 's {
        (self.overheads[pool].ports.iter())
            .filter(move |(reqs, _)| reqs.is_empty() || t.intersects_ok(reqs))
            .map(|(_, port)| port)
    }

    /// What the DaemonSets that run on a launched node of pool `pool` with `labels` ask of
    /// it: the requests of each whose pod tolerates the `NoSchedule` and `NoExecute` taints
    /// of the pool's template and whose nodeSelector and first required term the labels
    /// meet (`getCompatibleDaemonPods`, `isDaemonPodCompatibleWithNode`), and the host
    /// ports its pod binds there. `PreferNoSchedule` taints are left aside: `NewScheduler`
    /// first passes the same DaemonSet pods through `buildDaemonOverheadGroups`, whose
    /// `isDaemonPodCompatible` adds a toleration of every `PreferNoSchedule` taint to each
    /// pod in place (`Preferences.toleratePreferNoScheduleTaints`), before
    /// `calculateExistingNodeClaims` judges existing nodes with them.
    pub(super) fn daemons_on_node(
        &self,
        pool: usize,
        labels: &Requirements,
    ) -> (ResourceList, Vec<HostPort>) {
        let taints = &self.pools[pool].taints;
        self.daemons_where(|ds| {
            !any_untolerated(&ds.tolerations, taints, true) && labels.met_as_labels(&ds.strict)
        })
    }

    /// What the DaemonSets that run on a node of a static node group ask of it: those
    /// whose pods tolerate `tolerates` and whose requirements (after relaxation)
    /// `matches`, judged by the group.
    pub(super) fn daemons_on_group(
        &self,
        tolerates: impl Fn(&[Toleration]) -> bool,
        matches: impl Fn(&Requirements) -> bool,
    ) -> (ResourceList, Vec<HostPort>) {
        self.daemons_where(|ds| tolerates(&ds.tolerations) && matches(&ds.attempt.requirements))
    }

    /// The requests and host ports of the DaemonSets `runs` admits.
    fn daemons_where(&self, runs: impl Fn(&DaemonSetPod) -> bool) -> (ResourceList, Vec<HostPort>) {
        let mut requests = ResourceList::new();
        let mut ports = Vec::new();
        for ds in self.daemonsets.iter().filter(|ds| runs(ds)) {
            requests.add(&ds.requests);
            ports.extend(ds.host_ports.iter().cloned());
        }
        (requests, ports)
    }

    /// What the NodeClaims of pool `pool` counted for DaemonSets on type `t`: their
    /// requests ([`Simulator::fixed_overhead`] or by type) and host ports.
    pub(super) fn daemons_on_type(&self, pool: usize, t: TypeRow) -> (ResourceList, Vec<HostPort>) {
        let ports = self.daemon_ports_on_type(pool, t).cloned().collect();
        (self.daemon_overhead(pool, t).into_owned(), ports)
    }

    /// The failure a Pending pod's finding leads with: the NodePool the pod was meant for
    /// ([`Simulator::meant`]), whichever pool came closer, unless Karpenter skips that pool
    /// before any pod (its error then never names it); otherwise the closest pool
    /// (`failures` come closest first).
    pub fn headline<'f>(
        &self,
        spec: &PodSpec,
        failures: &'f [PoolFailure],
    ) -> Option<&'f PoolFailure> {
        let tried = |&i: &usize| self.gates[i].as_ref().is_none_or(|g| !g.skips_pool());
        (self.meant(spec).filter(tried))
            .and_then(|i| failures.iter().find(|f| f.pool == i))
            .or_else(|| failures.first())
    }

    /// The NodePool a pod was meant for: its `nodeSelector`, or an `In` expression of its
    /// required node affinity, asks for a label that exactly one NodePool's template sets
    /// to that value: `karpenter.sh/nodepool`, or a label that is not well known (a
    /// `team`, not a zone).
    pub fn meant(&self, spec: &PodSpec) -> Option<usize> {
        let selector =
            (spec.node_selector.0.iter()).map(|(k, v)| (k.value.as_str(), v.value.as_str()));
        let terms = (spec.affinity.node_affinity.required.iter())
            .flat_map(|r| r.node_selector_terms.iter())
            .flat_map(|t| t.value.match_expressions.iter())
            .filter(|e| e.operator.value == "In")
            .flat_map(|e| (e.values.iter()).map(|v| (e.key.value.as_str(), v.value.as_str())));
        let meant: std::collections::BTreeSet<usize> = selector
            .chain(terms)
            .filter(|(k, _)| {
                *k == super::requirements::LABEL_NODEPOOL || !super::requirements::is_well_known(k)
            })
            .flat_map(|(k, v)| {
                (self.pools.iter().enumerate())
                    .filter(move |(_, p)| {
                        p.requirements.get(k).is_some_and(|r| {
                            r.operator() == super::requirements::Operator::In && r.has(v)
                        })
                    })
                    .map(|(i, _)| i)
            })
            .collect();
        (meant.len() == 1).then(|| meant.first().copied()).flatten()
    }

    /// What Karpenter would do with the pod template of `obj`.
    /// `exhaustive` counts every fitting instance type (for `plan`); otherwise the first
    /// one that fits settles where the pod goes.
    pub fn schedule(&self, obj: &Object, spec: &PodSpec, exhaustive: bool) -> Verdict {
        if obj.kind == Kind::DaemonSet || spec.node_name.is_some() {
            return Verdict::NotProvisionable;
        }
        let attempts = match self.admitted.attempts(obj, spec) {
            Ok(a) => self.relaxations(a),
            Err(i) => return Verdict::Ignored(i),
        };
        let mut last = Vec::new();
        let placed = self.each_attempt(obj, spec, &attempts, exhaustive, |pod| {
            let mut failures = Vec::new();
            for i in 0..self.pools.len() {
                match self.try_pool(i, pod) {
                    Ok(p) => return Some(p),
                    Err(f) => failures.push(*f),
                }
            }
            last = failures;
            None
        });
        if let Some(p) = placed {
            return Verdict::Schedules(p);
        }
        last.sort_by(|a, b| {
            b.failure
                .progress()
                .cmp(&a.failure.progress())
                .then_with(|| a.pool.cmp(&b.pool))
        });
        Verdict::Pending(last)
    }

    /// Of `pools`, those that would give the pod template of `obj` a node of its own at
    /// some relaxation step: the pool's gate, taints, requirements and an instance type
    /// that fits it. A domain only such pools offer can hold one of its replicas.
    pub fn hosting(&self, obj: &Object, spec: &PodSpec, pools: &[usize]) -> Vec<usize> {
        let Ok(attempts) = self.admitted.attempts(obj, spec) else {
            return Vec::new();
        };
        let attempts = self.relaxations(attempts);
        let mut hosts = vec![false; pools.len()];
        self.each_attempt(obj, spec, &attempts, false, |pod| {
            for (host, &i) in hosts.iter_mut().zip(pools) {
                if !*host {
                    *host = self.outcome(i, pod).is_ok();
                }
            }
            None::<()>
        });
        (pools.iter().zip(hosts))
            .filter(|(_, host)| *host)
            .map(|(&i, _)| i)
            .collect()
    }

    /// `f` on the pod of `obj` at each of its relaxation steps `attempts`, in order, until
    /// it returns something.
    fn each_attempt<R>(
        &self,
        obj: &Object,
        spec: &PodSpec,
        attempts: &[Attempt],
        exhaustive: bool,
        mut f: impl FnMut(&PodData) -> Option<R>,
    ) -> Option<R> {
        let tolerations = self.admitted.tolerations(obj, spec, self.admission);
        let requests = self.admitted.requests(obj, spec, self.version);
        let host_ports = pod::host_ports(spec);
        // Point at the pod's tolerations when it has some: that is where one is missing.
        let tolerations_span = spec
            .tolerations
            .first()
            .and_then(|t| t.key.as_ref().or(t.operator.as_ref()).or(t.effect.as_ref()))
            .map(|s| obj.span(s));
        // Outcomes of this pod's attempts by pool template: pools alike but for their name
        // are judged once per attempt. The memo lives for this call only, so memory does not
        // grow with the number of distinct pods in the run.
        let memo = OutcomeMemo::default();
        attempts.iter().enumerate().find_map(|(k, attempt)| {
            f(&PodData {
                attempt,
                tolerations: &tolerations,
                tolerations_span,
                requests: &requests,
                host_ports: &host_ports,
                exhaustive,
                within: None,
                bound: None,
                id: 2 * k,
                memo: &memo,
            })
        })
    }

    /// How many times a pool's stages have run for a pod (rather than being answered from
    /// the memo of outcomes by pod signature and pool template).
    #[cfg(test)]
    pub(crate) fn pool_evaluations(&self) -> usize {
        self.evaluations.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Pool `i` against one requirement attempt of the pod: the outcome of its stages, placed
    /// in the pool's and the pod's own files.
    fn try_pool(&self, i: usize, pod: &PodData) -> Result<Placement, Box<PoolFailure>> {
        match self.outcome(i, pod) {
            Ok(p) => Ok(Placement { pool: i, ..p }),
            Err(f) => Err(self.locate(i, pod, *f)),
        }
    }

    /// The outcome of pool `i`'s stages for `pod`, worked out once per (pod variant, pool
    /// template) within one [`Simulator::schedule`] call: a tree that copies its NodePools
    /// judges each template once per pod. A pod that selects on the pool's name is judged
    /// pool by pool.
    fn outcome(&self, i: usize, pod: &PodData) -> Outcome {
        if pod.attempt.requirements.has(self.pools[i].nodepool_label()) {
            return self.evaluate(i, pod);
        }
        let key = (pod.id, self.template_of[i]);
        if let Some(hit) = pod.memo.borrow().get(&key) {
            return hit.clone();
        }
        // Not borrowed while evaluating: the taint stage asks for another variant's outcome.
        let outcome = self.evaluate(i, pod);
        pod.memo.borrow_mut().insert(key, outcome.clone());
        outcome
    }

    /// Pool `i`'s stages, in the order Karpenter checks them: the pool's gate
    /// (`NewScheduler`, `addToNewNodeClaim`), then `NodeClaim.CanAdd`.
    fn evaluate(&self, i: usize, pod: &PodData) -> Outcome {
        self.evaluations
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(f) = &self.gates[i] {
            return Err(Box::new(f.clone()));
        }
        self.taints(i, pod)?;
        self.requirements(i, pod)?;
        let fitting = self.instance_types(i, pod)?;
        Ok(placement(i, &fitting))
    }

    /// Places pool `i`'s failure: the pool field involved and the pod field to change, and
    /// for the instance-type stage the pool's requirements with the pod's added.
    fn locate(&self, i: usize, pod: &PodData, mut failure: Failure) -> Box<PoolFailure> {
        let pool = &self.pools[i];
        let limit_span = |k: &str| {
            pool.limit_spans
                .get(k)
                .copied()
                .unwrap_or_else(|| pool.name_span())
        };
        let with_pod = || {
            let mut requirements = pool.requirements.clone();
            requirements.add_all(&pod.attempt.requirements);
            requirements
        };
        let (pool_span, pod_span) = match &mut failure {
            Failure::Taint { taints, .. } => {
                let span = (pool.taints.iter()).find(|(t, _)| taints.first() == Some(t));
                let span = span.map_or_else(|| pool.name_span(), |(_, s)| *s);
                (span, pod.tolerations_span)
            }
            Failure::Requirements(e) => (
                pool.requirement_span(e.key()),
                pod.attempt.spans.get(e.key()).copied(),
            ),
            Failure::NoTypeMeetsRequirements {
                requirements,
                exclusion,
            } => {
                *requirements = with_pod();
                *exclusion = pool.exclusion(requirements).map(Box::new);
                // The pod's side of what leaves no type, else its first requirement.
                let keys: Vec<&str> = match exclusion.as_deref() {
                    Some(Exclusion::Alone(r)) => vec![r.key()],
                    Some(Exclusion::Pair(a, b)) => vec![a.key(), b.key()],
                    None => vec![],
                };
                let span = (keys.iter()).find_map(|k| pod.attempt.spans.get(*k).copied());
                let span = span.or_else(|| pod.attempt.spans.values().next().copied());
                (pool.name_span(), span)
            }
            Failure::MinValuesNotMet {
                requirements, keys, ..
            } => {
                *requirements = with_pod();
                let key = keys.first().map(String::as_str).unwrap_or_default();
                (
                    pool.requirement_span(key),
                    pod.attempt.spans.get(key).copied(),
                )
            }
            Failure::NoCompatibleInstanceTypes { .. } => (pool.name_span(), None),
            Failure::HostPortTaken { .. } | Failure::Topology { .. } => (pool.name_span(), None),
            Failure::NoRequiredOffering { requirements, .. } => {
                *requirements = with_pod();
                let key = [
                    super::requirements::LABEL_ZONE,
                    super::requirements::LABEL_CAPACITY_TYPE,
                ]
                .into_iter()
                .find(|k| pod.attempt.spans.contains_key(*k))
                .unwrap_or(super::requirements::LABEL_ZONE);
                (
                    pool.requirement_span(key),
                    pod.attempt.spans.get(key).copied(),
                )
            }
            Failure::NodeLimitsExhausted => (limit_span("nodes"), None),
            Failure::NotEnoughResources {
                requirements,
                largest,
                ..
            } => {
                *requirements = with_pod();
                let pod_span = pod.requests.spans.get(largest.resource.as_str()).copied();
                (pool.name_span(), pod_span)
            }
            Failure::AllTypesExceedLimits => {
                let (k, _) = pool.limits.iter().next().unwrap_or(("cpu", Quantity::ZERO));
                (limit_span(k), None)
            }
            Failure::ReplicasExceedLimit { resource, .. } => (limit_span(resource), None),
        };
        PoolFailure::new(i, failure, pool_span, pod_span)
    }

    /// Stage 1, taints: the pod must tolerate every taint of the pool, `PreferNoSchedule`
    /// ones until the last relaxation.
    fn taints(&self, i: usize, pod: &PodData) -> Result<(), Box<Failure>> {
        self.untolerated_taints(i, pod).map_err(|taints| {
            let tolerate_all = [Toleration {
                key: String::new(),
                operator: taints::TolerationOperator::Exists,
                value: String::new(),
                effect: None,
            }];
            let tolerating = PodData {
                tolerations: &tolerate_all,
                tolerations_span: None,
                exhaustive: false,
                // The same attempt with every taint tolerated: its own variant in the memo.
                id: pod.id | 1,
                ..*pod
            };
            let fits_if_tolerated = self.outcome(i, &tolerating).is_ok();
            Box::new(Failure::Taint {
                taints,
                fits_if_tolerated: Some(fits_if_tolerated),
            })
        })
    }

    /// The taints of pool `i` the pod does not tolerate, when there are any.
    fn untolerated_taints(&self, i: usize, pod: &PodData) -> Result<(), Vec<Taint>> {
        let pns = pod.attempt.tolerates_prefer_no_schedule;
        let untolerated: Vec<Taint> = untolerated(pod.tolerations, &self.pools[i].taints, pns)
            .cloned()
            .collect();
        if untolerated.is_empty() {
            Ok(())
        } else {
            Err(untolerated)
        }
    }

    /// Stage 2, requirements: the pod's requirements must be compatible with the pool's.
    fn requirements(&self, i: usize, pod: &PodData) -> Result<(), Box<Failure>> {
        let pool = &self.pools[i];
        pool.requirements
            .compatible_with(&pod.attempt.requirements, pool.flavor)
            .map_err(|e| Box::new(Failure::Requirements(e)))
    }

    /// Stage 3, instance types: the types whose labels meet the pod's requirements and whose
    /// allocatable holds its requests plus the DaemonSet overhead. Without `exhaustive`,
    /// the first that also fits within the pool's limits ends the search. The failures'
    /// requirements are left empty: [`Simulator::locate`] fills them in for each pool.
    pub(super) fn instance_types<'p>(
        &'p self,
        i: usize,
        pod: &PodData,
    ) -> Result<Vec<PoolType<'p, 'c>>, Box<Failure>> {
        let pool = &self.pools[i];
        let needed = self.judged_requests(pool, &pod.requests.total);
        let mut fitting: Vec<PoolType> = Vec::new();
        let mut largest: Option<PoolType> = None;
        let pod_reqs = &pod.attempt.requirements;
        // `minValues` counts every fitting type; otherwise the first one settles the verdict
        // (only `plan` wants them all counted).
        let min_values = pool.requirements.has_min_values();
        if !self.offered(i).allow(&[&pool.requirements, pod_reqs]) {
            return Err(Box::new(Failure::NoRequiredOffering {
                requirements: Requirements::new(),
                requests: pod.requests.total.clone(),
            }));
        }
        if let Some(refused) = self.refused_by_bound(i, pod) {
            return Err(refused);
        }
        let mut port_taken = None;
        let within = pod.within.unwrap_or(pool.within_limits());
        let query = (!pod_reqs.is_empty())
            .then(|| pool.types().next().map(|t| t.requirements.query(pod_reqs)))
            .flatten();
        let fixed = self.fixed_overhead(i).map(|o| Demand::of(&needed, o));
        for (t, &within) in pool.types().zip(within) {
            // Types over a limit were filtered out before the pod was tried.
            if !within || query.as_ref().is_some_and(|q| !t.requirements.meets(q)) {
                continue;
            }
            if !pod.host_ports.is_empty()
                && let Some(port) = self.daemon_port_taken(i, t.requirements, pod.host_ports)
            {
                port_taken.get_or_insert(port);
                continue;
            }
            let fits = match &fixed {
                Some(demand) => t.allocatable().holds(demand),
                None => fits_with(
                    &needed,
                    &self.daemon_overhead(i, t.requirements),
                    t.allocatable(),
                ),
            };
            if fits {
                fitting.push(t);
                if !pod.exhaustive && !min_values {
                    break;
                }
            } else {
                let bigger = largest.as_ref().is_none_or(|l| {
                    (
                        t.allocatable().get_or_zero("cpu"),
                        t.allocatable().get_or_zero("memory"),
                    ) > (
                        l.allocatable().get_or_zero("cpu"),
                        l.allocatable().get_or_zero("memory"),
                    )
                });
                if bigger {
                    largest = Some(t);
                }
            }
        }
        if !fitting.is_empty() {
            if min_values {
                let mut with_pod = pool.requirements.clone();
                with_pod.add_all(pod_reqs);
                let keys = unmet_min_values(&with_pod, &fitting, self.offered(i));
                if !keys.is_empty() {
                    return Err(Box::new(Failure::MinValuesNotMet {
                        requirements: Requirements::new(),
                        requests: pod.requests.total.clone(),
                        keys,
                    }));
                }
            }
            return Ok(fitting);
        }
        let requirements = Requirements::new();
        if let (None, Some(port)) = (&largest, port_taken) {
            return Err(Box::new(Failure::HostPortTaken { port }));
        }
        // Every type that met the requirements either fits or competed for `largest`.
        let Some(t) = largest else {
            return Err(Box::new(Failure::NoTypeMeetsRequirements {
                requirements,
                exclusion: None,
            }));
        };
        Err(self.not_enough_resources(i, pod, needed, t))
    }

    /// The failure of a pod that `t`, the largest type of pool `i` that met its
    /// requirements, does not hold: the first resource `needed` (its judged requests)
    /// and the DaemonSets ask more of than `t` has, other than `pods` if another is short.
    fn not_enough_resources(
        &self,
        i: usize,
        pod: &PodData,
        needed: ResourceList,
        t: PoolType,
    ) -> Box<Failure> {
        let overhead = self.daemon_overhead(i, t.requirements);
        let mut with = needed;
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
        let largest = LargestType {
            name: t.it.name.clone(),
            allocatable: t.allocatable().get_or_zero(&resource),
            daemonset_overhead: overhead.get_or_zero(&resource),
            resource,
        };
        Box::new(Failure::NotEnoughResources {
            requirements: Requirements::new(),
            requests: pod.requests.total.clone(),
            largest,
        })
    }

    /// The requests the instance-type stage judges: without ephemeral-storage when the root
    /// volume size is unknown. An extended resource no type has (nor a NodeOverlay gives) is
    /// judged: Karpenter sees 0 of it.
    pub(super) fn judged_requests(&self, pool: &Pool, total: &ResourceList) -> ResourceList {
        let mut needed = total.clone();
        if !pool.node_class_known {
            // Root volume size unknown: ephemeral-storage is not judged.
            needed.remove("ephemeral-storage");
        }
        needed
    }
}

/// What a pool's stages decide for a pod, before it is placed in the files (see
/// [`Simulator::locate`]): the same for every pool of one template and every pod of one
/// signature.
type Outcome = Result<Placement, Box<Failure>>;

/// Outcomes of one [`Simulator::schedule`] call by (pod variant, pool template).
pub(super) type OutcomeMemo = std::cell::RefCell<HashMap<(usize, usize), Outcome>>;

/// The pod template as every stage reads it, for one requirement attempt (Karpenter's
/// `PodData`).
#[derive(Clone, Copy)]
pub(super) struct PodData<'p> {
    pub(super) attempt: &'p Attempt,
    pub(super) tolerations: &'p [Toleration],
    /// The pod's first toleration, where a missing one would go.
    pub(super) tolerations_span: Option<Span>,
    pub(super) requests: &'p Requests,
    /// The pod's host ports.
    pub(super) host_ports: &'p [HostPort],
    /// Count every fitting instance type (for `plan`).
    pub(super) exhaustive: bool,
    /// Per type of the pool, whether it is within what is left of the pool's limits in a
    /// batch ([`super::scheduler`], [`Pool::within`]); `None`: within the limits themselves.
    pub(super) within: Option<&'p [bool]>,
    /// The most the pool's types weighed for this pod hold ([`TypeBound`]), when known:
    /// a pod asking more is refused without a scan.
    pub(super) bound: Option<&'p TypeBound>,
    /// The pod's variant in [`PodData::memo`]: twice the attempt's number, plus one for the
    /// attempt with every taint tolerated.
    pub(super) id: usize,
    pub(super) memo: &'p OutcomeMemo,
}

impl PoolFailure {
    fn new(pool: usize, failure: Failure, pool_span: Span, pod_span: Option<Span>) -> Box<Self> {
        Box::new(PoolFailure {
            pool,
            failure,
            pool_span,
            pod_span,
        })
    }
}

/// Pool `i` takes the pod: how many types fit, and the smallest by memory, then cpu.
fn placement(i: usize, fitting: &[PoolType]) -> Placement {
    let size = |t: &&PoolType| {
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
    Placement {
        pool: i,
        fitting_types: fitting.len(),
        smallest,
    }
}

#[cfg(test)]
mod tests;
