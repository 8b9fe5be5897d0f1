//! The verdict phase: every pod Karpenter provisions for, bound to the static nodes it fits
//! and placed round after round as Karpenter's provisioning scheduler places the rest
//! ([`scheduler::solve`]). What the batch decides of each
//! workload's replicas goes into its facts, which the scheduling rules report from, and
//! into its `karplint plan` row: the lint and the plan read one verdict.

use super::workload::Pending;
use crate::facts::{Batched, WorkloadFacts};
use crate::karpenter::scheduler::{self, Existing, PendingWorkload, PodOutcome};
use crate::karpenter::sim::Failure;
use crate::model::identity::{Identity, repeats, without_spans};
use crate::report::plan::{self, PlanRow};
use crate::report::{Note, cost};
use crate::rules::Context;
use std::collections::HashMap;

/// An object's place in the run's order ([`crate::facts::order`]).
type Key = (usize, usize, usize);

/// Places the pods of `pending` (sorted by key) on the static nodes and in Karpenter's
/// rounds, and gives each workload's facts and plan row (sorted by key) what was decided
/// of its replicas. A later definition of a workload with the same pods is the same object
/// of the cluster: its replicas are placed once, and it is given what the first was.
/// A workload whose replicas would take the batch past `budget` pods is left out of it,
/// judged by its pod template alone; the note counts them.
pub(super) fn place(
    cx: &Context,
    mut pending: Vec<Pending>,
    facts: &mut [WorkloadFacts],
    rows: &mut [(Key, PlanRow)],
    budget: usize,
) -> Placed {
    let Some(sim) = &cx.sim else {
        return Placed::default();
    };
    let copies = redefined(&mut pending);
    let note = within_budget(&mut pending, budget);
    let mut existing = Existing::new(sim, &cx.cluster.node_groups, cx.catalog);
    facts.sort_unstable_by_key(|f| f.order);
    for p in &mut pending {
        p.pods.meant = (facts.binary_search_by_key(&p.key, |f| f.order).ok())
            .and_then(|i| facts[i].pending_on);
    }
    let keys: Vec<Key> = pending.iter().map(|p| p.key).collect();
    // Collected in the vector it consumes (std's in-place iteration): no second copy.
    let workloads: Vec<PendingWorkload> = pending.into_iter().map(|p| p.pods).collect();
    let solved = scheduler::solve_with_nodes(sim, &workloads, &mut existing);
    let on = cost::by_workload(&solved.nodes, workloads.len());
    let mut copies_of: HashMap<Key, Vec<Key>> = HashMap::new();
    for c in &copies {
        copies_of.entry(c.held).or_default().push(c.key);
    }
    let outcomes = keys.into_iter().zip(solved.pods).zip(solved.meant);
    for (w, (((key, pods), meant), workload)) in outcomes.zip(&workloads).enumerate() {
        let batch = batched(&pods, workload, meant);
        let copied = copies_of.get(&key).into_iter().flatten().copied();
        for key in std::iter::once(key).chain(copied) {
            if let Ok(at) = facts.binary_search_by_key(&key, |f| f.order) {
                facts[at].batch = Some(Box::new(batch.clone()));
            }
            // Plan rows only (`karplint plan`, `diff`): the lint has none.
            if let Ok(at) = rows.binary_search_by_key(&key, |(k, _)| *k) {
                let row = &mut rows[at].1;
                plan::settle_pending_in_batch(row, sim, &pods);
                row.pods = plan::pod_rows(sim, &existing, pods.clone());
                plan::settle_placed_in_batch(row);
                (row.instance_types, row.monthly_cost) =
                    cost::of_workload(&solved.nodes, &on[w], &cx.cluster);
            }
        }
    }
    let cost = (!rows.is_empty())
        .then(|| cost::of_nodes(&solved.nodes, |p| sim.pools[p].name.clone(), &cx.cluster));
    Placed { note, cost, copies }
}

/// A workload defined again later in the run whose pods are the same to the batch.
pub(super) struct Redefined {
    /// The later definition's place in the run's order.
    pub key: Key,
    /// The place of the definition it repeats, which the batch places.
    pub held: Key,
    /// Which object both define.
    pub identity: Identity,
}

/// Takes out of `pending` (in the run's order) every workload that an earlier one defines
/// with the same pods (their relaxation steps, tolerations, requests, host ports, labels and
/// replicas), and gives them. A cluster holds one object per identity; when the pods are
/// the same, placing either definition is placing that object, so it is placed once.
/// Definitions that differ in their pods are all placed, as `duplicate-object`'s docs say.
fn redefined(pending: &mut Vec<Pending>) -> Vec<Redefined> {
    let mut by_identity: HashMap<&Identity, Vec<usize>> = HashMap::new();
    for (i, p) in pending.iter().enumerate() {
        if let Some(id) = &p.identity {
            by_identity.entry(id).or_default().push(i);
        }
    }
    let groups: Vec<Vec<usize>> = (by_identity.into_values())
        .filter(|g| g.len() > 1)
        .collect();
    // Equal pods print alike: most copies (the same file under two clusters' directories)
    // are told apart without printing either.
    let pairs = repeats(
        &groups,
        |a, b| pending[a].pods == pending[b].pods,
        |i| without_spans(format_args!("{:?}", pending[i].pods)),
    );
    let mut held: Vec<Option<Key>> = vec![None; pending.len()];
    for (first, later) in pairs {
        held[later] = Some(pending[first].key);
    }
    // In place: a second vector of every workload's pods would double the run's peak.
    let mut copies = Vec::new();
    let mut held = held.into_iter();
    pending.retain_mut(|p| match (held.next().flatten(), p.identity.take()) {
        (Some(held), Some(identity)) => {
            copies.push(Redefined {
                key: p.key,
                held,
                identity,
            });
            false
        }
        (_, identity) => {
            p.identity = identity;
            true
        }
    });
    copies
}

/// What placing the batch gives the run beside the facts and rows.
#[derive(Default)]
pub(super) struct Placed {
    /// The note on workloads left out of the batch.
    pub note: Option<Note>,
    /// The nodes the rounds launch and their cost, for a run with plan rows.
    pub cost: Option<cost::Cost>,
    /// The workloads placed as the earlier definition they copy.
    pub copies: Vec<Redefined>,
}

/// Each NodePool's disruption settings, for `karplint diff`.
pub(super) fn disruption(cx: &Context) -> Vec<plan::PoolDisruption> {
    let Some(sim) = &cx.sim else {
        return Vec::new();
    };
    (sim.pools.iter())
        .map(|p| plan::PoolDisruption::of(&p.name, p.np))
        .collect()
}

/// Drops from `pending` the workloads whose replicas would take the batch past `budget`
/// pods, in the run's order; the note that counts them.
fn within_budget(pending: &mut Vec<Pending>, budget: usize) -> Option<Note> {
    let mut left = budget;
    let (mut dropped, mut replicas) = (0usize, 0u64);
    pending.retain(|p| {
        let n = usize::try_from(p.pods.replicas).unwrap_or(0);
        if n <= left {
            left -= n;
            return true;
        }
        dropped += 1;
        replicas = replicas.saturating_add(n as u64);
        false
    });
    (dropped > 0).then(|| {
        Note::new(
            "checks-not-run",
            format!(
                "{dropped} workload(s) with {replicas} replica(s) in all were judged one pod at a time: Karpenter's batch places at most {budget} pods per run (--max-batch-pods), so their replicas were not placed with the others"
            ),
        )
    })
}

/// A workload's replicas, counted: how many stay Pending, the first one's failure, and the
/// last refusal of its meant pool.
fn batched(pods: &[PodOutcome], workload: &PendingWorkload, meant: Option<Failure>) -> Batched {
    let mut first = None;
    let mut pending = 0;
    for pod in pods {
        if let PodOutcome::Pending(f, _) = pod {
            pending += 1;
            if pending == 1 {
                first = f.clone();
            }
        }
    }
    Batched {
        replicas: pods.len(),
        pending,
        first,
        on_meant: (pending > 0).then_some(meant).flatten(),
        requests: workload.requests().clone(),
    }
}
