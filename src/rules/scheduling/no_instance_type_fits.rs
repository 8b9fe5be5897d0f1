//! `no-instance-type-fits`: no instance type a compatible NodePool allows has enough allocatable for the pod's requests

use super::Advice;
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::pool::Exclusion;
use crate::karpenter::sim::{LargestType, known_resource};
use crate::rules::{Context, Findings, Placed, Rule, declare_rule};

declare_rule!(
    NoInstanceTypeFits,
    "no-instance-type-fits",
    Error,
    "requests (plus DaemonSet overhead) exceed every allowed instance type, or need a resource none offers"
);

const LABEL: &str = "no allowed instance type fits this request";

impl Rule for NoInstanceTypeFits {
    fn check_object(&self, o: &Placed, cx: &Context, out: &mut Findings) {
        super::pending_finding(cx, &META, o, out);
    }

    fn check_run(&self, cx: &Context, workloads: &Workloads, out: &mut Vec<Finding>) {
        super::batch_findings(cx, &META, workloads, out);
    }
}

/// The pod's selectors and NodePool `nodepool`'s requirements leave no instance type:
/// name the requirement no type meets, or the two no type meets together, when known.
pub(super) fn no_type_meets_requirements(exclusion: Option<&Exclusion>, nodepool: &str) -> Advice {
    let cause = match exclusion {
        Some(Exclusion::Alone(r)) => {
            format!("no instance type NodePool \"{nodepool}\" can launch has `{r}`; ")
        }
        Some(Exclusion::Pair(a, b)) => format!(
            "no instance type NodePool \"{nodepool}\" can launch has both `{a}` and `{b}`; "
        ),
        None => String::new(),
    };
    Advice {
        label: LABEL,
        help: format!(
            "{cause}the pod's node selectors and NodePool \"{nodepool}\"'s requirements together rule out every instance type; relax one of them"
        ),
    }
}

/// The types that fit leave fewer distinct values of `keys` than their `minValues`.
pub(super) fn min_values_not_met(keys: &[String], nodepool: &str) -> Advice {
    Advice {
        label: "the types this pod fits leave too few values for minValues",
        help: format!(
            "NodePool \"{nodepool}\"'s minValues on {} needs more distinct values than the instance types that fit this pod (with its selectors) offer; allow more values, lower minValues, or run Karpenter with --min-values-policy=BestEffort",
            keys.join(", ")
        ),
    }
}

/// The pod's zone or capacity type is one the pool does not offer.
pub(super) fn no_required_offering(nodepool: &str) -> Advice {
    Advice {
        label: "no offering in this zone or capacity type",
        help: format!(
            "NodePool \"{nodepool}\" launches in no zone and capacity type this pod allows (zones: the cluster's `cluster.zones`; capacity types: on-demand and spot, reserved only with capacityReservationSelectorTerms); allow one it offers"
        ),
    }
}

/// A DaemonSet binds the pod's host port on every type that would fit.
pub(super) fn host_port_taken(port: &crate::karpenter::pod::HostPort, nodepool: &str) -> Advice {
    Advice {
        label: "a DaemonSet already binds this host port",
        help: format!(
            "a DaemonSet runs on every node NodePool \"{nodepool}\" would launch for this pod and binds host port {}/{}; two pods cannot bind one host port on a node, so use another port (or drop hostPort)",
            port.port, port.protocol
        ),
    }
}

/// The NodePool's own requirements leave no type: Karpenter skips it for every pod.
pub(super) fn no_compatible_instance_types(min_values: bool, nodepool: &str) -> Advice {
    let why = if min_values {
        "its minValues cannot be met by the instance types its requirements allow"
    } else {
        "its requirements allow no instance type that its EC2NodeClass can launch"
    };
    Advice {
        label: "the NodePool for this pod launches nothing",
        help: format!(
            "Karpenter never launches from NodePool \"{nodepool}\": {why}; fix the NodePool's requirements"
        ),
    }
}

/// Even `largest`, the biggest type NodePool `nodepool` allows, lacks a resource: one no
/// EC2 type offers, one no allowed type offers, or simply not enough of it.
pub(super) fn not_enough_resources(largest: &LargestType, nodepool: &str) -> Advice {
    let resource = &largest.resource;
    let help = if !known_resource(resource) && largest.allocatable.is_zero() {
        // The kubelet reports the huge pages the node's kernel reserved; a device plugin
        // advertises the other resources.
        let (source, them) = if resource.starts_with("hugepages-") {
            (
                "reserve the huge pages at boot (the EC2NodeClass's userData)",
                "them",
            )
        } else {
            ("install the device plugin", "it")
        };
        format!(
            "no EC2 instance type offers `{resource}`, and no NodeOverlay in the files gives it to the types of NodePool \"{nodepool}\": Karpenter sees its capacity as 0; {source} and describe {them} with a NodeOverlay whose requirements select this NodePool's types, or remove the request"
        )
    } else if largest.allocatable.is_zero() {
        format!(
            "no instance type NodePool \"{nodepool}\" allows offers `{resource}`; add a NodePool whose requirements allow types that have it (e.g. a GPU family for nvidia.com/gpu)"
        )
    } else if resource == "ephemeral-storage" {
        // The EC2NodeClass sizes it, not the instance type (aws `types.go` `ephemeralStorage`).
        format!(
            "NodePool \"{nodepool}\"'s EC2NodeClass gives its nodes at most {} ephemeral-storage allocatable, whatever the instance type; lower the request, enlarge the volume behind it (the `rootVolume: true` blockDeviceMapping, else /dev/xvdb on Bottlerocket, /dev/xvda on AL2023), or set `instanceStorePolicy: RAID0` and allow instance-store types",
            largest.allocatable.display_for(resource),
        )
    } else {
        let daemonsets = if largest.daemonset_overhead.is_zero() {
            String::new()
        } else {
            format!(
                " (DaemonSets take {} of it)",
                largest.daemonset_overhead.display_for(resource)
            )
        };
        format!(
            "the largest instance type NodePool \"{nodepool}\" allows is {} with {} {resource} allocatable{daemonsets}; lower the request or allow larger instance types",
            largest.name,
            largest.allocatable.display_for(resource),
        )
    };
    Advice { label: LABEL, help }
}
