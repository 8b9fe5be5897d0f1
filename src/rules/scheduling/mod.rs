//! Scheduling rules: why Karpenter would leave a pod Pending, one rule per stage at which
//! its scheduler rejects a pod on a NodePool (SPEC §3.3).
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

use super::{Context, Placed, RuleMeta};
use crate::diagnostic::Finding;
use crate::karpenter::sim::{Failure, Stage, Verdict};
use crate::karpenter::{pod, taints};
use crate::model::{Object, Span};

/// The rule that reports a pod no NodePool takes, by the stage at which the closest pool
/// rejected it.
fn rule(stage: Stage) -> &'static str {
    match stage {
        Stage::Taints => untolerated_taint::META.id,
        Stage::Requirements => incompatible_requirements::META.id,
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
        Failure::Taint { taint, .. } => untolerated_taint::advice(taint, nodepool),
        Failure::Requirements(e) => incompatible_requirements::advice(e, nodepool),
        Failure::NoTypeMeetsRequirements { .. } => {
            no_instance_type_fits::no_type_meets_requirements(nodepool)
        }
        Failure::NotEnoughResources { largest, .. } => {
            no_instance_type_fits::not_enough_resources(largest, nodepool)
        }
        Failure::AllTypesExceedLimits => {
            replicas_exceed_capacity::all_types_exceed_limits(nodepool)
        }
        Failure::ReplicasExceedLimit {
            resource, demand, ..
        } => replicas_exceed_capacity::replicas_exceed_limit(resource, *demand, nodepool),
    }
}

/// The finding of a rule for a pod template no NodePool takes, when the closest pool
/// failed at the rule's stage: primary label on the pod field to change, every pool's
/// reason as a related note.
fn pending_finding(cx: &Context, rule_meta: &RuleMeta, o: &Placed) -> Option<Finding> {
    let obj = o.obj;
    let (Some(sim), Some(Verdict::Pending(failures))) = (&cx.sim, o.verdict()) else {
        return None;
    };
    let first = failures.first()?;
    let stage = first.failure.stage();
    if rule(stage) != rule_meta.id || static_capacity_takes(cx, obj) {
        return None;
    }
    let pool = &sim.pools[first.pool];
    let span = first.pod_span.unwrap_or_else(|| template_span(obj));
    let message = format!(
        "no NodePool can schedule this pod: NodePool \"{}\": {}",
        pool.name,
        first.failure.headline(&pool.name)
    );
    let Advice { label, mut help } = advice(&first.failure, &pool.name);
    // A tainted pool that got no further is often the intended one (a GPU pool).
    let tainted = failures.iter().skip(1).find(|f| {
        stage != Stage::Taints
            && matches!(
                f.failure,
                Failure::Taint {
                    fits_if_tolerated: true,
                    ..
                }
            )
    });
    if let Some(t) = tainted {
        let nodepool = &sim.pools[t.pool].name;
        help.push_str(&format!("; or, {}", advice(&t.failure, nodepool).help));
    }
    let mut f = rule_meta
        .finding(obj, span, message)
        .label(label)
        .help(help);
    for fl in failures {
        let p = &sim.pools[fl.pool];
        f = f.related(
            p.obj,
            fl.pool_span,
            format!(
                "NodePool \"{}\" (weight {}): {}",
                p.name,
                p.weight,
                fl.failure.karpenter_message(&p.name)
            ),
        );
    }
    Some(f)
}

/// Whether a static node group (config `cluster.nodeGroups`, eksctl, Nodes) could run the
/// pod: its labels meet the pod's requirements and the pod tolerates its taints. Such a
/// pod is not Pending even when no NodePool takes it.
fn static_capacity_takes(cx: &Context, obj: &Object) -> bool {
    let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
        return false;
    };
    let Ok(attempts) = pod::attempts(obj, spec) else {
        return false;
    };
    let tolerations = pod::tolerations(spec);
    cx.cluster.node_groups.iter().any(|g| {
        g.taints.iter().all(|t| {
            t.effect == taints::Effect::PreferNoSchedule || taints::is_tolerated(&tolerations, t)
        }) && attempts
            .iter()
            .any(|a| g.matches(&a.requirements, cx.catalog))
    })
}

/// Where a workload's pod template starts (its `spec:`), or the object name.
fn template_span(obj: &Object) -> Span {
    obj.workload()
        .and_then(|w| w.template.spec.as_ref())
        .map(|s| obj.span(s))
        .unwrap_or_else(|| obj.name_span())
}
