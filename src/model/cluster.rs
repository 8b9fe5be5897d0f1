//! Model stage, cluster objects: LimitRanges, PodDisruptionBudgets and Nodes, the facts
//! about the cluster that decide defaults, disruption and static capacity.

use super::de::{Spanned, SpannedMap, Text, nullable};
use super::karpenter::Taint;
use super::workload::LabelSelector;
use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LimitRangeSpec {
    #[serde(deserialize_with = "nullable")]
    pub limits: Vec<LimitRangeItem>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LimitRangeItem {
    #[serde(rename = "type")]
    pub type_: Option<Spanned<String>>,
    #[serde(deserialize_with = "nullable")]
    pub default: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub default_request: SpannedMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PdbSpec {
    pub min_available: Option<Spanned<Text>>,
    pub max_unavailable: Option<Spanned<Text>>,
    #[serde(deserialize_with = "nullable")]
    pub selector: Option<LabelSelector>,
    pub unhealthy_pod_eviction_policy: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    #[serde(deserialize_with = "nullable")]
    pub taints: Vec<Taint>,
    pub provider_id: Option<Spanned<String>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeStatus {
    #[serde(deserialize_with = "nullable")]
    pub allocatable: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub capacity: SpannedMap,
}

#[derive(Debug, Clone, Default)]
pub struct Node {
    pub spec: NodeSpec,
    pub status: NodeStatus,
}
