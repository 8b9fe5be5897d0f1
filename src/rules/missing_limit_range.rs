//! `missing-limit-range`: a namespace whose workloads lack requests and that has no
//! LimitRange to default them.

use super::{Context, Rule};
use crate::diagnostic::{Finding, Related};
use crate::facts::WorkloadFacts;
use crate::facts::Workloads;
use crate::model::Kind;
use std::collections::BTreeMap;

declare_rule!(
    MissingLimitRange,
    "missing-limit-range",
    Warning,
    "namespace with request-less containers and no LimitRange to give them default requests"
);

impl Rule for MissingLimitRange {
    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        // namespace → (workloads lacking requests, containers lacking)
        let mut by_ns: BTreeMap<&str, Vec<(&WorkloadFacts, usize)>> = BTreeMap::new();
        for w in workloads.iter().filter(|w| !w.context) {
            let n = w.containers_without_requests;
            if n > 0 {
                by_ns.entry(&w.namespace).or_default().push((w, n));
            }
        }
        for (ns, workloads) in by_ns {
            if cx.index.in_namespace(Kind::LimitRange, ns).next().is_some() {
                continue;
            }
            let containers: usize = workloads.iter().map(|(_, n)| n).sum();
            let message = format!(
                "namespace \"{ns}\" has no LimitRange and {containers} container(s) in {} workload(s) without requests",
                workloads.len()
            );
            let help = format!(
                "add a LimitRange to namespace \"{ns}\" with `type: Container` and `defaultRequest` for cpu and memory, so pods without requests still tell Karpenter what they need"
            );
            let namespace_obj = cx
                .index
                .of_kind(Kind::Namespace)
                .find(|n| n.name() == ns && !n.context);
            let finding = match namespace_obj {
                Some(nso) => {
                    META.finding(nso, nso.name_span(), message)
                        .label("no LimitRange in this namespace")
                        .related_capped(&workloads, 5, without_requests, more_workloads)
                }
                None => {
                    let (first, _) = workloads[0];
                    let mut f = META
                        .finding(first, first.name_span, message)
                        .label(format!("first workload in \"{ns}\" without requests"));
                    f = f.related_capped(&workloads[1..], 4, without_requests, more_workloads);
                    // The namespace's finding, not the first file's: suppressed in that
                    // file, it stands on the next workload.
                    for (w, _) in workloads.iter().skip(1) {
                        f = f.also_on(
                            *w,
                            w.name_span,
                            format!("workload in \"{ns}\" without requests"),
                        );
                    }
                    f
                }
            };
            out.push(finding.help(help));
        }
    }
}

/// The note on one workload of the namespace.
fn without_requests((w, _): &(&WorkloadFacts, usize)) -> Related {
    Related::on(
        *w,
        w.name_span,
        format!(
            "{} \"{}\" has containers without requests",
            w.kind_name(),
            w.name()
        ),
    )
}

/// The note after the workloads named.
fn more_workloads(n: usize) -> String {
    format!("and {n} more workload(s) without requests")
}
