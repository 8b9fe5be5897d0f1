//! `karpenter-label-on-static-node`: a node Karpenter does not manage (a node-group node, a
//! Node with node-group labels) that carries Karpenter's `karpenter.sh/nodepool` or
//! `karpenter.sh/provisioner-name` label.

use super::{Context, Rule};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::cluster::{GroupSource, LABEL_PROVISIONER_NAME};
use crate::karpenter::requirements::LABEL_NODEPOOL;

declare_rule!(
    KarpenterLabelOnStaticNode,
    "karpenter-label-on-static-node",
    Error,
    "a node group or Node outside Karpenter labelled karpenter.sh/nodepool (or provisioner-name)"
);

impl Rule for KarpenterLabelOnStaticNode {
    fn check_run(&self, cx: &Context, _workloads: &Workloads, out: &mut Vec<Finding>) {
        for g in &cx.cluster.node_groups {
            let Some(origin) = &g.origin else { continue };
            let Some(obj) = cx.index.objects().get(origin.object) else {
                continue;
            };
            for key in [LABEL_NODEPOOL, LABEL_PROVISIONER_NAME] {
                let Some(value) = g.labels.get(key) else {
                    continue;
                };
                let span = origin.label_keys.get(key).copied().unwrap_or(origin.name);
                let (what, help) = match g.source {
                    GroupSource::Node => (
                        format!("Node \"{}\"", g.name),
                        format!("remove the label: `kubectl label nodes {} {key}-`", g.name),
                    ),
                    _ => (
                        format!(
                            "{} \"{}\"",
                            if g.source == GroupSource::ManagedNodeGroup {
                                "managed node group"
                            } else {
                                "node group"
                            },
                            g.name
                        ),
                        format!(
                            "remove `{key}` from the node group's `labels`, and from its running nodes: `kubectl label nodes -l alpha.eksctl.io/nodegroup-name={} {key}-`",
                            g.name
                        ),
                    ),
                };
                out.push(
                    META.finding(obj,
                        span,
                        format!(
                            "{what} is not managed by Karpenter but is labelled {key}={value}: Karpenter{} controller pods (which require {key} DoesNotExist) will not run on it, and Karpenter treats it as a node of {} \"{value}\"",
                            if key == LABEL_NODEPOOL { "'s" } else { " v0.37 and older's" },
                            if key == LABEL_NODEPOOL { "NodePool" } else { "Provisioner" },
                        ),
                    )
                    .label("Karpenter's label on a node outside Karpenter")
                    .help(help),
                );
            }
        }
    }
}
