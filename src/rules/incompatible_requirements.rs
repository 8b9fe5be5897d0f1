//! `incompatible-requirements`: the pod's node selectors or required affinity conflict with every NodePool's requirements

use super::{Context, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::model::Object;

pub struct IncompatibleRequirements;

const ID: &str = "incompatible-requirements";

impl Rule for IncompatibleRequirements {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../lints/incompatible-requirements.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "pod nodeSelector/affinity incompatible with every NodePool: Karpenter's \"incompatible requirements\""
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        out.extend(cx.pending_finding(ID, obj, |reason| {
            if reason.contains("does not have known values") {
                "no NodePool defines this label".to_string()
            } else {
                "no NodePool allows this value".to_string()
            }
        }));
    }
}
