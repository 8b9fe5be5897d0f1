//! `no-instance-type-fits`: no instance type a compatible NodePool allows has enough allocatable for the pod's requests

use super::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    NoInstanceTypeFits,
    "no-instance-type-fits",
    Error,
    "requests (plus DaemonSet overhead) exceed every allowed instance type, or need a resource none offers"
);

impl Rule for NoInstanceTypeFits {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        out.extend(cx.pending_finding(META.id, o, |_| {
            "no allowed instance type fits this request".to_string()
        }));
    }
}
