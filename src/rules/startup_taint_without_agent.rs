//! `startup-taint-without-agent`: a NodePool `startupTaints` entry that no DaemonSet in
//! the tree or context tolerates, so nothing runs on the new node to remove it and the
//! node never initialises (SPEC §4). Taints removed by agents that usually arrive as EKS
//! add-ons or built-in controllers (CSI node agents, node lifecycle, cloud provider) are
//! assumed handled, so following `missing-csi-startup-taint` never fires this rule.

use super::{Context, Rule};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::pod;
use crate::karpenter::taints::{self, Effect, Taint};
use crate::model::Kind;

declare_rule!(
    StartupTaintWithoutAgent,
    "startup-taint-without-agent",
    Warning,
    "NodePool startup taint that no DaemonSet tolerates: nothing removes it and nodes never initialise"
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
        let daemonsets: Vec<_> = cx
            .index
            .of_kind(Kind::DaemonSet)
            .filter_map(|o| Some(pod::tolerations(o.workload()?.pod_spec()?, cx.cluster.admission)))
            .collect();
        for o in cx.index.nodepools().filter(|o| !o.context) {
            let Some(np) = o.nodepool() else { continue };
            for t in &np.startup_taints {
                let key = t.key.value.as_str();
                if removed_outside_tree(key) {
                    continue;
                }
                let Ok(effect) = t.effect.value.parse::<Effect>() else {
                    continue;
                };
                let value = t
                    .value
                    .as_ref()
                    .map(|v| v.value.0.clone())
                    .unwrap_or_default();
                let taint = Taint::new(key, value, effect);
                if daemonsets
                    .iter()
                    .any(|tols| taints::is_tolerated(tols, &taint))
                {
                    continue;
                }
                out.push(
                    META.finding(o,
                        o.span(&t.key),
                        format!(
                            "startup taint `{taint}` of NodePool \"{}\" is tolerated by no DaemonSet in the linted files or --context, so nothing runs on the new node to remove it and the node never becomes ready for pods",
                            o.name()
                        ),
                    )
                    .label("no DaemonSet tolerates this startup taint")
                    .help(format!(
                        "deploy the agent that removes `{key}` (for `node.cilium.io/agent-not-ready`, the Cilium agent DaemonSet) and pass its manifest with --context, or remove the startup taint"
                    )),
                );
            }
        }
    }
}
