//! What the batch remembers of the pods it left Pending, so that a pod is tried again only
//! when something happened that may take it.
//!
//! A pod no topology group concerns is refused by a planned NodeClaim, or by a pool's new
//! NodeClaim, on what that NodeClaim and what is left of that pool's limits are. Both
//! mostly shrink while the batch runs: a NodeClaim that takes a pod, or launches as one
//! type, keeps fewer types and less room, and a new NodeClaim spends its pool's limits.
//! Three things may take a pod that was refused: a NodeClaim made since in a pool it may
//! join; limits a pool gave back when its NodeClaims launched (`Batch::charge_launched`);
//! and a NodeClaim that took a pod asking a label the NodeClaim had no requirement on, since
//! `Compatible` refuses a pod that asks a label the NodeClaim does not define ("label %q
//! does not have known values") and accepts it once another pod's requirement (a
//! preferred `NotIn`, say) defines it (`Batch::join`). Until one of those happens in one of
//! its pools, trying the pod again would refuse it again. Karpenter tries it again;
//! karplint copies the refusal, and, once the round
//! ends, tries each such workload once more for the failure its error shows then (a pool
//! it cannot join may have spent or regained its limits, which changes the words).

use fnv::FnvHashMap as HashMap;
use std::collections::BTreeSet;

use super::Shown;

/// The refusals the batch may copy ([`super::Batch::round`]).
#[derive(Default)]
pub(super) struct Refusals {
    /// The pool of each event that may take a refused pod, in order: a NodeClaim made
    /// there, limits it gave back, or a label one of its NodeClaims came to define.
    events: Vec<u32>,
    /// Per pool (by index), how many events had happened by its last one; 0 for none.
    last_event: Vec<usize>,
    /// Per workload whose last try was refused.
    refused: HashMap<usize, Refused>,
    /// The workloads a refusal was copied to since their last try.
    copied: BTreeSet<usize>,
}

/// The last refusal of a workload's pod.
struct Refused {
    /// How many events had happened by then, or by the last time none since concerned it.
    seen: usize,
    /// The pools whose NodeClaims it may join at some relaxation step, sorted.
    reach: Box<[u32]>,
    shown: Shown,
}

impl Refusals {
    /// Something happened in pool `pool` that may take a refused pod.
    pub(super) fn event(&mut self, pool: usize) {
        self.events.push(u32::try_from(pool).unwrap_or(u32::MAX));
        if self.last_event.len() <= pool {
            self.last_event.resize(pool + 1, 0);
        }
        self.last_event[pool] = self.events.len();
    }

    /// Whether workload `w`'s refusal is remembered with its reach.
    pub(super) fn knows(&self, w: usize) -> bool {
        self.refused.contains_key(&w)
    }

    /// A pod of workload `w` was tried and refused with `shown`; `reach`, the pools it may
    /// join, when not known yet.
    pub(super) fn refused(&mut self, w: usize, reach: Option<Box<[u32]>>, shown: &Shown) {
        let seen = self.events.len();
        self.copied.remove(&w);
        match (self.refused.get_mut(&w), reach) {
            (Some(r), _) => {
                r.seen = seen;
                r.shown.clone_from(shown);
            }
            (None, Some(reach)) => {
                let shown = shown.clone();
                self.refused.insert(w, Refused { seen, reach, shown });
            }
            (None, None) => {}
        }
    }

    /// A pod of workload `w` was placed: what was remembered of it no longer holds.
    pub(super) fn placed(&mut self, w: usize) {
        self.refused.remove(&w);
        self.copied.remove(&w);
    }

    /// The refusal a pod of workload `w` would get again: nothing happened in its pools
    /// since its last try.
    pub(super) fn unchanged(&mut self, w: usize) -> Option<Shown> {
        let r = self.refused.get_mut(&w)?;
        let since = self.events.get(r.seen..).unwrap_or_default();
        // Whichever is shorter is read: the events since, or the pools it may join (a pool
        // had an event since when its last one came after `seen`).
        let happened = if since.len() <= r.reach.len() {
            since.iter().any(|p| r.reach.binary_search(p).is_ok())
        } else {
            (r.reach.iter())
                .any(|&p| (self.last_event.get(p as usize)).is_some_and(|&n| n > r.seen))
        };
        if happened {
            return None;
        }
        r.seen = self.events.len();
        self.copied.insert(w);
        Some(r.shown.clone())
    }

    /// The workloads a refusal was copied to since their last try, in order; forgotten.
    pub(super) fn take_copied(&mut self) -> Vec<usize> {
        std::mem::take(&mut self.copied).into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::collection::{btree_set, vec};
    use proptest::prelude::*;

    proptest! {
        /// Whether a pool a refused pod may join had an event since its refusal, read from
        /// the events since or from each pool's last event, is what the events say.
        #[test]
        fn unchanged_holds_when_no_pool_of_its_reach_had_an_event_since(
            before in vec(0usize..12, 0..30),
            after in vec(0usize..12, 0..30),
            reach in btree_set(0u32..12, 0..12),
        ) {
            let mut refusals = Refusals::default();
            for &p in &before {
                refusals.event(p);
            }
            let reach: Box<[u32]> = reach.into_iter().collect();
            refusals.refused(0, Some(reach.clone()), &None);
            for &p in &after {
                refusals.event(p);
            }
            let untouched = !after.iter().any(|&p| reach.contains(&(p as u32)));
            prop_assert_eq!(refusals.unchanged(0).is_some(), untouched);
        }
    }
}
