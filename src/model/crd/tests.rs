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

#[test]
fn replica_arithmetic_per_kind() {
    let cases: Vec<(String, Vec<Row>)> = vec![
        (
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
            format!(
                "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {{name: s}}\nspec:\n  rayClusterConfig:\n    headGroupSpec: {{template: {POD}}}\n"
            ),
            vec![row("headGroupSpec", 1, "")],
        ),
        (
            format!(
                "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l}}\nspec:\n  replicas: 3\n  leaderWorkerTemplate:\n    size: 4\n    leaderTemplate: {POD}\n    workerTemplate: {POD}\n"
            ),
            vec![row("leaderTemplate", 3, "3"), row("workerTemplate", 9, "3")],
        ),
        (
            format!(
                "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata: {{name: l}}\nspec:\n  leaderWorkerTemplate:\n    size: 4\n    workerTemplate: {POD}\n"
            ),
            vec![row("workerTemplate", 4, "4")],
        ),
        (
            format!(
                "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: p}}\nspec:\n  pytorchReplicaSpecs:\n    Master: {{replicas: 1, template: {POD}}}\n    Worker: {{replicas: 8, template: {POD}}}\n"
            ),
            vec![row("Master", 1, "1"), row("Worker", 8, "8")],
        ),
        (
            format!(
                "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {{name: m}}\nspec:\n  mpiReplicaSpecs:\n    Launcher: {{template: {POD}}}\n    Worker: {{replicas: 2, template: {POD}}}\n"
            ),
            vec![row("Launcher", 1, ""), row("Worker", 2, "2")],
        ),
        (
            format!(
                "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {{name: v}}\nspec:\n  tasks:\n  - {{name: ps, replicas: 2, template: {POD}}}\n  - {{name: worker, replicas: 5, template: {POD}}}\n"
            ),
            vec![row("tasks[ps]", 2, "2"), row("tasks[worker]", 5, "5")],
        ),
        (
            format!(
                "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {{name: js}}\nspec:\n  replicatedJobs:\n  - name: workers\n    replicas: 2\n    template: {{spec: {{parallelism: 4, template: {POD}}}}}\n  - name: driver\n    template: {{spec: {{template: {POD}}}}}\n"
            ),
            vec![row("replicatedJobs[workers]", 8, "2"), row("replicatedJobs[driver]", 1, "")],
        ),
        (
            format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata: {{name: ro}}\nspec:\n  replicas: 5\n  template: {POD}\n"
            ),
            vec![row("-", 5, "5")],
        ),
        (
            format!(
                "apiVersion: keda.sh/v1alpha1\nkind: ScaledJob\nmetadata: {{name: sj}}\nspec:\n  jobTargetRef: {{parallelism: 3, template: {POD}}}\n"
            ),
            vec![row("-", 3, "3")],
        ),
        (
            format!(
                "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {{name: kn}}\nspec:\n  template: {POD}\n"
            ),
            vec![row("-", 1, "")],
        ),
        (
            "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: wf-}\nspec:\n  templates:\n  - {name: main, steps: [[{name: a, template: a}]]}\n  - {name: a, container: {image: i}}\n  - {name: b, script: {image: i, source: x}}\n".to_string(),
            vec![row("templates[a]", 1, ""), row("templates[b]", 1, "")],
        ),
        (
            "apiVersion: sparkoperator.k8s.io/v1beta2\nkind: SparkApplication\nmetadata: {name: sp}\nspec:\n  driver: {cores: 1, memory: 512m}\n  executor: {instances: 4, cores: 2, memory: 4g}\n".to_string(),
            vec![row("driver", 1, ""), row("executor", 4, "4")],
        ),
    ];
    for (yaml, want) in cases {
        assert_eq!(parts(&yaml), want, "{yaml}");
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
    assert_eq!(requests(0), [pair("cpu", "500m"), pair("memory", "896Mi")]);
    assert_eq!(
        requests(1),
        [
            pair("cpu", "2"),
            pair("memory", "9216Mi"),
            pair("nvidia.com/gpu", "1")
        ]
    );
    let selector = |i: usize| spec(i).map(|s| s.node_selector.iter().count());
    assert_eq!(selector(0), Some(1));
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

#[test]
fn jvm_memory_strings() {
    for (s, mib) in [
        ("512m", Some(512)),
        ("1g", Some(1024)),
        ("2G", Some(2048)),
        ("1536k", Some(2)),
        ("1048576", Some(1)),
        ("1t", Some(1024 * 1024)),
        ("1Gi", None),
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
