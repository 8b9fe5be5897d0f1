//! `restricted-label-selector`: a node selector Karpenter refuses, so it ignores the pod
//! and provisions nothing for it (karpenter-model §2.3).

use super::{Context, Findings, Placed, Rule};
use crate::karpenter::pod::Ignored;
use crate::karpenter::sim::Verdict;

declare_rule!(
    RestrictedLabelSelector,
    "restricted-label-selector",
    Error,
    "a node selector on a restricted label (hostname, karpenter.sh/*) makes Karpenter ignore the pod"
);

impl Rule for RestrictedLabelSelector {
    fn check_object(&self, o: &Placed, _cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let verdict = o.verdict();
        let Some(Verdict::Ignored(Ignored::Restricted { key, span, reason })) = verdict else {
            return;
        };
        out.push(
            META.finding(obj, *span, format!("Karpenter ignores this pod: selector on \"{key}\": {reason}"))
                .label("Karpenter will not provision for this selector")
                .help(format!(
                    "remove the \"{key}\" selector, or select a label the NodePool defines (template `labels` or a requirement); Karpenter skips pods with such selectors, so if no existing node matches they stay Pending with no event from Karpenter"
                )),
        );
    }
}
