//! `missing-resource-requests`: containers with no cpu or memory request, where no
//! LimitRange fills one in. Karpenter sizes nodes from requests alone.

use super::{Context, Findings, Placed, Rule};
use crate::facts;

declare_rule!(
    MissingResourceRequests,
    "missing-resource-requests",
    Warning,
    "container without cpu or memory requests and no LimitRange default: Karpenter packs nodes on requests"
);

impl Rule for MissingResourceRequests {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        for l in facts::containers_without_requests(obj, &cx.defaulted) {
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
