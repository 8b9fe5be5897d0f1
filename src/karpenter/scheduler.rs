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
//! The stages a pod goes through on a new NodeClaim are the simulator's own
//! ([`Simulator`]); this module adds what only a batch decides. Not modelled (see
//! `docs/karpenter-upstream.md`): existing nodes, topology spread and pod (anti-)affinity
//! other than a workload's required hostname anti-affinity against its own pods, volume
//! topology, offerings and reserved capacity.

use super::pod::{self, Attempt, HostPort, Requests};
use super::pool::PoolType;
use super::requirements::Requirements;
use super::sim::{self, Failure, OutcomeMemo, PodData, Simulator};
use super::taints::Toleration;
use crate::model::workload::PodSpec;
use crate::model::{Kind, Object};
use crate::quantity::{Quantity, ResourceList};

/// One workload's pending pods, as the scheduler reads them: owned, so the batch can run
/// once every file has been read and dropped.
#[derive(Debug, Clone)]
pub struct PendingWorkload {
    pub replicas: i64,
    /// The relaxation steps ([`Simulator::relaxations`]).
    attempts: Vec<Attempt>,
    tolerations: Vec<Toleration>,
    requests: Requests,
    host_ports: Vec<HostPort>,
    /// Required pod anti-affinity on `kubernetes.io/hostname` that selects the workload's
    /// own pods: at most one of them per node.
    one_per_node: bool,
}

impl PendingWorkload {
    /// The pods of `obj` as `sim` tries them, `None` when Karpenter does not provision for
    /// them (DaemonSets, `nodeName`) or ignores them (§2.3).
    pub fn new(
        sim: &Simulator,
        obj: &Object,
        spec: &PodSpec,
        replicas: i64,
    ) -> Option<PendingWorkload> {
        if obj.kind == Kind::DaemonSet || spec.node_name.is_some() {
            return None;
        }
        Some(PendingWorkload {
            replicas,
            attempts: sim.relaxations(pod::attempts(obj, spec).ok()?),
            tolerations: pod::tolerations(spec, sim.admission),
            requests: pod::requests(obj, spec),
            host_ports: pod::host_ports(spec),
            one_per_node: super::topology::self_anti_affinity_on_hostname(obj, spec),
        })
    }
}

/// Where one pod of the batch ends.
#[derive(Debug, Clone)]
pub enum PodOutcome {
    /// On a NodeClaim of pool `pool` (an index into [`Simulator::pools`]).
    Scheduled { pool: usize },
    /// The failure Karpenter's error starts with at the last relaxation step: the first
    /// pool it tried, in its order (pools it skipped before the batch are not in its error);
    /// `None` when it skipped them all. Only the first is kept: a large batch has thousands
    /// of pending pods and hundreds of pools.
    Pending(Option<(usize, Failure)>),
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
    /// The most cpu and memory (milli-units) any of its types has left: a pod asking more
    /// cannot join, whatever else it asks (a full NodeClaim is passed over at once).
    headroom: [i128; 2],
}

impl Claim {
    fn new(
        sim: &Simulator,
        pool: usize,
        requirements: Requirements,
        types: &[PoolType],
        requests: ResourceList,
    ) -> Self {
        let mut claim = Claim {
            pool,
            requirements,
            types: indices(types),
            requests,
            ports: Vec::new(),
            workloads: Vec::new(),
            headroom: [0; 2],
        };
        claim.headroom = claim.headroom(sim);
        claim
    }

    fn headroom(&self, sim: &Simulator) -> [i128; 2] {
        let pool = &sim.pools[self.pool];
        HEADROOM.map(|r| {
            self.types
                .iter()
                .map(|&i| sim.left_on(self.pool, &self.requests, &pool.type_at(i as usize), r))
                .max()
                .unwrap_or(i128::MIN)
        })
    }

    /// Whether `requests` fit in what its roomiest types have left.
    fn has_room_for(&self, requests: &ResourceList) -> bool {
        HEADROOM
            .iter()
            .zip(self.headroom)
            .all(|(r, left)| requests.get_or_zero(r).as_millis() <= left)
    }
}

/// The resources a NodeClaim's headroom tracks.
const HEADROOM: [&str; 2] = ["cpu", "memory"];

/// The outcome of every replica of every workload, placed in one batch.
pub fn solve(sim: &Simulator, workloads: &[PendingWorkload]) -> Vec<Vec<PodOutcome>> {
    let mut out: Vec<Vec<PodOutcome>> = workloads
        .iter()
        .map(|w| vec![PodOutcome::Pending(None); usize::try_from(w.replicas).unwrap_or(0)])
        .collect();
    let mut queue: std::collections::VecDeque<(usize, usize)> = queue_order(workloads).into();
    // Karpenter's `Queue`: a pod pushed back is tried again only while the batch makes
    // progress (its queue length when pushed is remembered).
    let mut pushed_at = std::collections::HashMap::new();
    let mut batch = Batch {
        sim,
        claims: Vec::new(),
        remaining: sim.pools.iter().map(|p| p.limits.clone()).collect(),
        within_remaining: vec![None; sim.pools.len()],
        memo: OutcomeMemo::default(),
    };
    while let Some(&(w, r)) = queue.front() {
        if pushed_at.get(&(w, r)) == Some(&queue.len()) {
            break;
        }
        queue.pop_front();
        match batch.try_schedule(w, &workloads[w]) {
            Ok(pool) => out[w][r] = PodOutcome::Scheduled { pool },
            Err(failures) => {
                let first = failures.into_iter().find(|(_, f)| !f.skips_pool());
                out[w][r] = PodOutcome::Pending(first);
                queue.push_back((w, r));
                pushed_at.insert((w, r), queue.len());
            }
        }
    }
    out
}

/// Every pod as (workload, replica), by cpu then memory requested, descending; ties keep
/// the run's order (`byCPUAndMemoryDescending`, creation time standing for the order).
fn queue_order(workloads: &[PendingWorkload]) -> Vec<(usize, usize)> {
    let mut pods: Vec<(usize, usize)> = workloads
        .iter()
        .enumerate()
        .flat_map(|(w, wl)| (0..usize::try_from(wl.replicas).unwrap_or(0)).map(move |r| (w, r)))
        .collect();
    let size = |w: usize| {
        let total = &workloads[w].requests.total;
        (total.get_or_zero("cpu"), total.get_or_zero("memory"))
    };
    pods.sort_by_key(|p| std::cmp::Reverse(size(p.0)));
    pods
}

struct Batch<'s, 'a, 'c> {
    sim: &'s Simulator<'a, 'c>,
    claims: Vec<Claim>,
    /// Per pool, what is left of its limits.
    remaining: Vec<ResourceList>,
    /// Per pool, whether some type is within what is left of its limits, once asked (reset
    /// when a NodeClaim spends them): pods that keep failing on a spent pool do not scan
    /// its types again.
    within_remaining: Vec<Option<bool>>,
    memo: OutcomeMemo,
}

impl<'s, 'c> Batch<'s, '_, 'c> {
    /// One pod of workload `w`: each relaxation step in turn, on a planned NodeClaim, else
    /// on a new one (`trySchedule` → `add`).
    fn try_schedule(
        &mut self,
        w: usize,
        pod: &PendingWorkload,
    ) -> Result<usize, Vec<(usize, Failure)>> {
        let mut last = Vec::new();
        for attempt in &pod.attempts {
            if let Some(pool) = self.add_to_inflight(w, pod, attempt) {
                return Ok(pool);
            }
            match self.add_to_new(w, pod, attempt) {
                Ok(pool) => return Ok(pool),
                Err(failures) => last = failures,
            }
        }
        Err(last)
    }

    /// `addToInflightNode`: the first planned NodeClaim, fewest pods first, that takes the
    /// pod.
    fn add_to_inflight(
        &mut self,
        w: usize,
        pod: &PendingWorkload,
        attempt: &Attempt,
    ) -> Option<usize> {
        let mut order: Vec<usize> = (0..self.claims.len()).collect();
        order.sort_by_key(|&c| self.claims[c].workloads.len());
        for c in order {
            if let Some((requirements, types)) = self.can_add(&self.claims[c], w, pod, attempt) {
                let claim = &mut self.claims[c];
                claim.requirements = requirements;
                claim.types = indices(&types);
                let pool = &self.sim.pools[claim.pool];
                claim
                    .requests
                    .add(&self.sim.judged_requests(pool, &pod.requests.total));
                claim.ports.extend(pod.host_ports.iter().cloned());
                claim.workloads.push(w);
                claim.headroom = claim.headroom(self.sim);
                return Some(claim.pool);
            }
        }
        None
    }

    /// `NodeClaim.CanAdd` on a planned NodeClaim: its taints, its requirements so far, the
    /// host ports and one-per-node pods on it, and the types that still fit every pod
    /// (with their `minValues`). The narrowed requirements and types when it takes the pod.
    fn can_add(
        &self,
        claim: &Claim,
        w: usize,
        pod: &PendingWorkload,
        attempt: &Attempt,
    ) -> Option<(Requirements, Vec<PoolType<'s, 'c>>)> {
        let pool = &self.sim.pools[claim.pool];
        let pns = attempt.tolerates_prefer_no_schedule;
        if !claim.has_room_for(&pod.requests.total)
            || sim::first_untolerated(&pod.tolerations, &pool.taints, pns).is_some()
            || !claim
                .requirements
                .compatible_with_ok(&attempt.requirements, pool.flavor)
            || (pod.one_per_node && claim.workloads.contains(&w))
            || pod
                .host_ports
                .iter()
                .any(|p| claim.ports.iter().any(|c| p.matches(c)))
        {
            return None;
        }
        let mut requirements = claim.requirements.clone();
        requirements.add_all(&attempt.requirements);
        if !self.sim.offered(claim.pool).allow(&[&requirements]) {
            return None;
        }
        let mut requests = claim.requests.clone();
        requests.add(&self.sim.judged_requests(pool, &pod.requests.total));
        let types: Vec<PoolType> = claim
            .types
            .iter()
            .map(|&i| pool.type_at(i as usize))
            // The types already meet the NodeClaim's requirements, and a type's label has one
            // value: it meets the narrowed requirements when it meets the pod's.
            .filter(|t| {
                (attempt.requirements.is_empty()
                    || t.requirements.intersects_ok(&attempt.requirements))
                    && self
                        .sim
                        .daemon_port_taken(claim.pool, t.requirements, &pod.host_ports)
                        .is_none()
                    && self.sim.fits_on(claim.pool, &requests, t)
            })
            .collect();
        let offered = self.sim.offered(claim.pool);
        let min_values_met = sim::unmet_min_values(&requirements, &types, offered).is_empty();
        (!types.is_empty() && min_values_met).then_some((requirements, types))
    }

    /// `addToNewNodeClaim`: the first pool, by weight, whose limits leave a type and whose
    /// stages take the pod; its NodeClaim charges the largest capacity of its options.
    fn add_to_new(
        &mut self,
        w: usize,
        pod: &PendingWorkload,
        attempt: &Attempt,
    ) -> Result<usize, Vec<(usize, Failure)>> {
        let mut failures = Vec::new();
        for i in 0..self.sim.pools.len() {
            match self.new_claim(i, pod, attempt) {
                Ok(types) => {
                    let pool = &self.sim.pools[i];
                    let mut requirements = pool.requirements.clone();
                    requirements.add_all(&attempt.requirements);
                    self.remaining[i] = subtract_max(&self.remaining[i], &types);
                    self.within_remaining[i] = None;
                    let requests = self.sim.judged_requests(pool, &pod.requests.total);
                    let mut claim = Claim::new(self.sim, i, requirements, &types, requests);
                    claim.ports = pod.host_ports.clone();
                    claim.workloads.push(w);
                    self.claims.push(claim);
                    return Ok(i);
                }
                Err(f) => failures.push((i, *f)),
            }
        }
        Err(failures)
    }

    /// Pool `i`'s verdict on a new NodeClaim for the pod: what Karpenter decided of the
    /// pool before the batch, what is left of its limits, then the simulator's stages.
    fn new_claim(
        &mut self,
        i: usize,
        pod: &PendingWorkload,
        attempt: &Attempt,
    ) -> Result<Vec<PoolType<'s, 'c>>, Box<Failure>> {
        if let Some(f) = self.sim.gate(i) {
            return Err(Box::new(f.clone()));
        }
        let pool = &self.sim.pools[i];
        let remaining = &self.remaining[i];
        let some_type_left = *self.within_remaining[i].get_or_insert_with(|| {
            pool.limits.is_empty() || pool.types().any(|t| sim::within(remaining, &t))
        });
        if !some_type_left {
            return Err(Box::new(Failure::AllTypesExceedLimits));
        }
        let data = PodData {
            replicas_span: None,
            attempt,
            tolerations: &pod.tolerations,
            tolerations_span: None,
            requests: &pod.requests,
            host_ports: &pod.host_ports,
            replicas: 1,
            exhaustive: true,
            remaining: Some(remaining),
            id: usize::MAX - 1,
            memo: &self.memo,
        };
        self.sim.new_claim_types(i, &data)
    }
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
