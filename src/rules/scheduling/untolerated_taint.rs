//! `untolerated-taint`: no NodePool takes the pod because it does not tolerate a NodePool taint

use super::Advice;
use crate::karpenter::taints::{self, Taint};
use crate::rules::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    UntoleratedTaint,
    "untolerated-taint",
    Error,
    "no NodePool can take the pod: the closest one has a taint it does not tolerate"
);

impl Rule for UntoleratedTaint {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        out.extend(super::pending_finding(cx, &META, o));
    }
}

/// NodePool `nodepool` has `taint`, which the pod does not tolerate: suggest the narrowest
/// toleration.
pub(super) fn advice(taint: &Taint, nodepool: &str) -> Advice {
    let suggestion = taints::toleration_yaml(&taints::suggested_toleration(taint), 2);
    Advice {
        label: "no toleration for this NodePool taint",
        help: format!(
            "if this pod should run on NodePool \"{nodepool}\", add this toleration to the pod spec's `tolerations`:\n{}",
            suggestion.trim_end()
        ),
    }
}
