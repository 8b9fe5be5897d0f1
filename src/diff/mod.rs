//! `karplint diff BASE [HEAD]`: what a change does to the cluster. Both sides are judged by
//! the same pipeline (the lint and `karplint plan` share one verdict), and compared:
//!
//! - **placement**: per workload, the replicas Pending, the NodePool, the instance families
//!   and the Pending reasons before and after;
//! - **disruption**: the new `consolidation-blocked` findings (workloads and pools newly
//!   blocked from consolidation) and the NodePools whose disruption settings changed;
//! - **new findings**: HEAD's findings less BASE's, matched by the baseline fingerprints
//!   ([`crate::report::baseline`]), so a finding that only moved is not new;
//! - **cost**: the nodes each side's rounds launch by instance type, and their monthly
//!   on-demand cost ([`crate::report::cost`]).
//!
//! Reading the revisions from git is [`git`]'s; the text formats are [`render`]'s.

pub mod git;
pub mod render;

use crate::diagnostic::{ObjectRef, Severity};
use crate::report::Report;
use crate::report::cost::Cost;
use crate::report::plan::{self, PlanRow, PoolDisruption};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The rule whose findings are the workloads and pools blocked from consolidation.
pub const CONSOLIDATION_BLOCKED: &str = "consolidation-blocked";

/// One side of the change, judged.
pub struct Side {
    /// How the side is named: a revision, or `working tree`.
    pub name: String,
    pub plan: Vec<PlanRow>,
    pub cost: Option<Cost>,
    pub disruption: Vec<PoolDisruption>,
}

/// Where one workload stands on one side.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Placement {
    pub replicas: i64,
    /// Replicas that stay Pending once every pod is placed.
    pub pending: usize,
    /// The NodePool (or `node group NAME`) its pods land on.
    pub nodepool: Option<String>,
    /// The instance families of the nodes its replicas launch on (`m5`, `c6i`).
    pub families: Vec<String>,
    /// Why it stays Pending, when it does.
    pub reason: Option<String>,
    /// Where it is written: `file:line` (HEAD's side only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

/// A workload whose placement changed (or that one side does not have).
#[derive(Debug, Clone, Serialize)]
pub struct PlacementChange {
    pub object: ObjectRef,
    pub before: Option<Placement>,
    pub after: Option<Placement>,
    /// Only the instance families changed: the same replicas land on the same NodePool,
    /// packed onto other types (another workload's change moves them too).
    pub families_only: bool,
}

impl PlacementChange {
    /// How many more replicas stay Pending after the change.
    pub fn newly_pending(&self) -> usize {
        let pending = |p: &Option<Placement>| p.as_ref().map_or(0, |p| p.pending);
        pending(&self.after).saturating_sub(pending(&self.before))
    }
}

/// A NodePool whose disruption settings changed.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetChange {
    pub nodepool: String,
    pub before: Option<PoolDisruption>,
    pub after: Option<PoolDisruption>,
}

/// The nodes of one instance type and capacity type, before and after.
#[derive(Debug, Clone, Serialize)]
pub struct NodeChange {
    pub instance_type: String,
    pub capacity_type: &'static str,
    pub before: usize,
    pub after: usize,
    /// The monthly cost of those nodes, when priced.
    pub monthly_before: Option<f64>,
    pub monthly_after: Option<f64>,
}

/// The projected capacity and cost of both sides.
#[derive(Debug, Clone, Serialize)]
pub struct CostChange {
    pub before: Option<Cost>,
    pub after: Option<Cost>,
    /// The instance types whose node count changed.
    pub nodes: Vec<NodeChange>,
    /// After less before, of the priced nodes' monthly cost.
    pub monthly_difference: f64,
    pub currency: String,
}

/// Everything `karplint diff` reports, but the new findings (which are HEAD's report less
/// BASE's findings).
#[derive(Debug, Clone, Serialize)]
pub struct Changes {
    pub base: String,
    pub head: String,
    /// Most newly Pending replicas first, then in the run's order.
    pub placement: Vec<PlacementChange>,
    pub budgets: Vec<BudgetChange>,
    pub cost: CostChange,
}

/// The placement of a plan row.
fn placement(r: &PlanRow) -> Placement {
    let pending = if r.pods.is_empty() {
        if plan::stays_pending(r) {
            usize::try_from(r.replicas).unwrap_or(0)
        } else {
            0
        }
    } else {
        plan::pending_in_batch(r)
    };
    let families: BTreeSet<String> = (r.instance_types.iter())
        .map(|l| family(&l.instance_type).to_string())
        .collect();
    Placement {
        replicas: r.replicas,
        pending,
        nodepool: (r.nodepool.clone())
            .or_else(|| r.node_group.as_ref().map(|g| format!("node group {g}"))),
        families: families.into_iter().collect(),
        reason: reason(r, pending),
        location: (!r.file.is_empty()).then(|| format!("{}:{}", r.file, r.line)),
    }
}

/// Why a row's replicas stay Pending: its reason, or for a pod that schedules alone, the
/// kind of the failure its replicas meet once every pod is placed.
fn reason(r: &PlanRow, pending: usize) -> Option<String> {
    if pending == 0 && r.outcome == "schedules" {
        return None;
    }
    r.reason.clone().or_else(|| {
        let kind = r.pods.iter().find_map(|p| p.kind)?;
        Some(format!(
            "{kind}: {pending} of {} replicas stay Pending once every pod of the run is placed",
            r.replicas
        ))
    })
}

/// An instance type's family: `m5.large` → `m5`.
pub fn family(instance_type: &str) -> &str {
    instance_type.split('.').next().unwrap_or(instance_type)
}

/// What identifies a workload on both sides: its kind, namespace, name and role.
type Key = (String, Option<String>, String, Option<String>);

fn key(o: &ObjectRef) -> Key {
    (
        o.kind.to_string(),
        o.namespace.as_ref().map(|n| n.to_string()),
        o.name.to_string(),
        o.role.as_ref().map(|r| r.to_string()),
    )
}

/// Whether two placements differ in replicas, Pending replicas, NodePool or reason.
fn moved(a: &Placement, b: &Placement) -> bool {
    (a.replicas, a.pending, &a.nodepool, &a.reason)
        != (b.replicas, b.pending, &b.nodepool, &b.reason)
}

/// The workloads whose placement differs between the sides.
fn placement_changes(base: &[PlanRow], head: &[PlanRow]) -> Vec<PlacementChange> {
    let mut before: BTreeMap<Key, &PlanRow> = BTreeMap::new();
    for r in base {
        before.entry(key(&r.object)).or_insert(r);
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for r in head {
        let k = key(&r.object);
        if !seen.insert(k.clone()) {
            continue;
        }
        let after = placement(r);
        let was = before.get(&k).map(|b| placement(b));
        let core = was.as_ref().is_none_or(|w| moved(w, &after));
        let families = was.as_ref().is_some_and(|w| w.families != after.families);
        if core || families {
            out.push(PlacementChange {
                object: r.object.clone(),
                before: was,
                after: Some(after),
                families_only: !core,
            });
        }
    }
    for r in base {
        if !seen.contains(&key(&r.object)) && seen.insert(key(&r.object)) {
            out.push(PlacementChange {
                object: r.object.clone(),
                before: Some(placement(r)),
                after: None,
                families_only: false,
            });
        }
    }
    // Stable: the run's order among equals.
    out.sort_by_key(|c| (std::cmp::Reverse(c.newly_pending()), c.families_only));
    out
}

/// The NodePools whose disruption settings differ between the sides.
fn budget_changes(base: &[PoolDisruption], head: &[PoolDisruption]) -> Vec<BudgetChange> {
    let by_name = |pools: &[PoolDisruption]| -> BTreeMap<String, PoolDisruption> {
        (pools.iter())
            .map(|p| (p.nodepool.clone(), p.clone()))
            .collect()
    };
    let (before, after) = (by_name(base), by_name(head));
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    (names.into_iter())
        .filter(|n| before.get(*n) != after.get(*n))
        .map(|n| BudgetChange {
            nodepool: n.clone(),
            before: before.get(n).cloned(),
            after: after.get(n).cloned(),
        })
        .collect()
}

/// The node counts and cost of both sides, by instance type and capacity type.
fn cost_change(base: Option<&Cost>, head: Option<&Cost>) -> CostChange {
    type TypeKey = (String, &'static str);
    let mut by_type: BTreeMap<TypeKey, NodeChange> = BTreeMap::new();
    let mut add = |cost: Option<&Cost>, after: bool| {
        for n in cost.iter().flat_map(|c| &c.nodes) {
            let t = n.instance_type.clone().unwrap_or_else(|| "(none)".into());
            let e = by_type
                .entry((t.clone(), n.capacity_type))
                .or_insert(NodeChange {
                    instance_type: t,
                    capacity_type: n.capacity_type,
                    before: 0,
                    after: 0,
                    monthly_before: None,
                    monthly_after: None,
                });
            let (count, monthly) = if after {
                (&mut e.after, &mut e.monthly_after)
            } else {
                (&mut e.before, &mut e.monthly_before)
            };
            *count += n.nodes;
            if let Some(m) = n.monthly {
                *monthly.get_or_insert(0.0) += m;
            }
        }
    };
    add(base, false);
    add(head, true);
    let monthly = |c: Option<&Cost>| c.map_or(0.0, |c| c.monthly);
    CostChange {
        nodes: (by_type.into_values())
            .filter(|n| n.before != n.after)
            .collect(),
        monthly_difference: monthly(head) - monthly(base),
        currency: (head.or(base)).map_or_else(|| "USD".to_string(), |c| c.currency.clone()),
        before: base.cloned(),
        after: head.cloned(),
    }
}

/// Compares the sides.
pub fn compare(base: &Side, head: &Side) -> Changes {
    Changes {
        base: base.name.clone(),
        head: head.name.clone(),
        placement: placement_changes(&base.plan, &head.plan),
        budgets: budget_changes(&base.disruption, &head.disruption),
        cost: cost_change(base.cost.as_ref(), head.cost.as_ref()),
    }
}

/// Whether the change fails the check: HEAD adds a finding at or above `at_least` (never
/// with `None`), or leaves more replicas of some workload Pending than BASE did (unless
/// `None`, `--fail-on never`).
pub fn fails(changes: &Changes, new_findings: &Report, at_least: Option<Severity>) -> bool {
    let Some(t) = at_least else { return false };
    new_findings.findings.iter().any(|f| f.severity >= t)
        || changes.placement.iter().any(|c| c.newly_pending() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_the_part_before_the_size() {
        assert_eq!(family("m5.large"), "m5");
        assert_eq!(family("c6in.metal"), "c6in");
        assert_eq!(family("odd"), "odd");
    }
}
