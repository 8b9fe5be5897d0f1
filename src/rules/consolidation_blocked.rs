//! `consolidation-blocked`: PodDisruptionBudgets and annotations that stop Karpenter from
//! ever voluntarily disrupting the nodes their pods run on (SPEC §7): consolidation, drift
//! and expiration wait forever, and Karpenter reports `DisruptionBlocked`.

use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::Finding;
use crate::facts::{WorkloadFacts, Workloads};
use crate::index::selector_matches;
use crate::model::cluster::PdbSpec;
use crate::model::{Body, Kind, Object};

declare_rule!(
    ConsolidationBlocked,
    "consolidation-blocked",
    Warning,
    "PodDisruptionBudgets or do-not-disrupt annotations that keep Karpenter from ever disrupting a node: \"DisruptionBlocked\""
);

const DO_NOT_DISRUPT: &str = "karpenter.sh/do-not-disrupt";

impl Rule for ConsolidationBlocked {
    fn check_object(&self, o: &Placed, _cx: &Context, out: &mut Findings) {
        if let Body::Workload(_) = &o.obj.body {
            out.extend(do_not_disrupt(o.obj));
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
    }
}

/// Per budget (by object id), the workloads it selects.
struct Selections<'w>(std::collections::HashMap<usize, Vec<&'w WorkloadFacts>>);

impl<'w> Selections<'w> {
    /// The workloads budget `pdb` selects.
    fn of(&self, pdb: &Object) -> &[&'w WorkloadFacts] {
        self.0.get(&pdb.id).map_or(&[], Vec::as_slice)
    }
}

/// Workloads whose pods Karpenter evicts when it disrupts a node, selected by the PDB.
fn selected<'w>(obj: &Object, pdb: &PdbSpec, workloads: &'w Workloads) -> Vec<&'w WorkloadFacts> {
    let Some(sel) = &pdb.selector else {
        // A null selector selects no pods.
        return Vec::new();
    };
    let evicted =
        |w: &&WorkloadFacts| match w.kind {
            Kind::DaemonSet | Kind::Job | Kind::CronJob => false,
            Kind::Crd(c) => c.long_running(),
            _ => true,
        };
    let ns = obj.effective_namespace();
    let beside: Vec<&WorkloadFacts> = (workloads.in_namespace_and_source(ns, obj.source))
        .filter(evicted)
        .collect();
    // A budget written beside its workloads is about those: other files' workloads that
    // happen to share labels (independent examples in one tree) are not considered.
    let candidates: Vec<&WorkloadFacts> = if beside.is_empty() {
        workloads.in_namespace(ns).filter(evicted).collect()
    } else {
        beside
    };
    let mut out: Vec<&'w WorkloadFacts> = Vec::new();
    for w in candidates
        .into_iter()
        .filter(|w| selector_matches(sel, |k| w.pod_labels.get(k).map(|v| v.value.as_str())))
    {
        // The same workload in several files (kustomize overlays, per-environment copies)
        // counts once, with its largest replica count.
        match out
            .iter_mut()
            .find(|o| o.kind == w.kind && o.name() == w.name())
        {
            Some(o) if replicas(w) > replicas(o) => *o = w,
            Some(_) => {}
            None => out.push(w),
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
            let n: i64 = v.parse().ok()?;
            // Only workloads that state their replicas and that no autoscaler scales are
            // judged.
            let mut total = 0i64;
            for w in workloads {
                if autoscaled(w, cx) {
                    return None;
                }
                total += match w.kind {
                    Kind::Pod => 1,
                    _ => replicas(w)?,
                };
            }
            if workloads.is_empty() || total == 0 || n < total {
                return None;
            }
            (
                obj.span(m),
                format!("minAvailable: {n}"),
                format!("requires {n} available pod(s) and the selected workloads run {total}"),
            )
        }
    } else {
        return None;
    };
    if !workloads.is_empty() && workloads.iter().all(|w| w.kind == Kind::DaemonSet) {
        return None;
    }
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
                "{} \"{}\" is selected by this budget",
                w.kind_name(),
                w.name()
            ),
        );
    }
    Some(f)
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
