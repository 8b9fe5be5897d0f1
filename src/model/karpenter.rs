//! Model stage, Karpenter: NodePools and node classes of every API generation, normalised
//! to one shape.
//!
//! `karpenter.sh/v1` and `v1beta1` NodePools and `v1alpha5` Provisioners all become a
//! [`NodePool`]; `EC2NodeClass` (v1, v1beta1), `AWSNodeTemplate` (v1alpha1) and EKS Auto
//! Mode's `NodeClass` become a [`NodeClass`]. Which generation an object came from stays
//! visible in [`KarpenterApi`] so rules can speak that version's words.

use super::de::{Spanned, SpannedMap, Str, Text, nullable};
use super::workload::{NodeSelectorRequirement, TemplateMeta};
use serde::Deserialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KarpenterApi {
    V1,
    V1beta1,
    V1alpha5,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    pub key: Spanned<Str>,
    pub value: Option<Spanned<Text>>,
    pub effect: Spanned<Str>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Kubelet {
    #[serde(default, deserialize_with = "super::de::int")]
    pub max_pods: Option<Spanned<i64>>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub pods_per_core: Option<Spanned<i64>>,
    #[serde(deserialize_with = "nullable")]
    pub kube_reserved: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub system_reserved: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub eviction_hard: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub eviction_soft: SpannedMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeClassRef {
    pub group: Option<Spanned<Str>>,
    pub kind: Option<Spanned<Str>>,
    pub name: Option<Spanned<Str>>,
    /// v1beta1 spelled the group as an apiVersion.
    pub api_version: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Disruption {
    pub consolidation_policy: Option<Spanned<Str>>,
    pub consolidate_after: Option<Spanned<Text>>,
    pub expire_after: Option<Spanned<Text>>,
    #[serde(deserialize_with = "super::de::list")]
    pub budgets: Box<[Budget]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Budget {
    pub nodes: Option<Spanned<Text>>,
    pub schedule: Option<Spanned<Str>>,
    pub duration: Option<Spanned<Text>>,
    /// The disruption reasons the budget limits (v1); absent or null: every reason.
    pub reasons: Option<Box<[Spanned<Str>]>>,
}

/// `karpenter.sh/v1` and `v1beta1` NodePool `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodePoolSpecRaw {
    #[serde(default, deserialize_with = "super::de::int")]
    pub weight: Option<Spanned<i64>>,
    #[serde(deserialize_with = "nullable")]
    pub limits: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub template: NodeClaimTemplateRaw,
    #[serde(deserialize_with = "nullable")]
    pub disruption: Disruption,
    #[serde(default, deserialize_with = "super::de::int")]
    pub replicas: Option<Spanned<i64>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeClaimTemplateRaw {
    #[serde(deserialize_with = "nullable")]
    pub metadata: TemplateMeta,
    #[serde(deserialize_with = "nullable")]
    pub spec: NodeClaimSpecRaw,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeClaimSpecRaw {
    #[serde(deserialize_with = "super::de::list")]
    pub requirements: Box<[NodeSelectorRequirement]>,
    #[serde(deserialize_with = "super::de::list")]
    pub taints: Box<[Taint]>,
    #[serde(deserialize_with = "super::de::list")]
    pub startup_taints: Box<[Taint]>,
    #[serde(deserialize_with = "nullable")]
    pub node_class_ref: Option<NodeClassRef>,
    #[serde(deserialize_with = "nullable")]
    pub kubelet: Option<Kubelet>,
    pub expire_after: Option<Spanned<Text>>,
}

/// `karpenter.sh/v1alpha1` NodeOverlay `spec` (core `v1alpha1.NodeOverlaySpec`): capacity
/// and price changes to the instance types its requirements select.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeOverlaySpec {
    #[serde(deserialize_with = "super::de::list")]
    pub requirements: Box<[NodeSelectorRequirement]>,
    pub price_adjustment: Option<Spanned<Text>>,
    pub price: Option<Spanned<Text>>,
    #[serde(deserialize_with = "nullable")]
    pub capacity: SpannedMap,
    #[serde(default, deserialize_with = "super::de::int")]
    pub weight: Option<Spanned<i64>>,
}

/// `karpenter.sh/v1alpha5` Provisioner `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProvisionerSpecRaw {
    #[serde(default, deserialize_with = "super::de::int")]
    pub weight: Option<Spanned<i64>>,
    #[serde(deserialize_with = "super::de::list")]
    pub requirements: Box<[NodeSelectorRequirement]>,
    #[serde(deserialize_with = "nullable")]
    pub labels: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub annotations: SpannedMap,
    #[serde(deserialize_with = "super::de::list")]
    pub taints: Box<[Taint]>,
    #[serde(deserialize_with = "super::de::list")]
    pub startup_taints: Box<[Taint]>,
    #[serde(deserialize_with = "nullable")]
    pub limits: ProvisionerLimits,
    #[serde(deserialize_with = "nullable")]
    pub kubelet_configuration: Option<Kubelet>,
    #[serde(deserialize_with = "nullable")]
    pub provider_ref: Option<NodeClassRef>,
    #[serde(deserialize_with = "nullable")]
    pub provider: Option<Spanned<serde::de::IgnoredAny>>,
    #[serde(deserialize_with = "nullable")]
    pub consolidation: Option<ProvisionerConsolidation>,
    #[serde(default, deserialize_with = "super::de::int")]
    pub ttl_seconds_after_empty: Option<Spanned<i64>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProvisionerLimits {
    #[serde(deserialize_with = "nullable")]
    pub resources: SpannedMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProvisionerConsolidation {
    pub enabled: Option<Spanned<bool>>,
}

/// A NodePool of any Karpenter API generation.
#[derive(Debug, Clone)]
pub struct NodePool {
    pub api: KarpenterApi,
    pub weight: Option<Spanned<i64>>,
    /// Template labels (v1alpha5: `spec.labels`).
    pub labels: SpannedMap,
    pub requirements: Box<[NodeSelectorRequirement]>,
    pub taints: Box<[Taint]>,
    pub startup_taints: Box<[Taint]>,
    /// `spec.limits` (v1alpha5: `spec.limits.resources`).
    pub limits: SpannedMap,
    pub node_class_ref: Option<NodeClassRef>,
    /// v1beta1 `template.spec.kubelet`, v1alpha5 `kubeletConfiguration`.
    pub kubelet: Option<Kubelet>,
    pub disruption: Disruption,
    /// Static NodePools (`spec.replicas`) are skipped by the dynamic scheduler.
    pub replicas: Option<Spanned<i64>>,
    /// `spec.template.metadata.annotations` (v1, v1beta1), which every node launched from
    /// the pool carries; empty for v1alpha5.
    pub template_annotations: super::kept::Annotations,
}

impl NodePool {
    pub fn from_v1(api: KarpenterApi, raw: NodePoolSpecRaw) -> Self {
        let t = raw.template;
        NodePool {
            api,
            weight: raw.weight,
            labels: t.metadata.labels,
            requirements: t.spec.requirements,
            taints: t.spec.taints,
            startup_taints: t.spec.startup_taints,
            limits: raw.limits,
            node_class_ref: t.spec.node_class_ref,
            kubelet: t.spec.kubelet,
            disruption: raw.disruption,
            replicas: raw.replicas,
            template_annotations: t.metadata.annotations,
        }
    }

    pub fn from_v1alpha5(raw: ProvisionerSpecRaw) -> Self {
        NodePool {
            api: KarpenterApi::V1alpha5,
            weight: raw.weight,
            labels: raw.labels,
            requirements: raw.requirements,
            taints: raw.taints,
            startup_taints: raw.startup_taints,
            limits: raw.limits.resources,
            node_class_ref: raw.provider_ref,
            kubelet: raw.kubelet_configuration,
            disruption: Disruption::default(),
            replicas: None,
            template_annotations: Default::default(),
        }
    }

    /// NodePools are tried in descending weight; unset weight is 0.
    pub fn weight_value(&self) -> i64 {
        self.weight.as_ref().map(|w| w.value).unwrap_or(0)
    }

    /// EKS Auto Mode NodePools reference `eks.amazonaws.com` `NodeClass`es.
    pub fn is_eks_auto_mode(&self) -> bool {
        self.node_class_ref.as_ref().is_some_and(|r| {
            r.group
                .as_ref()
                .or(r.api_version.as_ref())
                .is_some_and(|g| g.value.starts_with("eks.amazonaws.com"))
        })
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeClass {
    pub ami_family: Option<Spanned<Str>>,
    #[serde(deserialize_with = "super::de::list")]
    pub ami_selector_terms: Box<[AmiSelectorTerm]>,
    #[serde(deserialize_with = "nullable")]
    pub kubelet: Option<Kubelet>,
    #[serde(deserialize_with = "super::de::list")]
    pub block_device_mappings: Box<[BlockDeviceMapping]>,
    pub instance_store_policy: Option<Spanned<Str>>,
    /// Only whether it is there: with it, `reserved` offerings may exist.
    pub capacity_reservation_selector_terms: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AmiSelectorTerm {
    pub alias: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BlockDeviceMapping {
    pub device_name: Option<Spanned<Str>>,
    pub root_volume: Option<Spanned<bool>>,
    #[serde(deserialize_with = "nullable")]
    pub ebs: Option<BlockDevice>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct BlockDevice {
    pub volume_size: Option<Spanned<Text>>,
}
