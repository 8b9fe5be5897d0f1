//! `unsatisfiable-pod-affinity`: required pod affinity or anti-affinity Karpenter cannot
//! satisfy (karpenter-model §5): self anti-affinity on a zone-like key with more replicas than
//! domains, self affinity on the hostname with more replicas than one node holds, affinity
//! to pods nothing in the tree creates, or a key without known values.

use crate::facts::Workloads;
use super::{Context, Findings, Placed, Rule, Unless};
use crate::diagnostic::{Finding, Severity};
use crate::karpenter::requirements::normalize_key;
use crate::karpenter::scheduler::{self, PendingWorkload, PodOutcome};
use crate::karpenter::sim::{Simulator, Verdict};
use crate::karpenter::topology;
use crate::model::{Object, Span};
use crate::model::de::Spanned;
use crate::model::workload::{PodAffinityTerm, PodSpec};

declare_rule!(
    UnsatisfiablePodAffinity,
    "unsatisfiable-pod-affinity",
    Error,
    "required pod (anti-)affinity Karpenter cannot satisfy: more replicas than zones or than one node holds, a target nothing creates, or a key without values"
);

impl Rule for UnsatisfiablePodAffinity {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        let obj = o.obj;
        let Some((sim, w, spec)) = o.provisioned(cx) else {
            return;
        };
        let replicas = w.replica_count();
        let labels = topology::pod_labels(obj);
        let own_ns = obj.effective_namespace();
        let terms = spec
            .affinity
            .pod_affinity
            .required
            .iter()
            .map(|t| (t, false))
            .chain(
                spec.affinity
                    .pod_anti_affinity
                    .required
                    .iter()
                    .map(|t| (t, true)),
            );
        for (term, anti) in terms {
            // Shared with the other topology rules, and only worked out for pods with terms.
            let Some(reach) = o.reach(cx) else {
                return;
            };
            let t = &term.value;
            let key = normalize_key(&t.topology_key.value);
            let kind = if anti {
                "pod anti-affinity"
            } else {
                "pod affinity"
            };
            let karpenter = format!("unsatisfiable topology constraint for {kind}, key={key}");
            let key_span = obj.span(&t.topology_key);
            if key != topology::LABEL_HOSTNAME && topology::no_domains_for_sure(sim, cx.index, key)
            {
                out.settle(
                    META.finding(obj,
                        key_span,
                        format!("{karpenter}: no NodePool or node has a value for this key"),
                    )
                    .label("no NodePool offers this topology key")
                    .help(format!(
                        "use a key Karpenter knows (`kubernetes.io/hostname`, `topology.kubernetes.io/zone`), or add `{{key: {key}, operator: In, values: [...]}}` to the requirements of the NodePools this workload uses"
                    )),
                    obj,
                    None,
                );
                continue;
            }
            let ns_ok = topology::term_namespaces(t, own_ns).is_none_or(|ns| ns.contains(&own_ns));
            let self_selecting = ns_ok && topology::selects(t.label_selector.as_ref(), labels);
            if anti {
                if key == topology::LABEL_HOSTNAME || !self_selecting || reach.tolerated.is_empty()
                {
                    continue;
                }
                // Only a pool that gives the pod a node of its own holds a replica.
                let hosting = sim.hosting(obj, spec, &reach.tolerated);
                let d = reach.domains(sim, cx.index, key, &hosting, true);
                let Some(n) = d.count() else { continue };
                if replicas <= n as i64 {
                    continue;
                }
                let offer = match n {
                    0 => format!("no NodePool this pod can use offers a {key} domain its node selection allows"),
                    _ => format!("the NodePools this pod can use offer {n} {key} domain(s) {}", d.render()),
                };
                let f = META.finding(obj,
                    key_span,
                    format!(
                        "{karpenter}: {replicas} replicas repel each other but {offer}, so {} replicas stay Pending",
                        replicas - n as i64
                    ),
                )
                .label(format!("at most one pod per {key} value"))
                .help(format!(
                    "use `topologyKey: kubernetes.io/hostname` (one pod per node), make this term `preferredDuringSchedulingIgnoredDuringExecution`, or replace it with a `topologySpreadConstraints` entry on {key} with `maxSkew: 1`"
                ));
                // No pool gives the pod a node (it asks for a domain none offers): the
                // pools it can use say what they offer.
                let named = if hosting.is_empty() { &reach.tolerated } else { &hosting };
                let f = super::offers_notes(f, sim, named, key);
                out.settle(f, obj, usize::try_from(replicas - n as i64).ok());
            } else if self_selecting && key == topology::LABEL_HOSTNAME {
                if let Some((f, pending)) = first_node_overflow(o, sim, spec, key_span, &karpenter) {
                    out.settle(f, obj, Some(pending));
                }
            } else if !self_selecting && t.label_selector.is_some() {
                out.defer(
                    missing_target(obj, term, &karpenter),
                    Unless::PodsSelected {
                        except: obj.id,
                        namespaces: topology::term_namespaces(t, own_ns)
                            .map(|ns| ns.into_iter().map(String::from).collect()),
                        selector: t.label_selector.clone(),
                    },
                );
            }
        }
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        super::scheduling::batch_findings(cx, &META, workloads, out);
    }
}

fn missing_target(obj: &Object, term: &Spanned<PodAffinityTerm>, karpenter: &str) -> Finding {
    let t = &term.value;
    let sel = t.label_selector.as_ref();
    let wanted: Vec<String> = sel
        .map(|s| {
            s.match_labels
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .chain(
                    s.match_expressions
                        .iter()
                        .map(|e| format!("{} {}", e.key.value, e.operator.value)),
                )
                .collect()
        })
        .unwrap_or_default();
    let span = sel
        .and_then(|s| s.match_labels.0.first().map(|(k, _)| obj.span(k)))
        .or_else(|| {
            sel.and_then(|s| s.match_expressions.first())
                .map(|e| obj.span(&e.key))
        })
        .unwrap_or_else(|| obj.span(&t.topology_key));
    META.finding_with(Severity::Warning, obj,
        span,
        format!(
            "required pod affinity to pods labelled {} that nothing in the linted files creates; unless they already run in the cluster, Karpenter reports `{karpenter}` and the pod stays Pending",
            wanted.join(", ")
        ),
    )
    .label("no workload has these labels")
    .help("if the target pods run in the cluster, pass their manifests with `--context`; otherwise fix the label selector or make the affinity `preferredDuringSchedulingIgnoredDuringExecution`")
}

/// At most this many replicas are placed to find how many share a node: no instance type
/// runs more pods than this.
const SIMULATED_REPLICAS: i64 = 1024;

/// Required affinity to the pod's own labels on `kubernetes.io/hostname`: the first replica
/// opens a NodeClaim and every other one must join it (`TopologyGroup.nextDomainAffinity`
/// offers only domains that already hold a selected pod), so the replicas beyond what one
/// node holds stay Pending. Decided by Karpenter's batch ([`scheduler::solve`]) on this
/// workload alone, as on a fresh rollout onto new nodes. The finding, and how many replicas
/// stay Pending.
fn first_node_overflow(
    o: &Placed,
    sim: &Simulator,
    spec: &PodSpec,
    key_span: Span,
    karpenter: &str,
) -> Option<(Finding, usize)> {
    let replicas = o.obj.workload()?.replica_count();
    if replicas < 2 || !matches!(o.verdict()?, Verdict::Schedules(_)) {
        return None;
    }
    let pending = PendingWorkload::new(sim, o.obj, spec, replicas.min(SIMULATED_REPLICAS))?;
    let pods = scheduler::solve(sim, std::slice::from_ref(&pending), &mut Default::default()).pop()?;
    let scheduled = |p: &PodOutcome| match p {
        PodOutcome::Scheduled { pool, .. } => Some(*pool),
        PodOutcome::Pending(..) | PodOutcome::OnExistingNode { .. } => None,
    };
    let pool = pods.iter().find_map(scheduled)?;
    let placed = pods.iter().filter_map(scheduled).count() as i64;
    // Only the affinity term keeps the rest off new nodes; other failures are others' rules.
    pods.iter().find(|p| {
        matches!(p, PodOutcome::Pending(Some((_, f)), _) if f.kind() == "topology")
    })?;
    let nodepool = &sim.pools[pool].name;
    let finding = META.finding(
            o.obj,
            key_span,
            format!(
                "{karpenter}: {replicas} replicas require affinity to their own labels, so all of them must join the first node Karpenter launches for them; a node of NodePool \"{nodepool}\" holds {placed}, so {} replicas stay Pending",
                replicas - placed
            ),
        )
        .label("every replica on one node")
        .help(format!(
            "make this term `preferredDuringSchedulingIgnoredDuringExecution`, co-locate on a wider key such as `topology.kubernetes.io/zone`, or lower replicas or requests so {replicas} pods fit one node (this assumes the replicas start together on new nodes; pods with these labels already running would pin them to their node instead)"
        ));
    Some((finding, usize::try_from(replicas - placed).unwrap_or(0)))
}
