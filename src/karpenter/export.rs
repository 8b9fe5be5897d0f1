//! `karplint debug instance-types`: the instance types each NodePool's node class can
//! launch, in the shape of Karpenter's `cloudprovider.InstanceType` (core
//! `pkg/cloudprovider/types.go`: `Requirements`, `Offerings`, `Capacity`, `Overhead`), so
//! that Karpenter's own scheduler (the differential oracle in `oracle/`) judges pods against
//! exactly the types, capacity and overhead karplint assumes.
//!
//! karplint sees no offerings: every type is offered in every zone of the cluster (the
//! config's `cluster.zones`), on-demand and spot. Prices are a stand-in that grows with
//! vCPUs and memory (Karpenter launches the cheapest type that fits; no verdict here
//! depends on which).

use super::allocatable::Overhead;
use super::requirements::{LABEL_CAPACITY_TYPE, LABEL_ZONE, LabelFlavor, TENANCIES};
use super::sim::Simulator;
use crate::quantity::ResourceList;
use serde::Serialize;
use std::collections::BTreeMap;

const LABEL_REGION: &str = "topology.kubernetes.io/region";

/// The capacity types every type is offered as.
const CAPACITY_TYPES: [&str; 2] = ["on-demand", "spot"];

#[derive(Debug, Serialize)]
pub struct InstanceTypes {
    pub version: u32,
    pub zones: Vec<String>,
    #[serde(rename = "nodePools")]
    pub node_pools: BTreeMap<String, Vec<ExportedType>>,
}

#[derive(Debug, Serialize)]
pub struct ExportedType {
    pub name: String,
    pub requirements: Vec<ExportedRequirement>,
    pub offerings: Vec<Offering>,
    pub capacity: BTreeMap<String, String>,
    pub overhead: ExportedOverhead,
}

#[derive(Debug, Serialize)]
pub struct ExportedRequirement {
    pub key: String,
    pub operator: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Offering {
    pub zone: String,
    #[serde(rename = "capacityType")]
    pub capacity_type: &'static str,
    pub price: f64,
    pub available: bool,
}

#[derive(Debug, Serialize)]
pub struct ExportedOverhead {
    #[serde(rename = "kubeReserved")]
    pub kube_reserved: BTreeMap<String, String>,
    #[serde(rename = "systemReserved")]
    pub system_reserved: BTreeMap<String, String>,
    #[serde(rename = "evictionThreshold")]
    pub eviction_threshold: BTreeMap<String, String>,
}

/// Every NodePool of `sim` (none without one) with the types its node class can launch,
/// offered in `zones`.
pub fn instance_types(sim: Option<&Simulator>, zones: &[String]) -> InstanceTypes {
    let node_pools = sim
        .map(|s| s.pools.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|pool| {
            let types = pool
                .launchable()
                .map(|t| ExportedType {
                    name: t.it.name.clone(),
                    requirements: requirements(&t.labels, zones, pool.flavor),
                    offerings: offerings(zones, t.it.vcpus, t.it.memory_mib, t.available),
                    capacity: quantities(&t.capacity),
                    overhead: overhead(&t.overhead),
                })
                .collect();
            (pool.name.clone(), types)
        })
        .collect();
    InstanceTypes {
        version: 1,
        zones: zones.to_vec(),
        node_pools,
    }
}

/// A type's labels as requirements: `In [value]`, or `DoesNotExist` for a label it lacks;
/// its tenancy (`In [default dedicated]`, on both label domains under EKS Auto Mode); then
/// what the AWS provider derives from the offerings (`computeRequirements`): zone, region
/// (the zone without its letter) and capacity type.
fn requirements(
    labels: &[(&str, Option<&str>)],
    zones: &[String],
    flavor: LabelFlavor,
) -> Vec<ExportedRequirement> {
    let mut out: Vec<ExportedRequirement> = labels
        .iter()
        .map(|(key, value)| ExportedRequirement {
            key: (*key).to_string(),
            operator: if value.is_some() {
                "In"
            } else {
                "DoesNotExist"
            },
            values: value.iter().map(|v| (*v).to_string()).collect(),
        })
        .collect();
    let regions: std::collections::BTreeSet<String> = zones
        .iter()
        .map(|z| {
            z.trim_end_matches(|c: char| c.is_ascii_lowercase())
                .to_string()
        })
        .collect();
    let tenancy = TENANCIES.map(String::from).to_vec();
    out.push(ExportedRequirement {
        key: "karpenter.k8s.aws/instance-tenancy".to_string(),
        operator: "In",
        values: tenancy.clone(),
    });
    if flavor == LabelFlavor::EksAutoMode {
        out.push(ExportedRequirement {
            key: "eks.amazonaws.com/instance-tenancy".to_string(),
            operator: "In",
            values: tenancy,
        });
    }
    for (key, values) in [
        (LABEL_ZONE, zones.to_vec()),
        (LABEL_REGION, regions.into_iter().collect()),
        (
            LABEL_CAPACITY_TYPE,
            CAPACITY_TYPES.map(String::from).to_vec(),
        ),
    ] {
        out.push(ExportedRequirement {
            key: key.to_string(),
            operator: "In",
            values,
        });
    }
    out
}

fn offerings(zones: &[String], vcpus: u32, memory_mib: u64, available: bool) -> Vec<Offering> {
    let on_demand = f64::from(vcpus) * 0.04 + memory_mib as f64 / 1024.0 * 0.005;
    zones
        .iter()
        .flat_map(|zone| {
            CAPACITY_TYPES.iter().map(move |ct| Offering {
                zone: zone.clone(),
                capacity_type: ct,
                price: if *ct == "spot" {
                    on_demand * 0.4
                } else {
                    on_demand
                },
                available,
            })
        })
        .collect()
}

fn quantities(list: &ResourceList) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, q)| (k.to_string(), q.display_for(k)))
        .collect()
}

fn overhead(o: &Overhead) -> ExportedOverhead {
    ExportedOverhead {
        kube_reserved: quantities(&o.kube_reserved),
        system_reserved: quantities(&o.system_reserved),
        eviction_threshold: quantities(&o.eviction_threshold),
    }
}
