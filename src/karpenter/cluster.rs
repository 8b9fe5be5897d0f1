//! Cluster facts: the capacity Karpenter does not manage, and the network it launches into.
//!
//! Karpenter runs its own controller (and anything that requires `karpenter.sh/nodepool
//! DoesNotExist`) on static capacity: EKS managed node groups, self-managed node groups,
//! Fargate. Nothing in a NodePool says how much of it there is, so rules that judge such
//! pods need these facts: eksctl `ClusterConfig` objects and `Node` objects found in the
//! tree or context, merged with what the user states in the config file (see
//! [`ClusterFacts::add_node_group`], [`ClusterFacts::add_subnet`]). Subnets' free IPv4
//! addresses come only from the config: no manifest carries them.

use super::allocatable::{self, AmiFamily, KubeletConfig};
use super::catalog::Catalog;
use super::pod::{self, Ignored};
use super::requirements::{self, Operator, Requirements};
use super::taints::Taint;
use crate::index::Index;
use crate::model::workload::PodSpec;
use crate::model::{Body, Kind, Object, Span};
use crate::quantity::{Quantity, ResourceList};
use std::collections::BTreeMap;

/// `karpenter.sh/provisioner-name`: the v1alpha5 node label, successor `karpenter.sh/nodepool`.
pub const LABEL_PROVISIONER_NAME: &str = "karpenter.sh/provisioner-name";
/// Labels only nodes outside Karpenter carry (managed node groups, eksctl, Fargate).
pub const STATIC_NODE_LABELS: &[&str] = &[
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "eks.amazonaws.com/compute-type",
];

/// Where a node group was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupSource {
    /// eksctl `managedNodeGroups[]`.
    ManagedNodeGroup,
    /// eksctl `nodeGroups[]` (self-managed).
    NodeGroup,
    /// One `Node` object.
    Node,
    /// The `cluster.nodeGroups` section of the config file.
    Config,
}

/// Spans of the object that declared a node group, for labels on findings.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// [`Object::id`] of the ClusterConfig or Node.
    pub object: usize,
    /// The group's `name` (or the Node's name).
    pub name: Span,
    /// `desiredCapacity` / `minSize`, when written.
    pub count: Option<Span>,
    /// Label key → span of the key as written.
    pub label_keys: BTreeMap<String, Span>,
}

/// Nodes of one shape that Karpenter does not manage.
#[derive(Debug, Clone)]
pub struct NodeGroup {
    pub name: String,
    pub source: GroupSource,
    /// Instance types the group may launch (largest one judged); empty when unknown.
    pub instance_types: Vec<String>,
    /// Nodes in the group (desired capacity).
    pub count: i64,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    /// Per-node allocatable as reported (`Node.status.allocatable`); otherwise it is
    /// computed from the instance type.
    pub allocatable: Option<ResourceList>,
    pub zones: Vec<String>,
    /// `None` for facts from the config file.
    pub origin: Option<Origin>,
}

impl NodeGroup {
    /// A group of `count` nodes of `instance_type` (`None` when unknown), as stated in the
    /// config file.
    pub fn new(name: impl Into<String>, instance_type: Option<&str>, count: i64) -> Self {
        NodeGroup {
            name: name.into(),
            source: GroupSource::Config,
            instance_types: instance_type.map(str::to_owned).into_iter().collect(),
            count,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            allocatable: None,
            zones: Vec::new(),
            origin: None,
        }
    }

    pub fn with_labels<K: Into<String>, V: Into<String>>(
        mut self,
        labels: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        self.labels
            .extend(labels.into_iter().map(|(k, v)| (k.into(), v.into())));
        self
    }

    pub fn with_taints(mut self, taints: impl IntoIterator<Item = Taint>) -> Self {
        self.taints.extend(taints);
        self
    }

    /// The instance type judged for capacity: the largest known one (so a finding holds
    /// whichever type the group launches).
    pub fn instance_type<'c>(
        &self,
        catalog: &'c Catalog,
    ) -> Option<&'c super::catalog::InstanceType> {
        self.instance_types
            .iter()
            .filter_map(|t| catalog.get(t))
            .max_by_key(|it| (it.memory_mib, it.vcpus))
    }

    /// What one node offers pods: the reported allocatable, else the instance type's under
    /// AL2023 defaults, else unknown.
    pub fn node_allocatable(&self, catalog: &Catalog) -> Option<ResourceList> {
        if let Some(a) = &self.allocatable {
            return Some(a.clone());
        }
        let it = self.instance_type(catalog)?;
        Some(allocatable::allocatable(
            it,
            &KubeletConfig::default(),
            AmiFamily::default(),
            allocatable::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
        ))
    }

    /// The labels a node of the group carries: its own, plus those EKS and the kubelet set
    /// (node group name, OS, architecture, instance type).
    pub fn node_labels(&self, catalog: &Catalog) -> BTreeMap<String, String> {
        let mut out = self.labels.clone();
        let mut implied = |k: &str, v: &str| {
            out.entry(k.to_string()).or_insert_with(|| v.to_string());
        };
        match self.source {
            GroupSource::ManagedNodeGroup => {
                implied("eks.amazonaws.com/nodegroup", &self.name);
                implied("alpha.eksctl.io/nodegroup-name", &self.name);
            }
            GroupSource::NodeGroup => implied("alpha.eksctl.io/nodegroup-name", &self.name),
            GroupSource::Node | GroupSource::Config => {}
        }
        implied("kubernetes.io/os", "linux");
        if let Some(it) = self.instance_type(catalog)
            && self.instance_types.len() == 1
        {
            implied("kubernetes.io/arch", &it.arch);
            implied("node.kubernetes.io/instance-type", &it.name);
        }
        out
    }

    /// Does a pod with these requirements match the nodes' labels? Well-known labels that
    /// every EC2 node carries but the facts do not state (zone, region, hostname, …) are
    /// assumed to match. The labels of Karpenter's domains (`karpenter.sh/*`,
    /// `karpenter.k8s.aws/*`) are only on the nodes Karpenter launches: a pod that requires
    /// one does not match a node without it (`Requirements.Compatible` in
    /// `ExistingNode.CanAdd`: "label … does not have known values"; the kube-scheduler's
    /// node affinity refuses the node too).
    pub fn matches(&self, reqs: &Requirements, catalog: &Catalog) -> bool {
        let labels = self.node_labels(catalog);
        reqs.iter().all(|r| match labels.get(r.key()) {
            Some(v) => r.has(v),
            None => {
                matches!(r.operator(), Operator::NotIn | Operator::DoesNotExist)
                    || (requirements::is_well_known(r.key()) && !karpenter_domain(r.key()))
                    || r.key() == requirements::LABEL_HOSTNAME
            }
        })
    }
}

/// A subnet Karpenter may launch nodes into, with the IPv4 addresses still free in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subnet {
    pub id: String,
    pub zone: Option<String>,
    pub available_ipv4: u64,
}

/// A Fargate profile selector: pods of this namespace (and labels) run on Fargate, one
/// pod per micro-VM, so static capacity never runs out for them.
#[derive(Debug, Clone)]
pub struct FargateSelector {
    pub profile: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
}

/// The add-ons `cluster.addons` can declare: device plugins and agents that register node
/// resources, installed outside the manifests (Helm, Terraform, an EKS add-on).
pub const KNOWN_ADDONS: [&str; 4] = [
    "nvidia-device-plugin",
    "neuron-device-plugin",
    "vpc-cni-pod-eni",
    "efa-device-plugin",
];

/// Everything karplint knows about capacity outside Karpenter.
#[derive(Debug, Clone, Default)]
pub struct ClusterFacts {
    pub region: Option<String>,
    pub zones: Vec<String>,
    pub node_groups: Vec<NodeGroup>,
    pub subnets: Vec<Subnet>,
    pub fargate: Vec<FargateSelector>,
    /// The admission plugins that change pods before Karpenter sees them.
    pub admission: super::pod::Admission,
    /// Add-ons installed outside the manifests (`cluster.addons`), by name.
    pub addons: Vec<String>,
    /// The Karpenter release whose behaviour and wording apply (`karpenter.version`).
    pub karpenter: super::version::KarpenterVersion,
    /// Karpenter runs with the `NodeOverlay` feature gate off
    /// (`karpenter.featureGates.nodeOverlay: false`): NodeOverlays change nothing.
    pub node_overlays_off: bool,
}

/// The region of an availability zone: `eu-west-1a` → `eu-west-1`; `None` for a name
/// that does not end in a zone letter after the region's number.
fn region_of_zone(zone: &str) -> Option<String> {
    let region = zone.trim_end_matches(|c: char| c.is_ascii_lowercase());
    (region.len() < zone.len() && region.ends_with(|c: char| c.is_ascii_digit()))
        .then(|| region.to_string())
}

impl ClusterFacts {
    /// The cluster's region and where it comes from: `cluster.region`, else the region of
    /// its zones (`cluster.zones`, the subnets'), else the AWS provider's fallback
    /// (us-east-1), whose prices it uses for a region without a table of its own.
    pub fn region(&self) -> (String, &'static str) {
        if let Some(r) = self.region.as_ref().filter(|r| !r.is_empty()) {
            return (r.clone(), "cluster.region");
        }
        let zones = (self.zones.iter()).chain(self.subnets.iter().filter_map(|s| s.zone.as_ref()));
        if let Some(r) = zones.filter_map(|z| region_of_zone(z)).next() {
            return (r, "cluster zones");
        }
        (super::prices::FALLBACK_REGION.to_string(), "fallback")
    }

    /// Facts from eksctl `ClusterConfig`s and `Node`s of the run (linted or context).
    pub fn from_index(index: &Index) -> Self {
        let mut facts = ClusterFacts::default();
        for o in index.of_kind(Kind::ClusterConfig) {
            let Body::ClusterConfig(cc) = &o.body else {
                continue;
            };
            facts.add_cluster_config(o, cc);
        }
        for o in index.of_kind(Kind::Node) {
            let Body::Node(n) = &o.body else { continue };
            if !is_static_node(o) {
                continue;
            }
            facts.node_groups.push(Self::node_group_of_node(o, n));
        }
        facts
    }

    /// One eksctl `ClusterConfig` `o`: its zones, managed then self-managed node groups,
    /// and Fargate selectors.
    fn add_cluster_config(&mut self, o: &Object, cc: &crate::model::cluster::EksctlClusterConfig) {
        for z in &cc.availability_zones {
            self.add_zone(&z.value);
        }
        let groups = cc
            .managed_node_groups
            .iter()
            .map(|g| (g, GroupSource::ManagedNodeGroup))
            .chain(cc.node_groups.iter().map(|g| (g, GroupSource::NodeGroup)));
        for (g, source) in groups {
            self.node_groups.push(Self::eksctl_node_group(o, g, source));
        }
        for p in &cc.fargate_profiles {
            for s in &p.selectors {
                let Some(ns) = &s.namespace else { continue };
                self.fargate.push(FargateSelector {
                    profile: p
                        .name
                        .as_ref()
                        .map(|n| n.value.to_string())
                        .unwrap_or_default(),
                    namespace: ns.value.to_string(),
                    labels: s
                        .labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                });
            }
        }
    }

    /// An eksctl `managedNodeGroups[]` / `nodeGroups[]` entry of ClusterConfig `o`.
    fn eksctl_node_group(
        o: &Object,
        g: &crate::model::de::Spanned<crate::model::cluster::EksctlNodeGroup>,
        source: GroupSource,
    ) -> NodeGroup {
        let g_span = o.span(g);
        let g = &g.value;
        let count_field = g.desired_capacity.as_ref().or(g.min_size.as_ref());
        // eksctl's default desired capacity is 2.
        let count = count_field.map(|c| c.value).unwrap_or(2);
        let mut instance_types: Vec<String> = g
            .instance_type
            .iter()
            .chain(g.instance_types.iter())
            .map(|t| t.value.to_string())
            .collect();
        instance_types.dedup();
        NodeGroup {
            name: g
                .name
                .as_ref()
                .map(|n| n.value.to_string())
                .unwrap_or_default(),
            source,
            instance_types,
            count,
            labels: g
                .labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: g
                .taints
                .0
                .iter()
                .filter_map(super::taints::from_model)
                .collect(),
            allocatable: None,
            zones: g
                .availability_zones
                .iter()
                .map(|z| z.value.to_string())
                .collect(),
            origin: Some(Origin {
                object: o.id,
                name: g.name.as_ref().map(|n| o.span(n)).unwrap_or(g_span),
                count: count_field.map(|c| o.span(c)),
                label_keys: g
                    .labels
                    .0
                    .iter()
                    .map(|(k, _)| (k.value.to_string(), o.span(k)))
                    .collect(),
            }),
        }
    }

    /// A group of one: a static `Node` `o`, with its reported allocatable.
    fn node_group_of_node(o: &Object, n: &crate::model::cluster::Node) -> NodeGroup {
        let labels: BTreeMap<String, String> = o
            .labels()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let allocatable: ResourceList = n
            .status
            .allocatable
            .iter()
            .filter_map(|(k, v)| Some((k.to_string(), Quantity::parse_non_negative(v).ok()?)))
            .collect();
        NodeGroup {
            name: o.name().to_string(),
            source: GroupSource::Node,
            instance_types: labels
                .get("node.kubernetes.io/instance-type")
                .or_else(|| labels.get("beta.kubernetes.io/instance-type"))
                .cloned()
                .into_iter()
                .collect(),
            count: 1,
            zones: labels
                .get(requirements::LABEL_ZONE)
                .cloned()
                .into_iter()
                .collect(),
            labels,
            taints: n
                .spec
                .taints
                .iter()
                .filter_map(super::taints::from_model)
                .collect(),
            allocatable: (!allocatable.is_empty()).then_some(allocatable),
            origin: Some(Origin {
                object: o.id,
                name: o.name_span(),
                count: None,
                label_keys: o
                    .labels()
                    .0
                    .iter()
                    .map(|(k, _)| (k.value.to_string(), o.span(k)))
                    .collect(),
            }),
        }
    }

    /// Adds a node group stated outside the manifests (the config file's
    /// `cluster.nodeGroups[]`).
    pub fn add_node_group(&mut self, group: NodeGroup) {
        self.node_groups.push(group);
    }

    /// Adds a subnet with its free IPv4 addresses (the config file's `cluster.subnets[]`).
    pub fn add_subnet(&mut self, id: impl Into<String>, zone: Option<&str>, available_ipv4: u64) {
        self.subnets.push(Subnet {
            id: id.into(),
            zone: zone.map(str::to_owned),
            available_ipv4,
        });
    }

    /// Adds a zone of the cluster (`cluster.zones`), once.
    pub fn add_zone(&mut self, zone: &str) {
        if !self.zones.iter().any(|z| z == zone) {
            self.zones.push(zone.to_string());
        }
    }

    /// Merges facts from another source (the config file) into these.
    pub fn merge(&mut self, other: &ClusterFacts) {
        if self.region.is_none() {
            self.region.clone_from(&other.region);
        }
        for z in &other.zones {
            self.add_zone(z);
        }
        self.node_groups.extend(other.node_groups.iter().cloned());
        self.subnets.extend(other.subnets.iter().cloned());
        self.fargate.extend(other.fargate.iter().cloned());
        self.admission = other.admission;
        self.karpenter = other.karpenter;
        self.node_overlays_off = other.node_overlays_off;
        self.addons.extend(other.addons.iter().cloned());
    }

    /// Whether anything is known about capacity outside Karpenter.
    pub fn has_static_capacity(&self) -> bool {
        !self.node_groups.is_empty() || !self.fargate.is_empty()
    }

    /// The Fargate selector that takes pods of this namespace and labels, if any.
    pub fn fargate_for<'l>(
        &self,
        namespace: &str,
        labels: impl Fn(&str) -> Option<&'l str>,
    ) -> Option<&FargateSelector> {
        self.fargate.iter().find(|f| {
            (f.namespace == namespace || f.namespace == "*")
                && f.labels.iter().all(|(k, v)| labels(k) == Some(v.as_str()))
        })
    }
}

/// Does this Node belong to static capacity? Nodes with a static-capacity label
/// (`eks.amazonaws.com/nodegroup`, eksctl, Fargate) do; Nodes with Karpenter's labels and
/// none of those are Karpenter's own.
pub fn is_static_node(node: &Object) -> bool {
    STATIC_NODE_LABELS.iter().any(|k| node.label(k).is_some())
        || (node.label(requirements::LABEL_NODEPOOL).is_none()
            && node.label(LABEL_PROVISIONER_NAME).is_none()
            && node.label("karpenter.sh/registered").is_none()
            && node.label("karpenter.sh/initialized").is_none())
}

/// Is this workload the Karpenter controller (by image or `app.kubernetes.io/name`, as the
/// Helm chart renders it)?
pub fn is_karpenter_controller(obj: &Object) -> bool {
    let Some(w) = obj.workload() else {
        return false;
    };
    let named = |v: Option<&crate::model::de::Spanned<crate::model::de::Text>>| {
        v.is_some_and(|v| v.value.as_str() == "karpenter")
    };
    let image = w.pod_spec().is_some_and(|s| {
        s.containers.iter().any(|c| {
            c.image.as_ref().is_some_and(|i| {
                let repo = i.value.split(['@', ':']).next().unwrap_or("");
                repo.ends_with("karpenter/controller")
            })
        })
    });
    image
        || named(obj.label("app.kubernetes.io/name"))
        || named(w.template.metadata.labels.get("app.kubernetes.io/name"))
}

/// Why a workload's pods can only run on static capacity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StaticOnly {
    /// Required `karpenter.sh/nodepool DoesNotExist` (Karpenter's own controller pods):
    /// Karpenter ignores them.
    NotOnKarpenterNodes,
    /// The Karpenter controller, recognised by image or labels.
    KarpenterController,
    /// A required selector on a label only static nodes carry.
    StaticLabel(String),
}

/// Whether Karpenter will never provision for this workload's pods, so only static
/// capacity can hold them.
pub fn static_only(obj: &Object, spec: &PodSpec) -> Option<StaticOnly> {
    if obj.kind == Kind::DaemonSet || spec.node_name.is_some() {
        return None;
    }
    match pod::attempts(obj, spec) {
        Err(Ignored::NotOnKarpenterNodes) => return Some(StaticOnly::NotOnKarpenterNodes),
        Err(Ignored::Restricted { .. }) => return None,
        Ok(attempts) => {
            // Every attempt (each required term) must pin a static-only label.
            let pinned: Option<Vec<String>> = attempts
                .iter()
                .map(|a| {
                    STATIC_NODE_LABELS
                        .iter()
                        .find(|k| {
                            a.requirements.get(k).is_some_and(|r| {
                                matches!(r.operator(), Operator::In | Operator::Exists)
                            })
                        })
                        .map(|k| k.to_string())
                })
                .collect();
            if let Some(k) = pinned.and_then(|p| p.into_iter().next()) {
                return Some(StaticOnly::StaticLabel(k));
            }
        }
    }
    is_karpenter_controller(obj).then_some(StaticOnly::KarpenterController)
}

/// Whether `key` is in a domain of Karpenter's labels (`karpenter.sh`, `karpenter.k8s.aws`
/// and their subdomains), which only nodes Karpenter launches carry.
fn karpenter_domain(key: &str) -> bool {
    let domain = requirements::label_domain(key);
    ["karpenter.sh", "karpenter.k8s.aws"]
        .iter()
        .any(|d| domain == *d || domain.ends_with(&format!(".{d}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_come_from_the_config_then_the_zones_then_the_fallback() {
        let mut c = ClusterFacts::default();
        assert_eq!(c.region(), ("us-east-1".to_string(), "fallback"));
        c.zones = vec!["eu-west-1b".into()];
        assert_eq!(c.region(), ("eu-west-1".to_string(), "cluster zones"));
        c.region = Some("ap-south-1".into());
        assert_eq!(c.region(), ("ap-south-1".to_string(), "cluster.region"));
        assert_eq!(region_of_zone("zone"), None);
    }

    #[test]
    fn config_groups_get_catalog_allocatable() {
        let g = NodeGroup::new("system", Some("t3.medium"), 1);
        let a = g
            .node_allocatable(Catalog::builtin())
            .expect("t3.medium is known");
        assert_eq!(a.get("pods"), Some(Quantity::from_units(17)));
        assert!(
            NodeGroup::new("x", Some("nope.large"), 1)
                .node_allocatable(Catalog::builtin())
                .is_none()
        );
    }

    #[test]
    fn implied_labels_match_selectors() {
        let g = NodeGroup {
            source: GroupSource::ManagedNodeGroup,
            ..NodeGroup::new("system", Some("m5.large"), 1)
        }
        .with_labels([("role", "system")]);
        let mut reqs = Requirements::new();
        reqs.add(requirements::Requirement::in_values("role", ["system"]));
        reqs.add(requirements::Requirement::in_values(
            "eks.amazonaws.com/nodegroup",
            ["system"],
        ));
        reqs.add(requirements::Requirement::in_values(
            requirements::LABEL_ZONE,
            ["us-west-2a"],
        ));
        assert!(g.matches(&reqs, Catalog::builtin()));
        reqs.add(requirements::Requirement::in_values(
            "kubernetes.io/arch",
            ["arm64"],
        ));
        assert!(!g.matches(&reqs, Catalog::builtin()));
    }

    #[test]
    fn merge_keeps_zones_unique() {
        let mut a = ClusterFacts::default();
        a.add_zone("us-west-2a");
        let mut b = ClusterFacts::default();
        b.add_zone("us-west-2a");
        b.add_zone("us-west-2b");
        b.add_subnet("subnet-1", Some("us-west-2b"), 10);
        a.merge(&b);
        assert_eq!(a.zones, vec!["us-west-2a", "us-west-2b"]);
        assert_eq!(a.subnets.len(), 1);
    }
}
