//! `incompatible-requirements`: the pod's node selectors or required affinity conflict with every NodePool's requirements

use super::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    IncompatibleRequirements,
    "incompatible-requirements",
    Error,
    "pod nodeSelector/affinity incompatible with every NodePool: Karpenter's \"incompatible requirements\""
);

impl Rule for IncompatibleRequirements {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        out.extend(cx.pending_finding(META.id, o, |reason| {
            if reason.contains("does not have known values") {
                "no NodePool defines this label".to_string()
            } else {
                "no NodePool allows this value".to_string()
            }
        }));
    }
}
