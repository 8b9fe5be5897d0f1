//! Scheduler: every pending pod of the run at once, placed as Karpenter's provisioning
//! scheduler places a batch (core `pkg/controllers/provisioning/scheduling/scheduler.go`,
//! `Solve`). Pods are taken in `byCPUAndMemoryDescending` order; each is tried on the
//! NodeClaims already planned in the batch, fewest pods first (`addToInflightNode`), then
//! on a new NodeClaim from the first NodePool, by weight, that takes it
//! (`addToNewNodeClaim`), one relaxation step at a time (`trySchedule`). A new NodeClaim
//! charges the largest capacity among its instance-type options against its NodePool's
//! limits (`subtractMax`), and its options narrow as pods join it (`NodeClaim.CanAdd` →
//! `filterInstanceTypesByRequirements`, with the pods' host ports and `minValues`). A pod
//! that made no progress is tried again while others do (`Queue`).
//!
//! Before the batch, pods that fit the static nodes outside Karpenter are bound there
//! ([`existing`]); after it, the provisioner's loop goes on round after round
//! ([`Batch::launch`]): the planned NodeClaims launch, and the pods still Pending are
//! scheduled again on them, as existing nodes (`ExistingNode`), and on new NodeClaims, to a
//! fixed point.
//!
//! The stages a pod goes through on a new NodeClaim are the simulator's own
//! ([`Simulator`]); this module adds what only a batch decides, topology spread and pod
//! (anti-)affinity among them ([`topology`]). Not modelled (see
//! `docs/karpenter-upstream.md`): nodes Karpenter launched before the run, volume topology,
//! offerings' availability and reserved capacity.

use super::pod::{self, Attempt, HostPort, Requests};
use super::pool::{Allocatable, Demand, Pool, PoolType};
use super::preferences::{Relaxable, Relaxation};
use super::requirements::{LABEL_CAPACITY_TYPE, LABEL_ZONE, Requirement, Requirements};
use super::sim::{self, Failure, OutcomeMemo, PodData, Simulator, TypeBound};
use super::taints::{Effect, Toleration, TolerationOperator};
use crate::model::workload::{PodSpec, TopologySpreadConstraint};
use crate::model::{Kind, Object};
use crate::quantity::{Quantity, ResourceList};
use refusals::Refusals;
use room::{Room, Rooms, raise};
use std::sync::Arc;
use topology::{Compat, GroupType, PodIdentity, Term, Topology};

mod existing;
mod gosort;
mod launched;
mod refusals;
mod room;
mod topology;

pub use existing::Existing;

/// One workload's pending pods, as the scheduler reads them: owned, so the batch can run
/// once every file has been read and dropped.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingWorkload {
    pub replicas: i64,
    /// The NodePool the finding on its pod template leads with (an index into
    /// [`Simulator::pools`]), whose refusal of its Pending pods the batch keeps
    /// ([`Solved::meant`]).
    pub meant: Option<usize>,
    /// The relaxation steps, in Karpenter's order.
    steps: Vec<Step>,
    tolerations: Vec<Toleration>,
    requests: Requests,
    /// What its pod asks of each [`HEADROOM`] resource, in milli-units: what
    /// [`Batch::has_room_for`] compares, worked out once rather than for each NodeClaim.
    room: Room,
    host_ports: Vec<HostPort>,
    /// Shared with the batch's topology, which reads every workload's.
    identity: Arc<PodIdentity>,
    /// The required pod anti-affinity terms, which Karpenter also tracks the other way
    /// round (`updateInverseAntiAffinity`).
    inverse: Vec<Term>,
}

/// One relaxation step of a pod: the node requirements Karpenter tries and the topology
/// terms the pod owns at that step (`Preferences.Relax`, then `Topology.Update`).
#[derive(Debug, Clone, PartialEq)]
struct Step {
    /// Shared by the steps that relax only topology terms.
    attempt: Arc<Attempt>,
    terms: Vec<Term>,
    /// The pod's tolerations at this step (the last one adds `PreferNoSchedule`).
    tolerations: Vec<Toleration>,
}

impl PendingWorkload {
    /// What one pod requests, as Karpenter reads it.
    pub fn requests(&self) -> &ResourceList {
        &self.requests.total
    }

    /// The pods of `obj` as `sim` tries them, `None` when Karpenter does not provision for
    /// them (DaemonSets, `nodeName`) or ignores them (karpenter-model §2.3).
    pub fn new(
        sim: &Simulator,
        obj: &Object,
        spec: &PodSpec,
        replicas: i64,
    ) -> Option<PendingWorkload> {
        if obj.kind == Kind::DaemonSet || spec.node_name.is_some() {
            return None;
        }
        let attempts = sim.relaxations(sim.admitted.attempts(obj, spec).ok()?);
        let tolerations = sim.admitted.tolerations(obj, spec, sim.admission);
        let identity = PodIdentity {
            namespace: obj.namespace().unwrap_or("default").to_string(),
            labels: super::topology::pod_labels(obj)
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            tolerations: tolerations.clone(),
        };
        let (steps, inverse) =
            relaxation_steps(spec, &identity, attempts, sim.prefer_no_schedule());
        let requests = sim.admitted.requests(obj, spec, sim.version);
        Some(PendingWorkload {
            replicas,
            meant: None,
            steps,
            tolerations,
            room: HEADROOM.map(|r| requests.total.get_or_zero(r).as_millis()),
            requests,
            host_ports: pod::host_ports(spec),
            identity: Arc::new(identity),
            inverse,
        })
    }
}

/// A topology term of the pod as written: its spread constraints' filters change as it
/// is relaxed.
enum TermSource<'s> {
    Spread(&'s TopologySpreadConstraint),
    Affinity(Term),
}

/// The workload's relaxation steps and its required anti-affinity terms: one step for
/// the pod as written and one after each relaxation of `Preferences.Relax`, in its order
/// ([`Relaxable::order`]). `attempts` are the node requirement steps ([`pod::attempts`]
/// with [`Simulator::relaxations`]), one for the pod as written and one per relaxation that
/// changes them; the relaxations of topology terms repeat the attempt they stand at.
fn relaxation_steps(
    spec: &PodSpec,
    pod: &PodIdentity,
    attempts: Vec<Attempt>,
    prefer_no_schedule: bool,
) -> (Vec<Step>, Vec<Term>) {
    let na = &spec.affinity.node_affinity;
    let required = na
        .required
        .as_ref()
        .map_or(0, |r| r.node_selector_terms.len())
        .max(1);
    let mut sources = Vec::new();
    let mut spreads = Vec::new();
    for tsc in spec.topology_spread_constraints.iter() {
        let anyway = tsc
            .when_unsatisfiable
            .as_ref()
            .is_some_and(|w| w.value.as_str() == "ScheduleAnyway");
        spreads.push((sources.len(), anyway));
        sources.push(TermSource::Spread(tsc));
    }
    let mut inverse = Vec::new();
    // The preferred pod terms, in the order `Relax` removes them: affinity, then
    // anti-affinity, each heaviest first.
    let mut preferred_pod_terms = Vec::new();
    for (kind, a) in [
        (GroupType::PodAffinity, &spec.affinity.pod_affinity),
        (GroupType::PodAntiAffinity, &spec.affinity.pod_anti_affinity),
    ] {
        for t in &a.required {
            let term = Term::affinity(kind, &t.value, &pod.namespace);
            if kind == GroupType::PodAntiAffinity {
                inverse.push(term.clone());
            }
            sources.push(TermSource::Affinity(term));
        }
        let mut by_weight: Vec<_> = a.preferred.iter().collect();
        by_weight.sort_by_key(|p| std::cmp::Reverse(p.weight.as_ref().map_or(0, |w| w.value)));
        for p in by_weight {
            preferred_pod_terms.push(sources.len());
            let term = Term::affinity(kind, &p.pod_affinity_term.value, &pod.namespace);
            sources.push(TermSource::Affinity(term));
        }
    }
    // The filter of a spread constraint: the nodeSelector with each required term left.
    let strict: Vec<Requirements> = attempts
        .iter()
        .take(required)
        .map(|a| a.strict.clone())
        .collect();
    let attempts: Vec<Arc<Attempt>> = attempts.into_iter().map(Arc::new).collect();
    let step = |attempt: &Arc<Attempt>, active: &[usize], first_required: usize| {
        let mut tolerations = pod.tolerations.clone();
        if attempt.tolerates_prefer_no_schedule && !tolerations.contains(&PREFER_NO_SCHEDULE) {
            tolerations.push(PREFER_NO_SCHEDULE);
        }
        let left = strict.get(first_required..).unwrap_or_default();
        let terms = active
            .iter()
            .map(|&i| match &sources[i] {
                TermSource::Spread(tsc) => Term::spread(
                    tsc,
                    &pod.namespace,
                    &pod.labels,
                    left.to_vec(),
                    &tolerations,
                ),
                TermSource::Affinity(t) => t.clone(),
            })
            .collect();
        Step {
            attempt: attempt.clone(),
            terms,
            tolerations,
        }
    };
    let relaxable = Relaxable {
        required_node_terms: required,
        preferred_pod_affinity_terms: spec.affinity.pod_affinity.preferred.len(),
        preferred_pod_anti_affinity_terms: spec.affinity.pod_anti_affinity.preferred.len(),
        preferred_node_terms: na.preferred.len(),
        schedule_anyway_spreads: spreads.iter().filter(|(_, anyway)| *anyway).count(),
        prefer_no_schedule,
    };
    let mut active: Vec<usize> = (0..sources.len()).collect();
    let order = relaxable.order();
    let node_steps = order.iter().filter(|r| r.changes_attempt()).count();
    if attempts.len() != node_steps + 1 {
        // Not the attempts of this pod's relaxations: every attempt with every term.
        let steps = attempts.iter().map(|a| step(a, &active, 0)).collect();
        return (steps, inverse);
    }
    let (mut attempt, mut first_required) = (0, 0);
    let mut pod_terms = preferred_pod_terms.into_iter();
    let mut steps = vec![step(&attempts[0], &active, 0)];
    for relaxation in order {
        match relaxation {
            Relaxation::RequiredNodeTerm => {
                attempt += 1;
                first_required += 1;
            }
            Relaxation::PreferredNodeTerm | Relaxation::PreferNoScheduleTaints => attempt += 1,
            Relaxation::PreferredPodAffinityTerm | Relaxation::PreferredPodAntiAffinityTerm => {
                let t = pod_terms.next();
                active.retain(|&a| Some(a) != t);
            }
            Relaxation::ScheduleAnywaySpread => {
                if let Some(i) = spreads.iter().position(|(_, anyway)| *anyway) {
                    let (t, _) = spreads.swap_remove(i);
                    active.retain(|&a| a != t);
                }
            }
        }
        steps.push(step(&attempts[attempt], &active, first_required));
    }
    (steps, inverse)
}

/// The toleration Karpenter's last relaxation adds (`toleratePreferNoScheduleTaints`).
const PREFER_NO_SCHEDULE: Toleration = Toleration {
    key: String::new(),
    operator: TolerationOperator::Exists,
    value: String::new(),
    effect: Some(Effect::PreferNoSchedule),
};

/// Where one pod of the batch ends.
#[derive(Debug, Clone)]
pub enum PodOutcome {
    /// On a NodeClaim of pool `pool` (an index into [`Simulator::pools`]), planned in
    /// provisioning round `round` (from 1); a pod of a later round keeps the kind of the
    /// failure that left it Pending after the first ([`PodOutcome::pending_kind`]).
    Scheduled {
        pool: usize,
        round: u32,
        waited: Option<&'static str>,
    },
    /// On a node of a static node group outside Karpenter (an index into the groups the
    /// [`Existing`] nodes were made from), bound there before Karpenter provisions.
    OnExistingNode { group: usize },
    /// The failure Karpenter's error starts with at the last relaxation step of the last
    /// round: the first pool it tried, in its order (pools it skipped before the batch are
    /// not in its error); `None` when it skipped them all. Only the first is kept: a large
    /// batch has thousands of pending pods and hundreds of pools. Then the kind of the
    /// failure that left it Pending after the first round.
    Pending(Option<(usize, Failure)>, Option<&'static str>),
}

impl PodOutcome {
    /// The kind of a Pending pod's failure ([`Failure::kind`]; `no-nodepool` when every
    /// pool was skipped), `None` for a placed pod.
    pub fn pending_kind(&self) -> Option<&'static str> {
        match self {
            PodOutcome::Pending(first, _) => {
                Some(first.as_ref().map_or("no-nodepool", |(_, f)| f.kind()))
            }
            PodOutcome::Scheduled { .. } | PodOutcome::OnExistingNode { .. } => None,
        }
    }
}

/// A NodeClaim planned in this batch.
struct Claim {
    pool: usize,
    /// The pool's requirements with those of every pod on it.
    requirements: Requirements,
    /// The instance types that still fit every pod on it, by catalog index (a batch holds
    /// thousands of NodeClaims of hundreds of types each).
    types: Vec<u32>,
    /// The pods' requests, summed.
    requests: ResourceList,
    ports: Vec<HostPort>,
    /// The workload of each pod on it.
    workloads: Vec<usize>,
    /// Its `kubernetes.io/hostname` domain (`hostname-placeholder-NNNN`).
    hostname: String,
    /// Launched at the end of a round as a node of its one remaining type: its place among
    /// the launched nodes, in the order of the NodeClaims when its round ended.
    launched: Option<u32>,
}

impl Claim {
    /// Whether it launches as spot: the provider picks spot whenever the NodeClaim allows it.
    fn allows_spot(&self) -> bool {
        (self.requirements)
            .get_or_exists(LABEL_CAPACITY_TYPE)
            .has("spot")
    }

    fn new(
        pool: usize,
        requirements: Requirements,
        types: &[PoolType],
        requests: ResourceList,
        hostname: String,
    ) -> Self {
        Claim {
            pool,
            requirements,
            types: indices(types),
            requests,
            ports: Vec::new(),
            workloads: Vec::new(),
            hostname,
            launched: None,
        }
    }

    /// The most cpu, memory and pods (milli-units) any of its types has left: a pod asking
    /// more cannot join, whatever else it asks (a full NodeClaim is passed over at once).
    fn headroom(&self, sim: &Simulator) -> Room {
        let pool = &sim.pools[self.pool];
        let fixed = self.fixed_demand(sim, &self.requests);
        let mut most = [i128::MIN; HEADROOM.len()];
        for &i in &self.types {
            let t = pool.type_at(i as usize);
            let left = with_demand(
                sim,
                self.pool,
                fixed.as_ref(),
                &self.requests,
                &t,
                |a, d| a.left(d),
            );
            raise(&mut most, left);
        }
        most
    }

    /// What `requests` and the DaemonSets ask of each of its types, when that is the same
    /// on each: once launched, `requests` alone (its node's DaemonSets are among them);
    /// before, with the pool's [`Simulator::fixed_overhead`].
    fn fixed_demand(&self, sim: &Simulator, requests: &ResourceList) -> Option<Demand> {
        if self.launched.is_some() {
            return Some(Demand::of(requests, &ResourceList::new()));
        }
        (sim.fixed_overhead(self.pool)).map(|o| Demand::of(requests, o))
    }

    /// Whether a DaemonSet on its type `t` binds one of `ports`. Once launched, its node's
    /// DaemonSets' ports are among its own.
    fn daemon_port_taken(&self, sim: &Simulator, t: &PoolType, ports: &[HostPort]) -> bool {
        self.launched.is_none()
            && !ports.is_empty()
            && (sim.daemon_port_taken(self.pool, t.requirements, ports)).is_some()
    }
}

/// `f` on type `t`'s allocatable and what `requests` and the DaemonSet overhead ask of it
/// in pool `pool`: `fixed`, when the overhead is the same on each of the pool's types
/// ([`Simulator::fixed_overhead`]), borrowed for every type.
#[inline]
fn with_demand<R>(
    sim: &Simulator,
    pool: usize,
    fixed: Option<&Demand>,
    requests: &ResourceList,
    t: &PoolType,
    f: impl FnOnce(&Allocatable, &Demand) -> R,
) -> R {
    let alloc = t.allocatable();
    match fixed {
        Some(demand) => f(alloc, demand),
        None => f(alloc, &sim.demand(pool, requests, t)),
    }
}

/// A pod's requirements, its tolerations, whether it tolerates `PreferNoSchedule` taints,
/// and the pools they leave it ([`Batch::pools_for`]).
type PoolsAlike = (Requirements, Vec<Toleration>, bool, std::rc::Rc<PoolsFor>);

/// The pools a pod's requirements and tolerations leave it, whatever the batch did.
struct PoolsFor {
    /// Per pool, whether its NodeClaims may take the pod: its taints are tolerated and its
    /// requirements may intersect the pod's on a NodeClaim
    /// ([`Requirements::may_intersect_ok`]). A NodeClaim's requirements narrow its pool's,
    /// so a pool the pod conflicts with has no NodeClaim it fits, but for `Intersects`'
    /// leniency: an `Exists` narrowed to `NotIn` takes a pod's `DoesNotExist`.
    joinable: Box<[bool]>,
    /// The pools whose own stages take the pod on a new NodeClaim
    /// ([`Simulator::claim_stages_pass`]: taints, then `Compatible` requirements), in order.
    /// Every other pool refuses it whatever its limits, and its refusal matters only to the
    /// pod's error ([`Batch::untried_refusal`]).
    staged: Box<[u32]>,
    /// Per pool, its place in `staged` (`u32::MAX` when not there).
    staged_at: Box<[u32]>,
}

/// The hash [`Batch::pools_for`] shares its lists by.
fn alike_hash(requirements: &Requirements, tolerations: &[Toleration], pns: bool) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (requirements, tolerations, pns).hash(&mut h);
    h.finish()
}

/// Each pool's place among the run's pools sorted by name.
fn name_ranks(sim: &Simulator) -> Vec<u32> {
    let mut by_name: Vec<usize> = (0..sim.pools.len()).collect();
    by_name.sort_by(|&a, &b| sim.pools[a].name.cmp(&sim.pools[b].name));
    let mut rank = vec![0; sim.pools.len()];
    for (r, i) in by_name.into_iter().enumerate() {
        rank[i] = u32::try_from(r).unwrap_or(u32::MAX);
    }
    rank
}

/// What a NodeClaim becomes when a pod joins it ([`Batch::can_add`]).
struct Joining {
    /// Its requirements with the pod's and those topology adds.
    requirements: Requirements,
    /// The types that still fit every pod on it, by catalog index.
    types: Vec<u32>,
    /// Its [`Claim::headroom`] once the pod is on it.
    headroom: Room,
}

/// The resources a NodeClaim's headroom tracks, as [`super::pool::Allocatable::left`] gives
/// them: a NodeClaim often runs out of pods (`max-pods`) before cpu or memory.
const HEADROOM: [&str; 3] = ["cpu", "memory", "pods"];

/// The outcome of every replica of every workload, placed as Karpenter's provisioner
/// places them. Pods that fit a static node are bound there first ([`Existing`]); the
/// rest are placed round after round: each round is one batch (`Solve`) over the pods still
/// Pending; after it, every NodeClaim it planned launches its cheapest instance type
/// ([`Batch::launch`]) and becomes a node the next round may fill, charging the pools'
/// limits with the capacity it really has. The rounds stop when one places no pod, or when
/// no launch gave any pool back limits, dropped a `minValues` or settled a zone a topology
/// group counts (nothing else can change).
pub fn solve(
    sim: &Simulator,
    workloads: &[PendingWorkload],
    existing: &mut Existing,
) -> Vec<Vec<PodOutcome>> {
    solve_with_nodes(sim, workloads, existing).pods
}

/// A node the rounds launch: a NodeClaim of the batch as the AWS provider launches it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchedNode {
    /// Its NodePool (an index into [`Simulator::pools`]).
    pub pool: usize,
    /// The instance type it launches as: the cheapest still open to it ([`LaunchOrder`]);
    /// `None` when no type is left (never for a NodeClaim that took a pod).
    pub instance_type: Option<String>,
    /// Whether it launches as spot: the provider picks spot whenever the NodeClaim allows it
    /// (`getCapacityType`; a pool that says nothing of `karpenter.sh/capacity-type` allows
    /// it). Reserved capacity is not modelled.
    pub spot: bool,
    /// The on-demand price per hour a NodeOverlay gives its type, when one changes it.
    pub overlay_price: Option<f64>,
    /// The workload (an index into the batch's workloads) of each pod on it.
    pub workloads: Vec<usize>,
}

/// What the rounds decide: every replica's outcome, and the nodes they launch.
#[derive(Debug, Clone)]
pub struct Solved {
    pub pods: Vec<Vec<PodOutcome>>,
    pub nodes: Vec<LaunchedNode>,
    /// Per workload, the failure Karpenter's error gave its [`PendingWorkload::meant`]
    /// NodePool the last time one of its pods was refused (`None` when the error did not
    /// name that pool).
    pub meant: Vec<Option<Failure>>,
}

/// [`solve`], with the nodes the rounds launch.
pub fn solve_with_nodes(
    sim: &Simulator,
    workloads: &[PendingWorkload],
    existing: &mut Existing,
) -> Solved {
    let mut out: Vec<Vec<PodOutcome>> = workloads
        .iter()
        .map(|w| vec![PodOutcome::Pending(None, None); usize::try_from(w.replicas).unwrap_or(0)])
        .collect();
    let keys: Vec<_> = workloads.iter().map(queue_key).collect();
    let mut queue: std::collections::VecDeque<(usize, usize)> =
        queue_order(workloads, &keys).into();
    if !existing.is_empty() {
        queue.retain(|&(w, r)| match existing.bind(&workloads[w]) {
            Some(group) => {
                out[w][r] = PodOutcome::OnExistingNode { group };
                false
            }
            None => true,
        });
    }
    let mut batch = Batch::new(sim, workloads);
    let mut first_round = fnv::FnvHashMap::default();
    for round in 1.. {
        let placed = batch.round(workloads, &mut queue, &mut out, round);
        if round == 1 {
            first_round = (queue.iter())
                .map(|&(w, r)| ((w, r), out[w][r].pending_kind()))
                .collect();
        }
        if queue.is_empty() || placed == 0 {
            break;
        }
        // Karpenter schedules again until a round places nothing. A round is left out only
        // when it would refuse every pod as the last did: nothing the launches changed may
        // take a pod, and no topology group concerns one, since the next round's groups
        // count every launched node's pods, which may change a refusal's words though it
        // places nothing.
        let may_place = batch.launch(workloads);
        if !may_place
            && queue
                .iter()
                .all(|&(w, _)| batch.topology_free(w, &workloads[w]))
        {
            break;
        }
        // The next `Solve` sorts the pods still Pending afresh.
        queue
            .make_contiguous()
            .sort_by_key(|&(w, r)| (keys[w], w, r));
    }
    for ((w, r), kind) in first_round {
        match &mut out[w][r] {
            PodOutcome::Scheduled { waited, .. } => *waited = kind,
            PodOutcome::Pending(_, after_first) => *after_first = kind,
            PodOutcome::OnExistingNode { .. } => {}
        }
    }
    Solved {
        pods: out,
        nodes: batch.nodes(),
        meant: batch.meant,
    }
}

/// `NewTopology` → `Update` of every pod as written, and the groups each workload owns at
/// its first relaxation step.
fn fresh_topology(
    sim: &Simulator,
    workloads: &[PendingWorkload],
) -> (Topology, fnv::FnvHashMap<(usize, usize), Vec<usize>>) {
    let pods = workloads.iter().map(|w| w.identity.clone()).collect();
    let inverse: Vec<Vec<Term>> = workloads.iter().map(|w| w.inverse.clone()).collect();
    let mut topology = Topology::new(sim, pods, &inverse);
    let mut owned = fnv::FnvHashMap::default();
    for (w, wl) in workloads.iter().enumerate() {
        if let Some(first) = wl.steps.first() {
            owned.insert(
                (w, 0),
                topology.update(sim, &first.terms, &first.tolerations),
            );
        }
    }
    (topology, owned)
}

/// Every pod as (workload, replica), by cpu then memory requested, descending; ties keep
/// the run's order (`byCPUAndMemoryDescending`, creation time standing for the order).
fn queue_order(workloads: &[PendingWorkload], keys: &[QueueKey]) -> Vec<(usize, usize)> {
    let mut pods: Vec<(usize, usize)> = workloads
        .iter()
        .enumerate()
        .flat_map(|(w, wl)| (0..usize::try_from(wl.replicas).unwrap_or(0)).map(move |r| (w, r)))
        .collect();
    pods.sort_by_key(|p| keys[p.0]);
    pods
}

/// A pod's place in the queue ([`queue_key`]).
type QueueKey = std::cmp::Reverse<(Quantity, Quantity)>;

/// `byCPUAndMemoryDescending`: a pod's place in the queue by what it requests.
fn queue_key(workload: &PendingWorkload) -> QueueKey {
    let total = &workload.requests.total;
    std::cmp::Reverse((total.get_or_zero("cpu"), total.get_or_zero("memory")))
}

struct Batch<'s, 'a, 'c> {
    sim: &'s Simulator<'a, 'c>,
    topology: Topology,
    /// The groups each (workload, relaxation step) owns, once made.
    owned: fnv::FnvHashMap<(usize, usize), Vec<usize>>,
    claims: Vec<Claim>,
    /// Each NodeClaim's pool, and in `rooms` its [`Claim::headroom`], apart from the
    /// NodeClaims: a pod passes over most NodeClaims on these alone, reading them rather
    /// than a whole NodeClaim.
    pool_of: Vec<u32>,
    rooms: Rooms,
    /// The NodeClaims in the order `Scheduler.add` last sorted them.
    order: Vec<usize>,
    /// Each NodeClaim's place in `order`.
    position: Vec<usize>,
    /// Whether `order` is sorted: sorting again changes nothing until a NodeClaim is made
    /// or takes a pod.
    sorted: bool,
    /// Whether the existing nodes lead `order` in their order (by pool name, then launch):
    /// their keys do not change within a round, so only a launch unsorts them, and sorting
    /// `order` is then sorting the round's NodeClaims after them.
    existing_sorted: bool,
    /// The NodeClaim that changed since `order` was last sorted, when only one did: the
    /// sort then moves it alone.
    moved: Option<usize>,
    /// Each pool's place among the pools by name: a launched node is named after its pool.
    name_rank: Vec<u32>,
    /// Whether Karpenter would have sorted `order` since it last changed: a pod was tried
    /// again on a copied refusal ([`Refusals`]), where `add` sorts the NodeClaims.
    sort_due: bool,
    /// The NodeClaims in the order they were made or took a pod, one entry each time.
    changes: Vec<usize>,
    /// Per (workload, relaxation step), the pools its requirements and tolerations leave
    /// its pods.
    pools_for: fnv::FnvHashMap<(usize, usize), std::rc::Rc<PoolsFor>>,
    /// The same per (requirements, tolerations, `PreferNoSchedule` tolerated), by
    /// [`alike_hash`]: the many workloads that select and tolerate alike share one, which
    /// outlives their pods' turn in the queue.
    pools_alike: fnv::FnvHashMap<u64, Vec<PoolsAlike>>,
    /// Per (workload, relaxation step) whose refusals by a NodeClaim hold until the
    /// NodeClaim changes, how long `changes` was when the NodeClaims not known to refuse
    /// its pod were listed, and that list. Such a pod is one no topology group concerns
    /// (`can_add` then depends on the NodeClaim alone), or one that owns a hostname group
    /// that may refuse a NodeClaim on its count ([`Topology::host_refuses`]: a count only
    /// grows in a batch). A pool the pod cannot join stays so. So a NodeClaim that refused
    /// is asked again only once it changed: the replicas of a workload ask each NodeClaim
    /// once between its changes, not once per replica.
    open: fnv::FnvHashMap<(usize, usize), (usize, Vec<usize>)>,
    /// Whether some topology term of the batch makes a group ([`Topology::makes_group`]):
    /// if none does, the topology counts nothing, and neither settling launched nodes nor
    /// recording pods on their labels is of use.
    topology_counts: bool,
    /// Per pool, its NodeClaims in the order they were made.
    claims_of: Vec<Vec<usize>>,
    /// Per pool, what is left of its limits.
    remaining: Vec<ResourceList>,
    /// Per pool, which of its types are within what is left of its limits, and whether
    /// some usable one is, once asked (reset when a NodeClaim spends them): pods that keep
    /// failing on a spent pool do not scan its types again.
    within_remaining: Vec<Option<(Box<[bool]>, bool)>>,
    /// Per pool, how many times the types within what is left of its limits changed
    /// ([`Batch::limits_changed`]): a NodeClaim that spends a little of large limits leaves
    /// them as they were.
    narrowed: Vec<u32>,
    /// Per pool, how many NodeClaims have spent its limits.
    spent: Vec<u32>,
    /// The pools a new NodeClaim may be made in, in order: their gate passes
    /// ([`Simulator::gate`]) and what is left of their limits holds some usable type
    /// ([`Batch::within_remaining`]). Every other pool refuses whatever the pod, and its
    /// refusal matters only to the pod's error ([`Batch::untried_refusal`]).
    open_pools: Vec<u32>,
    /// Per pool, whether it is among `open_pools`.
    is_open_pool: Vec<bool>,
    /// Per (workload, relaxation step), what each pool of [`PoolsFor::staged`] is known to
    /// decide of a new NodeClaim for its pods, with the pool's `spent` then: everything but
    /// topology depends on what is left of the pool's limits alone.
    refused_new: fnv::FnvHashMap<(usize, usize), PoolsKnown>,
    memo: OutcomeMemo,
    /// Per (pool, [`Shapes`] id), what the pool's types within its limits hold at most for
    /// pods of that shape ([`TypeBound`]), with the pool's `narrowed` then: the bound
    /// depends on nothing else that the batch changes.
    bounds: fnv::FnvHashMap<(usize, u32), (u32, Option<TypeBound>)>,
    shapes: Shapes,
    /// The refusals a pod may take again without a try.
    refusals: Refusals,
    launch_order: LaunchOrder,
    /// Per workload, its meant pool's last refusal ([`Solved::meant`]).
    meant: Vec<Option<Failure>>,
}

impl<'s, 'a, 'c> Batch<'s, 'a, 'c> {
    /// An empty batch over `workloads`: `NewTopology` → `Update` of every pod as written.
    fn new(sim: &'s Simulator<'a, 'c>, workloads: &[PendingWorkload]) -> Self {
        let (topology, owned) = fresh_topology(sim, workloads);
        let topology_counts = workloads.iter().any(|w| {
            let mut terms = w.steps.iter().flat_map(|s| &s.terms).chain(&w.inverse);
            terms.any(|t| topology.makes_group(sim, t))
        });
        let mut batch = Batch {
            sim,
            topology_counts,
            claims_of: vec![Vec::new(); sim.pools.len()],
            topology,
            owned,
            claims: Vec::new(),
            pool_of: Vec::new(),
            rooms: Rooms::new(sim.pools.len()),
            order: Vec::new(),
            position: Vec::new(),
            sorted: true,
            existing_sorted: true,
            moved: None,
            sort_due: false,
            name_rank: name_ranks(sim),
            changes: Vec::new(),
            pools_for: fnv::FnvHashMap::default(),
            pools_alike: fnv::FnvHashMap::default(),
            open: fnv::FnvHashMap::default(),
            remaining: sim.pools.iter().map(|p| p.limits.clone()).collect(),
            within_remaining: vec![None; sim.pools.len()],
            narrowed: vec![0; sim.pools.len()],
            spent: vec![0; sim.pools.len()],
            open_pools: Vec::new(),
            is_open_pool: vec![false; sim.pools.len()],
            refused_new: fnv::FnvHashMap::default(),
            memo: OutcomeMemo::default(),
            bounds: fnv::FnvHashMap::default(),
            shapes: Shapes::default(),
            refusals: Refusals::default(),
            launch_order: LaunchOrder::new(
                sim.pools.first().map_or(&[], |p| p.catalog()),
                sim.price_region(),
                sim.zones().len(),
            ),
            meant: vec![None; workloads.len()],
        };
        for i in 0..sim.pools.len() {
            batch.limits_changed(i);
        }
        batch
    }

    /// One provisioning round over the pods of `queue`: each is tried in turn, and a pod
    /// that made no progress is tried again only while the batch makes progress
    /// (Karpenter's `Queue` remembers its length when the pod was pushed back). The pods
    /// left Pending stay in `queue`; how many were placed.
    fn round(
        &mut self,
        workloads: &[PendingWorkload],
        queue: &mut std::collections::VecDeque<(usize, usize)>,
        out: &mut [Vec<PodOutcome>],
        round: u32,
    ) -> usize {
        let mut least = [i128::MAX; HEADROOM.len()];
        for &(w, _) in queue.iter() {
            for (least, room) in least.iter_mut().zip(workloads[w].room) {
                *least = (*least).min(room);
            }
        }
        self.rooms.start_round(least, &self.claims_of);
        let mut pushed_at = fnv::FnvHashMap::default();
        let mut placed = 0;
        while let Some(&(w, r)) = queue.front() {
            if pushed_at.get(&(w, r)) == Some(&queue.len()) {
                break;
            }
            queue.pop_front();
            let tried = match self.refusals.unchanged(w) {
                Some(shown) => {
                    // Karpenter tries the pod again, and `add` sorts the NodeClaims: what
                    // that sort decides is the order they launch in, should the round end.
                    self.sort_due = !self.sorted;
                    Err(shown)
                }
                None => self.try_and_remember(w, &workloads[w]),
            };
            match tried {
                Ok(pool) => {
                    out[w][r] = PodOutcome::Scheduled {
                        pool,
                        round,
                        waited: None,
                    };
                    placed += 1;
                }
                Err(first) => {
                    out[w][r] = PodOutcome::Pending(first.map(|b| *b), None);
                    queue.push_back((w, r));
                    pushed_at.insert((w, r), queue.len());
                }
            }
            // A workload's pods come one after another in the queue: what the batch learnt
            // of them is of no use once the next pod is another's (a large batch would
            // otherwise keep a verdict per pool for every workload).
            if queue.front().is_none_or(|&(next, _)| next != w) {
                self.forget(w, workloads[w].steps.len());
            }
        }
        self.words_of_copied(workloads, queue, out);
        placed
    }

    /// [`Batch::try_schedule`], remembering a refusal that only new NodeClaims and limits
    /// given back can change ([`Refusals`]).
    fn try_and_remember(&mut self, w: usize, pod: &PendingWorkload) -> Result<usize, Shown> {
        let tried = self.try_schedule(w, pod);
        match &tried {
            Ok(_) => self.refusals.placed(w),
            Err(shown) if self.topology_free(w, pod) => {
                let reach = (!self.refusals.knows(w)).then(|| self.reach(w, pod));
                self.refusals.refused(w, reach, shown);
            }
            Err(_) => {}
        }
        tried
    }

    /// Whether no topology group concerns the pods of workload `w`: none of its own terms,
    /// and no other pod's anti-affinity selects it.
    fn topology_free(&self, w: usize, pod: &PendingWorkload) -> bool {
        pod.inverse.is_empty()
            && pod.steps.iter().all(|s| s.terms.is_empty())
            && !self.topology.inversely_selected(w)
    }

    /// The pools whose NodeClaims a pod of workload `w` may join at some relaxation step.
    fn reach(&mut self, w: usize, pod: &PendingWorkload) -> Box<[u32]> {
        let mut reach = vec![false; self.sim.pools.len()];
        for (k, step) in pod.steps.iter().enumerate() {
            let pools = self.pools_for((w, k), pod, step);
            for (any, &j) in reach.iter_mut().zip(pools.joinable.iter()) {
                *any |= j;
            }
        }
        (reach.iter().enumerate())
            .filter(|(_, j)| **j)
            .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
            .collect()
    }

    /// The end of a round, when no pod is placed any more: each workload a refusal was
    /// copied to is tried once again, for the failure its error shows now, which its
    /// Pending pods take. Nothing that may take it happened since it was refused, so it is
    /// refused again ([`Refusals`]).
    fn words_of_copied(
        &mut self,
        workloads: &[PendingWorkload],
        queue: &mut std::collections::VecDeque<(usize, usize)>,
        out: &mut [Vec<PodOutcome>],
    ) {
        for w in self.refusals.take_copied() {
            let tried = self.try_and_remember(w, &workloads[w]);
            self.forget(w, workloads[w].steps.len());
            match tried {
                Err(first) => {
                    for pod in out[w].iter_mut() {
                        if let PodOutcome::Pending(shown, _) = pod {
                            shown.clone_from(&first.as_deref().cloned());
                        }
                    }
                }
                // Cannot happen (see `Refusals`); should it, the pod placed leaves the queue.
                Ok(pool) => {
                    debug_assert!(false, "a copied refusal of workload {w} did not hold");
                    if let Some(at) = queue.iter().position(|&(q, _)| q == w) {
                        let (_, r) = queue.remove(at).unwrap_or((w, 0));
                        out[w][r] = PodOutcome::Scheduled {
                            pool,
                            round: 0,
                            waited: None,
                        };
                    }
                }
            }
        }
    }

    /// The end of a round: every NodeClaim planned in it launches the cheapest of the
    /// instance types still open to it ([`LaunchOrder`]), as the AWS provider's fleet
    /// request does, in the first zone open to it, as spot when it allows spot, and stays as
    /// a node of that type with its pods. From the next round on it is an existing node
    /// (`NewExistingNode`): its requirements are its labels, one value each where the
    /// launch fixed one (type, zone, capacity type), and `ExistingNode.CanAdd` checks no
    /// `minValues`. The next round's topology counts its pods in the domains it has
    /// (`countDomains` over the cluster's pods), and each pool's limits are charged with the
    /// capacity of the nodes it really launched, not the largest type each NodeClaim might
    /// have become (`subtractMax`), as the next round's `NewScheduler` reads the NodePool's
    /// status. A node runs the DaemonSets its labels admit ([`Batch::run_daemons`]).
    /// Whether another round may place a pod now Pending: some pool got limits back, a
    /// node dropped a `minValues` its NodeClaim had, runs fewer DaemonSets than its
    /// NodeClaim counted, or a node's zone became known to a group on zones.
    fn launch(&mut self, workloads: &[PendingWorkload]) -> bool {
        let mut zone_settled = false;
        let mut min_values_dropped = false;
        let mut daemons_dropped = false;
        let mut seq = u32::try_from(self.claims.iter().filter(|c| c.launched.is_some()).count())
            .unwrap_or(u32::MAX);
        // In the order `add` last sorted them, as `Solve` returns them.
        if self.sort_due {
            self.sort_claims();
        }
        for i in 0..self.order.len() {
            let c = self.order[i];
            if self.claims[c].launched.is_some() {
                continue;
            }
            let cheapest = self.launched_type(&self.claims[c]);
            let zones = self.claims[c].requirements.get_or_exists(LABEL_ZONE);
            let zone = match zones.values().len() {
                1 if !zones.is_complement() => None,
                _ => self.topology.first_domain(self.sim, LABEL_ZONE, &zones),
            };
            let claim = &mut self.claims[c];
            let capacity_type = if claim.allows_spot() {
                "spot"
            } else {
                "on-demand"
            };
            if let Some(t) = cheapest {
                claim.types = vec![u32::try_from(t.catalog_index()).unwrap_or(u32::MAX)];
                claim.requirements.add(Requirement::in_values(
                    "node.kubernetes.io/instance-type",
                    [t.it.name.as_str()],
                ));
            }
            if let Some(zone) = zone {
                claim
                    .requirements
                    .add(Requirement::in_values(LABEL_ZONE, [zone]));
                zone_settled = true;
            }
            claim
                .requirements
                .add(Requirement::in_values(LABEL_CAPACITY_TYPE, [capacity_type]));
            if claim.requirements.has_min_values() {
                claim.requirements = (claim.requirements.iter())
                    .map(|r| r.clone().with_min_values(None))
                    .collect();
                min_values_dropped = true;
                self.refusals.event(claim.pool);
                self.changes.push(c);
            }
            let pool = &self.sim.pools[claim.pool];
            launched::resolve_custom_labels(&mut claim.requirements, pool.flavor);
            if Self::run_daemons(self.sim, claim, cheapest) {
                daemons_dropped = true;
                self.refusals.event(claim.pool);
            }
            claim.launched = Some(seq);
            seq += 1;
            let (pool, headroom) = (claim.pool, claim.headroom(self.sim));
            self.rooms.set(c, pool, headroom);
        }
        // Existing nodes come first in the next round's order.
        self.sorted = false;
        self.existing_sorted = false;
        self.moved = None;
        zone_settled &= self.topology.uses_key(LABEL_ZONE);
        // The launched NodeClaims narrow, and the next round counts afresh.
        self.open.clear();
        let freed = self.settle_topology(workloads);
        self.charge_launched() || zone_settled || min_values_dropped || daemons_dropped || freed
    }

    /// The DaemonSets of the node `claim` launches as type `t` ([`Simulator::daemons_on_node`]
    /// on its labels) join its pods' requests and host ports. Whether they ask less than
    /// its NodeClaim counted on `t` for the pool's template, so that a pod refused may fit
    /// now: a custom label its NodeClaim only asked to exist took a value some DaemonSet
    /// does not select.
    fn run_daemons(sim: &Simulator, claim: &mut Claim, t: Option<PoolType>) -> bool {
        let labels = launched::node_labels(&claim.requirements, t.map(|t| t.requirements));
        let (requests, ports) = sim.daemons_on_node(claim.pool, &labels);
        let counted = t.map(|t| sim.daemons_on_type(claim.pool, t.requirements));
        let fewer = counted.is_some_and(|(r, p)| {
            r.iter().any(|(k, q)| q > requests.get_or_zero(k))
                || p.iter().any(|taken| !ports.contains(taken))
        });
        claim.requests.add(&requests);
        claim.ports.extend(ports);
        fewer
    }

    /// The next round's topology: every group made afresh, counting the pods on the
    /// launched nodes. A batch none of whose topology terms makes a group has nothing to
    /// count. Whether the recount frees a domain ([`Topology::frees_domains`]).
    fn settle_topology(&mut self, workloads: &[PendingWorkload]) -> bool {
        if !self.topology_counts {
            return false;
        }
        let (mut topology, owned) = fresh_topology(self.sim, workloads);
        for claim in &self.claims {
            let pool = &self.sim.pools[claim.pool];
            topology.settle(topology::Settled {
                workloads: claim.workloads.clone(),
                requirements: self.node_labels(claim),
                hostname: claim.hostname.clone(),
                taints: pool.taints.iter().map(|(t, _)| t.clone()).collect(),
            });
        }
        let freed = topology.frees_domains(&self.topology);
        self.topology = topology;
        self.owned = owned;
        freed
    }

    /// The labels of the node NodeClaim `c` launched as ([`launched::node_labels`]).
    fn node_labels(&self, c: &Claim) -> Requirements {
        launched::node_labels(
            &c.requirements,
            self.launched_type(c).map(|t| t.requirements),
        )
    }

    /// The type NodeClaim `c` launches: the cheapest still open to it ([`LaunchOrder`]), at
    /// the price of its capacity type, among its types that are not exotic when some are
    /// not and it has no `minValues` (the provider's `ExoticInstanceTypeFilter`).
    fn launched_type(&self, c: &Claim) -> Option<PoolType<'s, 'c>> {
        let sim: &'s Simulator<'a, 'c> = self.sim;
        let pool = &sim.pools[c.pool];
        let capacity_type = if c.allows_spot() { "spot" } else { "on-demand" };
        let types = || c.types.iter().map(|&i| pool.type_at(i as usize));
        let has_min_values = c.requirements.has_min_values();
        let generic = || types().filter(|t| !is_exotic(t));
        if !has_min_values && generic().next().is_some() {
            return (self.launch_order).cheapest(pool, capacity_type, generic());
        }
        (self.launch_order).cheapest(pool, capacity_type, types())
    }

    /// The NodeClaims with a pod, as the nodes they launch: each the cheapest type still open
    /// to it, as spot when it allows spot.
    fn nodes(&self) -> Vec<LaunchedNode> {
        (self.claims.iter())
            .filter(|c| !c.workloads.is_empty())
            .map(|c| {
                let launched = self.launched_type(c);
                let pool = &self.sim.pools[c.pool];
                LaunchedNode {
                    pool: c.pool,
                    instance_type: launched.map(|t| t.it.name.to_string()),
                    spot: c.allows_spot(),
                    overlay_price: launched
                        .and_then(|t| self.launch_order.overlay_price(pool, "on-demand", &t)),
                    workloads: c.workloads.clone(),
                }
            })
            .collect()
    }

    /// Each limited pool's limits, less the capacity of the nodes it launched; whether some
    /// pool got limits back.
    fn charge_launched(&mut self) -> bool {
        let mut gave_back = false;
        for (i, pool) in self.sim.pools.iter().enumerate() {
            if pool.limits.is_empty() {
                continue;
            }
            let mut left = pool.limits.clone();
            for claim in self.claims_of[i].iter().map(|&c| &self.claims[c]) {
                let launched: Vec<PoolType> = claim
                    .types
                    .iter()
                    .map(|&t| pool.type_at(t as usize))
                    .collect();
                left = subtract_max(&left, &launched);
            }
            if left
                .iter()
                .any(|(k, q)| q > self.remaining[i].get_or_zero(k))
            {
                gave_back = true;
                self.remaining[i] = left;
                self.spent[i] += 1;
                self.limits_changed(i);
                self.refusals.event(i);
            }
        }
        gave_back
    }

    /// One pod of workload `w`: each relaxation step in turn, on a planned NodeClaim, else
    /// on a new one (`trySchedule` → `add`). Its pool, or the first failure of its last
    /// step that Karpenter's error shows ([`PodOutcome::Pending`]).
    fn try_schedule(&mut self, w: usize, pod: &PendingWorkload) -> Result<usize, Shown> {
        let mut last = None;
        for (k, step) in pod.steps.iter().enumerate() {
            let owned = match self.owned.get(&(w, k)) {
                Some(owned) => owned.clone(),
                None => {
                    let owned = self
                        .topology
                        .update(self.sim, &step.terms, &step.tolerations);
                    self.owned.insert((w, k), owned.clone());
                    owned
                }
            };
            if let Some(pool) = self.add_to_inflight((w, k), pod, step, &owned) {
                return Ok(pool);
            }
            match self.add_to_new((w, k), pod, step, &owned) {
                Ok(pool) => return Ok(pool),
                Err(first) => last = first,
            }
        }
        Err(last)
    }

    /// `addToInflightNode`: the first planned NodeClaim, fewest pods first, that takes the
    /// pod.
    fn add_to_inflight(
        &mut self,
        (w, k): (usize, usize),
        pod: &PendingWorkload,
        step: &Step,
        owned: &[usize],
    ) -> Option<usize> {
        self.sort_claims();
        let pools = self.pools_for((w, k), pod, step);
        let joinable = &pools.joinable;
        if !joinable.contains(&true) {
            return None;
        }
        // A pod no topology group concerns is refused by a NodeClaim for as long as the
        // NodeClaim stays as it is; a hostname group's count only grows.
        let remembered = owned.is_empty() && !self.topology.inversely_selected(w);
        if remembered || self.topology.host_may_refuse(owned) {
            return self.add_to_open((w, k), pod, step, (owned, remembered), joinable);
        }
        for c in self.claims_with_room(joinable, pod) {
            if let Some(joining) = self.can_add(c, w, pod, step, owned) {
                return Some(self.join(c, w, pod, joining));
            }
        }
        None
    }

    /// [`Batch::add_to_inflight`] for a pod whose refusals hold until the NodeClaim changes
    /// ([`Batch::open`]): only the NodeClaims still open to it and those changed since are
    /// asked, in `order`.
    fn add_to_open(
        &mut self,
        (w, k): (usize, usize),
        pod: &PendingWorkload,
        step: &Step,
        (owned, lasting): (&[usize], bool),
        joinable: &[bool],
    ) -> Option<usize> {
        let mark = self.changes.len();
        let mut open = match self.open.remove(&(w, k)) {
            Some((since, open)) => self.with_changed(open, since),
            None => self.claims_with_room(joinable, pod),
        };
        // The list is compacted in place: the first `kept` of the `asked` so far stay open.
        let (mut kept, mut asked) = (0, 0);
        let mut joined = None;
        while let Some(&c) = open.get(asked) {
            asked += 1;
            // A NodeClaim out of room is refused at once by `can_add` and stays listed:
            // only a refusal on the hostname's count, which only grows, drops it for good.
            if !joinable[self.pool_of[c] as usize]
                || (self.has_room_for(c, pod)
                    && self
                        .topology
                        .host_refuses(w, owned, &self.claims[c].hostname))
            {
                continue;
            }
            let joining = self.can_add(c, w, pod, step, owned);
            if joining.is_some() || !lasting {
                open[kept] = c;
                kept += 1;
            }
            if let Some(joining) = joining {
                joined = Some(self.join(c, w, pod, joining));
                break;
            }
        }
        open.drain(kept..asked);
        self.open.insert((w, k), (mark, open));
        joined
    }

    /// The NodeClaims of the pools in `joinable` with room for a pod of `pod`
    /// ([`Batch::has_room_for`]), in `order`: `can_add` refuses the others at once, and goes
    /// on refusing them until they change.
    fn claims_with_room(&mut self, joinable: &[bool], pod: &PendingWorkload) -> Vec<usize> {
        let mut claims = self.rooms.with_room(joinable, &pod.room);
        claims.sort_unstable_by_key(|&c| self.position[c]);
        #[cfg(debug_assertions)]
        {
            let mut all: Vec<usize> = (0..self.claims.len())
                .filter(|&c| joinable[self.pool_of[c] as usize] && self.has_room_for(c, pod))
                .collect();
            all.sort_unstable_by_key(|&c| self.position[c]);
            debug_assert_eq!(claims, all, "the NodeClaims with room");
        }
        claims
    }

    /// `open`, a list of NodeClaims in `order` as it was when `changes` was `since` long,
    /// with the NodeClaims changed since, in `order` as it is. Sorting by pod count moves
    /// only the NodeClaims that changed: the others keep their order among themselves, so
    /// the list is two sorted runs, which a stable sort merges in one pass.
    fn with_changed(&self, mut open: Vec<usize>, since: usize) -> Vec<usize> {
        let changes = &self.changes[since..];
        if changes.is_empty() {
            return open;
        }
        let mut changed = changes.to_vec();
        changed.sort_unstable();
        changed.dedup();
        open.retain(|c| changed.binary_search(c).is_err());
        changed.sort_unstable_by_key(|&c| self.position[c]);
        open.extend_from_slice(&changed);
        open.sort_by_key(|&c| self.position[c]);
        open
    }

    /// The order `add` tries nodes in: the existing nodes first (`addToExistingNode`, in
    /// the order `NewScheduler` sorts them, by name: a launched node is named after its
    /// NodePool, then in launch order), then the NodeClaims of this round, which `add`
    /// sorts in place by their pod count each time with Go's `sort.Slice`
    /// ([`gosort::slice`]). That sort is not stable beyond 12 NodeClaims: NodeClaims of
    /// equal count come out in the order it leaves them, and that order decides which
    /// NodeClaim a pod joins.
    fn sort_claims(&mut self) {
        if self.sorted {
            return;
        }
        match self.moved.take() {
            Some(c) if self.moves_as_stable(c) => self.move_claim(c),
            _ => {
                // The full sort this stands for, to check against in tests.
                #[cfg(debug_assertions)]
                let expected = self.sorted_order(self.order.clone());
                let from = if self.existing_sorted {
                    let claims = &self.claims;
                    let round = (self.order).partition_point(|&c| claims[c].launched.is_some());
                    sort_round(claims, &mut self.order[round..]);
                    round
                } else {
                    let order = std::mem::take(&mut self.order);
                    self.order = self.sorted_order(order);
                    self.existing_sorted = true;
                    0
                };
                self.position.resize(self.claims.len(), 0);
                for (i, &c) in self.order.iter().enumerate().skip(from) {
                    self.position[c] = i;
                }
                #[cfg(debug_assertions)]
                debug_assert_eq!(self.order, expected, "sorting the round's NodeClaims");
            }
        }
        self.sorted = true;
        self.sort_due = false;
    }

    /// `order` as `add` leaves it: the existing nodes by (pool name, launch)
    /// (`sort.SliceStable`), then the round's NodeClaims as `sort.Slice` leaves them by
    /// pod count.
    fn sorted_order(&self, mut order: Vec<usize>) -> Vec<usize> {
        order.sort_by_key(|&c| {
            self.claims[c]
                .launched
                .map_or(u64::MAX, |_| self.sort_key(c))
        });
        let round = order.partition_point(|&c| self.claims[c].launched.is_some());
        sort_round(&self.claims, &mut order[round..]);
        order
    }

    /// Whether `sort.Slice` puts NodeClaim `c`, which alone changed since the last sort
    /// (it took a pod, or was made and put last), where a stable sort would: up to 12
    /// NodeClaims it is an insertion sort; from 50, when its pivot sees the NodeClaims in
    /// order, its partial insertion sort moves `c` alone. An existing node's place does not
    /// depend on its pods.
    fn moves_as_stable(&self, c: usize) -> bool {
        if self.claims[c].launched.is_some() {
            return true;
        }
        let claims = &self.claims;
        let round = (self.order).partition_point(|&o| claims[o].launched.is_some());
        let segment = &self.order[round..];
        let pods = |c: &usize| claims[*c].workloads.len();
        segment.len() <= 12
            || (segment.len() >= 50
                && gosort::pivot_sees_increasing(segment, |a, b| pods(a) < pods(b)))
    }

    /// NodeClaim `c`'s key in [`Batch::sort_claims`]: the existing nodes by (pool name,
    /// launch), then the round's NodeClaims by pod count.
    fn sort_key(&self, c: usize) -> u64 {
        let claim = &self.claims[c];
        match claim.launched {
            Some(seq) => u64::from(self.name_rank[claim.pool]) << 32 | u64::from(seq),
            None => 1 << 63 | claim.workloads.len() as u64,
        }
    }

    /// The stable sort of `order` when NodeClaim `c` alone changed since the last one (it
    /// took a pod, or was made and put last): `c` goes among the NodeClaims of its new key,
    /// before those it preceded and after those it followed.
    fn move_claim(&mut self, c: usize) {
        // A NodeClaim just made has no place yet: it was put last.
        let from = match self.position.get(c) {
            Some(&at) => at,
            None => {
                self.position.resize(self.claims.len(), 0);
                self.order.len() - 1
            }
        };
        // The full sort this stands for, to check against in tests.
        #[cfg(debug_assertions)]
        let expected = self.sorted_order(self.order.clone());
        self.order.remove(from);
        let key = self.sort_key(c);
        let below = self.order.partition_point(|&o| self.sort_key(o) < key);
        let up_to = self.order.partition_point(|&o| self.sort_key(o) <= key);
        let to = from.clamp(below, up_to);
        self.order.insert(to, c);
        for i in from.min(to)..=from.max(to) {
            self.position[self.order[i]] = i;
        }
        #[cfg(debug_assertions)]
        debug_assert_eq!(self.order, expected, "moving NodeClaim {c}");
    }

    /// The pools the requirements and tolerations of workload `w`'s pods at relaxation step
    /// `k` leave them ([`PoolsFor`]).
    fn pools_for(
        &mut self,
        (w, k): (usize, usize),
        pod: &PendingWorkload,
        step: &Step,
    ) -> std::rc::Rc<PoolsFor> {
        let sim = self.sim;
        let alike = &mut self.pools_alike;
        let pools = self.pools_for.entry((w, k)).or_insert_with(|| {
            let pns = step.attempt.tolerates_prefer_no_schedule;
            let (reqs, tolerations) = (&step.attempt.requirements, &pod.tolerations);
            let bucket = alike.entry(alike_hash(reqs, tolerations, pns)).or_default();
            let same = |(r, t, p, _): &&PoolsAlike| *p == pns && r == reqs && t == tolerations;
            if let Some((.., pools)) = bucket.iter().find(same) {
                return pools.clone();
            }
            let tolerated = |p: &Pool| !sim::any_untolerated(tolerations, &p.taints, pns);
            let joinable = (sim.pools.iter())
                .map(|p| tolerated(p) && p.requirements.may_intersect_ok(reqs))
                .collect();
            let staged: Box<[u32]> = (0..sim.pools.len())
                .filter(|&i| sim.claim_stages_pass(i, &step.attempt, tolerations))
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect();
            let mut staged_at = vec![u32::MAX; sim.pools.len()].into_boxed_slice();
            for (at, &i) in (0..).zip(&staged) {
                staged_at[i as usize] = at;
            }
            let pools = std::rc::Rc::new(PoolsFor {
                joinable,
                staged,
                staged_at,
            });
            bucket.push((reqs.clone(), tolerations.clone(), pns, pools.clone()));
            pools
        });
        pools.clone()
    }

    /// Drops what was learnt of workload `w`'s pods at each of its `steps`. The pools their
    /// requirements and tolerations leave them are kept: they hold whatever the batch does,
    /// and alike workloads share them.
    fn forget(&mut self, w: usize, steps: usize) {
        for k in 0..steps {
            self.refused_new.remove(&(w, k));
            self.open.remove(&(w, k));
            self.shapes.of.remove(&(w, k));
        }
    }

    /// `NodeClaim.Add`: the pod joins NodeClaim `c`, which narrows as [`Batch::can_add`]
    /// found; its pool.
    fn join(&mut self, c: usize, w: usize, pod: &PendingWorkload, joining: Joining) -> usize {
        let Joining {
            requirements,
            types,
            headroom,
        } = joining;
        let claim = &self.claims[c];
        let pool = &self.sim.pools[claim.pool];
        // A label the NodeClaim had no requirement on may now take a pod it refused as
        // undefined (`Compatible`: "label %q does not have known values").
        if requirements.keys().any(|k| !claim.requirements.has(k)) {
            self.refusals.event(claim.pool);
        }
        let taints = pool.taints.iter().map(|(t, _)| t);
        // A node launched in an earlier round records the pod on its labels and the pod's
        // requirements (`ExistingNode.Add`), a NodeClaim on its requirements. Working out
        // the labels is of no use when no group counts.
        if claim.launched.is_some() && self.topology_counts {
            let mut labels = self.node_labels(claim);
            labels.add_all(&requirements);
            (self.topology).add(w, &labels, &claim.hostname, taints, Compat::Labels);
        } else {
            let compat = Compat::Claim(pool.flavor);
            (self.topology).add(w, &requirements, &claim.hostname, taints, compat);
        }
        let claim = &mut self.claims[c];
        claim.requirements = requirements;
        claim.types = types;
        claim.types.shrink_to_fit();
        claim
            .requests
            .add(&self.sim.judged_requests(pool, &pod.requests.total));
        claim.ports.extend(pod.host_ports.iter().cloned());
        claim.workloads.push(w);
        let pool = claim.pool;
        self.rooms.set(c, pool, headroom);
        self.moved = self.sorted.then_some(c);
        self.sorted = false;
        self.changes.push(c);
        pool
    }

    /// Whether a pod of `pod` fits in what NodeClaim `c`'s roomiest types have left.
    fn has_room_for(&self, c: usize, pod: &PendingWorkload) -> bool {
        self.rooms.has(c, &pod.room)
    }

    /// `NodeClaim.CanAdd` on a planned NodeClaim: its taints, its requirements so far, the
    /// host ports on it, the domains topology leaves it, and the types that still fit every
    /// pod (with their `minValues`). The narrowed requirements and types when it takes the
    /// pod.
    fn can_add(
        &self,
        c: usize,
        w: usize,
        pod: &PendingWorkload,
        step: &Step,
        owned: &[usize],
    ) -> Option<Joining> {
        if !self.has_room_for(c, pod) {
            return None;
        }
        let claim = &self.claims[c];
        let attempt = &step.attempt;
        let pool = &self.sim.pools[claim.pool];
        let pns = attempt.tolerates_prefer_no_schedule;
        if self.topology.host_refuses(w, owned, &claim.hostname)
            || sim::any_untolerated(&pod.tolerations, &pool.taints, pns)
            || !claim
                .requirements
                .compatible_with_ok(&attempt.requirements, pool.flavor)
            || pod
                .host_ports
                .iter()
                .any(|p| claim.ports.iter().any(|on| p.matches(on)))
        {
            return None;
        }
        let mut requirements = claim.requirements.clone();
        requirements.add_all(&attempt.requirements);
        let topology = self
            .topology_requirements(w, step, owned, claim.pool, &requirements, &claim.hostname)
            .ok()?;
        let fits = topology_fits_ok(&requirements, &topology, pool.flavor);
        debug_assert_eq!(
            fits,
            topology_fits(&requirements, &topology, pool.flavor, &pod.requests).is_ok()
        );
        if !fits {
            return None;
        }
        requirements.add_all(&topology);
        if !self.sim.offered(claim.pool).allow(&[&requirements]) {
            return None;
        }
        let mut requests = claim.requests.clone();
        requests.add(&self.sim.judged_requests(pool, &pod.requests.total));
        let first = claim
            .types
            .first()
            .map(|&i| pool.type_at(i as usize).requirements);
        let query = |reqs| {
            first
                .filter(|_| !Requirements::is_empty(reqs))
                .map(|row| row.query(reqs))
        };
        let (pod_query, topology_query) = (query(&attempt.requirements), query(&topology));
        let fixed = claim.fixed_demand(self.sim, &requests);
        let mut headroom = [i128::MIN; HEADROOM.len()];
        let mut types = Vec::with_capacity(claim.types.len());
        for &i in &claim.types {
            let t = pool.type_at(i as usize);
            // The types already meet the NodeClaim's requirements, and a type's label has one
            // value: it meets the narrowed requirements when it meets the pod's.
            let room = pod_query.as_ref().is_none_or(|q| t.requirements.meets(q))
                && topology_query
                    .as_ref()
                    .is_none_or(|q| t.requirements.meets(q))
                && !claim.daemon_port_taken(self.sim, &t, &pod.host_ports);
            if !room {
                continue;
            }
            let left = with_demand(
                self.sim,
                claim.pool,
                fixed.as_ref(),
                &requests,
                &t,
                |a, d| a.left_after(d),
            );
            if let Some(left) = left {
                raise(&mut headroom, left);
                types.push(i);
            }
        }
        // A launched node checks no `minValues` (`ExistingNode.CanAdd`).
        let min_values_met = claim.launched.is_some() || !requirements.has_min_values() || {
            let kept: Vec<PoolType> = types.iter().map(|&i| pool.type_at(i as usize)).collect();
            sim::unmet_min_values(&requirements, &kept, self.sim.offered(claim.pool)).is_empty()
        };
        (!types.is_empty() && min_values_met).then_some(Joining {
            requirements,
            types,
            headroom,
        })
    }

    /// The domains topology leaves a NodeClaim of pool `pool` with `node` requirements
    /// (`Topology.AddRequirements`), none when no group concerns the workload.
    fn topology_requirements(
        &self,
        w: usize,
        step: &Step,
        owned: &[usize],
        pool: usize,
        node: &Requirements,
        hostname: &str,
    ) -> Result<Requirements, Box<topology::Refusal<'_>>> {
        if owned.is_empty() && !self.topology.inversely_selected(w) {
            return Ok(Requirements::new());
        }
        let pool = &self.sim.pools[pool];
        self.topology.add_requirements(
            w,
            owned,
            &step.attempt.strict,
            node,
            hostname,
            pool.taints.iter().map(|(t, _)| t),
            pool.flavor,
        )
    }

    /// `addToNewNodeClaim`: the first pool, by weight, whose limits leave a type and whose
    /// stages take the pod; its NodeClaim charges the largest capacity of its options.
    fn add_to_new(
        &mut self,
        (w, k): (usize, usize),
        pod: &PendingWorkload,
        step: &Step,
        owned: &[usize],
    ) -> Result<usize, Shown> {
        let remembered = owned.is_empty() && !self.topology.inversely_selected(w);
        let pools = self.pools_for((w, k), pod, step);
        let staged = &pools.staged;
        let mut refused = (self.refused_new.remove(&(w, k)))
            .filter(|known| known.len() == staged.len())
            .unwrap_or_else(|| vec![None; staged.len()]);
        // The first refusal Karpenter's error shows: pools it skipped are not in it.
        let mut first = None;
        let mut meant = None;
        let mut placed = None;
        let tried = self.tried_pools(&pools);
        // The pools before this one, which the pod is not tried on, were asked for `first`.
        let mut passed = 0;
        for &(at, i) in &tried {
            if first.is_none() {
                first = self.first_untried_refusal(passed..i, pod, step);
            }
            passed = i + 1;
            let entry = &mut refused[at];
            let spent = self.spent[i];
            // Pools after the first refusal matter only if they take the pod.
            let mut shown = |first: &mut Option<(usize, Failure)>, f: &Failure| {
                if f.skips_pool() {
                    return;
                }
                if first.is_none() {
                    *first = Some((i, f.clone()));
                }
                if pod.meant == Some(i) {
                    meant = Some(f.clone());
                }
            };
            let known = match entry {
                Some((at, known)) if *at == spent => known,
                _ => {
                    &mut entry
                        .insert((spent, self.learn(i, remembered, pod, step)))
                        .1
                }
            };
            match known {
                Known::Refuses(f) => {
                    shown(&mut first, f);
                    continue;
                }
                Known::Outsized => {
                    if first.is_none() || pod.meant == Some(i) {
                        shown(&mut first, &self.outsized(i, (w, k), pod, step));
                    }
                    continue;
                }
                // The meant pool's failure is what the finding names: topology may refuse
                // before its instance types do (`NodeClaim.CanAdd`).
                Known::RefusesWhateverTopology if first.is_some() && pod.meant != Some(i) => {
                    continue;
                }
                _ => {}
            }
            let bound = self.type_bound(i, (w, k), pod, step);
            // A pod too large for every type left, whose refusal no topology changes: its
            // failure is made only when the error shows it.
            if remembered
                && bound
                    .as_ref()
                    .is_some_and(|b| b.refuses(&pod.requests.total))
            {
                *known = Known::Outsized;
                if first.is_none() || pod.meant == Some(i) {
                    shown(&mut first, &self.outsized(i, (w, k), pod, step));
                }
                continue;
            }
            // The NodeClaim it would be: `hostname-placeholder-NNNN`, numbered in the batch.
            let hostname = format!("hostname-placeholder-{:04}", self.claims.len() + 1);
            match self.new_claim(i, w, pod, (step, owned, bound.as_ref()), &hostname) {
                Ok((types, requirements)) => {
                    self.open_claim(i, w, pod, (types, requirements), hostname);
                    placed = Some(i);
                    break;
                }
                Err(f) => {
                    shown(&mut first, &f);
                    if remembered {
                        *known = Known::Refuses(f);
                    }
                }
            }
        }
        self.refused_new.insert((w, k), refused);
        if let Some(pool) = placed {
            return Ok(pool);
        }
        if first.is_none() {
            first = self.first_untried_refusal(passed..self.sim.pools.len(), pod, step);
        }
        let untried = |m: &usize| tried.binary_search_by_key(m, |&(_, i)| i).is_err();
        if let Some(m) = pod.meant.filter(untried) {
            meant = (self.untried_refusal(m, pod, step)).filter(|f| !f.skips_pool());
        }
        self.meant[w] = meant;
        Err(first.map(Box::new))
    }

    /// The pools of `pools.staged` a new NodeClaim may be made in ([`Batch::open_pools`]), in
    /// order, each with its place in `staged`: the pools a pod is tried on. The shorter
    /// list is walked.
    fn tried_pools(&self, pools: &PoolsFor) -> Vec<(usize, usize)> {
        let staged = &pools.staged;
        if staged.len() <= self.open_pools.len() {
            let open = |(_, i): &(usize, &u32)| self.is_open_pool[**i as usize];
            (staged.iter().enumerate())
                .filter(open)
                .map(|(at, &i)| (at, i as usize))
                .collect()
        } else {
            (self.open_pools.iter())
                .filter(|&&i| pools.staged_at[i as usize] != u32::MAX)
                .map(|&i| (pools.staged_at[i as usize] as usize, i as usize))
                .collect()
        }
    }

    /// The first refusal Karpenter's error shows among the pools of `range`, none of which
    /// the pod is tried on ([`Batch::tried_pools`]): pools it skips are not in it.
    fn first_untried_refusal(
        &mut self,
        range: std::ops::Range<usize>,
        pod: &PendingWorkload,
        step: &Step,
    ) -> Option<(usize, Failure)> {
        range
            .filter_map(|i| Some((i, self.untried_refusal(i, pod, step)?)))
            .find(|(_, f)| !f.skips_pool())
    }

    /// The refusal of a new NodeClaim of pool `i`, which the pod is not tried on
    /// ([`Batch::tried_pools`]): its gate's, else its limits' when they leave none of its
    /// types, else its own stages' (`addToNewNodeClaim`'s order).
    fn untried_refusal(&mut self, i: usize, pod: &PendingWorkload, step: &Step) -> Option<Failure> {
        if let Some(gate) = self.sim.gate(i) {
            return Some(gate.clone());
        }
        if !self.within_remaining(i) {
            return Some(Failure::AllTypesExceedLimits);
        }
        let data = self.pod_data(i, pod, &step.attempt);
        self.sim.claim_stages(i, &data).err().map(|f| *f)
    }

    /// What pool `i`, which the pod is tried on ([`Batch::tried_pools`]), decides of a new
    /// NodeClaim for it while its limits stay as they are: when topology concerns the pod,
    /// whether any type is left before topology narrows the requirements.
    fn learn(&self, i: usize, remembered: bool, pod: &PendingWorkload, step: &Step) -> Known {
        if remembered {
            return Known::PassesUntilTopology;
        }
        // Whether a type is left, not which: the first settles it.
        let data = PodData {
            exhaustive: false,
            ..self.pod_data(i, pod, &step.attempt)
        };
        match self.sim.instance_types(i, &data) {
            Ok(_) => Known::PassesUntilTopology,
            Err(_) => Known::RefusesWhateverTopology,
        }
    }

    /// A new NodeClaim of pool `i` for the pod, with the `types` and `requirements` its
    /// stages left: it spends the pool's limits (`subtractMax`).
    fn open_claim(
        &mut self,
        i: usize,
        w: usize,
        pod: &PendingWorkload,
        (types, requirements): (Vec<PoolType>, Requirements),
        hostname: String,
    ) {
        let pool = &self.sim.pools[i];
        self.remaining[i] = subtract_max(&self.remaining[i], &types);
        self.spent[i] += 1;
        self.limits_changed(i);
        self.refusals.event(i);
        let requests = self.sim.judged_requests(pool, &pod.requests.total);
        let taints = pool.taints.iter().map(|(t, _)| t);
        let compat = Compat::Claim(pool.flavor);
        (self.topology).add(w, &requirements, &hostname, taints, compat);
        let mut claim = Claim::new(i, requirements, &types, requests, hostname);
        claim.ports = pod.host_ports.clone();
        claim.workloads.push(w);
        self.order.push(self.claims.len());
        self.claims_of[i].push(self.claims.len());
        self.moved = self.sorted.then_some(self.claims.len());
        self.sorted = false;
        self.changes.push(self.claims.len());
        self.pool_of.push(i as u32);
        self.rooms.made(i, claim.headroom(self.sim));
        self.claims.push(claim);
    }

    /// What is left of pool `i`'s limits changed (or is first known): the types within it
    /// are reckoned again, and whether a new NodeClaim may be made there
    /// ([`Batch::open_pools`]).
    fn limits_changed(&mut self, i: usize) {
        let before = self.within_remaining[i].take();
        let open = self.sim.gate(i).is_none() && self.within_remaining(i);
        let after = &self.within_remaining[i];
        if before.as_ref().map(|(mask, _)| mask) != after.as_ref().map(|(mask, _)| mask) {
            self.narrowed[i] += 1;
        }
        self.is_open_pool[i] = open;
        let id = u32::try_from(i).unwrap_or(u32::MAX);
        match (open, self.open_pools.binary_search(&id)) {
            (true, Err(at)) => self.open_pools.insert(at, id),
            (false, Ok(at)) => {
                self.open_pools.remove(at);
            }
            _ => {}
        }
    }

    /// Whether some usable type of pool `i` is within what is left of its limits; the types
    /// that are, reckoned once per change of its limits.
    fn within_remaining(&mut self, i: usize) -> bool {
        let pool = &self.sim.pools[i];
        let remaining = &self.remaining[i];
        self.within_remaining[i]
            .get_or_insert_with(|| {
                let mask = pool.within(remaining);
                let left = pool.limits.is_empty() || pool.some_usable_type(&mask);
                (mask, left)
            })
            .1
    }

    /// What pool `i`'s types within what is left of its limits hold at most for the pods
    /// of workload `w` at step `k` ([`TypeBound`]), reckoned once per change of the types
    /// within the pool's limits ([`Batch::narrowed`]) for all pods of the same shape.
    fn type_bound(
        &mut self,
        i: usize,
        (w, k): (usize, usize),
        pod: &PendingWorkload,
        step: &Step,
    ) -> Option<TypeBound> {
        let shape = self
            .shapes
            .id((w, k), &step.attempt.requirements, &pod.host_ports);
        let narrowed = self.narrowed[i];
        if let Some((at, bound)) = self.bounds.get(&(i, shape))
            && *at == narrowed
        {
            return bound.clone();
        }
        let bound = self
            .sim
            .type_bound(i, &self.pod_data(i, pod, &step.attempt));
        self.bounds.insert((i, shape), (narrowed, bound.clone()));
        bound
    }

    /// The failure of pool `i`'s types for the pods of workload `w` at step `k`, which its
    /// [`TypeBound`] refuses ([`Known::Outsized`]).
    fn outsized(
        &mut self,
        i: usize,
        (w, k): (usize, usize),
        pod: &PendingWorkload,
        step: &Step,
    ) -> Failure {
        let bound = self.type_bound(i, (w, k), pod, step);
        let data = PodData {
            bound: bound.as_ref(),
            ..self.pod_data(i, pod, &step.attempt)
        };
        let refused = self.sim.refused_by_bound(i, &data);
        // The bound refused with the pool's limits as they are, and is kept for them.
        debug_assert!(refused.is_some(), "pool {i} no longer refuses workload {w}");
        refused.map_or(Failure::AllTypesExceedLimits, |f| *f)
    }

    /// The pod as the simulator's stages read it, on a new NodeClaim of pool `i`: the
    /// types within what is left of its limits are those [`Batch::within_remaining`]
    /// reckoned last.
    fn pod_data<'d>(
        &'d self,
        i: usize,
        pod: &'d PendingWorkload,
        attempt: &'d Attempt,
    ) -> PodData<'d> {
        PodData {
            attempt,
            tolerations: &pod.tolerations,
            tolerations_span: None,
            requests: &pod.requests,
            host_ports: &pod.host_ports,
            exhaustive: true,
            within: self.within_remaining[i].as_ref().map(|(mask, _)| &mask[..]),
            bound: None,
            id: usize::MAX - 1,
            memo: &self.memo,
        }
    }

    /// Pool `i`'s verdict on a new NodeClaim for a pod its gate and stages passed:
    /// the domains topology leaves, between requirements and instance types
    /// (`tryVolumeAlternative`). The types that fit and the NodeClaim's requirements.
    fn new_claim(
        &self,
        i: usize,
        w: usize,
        pod: &PendingWorkload,
        (step, owned, bound): (&Step, &[usize], Option<&TypeBound>),
        hostname: &str,
    ) -> Result<(Vec<PoolType<'s, 'c>>, Requirements), Box<Failure>> {
        let pool = &self.sim.pools[i];
        let mut requirements = pool.requirements.clone();
        requirements.add_all(&step.attempt.requirements);
        let topology = self
            .topology_requirements(w, step, owned, i, &requirements, hostname)
            .map_err(|r| Box::new(r.failure()))?;
        if topology.is_empty() {
            let data = PodData {
                bound,
                ..self.pod_data(i, pod, &step.attempt)
            };
            return Ok((self.sim.instance_types(i, &data)?, requirements));
        }
        topology_fits(&requirements, &topology, pool.flavor, &pod.requests)?;
        requirements.add_all(&topology);
        let mut narrowed = Attempt::clone(&step.attempt);
        narrowed.requirements.add_all(&topology);
        let data = self.pod_data(i, pod, &narrowed);
        Ok((self.sim.instance_types(i, &data)?, requirements))
    }
}

/// The failure a pending pod's error starts with, and its pool ([`PodOutcome::Pending`]).
type Shown = Option<Box<(usize, Failure)>>;

/// Per pool of [`PoolsFor::staged`], what it is known to decide and its `spent` then.
type PoolsKnown = Vec<Option<(u32, Known)>>;

/// What a pool the pods of a (workload, relaxation step) are tried on
/// ([`Batch::tried_pools`]) is known to decide of a new NodeClaim for them, while its limits
/// stay as they were.
#[derive(Clone)]
enum Known {
    /// It refuses, with this failure: a new NodeClaim failed for a pod no topology group
    /// concerns.
    Refuses(Box<Failure>),
    /// No instance type is left even before topology narrows the requirements, so it
    /// refuses whatever domains topology leaves (with a failure that may depend on them).
    RefusesWhateverTopology,
    /// No type left within its limits holds the pod ([`TypeBound`]), whose refusal no
    /// topology group changes: the failure is made when an error shows it.
    Outsized,
    /// The rest is decided on each try (the instance types, or, when topology concerns the
    /// pod, the domains topology leaves them).
    PassesUntilTopology,
}

/// `sort.Slice` of the round's NodeClaims `round` (indices into `claims`) by pod count.
fn sort_round(claims: &[Claim], round: &mut [usize]) {
    let pods = |c: &usize| claims[*c].workloads.len();
    gosort::slice(round, |a, b| pods(a) < pods(b));
}

/// `NodeClaim.CanAdd` after `Topology.AddRequirements`: the NodeClaim's requirements must
/// be compatible with them with the domains added (an incompatible-requirements error
/// otherwise), and domains two groups leave disjoint fit no instance type (Karpenter's
/// requirement becomes `DoesNotExist`, and its error the "no instance type met …" one).
fn topology_fits(
    requirements: &Requirements,
    topology: &Requirements,
    flavor: super::requirements::LabelFlavor,
    requests: &Requests,
) -> Result<(), Box<Failure>> {
    let mut with = requirements.clone();
    with.add_all(topology);
    requirements
        .compatible_with(&with, flavor)
        .map_err(|e| Box::new(Failure::Requirements(e)))?;
    if topology
        .keys()
        .any(|k| with.get(k).is_some_and(|r| r.is_empty()))
    {
        return Err(Box::new(Failure::NoRequiredOffering {
            requirements: Requirements::new(),
            requests: requests.total.clone(),
        }));
    }
    Ok(())
}

/// Whether [`topology_fits`] passes, without building its failure. With no domain added,
/// the requirements are checked against themselves.
fn topology_fits_ok(
    requirements: &Requirements,
    topology: &Requirements,
    flavor: super::requirements::LabelFlavor,
) -> bool {
    if topology.is_empty() {
        return requirements.compatible_with_ok(requirements, flavor);
    }
    let mut with = requirements.clone();
    with.add_all(topology);
    requirements.compatible_with_ok(&with, flavor)
        && !(topology.keys()).any(|k| with.get(k).is_some_and(|r| r.is_empty()))
}

/// The pods' shapes as a pool's instance types weigh them: their node requirements at a
/// relaxation step and their host ports, each given a number once.
#[derive(Default)]
struct Shapes {
    /// Each shape by its hash, with its number.
    known: fnv::FnvHashMap<u64, Vec<(Requirements, Vec<HostPort>, u32)>>,
    /// Per (workload, relaxation step), its shape's number, while its pods are in turn.
    of: fnv::FnvHashMap<(usize, usize), u32>,
    count: u32,
}

impl Shapes {
    /// The number of the shape of (workload, step) `at`, with `requirements` and `ports`.
    fn id(&mut self, at: (usize, usize), requirements: &Requirements, ports: &[HostPort]) -> u32 {
        if let Some(&id) = self.of.get(&at) {
            return id;
        }
        let hash = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            (requirements, ports).hash(&mut h);
            h.finish()
        };
        let bucket = self.known.entry(hash).or_default();
        let id = match bucket
            .iter()
            .find(|(r, p, _)| r == requirements && p == ports)
        {
            Some(&(.., id)) => id,
            None => {
                self.count += 1;
                bucket.push((requirements.clone(), ports.to_vec(), self.count));
                self.count
            }
        };
        self.of.insert(at, id);
        id
    }
}

/// The order in which the AWS provider's fleet request prefers the instance types a
/// NodeClaim may launch: the cheapest on-demand price first (`lowest-price`; spot offerings
/// are priced like on-demand until live spot prices arrive, see `docs/prices.md`). A type
/// without a price comes after every priced one (the provider never launches it), the
/// smaller (by cpu, then memory) first; the name breaks ties.
struct LaunchOrder {
    /// The price of each catalog type, by catalog index.
    prices: Vec<Option<f64>>,
    /// How many zones the cluster has (0: unknown), each an offering a NodeOverlay may price.
    zones: usize,
}

impl LaunchOrder {
    /// The prices of the types of `catalog` in `region` (as the provider prices it), looked
    /// up once; the cluster has `zones` zones (0: unknown).
    fn new(catalog: &[super::catalog::InstanceType], region: &str, zones: usize) -> Self {
        let prices = super::prices::Prices::builtin();
        LaunchOrder {
            prices: (catalog.iter())
                .map(|it| prices.provider_on_demand(region, &it.name))
                .collect(),
            zones,
        }
    }

    /// The first of `types` of `pool` in this order, priced as `capacity_type`: the one the
    /// NodeClaim launches.
    fn cheapest<'p, 'c>(
        &self,
        pool: &Pool,
        capacity_type: &str,
        types: impl Iterator<Item = PoolType<'p, 'c>>,
    ) -> Option<PoolType<'p, 'c>> {
        types
            .map(|t| (self.price(pool, capacity_type, &t), t))
            .min_by(|(pa, a), (pb, b)| Self::cmp(*pa, a, *pb, b))
            .map(|(_, t)| t)
    }

    /// The price of type `t` of `pool` as `capacity_type`: the static on-demand price, as
    /// the pool's NodeOverlays change it.
    fn price(&self, pool: &Pool, capacity_type: &str, t: &PoolType) -> Option<f64> {
        let base = self.prices.get(t.catalog_index()).copied().flatten()?;
        Some(pool.overlay().map_or(base, |o| {
            o.price(t.catalog_index(), capacity_type, base, self.zones)
        }))
    }

    /// [`LaunchOrder::price`] when a NodeOverlay changes it.
    fn overlay_price(&self, pool: &Pool, capacity_type: &str, t: &PoolType) -> Option<f64> {
        let base = self.prices.get(t.catalog_index()).copied().flatten();
        self.price(pool, capacity_type, t)
            .filter(|p| Some(*p) != base)
    }

    fn cmp(pa: Option<f64>, a: &PoolType, pb: Option<f64>, b: &PoolType) -> std::cmp::Ordering {
        let size = |t: &PoolType| {
            (
                t.capacity_of("cpu").unwrap_or(Quantity::ZERO),
                t.capacity_of("memory").unwrap_or(Quantity::ZERO),
            )
        };
        let by_price = match (pa, pb) {
            (Some(x), Some(y)) => x.total_cmp(&y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => size(a).cmp(&size(b)),
        };
        by_price.then_with(|| a.it.name.cmp(&b.it.name))
    }
}

/// The resources that make a type exotic to the AWS provider's launch
/// (`ExoticInstanceTypeFilter`).
const EXOTIC_RESOURCES: [&str; 5] = [
    "aws.amazon.com/neuron",
    "aws.amazon.com/neuroncore",
    "amd.com/gpu",
    "nvidia.com/gpu",
    "habana.ai/gaudi",
];

/// `ExoticInstanceTypeFilter`'s test: a bare-metal size, or some GPU or accelerator.
fn is_exotic(t: &PoolType) -> bool {
    t.it.label("karpenter.k8s.aws/instance-size")
        .is_some_and(|size| size.contains("metal"))
        || EXOTIC_RESOURCES
            .iter()
            .any(|r| t.capacity_of(r).is_some_and(|q| q > Quantity::ZERO))
}

/// The catalog indices of `types`.
fn indices(types: &[PoolType]) -> Vec<u32> {
    types
        .iter()
        .map(|t| u32::try_from(t.catalog_index()).unwrap_or(u32::MAX))
        .collect()
}

/// `subtractMax`: `remaining` less, for each limited resource, the largest capacity among
/// `types` (the NodeClaim may launch any of them).
fn subtract_max(remaining: &ResourceList, types: &[PoolType]) -> ResourceList {
    let mut out = ResourceList::new();
    for (k, left) in remaining.iter() {
        let max = types
            .iter()
            .filter_map(|t| t.capacity_of(k))
            .max()
            .unwrap_or(Quantity::ZERO);
        // Below zero when a NodeClaim may launch more than was left, as in Karpenter.
        out.insert(
            k,
            Quantity::from_millis(left.as_millis().saturating_sub(max.as_millis())),
        );
    }
    out
}

#[cfg(test)]
mod tests;
