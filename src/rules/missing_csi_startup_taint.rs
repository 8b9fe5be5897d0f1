//! `missing-csi-startup-taint`: a NodePool that hosts pods with EBS volumes but lacks the
//! `ebs.csi.aws.com/agent-not-ready:NoExecute` startup taint, so pods land before the EBS
//! CSI node agent can attach their volumes (karpenter-model §8, Karpenter troubleshooting guide).

use super::{Context, Rule};
use crate::diagnostic::{Finding, Related};
use crate::facts::Workloads;
use crate::facts::{Scheduling, WorkloadFacts};
use crate::model::karpenter::KarpenterApi;
use std::collections::BTreeMap;

declare_rule!(
    MissingCsiStartupTaint,
    "missing-csi-startup-taint",
    Warning,
    "NodePool hosting pods with EBS volumes lacks the ebs.csi.aws.com/agent-not-ready startup taint"
);

/// The taint the EBS CSI node agent removes once it is ready.
pub const EBS_AGENT_TAINT: &str = "ebs.csi.aws.com/agent-not-ready";

impl Rule for MissingCsiStartupTaint {
    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        let Some(sim) = &cx.sim else { return };
        // Pool index → workloads with EBS volumes that land there.
        let mut by_pool: BTreeMap<usize, Vec<&WorkloadFacts>> = BTreeMap::new();
        for w in workloads.iter().filter(|w| !w.context) {
            if let Scheduling::Schedules(p) = w.scheduling
                && w.claims.iter().any(|c| c.ebs)
            {
                by_pool.entry(p).or_default().push(w);
            }
        }
        for (i, workloads) in by_pool {
            let pool = &sim.pools[i];
            // EKS Auto Mode runs its own block storage driver and readiness handling.
            if pool.np.is_eks_auto_mode()
                || pool
                    .np
                    .startup_taints
                    .iter()
                    .any(|t| t.key.value == EBS_AGENT_TAINT)
            {
                continue;
            }
            let field = if pool.np.api == KarpenterApi::V1alpha5 {
                "spec.startupTaints"
            } else {
                "spec.template.spec.startupTaints"
            };
            let span = pool
                .np
                .startup_taints
                .first()
                .map(|t| pool.obj.span(&t.key))
                .unwrap_or_else(|| pool.name_span());
            let message = format!(
                "NodePool \"{}\" hosts pods with EBS volumes but has no `{EBS_AGENT_TAINT}` startup taint: pods can start before the EBS CSI node agent is ready and fail to attach their volumes",
                pool.name
            );
            let label = format!("no `{EBS_AGENT_TAINT}:NoExecute` startup taint");
            let help = format!(
                "add to `{field}`:\n- key: {EBS_AGENT_TAINT}\n  effect: NoExecute\n(the EBS CSI node agent removes it once it can attach volumes)"
            );
            // A NodePool read with --context is not reported on: the finding stands on the
            // first linted workload that lands there, which is what the run is about.
            let (mut f, others) = match (pool.obj.context, workloads.split_first()) {
                (true, Some((first, others))) => (
                    META.finding(*first, first.name_span, message)
                        .label(format!(
                            "mounts EBS volumes on NodePool \"{}\" (read with --context)",
                            pool.name
                        ))
                        .related(pool.obj, span, label),
                    others,
                ),
                _ => (META.finding(pool.obj, span, message).label(label), &workloads[..]),
            };
            f = f.help(help);
            f = f.related_capped(
                others,
                5,
                |w| {
                    Related::on(
                        *w,
                        w.name_span,
                        format!(
                            "{} \"{}\" mounts EBS volumes and lands here",
                            w.kind_name(),
                            w.name()
                        ),
                    )
                },
                |n| format!("and {n} more workload(s) that mount EBS volumes land here"),
            );
            out.push(f);
        }
    }
}
