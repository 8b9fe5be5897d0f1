//! Projected capacity and cost: the nodes the verdict's rounds launch
//! ([`crate::karpenter::scheduler::LaunchedNode`]), counted by NodePool, instance type and
//! capacity type, and their monthly on-demand cost from the provider's static price table
//! ([`Prices`]). A node with no known price (spot, or a type the table does not price) is
//! counted, never priced: the report says how many.
//!
//! The region comes from `cluster.region` (the config or an eksctl `ClusterConfig`), else
//! from the cluster's zones (`cluster.zones`, `cluster.subnets`), else it is the provider's
//! fallback region; a note says which.

use super::plan::PlanRow;
use crate::karpenter::cluster::ClusterFacts;
use crate::karpenter::prices::Prices;
use crate::karpenter::scheduler::LaunchedNode;
use serde::Serialize;
use std::collections::BTreeMap;

/// The hours in a month, as AWS's pricing calculator counts them (365 × 24 / 12).
pub const HOURS_PER_MONTH: f64 = 730.0;

/// The projected nodes of a run and what they cost.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cost {
    /// The region the nodes are priced in.
    pub region: String,
    /// Where the region comes from: `cluster.region`, `cluster zones` or `fallback`.
    pub region_from: &'static str,
    /// The region whose table prices them (the provider's fallback for a region without
    /// one); `None` when the table has neither.
    pub price_table: Option<String>,
    /// The currency of the prices (`USD`, or `CNY` in cn- regions).
    pub currency: String,
    /// The provider release the prices come from (`github.com/aws/karpenter-provider-aws v1.14.3`).
    pub provider: String,
    /// The day the table was generated (`YYYY-MM-DD`).
    pub price_date: String,
    pub hours_per_month: f64,
    /// One row per NodePool, instance type and capacity type, sorted.
    pub nodes: Vec<NodeCount>,
    /// One row per NodePool, sorted.
    pub nodepools: Vec<PoolCost>,
    /// Every node launched.
    pub node_count: usize,
    /// The monthly on-demand cost of the priced nodes.
    pub monthly: f64,
    /// The nodes without a known price (spot, or a type the table does not price).
    pub unpriced_nodes: usize,
}

/// The nodes of one NodePool, instance type and capacity type.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NodeCount {
    pub nodepool: String,
    /// `None` when no instance type was left to the NodeClaim.
    pub instance_type: Option<String>,
    /// `on-demand` or `spot`.
    pub capacity_type: &'static str,
    pub nodes: usize,
    /// The on-demand price of one node per hour, when known (never for spot).
    pub hourly: Option<f64>,
    /// What the nodes cost a month together, when known.
    pub monthly: Option<f64>,
}

/// One NodePool's nodes and their cost.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PoolCost {
    pub nodepool: String,
    pub nodes: usize,
    /// The monthly cost of its priced nodes.
    pub monthly: f64,
    pub unpriced_nodes: usize,
}

/// What one workload's replicas launch on.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RowLaunch {
    pub instance_type: String,
    /// `on-demand` or `spot`.
    pub capacity_type: &'static str,
    /// How many of its replicas land on nodes of that type.
    pub pods: usize,
}

/// The capacity type of a node.
fn capacity_type(node: &LaunchedNode) -> &'static str {
    if node.spot { "spot" } else { "on-demand" }
}

/// The on-demand price of one node per hour, a NodeOverlay's where one changes it: `None`
/// for spot and for a type the table does not price.
fn hourly(prices: &Prices, region: &str, node: &LaunchedNode) -> Option<f64> {
    if node.spot {
        return None;
    }
    (node.overlay_price)
        .or_else(|| prices.provider_on_demand(region, node.instance_type.as_deref()?))
}

/// The cost of `nodes`, whose pools are named by `pool_name`.
pub fn of_nodes(
    nodes: &[LaunchedNode],
    pool_name: impl Fn(usize) -> String,
    cluster: &ClusterFacts,
) -> Cost {
    let prices = Prices::builtin();
    let (region, region_from) = cluster.region();
    let price_table = prices.provider_region(&region).map(str::to_string);
    // Keyed by the overlay's price too (its bits: equal prices are equal bits).
    type Key = (String, Option<String>, &'static str, Option<u64>);
    let mut counts: BTreeMap<Key, usize> = BTreeMap::new();
    for n in nodes {
        let key = (
            pool_name(n.pool),
            n.instance_type.clone(),
            capacity_type(n),
            n.overlay_price.map(f64::to_bits),
        );
        *counts.entry(key).or_default() += 1;
    }
    let rows: Vec<NodeCount> = (counts.into_iter())
        .map(
            |((nodepool, instance_type, capacity_type, overlay_price), count)| {
                let node = LaunchedNode {
                    pool: 0,
                    instance_type: instance_type.clone(),
                    spot: capacity_type == "spot",
                    overlay_price: overlay_price.map(f64::from_bits),
                    workloads: Vec::new(),
                };
                let hourly = hourly(prices, &region, &node);
                NodeCount {
                    nodepool,
                    instance_type,
                    capacity_type,
                    nodes: count,
                    hourly,
                    monthly: hourly.map(|h| h * HOURS_PER_MONTH * count as f64),
                }
            },
        )
        .collect();
    let mut pools: BTreeMap<String, PoolCost> = BTreeMap::new();
    for r in &rows {
        let p = pools.entry(r.nodepool.clone()).or_insert_with(|| PoolCost {
            nodepool: r.nodepool.clone(),
            nodes: 0,
            monthly: 0.0,
            unpriced_nodes: 0,
        });
        p.nodes += r.nodes;
        match r.monthly {
            Some(m) => p.monthly += m,
            None => p.unpriced_nodes += r.nodes,
        }
    }
    let nodepools: Vec<PoolCost> = pools.into_values().collect();
    Cost {
        currency: (price_table.as_deref())
            .and_then(|t| prices.currency(t))
            .unwrap_or("USD")
            .to_string(),
        region,
        region_from,
        price_table,
        provider: format!("{} {}", prices.provider_module(), prices.provider_version()),
        price_date: prices.date().to_string(),
        hours_per_month: HOURS_PER_MONTH,
        node_count: nodes.len(),
        monthly: nodepools.iter().map(|p| p.monthly).sum(),
        unpriced_nodes: nodepools.iter().map(|p| p.unpriced_nodes).sum(),
        nodes: rows,
        nodepools,
    }
}

/// For each of `workloads` workloads, the nodes its pods are on: (node, how many pods).
pub fn by_workload(nodes: &[LaunchedNode], workloads: usize) -> Vec<Vec<(usize, usize)>> {
    let mut out: Vec<Vec<(usize, usize)>> = vec![Vec::new(); workloads];
    for (i, n) in nodes.iter().enumerate() {
        for &w in &n.workloads {
            let Some(mine) = out.get_mut(w) else { continue };
            match mine.last_mut() {
                Some((node, count)) if *node == i => *count += 1,
                _ => mine.push((i, 1)),
            }
        }
    }
    out
}

/// What a workload's replicas launch on, by instance type and capacity type, and its share
/// of the nodes' monthly cost: a node shared by several workloads is split by their pod
/// counts. `on` is the workload's entry of [`by_workload`]. The share counts priced nodes
/// only; `None` when none of its nodes is priced.
pub fn of_workload(
    nodes: &[LaunchedNode],
    on: &[(usize, usize)],
    cluster: &ClusterFacts,
) -> (Vec<RowLaunch>, Option<f64>) {
    let prices = Prices::builtin();
    let (region, _) = cluster.region();
    let mut by_type: BTreeMap<(String, &'static str), usize> = BTreeMap::new();
    let mut monthly: Option<f64> = None;
    for &(i, mine) in on {
        let Some(n) = nodes.get(i) else { continue };
        let Some(t) = &n.instance_type else { continue };
        *by_type.entry((t.clone(), capacity_type(n))).or_default() += mine;
        if let Some(h) = hourly(prices, &region, n) {
            let share = mine as f64 / n.workloads.len() as f64;
            *monthly.get_or_insert(0.0) += h * HOURS_PER_MONTH * share;
        }
    }
    let launches = (by_type.into_iter())
        .map(|((instance_type, capacity_type), pods)| RowLaunch {
            instance_type,
            capacity_type,
            pods,
        })
        .collect();
    (launches, monthly)
}

/// The notes of a cost: where the prices come from, and what could not be priced.
pub fn notes(cost: &Cost) -> Vec<String> {
    let table = match cost.price_table.as_deref() {
        Some(t) if t == cost.region => String::new(),
        Some(t) => format!(
            ", priced from {t}'s table (the provider has none for {})",
            cost.region
        ),
        None => ", for which the table has no prices".to_string(),
    };
    let mut out = vec![format!(
        "cost: static on-demand prices of {} (generated {}), region {} (from {}){table}; {} hours a month",
        cost.provider, cost.price_date, cost.region, cost.region_from, cost.hours_per_month
    )];
    if cost.unpriced_nodes > 0 {
        out.push(format!(
            "cost: {} of {} node(s) have no known price (spot, which karplint does not price, or an instance type missing from the table) and are not in the totals",
            cost.unpriced_nodes, cost.node_count
        ));
    }
    out
}

/// A monthly amount: `1,234.56 USD`.
pub fn money(amount: f64, currency: &str) -> String {
    let cents = (amount * 100.0).round() as i64;
    let (sign, cents) = if cents < 0 {
        ("-", -cents)
    } else {
        ("", cents)
    };
    let units = (cents / 100).to_string();
    let mut grouped = String::new();
    for (i, c) in units.chars().enumerate() {
        if i > 0 && (units.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("{sign}{grouped}.{:02} {currency}", cents % 100)
}

/// A workload's instance types, with how many replicas land on each: `2 on m5.large,
/// 1 on c5.xlarge (spot)`.
pub fn launches(l: &[RowLaunch]) -> String {
    (l.iter())
        .map(|l| {
            let spot = if l.capacity_type == "spot" {
                " (spot)"
            } else {
                ""
            };
            format!("{} on {}{spot}", l.pods, l.instance_type)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A workload's monthly share, or why it has none.
fn row_cost(r: &PlanRow, currency: &str) -> String {
    match r.monthly_cost {
        Some(m) => money(m, currency),
        None if r.instance_types.is_empty() => "-".to_string(),
        None => "no price known".to_string(),
    }
}

/// The rows of the cost section: one per workload that launches nodes, one per NodePool,
/// and the total; each `[label, nodes or types, monthly]`.
fn section_rows(rows: &[PlanRow], cost: &Cost) -> Vec<[String; 3]> {
    let cur = &cost.currency;
    let mut out: Vec<[String; 3]> = (rows.iter())
        .filter(|r| !r.instance_types.is_empty())
        .map(|r| {
            [
                super::plan::workload_name(r),
                launches(&r.instance_types),
                row_cost(r, cur),
            ]
        })
        .collect();
    let unpriced = |n: usize| {
        if n > 0 {
            format!(" ({n} node(s) without a price)")
        } else {
            String::new()
        }
    };
    for p in &cost.nodepools {
        out.push([
            format!("NodePool {}", p.nodepool),
            format!("{} node(s)", p.nodes),
            format!("{}{}", money(p.monthly, cur), unpriced(p.unpriced_nodes)),
        ]);
    }
    out.push([
        "total".to_string(),
        format!("{} node(s)", cost.node_count),
        format!(
            "{}{}",
            money(cost.monthly, cur),
            unpriced(cost.unpriced_nodes)
        ),
    ]);
    out
}

/// The cost section of `karplint plan`'s table: per workload, per NodePool and in total,
/// then its notes.
pub fn render_text(rows: &[PlanRow], cost: &Cost) -> String {
    let table = section_rows(rows, cost);
    let w0 = table
        .iter()
        .map(|r| r[0].chars().count())
        .max()
        .unwrap_or(0);
    let w1 = table
        .iter()
        .map(|r| r[1].chars().count())
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "\nProjected nodes and monthly on-demand cost ({}):\n",
        cost.region
    );
    for [a, b, c] in table {
        let line = format!("  {a:<w0$}  {b:<w1$}  {c}");
        out.push_str(&super::escape::line(line.trim_end()));
        out.push('\n');
    }
    for n in notes(cost) {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

/// The cost section of `karplint plan --format markdown`.
pub fn render_markdown(rows: &[PlanRow], cost: &Cost) -> String {
    let mut out = format!(
        "\n### Projected nodes and monthly on-demand cost ({})\n\n| | Nodes / instance types | Monthly |\n|---|---|---|\n",
        super::markdown::cell(&cost.region)
    );
    for [a, b, c] in section_rows(rows, cost) {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            super::markdown::cell(&a),
            super::markdown::cell(&b),
            super::markdown::cell(&c)
        ));
    }
    out.push('\n');
    for n in notes(cost) {
        out.push_str(&format!("> {}\n", super::markdown::cell(&n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(t: &str, spot: bool, workloads: Vec<usize>) -> LaunchedNode {
        LaunchedNode {
            pool: 0,
            instance_type: Some(t.to_string()),
            spot,
            overlay_price: None,
            workloads,
        }
    }

    #[test]
    fn spot_and_unknown_types_are_counted_not_priced() {
        let nodes = [
            node("m5.large", false, vec![0, 0]),
            node("m5.large", true, vec![0]),
            node("no-such.type", false, vec![1]),
        ];
        let cost = of_nodes(&nodes, |_| "default".into(), &ClusterFacts::default());
        assert_eq!(cost.node_count, 3);
        assert_eq!(cost.unpriced_nodes, 2);
        let m5 = Prices::builtin()
            .on_demand("us-east-1", "m5.large")
            .unwrap();
        assert!((cost.monthly - m5 * HOURS_PER_MONTH).abs() < 1e-9);
        let on = by_workload(&nodes, 2);
        assert_eq!(on[0], [(0, 2), (1, 1)]);
        let (launches, monthly) = of_workload(&nodes, &on[0], &ClusterFacts::default());
        assert_eq!(launches.len(), 2);
        assert!((monthly.unwrap() - m5 * HOURS_PER_MONTH).abs() < 1e-9);
        assert_eq!(
            of_workload(&nodes, &on[1], &ClusterFacts::default()).1,
            None
        );
        assert_eq!(notes(&cost).len(), 2);
    }

    #[test]
    fn money_groups_thousands() {
        assert_eq!(money(1234567.891, "USD"), "1,234,567.89 USD");
        assert_eq!(money(-70.08, "USD"), "-70.08 USD");
        assert_eq!(money(0.0, "USD"), "0.00 USD");
    }
}
