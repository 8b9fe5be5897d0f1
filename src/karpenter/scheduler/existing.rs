//! Nodes that already run outside Karpenter: the static node groups of eksctl
//! `ClusterConfig`s, `Node` objects and the config's `cluster.nodeGroups`. The
//! kube-scheduler binds a pending pod to such a node when it fits there, and Karpenter's
//! provisioner sees those nodes as existing nodes (`ExistingNode.CanAdd`,
//! `addToExistingNode`): it provisions only for the pods no node takes.
//!
//! A node takes a pod whose tolerations cover its `NoSchedule` and `NoExecute` taints,
//! whose node requirements (any of its relaxation steps) its labels meet, whose host ports
//! are free on it, and whose requests fit what the node has left after the DaemonSets that
//! run there and the pods already placed. Topology spread and pod (anti-)affinity are not
//! judged on these nodes: a pod they would keep off a static node is counted as placed
//! there, so the batch never reports a Pending replica on that assumption.

use super::PendingWorkload;
use crate::karpenter::catalog::Catalog;
use crate::karpenter::cluster::NodeGroup;
use crate::karpenter::pod::HostPort;
use crate::karpenter::sim::Simulator;
use crate::karpenter::taints::{self, Effect};
use crate::quantity::ResourceList;

/// Nodes per group the batch fills at the most: a group larger than that is as good as
/// endless for one tree's workloads.
const MAX_NODES_PER_GROUP: i64 = 1_000;

/// The static nodes of the run, as the batch fills them.
#[derive(Debug, Default)]
pub struct Existing<'g> {
    groups: Vec<&'g NodeGroup>,
    nodes: Vec<Node>,
    catalog: Option<&'g Catalog>,
}

/// One node of a group.
#[derive(Debug)]
struct Node {
    group: usize,
    /// What is left for pods; `None` when the group's allocatable is unknown, and every pod
    /// is assumed to fit.
    free: Option<ResourceList>,
    ports: Vec<HostPort>,
}

impl<'g> Existing<'g> {
    /// The nodes of `groups` (`desiredCapacity`, else `minSize`, up to
    /// [`MAX_NODES_PER_GROUP`] each), each with the share the DaemonSets that run there
    /// take of it.
    pub fn new(sim: &Simulator, groups: &'g [NodeGroup], catalog: &'g Catalog) -> Self {
        let mut existing = Existing {
            catalog: Some(catalog),
            ..Existing::default()
        };
        for group in groups {
            let (requests, ports) = daemon_share(sim, group, catalog);
            let free = group.node_allocatable(catalog).map(|a| a.sub(&requests));
            let g = existing.groups.len();
            existing.groups.push(group);
            for _ in 0..group.count.clamp(0, MAX_NODES_PER_GROUP) {
                existing.nodes.push(Node {
                    group: g,
                    free: free.clone(),
                    ports: ports.clone(),
                });
            }
        }
        existing
    }

    /// The first node, in the groups' order, that takes a pod of `pod`; the pod is bound
    /// there. The index of its group in the `groups` the nodes were made from.
    pub(super) fn bind(&mut self, pod: &PendingWorkload) -> Option<usize> {
        let catalog = self.catalog?;
        let takes: Vec<bool> = (self.groups.iter())
            .map(|g| group_takes(g, pod, catalog))
            .collect();
        let requests = &pod.requests.total;
        let node = self.nodes.iter_mut().find(|n| {
            takes[n.group]
                && n.free.as_ref().is_none_or(|f| requests.fits(f).is_ok())
                && !pod
                    .host_ports
                    .iter()
                    .any(|p| n.ports.iter().any(|q| p.matches(q)))
        })?;
        if let Some(free) = &mut node.free {
            *free = free.sub(requests);
        }
        node.ports.extend(pod.host_ports.iter().cloned());
        Some(node.group)
    }

    /// Whether the run has any static node.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The group a [`Existing::bind`] result names.
    pub fn group(&self, g: usize) -> &'g NodeGroup {
        self.groups[g]
    }
}

/// Whether a node of `group` may run the pod: its taints tolerated, its labels meeting
/// the requirements of one of the pod's relaxation steps.
fn group_takes(group: &NodeGroup, pod: &PendingWorkload, catalog: &Catalog) -> bool {
    group
        .taints
        .iter()
        .all(|t| t.effect == Effect::PreferNoSchedule || taints::is_tolerated(&pod.tolerations, t))
        && (pod.steps.iter()).any(|s| group.matches(&s.attempt.requirements, catalog))
}

/// What the DaemonSets that run on a node of `group` request of it, and the host ports
/// they bind: those whose tolerations cover its taints and whose requirements its labels
/// meet (the daemon controller's `NodeShouldRunDaemonPod`).
fn daemon_share(
    sim: &Simulator,
    group: &NodeGroup,
    catalog: &Catalog,
) -> (ResourceList, Vec<HostPort>) {
    sim.daemons_on_group(
        |tolerations| {
            (group.taints.iter()).all(|t| {
                t.effect == Effect::PreferNoSchedule || taints::is_tolerated(tolerations, t)
            })
        },
        |requirements| group.matches(requirements, catalog),
    )
}
