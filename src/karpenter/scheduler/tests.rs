//! The batch, row by row: each case is named after the upstream test it encodes (core
//! `pkg/controllers/provisioning/suite_test.go` at v1.14.3, unless it says otherwise) and
//! checked against the built-in catalog.

use super::*;
use crate::index::Index;
use crate::karpenter::catalog::Catalog;

const NODE_CLASS: &str =
    "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}";

/// A NodePool `name` with `spec` at the NodePool level (flow-style fields, may be empty)
/// and `template` in its template's spec.
fn pool(name: &str, spec: &str, template: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec: {{{spec} template: {{spec: {{{NODE_CLASS}, {template}}}}}}}
---
"
    )
}

/// A Deployment `name` of `replicas` pods labelled `app: name`, requesting `requests`,
/// with `pod` among its pod spec's fields.
fn deployment(name: &str, replicas: i64, requests: &str, pod: &str) -> String {
    deployment_with(
        name,
        replicas,
        &format!("resources: {{requests: {{{requests}}}}}"),
        pod,
    )
}

/// [`deployment`] with `container` as the container's fields besides name and image.
fn deployment_with(name: &str, replicas: i64, container: &str, pod: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: c, image: x, {container}}}], {pod}}}
---
"
    )
}

/// A DaemonSet `agent` whose container has `container` besides name and image, with `pod`
/// among its pod spec's fields.
fn daemonset(container: &str, pod: &str) -> String {
    format!(
        "apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  template:
    spec: {{containers: [{{name: c, image: x, {container}}}], {pod}}}
---
"
    )
}

/// Each Deployment's pods as the batch places them, and the NodePools' names.
fn outcomes(yaml: &str) -> (Vec<Vec<PodOutcome>>, Vec<String>) {
    let objects = crate::parse::parse_source(0, yaml, false, false).objects;
    let index = Index::new(&objects);
    let sim = Simulator::new(&index, Catalog::builtin(), Default::default());
    let workloads: Vec<PendingWorkload> = index
        .of_kind(Kind::Deployment)
        .map(|o| {
            let w = o.workload().expect("a workload");
            PendingWorkload::new(
                &sim,
                o,
                w.pod_spec().expect("a pod spec"),
                w.replica_count(),
            )
            .expect("provisionable")
        })
        .collect();
    let names = sim.pools.iter().map(|p| p.name.clone()).collect();
    (solve(&sim, &workloads, &mut Existing::default()), names)
}

/// Each Deployment's pods: the NodePool of each scheduled one, `None` for a pending one.
fn placed(yaml: &str) -> Vec<Vec<Option<String>>> {
    let (outcomes, names) = outcomes(yaml);
    (outcomes.into_iter())
        .map(|pods| {
            pods.into_iter()
                .map(|p| match p {
                    PodOutcome::Scheduled { pool, .. } => Some(names[pool].clone()),
                    PodOutcome::Pending(..) | PodOutcome::OnExistingNode { .. } => None,
                })
                .collect()
        })
        .collect()
}

const ANTI_HOSTNAME: &str = "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}";

#[test]
fn upstream_batches() {
    let some = |s: &str| Some(s.to_string());
    /// (upstream test, manifests, each Deployment's pods' NodePools)
    type Case = (&'static str, String, Vec<Vec<Option<String>>>);
    let cases: Vec<Case> = vec![
        (
            "should schedule to the nodepool with the highest priority always",
            format!(
                "{}{}{}",
                pool("light", "", "requirements: []"),
                pool("heavy", "weight: 100,", "requirements: []"),
                deployment("web", 3, "cpu: 100m", "")
            ),
            vec![vec![some("heavy"), some("heavy"), some("heavy")]],
        ),
        (
            "should partially schedule if limits would be exceeded",
            format!(
                "{}{}",
                pool("p", "limits: {cpu: \"3\"},", "requirements: []"),
                deployment("web", 2, "cpu: 1500m", ANTI_HOSTNAME)
            ),
            vec![vec![some("p"), None]],
        ),
        (
            // provisioner.go: each loop is a new `Solve`, whose `NewScheduler` reads the
            // NodePool's limits less the capacity of the nodes launched so far.
            "the next round charges the launched nodes' capacity, not subtractMax",
            format!(
                "{}{}",
                pool("p", "limits: {cpu: \"600\"},", "requirements: []"),
                deployment("web", 10, "cpu: 500m", ANTI_HOSTNAME)
            ),
            vec![vec![some("p"); 10]],
        ),
        (
            "should schedule if limits would be met",
            format!(
                "{}{}",
                pool("p", "limits: {cpu: \"2\"},", "requirements: []"),
                deployment("web", 1, "cpu: 1750m", "")
            ),
            vec![vec![some("p")]],
        ),
        (
            "should not schedule if limits would be exceeded",
            format!(
                "{}{}",
                pool("p", "limits: {cpu: \"2\"},", "requirements: []"),
                deployment("web", 1, "cpu: 2100m", "")
            ),
            vec![vec![None]],
        ),
        (
            // scheduler.go `add`: in-flight NodeClaims before new ones, whatever the weight.
            "addToInflightNode: a small pod joins the NodeClaim planned for a bigger one",
            format!(
                "{}{}{}{}",
                pool(
                    "heavy",
                    "weight: 90,",
                    "requirements: [{key: karpenter.k8s.aws/instance-category, operator: In, values: [c]}]"
                ),
                pool("light", "weight: 10,", "requirements: []"),
                deployment(
                    "big",
                    1,
                    "cpu: \"2\", memory: 1Gi",
                    "nodeSelector: {karpenter.k8s.aws/instance-category: m}"
                ),
                deployment("small", 2, "cpu: 100m", "")
            ),
            vec![vec![some("light")], vec![some("light"), some("light")]],
        ),
        (
            // scheduling/suite_test.go "Host Ports": two pods binding one host port never
            // share a node; each gets its own NodeClaim.
            "should not schedule pods with conflicting host ports on the same node",
            format!(
                "{}{}",
                // The first NodeClaim may launch a 2-vCPU type and spends the whole limit.
                pool(
                    "p",
                    "limits: {cpu: \"2\"},",
                    "requirements: [{key: karpenter.k8s.aws/instance-cpu, operator: Lt, values: [\"3\"]}]"
                ),
                deployment_with(
                    "web",
                    2,
                    "ports: [{containerPort: 80, hostPort: 80}], resources: {requests: {cpu: 100m}}",
                    ""
                )
            ),
            vec![vec![some("p"), None]],
        ),
        (
            // requirements.go `Compatible`: a NodeClaim refuses a pod asking a custom label
            // it does not define ("label %q does not have known values"), and takes it
            // once another pod's preferred `NotIn` on that label joined it (queue: `first`,
            // then `strict` by memory, then `lenient`).
            "Compatible: a label a NodeClaim came to define takes a pod it refused",
            format!(
                "{}{}{}{}",
                pool("p", "", "requirements: []"),
                deployment("first", 1, "cpu: \"1\"", ""),
                deployment(
                    "strict",
                    2,
                    "cpu: 500m, memory: 1Gi",
                    "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: In, values: [green]}]}]}}}"
                ),
                deployment(
                    "lenient",
                    2,
                    "cpu: 500m, memory: 128Mi",
                    "affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: team, operator: NotIn, values: [blue]}]}}]}}"
                )
            ),
            vec![
                vec![some("p")],
                vec![some("p"), some("p")],
                vec![some("p"), some("p")],
            ],
        ),
    ];
    for (upstream, yaml, expected) in cases {
        assert_eq!(placed(&yaml), expected, "{upstream}");
    }
}

/// requirements.go `Intersects`: a pod's `DoesNotExist` never conflicts with a NodeClaim's
/// `NotIn`, though it conflicts with the `Exists` of the NodePool the NodeClaim narrowed
/// from (oracle scenario s20270136-1651): `addToInflightNode` puts the pod there.
#[test]
fn a_does_not_exist_pod_joins_a_nodeclaim_whose_exists_became_not_in() {
    let yaml = format!(
        "{}{}{}",
        pool("p", "", "requirements: [{key: team, operator: Exists}]"),
        deployment(
            "first",
            1,
            "cpu: \"2\"",
            "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: NotIn, values: [green]}]}]}}}"
        ),
        deployment(
            "second",
            1,
            "cpu: \"1\"",
            "nodeSelector: {team: red}, affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: team, operator: In, values: [blue]}]}]}}}"
        )
    );
    let p = Some("p".to_string());
    assert_eq!(placed(&yaml), vec![vec![p.clone()], vec![p]]);
}

/// A DaemonSet that binds the pod's host port on every node of the only pool: the pod never
/// schedules, with Karpenter's instance-type error ("should account for daemonset
/// hostports").
#[test]
fn should_account_for_daemonset_hostports() {
    let yaml = format!(
        "{}{}apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: agent}}
spec:
  template:
    spec: {{containers: [{{name: a, image: x, ports: [{{containerPort: 9100, hostPort: 9100}}]}}]}}
---
",
        pool("p", "", "requirements: []"),
        deployment_with(
            "web",
            1,
            "ports: [{containerPort: 9100, hostPort: 9100}]",
            ""
        )
    );
    assert_eq!(placed(&yaml), vec![vec![None]]);
}

/// A NodePool `name` in the one zone `us-east-1<zone>`, with `template` fields besides.
fn zonal_pool(name: &str, zone: char, template: &str) -> String {
    pool(
        name,
        "",
        &format!(
            "requirements: [{{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1{zone}]}}], {template}"
        ),
    )
}

const ZONE_SPREAD: &str = "topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]";

/// How many pods of one Deployment each NodePool (or `None`, pending) got, sorted.
fn counts(pods: &[Option<String>]) -> Vec<(Option<String>, usize)> {
    let mut out: std::collections::BTreeMap<Option<String>, usize> = Default::default();
    for p in pods {
        *out.entry(p.clone()).or_default() += 1;
    }
    out.into_iter().collect()
}

/// Topology in the batch, row by row (core `scheduling/topology_test.go` at v1.14.3). The
/// zones are told apart by single-zone NodePools, since a plan names the pool of each pod.
#[test]
fn upstream_topology() {
    let some = |s: &str| Some(s.to_string());
    type Case = (&'static str, String, Vec<Vec<(Option<String>, usize)>>);
    let cases: Vec<Case> = vec![
        (
            "should balance pods across zones (match labels)",
            format!(
                "{}{}{}{}",
                zonal_pool("za", 'a', ""),
                zonal_pool("zb", 'b', ""),
                zonal_pool("zc", 'c', ""),
                deployment("web", 4, "cpu: 100m", ZONE_SPREAD)
            ),
            // Equal weights go by name, descending: the fourth pod joins zone c again.
            vec![vec![(some("za"), 1), (some("zb"), 1), (some("zc"), 2)]],
        ),
        (
            // Upstream counts an existing pod in zone 1; here zone a is a domain of a pool
            // whose taint the pods do not tolerate (nodeTaintsPolicy defaults to Ignore), so
            // it counts at zero and caps zones b and c at one pod each.
            "should not violate max-skew when unsat = do not schedule",
            format!(
                "{}{}{}",
                zonal_pool(
                    "za",
                    'a',
                    "taints: [{key: team, value: other, effect: NoSchedule}]"
                ),
                pool(
                    "zbc",
                    "",
                    "requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1b, us-east-1c]}]"
                ),
                deployment("web", 10, "cpu: 1100m", ZONE_SPREAD)
            ),
            vec![vec![(None, 8), (some("zbc"), 2)]],
        ),
        (
            // An m5.large holds five pods of 350m: the first NodeClaim takes five, and no
            // other domain may open while one holds the pods (nextDomainAffinity).
            "should respect self pod affinity for first empty topology domain only (hostname)",
            format!(
                "{}{}",
                pool(
                    "p",
                    "",
                    "requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}]"
                ),
                deployment(
                    "web",
                    10,
                    "cpu: 350m",
                    "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}"
                )
            ),
            vec![vec![(None, 5), (some("p"), 5)]],
        ),
        (
            "should allow violation of preferred pod anti-affinity",
            format!(
                "{}{}",
                zonal_pool("za", 'a', ""),
                deployment(
                    "web",
                    4,
                    "cpu: 100m",
                    "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, podAffinityTerm: {topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: web}}}}]}}"
                )
            ),
            vec![vec![(some("za"), 4)]],
        ),
        (
            // Upstream's spec: no upstream test. A pod relaxed into tolerating PreferNoSchedule
            // owns a spread group whose node filter hashes the new toleration: a fresh group
            // that counts none of the pods placed before (Topology.Update, TopologyGroup.Hash).
            // Two m5.large NodeClaims spend the cpu limit; each then takes a second pod.
            "Topology.Update: a relaxed pod's spread constraint counts afresh",
            format!(
                "{}{}",
                pool(
                    "p",
                    "limits: {cpu: \"4\"},",
                    "requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [m5.large]}], taints: [{key: spot-only, value: \"true\", effect: PreferNoSchedule}]"
                ),
                deployment(
                    "web",
                    5,
                    "cpu: 100m",
                    "tolerations: [{key: spot-only, operator: Equal, value: \"true\", effect: PreferNoSchedule}], topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]"
                )
            ),
            vec![vec![(None, 1), (some("p"), 4)]],
        ),
    ];
    for (upstream, yaml, expected) in cases {
        let got: Vec<_> = placed(&yaml).iter().map(|w| counts(w)).collect();
        assert_eq!(got, expected, "{upstream}");
    }
}

/// "should not violate pod anti-affinity on zone": three pods, one per zone, scheduled
/// first (they are larger); the pod whose anti-affinity selects them finds no empty zone.
#[test]
fn should_not_violate_pod_anti_affinity_on_zone() {
    let zonal = |name: &str, zone: char| {
        deployment(
            name,
            1,
            "cpu: \"2\"",
            &format!("nodeSelector: {{topology.kubernetes.io/zone: us-east-1{zone}}}"),
        )
        .replace(&format!("app: {name}"), "security: s2")
    };
    let yaml = format!(
        "{}{}{}{}{}",
        pool(
            "p",
            "",
            "requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}]"
        ),
        zonal("z1", 'a'),
        zonal("z2", 'b'),
        zonal("z3", 'c'),
        deployment(
            "aff",
            1,
            "cpu: 100m",
            "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {security: s2}}}]}}"
        )
    );
    let p = || Some("p".to_string());
    assert_eq!(
        placed(&yaml),
        vec![vec![p()], vec![p()], vec![p()], vec![None]]
    );
}

/// No upstream test (found by the oracle): a pod with self affinity and a spread constraint
/// on the zone. Once two pods hold zone a, the spread (maxSkew 2) leaves zones b and c and
/// the affinity zone a. `Topology.AddRequirements` returns both groups' domains without
/// error; the NodeClaim's `Compatible` check then refuses the empty zone requirement
/// against the pool's zones: incompatible requirements, not a topology error.
#[test]
fn topology_add_requirements_leaves_disjoint_domains_to_the_nodeclaim() {
    let yaml = format!(
        "{}{}",
        pool(
            "p",
            "",
            "requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}]"
        ),
        deployment(
            "web",
            4,
            "cpu: 100m",
            "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: web}}}]}}, topologySpreadConstraints: [{maxSkew: 2, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]"
        )
    );
    let (outcomes, _) = outcomes(&yaml);
    let kinds: Vec<&str> = (outcomes[0].iter())
        .map(|p| match p {
            PodOutcome::Scheduled { .. } | PodOutcome::OnExistingNode { .. } => "schedules",
            PodOutcome::Pending(first, _) => first.as_ref().map_or("none", |(_, f)| f.kind()),
        })
        .collect();
    assert_eq!(
        kinds,
        ["schedules", "schedules", "requirements", "requirements"]
    );
}

/// Each Deployment's pods: the provisioning round of each scheduled one, `None` for a
/// pending one.
fn rounds(yaml: &str) -> Vec<Vec<Option<u32>>> {
    let (outcomes, _) = outcomes(yaml);
    (outcomes.into_iter())
        .map(|pods| {
            pods.into_iter()
                .map(|p| match p {
                    PodOutcome::Scheduled { round, .. } => Some(round),
                    PodOutcome::Pending(..) | PodOutcome::OnExistingNode { .. } => None,
                })
                .collect()
        })
        .collect()
}

/// From the second round on, a node an earlier round launched is an `ExistingNode`
/// (existingnode.go, topology.go at v1.14.3). Each case agrees with Karpenter's rounds in
/// the differential oracle.
#[test]
fn existing_nodes_of_earlier_rounds() {
    type Case = (&'static str, String, Vec<Vec<Option<u32>>>);
    let spot_only = "nodeSelector: {karpenter.sh/capacity-type: spot}";
    let zone_anti_affinity = "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: b}}}]}}";
    let self_affinity = "affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: b}}}]}}";
    let cases: Vec<Case> = vec![
        (
            // A NodeClaim of the pool needs two capacity types, so the spot-only pod is
            // refused in round 1; the node `a`'s NodeClaim launched as spot takes it.
            "ExistingNode.CanAdd checks no minValues",
            format!(
                "{}{}{}",
                pool(
                    "p",
                    "",
                    "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand], minValues: 2}]"
                ),
                deployment("a", 1, "cpu: \"1\"", ""),
                deployment("b", 1, "cpu: 100m", spot_only)
            ),
            vec![vec![Some(1)], vec![Some(2)]],
        ),
        (
            // Round 1 knows no zone of the pool for `b`, which does not tolerate its taint
            // yet when its group is made; round 2 knows the zone of `a`'s node. (The zones
            // are named: a run that knows none judges no zone topology.)
            "countDomains registers the domains of existing nodes",
            format!(
                "{}{}{}",
                pool(
                    "p",
                    "",
                    "requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b]}], taints: [{key: soft, value: \"true\", effect: PreferNoSchedule}]"
                ),
                deployment(
                    "a",
                    1,
                    "cpu: \"1\"",
                    "tolerations: [{key: soft, operator: Exists}]"
                ),
                deployment("b", 2, "cpu: 100m", self_affinity)
            ),
            vec![vec![Some(1)], vec![Some(2), Some(2)]],
        ),
        (
            // `b-0` joins `x`'s NodeClaim while its zone is open, so anti-affinity records
            // it in all three zones; `z` then pins that NodeClaim to us-east-1c. Round 2
            // counts `b-0` in us-east-1c only, and `b-1`, `b-2` take the other zones, one
            // round each (each new NodeClaim is recorded in every zone still open to it).
            "countDomains counts a bound pod in its node's domain only",
            format!(
                "{}{}{}{}",
                pool(
                    "p",
                    "",
                    "requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a, us-east-1b, us-east-1c]}]"
                ),
                deployment("x", 1, "cpu: \"2\"", ""),
                deployment("b", 3, "cpu: \"1\"", zone_anti_affinity),
                deployment(
                    "z",
                    1,
                    "cpu: 500m",
                    "nodeSelector: {topology.kubernetes.io/zone: us-east-1c}"
                )
            ),
            vec![
                vec![Some(1)],
                vec![Some(1), Some(2), Some(3)],
                vec![Some(1)],
            ],
        ),
        (
            // The DaemonSet selects `team: green` and binds host port 8080; the pool only
            // asks `team` to exist. Every NodeClaim of round 1 counts the DaemonSet, so
            // `b`, which binds 8080 too, fits none. `a`'s node is labelled with some other
            // value of `team`, the DaemonSet does not run there, and round 2 puts `b` on it.
            "resolveCustomLabelsFromRequirements, then getCompatibleDaemonPods",
            format!(
                "{}{}{}{}",
                pool("p", "", "requirements: [{key: team, operator: Exists}]"),
                daemonset(
                    "ports: [{containerPort: 8080, hostPort: 8080}], resources: {requests: {cpu: 100m}}",
                    "nodeSelector: {team: green}"
                ),
                deployment("a", 1, "cpu: \"1\"", ""),
                deployment_with(
                    "b",
                    1,
                    "ports: [{containerPort: 8080, hostPort: 8080}], resources: {requests: {cpu: 100m}}",
                    ""
                )
            ),
            vec![vec![Some(1)], vec![Some(2)]],
        ),
        (
            // The DaemonSet does not tolerate the pool's PreferNoSchedule taint. Its 1 cpu
            // leaves room for two of `a`'s pods on the one 4-vCPU node the limit allows;
            // round 2 counts it on that node too, since the template's check made its pod
            // tolerate PreferNoSchedule in place, so the third pod stays Pending.
            "isDaemonPodCompatible tolerates PreferNoSchedule, then getCompatibleDaemonPods",
            format!(
                "{}{}{}",
                pool(
                    "p",
                    "limits: {cpu: \"4\"},",
                    "requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [c6i.xlarge]}], taints: [{key: soft, value: \"true\", effect: PreferNoSchedule}]"
                ),
                daemonset("resources: {requests: {cpu: \"1\"}}", ""),
                deployment(
                    "a",
                    3,
                    "cpu: \"1\"",
                    "tolerations: [{key: soft, operator: Exists}]"
                )
            ),
            vec![vec![Some(1), Some(1), None]],
        ),
    ];
    for (upstream, yaml, expected) in cases {
        assert_eq!(rounds(&yaml), expected, "{upstream}");
    }
}

/// A DaemonSet runs where its admitted pod may: the tolerations its RuntimeClass adds
/// (`scheduling.tolerations`) let it onto a tainted pool, so each NodeClaim counts its cpu.
#[test]
fn daemonset_overhead_with_its_runtime_class_tolerations() {
    let yaml = format!(
        "{}{}{}{}",
        pool(
            "p",
            "limits: {cpu: \"4\"},",
            "requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [c6i.xlarge]}], taints: [{key: sandbox, value: gvisor, effect: NoSchedule}]"
        ),
        "apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
scheduling: {tolerations: [{key: sandbox, operator: Exists}]}
---
",
        daemonset(
            "resources: {requests: {cpu: \"1\"}}",
            "runtimeClassName: gvisor"
        ),
        deployment(
            "a",
            3,
            "cpu: \"1\"",
            "tolerations: [{key: sandbox, operator: Exists}]"
        )
    );
    assert_eq!(rounds(&yaml), vec![vec![Some(1), Some(1), None]]);
}

/// The type the only node launches, for a pool of `requirements` and one 1-cpu pod.
fn launched_type(requirements: &str) -> Option<String> {
    let yaml = format!(
        "{}{}",
        pool("p", "", &format!("requirements: [{requirements}]")),
        deployment("a", 1, "cpu: \"1\"", "")
    );
    let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
    let index = Index::new(&objects);
    let sim = Simulator::new(&index, Catalog::builtin(), Default::default());
    let o = index
        .of_kind(Kind::Deployment)
        .next()
        .expect("a Deployment");
    let spec = o.workload().and_then(|w| w.pod_spec()).expect("a pod spec");
    let workloads = vec![PendingWorkload::new(&sim, o, spec, 1).expect("provisionable")];
    let solved = solve_with_nodes(&sim, &workloads, &mut Existing::default());
    let [node] = solved.nodes.as_slice() else {
        panic!("one node, got {:?}", solved.nodes);
    };
    node.instance_type.clone()
}

/// The AWS provider's `ExoticInstanceTypeFilter` (pkg/providers/instance/filter/
/// filter_test.go at v1.14.3): a g5g.4xlarge (one GPU) is cheaper than a g6f.4xlarge (no
/// GPU resource).
#[test]
fn exotic_instance_filter() {
    let both =
        "key: node.kubernetes.io/instance-type, operator: In, values: [g5g.4xlarge, g6f.4xlarge]";
    let cases = [
        (
            "should reject instance types with exotic resources",
            format!("{{{both}}}"),
            "g6f.4xlarge",
        ),
        (
            "should include metal instance types and those with exotic resources if there are no other options",
            "{key: node.kubernetes.io/instance-type, operator: In, values: [g5g.4xlarge]}"
                .to_string(),
            "g5g.4xlarge",
        ),
        (
            // The filter keeps every type when the NodeClaim has minValues.
            "HasMinValues",
            format!("{{{both}, minValues: 2}}"),
            "g5g.4xlarge",
        ),
    ];
    for (upstream, requirements, expected) in cases {
        assert_eq!(
            launched_type(&requirements).as_deref(),
            Some(expected),
            "{upstream}"
        );
    }
}
