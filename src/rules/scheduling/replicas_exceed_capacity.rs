//! `replicas-exceed-capacity`: the replicas need more than the capacity that may hold them,
//! either a NodePool's `limits` (from the simulator's verdict), or, for pods Karpenter does
//! not provision for (its own controller, pods pinned to node groups), the static nodes
//! outside Karpenter described by eksctl `ClusterConfig`s, `Node`s or the config file.

use super::{Advice, template_span};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::{GroupSource, NodeGroup, StaticOnly, static_only};
use crate::karpenter::pod;
use crate::karpenter::requirements::{Operator, Requirement, Requirements};
use crate::karpenter::taints::{self, Effect, Toleration};
use crate::model::workload::PodSpec;
use crate::model::{Kind, Object};
use crate::quantity::{Quantity, ResourceList};
use crate::rules::{Context, Findings, Placed, Rule, declare_rule};
use std::collections::BTreeMap;

declare_rule!(
    ReplicasExceedCapacity,
    "replicas-exceed-capacity",
    Error,
    "replicas need more than the NodePool limits or the static node groups outside Karpenter allow"
);

const LIMITS_LABEL: &str = "more than the NodePool limits allow";

impl Rule for ReplicasExceedCapacity {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        super::pending_finding(cx, &META, o, out);
        out.extend(static_capacity_finding(o.obj, cx));
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        super::batch_findings(cx, &META, workloads, out);
    }
}

/// Every instance type that fits the pod has more capacity than NodePool `nodepool`'s
/// limits: Karpenter never launches such a type.
pub(super) fn all_types_exceed_limits(nodepool: &str) -> Advice {
    Advice {
        label: LIMITS_LABEL,
        help: format!(
            "every instance type NodePool \"{nodepool}\" allows has more capacity than its `limits` leave (a `nodes` limit of 0 allows none), and Karpenter drops those types before it tries a pod; raise the limits"
        ),
    }
}

/// The NodeClaims Karpenter launched first spent NodePool `nodepool`'s limits: each
/// charges the largest instance type it may become, then the capacity of the one it
/// launches, so what is left no longer holds the pod.
pub(super) fn limits_spent(nodepool: &str) -> String {
    format!(
        "NodePool \"{nodepool}\"'s `limits` are spent by the nodes launched for the replicas before: Karpenter charges each NodeClaim the largest instance type it may become until it launches, then its real capacity; raise the limits, or narrow the pool's instance types so that each node charges less"
    )
}

/// The replicas together request `demand` of `resource`, more than NodePool `nodepool`'s
/// limit on it.
pub(super) fn replicas_exceed_limit(resource: &str, demand: Quantity, nodepool: &str) -> Advice {
    Advice {
        label: LIMITS_LABEL,
        help: format!(
            "raise NodePool \"{nodepool}\"'s `limits.{resource}` to at least {} (more with DaemonSets and other workloads), or lower the replicas",
            demand.display_for(resource)
        ),
    }
}

/// The pod's alternative requirement sets for static nodes: nodeSelector ∧ each required
/// node-selector term (terms are OR-ed).
fn node_requirements(spec: &PodSpec) -> Vec<Requirements> {
    let mut base = Requirements::new();
    for (k, v) in spec.node_selector.iter() {
        base.add(Requirement::in_values(k, [v]));
    }
    let terms = spec
        .affinity
        .node_affinity
        .required
        .as_ref()
        .map(|r| &r.node_selector_terms[..])
        .unwrap_or_default();
    if terms.is_empty() {
        return vec![base];
    }
    terms
        .iter()
        .map(|t| {
            let mut r = base.clone();
            for e in &t.value.match_expressions {
                let values: Vec<&str> = e.values.iter().map(|v| v.value.as_str()).collect();
                if let Ok(op) = e.operator.value.parse::<Operator>()
                    && let Ok(req) = Requirement::new(&e.key.value, op, values)
                {
                    r.add(req);
                }
            }
            r
        })
        .collect()
}

/// Required anti-affinity on `kubernetes.io/hostname` against the pod's own labels: one
/// replica per node.
fn one_per_node(obj: &Object, spec: &PodSpec) -> bool {
    let labels = crate::karpenter::topology::pod_labels(obj);
    spec.affinity.pod_anti_affinity.required.iter().any(|t| {
        let t = &t.value;
        t.topology_key.value == "kubernetes.io/hostname"
            && (t.namespaces.is_empty()
                || t.namespaces
                    .iter()
                    .any(|n| n.value == obj.effective_namespace()))
            && t.label_selector.as_ref().is_some_and(|sel| {
                crate::index::selector_matches(sel, |k| labels.get(k).map(|v| v.value.as_str()))
            })
    })
}

/// How many of these pods one node of the group can hold, and the resource that bounds
/// it; `None` when the node's allocatable is unknown.
fn pods_per_node(alloc: Option<&ResourceList>, requests: &ResourceList) -> Option<(i128, String)> {
    let alloc = alloc?;
    requests
        .iter()
        .filter(|(_, q)| !q.is_zero())
        .map(|(k, q)| {
            let have = alloc.get_or_zero(k).as_millis().max(0);
            (have / q.as_millis().max(1), k.to_string())
        })
        .min()
}

fn group_words(g: &NodeGroup) -> String {
    let what = match g.source {
        GroupSource::ManagedNodeGroup => "managed node group",
        GroupSource::NodeGroup => "node group",
        GroupSource::Node => "Node",
        GroupSource::Config => "node group",
    };
    format!("{what} \"{}\"", g.name)
}

/// Why one group holds fewer of these pods than it has nodes: kube-scheduler's words.
enum Reason {
    Selector,
    Taint(String),
    AntiAffinity,
    Insufficient(String),
}

/// The finding for replicas of a pod only static nodes may run (see
/// [`static_only`]) that need more than those nodes hold.
fn static_capacity_finding(obj: &Object, cx: &Context) -> Option<Finding> {
    let w = obj.workload()?;
    if matches!(obj.kind, Kind::Job | Kind::CronJob)
        || matches!(obj.kind, Kind::Crd(c) if !c.long_running())
    {
        return None;
    }
    let facts = &cx.cluster;
    if !facts.has_static_capacity() {
        return None;
    }
    let spec = w.pod_spec()?;
    let why = static_only(obj, spec)?;
    let labels = crate::karpenter::topology::pod_labels(obj);
    if facts
        .fargate_for(obj.effective_namespace(), |k| {
            labels.get(k).map(|v| v.value.as_str())
        })
        .is_some()
    {
        return None;
    }
    let replicas = i128::from(w.replica_count());
    let reqs = node_requirements(spec);
    let tolerations = pod::tolerations(spec, cx.cluster.admission);
    let requests = pod::requests(obj, spec, cx.cluster.karpenter).total;
    let anti = one_per_node(obj, spec);
    let Tally {
        capacity,
        nodes,
        reasons,
        eligible,
    } = tally(
        &facts.node_groups,
        cx.catalog,
        &reqs,
        &tolerations,
        &requests,
        anti,
    )?;
    if replicas <= capacity || nodes == 0 {
        return None;
    }
    let scheduler = format!(
        "0/{nodes} nodes are available: {}",
        reasons
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let whose = match &why {
        StaticOnly::NotOnKarpenterNodes => {
            "Karpenter does not provision for these pods (they require karpenter.sh/nodepool DoesNotExist)".to_string()
        }
        StaticOnly::KarpenterController => {
            "Karpenter's own controller does not run on nodes Karpenter launches".to_string()
        }
        StaticOnly::StaticLabel(k) => {
            format!("the pods select \"{k}\", which only nodes outside Karpenter carry")
        }
    };
    let message = format!(
        "{replicas} replicas need more than the {capacity} the static nodes outside Karpenter hold{}: {whose}; replica {} stays Pending with \"{scheduler}\"",
        if anti {
            " (one per node: required pod anti-affinity on kubernetes.io/hostname)"
        } else {
            ""
        },
        capacity + 1
    );
    let controller = !matches!(why, StaticOnly::StaticLabel(_));
    let grow = grow_help(&eligible, replicas, capacity);
    let help = if controller {
        format!(
            "run one replica: `kubectl scale {} {} -n {} --replicas=1` (or `replicas: 1` in the Helm values; Karpenter elects a leader, so one replica works), or {grow}",
            obj.kind_name.to_lowercase(),
            obj.name(),
            obj.effective_namespace()
        )
    } else {
        format!("lower the replicas to {capacity}, or {grow}")
    };
    let span = w
        .replicas
        .as_ref()
        .map(|r| obj.span(r))
        .unwrap_or_else(|| template_span(obj));
    let f = META
        .finding(obj, span, message)
        .label(format!(
            "{replicas} replicas; static capacity holds {capacity}"
        ))
        .help(help);
    Some(group_notes(f, cx, &eligible))
}

/// What the static node groups hold of these pods, group by group.
struct Tally<'g> {
    /// Pods all groups together can hold.
    capacity: i128,
    /// Nodes in all groups.
    nodes: i128,
    /// kube-scheduler's reason for each group's nodes → how many nodes it covers.
    reasons: BTreeMap<String, i128>,
    /// The groups the pods may run on, with how many of them one node holds.
    eligible: Vec<(&'g NodeGroup, i128)>,
}

/// Per group: the pods it can hold, or why it holds none beyond what it holds. `None` when
/// a group the pods may run on has an unknown allocatable and nothing can be concluded.
fn tally<'g>(
    groups: &'g [NodeGroup],
    catalog: &Catalog,
    reqs: &[Requirements],
    tolerations: &[Toleration],
    requests: &ResourceList,
    anti: bool,
) -> Option<Tally<'g>> {
    let mut capacity: i128 = 0;
    let mut nodes: i128 = 0;
    let mut reasons: BTreeMap<String, i128> = BTreeMap::new();
    let mut eligible: Vec<(&NodeGroup, i128)> = Vec::new();
    for g in groups {
        let count = i128::from(g.count.max(0));
        nodes += count;
        let reason =
            if !reqs.iter().any(|r| g.matches(r, catalog)) {
                Some(Reason::Selector)
            } else if let Some(t) = g.taints.iter().find(|t| {
                t.effect != Effect::PreferNoSchedule && !taints::is_tolerated(tolerations, t)
            }) {
                Some(Reason::Taint(if t.value.is_empty() {
                    format!("{{{}: }}", t.key)
                } else {
                    format!("{{{}: {}}}", t.key, t.value)
                }))
            } else {
                let alloc = g.node_allocatable(catalog);
                let per = match (pods_per_node(alloc.as_ref(), requests), anti) {
                    // Unknown allocatable without one-per-node: the group's capacity is
                    // unknown, so nothing can be concluded.
                    (None, false) => return None,
                    (None, true) => (1, None),
                    (Some((n, _)), true) if n >= 1 => (1, None),
                    (Some((n, r)), _) => (n, Some(r)),
                };
                capacity += per.0 * count;
                eligible.push((g, per.0));
                match per.1 {
                    Some(r) => Some(Reason::Insufficient(r)),
                    None => Some(Reason::AntiAffinity),
                }
            };
        let text = match reason {
            Some(Reason::Selector) => "node(s) didn't match Pod's node affinity/selector".into(),
            Some(Reason::Taint(t)) => format!("node(s) had untolerated taint {t}"),
            Some(Reason::AntiAffinity) => "node(s) didn't match pod anti-affinity rules".into(),
            Some(Reason::Insufficient(r)) => format!("Insufficient {r}"),
            None => continue,
        };
        *reasons.entry(text).or_default() += count;
    }
    Some(Tally {
        capacity,
        nodes,
        reasons,
        eligible,
    })
}

/// How to add the capacity the replicas lack: grow the first group that holds any of them
/// to the size they need, or add a group.
fn grow_help(eligible: &[(&NodeGroup, i128)], replicas: i128, capacity: i128) -> String {
    let grow = eligible.iter().find(|(_, per)| *per > 0).map(|(g, per)| {
        let need = i128::from(g.count.max(0)) + (replicas - capacity + per - 1) / per;
        match g.source {
            GroupSource::ManagedNodeGroup | GroupSource::NodeGroup | GroupSource::Config => format!(
                "raise {}'s size to {need} nodes (eksctl `minSize`/`desiredCapacity: {need}`, or `aws autoscaling update-auto-scaling-group --auto-scaling-group-name <its ASG> --min-size {need} --desired-capacity {need}`)",
                group_words(g)
            ),
            GroupSource::Node => format!(
                "add nodes outside Karpenter (a managed node group with at least {need} nodes: `aws autoscaling update-auto-scaling-group --auto-scaling-group-name <its ASG> --min-size {need} --desired-capacity {need}`)"
            ),
        }
    });
    grow.unwrap_or_else(|| {
        "add a node group whose nodes match the pod's selectors and tolerations and fit its requests"
            .to_string()
    })
}

/// A related note on each group that has a source object: its nodes, and how many of these
/// pods they hold.
fn group_notes(mut f: Finding, cx: &Context, eligible: &[(&NodeGroup, i128)]) -> Finding {
    for g in &cx.cluster.node_groups {
        let Some(o) = &g.origin else { continue };
        let Some(gobj) = cx.index.objects().get(o.object) else {
            continue;
        };
        let held = eligible
            .iter()
            .find(|(e, _)| std::ptr::eq(*e, g))
            .map(|(_, per)| per * i128::from(g.count.max(0)));
        let types = if g.instance_types.is_empty() {
            String::new()
        } else {
            format!(" of {}", g.instance_types.join("/"))
        };
        let text = match held {
            Some(n) => format!(
                "{}: {} node(s){types}, room for {n} of these pods",
                group_words(g),
                g.count
            ),
            None => format!(
                "{}: {} node(s){types}, not eligible for these pods",
                group_words(g),
                g.count
            ),
        };
        f = f.related(gobj, o.count.unwrap_or(o.name), text);
    }
    f
}
