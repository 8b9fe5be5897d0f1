//! Model stage: typed, spanned Kubernetes and Karpenter objects.
//!
//! The parse stage deserializes each document straight into these types (never into a
//! generic YAML tree), so the model holds only what rules read, each value with its byte
//! span. Spans from serde-saphyr are relative to the document; [`Object::span`] makes them
//! absolute in the file.

pub mod cluster;
pub mod crd;
pub mod de;
pub(crate) mod identity;
pub mod karpenter;
pub mod kept;
pub mod rejected;
pub mod storage;
pub mod workload;

use de::{Spanned, SpannedMap, Str, nullable};
use serde::Deserialize;

/// Byte range in a source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    pub offset: usize,
    pub len: usize,
}

impl Span {
    pub fn new(offset: usize, len: usize) -> Self {
        Span { offset, len }
    }
}

/// Index of a source (file or stdin) in the run's source table.
pub type SourceId = usize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ObjectMeta {
    pub name: Option<Spanned<Str>>,
    /// Boxed: most objects have a `name` instead.
    pub generate_name: Option<Box<Spanned<Str>>>,
    pub namespace: Option<Spanned<Str>>,
    /// Only the labels [`kept`] keeps for the object's kind (once parsed): read them through
    /// [`Object::label`] and [`Object::labels`].
    #[serde(deserialize_with = "nullable")]
    labels: SpannedMap,
    /// Only the annotations of the [`kept::ANNOTATION_PREFIXES`].
    pub annotations: kept::Annotations,
}

impl ObjectMeta {
    /// The object's labels, to change them (kustomize's `commonLabels`).
    pub fn labels_mut(&mut self) -> &mut SpannedMap {
        &mut self.labels
    }

    /// Drops the object labels no rule reads, once the kind is known ([`kept::object_labels`]):
    /// labels are most of a large tree's model otherwise.
    pub fn retain_read_labels(&mut self, kind: Kind) {
        let kept = kept::object_labels(kind);
        if !self.labels.0.iter().all(|(k, _)| kept.keeps(&k.value)) {
            let labels = std::mem::take(&mut self.labels.0).into_vec();
            self.labels.0 = (labels.into_iter())
                .filter(|(k, _)| kept.keeps(&k.value))
                .collect();
        }
    }
}

/// The kinds the model types. Everything else is [`Kind::Other`] and is never
/// deserialized beyond its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Pod,
    Deployment,
    StatefulSet,
    DaemonSet,
    ReplicaSet,
    ReplicationController,
    Job,
    CronJob,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    LimitRange,
    RuntimeClass,
    Namespace,
    PodDisruptionBudget,
    Node,
    NodePool,
    Provisioner,
    EC2NodeClass,
    AWSNodeTemplate,
    EksNodeClass,
    NodeOverlay,
    /// eksctl `ClusterConfig`: managed and self-managed node groups, Fargate profiles.
    ClusterConfig,
    /// HorizontalPodAutoscaler or KEDA ScaledObject.
    Autoscaler,
    /// A workload CRD ([`crd::TABLE`]): one object per pod template once parsed.
    Crd(crd::CrdKind),
    List,
    Other,
}

impl Kind {
    /// The kind of a document from its `apiVersion` and `kind`.
    pub fn classify(api_version: &str, kind: &str) -> Kind {
        let group = api_version.rsplit_once('/').map(|(g, _)| g).unwrap_or("");
        match kind {
            "Pod" if group.is_empty() => Kind::Pod,
            "Deployment" if group == "apps" || group == "extensions" => Kind::Deployment,
            "StatefulSet" if group == "apps" => Kind::StatefulSet,
            "DaemonSet" if group == "apps" || group == "extensions" => Kind::DaemonSet,
            "ReplicaSet" if group == "apps" || group == "extensions" => Kind::ReplicaSet,
            "ReplicationController" if group.is_empty() => Kind::ReplicationController,
            "Job" if group == "batch" => Kind::Job,
            "CronJob" if group == "batch" => Kind::CronJob,
            "PersistentVolume" if group.is_empty() => Kind::PersistentVolume,
            "PersistentVolumeClaim" if group.is_empty() => Kind::PersistentVolumeClaim,
            "StorageClass" if group == "storage.k8s.io" => Kind::StorageClass,
            "LimitRange" if group.is_empty() => Kind::LimitRange,
            "RuntimeClass" if group == "node.k8s.io" => Kind::RuntimeClass,
            "Namespace" if group.is_empty() => Kind::Namespace,
            "PodDisruptionBudget" if group == "policy" => Kind::PodDisruptionBudget,
            "Node" if group.is_empty() => Kind::Node,
            "NodePool" if group == "karpenter.sh" => Kind::NodePool,
            "Provisioner" if group == "karpenter.sh" => Kind::Provisioner,
            "EC2NodeClass" if group == "karpenter.k8s.aws" => Kind::EC2NodeClass,
            "AWSNodeTemplate" if group == "karpenter.k8s.aws" => Kind::AWSNodeTemplate,
            "NodeClass" if group == "eks.amazonaws.com" => Kind::EksNodeClass,
            "NodeOverlay" if group == "karpenter.sh" => Kind::NodeOverlay,
            "ClusterConfig" if group == "eksctl.io" => Kind::ClusterConfig,
            "HorizontalPodAutoscaler" if group == "autoscaling" => Kind::Autoscaler,
            "ScaledObject" if group == "keda.sh" => Kind::Autoscaler,
            k if k == "List" || (k.ends_with("List") && k.len() > 4) => Kind::List,
            k => crd::CrdKind::classify(group, k).map_or(Kind::Other, Kind::Crd),
        }
    }

    /// Workloads linted file by file and then dropped (see `engine`): every kind but
    /// DaemonSets, which the simulator reads for every node.
    pub fn is_streamed(self) -> bool {
        self.is_workload() && self != Kind::DaemonSet
    }

    pub fn is_workload(self) -> bool {
        matches!(
            self,
            Kind::Pod
                | Kind::Deployment
                | Kind::StatefulSet
                | Kind::DaemonSet
                | Kind::ReplicaSet
                | Kind::ReplicationController
                | Kind::Job
                | Kind::CronJob
                | Kind::Crd(_)
        )
    }

    /// Its pods run until replaced (Deployments, StatefulSets, long-running CRDs such as
    /// RayCluster or Rollout), rather than once to completion or once per node.
    pub fn runs_indefinitely(self) -> bool {
        match self {
            Kind::Deployment
            | Kind::StatefulSet
            | Kind::ReplicaSet
            | Kind::ReplicationController => true,
            Kind::Crd(c) => c.long_running(),
            _ => false,
        }
    }
}

/// What a typed object holds beyond its metadata.
#[derive(Debug, Clone)]
pub enum Body {
    Workload(Box<workload::Workload>),
    PersistentVolume(Box<storage::PvSpec>),
    PersistentVolumeClaim(Box<storage::PvcSpec>),
    StorageClass(Box<storage::StorageClass>),
    LimitRange(Box<cluster::LimitRangeSpec>),
    RuntimeClass(Box<cluster::RuntimeClass>),
    Namespace,
    PodDisruptionBudget(Box<cluster::PdbSpec>),
    Node(Box<cluster::Node>),
    NodePool(Box<karpenter::NodePool>),
    NodeClass(Box<karpenter::NodeClass>),
    NodeOverlay(Box<karpenter::NodeOverlaySpec>),
    ClusterConfig(Box<cluster::EksctlClusterConfig>),
    Autoscaler(Box<cluster::AutoscalerSpec>),
    /// A kind the model does not type; only those of Karpenter's API groups are kept (see
    /// [`Object::is_read`]), others (ConfigMap, CRD, Service, …) are only counted.
    Other,
}

/// One typed Kubernetes object, with where it came from.
#[derive(Debug, Clone)]
pub struct Object {
    /// Unique in the run (set by the pipeline after parsing): held objects are numbered by
    /// their position in the index's list, streamed ones after them.
    pub id: usize,
    pub source: SourceId,
    /// Byte offset of the document in the file: model spans are relative to it.
    pub doc_offset: usize,
    /// Objects read through `--context` are used for facts but never reported on.
    pub context: bool,
    pub api_version: Str,
    /// The `apiVersion` value.
    pub api_version_span: Span,
    pub kind: Kind,
    /// The `kind:` as written (`Deployment`, `NodePool`, …).
    pub kind_name: Str,
    pub kind_span: Span,
    pub meta: ObjectMeta,
    pub body: Body,
    /// The keys the API server does not know, for the kinds with a schema (found by the
    /// parse stage against `data/schemas/fields.txt`); usually empty.
    pub unknown_fields: Box<[UnknownField]>,
}

/// A key of an object that its schema does not declare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// The key's bytes, relative to the document.
    pub offset: u32,
    pub len: u32,
    pub key: Str,
    /// Where it was written, in Kubernetes' notation (`spec.template.spec.containers[0]`);
    /// empty at the top of the object.
    pub parent: String,
    /// A field of the same object close enough to be the one meant.
    pub suggestion: Option<Str>,
    /// Else, the path of an object near it that has a field of this name.
    pub belongs_to: Option<String>,
}

impl Object {
    /// Whether any rule reads this object. Objects of unmodelled kinds are read only in
    /// Karpenter's own API groups (old generations, NodeOverlay); ConfigMaps, CRDs and
    /// Services are counted and dropped, so a large tree's model does not hold their headers.
    pub fn is_read(&self) -> bool {
        self.kind != Kind::Other || self.karpenter_api().is_some()
    }

    /// `(group, version)` of an object in one of Karpenter's API groups.
    pub fn karpenter_api(&self) -> Option<(&str, &str)> {
        let (group, version) = self.api_version.rsplit_once('/')?;
        matches!(group, "karpenter.sh" | "karpenter.k8s.aws").then_some((group, version))
    }

    /// Absolute span of a spanned value. Containers have zero-length spans at their first
    /// token; scalars and keys have exact spans.
    pub fn span<T>(&self, v: &Spanned<T>) -> Span {
        Span {
            offset: self.doc_offset + v.offset as usize,
            len: v.len as usize,
        }
    }

    pub fn name(&self) -> &str {
        self.meta
            .name
            .as_ref()
            .or(self.meta.generate_name.as_deref())
            .map(|n| n.value.as_str())
            .unwrap_or("")
    }

    pub fn namespace(&self) -> Option<&str> {
        self.meta.namespace.as_ref().map(|n| n.value.as_str())
    }

    /// The namespace a namespaced object lands in when applied without `-n`.
    pub fn effective_namespace(&self) -> &str {
        self.namespace().unwrap_or("default")
    }

    /// Where to point when a finding concerns the object as a whole: its name, else its kind.
    pub fn name_span(&self) -> Span {
        match &self.meta.name {
            Some(n) => self.span(n),
            None => self.kind_span,
        }
    }

    /// The value of one of its labels. Debug builds panic if the model drops that label on
    /// this kind ([`kept`]).
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn label(&self, key: &str) -> Option<&Spanned<de::Text>> {
        kept::debug_check_label(self.kind, key);
        self.meta.labels.get(key)
    }

    /// The key and value of one of its labels, checked as [`Object::label`].
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn label_entry(&self, key: &str) -> Option<(&Spanned<Str>, &Spanned<de::Text>)> {
        kept::debug_check_label(self.kind, key);
        self.meta.labels.entry(key)
    }

    /// All its labels, on the kinds that keep them all (Pods and Nodes). Debug builds panic
    /// on other kinds ([`kept`]).
    #[cfg_attr(debug_assertions, track_caller)]
    pub fn labels(&self) -> &SpannedMap {
        kept::debug_check_all_labels(self.kind);
        &self.meta.labels
    }

    pub fn workload(&self) -> Option<&workload::Workload> {
        match &self.body {
            Body::Workload(w) => Some(w),
            _ => None,
        }
    }

    /// Whether it is a Pod that is a template something else fills in, not a pod: a
    /// container without an `image`, which the API server requires of every container
    /// (Spark's `podTemplateFile`, EMR on EKS driver and executor templates, where Spark
    /// sets the image and the requests from `spark.kubernetes.container.image` and
    /// `spark.executor.*`).
    pub fn is_pod_template(&self) -> bool {
        let Some(spec) = self.workload().and_then(|w| w.pod_spec()) else {
            return false;
        };
        self.kind == Kind::Pod
            && (spec.containers.iter().chain(&spec.init_containers))
                .any(|c| c.image.as_ref().is_none_or(|i| i.value.trim().is_empty()))
    }

    pub fn nodepool(&self) -> Option<&karpenter::NodePool> {
        match &self.body {
            Body::NodePool(np) => Some(np),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_objects_and_labels_rules_read_are_kept() {
        let yaml = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: a
  labels: {app.kubernetes.io/name: karpenter, team: x}
---
apiVersion: v1
kind: Pod
metadata:
  name: b
  labels: {app: b, team: x}
---
apiVersion: v1
kind: Service
metadata:
  name: c
  labels: {app: c}
---
apiVersion: karpenter.sh/v1beta1
kind: NodeClaim
metadata:
  name: d
  labels: {app: d}
";
        let parsed = crate::parse::parse_source(0, yaml, false, false);
        // The Service is counted but not kept; the old NodeClaim is kept for
        // deprecated-karpenter-api, without labels.
        assert_eq!(parsed.object_count, 4);
        let objects = parsed.objects;
        assert_eq!(objects.len(), 3);
        let keys = |o: &Object| -> Vec<String> {
            o.meta.labels.iter().map(|(k, _)| k.to_string()).collect()
        };
        assert_eq!(keys(&objects[0]), ["app.kubernetes.io/name"]);
        assert_eq!(keys(&objects[1]), ["app", "team"]);
        assert!(keys(&objects[2]).is_empty());
    }
}
