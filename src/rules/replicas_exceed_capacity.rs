//! `replicas-exceed-capacity`: the replicas need more than the NodePool limits allow

use super::{Context, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::model::Object;

pub struct ReplicasExceedCapacity;

const ID: &str = "replicas-exceed-capacity";

impl Rule for ReplicasExceedCapacity {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../lints/replicas-exceed-capacity.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "replicas need more than the NodePool limits allow: \"all available instance types exceed limits for nodepool\""
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        out.extend(cx.pending_finding(ID, obj, |_| {
            "more than the NodePool limits allow".to_string()
        }));
    }
}
