//! The simulator's failure taxonomy: the stage at which a NodePool refuses a pod, what it
//! found, and Karpenter's own words for it (core `scheduling/events.go`, `nodeclaim.go`
//! `InstanceTypeFilterError.Error`, the limit errors of `scheduler.go`), worded as the
//! configured Karpenter release words them.

use super::super::pod::HostPort;
use super::super::pool::Exclusion;
#[cfg(doc)]
use super::super::pool::Pool;
use super::super::requirements::{IncompatibleError, Requirements};
use super::super::taints::{self, Taint};
use super::super::version::KarpenterVersion;
use crate::model::Span;
use crate::quantity::{Quantity, ResourceList};

/// The stage at which a NodePool rejected a pod, in the order Karpenter checks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    Taints,
    Requirements,
    /// Topology spread and pod (anti-)affinity, judged only in a batch ([`super::scheduler`]).
    Topology,
    InstanceTypes,
    Limits,
}

/// Why one NodePool cannot take the pod.
#[derive(Debug, Clone)]
pub struct PoolFailure {
    /// Index into [`Simulator::pools`].
    pub pool: usize,
    pub failure: Failure,
    /// The NodePool field involved (a taint, a requirement, a limit), or its name.
    pub pool_span: Span,
    /// The pod field to change, when one can be named.
    pub pod_span: Option<Span>,
}

/// What a NodePool's stage found, one variant per way Karpenter rejects a pod.
#[derive(Debug, Clone)]
pub enum Failure {
    /// [`Stage::Taints`]: the pool has taints the pod does not tolerate: every one of them,
    /// in the pool's order, as `Taints.Tolerates` gathers them into one error.
    Taint {
        taints: Vec<Taint>,
        /// The pool would take the pod if the pod tolerated its taints: only then is the
        /// pool a likely intended home beside another pool's failure. `None` where it was
        /// not worked out (the batch, whose words need only the taints).
        fits_if_tolerated: Option<bool>,
    },
    /// [`Stage::Requirements`]: the pod's requirements are incompatible with the pool's.
    Requirements(IncompatibleError),
    /// [`Stage::InstanceTypes`]: no instance type the pool allows has labels that meet the
    /// pod's requirements.
    NoTypeMeetsRequirements {
        /// The pool's requirements with the pod's added.
        requirements: Requirements,
        /// The requirement, or the two, that leave no type ([`Pool::exclusion`]); boxed,
        /// so that a failure stays small.
        exclusion: Option<Box<Exclusion>>,
    },
    /// [`Stage::InstanceTypes`]: types meet the requirements, but none has the allocatable
    /// for the requests plus the DaemonSet overhead.
    NotEnoughResources {
        /// The pool's requirements with the pod's added.
        requirements: Requirements,
        /// The pod's requests, as Karpenter prints them.
        requests: ResourceList,
        largest: LargestType,
    },
    /// [`Stage::InstanceTypes`]: types fit, but fewer distinct values of a NodePool
    /// requirement's key than its `minValues` remain (`SatisfiesMinValues`).
    MinValuesNotMet {
        /// The pool's requirements with the pod's added.
        requirements: Requirements,
        requests: ResourceList,
        /// The keys whose `minValues` the fitting types do not meet, sorted.
        keys: Vec<String>,
    },
    /// [`Stage::InstanceTypes`]: the NodePool's own requirements (with their `minValues`)
    /// leave no instance type, so Karpenter builds no NodeClaim template from it and skips
    /// it for every pod (`NewScheduler`'s pre-filter, NodePool event
    /// `NoCompatibleInstanceTypes`). It is missing from the pod's error, and when every
    /// pool is skipped the pod's error is [`NO_NODEPOOL_LEFT`].
    NoCompatibleInstanceTypes { min_values: bool },
    /// [`Stage::InstanceTypes`]: the pod's requirements with the pool's allow no offering (a
    /// zone of the cluster, a capacity type the node class offers).
    NoRequiredOffering {
        /// The pool's requirements with the pod's added.
        requirements: Requirements,
        requests: ResourceList,
    },
    /// [`Stage::InstanceTypes`]: on every type that would fit, a DaemonSet already binds one
    /// of the pod's host ports.
    HostPortTaken { port: HostPort },
    /// [`Stage::Limits`]: every type of the pool has more capacity than a limit (checked
    /// before the pod is tried: `filterByRemainingResources`).
    AllTypesExceedLimits,
    /// [`Stage::Topology`]: no domain of a topology spread constraint or pod (anti-)affinity
    /// term is left on the NodeClaim (`Topology.AddRequirements`, `topologyError`); only a
    /// batch decides it.
    Topology {
        /// `topology spread`, `pod affinity` or `pod anti-affinity`.
        constraint: &'static str,
        key: String,
        /// The pods counted per domain, as Karpenter prints them (`pretty.Map`).
        counts: String,
        pod_domains: String,
        node_domains: String,
    },
    /// [`Stage::Limits`]: a `nodes` limit of 0.
    NodeLimitsExhausted,
    /// [`Stage::Limits`]: the replicas together request more of `resource` than the limit,
    /// as the batch finds when it leaves some of them Pending on the pool's limits (never
    /// a verdict on one pod).
    ReplicasExceedLimit {
        resource: String,
        replicas: i64,
        demand: Quantity,
        limit: Quantity,
    },
}

/// The largest instance type (by allocatable cpu, then memory) that met the requirements
/// but not the requests, and the resource it lacks.
#[derive(Debug, Clone)]
pub struct LargestType {
    pub name: String,
    /// The first resource short on it other than `pods` (or `pods`); empty when none is
    /// named.
    pub resource: String,
    /// The type's allocatable `resource`.
    pub allocatable: Quantity,
    /// What the pool's DaemonSets request of `resource` on that type.
    pub daemonset_overhead: Quantity,
}

impl Failure {
    pub fn stage(&self) -> Stage {
        match self {
            Failure::Taint { .. } => Stage::Taints,
            Failure::Requirements(_) => Stage::Requirements,
            Failure::NoTypeMeetsRequirements { .. }
            | Failure::NotEnoughResources { .. }
            | Failure::MinValuesNotMet { .. }
            | Failure::HostPortTaken { .. }
            | Failure::NoRequiredOffering { .. }
            | Failure::NoCompatibleInstanceTypes { .. } => Stage::InstanceTypes,
            Failure::Topology { .. } => Stage::Topology,
            Failure::AllTypesExceedLimits
            | Failure::NodeLimitsExhausted
            | Failure::ReplicasExceedLimit { .. } => Stage::Limits,
        }
    }

    /// How far the pool got in Karpenter's order (`addToNewNodeClaim`: limits, then
    /// `CanAdd`: taints, requirements, instance types; the replicas' limit last): the
    /// pending pod's headline names the pool that got furthest.
    pub fn progress(&self) -> u8 {
        match self {
            Failure::NoCompatibleInstanceTypes { .. } => 0,
            Failure::AllTypesExceedLimits | Failure::NodeLimitsExhausted => 1,
            Failure::Taint { .. } => 2,
            Failure::Requirements(_) => 3,
            Failure::Topology { .. } => 4,
            Failure::NoTypeMeetsRequirements { .. }
            | Failure::NotEnoughResources { .. }
            | Failure::MinValuesNotMet { .. }
            | Failure::HostPortTaken { .. }
            | Failure::NoRequiredOffering { .. } => 4,
            Failure::ReplicasExceedLimit { .. } => 5,
        }
    }

    /// Whether Karpenter skips the pool before trying pods: it is then absent from the
    /// pod's error.
    pub fn skips_pool(&self) -> bool {
        matches!(self, Failure::NoCompatibleInstanceTypes { .. })
    }

    /// The class of the failure as the differential oracle compares them: `taint`,
    /// `requirements`, `resources` (every "no instance type …" message) or `limits`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Taint { .. } => "taint",
            Failure::Requirements(_) => "requirements",
            Failure::NoTypeMeetsRequirements { .. }
            | Failure::NotEnoughResources { .. }
            | Failure::HostPortTaken { .. }
            | Failure::NoRequiredOffering { .. } => "resources",
            Failure::MinValuesNotMet { .. } => "min-values",
            Failure::Topology { .. } => "topology",
            Failure::NoCompatibleInstanceTypes { .. } => "no-nodepool",
            Failure::AllTypesExceedLimits
            | Failure::NodeLimitsExhausted
            | Failure::ReplicasExceedLimit { .. } => "limits",
        }
    }

    /// Karpenter's own words for the failure of NodePool `nodepool` (karpenter-model §3.3), so
    /// users can search them, as the newest release karplint models words them
    /// ([`Failure::message_on`]).
    pub fn karpenter_message(&self, nodepool: &str) -> String {
        self.message_on(nodepool, KarpenterVersion::NEWEST)
    }

    /// [`Failure::message_on`] without NodePool `nodepool`'s name (in its
    /// `karpenter.sh/nodepool In [name]` requirement and in the limits message): equal for
    /// NodePools that refuse a pod in the same words. A message that does not hold the name
    /// at all is returned as it is, without building the requirement to replace.
    pub fn nameless_message(&self, nodepool: &str, version: KarpenterVersion) -> String {
        let message = self.message_on("", version);
        if nodepool.is_empty() || !message.contains(nodepool) {
            return message;
        }
        let own = |name: &str| {
            super::super::requirements::Requirement::in_values(
                super::super::requirements::LABEL_NODEPOOL,
                [name],
            )
            .to_string_on(version)
        };
        message.replace(&own(nodepool), &own(""))
    }

    /// Karpenter `version`'s own words for the failure of NodePool `nodepool`
    /// (karpenter-model §3.3); a limit the replicas exceed adds the numbers Karpenter leaves out.
    /// Requirements print their bounds as `version` does ([`KarpenterVersion::inclusive_bounds`]),
    /// and an instance-type filter error is shaped as `version` shapes it
    /// ([`KarpenterVersion::filter_reason_first`]).
    pub fn message_on(&self, nodepool: &str, version: KarpenterVersion) -> String {
        let filter_error = |reason: &str, requirements: &Requirements, requests: &ResourceList| {
            let requirements = requirements.to_string_on(version);
            let resources = requests.to_json_string();
            if version.filter_reason_first() {
                format!("{reason}, requirements={requirements}, resources={resources}")
            } else {
                format!(
                    "no instance type satisfied resources {resources} and requirements {requirements} ({reason})"
                )
            }
        };
        match self {
            Failure::Taint { taints, .. } => taints::untolerated_taints_message(taints),
            Failure::Requirements(e) => e.karpenter_message_on(version),
            Failure::NoTypeMeetsRequirements { requirements, .. } => format!(
                "no instance type met all requirements, requirements={}",
                requirements.to_string_on(version)
            ),
            Failure::NotEnoughResources {
                requirements,
                requests,
                ..
            } => {
                // Upstream appends the hint to the whole message (v1.3+), or to the reason
                // it wraps (up to v1.2).
                let typo = if requests
                    .get("cpu")
                    .is_some_and(|c| c >= Quantity::from_units(1_000_000))
                {
                    " (CPU request >= 1 Million, m vs M typo?)"
                } else {
                    ""
                };
                let reason = "no instance type has enough resources";
                if version.filter_reason_first() {
                    filter_error(reason, requirements, requests) + typo
                } else {
                    filter_error(&format!("{reason}{typo}"), requirements, requests)
                }
            }
            Failure::MinValuesNotMet {
                requirements,
                requests,
                keys,
            } => filter_error(
                &format!(
                    "minValues requirement is not met for label(s) (label(s)=[{}])",
                    keys.join(" ")
                ),
                requirements,
                requests,
            ),
            Failure::NoRequiredOffering {
                requirements,
                requests,
            } => filter_error(
                "no instance type has the required offering",
                requirements,
                requests,
            ),
            Failure::HostPortTaken { port } => format!(
                "no instance type met the scheduling requirements or had enough resources or had a required offering (a DaemonSet binds host port {}/{} on every type that fits)",
                port.port, port.protocol
            ),
            Failure::NoCompatibleInstanceTypes { min_values: false } => {
                "NodePool requirements filtered out all compatible available instance types"
                    .to_string()
            }
            Failure::NoCompatibleInstanceTypes { min_values: true } => {
                "NodePool requirements filtered out all compatible available instance types due to minValues incompatibility".to_string()
            }
            // Upstream's format string leaves the parenthesis open.
            Failure::Topology {
                constraint,
                key,
                counts,
                pod_domains,
                node_domains,
            } => format!(
                "unsatisfiable topology constraint for {constraint}, key={key} (counts = {counts}, podDomains = {pod_domains}, nodeDomains = {node_domains}"
            ),
            Failure::AllTypesExceedLimits => limits_message(nodepool),
            Failure::NodeLimitsExhausted => format!(
                "node limits have been exhausted for nodepool (NodePool={nodepool})"
            ),
            Failure::ReplicasExceedLimit {
                resource,
                replicas,
                demand,
                limit,
            } => format!(
                "{}: {replicas} replicas request {} {resource}, the limit is {}",
                limits_message(nodepool),
                demand.display_for(resource),
                limit.display_for(resource)
            ),
        }
    }

    /// [`Failure::karpenter_message`] without the requirement and resource dumps, for a
    /// headline.
    pub fn headline(&self, nodepool: &str) -> String {
        self.headline_on(nodepool, KarpenterVersion::NEWEST)
    }

    /// [`Failure::headline`] as Karpenter `version` words it ([`Failure::message_on`]).
    pub fn headline_on(&self, nodepool: &str, version: KarpenterVersion) -> String {
        match self {
            Failure::NoTypeMeetsRequirements { .. } => {
                "no instance type met all requirements".to_string()
            }
            Failure::NotEnoughResources { .. } => {
                "no instance type has enough resources".to_string()
            }
            Failure::MinValuesNotMet { keys, .. } => format!(
                "minValues requirement is not met for label(s) (label(s)=[{}])",
                keys.join(" ")
            ),
            Failure::NoRequiredOffering { .. } => {
                "no instance type has the required offering".to_string()
            }
            _ => self.message_on(nodepool, version),
        }
    }
}

/// A pod's whole error when Karpenter skipped every NodePool (`Scheduler.add`).
pub const NO_NODEPOOL_LEFT: &str =
    "nodepool requirements filtered out all available instance types";

fn limits_message(nodepool: &str) -> String {
    format!("all available instance types exceed limits for nodepool (NodePool={nodepool})")
}
