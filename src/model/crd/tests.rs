use super::*;
use crate::model::{Kind, Object};

/// A linted template: its role, its replica count, and the text its replicas' span covers.
type Row = (String, i64, String);

/// Each object parsed from `yaml`, as a [`Row`].
fn parts(yaml: &str) -> Vec<Row> {
    let parsed = crate::parse::parse_source(0, yaml, false, false);
    assert!(parsed.problems.is_empty(), "{:?}", parsed.problems);
    (parsed.objects.iter())
        .filter_map(|o: &Object| {
            let w = o.workload()?;
            let at = w.replicas.as_ref().map(|r| o.span(r));
            let text = at.map_or("", |s| &yaml[s.offset..s.offset + s.len]);
            Some((
                w.role().unwrap_or("-").to_string(),
                w.replica_count(),
                text.to_string(),
            ))
        })
        .collect()
}

fn row(role: &str, n: i64, at: &str) -> Row {
    (role.to_string(), n, at.to_string())
}

const POD: &str = "{spec: {containers: [{name: c, image: i}]}}";

#[test]
fn every_kind_has_one_row_and_is_classified_by_group_and_kind() {
    assert!(TABLE.len() >= 12);
    for e in TABLE {
        assert_eq!(
            CrdKind::classify(e.group, e.name),
            Some(e.kind),
            "{}",
            e.name
        );
        assert_eq!(TABLE.iter().filter(|o| o.kind == e.kind).count(), 1);
        let api = format!("{}/v1", e.group);
        assert_eq!(Kind::classify(&api, e.name), Kind::Crd(e.kind));
    }
    // The core kinds of the same names stay what they were.
    assert_eq!(Kind::classify("batch/v1", "Job"), Kind::Job);
    assert_eq!(Kind::classify("v1", "Service"), Kind::Other);
    assert_eq!(Kind::classify("example.com/v1", "RayCluster"), Kind::Other);
}

#[allow(clippy::too_many_lines, reason = "one table, a row per case")]
#[test]
fn replica_arithmetic_per_kind() {
    let cases: Vec<(&str, String, Vec<Row>)> = vec![
        (
            "ray: worker replicas raised to minReplicas, times numOfHosts, 0 when unwritten",
            format!(
                "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: r}}\nspec:\n  headGroupSpec: {{template: {POD}}}\n  workerGroupSpecs:\n  - {{groupName: gpu, replicas: 3, numOfHosts: 2, template: {POD}}}\n  - {{groupName: min, minReplicas: 4, template: {POD}}}\n  - {{groupName: raised, replicas: 1, minReplicas: 2, template: {POD}}}\n  - {{groupName: none, template: {POD}}}\n"
            ),
            vec![
                row("headGroupSpec", 1, ""),
                row("workerGroupSpecs[gpu]", 6, "3"),
                row("workerGroupSpecs[min]", 4, "4"),
                row("workerGroupSpecs[raised]", 2, "2"),
                // No count written: on the template, where a count would go.
                row("workerGroupSpecs[none]", 0, "{"),
            ],
        ),
        (
            "ray job: cluster groups plus the submitter",
            format!(
                "apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {{name: j}}\nspec:\n  rayClusterSpec:\n    headGroupSpec: {{template: {POD}}}\n    workerGroupSpecs: [{{groupName: w, replicas: 2, template: {POD}}}]\n  submitterPodTemplate: {POD}\n"
            ),
            vec![
                row("headGroupSpec", 1, ""),
                row("workerGroupSpecs[w]", 2, "2"),
                row("submitterPodTemplate", 1, ""),
            ],
        ),
        (
            "ray service: the cluster config",
            format!(
                "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {{name: s}}\nspec:\n  rayClusterConfig:\n    headGroupSpec: {{template: {POD}}}\n"
            ),
            vec![row("headGroupSpec", 1, "")],
        ),
        (
            "lws: leaders are replicas, workers replicas times size minus one",
            format!(
                "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l}}\nspec:\n  replicas: 3\n  leaderWorkerTemplate:\n    size: 4\n    leaderTemplate: {POD}\n    workerTemplate: {POD}\n"
            ),
            vec![row("leaderTemplate", 3, "3"), row("workerTemplate", 9, "3")],
        ),
        (
            "lws: without a leaderTemplate every pod is a worker",
            format!(
                "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l}}\nspec:\n  leaderWorkerTemplate:\n    size: 4\n    workerTemplate: {POD}\n"
            ),
            vec![row("workerTemplate", 4, "4")],
        ),
        (
            "pytorchjob: replicas as written",
            format!(
                "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: p}}\nspec:\n  pytorchReplicaSpecs:\n    Master: {{replicas: 1, template: {POD}}}\n    Worker: {{replicas: 8, template: {POD}}}\n"
            ),
            vec![row("Master", 1, "1"), row("Worker", 8, "8")],
        ),
        (
            "mpijob v2beta1: launcher defaults to 1",
            format!(
                "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: m}}\nspec:\n  mpiReplicaSpecs:\n    Launcher: {{template: {POD}}}\n    Worker: {{replicas: 2, template: {POD}}}\n"
            ),
            vec![row("Launcher", 1, ""), row("Worker", 2, "2")],
        ),
        (
            "volcano: tasks as written",
            format!(
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: v}}\nspec:\n  tasks:\n  - {{name: ps, replicas: 2, template: {POD}}}\n  - {{name: worker, replicas: 5, template: {POD}}}\n"
            ),
            vec![row("tasks[ps]", 2, "2"), row("tasks[worker]", 5, "5")],
        ),
        (
            "jobset: replicas times parallelism, both defaulting to 1",
            format!(
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js}}\nspec:\n  replicatedJobs:\n  - name: workers\n    replicas: 2\n    template: {{spec: {{parallelism: 4, template: {POD}}}}}\n  - name: driver\n    template: {{spec: {{template: {POD}}}}}\n"
            ),
            vec![row("replicatedJobs[workers]", 8, "2"), row("replicatedJobs[driver]", 1, "")],
        ),
        (
            "rollout: replicas",
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {{name: ro}}\nspec:\n  replicas: 5\n  template: {POD}\n"
            ),
            vec![row("-", 5, "5")],
        ),
        (
            "scaledjob: one job's parallelism",
            format!(
                "apiVersion: keda.sh/v1alpha1\nkind: ScaledJob\nmetadata: {{name: sj}}\nspec:\n  jobTargetRef: {{parallelism: 3, template: {POD}}}\n"
            ),
            vec![row("-", 3, "3")],
        ),
        (
            "knative service: one pod without min-scale",
            format!(
                "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {{name: kn}}\nspec:\n  template: {POD}\n"
            ),
            vec![row("-", 1, "")],
        ),
        (
            "argo workflow: one pod per container or script template",
            "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: wf-}\nspec:\n  templates:\n  - {name: main, steps: [[{name: a, template: a}]]}\n  - {name: a, container: {image: i}}\n  - {name: b, script: {image: i, source: x}}\n".to_string(),
            vec![row("templates[a]", 1, ""), row("templates[b]", 1, "")],
        ),
        (
            "spark: one driver, instances executors",
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  driver: {cores: 1, memory: 512m}\n  executor: {instances: 4, cores: 2, memory: 4g}\n".to_string(),
            vec![row("driver", 1, ""), row("executor", 4, "4")],
        ),
        (
            "lws: a leaderTemplate without size has no workers (size defaults to 1)",
            format!(
                "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l}}\nspec:\n  replicas: 2\n  leaderWorkerTemplate:\n    leaderTemplate: {POD}\n    workerTemplate: {POD}\n"
            ),
            vec![row("leaderTemplate", 2, "2"), row("workerTemplate", 0, "2")],
        ),
        (
            "mpijob v1: a Worker without replicas has none (defaults to 0)",
            format!(
                "apiVersion: kubeflow.org/v1\nkind: MPIJob\nmetadata: {{name: m}}\nspec:\n  mpiReplicaSpecs:\n    Launcher: {{template: {POD}}}\n    Worker: {{template: {POD}}}\n"
            ),
            vec![row("Launcher", 1, ""), row("Worker", 0, "{")],
        ),
        (
            "tfjob: replica types are matched in any case, and default to 1",
            format!(
                "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {{name: t}}\nspec:\n  tfReplicaSpecs:\n    ps: {{replicas: 2, template: {POD}}}\n    worker: {{template: {POD}}}\n"
            ),
            vec![row("PS", 2, "2"), row("Worker", 1, "")],
        ),
        (
            "volcano: a task without replicas has none (not defaulted)",
            format!(
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: v}}\nspec:\n  tasks:\n  - {{name: idle, template: {POD}}}\n"
            ),
            vec![row("tasks[idle]", 0, "{")],
        ),
        (
            "jobset: completions caps a job's parallelism",
            format!(
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js}}\nspec:\n  replicatedJobs:\n  - name: w\n    replicas: 3\n    template: {{spec: {{parallelism: 4, completions: 2, template: {POD}}}}}\n  - name: c\n    template: {{spec: {{completions: 5, template: {POD}}}}}\n"
            ),
            vec![row("replicatedJobs[w]", 6, "3"), row("replicatedJobs[c]", 1, "")],
        ),
        (
            "scaledjob: completions caps parallelism",
            format!(
                "apiVersion: keda.sh/v1alpha1\nkind: ScaledJob\nmetadata: {{name: sj}}\nspec:\n  jobTargetRef: {{parallelism: 3, completions: 2, template: {POD}}}\n"
            ),
            vec![row("-", 2, "2")],
        ),
        (
            "knative: min-scale annotation on the revision template",
            "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: kn}\nspec:\n  template:\n    metadata:\n      annotations: {autoscaling.knative.dev/min-scale: \"3\"}\n    spec: {containers: [{name: c, image: i}]}\n".to_string(),
            vec![row("-", 3, "\"3\"")],
        ),
        (
            "knative: the older minScale spelling, and no replicas field",
            "apiVersion: serving.knative.dev/v1\nkind: Configuration\nmetadata: {name: kn}\nspec:\n  replicas: 9\n  template:\n    metadata:\n      annotations: {autoscaling.knative.dev/minScale: \"2\"}\n    spec: {containers: [{name: c, image: i}]}\n".to_string(),
            vec![row("-", 2, "\"2\"")],
        ),
        (
            "knative: min-scale 0 still starts one pod",
            "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: kn}\nspec:\n  template:\n    metadata:\n      annotations: {autoscaling.knative.dev/min-scale: \"0\"}\n    spec: {containers: [{name: c, image: i}]}\n".to_string(),
            vec![row("-", 1, "")],
        ),
        (
            "spark: dynamic allocation starts max(minExecutors, initialExecutors, instances)",
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  dynamicAllocation: {enabled: true, initialExecutors: 3, minExecutors: 2}\n  driver: {cores: 1}\n  executor: {instances: 1, cores: 1}\n".to_string(),
            vec![row("driver", 1, ""), row("executor", 3, "3")],
        ),
        (
            "spark: dynamic allocation with no counts starts no executors",
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  dynamicAllocation: {enabled: true}\n  driver: {cores: 1}\n  executor: {cores: 1}\n".to_string(),
            vec![row("driver", 1, ""), row("executor", 0, "{")],
        ),
    ];
    for (name, yaml, want) in cases {
        assert_eq!(parts(&yaml), want, "{name}\n{yaml}");
    }
}

#[test]
fn spark_requests_are_what_spark_asks_for() {
    let yaml = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  nodeSelector: {team: data}\n  driver: {coreRequest: 500m, memory: 512m}\n  executor:\n    cores: 2\n    memory: 8g\n    memoryOverhead: 1g\n    gpu: {name: nvidia.com/gpu, quantity: 1}\n    nodeSelector: {pool: gpu}\n";
    let parsed = crate::parse::parse_source(0, yaml, false, false);
    let spec = |i: usize| parsed.objects[i].workload().and_then(|w| w.pod_spec());
    let requests = |i: usize| -> Vec<(String, String)> {
        let c = &spec(i).expect("a pod spec").containers[0];
        let r = &c.resources.as_ref().expect("requests").value;
        (r.requests.iter().chain(r.limits.iter()))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    // 512 MiB + the 384 MiB minimum overhead.
    // Requests, then limits: Spark limits memory to what it requests.
    assert_eq!(
        requests(0),
        [
            pair("cpu", "500m"),
            pair("memory", "896Mi"),
            pair("memory", "896Mi")
        ]
    );
    assert_eq!(
        requests(1),
        [
            pair("cpu", "2"),
            pair("memory", "9216Mi"),
            pair("memory", "9216Mi"),
            pair("nvidia.com/gpu", "1")
        ]
    );
    let selector = |i: usize| spec(i).map(|s| s.node_selector.iter().count());
    assert_eq!(selector(0), Some(1));
    // The spec's selector and the role's both apply (Spark adds both to the pod).
    assert_eq!(selector(1), Some(2));
    let pool = spec(1).and_then(|s| s.node_selector.get("pool").cloned());
    assert_eq!(pool.map(|v| v.value.to_string()).as_deref(), Some("gpu"));
    // The memory request points at the `memory` value.
    let o = &parsed.objects[1];
    let c = &spec(1).expect("a pod spec").containers[0];
    let memory = c
        .resources
        .as_ref()
        .and_then(|r| r.value.requests.entry("memory"));
    let at = memory.map(|(_, v)| o.span(v)).expect("memory");
    assert_eq!(&yaml[at.offset..at.offset + at.len], "8g");
}

/// The memory Spark requests for a driver, by what the application states: each row is
/// `(what it encodes, spec lines, the request)`.
#[test]
fn spark_memory_overhead_per_application() {
    let rows = [
        ("jvm default: 1g plus the 384 MiB floor", "", "1408Mi"),
        (
            "scala 8g: 10 % overhead, truncated",
            "  type: Scala\n  driver: {memory: 8g}\n",
            "9011Mi",
        ),
        (
            "python: 40 % overhead (non-JVM)",
            "  type: Python\n  driver: {memory: 2g}\n",
            "2867Mi",
        ),
        (
            "r: 40 % overhead (non-JVM)",
            "  type: R\n  driver: {memory: 4g}\n",
            "5734Mi",
        ),
        (
            "python small: the 384 MiB floor still applies",
            "  type: Python\n  driver: {memory: 512m}\n",
            "896Mi",
        ),
        (
            "memoryOverheadFactor overrides the type's factor",
            "  type: Python\n  memoryOverheadFactor: \"0.2\"\n  driver: {memory: 4g}\n",
            "4915Mi",
        ),
        (
            "a plain memory number is MiB",
            "  driver: {memory: \"2048\"}\n",
            "2432Mi",
        ),
        (
            "memoryOverhead replaces the factor; plain is MiB",
            "  type: Python\n  driver: {memory: 1g, memoryOverhead: \"512\"}\n",
            "1536Mi",
        ),
    ];
    for (name, lines, want) in rows {
        let yaml = format!(
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {{name: sp}}\nspec:\n{lines}"
        );
        let yaml = if yaml.contains("driver:") {
            yaml
        } else {
            format!("{yaml}  driver: {{cores: 1}}\n")
        };
        let parsed = crate::parse::parse_source(0, &yaml, false, false);
        let spec = (parsed.objects.first())
            .and_then(|o| o.workload())
            .and_then(|w| w.pod_spec());
        let r = spec
            .and_then(|s| s.containers[0].resources.as_ref())
            .map(|r| &r.value);
        let memory = r
            .and_then(|r| r.requests.get("memory"))
            .map(|v| v.value.to_string());
        let limit = r
            .and_then(|r| r.limits.get("memory"))
            .map(|v| v.value.to_string());
        assert_eq!(memory.as_deref(), Some(want), "{name}");
        assert_eq!(limit.as_deref(), Some(want), "{name}: limit");
    }
}

#[test]
fn jvm_memory_strings() {
    for (s, mib) in [
        ("512m", Some(512)),
        ("1g", Some(1024)),
        ("2G", Some(2048)),
        // Rounded down, as Spark's ByteUnit.convertTo does.
        ("1536k", Some(1)),
        // No unit: MiB (bytesConf(ByteUnit.MiB)), not bytes.
        ("2048", Some(2048)),
        ("1048576b", Some(1)),
        ("1t", Some(1024 * 1024)),
        ("1Gi", None),
        ("1.5g", None),
        ("lots", None),
    ] {
        assert_eq!(jvm_mib(s), mib, "{s}");
    }
}

#[test]
fn argo_templates_take_the_workflow_defaults_they_do_not_set() {
    let yaml = "apiVersion: argoproj.io/v1alpha1\nkind: WorkflowTemplate\nmetadata: {name: wt}\nspec:\n  nodeSelector: {team: a}\n  tolerations: [{key: k, operator: Exists}]\n  templates:\n  - name: own\n    nodeSelector: {team: b}\n    container: {image: i}\n  - name: inherits\n    containerSet: {containers: [{name: x, image: i}, {name: y, image: i}]}\n";
    let parsed = crate::parse::parse_source(0, yaml, false, false);
    let specs: Vec<&PodSpec> = (parsed.objects.iter())
        .filter_map(|o| o.workload()?.pod_spec())
        .collect();
    assert_eq!(specs.len(), 2);
    let team = |s: &PodSpec| s.node_selector.get("team").map(|v| v.value.to_string());
    assert_eq!(team(specs[0]).as_deref(), Some("b"));
    assert_eq!(team(specs[1]).as_deref(), Some("a"));
    assert_eq!(specs[0].tolerations.len(), 1);
    assert_eq!(specs[1].containers.len(), 2);
}

#[test]
fn templates_of_one_object_are_objects_with_its_header_and_exact_spans() {
    let yaml = "# a comment\napiVersion: ray.io/v1\nkind: RayCluster\nmetadata:\n  name: rc\n  namespace: ml\nspec:\n  headGroupSpec:\n    template:\n      spec:\n        containers: [{name: head, image: i}]\n  workerGroupSpecs:\n  - groupName: gpu\n    replicas: 2\n    template:\n      spec:\n        nodeSelector:\n          gpu: h100\n        containers: [{name: w, image: i}]\n";
    let parsed = crate::parse::parse_source(0, yaml, false, false);
    // One object in the file, two linted workloads.
    assert_eq!(parsed.object_count, 1);
    assert_eq!(parsed.objects.len(), 2);
    for o in &parsed.objects {
        assert_eq!((o.name(), o.namespace()), ("rc", Some("ml")));
        assert_eq!(&yaml[o.kind_span.offset..][..o.kind_span.len], "RayCluster");
    }
    let worker = &parsed.objects[1];
    let spec = worker
        .workload()
        .and_then(|w| w.pod_spec())
        .expect("a spec");
    let (k, _) = spec.node_selector.entry("gpu").expect("the selector");
    let at = worker.span(k);
    let line = yaml[..at.offset].matches('\n').count() + 1;
    assert_eq!((line, &yaml[at.offset..at.offset + at.len]), (18, "gpu"));
    let described = crate::diagnostic::ObjectRef::of(worker).to_string();
    assert_eq!(described, "RayCluster ml/rc (workerGroupSpecs[gpu])");
}

/// The rejected values of `yaml`, each as `(the text at its span, its message)`, and the
/// workloads still linted.
fn rejected(yaml: &str) -> (Vec<(String, String)>, usize) {
    let parsed = crate::parse::parse_source(0, yaml, false, false);
    let problems = (parsed.problems.iter())
        .map(|p| {
            assert!(p.rejected_value, "{}", p.message);
            let at = &yaml[p.span.offset..p.span.offset + p.span.len];
            (at.to_string(), p.message.clone())
        })
        .collect();
    (problems, parsed.objects.len())
}

/// A rejected value expected: the text at its span and a part of its message.
type Expected = (&'static str, &'static str);

/// Values of a SparkApplication or an Argo template that Spark or the API server would
/// reject are each a rejected value at its span; the object's pods are still linted.
#[test]
fn rejected_values_of_spark_and_argo_templates() {
    let spark = |lines: &str| {
        format!(
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {{name: sp}}\nspec:\n{lines}"
        )
    };
    let rows: Vec<(&str, String, Vec<Expected>)> = vec![
        (
            "spark memory in Kubernetes notation: Spark does not read Gi",
            spark("  driver: {memory: 1Gi}\n  executor: {memory: 2g, memoryOverhead: 512Mi}\n"),
            vec![
                ("1Gi", "spec.driver.memory: invalid value \"1Gi\": Spark rejects it"),
                ("512Mi", "spec.executor.memoryOverhead: invalid value \"512Mi\": Spark rejects it"),
            ],
        ),
        (
            "spark fractional memory",
            spark("  driver: {memory: 1.5g}\n"),
            vec![("1.5g", "spec.driver.memory: invalid value \"1.5g\": Spark rejects it")],
        ),
        (
            "spark cores: an int32, at least 1",
            spark("  driver: {cores: abc}\n  executor: {cores: 0}\n"),
            vec![
                ("abc", "the API server rejects the string \"abc\": the field is an integer"),
                ("0", "spec.executor.cores: invalid value \"0\": the API server rejects it: the CRD's minimum is 1"),
            ],
        ),
        (
            "spark coreRequest and coreLimit: pod quantities",
            spark("  driver: {coreRequest: lots, coreLimit: -1}\n"),
            vec![
                ("lots", "spec.driver.coreRequest: invalid value \"lots\": the API server rejects it"),
                ("-1", "spec.driver.coreLimit: invalid value \"-1\": the API server rejects it"),
            ],
        ),
        (
            "scheduled spark: under spec.template",
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: ScheduledSparkApplication\nmetadata: {name: sp}\nspec:\n  template:\n    executor: {memory: 4Gi}\n".into(),
            vec![("4Gi", "spec.template.executor.memory: invalid value \"4Gi\"")],
        ),
        (
            "spark values Spark reads: no rejection",
            spark("  driver: {cores: 2, coreRequest: 500m, coreLimit: \"1\", memory: 4G, memoryOverhead: 512mb}\n"),
            vec![],
        ),
        (
            "argo: container, script, containerSet, sidecars and initContainers, by path",
            "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\nspec:\n  templates:\n  - name: steps\n    steps: []\n  - name: a\n    container: {image: i, resources: {requests: {cpu: lots}}}\n    sidecars: [{name: s, image: i, resources: {limits: {memory: 1Gb}}}]\n    initContainers: [{name: n, image: i, resources: {requests: {cpu: -1}}}]\n  - name: b\n    containerSet: {containers: [{name: x, image: i}, {name: y, image: i, resources: {requests: {memory: x1}}}]}\n".into(),
            vec![
                ("lots", "spec.templates[1].container.resources.requests[cpu]: invalid value \"lots\": the API server rejects it"),
                ("1Gb", "spec.templates[1].sidecars[0].resources.limits[memory]: invalid value \"1Gb\""),
                ("-1", "spec.templates[1].initContainers[0].resources.requests[cpu]: invalid value \"-1\""),
                ("x1", "spec.templates[2].containerSet.containers[1].resources.requests[memory]: invalid value \"x1\""),
            ],
        ),
        (
            "cron workflow: under spec.workflowSpec",
            "apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\nmetadata: {name: cw}\nspec:\n  workflowSpec:\n    templates:\n    - name: a\n      script: {image: i, source: x, resources: {requests: {cpu: lots}}}\n".into(),
            vec![("lots", "spec.workflowSpec.templates[0].script.resources.requests[cpu]: invalid value \"lots\"")],
        ),
    ];
    for (name, yaml, want) in rows {
        let (got, linted) = rejected(&yaml);
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        for ((at, message), (want_at, want_message)) in got.iter().zip(&want) {
            assert_eq!(at, want_at, "{name}");
            assert!(message.contains(want_message), "{name}: {message}");
        }
        assert!(linted >= 1, "{name}: the object is still linted");
    }
}

/// A rejected memory size leaves the pod without a memory request (what Spark would ask
/// for is unknown); a rejected `cores` falls back to the default of 1.
#[test]
fn rejected_spark_values_are_left_out() {
    let yaml = "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  driver: {cores: \"4\", memory: 1Gi}\n  executor: {coreRequest: lots, cores: 3, memory: 2g}\n";
    let parsed = crate::parse::parse_source(0, yaml, false, false);
    let requests = |i: usize| -> Vec<(String, String)> {
        let spec = parsed.objects[i].workload().and_then(|w| w.pod_spec());
        let c = &spec.expect("a pod spec").containers[0];
        let r = &c.resources.as_ref().expect("requests").value;
        (r.requests.iter())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
    assert_eq!(requests(0), [pair("cpu", "1")]);
    // `coreRequest` rejected: `cores` applies, as if it were unwritten.
    assert_eq!(requests(1), [pair("cpu", "3"), pair("memory", "2432Mi")]);
    assert_eq!(parsed.problems.len(), 3, "{:?}", parsed.problems);
}

/// A count written as a string is one rejected value; the document's templates are still
/// linted, the count read as unwritten.
#[test]
fn a_quoted_count_rejects_one_value_not_the_document() {
    let rows = [
        (
            "jobset completions",
            format!(
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js}}\nspec:\n  replicatedJobs:\n  - name: w\n    replicas: 2\n    template: {{spec: {{parallelism: 4, completions: \"3\", template: {POD}}}}}\n"
            ),
            "\"3\"",
            vec![row("replicatedJobs[w]", 8, "2")],
        ),
        (
            "spark initialExecutors and minExecutors",
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  dynamicAllocation: {enabled: true, initialExecutors: \"5\", minExecutors: 2}\n  executor: {instances: 1}\n".into(),
            "\"5\"",
            vec![row("executor", 2, "2")],
        ),
        (
            "ray maxReplicas",
            format!(
                "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: r}}\nspec:\n  workerGroupSpecs:\n  - {{groupName: w, replicas: 3, maxReplicas: \"2\", template: {POD}}}\n"
            ),
            "\"2\"",
            vec![row("workerGroupSpecs[w]", 3, "3")],
        ),
        (
            "spark gpu quantity",
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  driver: {gpu: {name: nvidia.com/gpu, quantity: \"1\"}}\n".into(),
            "\"1\"",
            vec![row("driver", 1, "")],
        ),
    ];
    for (name, yaml, at, want) in rows {
        let parsed = crate::parse::parse_source(0, &yaml, false, false);
        let problems: Vec<&str> = (parsed.problems.iter())
            .map(|p| &yaml[p.span.offset..p.span.offset + p.span.len])
            .collect();
        assert_eq!(problems, [at], "{name}");
        assert!(parsed.problems.iter().all(|p| p.rejected_value), "{name}");
        let got: Vec<Row> = (parsed.objects.iter())
            .filter_map(|o| {
                let w = o.workload()?;
                let span = w.replicas.as_ref().map(|r| o.span(r));
                let text = span.map_or("", |s| &yaml[s.offset..s.offset + s.len]);
                Some((
                    w.role().unwrap_or("-").to_string(),
                    w.replica_count(),
                    text.to_string(),
                ))
            })
            .collect();
        assert_eq!(got, want, "{name}");
    }
}

/// KubeRay's `GetWorkerGroupDesiredReplicas`: each row is `(what it checks, the group's
/// fields, the pods, the text the count is spanned on)`.
#[test]
fn get_worker_group_desired_replicas() {
    let rows = [
        (
            "replicas within bounds",
            "replicas: 3, minReplicas: 1, maxReplicas: 5",
            3,
            "3",
        ),
        (
            "raised to minReplicas",
            "replicas: 1, minReplicas: 2, maxReplicas: 5",
            2,
            "2",
        ),
        (
            "lowered to maxReplicas",
            "replicas: 9, minReplicas: 1, maxReplicas: 4",
            4,
            "4",
        ),
        (
            "minReplicas above maxReplicas: maxReplicas",
            "replicas: 3, minReplicas: 6, maxReplicas: 2",
            2,
            "2",
        ),
        ("no replicas: minReplicas", "minReplicas: 4", 4, "4"),
        ("nothing written: the CRD defaults, 0", "", 0, "{"),
        (
            "maxReplicas defaults to maxInt32",
            "replicas: 100",
            100,
            "100",
        ),
        (
            "times numOfHosts",
            "replicas: 2, maxReplicas: 3, numOfHosts: 4",
            8,
            "2",
        ),
        (
            "clamped, times numOfHosts",
            "replicas: 7, maxReplicas: 3, numOfHosts: 2",
            6,
            "3",
        ),
        (
            "suspended: none",
            "suspend: true, replicas: 3, minReplicas: 2",
            0,
            "true",
        ),
        (
            "suspend false: counted",
            "suspend: false, replicas: 3",
            3,
            "3",
        ),
        ("maxReplicas 0: none", "replicas: 2, maxReplicas: 0", 0, "0"),
    ];
    for (name, fields, want, at) in rows {
        let sep = if fields.is_empty() { "" } else { ", " };
        let yaml = format!(
            "apiVersion: ray.io/v1\nkind: RayCluster\nmetadata: {{name: r}}\nspec:\n  workerGroupSpecs:\n  - {{groupName: w{sep}{fields}, template: {POD}}}\n"
        );
        assert_eq!(
            parts(&yaml),
            [row("workerGroupSpecs[w]", want, at)],
            "{name}"
        );
    }
}
