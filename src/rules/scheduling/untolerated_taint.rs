//! `untolerated-taint`: no NodePool takes the pod because it does not tolerate a NodePool taint

use super::Advice;
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::taints::{self, Taint};
use crate::model::Object;
use crate::rules::{Context, Rule};

pub struct UntoleratedTaint;

pub(super) const ID: &str = "untolerated-taint";

impl Rule for UntoleratedTaint {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../../lints/untolerated-taint.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "no NodePool can take the pod: the closest one has a taint it does not tolerate"
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        out.extend(super::pending_finding(cx, ID, obj));
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
