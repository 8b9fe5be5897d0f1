//! `untolerated-taint`: no NodePool takes the pod because it does not tolerate a NodePool taint

use super::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    UntoleratedTaint,
    "untolerated-taint",
    Error,
    "no NodePool can take the pod: the closest one has a taint it does not tolerate"
);

impl Rule for UntoleratedTaint {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        out.extend(cx.pending_finding(META.id, o, |_| {
            "no toleration for this NodePool taint".to_string()
        }));
    }
}
