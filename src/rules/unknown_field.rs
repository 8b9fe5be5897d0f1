//! `unknown-field`: a key the API server does not know, in a Karpenter object (NodePool,
//! EC2NodeClass, NodeClaim, NodeOverlay) or in a workload's path to its pod spec and the
//! scheduling fields beneath it. The parse stage finds them against the schemas generated
//! from Karpenter's CRDs and the `k8s.io/api` types (`parse::fields`); this rule reports
//! each one, with the field meant when one is close. The v1beta1 fields of a v1 NodePool
//! are left to `deprecated-karpenter-api`, which says where each one moved.

use super::deprecated_karpenter_api::MOVED_IN_V1;
use super::{Context, Findings, Placed, Rule};
use crate::model::{Kind, Object, Span, UnknownField as Field};

declare_rule!(
    UnknownField,
    "unknown-field",
    Error,
    "a misspelt or misplaced field in a Karpenter object or a pod template, which the API server prunes or rejects"
);

impl Rule for UnknownField {
    fn check_object(&self, o: &Placed, _cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        for f in &obj.unknown_fields {
            if obj.kind == Kind::NodePool && MOVED_IN_V1.contains(&full_path(f).as_str()) {
                continue; // deprecated-karpenter-api says where it moved
            }
            let span = Span::new(obj.doc_offset + f.offset as usize, f.len as usize);
            out.push(
                META.finding(obj, span, message(obj, f))
                    .label(label(obj, f))
                    .help(help(obj, f)),
            );
        }
    }
}

/// The field's full path, as the API server prints it (`spec.template.spec.taint`).
fn full_path(f: &Field) -> String {
    match f.parent.is_empty() {
        true => f.key.to_string(),
        false => format!("{}.{}", f.parent, f.key),
    }
}

/// Whether the object is a custom resource, whose unknown fields the API server prunes
/// rather than a built-in kind, whose unknown fields the decoder drops.
fn custom(obj: &Object) -> bool {
    !obj.kind.is_workload() || matches!(obj.kind, Kind::Crd(_))
}

fn message(obj: &Object, f: &Field) -> String {
    let path = full_path(f);
    match custom(obj) {
        true => format!(
            "unknown field \"{path}\": the API server prunes it from the {}",
            obj.kind_name
        ),
        false => format!(
            "unknown field \"{path}\": strict field validation rejects the {}",
            obj.kind_name
        ),
    }
}

fn label(obj: &Object, f: &Field) -> String {
    match f.parent.is_empty() {
        true => format!("not a field of {}", obj.kind_name),
        false => format!("not a field of `{}`", f.parent),
    }
}

fn help(obj: &Object, f: &Field) -> String {
    let fix = match (&f.suggestion, &f.belongs_to) {
        (Some(s), _) => format!("rename it to `{s}`"),
        (None, Some(home)) => format!("move it under `{home}`"),
        (None, None) => format!(
            "remove it, or write a field `{}` has (`kubectl explain {}` lists them)",
            if f.parent.is_empty() { obj.kind_name.as_str() } else { f.parent.as_str() },
            explain_path(obj, f)
        ),
    };
    let path = full_path(f);
    let why = match custom(obj) {
        true => format!(
            "the API server prunes fields a custom resource's schema does not declare, so {} never sees it; kubectl's strict field validation fails with `strict decoding error: unknown field \"{path}\"`, and other clients' objects are stored without it",
            reader(obj)
        ),
        false => format!(
            "kubectl's strict field validation fails with `strict decoding error: unknown field \"{path}\"`, and clients that ask for `Warn` or `Ignore` get the object stored without it, so the scheduler and Karpenter never see it"
        ),
    };
    format!("{fix}: {why}")
}

/// Who reads the pruned field.
fn reader(obj: &Object) -> &'static str {
    match obj.kind {
        Kind::Crd(_) => "the controller",
        _ => "Karpenter",
    }
}

/// `nodepool.spec.template.spec`: the argument of `kubectl explain` for the parent, without
/// list indices.
fn explain_path(obj: &Object, f: &Field) -> String {
    let mut s = obj.kind_name.to_lowercase().to_string();
    let mut in_index = false;
    if !f.parent.is_empty() {
        s.push('.');
    }
    for c in f.parent.chars() {
        match c {
            '[' => in_index = true,
            ']' => in_index = false,
            c if !in_index => s.push(c),
            _ => {}
        }
    }
    s
}
