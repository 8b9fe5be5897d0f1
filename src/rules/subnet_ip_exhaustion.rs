//! `subnet-ip-exhaustion`: a NodePool that may launch more nodes within its `limits` than
//! its subnets have IPv4 addresses for. Subnet facts (free addresses per subnet) come only
//! from the config file's `cluster.subnets` (or a library caller's [`ClusterFacts`]); without
//! them the rule is silent.
//!
//! [`ClusterFacts`]: crate::karpenter::cluster::ClusterFacts

use super::{Context, Rule};
use crate::diagnostic::Finding;
use crate::facts::Workloads;
use crate::karpenter::requirements::LABEL_ZONE;

declare_rule!(
    SubnetIpExhaustion,
    "subnet-ip-exhaustion",
    Error,
    "a NodePool's limits allow more nodes than its subnets have free IPv4 addresses for: \"InsufficientFreeAddressesInSubnet\""
);

impl Rule for SubnetIpExhaustion {
    fn check_run(&self, cx: &Context, _workloads: &Workloads, out: &mut Vec<Finding>) {
        let (Some(sim), false) = (&cx.sim, cx.cluster.subnets.is_empty()) else {
            return;
        };
        for pool in &sim.pools {
            if pool.limits.is_empty() || pool.types().len() == 0 {
                continue;
            }
            let zones = pool
                .requirements
                .get(LABEL_ZONE)
                .filter(|r| !r.is_complement())
                .map(|r| r.values());
            let subnets: Vec<_> = cx
                .cluster
                .subnets
                .iter()
                .filter(|s| match (&zones, &s.zone) {
                    (Some(z), Some(sz)) => z.contains(sz),
                    _ => true,
                })
                .collect();
            if subnets.is_empty() {
                continue;
            }
            let free: u64 = subnets.iter().map(|s| s.available_ipv4).sum();
            // Worst case over the pool's instance types: as many nodes as the limits allow,
            // each with its primary address plus VPC CNI addresses for every pod slot.
            let mut worst: Option<(u128, u128, u128, &str, String)> = None;
            let mut unbounded = false;
            for t in pool.types() {
                let mut nodes: Option<(u128, String)> = None;
                for (k, lim) in pool.limits.iter() {
                    let n = if k == "nodes" {
                        u128::try_from(lim.as_millis() / 1000).unwrap_or(0)
                    } else {
                        match t.it.capacity.get(k).filter(|c| !c.is_zero()) {
                            Some(c) => u128::try_from(lim.as_millis() / c.as_millis()).unwrap_or(0),
                            None => continue,
                        }
                    };
                    if nodes.as_ref().is_none_or(|(m, _)| n < *m) {
                        nodes = Some((n, k.to_string()));
                    }
                }
                let Some((n, key)) = nodes else {
                    unbounded = true;
                    break;
                };
                let per_node = 1 + u128::from(t.it.eni_limited_pods.saturating_sub(2));
                let total = n * per_node;
                if worst.as_ref().is_none_or(|w| total > w.0) {
                    worst = Some((total, n, per_node, t.it.name.as_str(), key));
                }
            }
            let Some((total, n, per_node, ty, key)) = worst.filter(|_| !unbounded) else {
                continue;
            };
            if total <= u128::from(free) {
                continue;
            }
            let span = pool
                .limit_spans
                .get(&key)
                .copied()
                .unwrap_or_else(|| pool.name_span());
            let lim = pool
                .limits
                .get(&key)
                .map(|q| q.display_for(&key))
                .unwrap_or_default();
            let ids: Vec<&str> = subnets.iter().map(|s| s.id.as_str()).collect();
            out.push(
                META.finding(pool.obj,
                    span,
                    format!(
                        "NodePool \"{}\" may launch {n} {ty} nodes within `limits.{key}: {lim}`, needing up to {total} IPv4 addresses (1 per node plus {} VPC CNI pod addresses), but its subnets ({}) have {free} free: launches would fail with InsufficientFreeAddressesInSubnet",
                        pool.name,
                        per_node - 1,
                        ids.join(", ")
                    ),
                )
                .label(format!("allows up to {total} addresses; {free} free"))
                .help("give pods their own addresses: add a secondary CIDR to the VPC and enable VPC CNI custom networking (`AWS_VPC_K8S_CNI_CUSTOM_NETWORK_CFG=true` with an ENIConfig per zone), or add larger subnets, or lower the NodePool's limits"),
            );
        }
    }
}
