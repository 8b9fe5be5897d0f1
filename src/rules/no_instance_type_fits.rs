//! `no-instance-type-fits`: no instance type a compatible NodePool allows has enough allocatable for the pod's requests

use super::{Context, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::model::Object;

pub struct NoInstanceTypeFits;

const ID: &str = "no-instance-type-fits";

impl Rule for NoInstanceTypeFits {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../lints/no-instance-type-fits.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "requests (plus DaemonSet overhead) exceed every allowed instance type, or need a resource none offers"
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        out.extend(cx.pending_finding(ID, obj, |_| {
            "no allowed instance type fits this request".to_string()
        }));
    }
}
