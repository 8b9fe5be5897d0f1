//! `untolerated-taint`: no NodePool takes the pod because it does not tolerate a NodePool taint

use super::{Context, Rule};
use crate::diagnostic::{Finding, Severity};
use crate::model::Object;

pub struct UntoleratedTaint;

const ID: &str = "untolerated-taint";

impl Rule for UntoleratedTaint {
    fn id(&self) -> &'static str {
        ID
    }
    fn doc(&self) -> &'static str {
        include_str!("../../lints/untolerated-taint.md")
    }
    fn default_severity(&self) -> Severity {
        Severity::Error
    }
    fn summary(&self) -> &'static str {
        "no NodePool can take the pod: the closest one has a taint it does not tolerate"
    }

    fn check(&self, obj: &Object, cx: &Context, out: &mut Vec<Finding>) {
        out.extend(cx.pending_finding(ID, obj, |_| {
            "no toleration for this NodePool taint".to_string()
        }));
    }
}
