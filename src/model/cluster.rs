//! Model stage, cluster objects: LimitRanges, RuntimeClasses, PodDisruptionBudgets and
//! Nodes, the facts about the cluster that decide defaults, disruption and static capacity.

use super::de::{Spanned, SpannedMap, Str, Text, nullable};
use super::karpenter::Taint;
use super::workload::{LabelSelector, Toleration};
use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LimitRangeSpec {
    #[serde(deserialize_with = "super::de::list")]
    pub limits: Box<[LimitRangeItem]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LimitRangeItem {
    #[serde(rename = "type")]
    pub type_: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub default: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub default_request: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub min: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub max: SpannedMap,
}

/// RuntimeClass (`node.k8s.io/v1`): what the RuntimeClass admission plugin merges into
/// every pod that names it (`plugin/pkg/admission/runtimeclass`).
#[derive(Debug, Clone, Default)]
pub struct RuntimeClass {
    pub overhead: RuntimeClassOverhead,
    pub scheduling: RuntimeClassScheduling,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeClassOverhead {
    /// Becomes the pod's `spec.overhead`.
    #[serde(deserialize_with = "nullable")]
    pub pod_fixed: SpannedMap,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RuntimeClassScheduling {
    /// Merged into the pod's `nodeSelector`.
    #[serde(deserialize_with = "nullable")]
    pub node_selector: SpannedMap,
    /// Added to the pod's tolerations.
    #[serde(deserialize_with = "super::de::list")]
    pub tolerations: Box<[Toleration]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PdbSpec {
    pub min_available: Option<Spanned<Text>>,
    pub max_unavailable: Option<Spanned<Text>>,
    #[serde(deserialize_with = "nullable")]
    pub selector: Option<LabelSelector>,
    pub unhealthy_pod_eviction_policy: Option<Spanned<Str>>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct NodeSpec {
    #[serde(deserialize_with = "super::de::list")]
    pub taints: Box<[Taint]>,
    pub provider_id: Option<Spanned<Str>>,
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

/// eksctl `ClusterConfig` (`eksctl.io/v1alpha5`): the static capacity a Karpenter cluster
/// runs its controller on. Only the fields that describe nodes are read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EksctlClusterConfig {
    #[serde(deserialize_with = "super::de::list")]
    pub availability_zones: Box<[Spanned<Str>]>,
    #[serde(deserialize_with = "super::de::list")]
    pub managed_node_groups: Box<[Spanned<EksctlNodeGroup>]>,
    #[serde(deserialize_with = "super::de::list")]
    pub node_groups: Box<[Spanned<EksctlNodeGroup>]>,
    #[serde(deserialize_with = "super::de::list")]
    pub fargate_profiles: Box<[EksctlFargateProfile]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EksctlNodeGroup {
    pub name: Option<Spanned<Str>>,
    pub instance_type: Option<Spanned<Str>>,
    #[serde(deserialize_with = "super::de::list")]
    pub instance_types: Box<[Spanned<Str>]>,
    pub desired_capacity: Option<Spanned<i64>>,
    pub min_size: Option<Spanned<i64>>,
    pub max_size: Option<Spanned<i64>>,
    #[serde(deserialize_with = "nullable")]
    pub labels: SpannedMap,
    #[serde(deserialize_with = "nullable")]
    pub taints: EksctlTaints,
    #[serde(deserialize_with = "super::de::list")]
    pub availability_zones: Box<[Spanned<Str>]>,
}

/// eksctl taints: a list of `{key, value, effect}`, or the older map `key: "value:Effect"`.
#[derive(Debug, Clone, Default)]
pub struct EksctlTaints(pub Vec<Taint>);

impl<'de> Deserialize<'de> for EksctlTaints {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EksctlTaints;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of taints or a map of key: \"value:Effect\"")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<EksctlTaints, A::Error> {
                let mut out = Vec::new();
                while let Some(t) = s.next_element::<Taint>()? {
                    out.push(t);
                }
                Ok(EksctlTaints(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<EksctlTaints, A::Error> {
                let mut out = Vec::new();
                while let Some(k) = m.next_key::<Spanned<Str>>()? {
                    let v = m.next_value::<Spanned<Text>>()?;
                    // `value:Effect`, or `:Effect` / `Effect` without a value.
                    let (value, effect) = match v.value.0.rsplit_once(':') {
                        Some((val, eff)) => (Str::from(val), Str::from(eff)),
                        None => (Str::default(), v.value.0.clone()),
                    };
                    out.push(Taint {
                        key: k,
                        value: Some(Spanned {
                            value: Text(value),
                            offset: v.offset,
                            len: v.len,
                        }),
                        effect: Spanned {
                            value: effect,
                            offset: v.offset,
                            len: v.len,
                        },
                    });
                }
                Ok(EksctlTaints(out))
            }
            fn visit_unit<E: de::Error>(self) -> Result<EksctlTaints, E> {
                Ok(EksctlTaints::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EksctlFargateProfile {
    pub name: Option<Spanned<Str>>,
    #[serde(deserialize_with = "super::de::list")]
    pub selectors: Box<[EksctlFargateSelector]>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct EksctlFargateSelector {
    pub namespace: Option<Spanned<Str>>,
    #[serde(deserialize_with = "nullable")]
    pub labels: SpannedMap,
}

/// HorizontalPodAutoscaler (`autoscaling/*`) and KEDA `ScaledObject` `spec`: which workload
/// they scale, so rules do not judge its `replicas` as fixed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AutoscalerSpec {
    #[serde(deserialize_with = "nullable")]
    pub scale_target_ref: ScaleTargetRef,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ScaleTargetRef {
    pub kind: Option<Spanned<Str>>,
    pub name: Option<Spanned<Str>>,
}
