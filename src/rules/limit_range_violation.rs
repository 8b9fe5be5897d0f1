//! `limit-range-violation`: a container's request or limit outside the `min` or `max` that a
//! LimitRange of its namespace sets per Container. LimitRanger rejects such a pod at
//! admission (`plugin/pkg/admission/limitranger` `PodLimitFunc`, `minConstraint` and
//! `maxConstraint`): it is never created, so no node is ever launched for it and the
//! controller that owns it reports `FailedCreate` forever.

use super::{Context, Findings, Placed, Rule};
use crate::karpenter::pod::limit_range_applies;
use crate::model::cluster::LimitRangeItem;
use crate::model::de::{Spanned, SpannedMap, Text};
use crate::model::workload::Container;
use crate::model::{Body, Kind, Object};
use crate::quantity::Quantity;

declare_rule!(
    LimitRangeViolation,
    "limit-range-violation",
    Error,
    "container request or limit outside a LimitRange's min or max: the API server rejects the pod"
);

impl Rule for LimitRangeViolation {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let Some(spec) = obj.workload().and_then(|w| w.pod_spec()) else {
            return;
        };
        // A template another tool fills in sets its own requests and limits.
        if obj.is_pod_template() {
            return;
        }
        let namespace = obj.effective_namespace();
        for lr in (cx.index.in_namespace(Kind::LimitRange, namespace))
            .filter(|lr| limit_range_applies(lr, obj))
        {
            let Body::LimitRange(lrs) = &lr.body else {
                continue;
            };
            let items = lrs.limits.iter().filter(|item| {
                item.type_
                    .as_ref()
                    .is_some_and(|t| t.value == "Container")
            });
            for item in items {
                for c in spec.containers.iter().chain(&spec.init_containers) {
                    for v in violations(c, item) {
                        out.push(finding(obj, c, lr, &v));
                    }
                }
            }
        }
    }
}

/// Which bound a value crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Min,
    Max,
}

/// A written request or limit outside one of a LimitRange item's bounds.
struct Violation<'a> {
    resource: &'a str,
    bound: Bound,
    /// The bound as written in the LimitRange.
    enforced: &'a Spanned<Text>,
    /// `request` or `limit`.
    field: &'static str,
    /// The container's value as written (a limit standing in for a missing request).
    value: &'a Spanned<Text>,
    /// The request is the limit's value (no request written).
    from_limit: bool,
}

/// The container's request for `resource` as the API server stores it before admission:
/// the request, else the limit it is defaulted from.
fn request<'a>(requests: &'a SpannedMap, limits: &'a SpannedMap, r: &str) -> Option<&'a Spanned<Text>> {
    requests.get(r).or_else(|| limits.get(r))
}

fn quantity(v: &Spanned<Text>) -> Option<Quantity> {
    Quantity::parse_non_negative(v.value.as_str()).ok()
}

/// The first constraint of each `min` and `max` entry the container's written values break,
/// in upstream's order: a request below `min`, then a limit below it (`minConstraint`); a
/// limit above `max`, then a request above it (`maxConstraint`). A value LimitRanger fills
/// in itself comes from the LimitRange's own defaults, which its validation keeps between
/// `min` and `max`.
fn violations<'a>(c: &'a Container, item: &'a LimitRangeItem) -> Vec<Violation<'a>> {
    let Some(res) = c.resources.as_ref().map(|r| &r.value) else {
        return Vec::new();
    };
    let (requests, limits) = (&res.requests, &res.limits);
    let mut out = Vec::new();
    let bounds = (item.min.0.iter().map(|(k, v)| (k, v, Bound::Min)))
        .chain(item.max.0.iter().map(|(k, v)| (k, v, Bound::Max)));
    for (k, enforced, bound) in bounds {
        let Some(limit_q) = quantity(enforced) else {
            continue;
        };
        let r = k.value.as_str();
        let request = request(requests, limits, r).map(|v| ("request", v));
        let from_limit = requests.get(r).is_none();
        let limit = limits.get(r).map(|v| ("limit", v));
        let order = match bound {
            Bound::Min => [request, limit],
            Bound::Max => [limit, request],
        };
        let crossed = order.into_iter().flatten().find(|(_, v)| {
            quantity(v).is_some_and(|q| match bound {
                Bound::Min => q < limit_q,
                Bound::Max => q > limit_q,
            })
        });
        if let Some((field, value)) = crossed {
            out.push(Violation {
                resource: r,
                bound,
                enforced,
                field,
                value,
                from_limit: from_limit && field == "request",
            });
        }
    }
    out
}

fn finding(
    obj: &Object,
    c: &Container,
    lr: &Object,
    v: &Violation,
) -> crate::diagnostic::Finding {
    let name = c.name.as_ref().map_or("", |n| n.value.as_str());
    let (word, side, change) = match v.bound {
        Bound::Min => ("minimum", "below", "raise"),
        Bound::Max => ("maximum", "above", "lower"),
    };
    let what = if v.from_limit {
        "request (defaulted from this limit)"
    } else {
        v.field
    };
    let upstream = format!(
        "{word} {} usage per Container is {}, but {} is {}",
        v.resource,
        v.enforced.value.as_str(),
        v.field,
        v.value.value.as_str()
    );
    META.finding(
        obj,
        obj.span(v.value),
        format!(
            "container \"{name}\" is {side} the {word} of LimitRange \"{}\": the API server rejects the pod (\"{upstream}\"), so it is never created and Karpenter never sees it",
            lr.name()
        ),
    )
    .label(format!("{} {side} the LimitRange's {}", what, match v.bound {
        Bound::Min => "min",
        Bound::Max => "max",
    }))
    .help(format!(
        "{change} the {} to {} {} or change LimitRange \"{}\" in namespace \"{}\"",
        if v.from_limit { "limit (the request defaults to it)" } else { v.field },
        match v.bound {
            Bound::Min => "at least",
            Bound::Max => "at most",
        },
        v.enforced.value.as_str(),
        lr.name(),
        lr.effective_namespace()
    ))
    .related(
        lr,
        lr.span(v.enforced),
        format!("{word} {} per Container", v.resource),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The violations of the only container of the Pod in `yaml` against the first item of
    /// the LimitRange in it, as `(resource, bound, field)`.
    fn violations_of(yaml: &str) -> Vec<(String, Bound, &'static str)> {
        let objects = crate::parse::parse_source(0, yaml, false, false).objects;
        let item = objects
            .iter()
            .find_map(|o| match &o.body {
                Body::LimitRange(lr) => lr.limits.first().cloned(),
                _ => None,
            })
            .expect("a LimitRange");
        let pod = objects.iter().find(|o| o.kind == Kind::Pod).expect("a Pod");
        let c = &pod.workload().and_then(|w| w.pod_spec()).expect("spec").containers[0];
        violations(c, &item)
            .into_iter()
            .map(|v| (v.resource.to_string(), v.bound, v.field))
            .collect()
    }

    fn pod_with(resources: &str) -> String {
        format!(
            "apiVersion: v1\nkind: LimitRange\nmetadata: {{name: l}}\nspec:\n  limits:\n    - type: Container\n      min: {{cpu: 100m}}\n      max: {{cpu: \"2\", memory: 4Gi}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  containers:\n    - name: c\n      image: x\n      resources: {resources}\n"
        )
    }

    /// limitranger `TestPodLimitFunc`'s failure and success cases for Container min and
    /// max: a request below min, a limit above max, a request above max (the limit absent
    /// and defaulted by LimitRanger to `max`), a limit standing in for the request.
    #[test]
    fn pod_limit_func_container_min_and_max() {
        use Bound::{Max, Min};
        /// (the container's resources, the violations as `(resource, bound, field)`)
        type Case = (&'static str, Vec<(&'static str, Bound, &'static str)>);
        let cases: [Case; 6] = [
            ("{requests: {cpu: 50m}}", vec![("cpu", Min, "request")]),
            ("{limits: {cpu: \"4\"}}", vec![("cpu", Max, "limit")]),
            ("{requests: {cpu: \"3\"}}", vec![("cpu", Max, "request")]),
            ("{limits: {cpu: 50m}}", vec![("cpu", Min, "request")]),
            (
                "{requests: {cpu: 500m, memory: 1Gi}, limits: {cpu: \"1\", memory: 8Gi}}",
                vec![("memory", Max, "limit")],
            ),
            ("{requests: {cpu: 100m}, limits: {cpu: \"2\", memory: 4Gi}}", vec![]),
        ];
        for (resources, want) in cases {
            let want: Vec<(String, Bound, &str)> = want
                .into_iter()
                .map(|(r, b, f)| (r.to_string(), b, f))
                .collect();
            assert_eq!(violations_of(&pod_with(resources)), want, "{resources}");
        }
    }
}
