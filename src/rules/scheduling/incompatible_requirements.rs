//! `incompatible-requirements`: the pod's node selectors or required affinity conflict with every NodePool's requirements

use super::Advice;
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
        out.extend(super::pending_finding(cx, &META, o));
    }
}

/// The pod's requirements are incompatible with NodePool `nodepool`'s: either no NodePool
/// defines the label, or the pool allows other values.
pub(super) fn advice(e: &IncompatibleError, nodepool: &str) -> Advice {
    let key = e.key();
    match e {
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
