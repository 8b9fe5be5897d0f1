//! `incompatible-requirements`: the pod's node selectors or required affinity conflict with every NodePool's requirements

use super::Advice;
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::requirements::IncompatibleError;
use crate::model::Object;
use crate::rules::{Context, Rule};

pub struct IncompatibleRequirements;

pub(super) const ID: &str = "incompatible-requirements";

impl Rule for IncompatibleRequirements {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../../lints/incompatible-requirements.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "pod nodeSelector/affinity incompatible with every NodePool: Karpenter's \"incompatible requirements\""
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        out.extend(super::pending_finding(cx, ID, obj));
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
