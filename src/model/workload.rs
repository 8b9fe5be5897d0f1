//! Model stage, workloads: the pod template every controller kind is normalised to.
//!
//! Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController, Job and
//! CronJob all carry a pod spec somewhere; rules see one [`Workload`] with the replicas, the
//! pod template and (for StatefulSets) the volume claim templates. Workload CRDs are read
//! into the same view, one [`Workload`] per pod template ([`super::crd`]).

use super::de::{Empty, Rare, Spanned, SpannedMap, Str, Text, nullable};
use super::storage::PvcSpec;
use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TemplateMeta {
    #[serde(deserialize_with = "nullable")]
    pub labels: SpannedMap,
    /// Only the annotations of the [`super::kept::ANNOTATION_PREFIXES`].
    pub annotations: super::kept::Annotations,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodTemplate {
    #[serde(deserialize_with = "nullable")]
    pub metadata: TemplateMeta,
    /// Where the pod spec starts (zero-length span on its first key).
    #[serde(deserialize_with = "nullable")]
    pub spec: Option<Spanned<PodSpec>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodSpec {
    #[serde(deserialize_with = "super::de::list")]
    pub containers: Box<[Container]>,
    #[serde(deserialize_with = "super::de::list")]
    pub init_containers: Box<[Container]>,
    #[serde(deserialize_with = "nullable")]
    pub node_selector: SpannedMap,
    /// Boxed, as the other fields most pods leave out.
    pub node_name: Option<Box<Spanned<Str>>>,
    /// Boxed: most pods have none, and the empty value is 144 bytes.
    #[serde(deserialize_with = "nullable")]
    pub affinity: Rare<Affinity>,
    #[serde(deserialize_with = "super::de::list")]
    pub tolerations: Box<[Toleration]>,
    #[serde(deserialize_with = "super::de::list")]
    pub topology_spread_constraints: Box<[TopologySpreadConstraint]>,
    #[serde(deserialize_with = "super::de::list")]
    pub volumes: Box<[Volume]>,
    #[serde(deserialize_with = "nullable")]
    pub overhead: SpannedMap,
    /// Pod-level resources (Kubernetes 1.32+).
    #[serde(deserialize_with = "nullable")]
    pub resources: Option<Box<Spanned<Resources>>>,
    /// The RuntimeClass whose scheduling and overhead admission merges into the pod. Boxed,
    /// as the other fields most pods leave out.
    pub runtime_class_name: Option<Box<Spanned<Str>>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Container {
    pub name: Option<Spanned<Str>>,
    pub image: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub resources: Option<Spanned<Resources>>,
    /// `Always` on an init container makes it a sidecar (Kubernetes 1.29+). Boxed: most
    /// containers leave it out.
    pub restart_policy: Option<Box<Spanned<Str>>>,
    /// Only the variables of [`super::kept::ENV_VARS`]; rules read them through
    /// [`crate::facts::WorkloadFacts::env_values`].
    #[serde(deserialize_with = "super::de::env_vars")]
    pub env: Box<[EnvVar]>,
    /// Only the ports' host side: Karpenter keeps two pods that bind one host port off one
    /// node.
    #[serde(deserialize_with = "super::de::list")]
    pub ports: Box<[ContainerPort]>,
}

/// A container port, as far as the node is concerned.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ContainerPort {
    #[serde(deserialize_with = "super::de::int")]
    pub host_port: Option<Spanned<i64>>,
    /// Not read by the simulator; kept so a value the API server rejects is reported.
    #[serde(deserialize_with = "super::de::int")]
    pub container_port: Option<Spanned<i64>>,
    #[serde(rename = "hostIP")]
    pub host_ip: Option<Str>,
    pub protocol: Option<Str>,
}

/// A container environment variable (`valueFrom` is not read; no rule points at one, so
/// no spans).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EnvVar {
    pub name: Option<Str>,
    pub value: Option<Text>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Resources {
    #[serde(deserialize_with = "nullable")]
    pub requests: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub limits: SpannedMap,
}

static NO_AFFINITY: Affinity = Affinity {
    node_affinity: NodeAffinity {
        required: None,
        preferred: Vec::new(),
    },
    pod_affinity: PodAffinity {
        required: Vec::new(),
        preferred: Vec::new(),
    },
    pod_anti_affinity: PodAffinity {
        required: Vec::new(),
        preferred: Vec::new(),
    },
};

impl Empty for Affinity {
    fn empty() -> &'static Affinity {
        &NO_AFFINITY
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Affinity {
    #[serde(deserialize_with = "nullable")]
    pub node_affinity: NodeAffinity,
    #[serde(deserialize_with = "nullable")]
    pub pod_affinity: PodAffinity,
    #[serde(deserialize_with = "nullable")]
    pub pod_anti_affinity: PodAffinity,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeAffinity {
    #[serde(
        rename = "requiredDuringSchedulingIgnoredDuringExecution",
        deserialize_with = "nullable"
    )]
    pub required: Option<NodeSelector>,
    #[serde(
        rename = "preferredDuringSchedulingIgnoredDuringExecution",
        deserialize_with = "super::de::seq"
    )]
    pub preferred: Vec<PreferredSchedulingTerm>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelector {
    #[serde(deserialize_with = "super::de::list")]
    pub node_selector_terms: Box<[Spanned<NodeSelectorTerm>]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSelectorTerm {
    #[serde(deserialize_with = "super::de::list")]
    pub match_expressions: Box<[NodeSelectorRequirement]>,
    #[serde(deserialize_with = "super::de::list")]
    pub match_fields: Box<[NodeSelectorRequirement]>,
}

/// One `{key, operator, values}` entry, shared by pod affinity and NodePool requirements.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirement {
    pub key: Spanned<Str>,
    pub operator: Spanned<Str>,
    #[serde(default, deserialize_with = "super::de::list")]
    pub values: Box<[Spanned<Text>]>,
    /// Karpenter NodePool requirements only.
    #[serde(default, deserialize_with = "super::de::int")]
    pub min_values: Option<Spanned<i64>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreferredSchedulingTerm {
    #[serde(default, deserialize_with = "super::de::int")]
    pub weight: Option<Spanned<i64>>,
    pub preference: Spanned<NodeSelectorTerm>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PodAffinity {
    #[serde(
        rename = "requiredDuringSchedulingIgnoredDuringExecution",
        deserialize_with = "super::de::seq"
    )]
    pub required: Vec<Spanned<PodAffinityTerm>>,
    #[serde(
        rename = "preferredDuringSchedulingIgnoredDuringExecution",
        deserialize_with = "super::de::seq"
    )]
    pub preferred: Vec<WeightedPodAffinityTerm>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WeightedPodAffinityTerm {
    #[serde(default, deserialize_with = "super::de::int")]
    pub weight: Option<Spanned<i64>>,
    pub pod_affinity_term: Spanned<PodAffinityTerm>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodAffinityTerm {
    #[serde(default, deserialize_with = "nullable")]
    pub label_selector: Option<LabelSelector>,
    pub topology_key: Spanned<Str>,
    #[serde(default, deserialize_with = "super::de::list")]
    pub namespaces: Box<[Spanned<Str>]>,
    #[serde(default, deserialize_with = "nullable")]
    pub namespace_selector: Option<LabelSelector>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LabelSelector {
    #[serde(deserialize_with = "nullable")]
    pub match_labels: SpannedMap,
    #[serde(deserialize_with = "super::de::list")]
    pub match_expressions: Box<[LabelSelectorRequirement]>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabelSelectorRequirement {
    pub key: Spanned<Str>,
    pub operator: Spanned<Str>,
    #[serde(default, deserialize_with = "super::de::list")]
    pub values: Box<[Spanned<Text>]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Toleration {
    pub key: Option<Spanned<Str>>,
    pub operator: Option<Spanned<Str>>,
    pub value: Option<Spanned<Text>>,
    pub effect: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    #[serde(default, deserialize_with = "super::de::int")]
    pub max_skew: Option<Spanned<i64>>,
    pub topology_key: Spanned<Str>,
    pub when_unsatisfiable: Option<Spanned<Str>>,
    #[serde(default, deserialize_with = "nullable")]
    pub label_selector: Option<LabelSelector>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub min_domains: Option<Spanned<i64>>,
    pub node_taints_policy: Option<Spanned<Str>>,
    pub node_affinity_policy: Option<Spanned<Str>>,
    #[serde(default, deserialize_with = "super::de::list")]
    pub match_label_keys: Box<[Spanned<Str>]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Volume {
    pub name: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub persistent_volume_claim: Option<PvcSource>,
    #[serde(deserialize_with = "nullable")]
    pub aws_elastic_block_store: Option<Spanned<serde::de::IgnoredAny>>,
    #[serde(deserialize_with = "nullable")]
    pub ephemeral: Option<Box<EphemeralVolume>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PvcSource {
    pub claim_name: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EphemeralVolume {
    #[serde(deserialize_with = "nullable")]
    pub volume_claim_template: Option<PvcTemplate>,
}

/// `volumeClaimTemplates[]` of a StatefulSet and `ephemeral.volumeClaimTemplate`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PvcTemplate {
    #[serde(deserialize_with = "nullable")]
    pub metadata: super::ObjectMeta,
    #[serde(deserialize_with = "nullable")]
    pub spec: PvcSpec,
}

/// The `spec` of every controller kind that holds a pod template.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ControllerSpec {
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Option<Spanned<i64>>,
    #[serde(deserialize_with = "nullable")]
    pub selector: Option<LabelSelector>,
    #[serde(deserialize_with = "nullable")]
    pub template: Option<Spanned<PodTemplate>>,
    #[serde(deserialize_with = "super::de::list")]
    pub volume_claim_templates: Box<[PvcTemplate]>,
    /// Job only (and a CronJob's `jobTemplate.spec`): how many pods run at once.
    #[serde(default, deserialize_with = "super::de::int")]
    pub parallelism: Option<Spanned<i64>>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub completions: Option<Spanned<i64>>,
    /// CronJob only: `spec.jobTemplate.spec`.
    #[serde(deserialize_with = "nullable")]
    pub job_template: Option<Box<JobTemplate>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct JobTemplate {
    #[serde(deserialize_with = "nullable")]
    pub spec: ControllerSpec,
}

/// ReplicationController: its selector is a plain label map.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RcSpec {
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Option<Spanned<i64>>,
    #[serde(deserialize_with = "nullable")]
    pub selector: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub template: Option<Spanned<PodTemplate>>,
}

/// A workload normalised to one pod-template view.
#[derive(Debug, Clone, Default)]
pub struct Workload {
    /// `None` for kinds without replicas (Pod, DaemonSet) and Jobs that write neither
    /// `parallelism` nor `completions`; a Job's (or a CronJob's one Job's) pods at once
    /// otherwise ([`super::crd::active_pods`]), with the span of the field that sets it.
    pub replicas: Option<Spanned<i64>>,
    pub selector: Option<LabelSelector>,
    pub template: PodTemplate,
    pub volume_claim_templates: Box<[PvcTemplate]>,
    /// For one of the pod templates of a workload CRD: which one ([`super::crd::Part`]).
    pub part: Option<Box<super::crd::Part>>,
}

impl Workload {
    /// The role of this template in a workload CRD with several (`workerGroupSpecs[gpu]`).
    pub fn role(&self) -> Option<&str> {
        self.part.as_ref().and_then(|p| p.role.as_deref())
    }

    pub fn pod_spec(&self) -> Option<&PodSpec> {
        self.template.spec.as_ref().map(|s| &s.value)
    }
    /// Replicas as Kubernetes defaults them: 1 when unset.
    pub fn replica_count(&self) -> i64 {
        self.replicas.as_ref().map(|r| r.value).unwrap_or(1)
    }
}
