//! Model stage, workload CRDs: the custom resources whose controllers create pods, and how
//! each one's pod templates and replica counts are read.
//!
//! A RayCluster, a PyTorchJob or a SparkApplication reaches Karpenter as pods like any
//! Deployment's. The parse stage reads such an object's `spec` into the kind's own lean type
//! here ([`CrdSpec`], only the fields that shape its pods) and turns it into one
//! [`Workload`] per pod template ([`CrdSpec::workloads`]): the template, its replicas by the
//! kind's arithmetic (pointing at the field that sets them), and a role (`headGroupSpec`,
//! `workerGroupSpecs[gpu]`, `Worker`) that tells the templates of one object apart in
//! findings. Every template keeps its spans, so findings point into the CRD's own file.
//! The table is documented in `docs/workload-crds.md`.

use super::de::{Rare, Spanned, SpannedMap, Str, Text, nullable};
use super::workload::{
    Affinity, Container, ControllerSpec, PodSpec, PodTemplate, Resources, TemplateMeta, Toleration,
    Volume, Workload,
};
use crate::quantity::Quantity;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use std::fmt;

/// The workload CRDs karplint reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CrdKind {
    RayCluster,
    RayService,
    RayJob,
    LeaderWorkerSet,
    PyTorchJob,
    TFJob,
    MPIJob,
    XGBoostJob,
    PaddleJob,
    JAXJob,
    VolcanoJob,
    JobSet,
    Rollout,
    Workflow,
    WorkflowTemplate,
    ClusterWorkflowTemplate,
    CronWorkflow,
    SparkApplication,
    ScheduledSparkApplication,
    ScaledJob,
    KnativeService,
    KnativeConfiguration,
}

/// One row of the table: the API group and `kind` a CRD is recognised by.
#[derive(Debug, Clone, Copy)]
pub struct CrdEntry {
    pub kind: CrdKind,
    pub group: &'static str,
    pub name: &'static str,
    /// Its pods run until replaced (services), rather than to completion (jobs).
    pub long_running: bool,
}

const fn row(kind: CrdKind, group: &'static str, name: &'static str, long: bool) -> CrdEntry {
    CrdEntry {
        kind,
        group,
        name,
        long_running: long,
    }
}

/// Every workload CRD karplint reads, by API group and kind.
pub const TABLE: &[CrdEntry] = &[
    row(CrdKind::RayCluster, "ray.io", "RayCluster", true),
    row(CrdKind::RayService, "ray.io", "RayService", true),
    row(CrdKind::RayJob, "ray.io", "RayJob", false),
    row(
        CrdKind::LeaderWorkerSet,
        "leaderworkerset.x-k8s.io",
        "LeaderWorkerSet",
        true,
    ),
    row(CrdKind::PyTorchJob, "kubeflow.org", "PyTorchJob", false),
    row(CrdKind::TFJob, "kubeflow.org", "TFJob", false),
    row(CrdKind::MPIJob, "kubeflow.org", "MPIJob", false),
    row(CrdKind::XGBoostJob, "kubeflow.org", "XGBoostJob", false),
    row(CrdKind::PaddleJob, "kubeflow.org", "PaddleJob", false),
    row(CrdKind::JAXJob, "kubeflow.org", "JAXJob", false),
    row(CrdKind::VolcanoJob, "batch.volcano.sh", "Job", false),
    row(CrdKind::JobSet, "jobset.x-k8s.io", "JobSet", false),
    row(CrdKind::Rollout, "argoproj.io", "Rollout", true),
    row(CrdKind::Workflow, "argoproj.io", "Workflow", false),
    row(
        CrdKind::WorkflowTemplate,
        "argoproj.io",
        "WorkflowTemplate",
        false,
    ),
    row(
        CrdKind::ClusterWorkflowTemplate,
        "argoproj.io",
        "ClusterWorkflowTemplate",
        false,
    ),
    row(CrdKind::CronWorkflow, "argoproj.io", "CronWorkflow", false),
    row(
        CrdKind::SparkApplication,
        "sparkoperator.k8s.io",
        "SparkApplication",
        false,
    ),
    row(
        CrdKind::ScheduledSparkApplication,
        "sparkoperator.k8s.io",
        "ScheduledSparkApplication",
        false,
    ),
    row(CrdKind::ScaledJob, "keda.sh", "ScaledJob", false),
    row(
        CrdKind::KnativeService,
        "serving.knative.dev",
        "Service",
        true,
    ),
    row(
        CrdKind::KnativeConfiguration,
        "serving.knative.dev",
        "Configuration",
        true,
    ),
];

impl CrdKind {
    /// The workload CRD of an API group and kind, if karplint reads it.
    pub fn classify(group: &str, kind: &str) -> Option<CrdKind> {
        (TABLE.iter())
            .find(|e| e.name == kind && e.group == group)
            .map(|e| e.kind)
    }

    fn entry(self) -> &'static CrdEntry {
        // Every kind has its row (checked by a test).
        &TABLE[TABLE.iter().position(|e| e.kind == self).unwrap_or(0)]
    }

    /// Its pods run until replaced, as a Deployment's do.
    pub fn long_running(self) -> bool {
        self.entry().long_running
    }
}

/// Where one pod template of a CRD sits, for findings and messages.
#[derive(Debug, Clone, Default)]
pub struct Part {
    /// Tells the templates of one object apart (`workerGroupSpecs[gpu]`); `None` for kinds
    /// with a single template.
    pub role: Option<Str>,
    /// The path of the pod spec in the object (`spec.workerGroupSpecs[0].template.spec`),
    /// for messages on invalid values; `None` when the pod spec is assembled from the CRD's
    /// own fields (Argo templates, SparkApplication).
    pub spec_path: Option<String>,
    /// When the pod spec is assembled from an Argo template: the path of each of its
    /// containers (`spec.templates[0].script`), those of `containers` then those of
    /// `initContainers`, for messages on their invalid values.
    pub container_paths: Box<[String]>,
    /// Values the pod spec was converted from that the API server or the program the CRD
    /// runs would reject (a SparkApplication's `memory: 1Gi`), found where they were
    /// converted: each a message spanned on its value.
    pub rejected: Box<[Spanned<String>]>,
}

/// The `spec` of a workload CRD: only the fields that shape its pods.
#[derive(Debug, Clone)]
pub enum CrdSpec {
    Ray(RayClusterSpec),
    RayService(RayServiceSpec),
    RayJob(RayJobSpec),
    Lws(LwsSpec),
    Kubeflow(CrdKind, KubeflowSpec),
    Volcano(VolcanoSpec),
    JobSet(JobSetSpec),
    /// `replicas` and `template` (Rollout).
    Controller(ControllerSpec),
    /// Knative Service and Configuration: a `template` and no `replicas`.
    Knative(KnativeSpec),
    Workflow(WorkflowSpec),
    CronWorkflow(CronWorkflowSpec),
    Spark(SparkSpec),
    ScheduledSpark(ScheduledSparkSpec),
    ScaledJob(ScaledJobSpec),
}

/// Deserializes a workload CRD's `spec` into its kind's type.
pub struct SpecSeed(pub CrdKind);

impl<'de> DeserializeSeed<'de> for SpecSeed {
    type Value = CrdSpec;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<CrdSpec, D::Error> {
        use CrdKind as K;
        Ok(match self.0 {
            K::RayCluster => CrdSpec::Ray(nullable(d)?),
            K::RayService => CrdSpec::RayService(nullable(d)?),
            K::RayJob => CrdSpec::RayJob(nullable(d)?),
            K::LeaderWorkerSet => CrdSpec::Lws(nullable(d)?),
            k @ (K::PyTorchJob
            | K::TFJob
            | K::MPIJob
            | K::XGBoostJob
            | K::PaddleJob
            | K::JAXJob) => CrdSpec::Kubeflow(k, nullable(d)?),
            K::VolcanoJob => CrdSpec::Volcano(nullable(d)?),
            K::JobSet => CrdSpec::JobSet(nullable(d)?),
            K::Rollout => CrdSpec::Controller(nullable(d)?),
            K::KnativeService | K::KnativeConfiguration => CrdSpec::Knative(nullable(d)?),
            K::Workflow | K::WorkflowTemplate | K::ClusterWorkflowTemplate => {
                CrdSpec::Workflow(nullable(d)?)
            }
            K::CronWorkflow => CrdSpec::CronWorkflow(nullable(d)?),
            K::SparkApplication => CrdSpec::Spark(nullable(d)?),
            K::ScheduledSparkApplication => CrdSpec::ScheduledSpark(nullable(d)?),
            K::ScaledJob => CrdSpec::ScaledJob(nullable(d)?),
        })
    }
}

type Template = Option<Spanned<PodTemplate>>;
type Count = Option<Spanned<i64>>;

/// KubeRay `RayClusterSpec` (also `RayService.spec.rayClusterConfig` and
/// `RayJob.spec.rayClusterSpec`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayClusterSpec {
    #[serde(deserialize_with = "nullable")]
    pub head_group_spec: TemplateHolder,
    #[serde(deserialize_with = "super::de::list")]
    pub worker_group_specs: Box<[RayWorkerGroup]>,
}

/// A field that holds just a `template` (RayCluster's `headGroupSpec`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TemplateHolder {
    #[serde(deserialize_with = "nullable")]
    pub template: Template,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayWorkerGroup {
    pub group_name: Option<Str>,
    /// `suspend: true` deletes the group's pods.
    pub suspend: Option<Spanned<bool>>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Count,
    #[serde(default, deserialize_with = "super::de::int")]
    pub min_replicas: Count,
    #[serde(default, deserialize_with = "super::de::int")]
    pub max_replicas: Count,
    #[serde(default, deserialize_with = "super::de::int")]
    pub num_of_hosts: Count,
    #[serde(deserialize_with = "nullable")]
    pub template: Template,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayServiceSpec {
    #[serde(deserialize_with = "nullable")]
    pub ray_cluster_config: RayClusterSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RayJobSpec {
    #[serde(deserialize_with = "nullable")]
    pub ray_cluster_spec: RayClusterSpec,
    #[serde(deserialize_with = "nullable")]
    pub submitter_pod_template: Template,
}

/// LeaderWorkerSet `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LwsSpec {
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Count,
    #[serde(deserialize_with = "nullable")]
    pub leader_worker_template: LeaderWorkerTemplate,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LeaderWorkerTemplate {
    #[serde(deserialize_with = "nullable")]
    pub leader_template: Template,
    #[serde(deserialize_with = "nullable")]
    pub worker_template: Template,
    #[serde(default, deserialize_with = "super::de::int")]
    pub size: Count,
}

/// Kubeflow training jobs: a map from replica type (`Master`, `Worker`, …) to its spec,
/// under a field named after the framework.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KubeflowSpec {
    #[serde(deserialize_with = "ordered_map")]
    pub pytorch_replica_specs: Box<[(Str, ReplicaSpec)]>,
    #[serde(deserialize_with = "ordered_map")]
    pub tf_replica_specs: Box<[(Str, ReplicaSpec)]>,
    #[serde(deserialize_with = "ordered_map")]
    pub mpi_replica_specs: Box<[(Str, ReplicaSpec)]>,
    #[serde(deserialize_with = "ordered_map")]
    pub xgb_replica_specs: Box<[(Str, ReplicaSpec)]>,
    #[serde(deserialize_with = "ordered_map")]
    pub paddle_replica_specs: Box<[(Str, ReplicaSpec)]>,
    #[serde(deserialize_with = "ordered_map")]
    pub jax_replica_specs: Box<[(Str, ReplicaSpec)]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicaSpec {
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Count,
    #[serde(deserialize_with = "nullable")]
    pub template: Template,
}

/// Volcano `Job` `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolcanoSpec {
    #[serde(deserialize_with = "super::de::list")]
    pub tasks: Box<[NamedReplicas]>,
}

/// A named group of replicas of one template (Volcano tasks).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NamedReplicas {
    pub name: Option<Str>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Count,
    #[serde(deserialize_with = "nullable")]
    pub template: Template,
}

/// JobSet `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSetSpec {
    #[serde(deserialize_with = "super::de::list")]
    pub replicated_jobs: Box<[ReplicatedJob]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ReplicatedJob {
    pub name: Option<Str>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Count,
    #[serde(deserialize_with = "nullable")]
    pub template: JobHolder,
}

/// A Job template: `{spec: {parallelism, template}}`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobHolder {
    #[serde(deserialize_with = "nullable")]
    pub spec: JobSpecLite,
}

/// The part of a Job's spec that says how many pods run at once.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobSpecLite {
    #[serde(default, deserialize_with = "super::de::int")]
    pub parallelism: Count,
    #[serde(default, deserialize_with = "super::de::int")]
    pub completions: Count,
    #[serde(deserialize_with = "nullable")]
    pub template: Template,
}

/// KEDA `ScaledJob` `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScaledJobSpec {
    #[serde(deserialize_with = "nullable")]
    pub job_target_ref: JobSpecLite,
}

/// Knative `ServiceSpec` / `ConfigurationSpec`: `template` is a `RevisionTemplateSpec`,
/// whose `spec` (a `RevisionSpec`) inlines a `PodSpec`. There is no `replicas` field: the
/// autoscaler sets the count.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct KnativeSpec {
    #[serde(deserialize_with = "nullable")]
    pub template: Template,
}

/// Argo `WorkflowSpec` (Workflow, WorkflowTemplate, ClusterWorkflowTemplate, and
/// `CronWorkflow.spec.workflowSpec`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WorkflowSpec {
    #[serde(deserialize_with = "super::de::list")]
    pub templates: Box<[ArgoTemplate]>,
    #[serde(deserialize_with = "nullable")]
    pub node_selector: SpannedMap,
    #[serde(deserialize_with = "super::de::list")]
    pub tolerations: Box<[Toleration]>,
    #[serde(deserialize_with = "nullable")]
    pub affinity: Rare<Affinity>,
    #[serde(deserialize_with = "super::de::list")]
    pub volumes: Box<[Volume]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CronWorkflowSpec {
    #[serde(deserialize_with = "nullable")]
    pub workflow_spec: WorkflowSpec,
}

/// One Argo template; those with a `container`, `script` or `containerSet` run a pod.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ArgoTemplate {
    pub name: Option<Str>,
    #[serde(deserialize_with = "nullable")]
    pub metadata: TemplateMeta,
    #[serde(deserialize_with = "nullable")]
    pub container: Option<Spanned<Container>>,
    #[serde(deserialize_with = "nullable")]
    pub script: Option<Spanned<Container>>,
    #[serde(deserialize_with = "nullable")]
    pub container_set: Option<Spanned<ContainerSet>>,
    #[serde(deserialize_with = "super::de::list")]
    pub init_containers: Box<[Container]>,
    #[serde(deserialize_with = "super::de::list")]
    pub sidecars: Box<[Container]>,
    #[serde(deserialize_with = "nullable")]
    pub node_selector: SpannedMap,
    #[serde(deserialize_with = "super::de::list")]
    pub tolerations: Box<[Toleration]>,
    #[serde(deserialize_with = "nullable")]
    pub affinity: Rare<Affinity>,
    #[serde(deserialize_with = "super::de::list")]
    pub volumes: Box<[Volume]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerSet {
    #[serde(deserialize_with = "super::de::list")]
    pub containers: Box<[Container]>,
}

/// SparkApplication `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SparkSpec {
    /// `Java`, `Scala` (the operator's default), `Python` or `R`.
    #[serde(rename = "type")]
    pub app_type: Option<Spanned<Str>>,
    /// `spark.kubernetes.memoryOverheadFactor`, as a string (`"0.2"`).
    pub memory_overhead_factor: Option<Spanned<Text>>,
    #[serde(deserialize_with = "nullable")]
    pub dynamic_allocation: Option<SparkDynamicAllocation>,
    pub image: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub node_selector: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub driver: Option<Spanned<SparkPod>>,
    #[serde(deserialize_with = "nullable")]
    pub executor: Option<Spanned<SparkPod>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScheduledSparkSpec {
    #[serde(deserialize_with = "nullable")]
    pub template: SparkSpec,
}

/// A SparkApplication's `driver` or `executor`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SparkPod {
    /// An int32 of at least 1 in the CRD (`coreRequest` takes fractions).
    #[serde(default, deserialize_with = "super::de::int")]
    pub cores: Count,
    pub core_request: Option<Spanned<Text>>,
    pub core_limit: Option<Spanned<Text>>,
    pub memory: Option<Spanned<Text>>,
    pub memory_overhead: Option<Spanned<Text>>,
    #[serde(deserialize_with = "nullable")]
    pub gpu: Option<SparkGpu>,
    /// Executors only.
    #[serde(default, deserialize_with = "super::de::int")]
    pub instances: Count,
    pub image: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub labels: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub node_selector: SpannedMap,
    #[serde(deserialize_with = "super::de::list")]
    pub tolerations: Box<[Toleration]>,
    #[serde(deserialize_with = "nullable")]
    pub affinity: Rare<Affinity>,
}

/// `spec.dynamicAllocation`: with it enabled, Spark starts
/// max(`minExecutors`, `initialExecutors`, `executor.instances`) executors.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SparkDynamicAllocation {
    pub enabled: Option<bool>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub initial_executors: Count,
    #[serde(default, deserialize_with = "super::de::int")]
    pub min_executors: Count,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SparkGpu {
    pub name: Option<Spanned<Str>>,
    /// An int64 in the CRD.
    #[serde(default, deserialize_with = "super::de::int")]
    pub quantity: Count,
}

/// A map read as `(key, value)` pairs in document order (Kubeflow's replica specs).
fn ordered_map<'de, D, T>(d: D) -> Result<Box<[(Str, T)]>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct V<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
        type Value = Box<[(Str, T)]>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some((k, v)) = m.next_entry::<Str, T>()? {
                out.push((k, v));
            }
            Ok(out.into_boxed_slice())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(Box::default())
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(Box::default())
        }
    }
    d.deserialize_any(V(std::marker::PhantomData))
}

/// The product of replica factors (each written or its default), as a spanned count on the
/// first factor written (the one users change), else on `fallback` (the template); `None`
/// when nothing is written and the product is one pod, the default of a workload.
fn product(factors: &[(&Count, i64)], fallback: (u32, u32)) -> Count {
    let mut value: i64 = 1;
    let mut at: Option<(u32, u32)> = None;
    for (f, default) in factors {
        let v = f.as_ref().map_or(*default, |s| s.value);
        value = value.saturating_mul(v.max(0));
        if let (None, Some(s)) = (at, f) {
            at = Some((s.offset, s.len));
        }
    }
    if at.is_none() && value == 1 {
        return None;
    }
    let (offset, len) = at.unwrap_or(fallback);
    Some(Spanned { value, offset, len })
}

/// Where a template starts, for counts no field states.
fn at(t: &Template) -> (u32, u32) {
    t.as_ref().map_or((0, 0), |t| (t.offset, t.len))
}

/// The workloads of a CRD under construction, in document order.
struct Out(Vec<Workload>);

impl Out {
    fn template(&mut self, role: Option<String>, path: String, t: Template, replicas: Count) {
        let Some(t) = t else { return };
        self.0.push(Workload {
            replicas,
            selector: None,
            template: t.value,
            volume_claim_templates: Box::default(),
            part: Some(Box::new(Part {
                role: role.map(Str::from),
                spec_path: Some(format!("{path}.spec")),
                ..Default::default()
            })),
        });
    }

    fn ray(&mut self, base: &str, c: RayClusterSpec) {
        let head = c.head_group_spec.template;
        self.template(
            Some("headGroupSpec".into()),
            format!("{base}.headGroupSpec.template"),
            head,
            None,
        );
        for (i, g) in c.worker_group_specs.into_vec().into_iter().enumerate() {
            let name = g.group_name.clone().unwrap_or_else(|| i.to_string().into());
            let replicas = ray_workers(&g);
            self.template(
                Some(format!("workerGroupSpecs[{name}]")),
                format!("{base}.workerGroupSpecs[{i}].template"),
                g.template,
                replicas,
            );
        }
    }
}

/// A worker group's pods, as KubeRay's `GetWorkerGroupDesiredReplicas`
/// (`ray-operator/controllers/ray/utils/util.go`) counts them: none when the group is
/// `suspend: true`; else `maxReplicas` when `minReplicas` exceeds it; else `replicas`
/// raised to `minReplicas` and lowered to `maxReplicas`; times `numOfHosts`. Unwritten
/// fields take the CRD's defaults: `replicas` 0, `minReplicas` 0, `maxReplicas`
/// 2147483647, `numOfHosts` 1. The count is spanned on the field that decided it.
pub fn ray_workers(g: &RayWorkerGroup) -> Count {
    if let Some(s) = g.suspend.as_ref().filter(|s| s.value) {
        return Some(Spanned {
            value: 0,
            offset: s.offset,
            len: s.len,
        });
    }
    let min = g.min_replicas.as_ref().map_or(0, |m| m.value);
    let max = (g.max_replicas.as_ref()).map_or(i64::from(i32::MAX), |m| m.value);
    let replicas = g.replicas.as_ref().map_or(0, |r| r.value);
    let (count, default) = if min > max {
        (&g.max_replicas, max)
    } else if replicas < min {
        (&g.min_replicas, min)
    } else if replicas > max {
        (&g.max_replicas, max)
    } else {
        (&g.replicas, replicas)
    };
    product(&[(count, default), (&g.num_of_hosts, 1)], at(&g.template))
}

/// LeaderWorkerSet: `(leader pods, worker pods)`. Each of `replicas` groups (default 1)
/// has `size` pods (default 1): one leader (from `leaderTemplate`, else from
/// `workerTemplate`) and `size - 1` workers.
pub fn lws_pods(s: &LwsSpec) -> (Count, Count) {
    let t = &s.leader_worker_template;
    if t.leader_template.is_some() {
        let per_group = (t.size.as_ref()).map(|v| Spanned {
            value: v.value.max(1) - 1,
            offset: v.offset,
            len: v.len,
        });
        let leaders = product(&[(&s.replicas, 1)], at(&t.leader_template));
        let workers = product(&[(&s.replicas, 1), (&per_group, 0)], at(&t.worker_template));
        (leaders, workers)
    } else {
        let workers = product(&[(&s.replicas, 1), (&t.size, 1)], at(&t.worker_template));
        (None, workers)
    }
}
/// The pods one Job runs at once: `parallelism` (default 1), but never more than
/// `completions` when that is set (the Job controller's `wantActive`).
pub fn job_pods(job: &JobSpecLite) -> Count {
    active_pods(&job.parallelism, &job.completions)
}

/// The pods a Job with `parallelism` and `completions` runs at once, with the field that
/// sets the number: the Job controller's `wantActive` (`pkg/controller/job`): `parallelism`
/// (default 1), never more than `completions` when that is set (Indexed Jobs alike).
/// `None` when neither is written (one pod).
pub fn active_pods(parallelism: &Count, completions: &Count) -> Count {
    let at_once = parallelism.as_ref().map_or(1, |p| p.value);
    match completions {
        Some(c) if c.value < at_once => Some(c.clone()),
        _ => parallelism.clone(),
    }
}

/// The annotations on a Knative revision template that set its lowest scale. The
/// `minScale` spelling is the one Knative's docs and `pkg/apis/autoscaling` name; the
/// `min-scale` spelling is the one newer releases write.
pub const KNATIVE_MIN_SCALE: [&str; 2] = [
    "autoscaling.knative.dev/min-scale",
    "autoscaling.knative.dev/minScale",
];

/// A Knative revision's pods: the larger of its `min-scale` annotation and one, the pod
/// a new revision starts with (the default `initial-scale`) before it may scale to zero.
pub fn knative_pods(t: &Template) -> Count {
    let t = t.as_ref()?;
    let ann = &t.value.metadata.annotations;
    let (_, v) = KNATIVE_MIN_SCALE.iter().find_map(|k| ann.entry(k))?;
    let n: i64 = v.value.as_str().trim().parse().ok()?;
    (n > 1).then_some(Spanned {
        value: n,
        offset: v.offset,
        len: v.len,
    })
}

impl CrdSpec {
    /// One workload per pod template, in document order.
    pub fn workloads(self) -> Vec<Workload> {
        let mut out = Out(Vec::new());
        match self {
            CrdSpec::Ray(c) => out.ray("spec", c),
            CrdSpec::RayService(s) => out.ray("spec.rayClusterConfig", s.ray_cluster_config),
            CrdSpec::RayJob(s) => {
                out.ray("spec.rayClusterSpec", s.ray_cluster_spec);
                out.template(
                    Some("submitterPodTemplate".into()),
                    "spec.submitterPodTemplate".into(),
                    s.submitter_pod_template,
                    None,
                );
            }
            CrdSpec::Lws(s) => {
                let (leaders, workers) = lws_pods(&s);
                let t = s.leader_worker_template;
                let path = "spec.leaderWorkerTemplate";
                out.template(
                    Some("leaderTemplate".into()),
                    format!("{path}.leaderTemplate"),
                    t.leader_template,
                    leaders,
                );
                out.template(
                    Some("workerTemplate".into()),
                    format!("{path}.workerTemplate"),
                    t.worker_template,
                    workers,
                );
            }
            CrdSpec::Kubeflow(kind, s) => out.kubeflow(kind, s),
            CrdSpec::Volcano(s) => {
                for (i, t) in s.tasks.into_vec().into_iter().enumerate() {
                    let name = t.name.clone().unwrap_or_else(|| i.to_string().into());
                    // `replicas` is a plain int32 that Volcano does not default: unset is 0.
                    let replicas = product(&[(&t.replicas, 0)], at(&t.template));
                    let path = format!("spec.tasks[{i}].template");
                    out.template(Some(format!("tasks[{name}]")), path, t.template, replicas);
                }
            }
            CrdSpec::JobSet(s) => {
                for (i, j) in s.replicated_jobs.into_vec().into_iter().enumerate() {
                    let name = j.name.clone().unwrap_or_else(|| i.to_string().into());
                    let job = j.template.spec;
                    let replicas =
                        product(&[(&j.replicas, 1), (&job_pods(&job), 1)], at(&job.template));
                    let path = format!("spec.replicatedJobs[{i}].template.spec.template");
                    let role = Some(format!("replicatedJobs[{name}]"));
                    out.template(role, path, job.template, replicas);
                }
            }
            CrdSpec::Controller(c) => {
                let replicas = product(&[(&c.replicas, 1)], at(&c.template));
                out.template(None, "spec.template".into(), c.template, replicas);
            }
            CrdSpec::Knative(k) => {
                let replicas = knative_pods(&k.template);
                out.template(None, "spec.template".into(), k.template, replicas);
            }
            CrdSpec::Workflow(w) => out.workflow("spec", w),
            CrdSpec::CronWorkflow(c) => out.workflow("spec.workflowSpec", c.workflow_spec),
            CrdSpec::Spark(s) => out.spark("spec", s),
            CrdSpec::ScheduledSpark(s) => out.spark("spec.template", s.template),
            CrdSpec::ScaledJob(s) => {
                let job = s.job_target_ref;
                let replicas = product(&[(&job_pods(&job), 1)], at(&job.template));
                let path = "spec.jobTargetRef.template".into();
                out.template(None, path, job.template, replicas);
            }
        }
        out.0
    }
}

/// A Kubeflow replica type as the operator names it: training-operator rewrites a known
/// type written in any case (`worker`, `WORKER`) to its own spelling (`Worker`) before
/// defaulting; MPIJob keys are taken as written.
pub fn kubeflow_role(kind: CrdKind, key: &str) -> &str {
    let known: &[&'static str] = match kind {
        CrdKind::PyTorchJob | CrdKind::XGBoostJob | CrdKind::PaddleJob => &["Master", "Worker"],
        CrdKind::TFJob => &["PS", "Worker", "Chief", "Master", "Evaluator"],
        CrdKind::JAXJob => &["Worker"],
        _ => &[],
    };
    (known.iter())
        .find(|t| t.eq_ignore_ascii_case(key))
        .copied()
        .unwrap_or(key)
}

impl Out {
    fn kubeflow(&mut self, kind: CrdKind, s: KubeflowSpec) {
        let (field, specs) = match kind {
            CrdKind::PyTorchJob => ("pytorchReplicaSpecs", s.pytorch_replica_specs),
            CrdKind::TFJob => ("tfReplicaSpecs", s.tf_replica_specs),
            CrdKind::MPIJob => ("mpiReplicaSpecs", s.mpi_replica_specs),
            CrdKind::XGBoostJob => ("xgbReplicaSpecs", s.xgb_replica_specs),
            CrdKind::PaddleJob => ("paddleReplicaSpecs", s.paddle_replica_specs),
            _ => ("jaxReplicaSpecs", s.jax_replica_specs),
        };
        for (key, r) in specs.into_vec() {
            let role = kubeflow_role(kind, &key);
            // Every replica type defaults to 1 replica, but an MPIJob's `Worker` to 0
            // (training-operator's `SetDefaults_MPIJob`, mpi-operator's
            // `setDefaultsTypeWorker`).
            let default = if kind == CrdKind::MPIJob && role == "Worker" {
                0
            } else {
                1
            };
            let replicas = product(&[(&r.replicas, default)], at(&r.template));
            let path = format!("spec.{field}.{key}.template");
            self.template(Some(role.to_string()), path, r.template, replicas);
        }
    }

    /// Argo: every template that runs a pod (a `container`, `script` or `containerSet`),
    /// with its own `nodeSelector`, `tolerations` and `affinity`, each replacing the
    /// workflow's (as Argo's `addSchedulingConstraints` does). `base` is the path of the
    /// `WorkflowSpec`.
    fn workflow(&mut self, base: &str, w: WorkflowSpec) {
        for (i, t) in w.templates.into_vec().into_iter().enumerate() {
            let path = format!("{base}.templates[{i}]");
            let mut containers: Vec<Container> = Vec::new();
            let mut paths: Vec<String> = Vec::new();
            let mut at = None;
            for (field, c) in [("container", t.container), ("script", t.script)] {
                let Some(c) = c else { continue };
                paths.push(format!("{path}.{field}"));
                at.get_or_insert((c.offset, c.len));
                let mut container = c.value;
                // Argo names the container of a `container` or `script` template `main`.
                container.name.get_or_insert(Spanned {
                    value: Str::from("main"),
                    offset: c.offset,
                    len: c.len,
                });
                containers.push(container);
            }
            if let Some(set) = t.container_set {
                at.get_or_insert((set.offset, set.len));
                let n = set.value.containers.len();
                paths.extend((0..n).map(|j| format!("{path}.containerSet.containers[{j}]")));
                containers.extend(set.value.containers.into_vec());
            }
            let Some((offset, len)) = at else { continue };
            paths.extend((0..t.sidecars.len()).map(|j| format!("{path}.sidecars[{j}]")));
            containers.extend(t.sidecars.into_vec());
            let n = t.init_containers.len();
            paths.extend((0..n).map(|j| format!("{path}.initContainers[{j}]")));
            let pick = |mine: SpannedMap, wf: &SpannedMap| {
                if mine.is_empty() { wf.clone() } else { mine }
            };
            let spec = PodSpec {
                containers: containers.into_boxed_slice(),
                init_containers: t.init_containers,
                node_selector: pick(t.node_selector, &w.node_selector),
                tolerations: if t.tolerations.is_empty() {
                    w.tolerations.clone()
                } else {
                    t.tolerations
                },
                affinity: if t.affinity.is_set() {
                    t.affinity
                } else {
                    w.affinity.clone()
                },
                volumes: (w.volumes.iter().cloned())
                    .chain(t.volumes.into_vec())
                    .collect(),
                ..Default::default()
            };
            let name = t.name.clone().unwrap_or_else(|| i.to_string().into());
            let template = PodTemplate {
                metadata: t.metadata,
                spec: Some(Spanned {
                    value: spec,
                    offset,
                    len,
                }),
            };
            self.0.push(Workload {
                template,
                part: Some(Box::new(Part {
                    role: Some(format!("templates[{name}]").into()),
                    spec_path: None,
                    container_paths: paths.into_boxed_slice(),
                    rejected: Box::default(),
                })),
                ..Default::default()
            });
        }
    }

    /// SparkApplication: the driver (one pod) and the executors (see [`spark_executors`]),
    /// each a pod whose one container requests what Spark asks for (see [`spark_requests`]).
    /// `base` is the path of the `SparkApplicationSpec`.
    fn spark(&mut self, base: &str, s: SparkSpec) {
        let factor = spark_overhead_factor(&s);
        for (role, pod) in [("driver", s.driver), ("executor", s.executor)] {
            let Some(pod) = pod else { continue };
            let mut rejected = Vec::new();
            let path = format!("{base}.{role}");
            let (offset, len) = (pod.offset, pod.len);
            let p = pod.value;
            let replicas = if role == "executor" {
                spark_executors(&p, s.dynamic_allocation.as_ref(), (offset, len))
            } else {
                None
            };
            let container = Container {
                name: Some(Spanned {
                    value: format!("spark-kubernetes-{role}").into(),
                    offset,
                    len,
                }),
                image: p.image.clone().or_else(|| s.image.clone()),
                resources: Some(Spanned {
                    value: spark_requests(&p, factor, (offset, len), &path, &mut rejected),
                    offset,
                    len,
                }),
                ..Default::default()
            };
            // Spark adds `spark.kubernetes.node.selector.*` (the spec's) and then the
            // role's to the pod's selector: both apply, the role's value winning a key.
            let mut node_selector: Vec<_> = (s.node_selector.0.iter())
                .filter(|(k, _)| p.node_selector.get(&k.value).is_none())
                .cloned()
                .collect();
            node_selector.extend(p.node_selector.0.into_vec());
            let node_selector = SpannedMap(node_selector.into_boxed_slice());
            let spec = PodSpec {
                containers: vec![container].into_boxed_slice(),
                node_selector,
                tolerations: p.tolerations,
                affinity: p.affinity,
                ..Default::default()
            };
            self.0.push(Workload {
                replicas,
                template: PodTemplate {
                    metadata: TemplateMeta {
                        labels: p.labels,
                        ..Default::default()
                    },
                    spec: Some(Spanned {
                        value: spec,
                        offset,
                        len,
                    }),
                },
                part: Some(Box::new(Part {
                    role: Some(role.into()),
                    rejected: rejected.into_boxed_slice(),
                    ..Default::default()
                })),
                ..Default::default()
            });
        }
    }
}

/// Spark's minimum memory overhead in MiB (`MEMORY_OVERHEAD_MIN_MIB`; the default of
/// `spark.{driver,executor}.minMemoryOverhead` since Spark 4.0).
const OVERHEAD_MIN_MIB: u64 = 384;
/// `spark.kubernetes.memoryOverheadFactor`'s default for JVM applications.
const JVM_OVERHEAD_FACTOR: f64 = 0.1;
/// Spark's `NON_JVM_MEMORY_OVERHEAD_FACTOR`, for Python and R applications.
const NON_JVM_OVERHEAD_FACTOR: f64 = 0.4;

/// The memory overhead factor of an application's pods: `spec.memoryOverheadFactor` (the
/// operator passes it as `spark.kubernetes.memoryOverheadFactor`), else 0.4 for a `Python`
/// or `R` application and 0.1 for `Java` and `Scala` (the operator's default type), as
/// Spark's `BasicDriverFeatureStep` picks it and passes it on to the executors.
pub fn spark_overhead_factor(s: &SparkSpec) -> f64 {
    if let Some(f) = &s.memory_overhead_factor
        && let Ok(f) = f.value.as_str().trim().parse::<f64>()
        && f.is_finite()
        && f >= 0.0
    {
        return f;
    }
    match s.app_type.as_ref().map(|t| t.value.as_str()) {
        Some("Python" | "R") => NON_JVM_OVERHEAD_FACTOR,
        _ => JVM_OVERHEAD_FACTOR,
    }
}

/// A SparkApplication's executor pods: `instances` (the operator defaults it to 1); with
/// `spec.dynamicAllocation.enabled`, Spark's initial executors, the largest of
/// `minExecutors` (default 0), `initialExecutors` (default `minExecutors`) and `instances`
/// (default 0), as `Utils.getDynamicAllocationInitialExecutors` counts them.
pub fn spark_executors(
    p: &SparkPod,
    dynamic: Option<&SparkDynamicAllocation>,
    role: (u32, u32),
) -> Count {
    let Some(d) = dynamic.filter(|d| d.enabled == Some(true)) else {
        return product(&[(&p.instances, 1)], role);
    };
    let largest = [&d.min_executors, &d.initial_executors, &p.instances]
        .into_iter()
        .flatten()
        .max_by_key(|c| c.value);
    let (value, (offset, len)) = largest.map_or((0, role), |c| (c.value, (c.offset, c.len)));
    Some(Spanned {
        value: value.max(0),
        offset,
        len,
    })
}

/// The resources Spark puts on a driver or executor pod's container: cpu request
/// `coreRequest`, else `cores` (default 1), and cpu limit `coreLimit`; memory request and
/// limit both `memory` (default `1g`) plus `memoryOverhead`, else
/// max(`factor` × `memory`, 384 MiB) (see [`spark_overhead_factor`]); a GPU's `quantity`
/// of its `name` as a limit. Spark reads memory sizes in MiB unless a unit is written
/// (`512m`, `2g`), so they are converted ([`jvm_mib`]). Each value is spanned on the field
/// it came from, or on the role (`driver:`) when defaulted.
///
/// A value that would be rejected is pushed onto `rejected` (a message spanned on it,
/// naming it under `path`, the role's path) and left out: a `coreRequest` or `coreLimit`
/// the API server would refuse as a pod's quantity, a `cores` below the CRD's minimum of 1
/// (`cores` that is not an integer is turned away when it is read, [`super::de::int`]),
/// and a `memory` or `memoryOverhead` Spark's `JavaUtils.byteStringAs` refuses (`1Gi`,
/// `1.5g`), which leaves the pod without a memory request. Left out, `coreRequest` and
/// `cores` fall back as if unwritten.
pub fn spark_requests(
    p: &SparkPod,
    factor: f64,
    role: (u32, u32),
    path: &str,
    rejected: &mut Vec<Spanned<String>>,
) -> Resources {
    let at = |s: Option<&Spanned<Text>>| s.map_or(role, |s| (s.offset, s.len));
    let mut reject = |field: &str, value: &dyn fmt::Display, (offset, len), why: &str| {
        rejected.push(Spanned {
            value: format!(
                "{path}.{field}: invalid value {:?}: {why}",
                value.to_string()
            ),
            offset,
            len,
        });
    };
    // Whether the API server accepts a cpu quantity on a pod; reported when not.
    let mut accepted = |field: &str, q: &Spanned<Text>| {
        let parsed = Quantity::parse_non_negative(q.value.as_str());
        if let Err(e) = &parsed {
            let why = format!("the API server rejects it: {}", e.reason());
            reject(field, &q.value, (q.offset, q.len), &why);
        }
        parsed.is_ok()
    };
    let core_request = (p.core_request.as_ref()).filter(|q| accepted("coreRequest", q));
    let core_limit = (p.core_limit.as_ref()).filter(|q| accepted("coreLimit", q));
    let entry = |key: &str, value: String, (offset, len): (u32, u32)| {
        let key = Spanned {
            value: Str::from(key),
            offset,
            len,
        };
        let value = Spanned {
            value: Text(value.into()),
            offset,
            len,
        };
        (key, value)
    };
    let mut requests = Vec::new();
    let mut limits = Vec::new();
    let cores = p.cores.as_ref().filter(|c| {
        if c.value < 1 {
            let why =
                "the API server rejects it: the CRD's minimum is 1 (`coreRequest` takes fractions)";
            reject("cores", &c.value, (c.offset, c.len), why);
        }
        c.value >= 1
    });
    let cpu = match (core_request, cores) {
        (Some(r), _) => entry("cpu", r.value.to_string(), at(Some(r))),
        (None, Some(c)) => entry("cpu", c.value.to_string(), (c.offset, c.len)),
        (None, None) => entry("cpu", "1".into(), role),
    };
    requests.push(cpu);
    if let Some(l) = core_limit {
        limits.push(entry("cpu", l.value.to_string(), at(Some(l))));
    }
    let mut mib = |field: &str, m: &Spanned<Text>| {
        let v = jvm_mib(m.value.as_str());
        if v.is_none() {
            reject(field, &m.value, (m.offset, m.len), JVM_SIZE);
        }
        v
    };
    let memory = p.memory.as_ref().map_or(Some(1024), |m| mib("memory", m));
    let overhead = match &p.memory_overhead {
        Some(o) => mib("memoryOverhead", o),
        // Scala's `(factor * memory).toInt`: truncated.
        None => memory.map(|m| ((factor * m as f64) as u64).max(OVERHEAD_MIN_MIB)),
    };
    if let (Some(m), Some(o)) = (memory, overhead) {
        let total = format!("{}Mi", m.saturating_add(o));
        requests.push(entry("memory", total.clone(), at(p.memory.as_ref())));
        limits.push(entry("memory", total, at(p.memory.as_ref())));
    }
    if let Some(g) = &p.gpu
        && let (Some(name), Some(q)) = (&g.name, &g.quantity)
    {
        limits.push(entry(&name.value, q.value.to_string(), (q.offset, q.len)));
    }
    Resources {
        requests: SpannedMap(requests.into_boxed_slice()),
        limits: SpannedMap(limits.into_boxed_slice()),
    }
}

/// Why Spark refuses a memory size, in the words of `JavaUtils.byteStringAs`.
const JVM_SIZE: &str = "Spark rejects it: a size must be a whole number with an optional unit b, k, m, g, t or p (kb, mb, … too; any case): `512m`, `2g`; Kubernetes suffixes (`Gi`) and fractions are not accepted";

/// A Spark memory size in MiB, as Spark's `bytesConf(ByteUnit.MiB)` reads
/// `spark.{driver,executor}.memory` and `.memoryOverhead`: a whole number with an optional
/// unit (`b`, `k`/`kb`, `m`/`mb`, `g`/`gb`, `t`/`tb`, `p`/`pb`, any case), MiB when none is
/// written, rounded down to whole MiB (`ByteUnit.convertTo`); `None` when it is not one
/// (`1Gi`, `1.5g`: Spark rejects both).
pub fn jvm_mib(s: &str) -> Option<u64> {
    let lower = s.trim().to_ascii_lowercase();
    let (digits, unit) = match lower.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => lower.split_at(i),
        None => (lower.as_str(), ""),
    };
    let n: u64 = digits.parse().ok()?;
    let mib = match unit {
        "" | "m" | "mb" => n,
        "b" => n / (1024 * 1024),
        "k" | "kb" => n / 1024,
        "g" | "gb" => n.checked_mul(1024)?,
        "t" | "tb" => n.checked_mul(1024 * 1024)?,
        "p" | "pb" => n.checked_mul(1024 * 1024 * 1024)?,
        _ => return None,
    };
    Some(mib)
}

#[cfg(test)]
mod tests;
