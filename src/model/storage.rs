//! Model stage, storage: PersistentVolumes, PersistentVolumeClaims and StorageClasses, as
//! far as scheduling cares (zones, binding mode, in-tree plugins).

use super::de::{Spanned, SpannedMap, Str, Text, nullable};
use super::workload::NodeSelector;
use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PvSpec {
    #[serde(deserialize_with = "nullable")]
    pub aws_elastic_block_store: Option<Spanned<serde::de::IgnoredAny>>,
    #[serde(deserialize_with = "nullable")]
    pub csi: Option<CsiSource>,
    pub storage_class_name: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub node_affinity: Option<VolumeNodeAffinity>,
    #[serde(deserialize_with = "nullable")]
    pub claim_ref: Option<ClaimRef>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CsiSource {
    pub driver: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct VolumeNodeAffinity {
    #[serde(deserialize_with = "nullable")]
    pub required: Option<NodeSelector>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ClaimRef {
    pub name: Option<Spanned<Str>>,
    pub namespace: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PvcSpec {
    pub storage_class_name: Option<Spanned<Str>>,
    pub volume_name: Option<Spanned<Str>>,
    #[serde(deserialize_with = "super::de::list")]
    pub access_modes: Box<[Spanned<Str>]>,
}

/// StorageClass keeps its fields at the top level of the object, not under `spec`.
#[derive(Debug, Clone, Default)]
pub struct StorageClass {
    pub provisioner: Option<Spanned<Str>>,
    pub volume_binding_mode: Option<Spanned<Str>>,
    pub allowed_topologies: Vec<TopologySelectorTerm>,
    pub parameters: SpannedMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TopologySelectorTerm {
    #[serde(deserialize_with = "super::de::list")]
    pub match_label_expressions: Box<[TopologyLabelRequirement]>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologyLabelRequirement {
    pub key: Spanned<Str>,
    #[serde(default, deserialize_with = "super::de::list")]
    pub values: Box<[Spanned<Text>]>,
}
