//! Parse stage, one document: read `apiVersion` and `kind` first, then deserialize the rest
//! straight into the concrete model type, in a single pass.
//!
//! serde-saphyr loses spans inside `#[serde(tag)]`/`untagged`/`flatten`, so the kind
//! dispatch is done by hand here: a map visitor sees `apiVersion` and `kind` (which
//! manifests nearly always write first) and picks the typed deserializer for `spec` and the
//! other fields. Documents of kinds the model does not use are never built into a tree:
//! with [`DocSeed::header_only`] the visitor stops after their header (the caller checks
//! the rest with [`super::skim`]), otherwise their body is skipped with `IgnoredAny`. In
//! the rare document where a body field comes before `kind`, the visitor notes it and the
//! caller parses that document again with the kind known.

use crate::model::cluster::{
    AutoscalerSpec, EksctlClusterConfig, LimitRangeSpec, Node, NodeSpec, NodeStatus, PdbSpec,
    RuntimeClass,
};
use crate::model::crd::{CrdSpec, SpecSeed};
use crate::model::de::{Spanned, Text, nullable};
use crate::model::karpenter::{
    KarpenterApi, NodeClass, NodeOverlaySpec, NodePool, NodePoolSpecRaw, ProvisionerSpecRaw,
};
use crate::model::storage::{PvSpec, PvcSpec, StorageClass, TopologySelectorTerm};
use crate::model::workload::{ControllerSpec, PodSpec, PodTemplate, RcSpec, Workload};
use crate::model::{Body, Kind, ObjectMeta};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::fmt;

/// A document as read, before it becomes an [`crate::model::Object`].
#[derive(Debug, Default)]
pub struct RawDoc {
    pub api_version: Option<Spanned<Text>>,
    pub kind: Option<Spanned<Text>>,
    pub meta: ObjectMeta,
    pub body: Option<Body>,
    /// The pod templates of a workload CRD, one workload each (its `body` stays `None`).
    pub templates: Vec<Workload>,
    /// Items of a `kind: List` (or `*List`).
    pub items: Vec<RawDoc>,
    /// A body field came before `apiVersion`/`kind`: parse again with the kind preset.
    pub needs_reparse: bool,
    /// Integer values the API server would reject, read as absent (see
    /// [`crate::model::de::int`]); set on the document root only.
    pub rejected_ints: Vec<crate::model::de::RejectedInt>,
}

/// What the root of a document was.
#[derive(Debug)]
pub enum DocRoot {
    /// An empty document (`---` alone, or only comments).
    Null,
    /// A scalar or a sequence at the root: not a Kubernetes object.
    NotAMap,
    Map(Box<RawDoc>),
    /// The header of a document of a kind the model does not use; the rest of the document
    /// was not read (see [`DocSeed::header_only`]).
    Header(Box<RawDoc>),
}

/// Deserializes one document root. `preset` is the kind when known from a first pass.
pub struct DocSeed<'s> {
    pub preset: Option<Kind>,
    /// Where to leave the header of a document of an unmodelled kind once `apiVersion`,
    /// `kind` and `metadata` are read: deserialization then stops with an error, and the
    /// caller checks the rest with [`super::skim`].
    pub header_only: Option<&'s RefCell<Option<Box<RawDoc>>>>,
}

impl<'de> DeserializeSeed<'de> for DocSeed<'_> {
    type Value = DocRoot;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<DocRoot, D::Error> {
        d.deserialize_any(DocVisitor {
            preset: self.preset,
            header_only: self.header_only,
        })
    }
}

struct DocVisitor<'s> {
    preset: Option<Kind>,
    header_only: Option<&'s RefCell<Option<Box<RawDoc>>>>,
}

impl<'de> Visitor<'de> for DocVisitor<'_> {
    type Value = DocRoot;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_unit<E: de::Error>(self) -> Result<DocRoot, E> {
        Ok(DocRoot::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<DocRoot, E> {
        Ok(DocRoot::Null)
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<DocRoot, E> {
        Ok(DocRoot::NotAMap)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<DocRoot, E> {
        Ok(DocRoot::NotAMap)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<DocRoot, E> {
        Ok(DocRoot::NotAMap)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<DocRoot, E> {
        Ok(DocRoot::NotAMap)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<DocRoot, E> {
        Ok(DocRoot::NotAMap)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<DocRoot, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(DocRoot::NotAMap)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DocRoot, A::Error> {
        let mut doc = RawDoc::default();
        let mut kind = self.preset;
        let mut acc = Acc::default();
        let mut has_metadata = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "apiVersion" => doc.api_version = Some(map.next_value()?),
                "kind" => doc.kind = Some(map.next_value()?),
                "metadata" => {
                    doc.meta = map.next_value_seed(Nullable::<ObjectMeta>::new())?;
                    has_metadata = true;
                }
                _ => {
                    if kind.is_none()
                        && let (Some(a), Some(k)) = (&doc.api_version, &doc.kind)
                    {
                        kind = Some(Kind::classify(a.value.as_str(), k.value.as_str()));
                    }
                    if kind == Some(Kind::Other)
                        && has_metadata
                        && let Some(header) = self.header_only
                    {
                        doc.needs_reparse = false;
                        *header.borrow_mut() = Some(Box::new(doc));
                        return Err(de::Error::custom("header read"));
                    }
                    match kind {
                        Some(k) => acc.field(k, &key, &mut map, &mut doc)?,
                        None => {
                            map.next_value::<IgnoredAny>()?;
                            doc.needs_reparse = true;
                        }
                    }
                }
            }
        }
        let kind = kind.or_else(|| match (&doc.api_version, &doc.kind) {
            (Some(a), Some(k)) => Some(Kind::classify(a.value.as_str(), k.value.as_str())),
            _ => None,
        });
        if let Some(k) = kind {
            if matches!(k, Kind::Other | Kind::List) {
                doc.needs_reparse = false;
            }
            if !doc.needs_reparse {
                let api = doc
                    .api_version
                    .as_ref()
                    .map(|a| a.value.as_str())
                    .unwrap_or("");
                match k {
                    Kind::Crd(_) => {
                        doc.templates = acc.crd.map(CrdSpec::workloads).unwrap_or_default()
                    }
                    _ => doc.body = acc.finish(k, api),
                }
            }
        }
        Ok(DocRoot::Map(Box::new(doc)))
    }
}

/// `Option<T>` read with `null` meaning the default.
struct Nullable<T>(std::marker::PhantomData<T>);
impl<T> Nullable<T> {
    fn new() -> Self {
        Nullable(std::marker::PhantomData)
    }
}
impl<'de, T: serde::Deserialize<'de> + Default> DeserializeSeed<'de> for Nullable<T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        nullable(d)
    }
}

/// The fields of a document body, collected per kind as they stream past.
#[derive(Default)]
struct Acc {
    controller: Option<ControllerSpec>,
    pod: Option<Spanned<PodSpec>>,
    rc: Option<RcSpec>,
    pv: Option<PvSpec>,
    pvc: Option<PvcSpec>,
    sc: StorageClass,
    limit_range: Option<LimitRangeSpec>,
    runtime_class: RuntimeClass,
    pdb: Option<PdbSpec>,
    node_spec: Option<NodeSpec>,
    node_status: Option<NodeStatus>,
    nodepool: Option<NodePoolSpecRaw>,
    provisioner: Option<ProvisionerSpecRaw>,
    nodeclass: Option<NodeClass>,
    overlay: Option<NodeOverlaySpec>,
    cluster_config: EksctlClusterConfig,
    autoscaler: Option<AutoscalerSpec>,
    crd: Option<CrdSpec>,
}

impl Acc {
    fn field<'de, A: MapAccess<'de>>(
        &mut self,
        kind: Kind,
        key: &str,
        map: &mut A,
        doc: &mut RawDoc,
    ) -> Result<(), A::Error> {
        match (kind, key) {
            (Kind::Pod, "spec") => self.pod = Some(map.next_value()?),
            (
                Kind::Deployment
                | Kind::StatefulSet
                | Kind::DaemonSet
                | Kind::ReplicaSet
                | Kind::Job
                | Kind::CronJob,
                "spec",
            ) => self.controller = Some(map.next_value_seed(Nullable::new())?),
            (Kind::ReplicationController, "spec") => {
                self.rc = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::PersistentVolume, "spec") => {
                self.pv = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::PersistentVolumeClaim, "spec") => {
                self.pvc = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::StorageClass, "provisioner") => self.sc.provisioner = map.next_value()?,
            (Kind::StorageClass, "volumeBindingMode") => {
                self.sc.volume_binding_mode = map.next_value()?
            }
            (Kind::StorageClass, "allowedTopologies") => {
                self.sc.allowed_topologies =
                    map.next_value_seed(Nullable::<Vec<TopologySelectorTerm>>::new())?
            }
            (Kind::StorageClass, "parameters") => {
                self.sc.parameters = map.next_value_seed(Nullable::new())?
            }
            (Kind::LimitRange, "spec") => {
                self.limit_range = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::RuntimeClass, "overhead") => {
                self.runtime_class.overhead = map.next_value_seed(Nullable::new())?
            }
            (Kind::RuntimeClass, "scheduling") => {
                self.runtime_class.scheduling = map.next_value_seed(Nullable::new())?
            }
            (Kind::PodDisruptionBudget, "spec") => {
                self.pdb = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::Node, "spec") => self.node_spec = Some(map.next_value_seed(Nullable::new())?),
            (Kind::Node, "status") => {
                self.node_status = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::NodePool, "spec") => self.nodepool = Some(map.next_value_seed(Nullable::new())?),
            (Kind::Provisioner, "spec") => {
                self.provisioner = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::EC2NodeClass | Kind::AWSNodeTemplate | Kind::EksNodeClass, "spec") => {
                self.nodeclass = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::NodeOverlay, "spec") => {
                self.overlay = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::ClusterConfig, "availabilityZones") => {
                self.cluster_config.availability_zones = map.next_value_seed(Nullable::new())?
            }
            (Kind::ClusterConfig, "managedNodeGroups") => {
                self.cluster_config.managed_node_groups = map.next_value_seed(Nullable::new())?
            }
            (Kind::ClusterConfig, "nodeGroups") => {
                self.cluster_config.node_groups = map.next_value_seed(Nullable::new())?
            }
            (Kind::ClusterConfig, "fargateProfiles") => {
                self.cluster_config.fargate_profiles = map.next_value_seed(Nullable::new())?
            }
            (Kind::Autoscaler, "spec") => {
                self.autoscaler = Some(map.next_value_seed(Nullable::new())?)
            }
            (Kind::Crd(k), "spec") => self.crd = Some(map.next_value_seed(SpecSeed(k))?),
            (Kind::List, "items") => doc.items = map.next_value_seed(ItemsSeed)?,
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }

    fn finish(self, kind: Kind, api_version: &str) -> Option<Body> {
        let workload = |w: Workload| Some(Body::Workload(Box::new(w)));
        let template = |t: Option<Spanned<PodTemplate>>| t.map(|t| t.value).unwrap_or_default();
        match kind {
            Kind::Pod => {
                let spec = self.pod;
                workload(Workload {
                    template: PodTemplate {
                        spec,
                        ..Default::default()
                    },
                    ..Default::default()
                })
            }
            Kind::Deployment
            | Kind::StatefulSet
            | Kind::ReplicaSet
            | Kind::DaemonSet
            | Kind::Job => {
                let c = self.controller.unwrap_or_default();
                let replicas = match kind {
                    Kind::DaemonSet => None,
                    Kind::Job => crate::model::crd::active_pods(&c.parallelism, &c.completions),
                    _ => c.replicas,
                };
                workload(Workload {
                    replicas,
                    selector: c.selector,
                    template: template(c.template),
                    volume_claim_templates: c.volume_claim_templates,
                    part: None,
                })
            }
            Kind::CronJob => {
                let c = self.controller.unwrap_or_default();
                let job = c.job_template.map(|j| j.spec).unwrap_or_default();
                workload(Workload {
                    replicas: crate::model::crd::active_pods(&job.parallelism, &job.completions),
                    selector: job.selector,
                    template: template(job.template),
                    volume_claim_templates: Box::default(),
                    part: None,
                })
            }
            Kind::ReplicationController => {
                let rc = self.rc.unwrap_or_default();
                let selector =
                    (!rc.selector.is_empty()).then(|| crate::model::workload::LabelSelector {
                        match_labels: rc.selector,
                        match_expressions: Box::default(),
                    });
                workload(Workload {
                    replicas: rc.replicas,
                    selector,
                    template: template(rc.template),
                    volume_claim_templates: Box::default(),
                    part: None,
                })
            }
            Kind::PersistentVolume => Some(Body::PersistentVolume(Box::new(
                self.pv.unwrap_or_default(),
            ))),
            Kind::PersistentVolumeClaim => Some(Body::PersistentVolumeClaim(Box::new(
                self.pvc.unwrap_or_default(),
            ))),
            Kind::StorageClass => Some(Body::StorageClass(Box::new(self.sc))),
            Kind::LimitRange => Some(Body::LimitRange(Box::new(
                self.limit_range.unwrap_or_default(),
            ))),
            Kind::RuntimeClass => Some(Body::RuntimeClass(Box::new(self.runtime_class))),
            Kind::Namespace => Some(Body::Namespace),
            Kind::PodDisruptionBudget => Some(Body::PodDisruptionBudget(Box::new(
                self.pdb.unwrap_or_default(),
            ))),
            Kind::Node => Some(Body::Node(Box::new(Node {
                spec: self.node_spec.unwrap_or_default(),
                status: self.node_status.unwrap_or_default(),
            }))),
            Kind::NodePool => {
                let api = if api_version.ends_with("v1beta1") {
                    KarpenterApi::V1beta1
                } else {
                    KarpenterApi::V1
                };
                Some(Body::NodePool(Box::new(NodePool::from_v1(
                    api,
                    self.nodepool.unwrap_or_default(),
                ))))
            }
            Kind::Provisioner => Some(Body::NodePool(Box::new(NodePool::from_v1alpha5(
                self.provisioner.unwrap_or_default(),
            )))),
            Kind::EC2NodeClass | Kind::AWSNodeTemplate | Kind::EksNodeClass => Some(
                Body::NodeClass(Box::new(self.nodeclass.unwrap_or_default())),
            ),
            Kind::NodeOverlay => Some(Body::NodeOverlay(Box::new(
                self.overlay.unwrap_or_default(),
            ))),
            Kind::ClusterConfig => Some(Body::ClusterConfig(Box::new(self.cluster_config))),
            Kind::Autoscaler => Some(Body::Autoscaler(Box::new(
                self.autoscaler.unwrap_or_default(),
            ))),
            Kind::Crd(_) | Kind::List | Kind::Other => None,
        }
    }
}

struct ItemsSeed;

impl<'de> DeserializeSeed<'de> for ItemsSeed {
    type Value = Vec<RawDoc>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<RawDoc>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<RawDoc>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of objects")
            }
            fn visit_unit<E: de::Error>(self) -> Result<Vec<RawDoc>, E> {
                Ok(Vec::new())
            }
            fn visit_none<E: de::Error>(self) -> Result<Vec<RawDoc>, E> {
                Ok(Vec::new())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<RawDoc>, A::Error> {
                let mut out = Vec::new();
                while let Some(root) = seq.next_element_seed(DocSeed {
                    preset: None,
                    header_only: None,
                })? {
                    if let DocRoot::Map(doc) = root {
                        out.push(*doc);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(V)
    }
}
