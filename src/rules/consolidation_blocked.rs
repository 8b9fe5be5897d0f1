//! `consolidation-blocked`: PodDisruptionBudgets, annotations and NodePool disruption
//! budgets that stop Karpenter from ever voluntarily disrupting the nodes their pods run on
//! or their pool launches (karpenter-model §7): consolidation and drift wait forever, and Karpenter
//! reports `DisruptionBlocked`.

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::Finding;
use crate::facts::{WorkloadFacts, Workloads};
use crate::index::selector_matches;
use crate::model::cluster::PdbSpec;
use crate::model::karpenter::{Budget, KarpenterApi, NodePool};
use crate::model::{Body, Kind, Object};

declare_rule!(
    ConsolidationBlocked,
    "consolidation-blocked",
    Warning,
    "PodDisruptionBudgets, do-not-disrupt annotations or NodePool budgets that keep Karpenter from ever disrupting a node: \"DisruptionBlocked\""
);

const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";

impl Rule for ConsolidationBlocked {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        if let Body::Workload(_) = &o.obj.body {
            out.extend(do_not_disrupt(o.obj));
            out.extend(daemonset_do_not_disrupt(o.obj, cx));
        }
    }

    /// Budgets select workloads: checked once every workload's facts are in.
    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        // What each budget selects, worked out once: every budget is compared with the
        // earlier ones of its namespace, and a tree of copies holds many.
        let selections = Selections(
            cx.index
                .of_kind(Kind::PodDisruptionBudget)
                .filter_map(|o| match &o.body {
                    Body::PodDisruptionBudget(p) => Some((o.id, selected(o, p, workloads))),
                    _ => None,
                })
                .collect(),
        );
        for obj in cx.index.of_kind(Kind::PodDisruptionBudget) {
            if let (false, Body::PodDisruptionBudget(pdb)) = (obj.context, &obj.body) {
                out.extend(blocking_pdb(obj, pdb, cx, &selections));
                out.extend(multiple_pdbs(obj, pdb, cx, &selections));
            }
        }
        for obj in cx.index.nodepools().filter(|o| !o.context) {
            // v1alpha5 Provisioners predate both the node annotation and budgets.
            let Some(np) = obj.nodepool().filter(|np| np.api != KarpenterApi::V1alpha5) else {
                continue;
            };
            out.extend(nodepool_do_not_disrupt(obj, np));
            out.extend(blocking_budget(obj, np));
        }
    }
}

/// Per budget (by object id), the workloads it selects.
struct Selections<'w>(std::collections::HashMap<usize, Selection<'w>>);

/// The workloads a budget selects whose pods Karpenter evicts, and whether it also selects
/// workloads whose pods Karpenter leaves on the node.
#[derive(Default)]
struct Selection<'w> {
    evicted: Vec<&'w WorkloadFacts>,
    kept: bool,
}

impl<'w> Selections<'w> {
    /// The workloads budget `pdb` selects whose pods Karpenter evicts.
    fn of(&self, pdb: &Object) -> &[&'w WorkloadFacts] {
        self.0.get(&pdb.id).map_or(&[], |s| s.evicted.as_slice())
    }

    /// Whether budget `pdb` selects workloads in the tree, none of whose pods Karpenter
    /// evicts: it is never consulted.
    fn never_consulted(&self, pdb: &Object) -> bool {
        self.0
            .get(&pdb.id)
            .is_some_and(|s| s.evicted.is_empty() && s.kept)
    }
}

/// The workloads the PDB selects, split by whether Karpenter evicts their pods when it
/// disrupts a node.
fn selected<'w>(obj: &Object, pdb: &PdbSpec, workloads: &'w Workloads) -> Selection<'w> {
    let Some(sel) = &pdb.selector else {
        // A null selector selects no pods.
        return Selection::default();
    };
    // DaemonSet pods are evicted and their budgets consulted like any other
    // (`StateNode.ValidatePodsDisruptable` reads every pod of the node).
    let drained = |w: &&WorkloadFacts| match w.kind {
        Kind::Job | Kind::CronJob => false,
        Kind::Crd(c) => c.long_running(),
        _ => true,
    };
    let ns = obj.effective_namespace();
    let beside: Vec<&WorkloadFacts> = (workloads.in_namespace_and_source(ns, obj.source))
        .filter(drained)
        .collect();
    // A budget written beside its workloads is about those: other files' workloads that
    // happen to share labels (independent examples in one tree) are not considered.
    let candidates: Vec<&WorkloadFacts> = if beside.is_empty() {
        workloads.in_namespace(ns).filter(drained).collect()
    } else {
        beside
    };
    let mut out = Selection::default();
    for w in candidates
        .into_iter()
        .filter(|w| selector_matches(sel, |k| w.pod_labels.get(k).map(|v| v.value.as_str())))
    {
        // Pods Karpenter does not evict (`IsEvictable`) never consult their budget
        // (`pkg/utils/pdb` `Limits.isEvictable`, core v1.14.3).
        if !w.evictable {
            out.kept = true;
            continue;
        }
        // The same workload in several files (kustomize overlays, per-environment copies)
        // counts once, with its largest replica count.
        match (out.evicted.iter_mut()).find(|o| o.kind == w.kind && o.name() == w.name()) {
            Some(o) if replicas(w) > replicas(o) => *o = w,
            Some(_) => {}
            None => out.evicted.push(w),
        }
    }
    out
}

fn replicas(w: &WorkloadFacts) -> Option<i64> {
    w.replicas.map(|(n, _)| n)
}

/// Is the workload the target of a HorizontalPodAutoscaler or KEDA ScaledObject?
fn autoscaled(w: &WorkloadFacts, cx: &Context) -> bool {
    cx.index
        .in_namespace(Kind::Autoscaler, &w.namespace)
        .any(|a| match &a.body {
            Body::Autoscaler(s) => {
                let r = &s.scale_target_ref;
                r.name.as_ref().is_some_and(|n| n.value == w.name())
                    && r.kind.as_ref().is_none_or(|k| k.value == w.kind_name())
            }
            _ => false,
        })
}

fn pdb_key(obj: &Object) -> String {
    format!("{}/{}", obj.effective_namespace(), obj.name())
}

fn blocking_pdb(
    obj: &Object,
    pdb: &PdbSpec,
    cx: &Context,
    selections: &Selections,
) -> Option<Finding> {
    if selections.never_consulted(obj) {
        return None;
    }
    let workloads = selections.of(obj);
    let (span, field, why) = if let Some(m) = pdb
        .max_unavailable
        .as_ref()
        .filter(|m| matches!(m.value.as_str().trim(), "0" | "0%"))
    {
        (
            obj.span(m),
            format!("maxUnavailable: {}", m.value),
            "allows no pod to be evicted".to_string(),
        )
    } else if let Some(m) = pdb.min_available.as_ref() {
        let v = m.value.as_str().trim();
        if v == "100%" {
            (
                obj.span(m),
                format!("minAvailable: {v}"),
                "keeps every pod available".to_string(),
            )
        } else {
            let min = IntOrPercent::parse(v)?;
            let total = judged_pods(workloads, min, cx)?;
            let desired = min.scaled(total);
            if desired < total {
                return None;
            }
            let why = match min {
                IntOrPercent::Int(n) => {
                    format!("requires {n} available pod(s) and the selected workloads run {total}")
                }
                IntOrPercent::Percent(_) => format!(
                    "requires {v} of the {total} pod(s) the selected workloads run, which rounds up to {desired}"
                ),
            };
            (obj.span(m), format!("minAvailable: {v}"), why)
        }
    } else {
        return None;
    };
    let key = pdb_key(obj);
    let mut f = META.finding(obj,
        span,
        format!(
            "PodDisruptionBudget {why} ({field}): Karpenter cannot drain nodes running these pods and reports DisruptionBlocked \"Pdb prevents pod evictions (PodDisruptionBudget=[{key}])\""
        ),
    )
    .label("allows no disruption")
    .help("allow at least one disruption: set `maxUnavailable: 1` (or a `minAvailable` below the replicas), so Karpenter can consolidate, replace drifted and expire nodes one pod at a time");
    for &w in workloads {
        let span = w.replicas.map_or(w.name_span, |(_, span)| span);
        f = f.related(
            w,
            span,
            format!(
                "{} \"{}\" is selected by this budget{}",
                w.kind_name(),
                w.name(),
                match w.kind {
                    Kind::DaemonSet => ": it runs a pod on every node it fits, so none of them is disrupted",
                    _ => "",
                }
            ),
        );
    }
    Some(f)
}

/// A budget's `minAvailable` or `maxUnavailable`: a number of pods or a percentage of the
/// pods its selected controllers expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IntOrPercent {
    Int(i64),
    Percent(i64),
}

impl IntOrPercent {
    /// `2` or `"90%"`; anything else (which the API server rejects) is `None`.
    fn parse(v: &str) -> Option<IntOrPercent> {
        match v.strip_suffix('%') {
            Some(p) => p.parse().ok().map(IntOrPercent::Percent),
            None => v.parse().ok().map(IntOrPercent::Int),
        }
    }

    /// The number of pods it stands for out of `total`, a percentage rounded up, as the
    /// disruption controller scales both fields (`intstr.GetScaledValueFromIntOrPercent`
    /// with `roundUp` true, `pkg/controller/disruption` `getExpectedPodCount`).
    fn scaled(self, total: i64) -> i64 {
        match self {
            IntOrPercent::Int(n) => n,
            IntOrPercent::Percent(p) => p.saturating_mul(total).saturating_add(99).div_euclid(100),
        }
    }
}

/// The pods of the budget's workloads when all are known: workloads that state their
/// replicas and that no autoscaler scales. A bare Pod counts one for an integer; a
/// percentage scales over the pods' controllers, which a bare Pod lacks, so it is not
/// judged then.
fn judged_pods(workloads: &[&WorkloadFacts], min: IntOrPercent, cx: &Context) -> Option<i64> {
    let mut total = 0i64;
    for w in workloads {
        if autoscaled(w, cx) {
            return None;
        }
        total += match (w.kind, min) {
            (Kind::Pod, IntOrPercent::Int(_)) => 1,
            _ => replicas(w)?,
        };
    }
    (total > 0).then_some(total)
}

/// A later PDB selecting pods an earlier one selects: Karpenter cannot evict them.
fn multiple_pdbs(
    obj: &Object,
    pdb: &PdbSpec,
    cx: &Context,
    selections: &Selections,
) -> Option<Finding> {
    let mine = selections.of(obj);
    if mine.is_empty() {
        return None;
    }
    let other = cx
        .index
        .in_namespace(Kind::PodDisruptionBudget, obj.effective_namespace())
        // Copies of this same budget (overlays) are not a second budget.
        .filter(|o| o.id < obj.id && o.name() != obj.name())
        .find_map(|o| {
            let theirs = selections.of(o);
            let shared = mine.iter().find(|w| theirs.iter().any(|t| t.id == w.id))?;
            Some((o, *shared))
        })?;
    let (o, w) = other;
    let span = pdb
        .selector
        .as_ref()
        .and_then(|s| {
            s.match_labels
                .0
                .first()
                .map(|(k, _)| obj.span(k))
                .or_else(|| s.match_expressions.first().map(|e| obj.span(&e.key)))
        })
        .unwrap_or_else(|| obj.name_span());
    Some(
        META.finding(obj,
            span,
            format!(
                "pods of {} \"{}\" are selected by two PodDisruptionBudgets: the eviction API refuses them and Karpenter reports DisruptionBlocked \"Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{} {}])\"",
                w.kind_name(),
                w.name(),
                pdb_key(o),
                pdb_key(obj)
            ),
        )
        .label("selects pods another budget also selects")
        .help(format!(
            "keep one PodDisruptionBudget per set of pods: narrow this selector or merge it with PodDisruptionBudget \"{}\"",
            o.name()
        ))
        .related(o, o.name_span(), "the other PodDisruptionBudget selecting the same pods")
        .related(w, w.name_span, "the pods both budgets select"),
    )
}

/// `karpenter.sh/do-not-disrupt: "true"` on the pods of a workload that runs indefinitely.
fn do_not_disrupt(obj: &Object) -> Option<Finding> {
    if !obj.kind.runs_indefinitely() {
        return None;
    }
    let (k, v) = obj
        .workload()?
        .template
        .metadata
        .annotations
        .entry(DO_NOT_DISRUPT)?;
    if v.value.as_str() != "true" {
        return None;
    }
    let ns = obj.effective_namespace();
    Some(
        META.finding(obj,
            obj.span(k),
            format!(
                "every pod of this {} is annotated {DO_NOT_DISRUPT}: \"true\" and runs indefinitely, so Karpenter never consolidates, replaces or expires the nodes they run on and reports DisruptionBlocked \"Pod has \\\"{DO_NOT_DISRUPT}\\\" annotation (Pod={ns}/<pod>)\"",
                obj.kind_name
            ),
        )
        .label("blocks disruption of the node for the pod's whole life")
        .help(format!(
            "remove the annotation and protect the pods with a PodDisruptionBudget (`maxUnavailable: 1`); keep `{DO_NOT_DISRUPT}` for pods that finish (Jobs), or give it a duration such as \"4h\" on Karpenter versions that accept one"
        )),
    )
}

/// `karpenter.sh/do-not-disrupt: "true"` on a DaemonSet's pods: one runs on every node the
/// DaemonSet fits, and Karpenter lets DaemonSet and mirror pods block disruption like any
/// other (`StateNode.ValidatePodsDisruptable`, `pkg/utils/pod` `IsDisruptable`, core
/// v1.14.3). Quiet when the run's NodePools are known and the DaemonSet runs on none.
fn daemonset_do_not_disrupt(obj: &Object, cx: &Context) -> Option<Finding> {
    if obj.kind != Kind::DaemonSet {
        return None;
    }
    let (k, v) = (obj.workload()?.template.metadata.annotations).entry(DO_NOT_DISRUPT)?;
    if v.value.as_str() != "true" {
        return None;
    }
    let pools: Vec<&Object> = match &cx.sim {
        Some(sim) => (sim.pools.iter().enumerate())
            .filter(|(i, _)| sim.daemonset_runs_on(*i, obj))
            .map(|(_, p)| p.obj)
            .collect(),
        None => Vec::new(),
    };
    if cx.sim.is_some() && pools.is_empty() {
        return None;
    }
    let ns = obj.effective_namespace();
    let mut f = META
        .finding(obj,
            obj.span(k),
            format!(
                "every pod of this DaemonSet is annotated {DO_NOT_DISRUPT}: \"true\" and the DaemonSet runs one on each node it fits, so Karpenter never consolidates or replaces a drifted node it runs on and reports DisruptionBlocked \"Pod has \\\"{DO_NOT_DISRUPT}\\\" annotation (Pod={ns}/<pod>)\""
            ),
        )
        .label("blocks disruption of every node the DaemonSet runs on")
        .help(format!(
            "remove `{DO_NOT_DISRUPT}` from the DaemonSet's pod template: when Karpenter drains a node it evicts DaemonSet pods after the other pods of the same criticality"
        ));
    for p in pools {
        f = f.related(
            p,
            p.name_span(),
            format!("the DaemonSet runs on the nodes of NodePool \"{}\"", p.name()),
        );
    }
    Some(f)
}

/// `karpenter.sh/do-not-disrupt: "true"` in a NodePool's template annotations: every node
/// the pool launches carries it (`NodeClaimTemplate.ToNodeClaim`), and Karpenter never
/// picks such a node for voluntary disruption (`StateNode.ValidateNodeDisruptable`, core
/// v1.14.3). Expiration is forceful in v1 and still replaces them.
fn nodepool_do_not_disrupt(obj: &Object, np: &NodePool) -> Option<Finding> {
    let (_, v) = np.template_annotations.entry(DO_NOT_DISRUPT)?;
    if v.value.as_str() != "true" {
        return None;
    }
    Some(
        META.finding(obj,
            obj.span(v),
            format!(
                "NodePool \"{}\" annotates every node it launches {DO_NOT_DISRUPT}: \"true\", so Karpenter never consolidates or replaces a drifted node of this pool and reports DisruptionBlocked \"Disruption is blocked through the \\\"{DO_NOT_DISRUPT}\\\" annotation\"",
                obj.name()
            ),
        )
        .label("blocks voluntary disruption of all the pool's nodes")
        .help(format!(
            "remove `{DO_NOT_DISRUPT}` from `spec.template.metadata.annotations`: annotate the pods that must not be interrupted instead, or limit disruption with `spec.disruption.budgets`"
        )),
    )
}

/// The voluntary disruption reasons a NodePool budget can name (v1 `DisruptionReason`).
const REASONS: [&str; 3] = ["Underutilized", "Empty", "Drifted"];

/// A budget that is always active (neither `schedule` nor `duration`) and allows 0 nodes.
/// Mirrors `Budget.GetAllowedDisruptions` (core v1.14.3): an active budget allows its
/// `nodes`, a percentage of the pool's nodes rounded up, so only 0 and 0% allow none;
/// `nodes` defaults to 10%.
fn always_zero(b: &Budget) -> bool {
    if b.schedule.is_some() || b.duration.is_some() {
        return false;
    }
    let Some(n) = &b.nodes else { return false };
    let v = n.value.as_str().trim();
    v.strip_suffix('%')
        .unwrap_or(v)
        .parse::<u64>()
        .is_ok_and(|n| n == 0)
}

/// Always-active budgets of 0 nodes that together cover every disruption reason: a budget
/// without `reasons` limits them all, and each reason's allowance is the minimum over the
/// budgets that name it (`NodePool.GetAllowedDisruptionsByReason`, core v1.14.3).
fn blocking_budget(obj: &Object, np: &NodePool) -> Option<Finding> {
    let zero: Vec<&Budget> = np.disruption.budgets.iter().filter(|b| always_zero(b)).collect();
    let covers_all = || {
        REASONS.iter().all(|r| {
            zero.iter()
                .any(|b| b.reasons.iter().flatten().any(|x| x.value == *r))
        })
    };
    let budget = match zero.iter().find(|b| b.reasons.is_none()) {
        Some(b) => b,
        None if covers_all() => zero.first()?,
        None => return None,
    };
    let nodes = budget.nodes.as_ref()?;
    let why = if budget.reasons.is_none() {
        "it applies to every disruption reason"
    } else {
        "with the pool's other such budgets it covers every disruption reason (Empty, Drifted, Underutilized)"
    };
    Some(
        META.finding(obj,
            obj.span(nodes),
            format!(
                "disruption budget `nodes: \"{}\"` has no schedule, so it is always active, and {why}: Karpenter never consolidates or replaces a drifted node of NodePool \"{}\" and reports DisruptionBlocked \"No allowed disruptions for disruption reason Underutilized due to blocking budget\" (and likewise for Empty and Drifted)",
                nodes.value.as_str(),
                obj.name()
            ),
        )
        .label("allows no voluntary disruption, at any time")
        .help("give the budget a `schedule` and `duration` for the window when disruption must stop, limit it to some `reasons`, or allow at least one node (`nodes: \"1\"`)"),
    )
}

#[cfg(test)]
mod tests {
    use super::IntOrPercent;

    /// apimachinery `intstr` `TestGetScaledValueFromIntOrPercent` (the `roundUp` rows the
    /// disruption controller uses), with the budgets of three pods from its tests.
    #[test]
    fn get_scaled_value_from_int_or_percent_rounds_up() {
        for (value, total, want) in [
            ("90%", 3, 3),
            ("50%", 3, 2),
            ("10%", 3, 1),
            ("50%", 1, 1),
            ("0%", 3, 0),
            ("100%", 3, 3),
            ("2", 3, 2),
        ] {
            let got = IntOrPercent::parse(value).map(|v| v.scaled(total));
            assert_eq!(got, Some(want), "{value} of {total}");
        }
        assert_eq!(IntOrPercent::parse("half"), None);
    }
}
