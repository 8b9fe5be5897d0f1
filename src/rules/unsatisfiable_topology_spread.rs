//! `unsatisfiable-topology-spread`: a `DoNotSchedule` topology spread constraint Karpenter
//! cannot satisfy for the workload's replicas (karpenter-model §5): a key no NodePool or node has
//! values for, `minDomains` above the domains the pod's NodePools offer, or domains of
//! NodePools the pod does not tolerate counted under the default `nodeTaintsPolicy`.

use crate::facts::Workloads;
use super::{Context, Findings, Placed, Rule};
use crate::diagnostic::{Finding, Related, Severity};
use crate::karpenter::requirements::normalize_key;
use crate::karpenter::topology::{self, Reach};
use crate::model::Object;
use crate::model::workload::TopologySpreadConstraint;

declare_rule!(
    UnsatisfiableTopologySpread,
    "unsatisfiable-topology-spread",
    Error,
    "DoNotSchedule topology spread Karpenter cannot satisfy: key without values, minDomains above the domains, or uncounted tainted domains"
);

impl Rule for UnsatisfiableTopologySpread {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let Some((sim, w, spec)) = o.provisioned(cx) else {
            return;
        };
        let replicas = w.replica_count();
        let labels = topology::pod_labels(obj);
        for c in &spec.topology_spread_constraints {
            if c.when_unsatisfiable
                .as_ref()
                .is_some_and(|v| v.value != "DoNotSchedule")
                || c.label_selector.is_none()
            {
                continue;
            }
            let key = normalize_key(&c.topology_key.value);
            if key == topology::LABEL_HOSTNAME {
                continue;
            }
            // Shared with the other topology rules, and only worked out for pods with
            // constraints that need it.
            let Some(reach) = o.reach(cx) else {
                return;
            };
            let spread = Spread {
                obj,
                c,
                key,
                karpenter: format!(
                    "unsatisfiable topology constraint for topology spread, key={key}"
                ),
                replicas,
                sim,
                reach,
            };
            if topology::no_domains_for_sure(sim, cx.index, key) {
                out.settle(spread.key_without_values(), obj, None);
                continue;
            }
            if !topology::selects(c.label_selector.as_ref(), labels) || reach.tolerated.is_empty() {
                continue;
            }
            if let Some((f, pending)) = spread.too_few_domains(cx) {
                out.settle(f, obj, Some(pending));
            }
        }
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        super::scheduling::batch_findings(cx, &META, workloads, out);
    }
}

/// One `DoNotSchedule` constraint (not on hostname) of a workload Karpenter provisions for,
/// with what the checks below share.
struct Spread<'s, 'a, 'c> {
    obj: &'s Object,
    c: &'s TopologySpreadConstraint,
    /// The normalised topology key.
    key: &'s str,
    /// The start of Karpenter's own message, quoted so users can search it.
    karpenter: String,
    replicas: i64,
    sim: &'s crate::karpenter::sim::Simulator<'a, 'c>,
    reach: &'s Reach,
}

impl Spread<'_, '_, '_> {
    /// No NodePool or node has a value for the key: the pods never schedule.
    fn key_without_values(&self) -> Finding {
        let (obj, key, karpenter, sim) = (self.obj, self.key, &self.karpenter, self.sim);
        let f = META.finding(obj,
            obj.span(&self.c.topology_key),
            format!("{karpenter}: no NodePool or node has a value for this key"),
        )
        .label("no NodePool offers this topology key")
        .help(format!(
            "spread on a key Karpenter knows (`topology.kubernetes.io/zone`, `kubernetes.io/hostname`, `karpenter.sh/capacity-type`), or add `{{key: {key}, operator: In, values: [...]}}` to the requirements of the NodePools this workload uses"
        ));
        let pools: Vec<usize> = if self.reach.compatible.is_empty() {
            (0..sim.pools.len()).collect()
        } else {
            self.reach.compatible.clone()
        };
        f.related_capped(
            &pools,
            3,
            |&i| {
                let p = &sim.pools[i];
                Related::on(
                    p.obj,
                    p.name_span(),
                    format!("NodePool \"{}\" does not define \"{key}\"", p.name),
                )
            },
            |n| format!("and {n} more NodePool(s) do not define \"{key}\""),
        )
    }

    /// Fewer domains than the replicas need at `maxSkew`: too few for `minDomains`, or
    /// domains the pod cannot reach counted as empty ones; and how many replicas stay
    /// Pending.
    fn too_few_domains(&self, cx: &Context) -> Option<(Finding, usize)> {
        let c = self.c;
        let skew = c.max_skew.as_ref().map(|s| s.value).unwrap_or(1).max(1);
        let honor_affinity = c
            .node_affinity_policy
            .as_ref()
            .is_none_or(|p| p.value != "Ignore");
        let honor_taints = c
            .node_taints_policy
            .as_ref()
            .is_some_and(|p| p.value == "Honor");
        let (sim, reach, key) = (self.sim, self.reach, self.key);
        let all_pools: Vec<usize> = (0..sim.pools.len()).collect();
        let counted_pools: &[usize] = match (honor_affinity, honor_taints) {
            (true, true) => &reach.tolerated,
            (true, false) => &reach.compatible,
            (false, _) => &all_pools,
        };
        let counted = reach.domains(sim, cx.index, key, counted_pools, honor_affinity);
        let usable = reach.domains(sim, cx.index, key, &reach.tolerated, true);
        let (obj, replicas, karpenter) = (self.obj, self.replicas, &self.karpenter);
        let n = usable.count()?;
        let capacity = skew.saturating_mul(n as i64);
        let pending = usize::try_from(replicas.saturating_sub(capacity)).unwrap_or(0);
        let f = min_domains(obj, c, cx, reach, &usable, skew, replicas, karpenter).or_else(|| {
            self.unreachable_domains_counted(counted_pools, &counted, &usable, capacity, honor_affinity)
        })?;
        Some((f, pending))
    }

    /// The troubleshooting-guide trap: domains of pools the pod cannot use count (as empty
    /// ones), so `capacity` (`maxSkew` × usable domains) is all that can schedule.
    fn unreachable_domains_counted(
        &self,
        counted_pools: &[usize],
        counted: &topology::Domains,
        usable: &topology::Domains,
        capacity: i64,
        honor_affinity: bool,
    ) -> Option<Finding> {
        let (obj, key, karpenter, replicas) = (self.obj, self.key, &self.karpenter, self.replicas);
        let extra: Vec<&String> = counted
            .values
            .iter()
            .filter(|v| !usable.values.contains(*v))
            .collect();
        if extra.is_empty() || replicas <= capacity {
            return None;
        }
        let extra_s: Vec<&str> = extra.iter().map(|s| s.as_str()).collect();
        let why = if honor_affinity {
            "NodePools whose taints this pod does not tolerate"
        } else {
            "NodePools this pod cannot use (`nodeAffinityPolicy: Ignore`)"
        };
        let mut f = META.finding_with(Severity::Warning, obj,
            obj.span(&self.c.topology_key),
            format!(
                "{karpenter}: {key} [{}] of {why} counts as an empty domain: only {capacity} of {replicas} replicas can schedule in {}, so {} replicas stay Pending",
                extra_s.join(" "),
                usable.render(),
                replicas - capacity
            ),
        )
        .label(format!("{} domain(s) this pod can never reach are counted", extra.len()))
        .help(if honor_affinity {
            "add `nodeTaintsPolicy: Honor` to this constraint so domains of NodePools whose taints the pod does not tolerate are not counted, or let the pod use those NodePools".to_string()
        } else {
            "remove `nodeAffinityPolicy: Ignore` (the default `Honor` counts only domains the pod can use)".to_string()
        });
        // The pools the pod can use, and the domains they hold the replicas in.
        f = super::offers_notes(f, self.sim, &self.reach.tolerated, key);
        for &i in counted_pools {
            let p = &self.sim.pools[i];
            let d = topology::offered_by(self.sim, key, i);
            if d.values.iter().any(|v| extra.contains(&v)) {
                let span = p.requirement_span(key);
                f = f.related(
                    p.obj,
                    span,
                    format!(
                        "NodePool \"{}\" offers {key} {} but this pod cannot use it",
                        p.name,
                        d.render_offer()
                    ),
                );
            }
        }
        Some(f)
    }
}

/// `minDomains` above the number of domains the pod can use: every usable domain holds at
/// most `maxSkew` pods. Whatever other domains are counted (unknown zones of NodePools the
/// pod does not tolerate, say) this holds: if they exist they stay empty and keep the global
/// minimum at 0; if not, fewer than `minDomains` domains make Karpenter treat it as 0.
#[allow(clippy::too_many_arguments)]
fn min_domains(
    obj: &Object,
    c: &TopologySpreadConstraint,
    cx: &Context,
    reach: &Reach,
    usable: &topology::Domains,
    skew: i64,
    replicas: i64,
    karpenter: &str,
) -> Option<Finding> {
    let sim = cx.sim.as_ref()?;
    let min = c.min_domains.as_ref()?;
    let n = usable.count()?;
    let capacity = skew.saturating_mul(n as i64);
    if n as i64 >= min.value || replicas <= capacity {
        return None;
    }
    let key = normalize_key(&c.topology_key.value);
    let f = META.finding(obj,
        obj.span(min),
        format!(
            "{karpenter}: minDomains is {} but the NodePools this pod can use offer {n} ({}): at most maxSkew {skew} pod(s) go in each and {capacity} of {replicas} replicas schedule, so {} replicas stay Pending",
            min.value,
            usable.render(),
            replicas - capacity
        ),
    )
    .label(format!("more than the {n} domain(s) available"))
    .help(format!(
        "lower `minDomains` to {n} or less, or allow more {key} values in the NodePools this workload uses"
    ));
    Some(super::offers_notes(f, sim, &reach.tolerated, key))
}
