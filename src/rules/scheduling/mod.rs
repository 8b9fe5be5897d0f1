//! Scheduling rules: why Karpenter would leave a pod Pending, one rule per stage at which
//! its scheduler rejects a pod on a NodePool (karpenter-model §3.3).
//!
//! The simulator's [`Verdict::Pending`] keeps every NodePool's [`Failure`], closest pool
//! first. The rule of the closest pool's stage reports the pod (see [`rule`]); this module
//! builds that finding, and each rule's file holds its own advice for the failures of its
//! stage.

mod incompatible_requirements;
mod no_instance_type_fits;
mod replicas_exceed_capacity;
mod untolerated_taint;

pub use incompatible_requirements::IncompatibleRequirements;
pub use no_instance_type_fits::NoInstanceTypeFits;
pub use replicas_exceed_capacity::ReplicasExceedCapacity;
pub use untolerated_taint::UntoleratedTaint;

use super::{Context, Findings, Placed, RuleMeta, Settle};
use crate::diagnostic::Finding;
use crate::facts::{Batched, Scheduling, WorkloadFacts, Workloads};
use crate::karpenter::sim::{Failure, NO_NODEPOOL_LEFT, PoolFailure, Simulator, Stage, Verdict};
use crate::karpenter::taints;
use crate::model::{Object, Span};
use crate::quantity::Quantity;

/// The rule that reports a pod no NodePool takes, by the stage at which the closest pool
/// rejected it.
fn rule(stage: Stage) -> &'static str {
    match stage {
        Stage::Taints => untolerated_taint::META.id,
        Stage::Requirements => incompatible_requirements::META.id,
        Stage::Topology => super::unsatisfiable_topology_spread::META.id,
        Stage::InstanceTypes => no_instance_type_fits::META.id,
        Stage::Limits => replicas_exceed_capacity::META.id,
    }
}

/// karplint's words for one NodePool's failure: the label on the pod field and the fix.
struct Advice {
    label: &'static str,
    help: String,
}

/// The advice of the rule whose stage failed.
fn advice(failure: &Failure, nodepool: &str) -> Advice {
    match failure {
        Failure::Taint { taints, .. } => untolerated_taint::advice(taints, nodepool),
        Failure::Requirements(e) => incompatible_requirements::advice(e, nodepool),
        Failure::NoTypeMeetsRequirements { exclusion, .. } => {
            no_instance_type_fits::no_type_meets_requirements(exclusion.as_deref(), nodepool)
        }
        Failure::NotEnoughResources { largest, .. } => {
            no_instance_type_fits::not_enough_resources(largest, nodepool)
        }
        Failure::MinValuesNotMet { keys, .. } => {
            no_instance_type_fits::min_values_not_met(keys, nodepool)
        }
        Failure::NoRequiredOffering { .. } => no_instance_type_fits::no_required_offering(nodepool),
        Failure::HostPortTaken { port } => no_instance_type_fits::host_port_taken(port, nodepool),
        Failure::NoCompatibleInstanceTypes { min_values } => {
            no_instance_type_fits::no_compatible_instance_types(*min_values, nodepool)
        }
        Failure::Topology { constraint, .. } => Advice {
            label: "this pod's topology constraint",
            help: format!(
                "loosen the {constraint} constraint (maxSkew, whenUnsatisfiable: ScheduleAnyway) or let NodePool \"{nodepool}\" offer more domains"
            ),
        },
        Failure::AllTypesExceedLimits | Failure::NodeLimitsExhausted => {
            replicas_exceed_capacity::all_types_exceed_limits(nodepool)
        }
        Failure::ReplicasExceedLimit {
            resource, demand, ..
        } => replicas_exceed_capacity::replicas_exceed_limit(resource, *demand, nodepool),
    }
}

/// The finding of a rule for a pod template no NodePool takes, when the closest pool
/// failed at the rule's stage, for the batch to settle: primary label on the pod field to
/// change, every pool's reason as a related note.
fn pending_finding(cx: &Context, rule_meta: &RuleMeta, o: &Placed, out: &mut Findings) {
    if let Some(f) = pending_template(cx, rule_meta, o) {
        out.settle(f, o.obj, None);
    }
}

/// [`pending_finding`]'s finding.
fn pending_template(cx: &Context, rule_meta: &RuleMeta, o: &Placed) -> Option<Finding> {
    let obj = o.obj;
    let (Some(sim), Some(Verdict::Pending(failures))) = (&cx.sim, o.verdict()) else {
        return None;
    };
    let spec = obj.workload().and_then(|w| w.pod_spec())?;
    let first = sim.headline(spec, failures)?;
    let stage = first.failure.stage();
    if rule(stage) != rule_meta.id || static_capacity_takes(cx, obj) {
        return None;
    }
    let pool = &sim.pools[first.pool];
    let span = first.pod_span.unwrap_or_else(|| template_span(obj));
    let message = format!(
        "{NO_NODEPOOL_ALONE}: NodePool \"{}\": {}",
        pool.name,
        first.failure.headline_on(&pool.name, sim.version())
    );
    let Advice { label, mut help } = advice(&first.failure, &pool.name);
    // A tainted pool that got no further is often the intended one (a GPU pool).
    let tainted = failures.iter().filter(|f| f.pool != first.pool).find(|f| {
        stage != Stage::Taints
            && matches!(
                f.failure,
                Failure::Taint {
                    fits_if_tolerated: Some(true),
                    ..
                }
            )
    });
    if let Some(t) = tainted {
        let nodepool = &sim.pools[t.pool].name;
        help.push_str(&format!("; or, {}", advice(&t.failure, nodepool).help));
    }
    // The pool the pod was meant for, skipped before any pod, is not in Karpenter's words.
    let meant = sim.meant(spec).filter(|&m| m != first.pool);
    if let Some((name, gate)) = meant.and_then(|m| Some((&sim.pools[m].name, sim.gate(m)?))) {
        help.push_str(&format!(
            "; NodePool \"{name}\", which this pod's node selection names, is never tried: {}",
            gate.headline_on(name, sim.version())
        ));
    }
    let mut f = rule_meta
        .finding(obj, span, message)
        .label(label)
        .help(help);
    for (obj, span, text) in pool_notes(sim, failures) {
        f = f.related(obj, span, text);
    }
    Some(f)
}

/// The NodePool the finding on a pod template no NodePool takes leads with.
pub(crate) fn pending_on(cx: &Context, o: &Placed) -> Option<usize> {
    let (Some(sim), Some(Verdict::Pending(failures))) = (&cx.sim, o.verdict()) else {
        return None;
    };
    let spec = o.obj.workload().and_then(|w| w.pod_spec())?;
    sim.headline(spec, failures).map(|f| f.pool)
}

/// Whether the limits of the pool that refused a workload's first Pending replica are the
/// cause, whatever Karpenter's words: its failure is at the limits stage, or the pod
/// schedules alone on that pool and the NodeClaims before it spent the limits down to types
/// too small for it ("no instance type has enough resources").
fn limits_cause(w: &WorkloadFacts, sim: &Simulator, (pool, failure): (usize, &Failure)) -> bool {
    !sim.pools[pool].limits.is_empty()
        && (failure.stage() == Stage::Limits
            || (w.scheduling == Scheduling::Schedules(pool)
                && failure.stage() == Stage::InstanceTypes))
}

/// The replicas together request more of a limited resource of pool `pool` than its limit:
/// the numbers behind a limits finding.
fn replicas_over_limit(sim: &Simulator, pool: usize, b: &Batched) -> Option<Failure> {
    sim.pools[pool].limits.iter().find_map(|(resource, limit)| {
        let replicas = i128::try_from(b.replicas).unwrap_or(i128::MAX);
        let demand = Quantity::from_millis(
            (b.requests.get_or_zero(resource).as_millis()).saturating_mul(replicas),
        );
        (demand > limit).then(|| Failure::ReplicasExceedLimit {
            resource: resource.to_string(),
            replicas: i64::try_from(b.replicas).unwrap_or(i64::MAX),
            demand,
            limit,
        })
    })
}

/// The rule that reports replicas the batch leaves Pending, by the failure their error
/// starts with: the stage's rule, and pod (anti-)affinity's own for its topology terms.
/// Where the limits are the cause in other words ([`limits_cause`]), the rule of those
/// words reports it, with the limits' advice.
fn batch_rule(first: Option<(usize, &Failure)>) -> &'static str {
    match first {
        Some((_, Failure::Topology { constraint, .. })) if *constraint != "topology spread" => {
            super::unsatisfiable_pod_affinity::META.id
        }
        Some((_, failure)) => rule(failure.stage()),
        None => no_instance_type_fits::META.id,
    }
}

/// The findings of a rule for workloads whose pod schedules alone, but some of whose
/// replicas stay Pending once every pod of the run is placed (the verdict phase: limits
/// charged per NodeClaim, host ports, static node groups, topology across workloads).
pub(crate) fn batch_findings(
    cx: &Context,
    rule_meta: &RuleMeta,
    workloads: &Workloads,
    out: &mut Vec<Finding>,
) {
    if let Some(sim) = &cx.sim {
        out.extend(
            workloads
                .iter()
                .filter_map(|w| batch_finding(sim, rule_meta, w)),
        );
    }
}

/// The most replicas the per-object scheduling findings on one workload say stay Pending
/// (`usize::MAX` for every one): a finding that is not settled counts every replica.
pub(crate) fn claimed<'f>(
    unsettled: impl Iterator<Item = &'f Finding>,
    settled: &[(Finding, Settle)],
) -> Option<usize> {
    let every = (unsettled.filter(|f| SCHEDULING_RULES.contains(&f.rule))).map(|_| usize::MAX);
    let counted = (settled.iter()).map(|(_, s)| s.pending.unwrap_or(usize::MAX));
    every.chain(counted).max()
}

/// The per-object findings on a workload's replicas as the batch settles them (the one
/// verdict, `engine/verdict.rs`). A workload the batch places in full loses them: its pods
/// join NodeClaims that other pods opened, or nodes that already exist. A finding that says
/// every replica stays Pending, on a workload the batch leaves partly Pending, is restated
/// with the batch's count, and so is one whose own count of Pending replicas is not the
/// batch's (its arithmetic sees one pod template, not the pods placed beside it). A
/// workload left out of the batch keeps them as they are.
pub(crate) fn settle(
    settled: Vec<(Finding, Settle)>,
    workloads: &Workloads,
) -> impl Iterator<Item = Finding> + '_ {
    settled.into_iter().filter_map(|(mut f, s)| {
        let Some(b) = workloads.at(s.order).and_then(|w| w.batch.as_ref()) else {
            return Some(f);
        };
        if b.pending == 0 {
            return None;
        }
        let (restated, counted) = match s.pending {
            None => (b.pending < b.replicas, false),
            Some(pending) => (b.pending != pending, true),
        };
        if restated {
            let alone = match f.message.strip_prefix(NO_NODEPOOL_ALONE) {
                Some(rest) => format!("alone, {NO_NODEPOOL_ALONE}{rest}"),
                None if counted => format!("alone, {}", f.message),
                None => f.message.clone(),
            };
            f.message = format!(
                "{} of {} replicas stay Pending once every pod of the run is placed; {alone}",
                b.pending, b.replicas
            );
        }
        Some(f)
    })
}

/// The start of a finding on a pod template no NodePool takes.
const NO_NODEPOOL_ALONE: &str = "no NodePool can schedule this pod";

/// The rules that report a pod Karpenter would leave Pending.
const SCHEDULING_RULES: [&str; 7] = [
    incompatible_requirements::META.id,
    no_instance_type_fits::META.id,
    replicas_exceed_capacity::META.id,
    super::restricted_label_selector::META.id,
    super::unsatisfiable_pod_affinity::META.id,
    super::unsatisfiable_topology_spread::META.id,
    untolerated_taint::META.id,
];

/// [`batch_findings`] for one workload: on its replicas, with Karpenter's words for the
/// first Pending replica and the NodePool it names. A workload the per-template analysis
/// already reported under a scheduling rule (which names the field to change) gets no
/// second finding from the batch, unless the batch leaves it Pending on that same NodePool
/// at its limits or its topology, which Karpenter checks first ([`refused_first`]). A
/// workload whose per-object topology findings count its Pending replicas, and let the
/// others run, also gets the batch's finding when Karpenter's error for those replicas
/// starts with something else than topology (limits, a taint, requirements): both are to
/// fix.
fn batch_finding(sim: &Simulator, rule_meta: &RuleMeta, w: &WorkloadFacts) -> Option<Finding> {
    let b = w.batch.as_ref()?;
    // A pod no NodePool takes is reported by the per-template analysis, unless a static
    // node group could run it: then the batch, which fills those nodes first, decides.
    let judged_alone = match w.scheduling {
        Scheduling::Schedules(_) => true,
        Scheduling::Pending => w.static_capacity,
        Scheduling::Unknown | Scheduling::NotProvisioned => false,
    };
    // The per-object findings already count as many Pending replicas, unless they let
    // some replicas run (only the topology rules count) and the batch leaves the rest
    // Pending for another reason: Karpenter's error for them starts there (a NodePool's
    // limits, which it checks before the pod's topology; a higher-weight NodePool's taint;
    // the requirements of the node-affinity term it relaxed to), and that reason holds
    // them back as well. When the per-object findings leave no replica a place, their
    // reason is the one.
    let at_topology = (b.first.as_ref()).is_some_and(|(_, f)| f.stage() == Stage::Topology);
    let some_run = w.claimed.is_some_and(|c| c < b.replicas);
    let explained = w.claimed.is_some_and(|c| c >= b.pending) && (at_topology || !some_run);
    let refused = refused_first(w, b);
    if b.pending == 0 || w.context || !(judged_alone && !explained || refused.is_some()) {
        return None;
    }
    let named = refused.or_else(|| b.first.as_ref().map(|(pool, f)| (*pool, f)));
    let limits = named.is_some_and(|f| limits_cause(w, sim, f));
    let rule = batch_rule(named);
    if rule != rule_meta.id || w.reported.contains(&rule) {
        return None;
    }
    let span = w.replicas.map_or(w.name_span, |(_, span)| span);
    let head = format!(
        "{} of {} replicas stay Pending once every pod of the run is placed",
        b.pending, b.replicas
    );
    let Some((pool, failure)) = named else {
        return Some(
            rule_meta
                .finding(w, span, format!("{head}: {NO_NODEPOOL_LEFT}"))
                .label(BATCH_LABEL)
                .help("every NodePool's own requirements leave no instance type: loosen them"),
        );
    };
    let p = &sim.pools[pool];
    // Karpenter's words for a limits failure gain the numbers behind it.
    let over = limits.then(|| replicas_over_limit(sim, pool, b)).flatten();
    let shown = match &over {
        Some(over) if failure.stage() == Stage::Limits => over,
        _ => failure,
    };
    let help = match (limits, &over) {
        (true, Some(over)) => advice(over, &p.name).help,
        (true, None) => replicas_exceed_capacity::limits_spent(&p.name),
        (false, _) => advice(failure, &p.name).help,
    };
    let message = format!(
        "{head}: NodePool \"{}\": {}",
        p.name,
        shown.headline_on(&p.name, sim.version())
    );
    let note = format!(
        "NodePool \"{}\" (weight {}): {}",
        p.name,
        p.weight,
        shown.message_on(&p.name, sim.version())
    );
    let pool_span = match shown {
        Failure::ReplicasExceedLimit { resource, .. } => p.limit_spans.get(resource).copied(),
        _ if limits => p.limit_spans.values().next().copied(),
        Failure::Taint { taints, .. } => (p.taints.iter())
            .find(|(t, _)| taints.first() == Some(t))
            .map(|(_, span)| *span),
        _ => None,
    };
    Some(
        rule_meta
            .finding(w, span, message)
            .label(BATCH_LABEL)
            .help(help)
            .related(p.obj, pool_span.unwrap_or_else(|| p.name_span()), note),
    )
}

/// The NodePool a pod template the per-template analysis reported Pending on, when the
/// batch leaves its replicas Pending on that same NodePool at a stage Karpenter checks
/// before the one the analysis names, and Karpenter's failure there, whichever pool its
/// error starts with:
/// - its limits: the pods placed before it spent them, and Karpenter checks a NodePool's
///   limits before the pod. Raising the limits and the per-template fix are both needed.
/// - topology: a spread or (anti-)affinity term leaves the pod no domain, which Karpenter
///   finds before it filters the instance types (`NodeClaim.CanAdd` runs
///   `Topology.AddRequirements` first); the analysis of one pod, which has no topology,
///   names the instance types.
fn refused_first<'b>(w: &WorkloadFacts, b: &'b Batched) -> Option<(usize, &'b Failure)> {
    let pool = w
        .pending_on
        .filter(|_| w.scheduling == Scheduling::Pending)?;
    let failure = b.on_meant.as_ref()?;
    matches!(failure.stage(), Stage::Limits | Stage::Topology).then_some((pool, failure))
}

/// The label on the replicas of a workload the batch leaves partly Pending.
const BATCH_LABEL: &str = "not every replica gets a node";

/// How many NodePools that fail the same way get a note each, closest first.
const SAME_WAY_NOTES: usize = 3;
/// How many NodePools get a note each in all.
const POOL_NOTES: usize = 10;

/// The related notes of a pending pod: one per NodePool, closest first, grouped and capped.
/// NodePools whose failure reads the same but for the pool's name (a fleet of pools with
/// one taint) get a note each up to [`SAME_WAY_NOTES`], then one "and N more NodePools
/// fail the same way" note at the last one named; past [`POOL_NOTES`] notes in all, the
/// other failures are one "and N more NodePools fail in other ways" note at the last one
/// named. Uncapped, 600 pools × 600 pending workloads made 360,000 notes (240 MB of SARIF).
fn pool_notes<'s>(sim: &'s Simulator, failures: &[PoolFailure]) -> Vec<(&'s Object, Span, String)> {
    /// One way to fail: the failure message with a placeholder for the pool's name.
    struct Group {
        key: String,
        named: usize,
        more: usize,
        /// Index in `notes` of the last note of the group.
        last: usize,
    }
    let mut notes: Vec<(&Object, Span, String)> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut other_ways = 0;
    for fl in failures {
        let p = &sim.pools[fl.pool];
        let key = fl.failure.nameless_message(&p.name, sim.version());
        let g = match groups.iter().position(|g| g.key == key) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    key,
                    named: 0,
                    more: 0,
                    last: 0,
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[g];
        let full = notes.len() >= POOL_NOTES;
        if group.named > 0 && (group.named >= SAME_WAY_NOTES || full) {
            group.more += 1;
        } else if full {
            other_ways += 1;
        } else {
            group.named += 1;
            group.last = notes.len();
            let text = format!(
                "NodePool \"{}\" (weight {}): {}",
                p.name,
                p.weight,
                fl.failure.message_on(&p.name, sim.version())
            );
            notes.push((p.obj, fl.pool_span, text));
        }
    }
    let mut out = Vec::with_capacity(notes.len() + groups.len() + 1);
    let mut after: Vec<Vec<String>> = vec![Vec::new(); notes.len()];
    for g in groups.iter().filter(|g| g.more > 0) {
        after[g.last].push(format!("and {} the same way", more_pools(g.more)));
    }
    let last = notes.len().saturating_sub(1);
    for (i, (obj, span, text)) in notes.into_iter().enumerate() {
        out.push((obj, span, text));
        out.extend(after[i].drain(..).map(|t| (obj, span, t)));
        if i == last && other_ways > 0 {
            let text = format!("and {} in other ways", more_pools(other_ways));
            out.push((obj, span, text));
        }
    }
    out
}

/// "1 more NodePool fails", "N more NodePools fail".
fn more_pools(n: usize) -> String {
    if n == 1 {
        "1 more NodePool fails".to_string()
    } else {
        format!("{n} more NodePools fail")
    }
}

/// Whether a static node group (config `cluster.nodeGroups`, eksctl, Nodes) could run the
/// pod, as Karpenter's `addToExistingNode` would place it: its labels meet the pod's
/// requirements, the pod tolerates its taints, and its requests fit one node's allocatable
/// (when karplint knows it: the reported allocatable or the instance type's; otherwise it
/// is assumed to fit). Such a pod is not Pending even when no NodePool takes it.
pub(crate) fn static_capacity_takes(cx: &Context, obj: &Object) -> bool {
    let (Some(sim), false) = (&cx.sim, cx.cluster.node_groups.is_empty()) else {
        return false;
    };
    let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
        return false;
    };
    let admitted = sim.admitted();
    let Ok(attempts) = admitted.attempts(obj, spec) else {
        return false;
    };
    let tolerations = admitted.tolerations(obj, spec, cx.cluster.admission);
    let requests = admitted.requests(obj, spec, cx.cluster.karpenter).total;
    cx.cluster.node_groups.iter().any(|g| {
        g.taints.iter().all(|t| {
            t.effect == taints::Effect::PreferNoSchedule || taints::is_tolerated(&tolerations, t)
        }) && attempts
            .iter()
            .any(|a| g.matches(&a.requirements, cx.catalog))
            && g.node_allocatable(cx.catalog)
                .is_none_or(|alloc| requests.fits(&alloc).is_ok())
    })
}

/// Where a workload's pod template starts (its `spec:`), or the object name.
fn template_span(obj: &Object) -> Span {
    obj.workload()
        .and_then(|w| w.template.spec.as_ref())
        .map(|s| obj.span(s))
        .unwrap_or_else(|| obj.name_span())
}
