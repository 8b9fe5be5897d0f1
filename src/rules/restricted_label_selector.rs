//! `restricted-label-selector`: a node selector Karpenter refuses, so it ignores the pod
//! and provisions nothing for it (SPEC §2.3).

use super::{Context, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::pod::Ignored;
use crate::karpenter::sim::Verdict;
use crate::model::Object;

pub struct RestrictedLabelSelector;

const ID: &str = "restricted-label-selector";

impl Rule for RestrictedLabelSelector {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../lints/restricted-label-selector.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "a node selector on a restricted label (hostname, karpenter.sh/*) makes Karpenter ignore the pod"
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        let verdict = cx.verdict(obj);
        let Some(Verdict::Ignored(Ignored::Restricted { key, span, reason })) = verdict.as_deref()
        else {
            return;
        };
        out.push(
            Finding::new(ID, Severity::Error, obj, *span, format!("Karpenter ignores this pod: selector on \"{key}\": {reason}"))
                .label("Karpenter will not provision for this selector")
                .help(format!(
                    "remove the \"{key}\" selector, or select a label the NodePool defines (template `labels` or a requirement); Karpenter skips pods with such selectors, so if no existing node matches they stay Pending with no event from Karpenter"
                )),
        );
    }
}
