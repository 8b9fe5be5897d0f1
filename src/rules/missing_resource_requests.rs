//! `missing-resource-requests`: containers with no cpu or memory request, where no
//! LimitRange fills one in. Karpenter sizes nodes from requests alone.

use super::{Context, Findings, Placed, Rule, declare_rule};
use crate::index::Index;
use crate::model::workload::Container;
use crate::model::{Body, Kind, Object};

declare_rule!(
    MissingResourceRequests,
    "missing-resource-requests",
    Warning,
    "container without cpu or memory requests and no LimitRange default: Karpenter packs nodes on requests"
);

const RESOURCES: [&str; 2] = ["cpu", "memory"];

/// A container and the resources it lacks a request for.
pub(super) struct Lacking<'a> {
    pub container: &'a Container,
    pub missing: Vec<&'static str>,
}

/// Containers (and init containers) of a workload that end up without a cpu or memory
/// request: neither `requests` nor `limits` (which Kubernetes copies into requests) sets
/// it, and no LimitRange in the namespace gives a `defaultRequest` or `default` for it.
pub(super) fn lacking<'a>(obj: &'a Object, index: &Index) -> Vec<Lacking<'a>> {
    let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
        return Vec::new();
    };
    let defaulted: Vec<&'static str> = RESOURCES
        .into_iter()
        .filter(|r| {
            index
                .in_namespace(Kind::LimitRange, obj.effective_namespace())
                .any(|lr| match &lr.body {
                    Body::LimitRange(spec) => spec.limits.iter().any(|item| {
                        item.type_.as_ref().is_none_or(|t| t.value == "Container")
                            && (item.default_request.get(r).is_some()
                                || item.default.get(r).is_some())
                    }),
                    _ => false,
                })
        })
        .collect();
    spec.containers
        .iter()
        .chain(&spec.init_containers)
        .filter_map(|c| {
            let res = c.resources.as_ref().map(|r| &r.value);
            let missing: Vec<&'static str> = RESOURCES
                .into_iter()
                .filter(|r| !defaulted.contains(r))
                .filter(|r| {
                    res.is_none_or(|res| {
                        res.requests.get(r).is_none() && res.limits.get(r).is_none()
                    })
                })
                .collect();
            (!missing.is_empty()).then_some(Lacking {
                container: c,
                missing,
            })
        })
        .collect()
}

impl Rule for MissingResourceRequests {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        for l in lacking(obj, cx.index) {
            let c = l.container;
            let name = c.name.as_ref().map(|n| n.value.as_str()).unwrap_or("");
            let what = l.missing.join(" or ");
            let span = match (&c.resources, &c.name) {
                (Some(r), _) => obj.span(r),
                (None, Some(n)) => obj.span(n),
                (None, None) => obj.name_span(),
            };
            let example = l
                .missing
                .iter()
                .map(|r| format!("{r}: {}", if *r == "cpu" { "100m" } else { "128Mi" }))
                .collect::<Vec<_>>()
                .join(", ");
            out.push(
                META.finding(obj, span, format!("container \"{name}\" has no {what} request"))
                    .label(format!("no {what} request"))
                    .help(format!(
                        "set `resources.requests` ({example}, sized from observed usage) or add a LimitRange with `defaultRequest` to namespace \"{}\"; Karpenter bin-packs on requests, so pods without them overload nodes (CPU throttling, OOMKilled)",
                        obj.effective_namespace()
                    )),
            );
        }
    }
}
