//! `startup-taint-without-agent`: a NodePool `startupTaints` entry that no DaemonSet in
//! the tree or context both tolerates and runs on the pool's nodes, so nothing runs on the
//! new node to remove it and the node never initialises (karpenter-model §4). Taints removed by
//! agents that usually arrive as EKS add-ons or built-in controllers (CSI node agents, node
//! lifecycle, cloud provider) are assumed handled, so following `missing-csi-startup-taint` never
//! fires this rule.

use super::{Context, Rule};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::pod;
use crate::karpenter::taints::{self, Taint, Toleration};
use crate::model::karpenter::Taint as ModelTaint;
use crate::model::{Kind, Object};

declare_rule!(
    StartupTaintWithoutAgent,
    "startup-taint-without-agent",
    Warning,
    "NodePool startup taint that no DaemonSet running on the pool's nodes tolerates: nothing removes it and nodes never initialise"
);

/// Startup taints whose remover is assumed to run outside the linted files.
pub fn removed_outside_tree(key: &str) -> bool {
    let (domain, name) = key.split_once('/').unwrap_or(("", key));
    // EBS, EFS, FSx and S3 CSI node agents (EKS add-ons) all use `<driver>/agent-not-ready`.
    (domain.ends_with("csi.aws.com") && name == "agent-not-ready")
        // The node lifecycle controller and kubelet.
        || domain == "node.kubernetes.io"
        // The cloud controller manager.
        || domain == "node.cloudprovider.kubernetes.io"
        // Karpenter's own taints, and the node readiness controller's convention.
        || domain == "karpenter.sh"
        || domain == "readiness.k8s.io"
}

impl Rule for StartupTaintWithoutAgent {
    fn check_run(&self, cx: &Context, _workloads: &Workloads, out: &mut Vec<Finding>) {
        let daemonsets: Vec<(&Object, Vec<Toleration>)> = cx
            .index
            .of_kind(Kind::DaemonSet)
            .filter_map(|o| {
                let tols = pod::tolerations(o.workload()?.pod_spec()?, cx.cluster.admission);
                Some((o, tols))
            })
            .collect();
        for o in cx.index.nodepools().filter(|o| !o.context) {
            let Some(np) = o.nodepool() else { continue };
            // The simulator's pool for this NodePool (static pools have none).
            let pool = (cx.sim.as_ref())
                .and_then(|sim| Some((sim, sim.pools.iter().position(|p| p.obj.id == o.id)?)));
            for t in &np.startup_taints {
                let key = t.key.value.as_str();
                if removed_outside_tree(key) {
                    continue;
                }
                let Some(taint) = taints::from_model(t) else {
                    continue;
                };
                let tolerating: Vec<&Object> = (daemonsets.iter())
                    .filter(|(_, tols)| taints::is_tolerated(tols, &taint))
                    .map(|(ds, _)| *ds)
                    .collect();
                // The agent must also run on the pool's nodes: its node selector, affinity
                // and tolerations of the pool's taints, as its overhead is counted
                // (core `isDaemonPodCompatible`).
                let runs_on_pool =
                    |ds: &&Object| pool.is_none_or(|(sim, i)| sim.daemonset_runs_on(i, ds));
                if tolerating.iter().any(runs_on_pool) {
                    continue;
                }
                out.push(finding(o, t, &taint, tolerating.first().copied()));
            }
        }
    }
}

/// The finding for startup taint `t` of NodePool `o`: `off_pool` tolerates it but does not
/// run on the pool's nodes.
fn finding(o: &Object, t: &ModelTaint, taint: &Taint, off_pool: Option<&Object>) -> Finding {
    let key = t.key.value.as_str();
    let help = format!(
        "deploy the agent that removes `{key}` (for `node.cilium.io/agent-not-ready`, the Cilium agent DaemonSet) and pass its manifest with --context, or remove the startup taint"
    );
    let Some(ds) = off_pool else {
        return META
            .finding(o,
                o.span(&t.key),
                format!(
                    "startup taint `{taint}` of NodePool \"{}\" is tolerated by no DaemonSet in the linted files or --context, so nothing runs on the new node to remove it and the node never becomes ready for pods",
                    o.name()
                ),
            )
            .label("no DaemonSet tolerates this startup taint")
            .help(help);
    };
    META.finding(o,
        o.span(&t.key),
        format!(
            "startup taint `{taint}` of NodePool \"{}\" is tolerated by DaemonSet \"{}\", but its node selector, affinity or tolerations keep it off this pool's nodes, so nothing runs on the new node to remove the taint and the node never becomes ready for pods",
            o.name(),
            ds.name()
        ),
    )
    .label("no DaemonSet that runs on this pool's nodes tolerates this startup taint")
    .help(format!(
        "let DaemonSet \"{}\" run on the pool's nodes (its nodeSelector, node affinity and tolerations against the pool's labels, requirements and taints), or deploy an agent that does",
        ds.name()
    ))
    .related(ds, ds.name_span(), "tolerates the startup taint but does not run on the pool's nodes")
}
