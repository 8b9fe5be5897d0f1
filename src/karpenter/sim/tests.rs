//! Unit tests for the simulator's typed verdicts: one row per way Karpenter's scheduler
//! rejects a pod on a NodePool (karpenter-model §3.3), named after the behaviour, checked against
//! the built-in catalog.

use super::*;
use crate::karpenter::requirements::IncompatibleError;

const NODE_CLASS: &str =
    "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}";

/// Manifests for one NodePool `p` and one Deployment `web`. `pool` holds extra fields of
/// the NodePool's `spec.template.spec`, `limits` its `spec.limits`, `pod` the fields of the
/// pod spec besides `containers`, all in flow style.
fn manifests(pool: &str, limits: &str, replicas: i64, requests: &str, pod: &str) -> String {
    format!(
        "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: p}}
spec:
  limits: {{{limits}}}
  template:
    spec: {{{NODE_CLASS}, {pool}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: {replicas}
  template:
    spec: {{containers: [{{name: app, image: x, resources: {{requests: {{{requests}}}}}}}], {pod}}}
"
    )
}

/// `f` on the simulator of `yaml`, its first Deployment and that Deployment's pod spec.
fn with_first_deployment<R>(yaml: &str, f: impl FnOnce(&Simulator, &Object, &PodSpec) -> R) -> R {
    let objects = crate::parse::parse_source(0, yaml, false, false).objects;
    let index = Index::new(&objects);
    let sim = Simulator::new(&index, Catalog::builtin(), Default::default());
    let obj = index
        .of_kind(Kind::Deployment)
        .next()
        .expect("a Deployment");
    let w = obj.workload().expect("a workload");
    let spec = w.pod_spec().expect("a pod spec");
    f(&sim, obj, spec)
}

/// The verdict on the first Deployment of `yaml`.
fn verdict(yaml: &str) -> Verdict {
    with_first_deployment(yaml, |sim, obj, spec| sim.schedule(obj, spec, false))
}

/// The failure of the closest pool.
fn first_failure(yaml: &str) -> Failure {
    match verdict(yaml) {
        Verdict::Pending(failures) => {
            failures
                .into_iter()
                .next()
                .expect("one failure per pool")
                .failure
        }
        other => panic!("expected Pending, got {other:?}"),
    }
}

struct Case {
    /// The Karpenter behaviour the row shows.
    behaviour: &'static str,
    pool: &'static str,
    limits: &'static str,
    replicas: i64,
    requests: &'static str,
    pod: &'static str,
    expect: fn(&Failure) -> bool,
}

const SMALL: &str = "cpu: 100m, memory: 128Mi";

#[test]
fn each_stage_reports_its_typed_failure() {
    let cases = [
        Case {
            behaviour: "a NoSchedule taint the pod does not tolerate rejects the pool",
            pool: "taints: [{key: dedicated, value: gpu, effect: NoSchedule}]",
            limits: "",
            replicas: 1,
            requests: SMALL,
            pod: "",
            expect: |f| {
                matches!(f, Failure::Taint { taints, fits_if_tolerated: Some(true) }
                    if taints.len() == 1 && taints[0].key == "dedicated" && taints[0].value == "gpu")
            },
        },
        Case {
            behaviour: "a taint on a pool that would not fit anyway is not worth tolerating",
            pool: "taints: [{key: dedicated, effect: NoExecute}], requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [t3]}]",
            limits: "",
            replicas: 1,
            requests: "cpu: 500, memory: 128Mi",
            pod: "",
            expect: |f| {
                matches!(
                    f,
                    Failure::Taint {
                        fits_if_tolerated: Some(false),
                        ..
                    }
                )
            },
        },
        Case {
            behaviour: "a custom label no NodePool defines is incompatible",
            pool: "requirements: []",
            limits: "",
            replicas: 1,
            requests: SMALL,
            pod: "nodeSelector: {example.com/team: a}",
            expect: |f| {
                matches!(f, Failure::Requirements(IncompatibleError::UndefinedLabel { key, .. })
                    if &**key == "example.com/team")
            },
        },
        Case {
            behaviour: "a value outside the pool's requirement is incompatible",
            pool: "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]",
            limits: "",
            replicas: 1,
            requests: SMALL,
            pod: "nodeSelector: {karpenter.k8s.aws/instance-family: c5}",
            expect: |f| {
                matches!(f, Failure::Requirements(IncompatibleError::Conflict { key, .. })
                    if &**key == "karpenter.k8s.aws/instance-family")
            },
        },
        Case {
            behaviour: "compatible requirements that together rule out every type",
            pool: "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [c5]}]",
            limits: "",
            replicas: 1,
            requests: SMALL,
            pod: "nodeSelector: {kubernetes.io/arch: arm64}",
            expect: |f| matches!(f, Failure::NoTypeMeetsRequirements { .. }),
        },
        Case {
            behaviour: "more cpu than any allowed type has is not enough resources, on cpu",
            pool: "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [c5]}]",
            limits: "",
            replicas: 1,
            requests: "cpu: 500, memory: 128Mi",
            pod: "",
            expect: |f| {
                matches!(f, Failure::NotEnoughResources { largest, .. }
                    if largest.resource == "cpu"
                        && largest.name.starts_with("c5.")
                        && !largest.allocatable.is_zero())
            },
        },
        Case {
            behaviour: "an extended resource no EC2 type offers has capacity 0",
            pool: "requirements: []",
            limits: "",
            replicas: 1,
            requests: "cpu: 100m, example.com/widget: 1",
            pod: "",
            expect: |f| {
                matches!(f, Failure::NotEnoughResources { largest, .. }
                    if largest.resource == "example.com/widget" && largest.allocatable.is_zero())
            },
        },
        Case {
            behaviour: "a type whose capacity exceeds a limit is never launched",
            pool: "requirements: []",
            limits: "cpu: 500m",
            replicas: 1,
            requests: SMALL,
            pod: "",
            expect: |f| matches!(f, Failure::AllTypesExceedLimits),
        },
    ];
    for c in cases {
        let yaml = manifests(c.pool, c.limits, c.replicas, c.requests, c.pod);
        let failure = first_failure(&yaml);
        assert!((c.expect)(&failure), "{}: got {failure:?}", c.behaviour);
    }
}

#[test]
fn prefer_no_schedule_taints_do_not_keep_a_pod_off_a_pool() {
    let yaml = manifests(
        "taints: [{key: spot, effect: PreferNoSchedule}]",
        "",
        1,
        SMALL,
        "",
    );
    assert!(matches!(verdict(&yaml), Verdict::Schedules(_)));
}

#[test]
fn the_pool_that_got_furthest_comes_first() {
    let yaml = format!(
        "{}---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: heavy}}
spec:
  weight: 50
  template:
    spec: {{{NODE_CLASS}, taints: [{{key: dedicated, effect: NoSchedule}}]}}
",
        manifests(
            "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [t3]}]",
            "",
            1,
            "cpu: 500",
            "",
        )
    );
    let Verdict::Pending(failures) = verdict(&yaml) else {
        panic!("expected Pending");
    };
    let stages: Vec<Stage> = failures.iter().map(|f| f.failure.stage()).collect();
    assert_eq!(stages, [Stage::InstanceTypes, Stage::Taints]);
}

#[test]
fn karpenter_words_a_million_cpus_as_a_likely_m_vs_m_typo() {
    let yaml = manifests("requirements: []", "", 1, "cpu: 2M", "");
    let failure = first_failure(&yaml);
    assert!(matches!(failure, Failure::NotEnoughResources { .. }));
    let message = failure.karpenter_message("p");
    assert!(
        message.starts_with("no instance type has enough resources, requirements="),
        "{message}"
    );
    assert!(
        message.ends_with(" (CPU request >= 1 Million, m vs M typo?)"),
        "{message}"
    );
    assert_eq!(
        failure.headline("p"),
        "no instance type has enough resources"
    );
}

#[test]
fn the_limits_message_names_the_nodepool_as_karpenter_does() {
    let yaml = manifests("requirements: []", "cpu: 500m", 1, SMALL, "");
    assert_eq!(
        first_failure(&yaml).karpenter_message("p"),
        "all available instance types exceed limits for nodepool (NodePool=p)"
    );
}

/// `pools` NodePools alike but for their names (`p0`, `p1`, …), each with `pool` in its
/// template spec and `limits` as limits, and `workloads` alike Deployments (`w0`, …)
/// requesting `requests`, with `pod` in their pod spec.
fn copies(
    pools: usize,
    pool: &str,
    limits: &str,
    workloads: usize,
    requests: &str,
    pod: &str,
) -> String {
    let mut yaml = String::new();
    for p in 0..pools {
        yaml.push_str(&format!(
            "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: p{p}}}
spec:
  limits: {{{limits}}}
  template:
    spec: {{{NODE_CLASS}, {pool}}}
---
"
        ));
    }
    for w in 0..workloads {
        yaml.push_str(&format!(
            "apiVersion: apps/v1
kind: Deployment
metadata: {{name: w{w}}}
spec:
  replicas: 3
  template:
    spec: {{containers: [{{name: app, image: x, resources: {{requests: {{{requests}}}}}}}], {pod}}}
---
"
        ));
    }
    yaml
}

/// The verdict on every Deployment of `yaml` from one simulator, and how many times a
/// pool's stages ran; with `plain`, from a simulator per Deployment whose pools share no
/// template (the path without the memo).
fn verdicts(yaml: &str, plain: bool) -> (Vec<String>, usize) {
    let objects = crate::parse::parse_source(0, yaml, false, false).objects;
    let index = Index::new(&objects);
    let shared = Simulator::new(&index, Catalog::builtin(), Default::default());
    let mut evaluations = 0;
    let out = index
        .of_kind(Kind::Deployment)
        .map(|obj| {
            let w = obj.workload().expect("a workload");
            let spec = w.pod_spec().expect("a pod spec");
            let verdict = if plain {
                let mut sim = Simulator::new(&index, Catalog::builtin(), Default::default());
                sim.template_of = (0..sim.pools.len()).collect();
                let v = sim.schedule(obj, spec, false);
                evaluations += sim.pool_evaluations();
                v
            } else {
                shared.schedule(obj, spec, false)
            };
            format!("{verdict:?}")
        })
        .collect();
    if !plain {
        evaluations = shared.pool_evaluations();
    }
    (out, evaluations)
}

#[test]
fn alike_pools_are_judged_once_per_workload() {
    // 6 Deployments that fit nowhere × 5 NodePools alike but for their names: one pool
    // evaluation per Deployment, each failure still naming its own pool.
    let yaml = copies(5, "requirements: []", "", 6, "cpu: 5000", "");
    let (memo, evaluations) = verdicts(&yaml, false);
    assert_eq!(evaluations, 6);
    let (plain, plain_evaluations) = verdicts(&yaml, true);
    assert_eq!(plain_evaluations, 30);
    assert_eq!(memo, plain);
}

#[test]
fn the_memo_gives_the_plain_path_s_verdicts() {
    let tainted = "requirements: [], taints: [{key: dedicated, effect: NoSchedule}]";
    let cases = [
        copies(3, "requirements: []", "", 4, "cpu: 500m", ""),
        copies(3, tainted, "", 4, "cpu: 500m", ""),
        copies(3, tainted, "", 2, "cpu: 5000", ""),
        copies(3, "requirements: []", "cpu: 1", 2, "cpu: 500m", ""),
        copies(3, "requirements: []", "cpu: 1000", 2, "cpu: 500", ""),
        copies(
            3,
            "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [t3]}]",
            "",
            2,
            "cpu: 500m",
            "nodeSelector: {karpenter.k8s.aws/instance-family: m5}",
        ),
        copies(
            3,
            "requirements: []",
            "",
            2,
            "cpu: 500m",
            "nodeSelector: {karpenter.sh/nodepool: p1}",
        ),
    ];
    for yaml in &cases {
        let (memo, evaluations) = verdicts(yaml, false);
        let (plain, plain_evaluations) = verdicts(yaml, true);
        assert_eq!(memo, plain, "{yaml}");
        assert!(evaluations <= plain_evaluations, "{yaml}");
    }
}

/// One NodePool per entry (name, extra `spec` fields at the NodePool level, extra fields of
/// its `template.spec`) and the Deployment `web` of [`manifests`]' shape.
fn pools_and_web(pools: &[(&str, &str, &str)], requests: &str, pod: &str) -> String {
    let mut yaml = String::new();
    for (name, spec, template) in pools {
        yaml.push_str(&format!(
            "apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: {name}}}
spec:
  {spec}
  template:
    spec: {{{NODE_CLASS}, {template}}}
---
"
        ));
    }
    yaml.push_str(&format!(
        "apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 1
  template:
    spec: {{containers: [{{name: app, image: x, resources: {{requests: {{{requests}}}}}}}], {pod}}}
"
    ));
    yaml
}

/// Rows named after the upstream test they encode (core
/// `pkg/controllers/provisioning/suite_test.go` and `scheduling/instance_selection_test.go`
/// at v1.14.3), each with the verdict Karpenter reaches.
#[allow(clippy::too_many_lines, reason = "one table, a row per case")]
#[test]
fn upstream_cases() {
    struct Case {
        upstream: &'static str,
        pools: &'static [(&'static str, &'static str, &'static str)],
        pod: &'static str,
        /// The NodePool the pod lands on, or `None` when it stays pending.
        lands_on: Option<&'static str>,
        /// The closest failure, when pending.
        failure: fn(&Failure) -> bool,
    }
    const FAMILIES: &str = "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5], minValues: 2}]";
    let cases = [
        Case {
            upstream: "should not match NodePool with PreferNoSchedule taint when other NodePool match",
            pools: &[
                (
                    "preferred-off",
                    "weight: 50",
                    "taints: [{key: foo, value: bar, effect: PreferNoSchedule}]",
                ),
                ("plain", "", "requirements: []"),
            ],
            pod: "",
            lands_on: Some("plain"),
            failure: |_| false,
        },
        Case {
            upstream: "should tolerate PreferNoSchedule taint only after trying to relax Affinity terms",
            pools: &[(
                "preferred-off",
                "",
                "taints: [{key: foo, value: bar, effect: PreferNoSchedule}]",
            )],
            pod: "",
            lands_on: Some("preferred-off"),
            failure: |_| false,
        },
        Case {
            upstream: "should schedule respecting the minValues from instance-type requirements",
            pools: &[("p", "", FAMILIES)],
            pod: "",
            lands_on: Some("p"),
            failure: |_| false,
        },
        Case {
            upstream: "should not schedule if the minValues requirement is not met (a pod narrowing the key)",
            pools: &[("p", "", FAMILIES)],
            pod: "nodeSelector: {karpenter.k8s.aws/instance-family: m5}",
            lands_on: None,
            failure: |f| {
                matches!(f, Failure::MinValuesNotMet { keys, .. }
                    if keys == &["karpenter.k8s.aws/instance-family"])
            },
        },
        Case {
            upstream: "minValues on a key the offerings give (capacity type), narrowed by the pod",
            pools: &[(
                "p",
                "",
                "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot, on-demand], minValues: 2}]",
            )],
            pod: "nodeSelector: {karpenter.sh/capacity-type: spot}",
            lands_on: None,
            failure: |f| {
                matches!(f, Failure::MinValuesNotMet { keys, .. }
                    if keys == &["karpenter.sh/capacity-type"])
            },
        },
        Case {
            upstream: "NewScheduler: skipping, nodepool requirements filtered out all instance types (no offering: reserved without reservations)",
            pools: &[(
                "p",
                "",
                "requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [reserved]}]",
            )],
            pod: "",
            lands_on: None,
            failure: |f| matches!(f, Failure::NoCompatibleInstanceTypes { min_values: false }),
        },
        Case {
            upstream: "NewScheduler: skipping, nodepool requirements filtered out all instance types (minValues)",
            pools: &[(
                "p",
                "",
                "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5, c5, zz9], minValues: 3}]",
            )],
            pod: "",
            lands_on: None,
            failure: |f| matches!(f, Failure::NoCompatibleInstanceTypes { min_values: true }),
        },
        Case {
            upstream: "should not schedule when limits are exceeded (checked before taints)",
            pools: &[(
                "p",
                "limits: {cpu: 500m}",
                "taints: [{key: dedicated, effect: NoSchedule}]",
            )],
            pod: "",
            lands_on: None,
            failure: |f| matches!(f, Failure::AllTypesExceedLimits),
        },
        Case {
            upstream: "should not schedule if limits would be exceeded (node)",
            pools: &[("p", "limits: {nodes: \"0\"}", "requirements: []")],
            pod: "",
            lands_on: None,
            failure: |f| matches!(f, Failure::NodeLimitsExhausted),
        },
        Case {
            upstream: "should schedule if limits would be met (small types within the limit, the pod too big for them)",
            pools: &[("p", "limits: {cpu: \"2\"}", "requirements: []")],
            pod: "",
            lands_on: Some("p"),
            failure: |_| false,
        },
    ];
    for c in cases {
        let yaml = pools_and_web(c.pools, SMALL, c.pod);
        match (verdict(&yaml), c.lands_on) {
            (Verdict::Schedules(p), Some(name)) => {
                let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
                let index = Index::new(&objects);
                let sim = Simulator::new(&index, Catalog::builtin(), Default::default());
                assert_eq!(sim.pools[p.pool].name, name, "{}", c.upstream);
            }
            (Verdict::Pending(f), None) => {
                let first = &f.first().expect("a failure").failure;
                assert!((c.failure)(first), "{}: got {first:?}", c.upstream);
            }
            (other, _) => panic!("{}: got {other:?}", c.upstream),
        }
    }
}

/// Limits are charged with Karpenter's capacity (memory after the VM overhead), and a pod
/// too big for the types within a limit is short of resources, not over the limit: the
/// types over it were filtered out before the pod was tried.
#[test]
fn types_over_a_limit_are_gone_before_the_pod_is_tried() {
    let yaml = manifests("requirements: []", "cpu: \"2\"", 1, "cpu: \"3\"", "");
    assert!(
        matches!(first_failure(&yaml), Failure::NotEnoughResources { .. }),
        "{:?}",
        first_failure(&yaml)
    );
}

/// A NodePool whose zones the cluster does not have is skipped before its limits are looked
/// at (`NewScheduler` drops the template; `addToNewNodeClaim` never sees it): known zones
/// turn a limits verdict into a skip.
#[test]
fn a_pool_without_offerings_is_skipped_before_its_limits() {
    let yaml = manifests(
        "requirements: [{key: topology.kubernetes.io/zone, operator: NotIn, values: [us-east-1a, us-east-1c]}]",
        "cpu: 500m",
        1,
        "cpu: 100m",
        "",
    );
    let objects = crate::parse::parse_source(0, &yaml, false, false).objects;
    let index = Index::new(&objects);
    let sim = Simulator::new(&index, Catalog::builtin(), Default::default());
    assert!(matches!(sim.gate(0), Some(Failure::AllTypesExceedLimits)));
    let zones = ["us-east-1a".to_string(), "us-east-1c".to_string()];
    let sim = sim.with_zones(&zones);
    assert!(sim.gate(0).is_some_and(Failure::skips_pool));
}

/// A pod asking more of a resource than every type weighed for it has is refused by the
/// [`TypeBound`] with the failure the scan over the types gives; a pod some type may hold
/// is left to the scan. Pools with limits, requirements, a DaemonSet whose overhead and
/// host port differ by type; pods of many sizes, with and without host ports.
#[test]
fn a_type_bound_refuses_as_the_scan_does() {
    let daemonset = "---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  template:
    spec:
      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [c5]}]}]}}}
      containers: [{name: a, image: x, ports: [{containerPort: 80, hostPort: 80}], resources: {requests: {cpu: 500m, memory: 1Gi}}}]
";
    let pools = [
        ("requirements: []", "cpu: \"20\""),
        (
            "requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [c5, m5]}]",
            "cpu: \"40\", memory: 100Gi",
        ),
        ("requirements: []", ""),
    ];
    let sizes = ["100m", "2", "8", "16", "24", "40", "100"];
    let memories = ["128Mi", "16Gi", "90Gi", "400Gi"];
    let pods = [
        "",
        "nodeSelector: {karpenter.k8s.aws/instance-family: c5}",
        "nodeSelector: {karpenter.k8s.aws/instance-family: m5}",
    ];
    let mut refused = 0;
    for (pool, limits) in pools {
        for (cpu, memory) in sizes
            .iter()
            .flat_map(|c| memories.iter().map(move |m| (c, m)))
        {
            for (pod, port) in pods.iter().flat_map(|p| [(p, false), (p, true)]) {
                let requests = format!("cpu: \"{cpu}\", memory: {memory}");
                let mut yaml = manifests(pool, limits, 1, &requests, pod);
                if port {
                    yaml = yaml.replace(
                        "image: x,",
                        "image: x, ports: [{containerPort: 80, hostPort: 80}],",
                    );
                }
                yaml.push_str(daemonset);
                refused += usize::from(bound_and_scan_agree(&yaml));
            }
        }
    }
    assert!(refused > 50, "the bound refused only {refused} pods");
}

/// Whether the bound of the first pool refused the first Deployment's pod, after checking
/// that [`Simulator::instance_types`] gives the same with it as without it.
fn bound_and_scan_agree(yaml: &str) -> bool {
    with_first_deployment(yaml, |sim, obj, spec| {
        bound_and_scan_agree_on(sim, obj, spec, yaml)
    })
}

/// [`bound_and_scan_agree`] on `obj`'s pod `spec`, read from `yaml`.
fn bound_and_scan_agree_on(sim: &Simulator, obj: &Object, spec: &PodSpec, yaml: &str) -> bool {
    let attempts = sim.relaxations(sim.admitted.attempts(obj, spec).expect("attempts"));
    let names = |r: Result<Vec<PoolType>, Box<Failure>>| {
        r.map(|types| types.iter().map(|t| t.it.name.clone()).collect::<Vec<_>>())
            .map_err(|f| format!("{f:?}"))
    };
    sim.each_attempt(obj, spec, &attempts, true, |pod| {
        let bound = sim.type_bound(0, pod);
        let bounded = PodData {
            bound: bound.as_ref(),
            ..*pod
        };
        let refused = sim.refused_by_bound(0, &bounded).is_some();
        assert_eq!(
            names(sim.instance_types(0, pod)),
            names(sim.instance_types(0, &bounded)),
            "{yaml}"
        );
        Some(refused)
    })
    .expect("an attempt")
}
