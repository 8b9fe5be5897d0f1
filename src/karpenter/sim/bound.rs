//! The most a pool's instance types hold, for one pod's requirements and host ports: a
//! pod that asks more of a resource than every type has is refused at once, with the
//! failure [`Simulator::instance_types`] would give at the end of its scan over the types.
//! A batch asks the same pools about many pods alike, most of which fit none of the types
//! left within the pools' limits.

use super::{PodData, Simulator};
use crate::karpenter::pool::PoolType;
use crate::quantity::{Quantity, ResourceList};

/// The resources a [`TypeBound`] keeps the most of.
const BOUNDED: [&str; 4] = ["cpu", "memory", "pods", "ephemeral-storage"];

/// What the types of a pool that [`Simulator::instance_types`] would weigh for a pod have
/// at most: those within the limits that meet its requirements and on which no DaemonSet
/// binds one of its host ports.
#[derive(Debug, Clone)]
pub(in crate::karpenter) struct TypeBound {
    /// The most allocatable of each [`BOUNDED`] resource on any of them.
    most: [Quantity; BOUNDED.len()],
    /// The first of them with the most cpu, then memory (by catalog index): the scan's
    /// largest type when none fits.
    largest: usize,
    /// Whether the pool judges ephemeral storage ([`Simulator::judged_requests`]).
    ephemeral_judged: bool,
}

impl TypeBound {
    /// Whether a pod requesting `requests` asks more of some resource the pool judges than
    /// any type has: no type holds it, whatever DaemonSets add (their requests are never
    /// negative where a bound is made).
    pub(in crate::karpenter) fn refuses(&self, requests: &ResourceList) -> bool {
        (BOUNDED.iter().zip(&self.most))
            .filter(|(r, _)| self.ephemeral_judged || **r != "ephemeral-storage")
            .any(|(r, most)| {
                let asked = requests.get_or_zero(r);
                asked > Quantity::ZERO && asked > *most
            })
    }
}

impl Simulator<'_, '_> {
    /// The bound of pool `i`'s types for `pod`; `None` when the pool has no offering the
    /// pod's requirements allow (the scan refuses that first), when no type is weighed, or
    /// when a DaemonSet's request on one is negative (the bound would not be sound).
    pub(in crate::karpenter) fn type_bound(&self, i: usize, pod: &PodData) -> Option<TypeBound> {
        let pool = &self.pools[i];
        let pod_reqs = &pod.attempt.requirements;
        if !self.offered(i).allow(&[&pool.requirements, pod_reqs]) {
            return None;
        }
        let within = pod.within.unwrap_or(pool.within_limits());
        let query = (!pod_reqs.is_empty())
            .then(|| pool.types().next().map(|t| t.requirements.query(pod_reqs)))
            .flatten();
        let mut bound: Option<TypeBound> = None;
        let mut largest: Option<PoolType> = None;
        for (t, &within) in pool.types().zip(within) {
            if !within
                || query.as_ref().is_some_and(|q| !t.requirements.meets(q))
                || (!pod.host_ports.is_empty()
                    && (self.daemon_port_taken(i, t.requirements, pod.host_ports)).is_some())
            {
                continue;
            }
            let overhead = self.daemon_overhead(i, t.requirements);
            if overhead.iter().any(|(_, q)| q < Quantity::ZERO) {
                return None;
            }
            let alloc = t.allocatable();
            let has = BOUNDED.map(|r| alloc.get_or_zero(r));
            let key = |t: &PoolType| {
                let a = t.allocatable();
                (a.get_or_zero("cpu"), a.get_or_zero("memory"))
            };
            if largest.as_ref().is_none_or(|l| key(&t) > key(l)) {
                largest = Some(t);
            }
            let b = bound.get_or_insert(TypeBound {
                most: has,
                largest: t.catalog_index(),
                ephemeral_judged: pool.node_class_known,
            });
            for (most, has) in b.most.iter_mut().zip(has) {
                *most = (*most).max(has);
            }
        }
        let mut bound = bound?;
        bound.largest = largest?.catalog_index();
        Some(bound)
    }

    /// [`Simulator::instance_types`]' failure on pool `i` when `pod.bound` shows that no
    /// type holds the pod; `None` when some type may.
    pub(in crate::karpenter) fn refused_by_bound(
        &self,
        i: usize,
        pod: &PodData,
    ) -> Option<Box<super::Failure>> {
        let bound = pod.bound.filter(|b| b.refuses(&pod.requests.total))?;
        let pool = &self.pools[i];
        let needed = self.judged_requests(pool, &pod.requests.total);
        Some(self.not_enough_resources(i, pod, needed, pool.type_at(bound.largest)))
    }
}
