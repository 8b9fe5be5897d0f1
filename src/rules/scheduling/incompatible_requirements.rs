//! `incompatible-requirements`: the pod's node selectors or required affinity conflict with every NodePool's requirements

use super::Advice;
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::requirements::IncompatibleError;
use crate::rules::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    IncompatibleRequirements,
    "incompatible-requirements",
    Error,
    "pod nodeSelector/affinity incompatible with every NodePool: Karpenter's \"incompatible requirements\""
);

impl Rule for IncompatibleRequirements {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        super::pending_finding(cx, &META, o, out);
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        super::batch_findings(cx, &META, workloads, out);
    }
}

/// Labels EKS and eksctl put on the nodes of groups outside Karpenter
/// (`eks.amazonaws.com/nodegroup`, `eks.amazonaws.com/capacityType`,
/// `alpha.eksctl.io/nodegroup-name`, …): advising an `Exists` requirement on an unrelated
/// NodePool for them would make Karpenter's nodes pose as the group's.
fn names_static_capacity(key: &str) -> bool {
    key.starts_with("eks.amazonaws.com/") || key.starts_with("alpha.eksctl.io/")
}

/// The pod's requirements are incompatible with NodePool `nodepool`'s: either no NodePool
/// defines the label, or the pool allows other values.
pub(super) fn advice(e: &IncompatibleError, nodepool: &str) -> Advice {
    let key = e.key();
    match e {
        IncompatibleError::UndefinedLabel { .. } if names_static_capacity(key) => Advice {
            label: "a label only nodes outside Karpenter carry",
            help: format!(
                "\"{key}\" is set by EKS or eksctl on node groups Karpenter does not manage, never on Karpenter nodes: remove the selector to let Karpenter place the pod, or, if the pod must run on that node group, declare the group under `cluster.nodeGroups` in .karplint.yaml (or lint its eksctl ClusterConfig) so karplint sees the capacity"
            ),
        },
        IncompatibleError::UndefinedLabel { .. } => Advice {
            label: "no NodePool defines this label",
            help: format!(
                "no NodePool defines label \"{key}\", so Karpenter cannot launch a node that has it: remove the selector (managed node group labels such as `eks.amazonaws.com/nodegroup` do not exist on Karpenter nodes), or add `{{key: {key}, operator: Exists}}` to NodePool \"{nodepool}\"'s requirements; if a node group outside Karpenter carries the label, declare it under `cluster.nodeGroups` in .karplint.yaml"
            ),
        },
        IncompatibleError::Conflict { node, .. } => Advice {
            label: "no NodePool allows this value",
            help: format!(
                "change the pod's selector for \"{key}\" to a value NodePool \"{nodepool}\" allows ({node}), or widen that NodePool's requirement"
            ),
        },
    }
}
