//! Simulator, NodeOverlay side: the capacity and prices that `karpenter.sh/v1alpha1`
//! NodeOverlays give the instance types of each NodePool, as core's NodeOverlay controller
//! computes them (`pkg/controllers/nodeoverlay`: `Reconcile`,
//! `validateAndUpdateInstanceTypeOverrides`, `getOverlaidOfferings` and the
//! `InstanceTypeStore`).
//!
//! Overlays are taken in `OrderByWeight` order (heaviest first, equal weights by name,
//! descending). One that fails `RuntimeValidate` is never applied. For each instance type of
//! each NodePool that an overlay selects, its `capacity` adds the resources a heavier
//! overlay has not set already, and its `price`/`priceAdjustment` sets the price of each
//! selected offering a heavier overlay has not set. An overlay of the same weight as the
//! lightest one already applied to a type, on a resource or offering that one set, is a
//! conflict: the whole overlay is left out, on every NodePool.
//!
//! The simulator's offerings are `on-demand` and `spot` (and `reserved` where the node class
//! selects reservations) in each of the cluster's zones. When the zones are unknown an
//! overlay's zone requirement is taken to match: the assumption is said in `docs/`.

use super::pool::{Pool, PoolType};
use super::requirements::{
    self, LABEL_CAPACITY_TYPE, LABEL_NODEPOOL, LABEL_ZONE, Operator, Requirement, Requirements,
};
use crate::index::Index;
use crate::model::rejected::{Operators, requirement_rejection};
use crate::model::{Body, Kind, Object};
use crate::quantity::{Quantity, ResourceList};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// The resources an overlay may not set (core `v1.WellKnownResources`).
const WELL_KNOWN_RESOURCES: [&str; 4] = ["cpu", "memory", "ephemeral-storage", "pods"];

/// Offering keys: an offering, not the instance type, is what they select.
const OFFERING_KEYS: [&str; 3] = [LABEL_CAPACITY_TYPE, LABEL_ZONE, "topology.k8s.aws/zone-id"];

/// Keys every AWS instance type has a requirement on besides its instance labels
/// (`computeRequirements`).
const TYPE_KEYS: [&str; 3] = [
    "topology.kubernetes.io/region",
    "karpenter.k8s.aws/instance-tenancy",
    "eks.amazonaws.com/instance-tenancy",
];

/// One NodeOverlay that Karpenter applies.
#[derive(Debug)]
pub struct Overlay<'a> {
    pub obj: &'a Object,
    /// `lo.FromPtr(spec.weight)`: 0 when unset.
    weight: i64,
    requirements: Requirements,
    /// `price`, else `priceAdjustment`.
    price: Option<String>,
    capacity: ResourceList,
}

/// A NodeOverlay Karpenter never applies, and why.
#[derive(Debug)]
pub struct Ignored<'a> {
    pub obj: &'a Object,
    pub reason: String,
}

/// The run's NodeOverlays in `OrderByWeight` order, and those that are never applied
/// because the API server or `RuntimeValidate` rejects them.
pub fn read<'a>(index: &Index<'a>) -> (Vec<Overlay<'a>>, Vec<Ignored<'a>>) {
    let mut overlays = Vec::new();
    let mut ignored = Vec::new();
    for obj in index.of_kind(Kind::NodeOverlay) {
        let Body::NodeOverlay(spec) = &obj.body else {
            continue;
        };
        match overlay(obj, spec) {
            Ok(o) => overlays.push(o),
            Err(reason) => ignored.push(Ignored { obj, reason }),
        }
    }
    overlays.sort_by(|a, b| (b.weight.cmp(&a.weight)).then_with(|| b.obj.name().cmp(a.obj.name())));
    (overlays, ignored)
}

/// `spec` as Karpenter applies it, or why it never does: the CRD's validation (price
/// patterns, `price` with `priceAdjustment`, requirement operators and values) and
/// `RuntimeValidate` (restricted labels, well-known resources in `capacity`).
fn overlay<'a>(
    obj: &'a Object,
    spec: &crate::model::karpenter::NodeOverlaySpec,
) -> Result<Overlay<'a>, String> {
    let price = match (&spec.price, &spec.price_adjustment) {
        (Some(_), Some(_)) => return Err("it sets both price and priceAdjustment".into()),
        (Some(p), None) if !is_price(p.value.as_str()) => {
            return Err(format!(
                "price {:?} is not a number of dollars",
                p.value.as_str()
            ));
        }
        (None, Some(a)) if !is_adjustment(a.value.as_str()) => {
            return Err(format!(
                "priceAdjustment {:?} is not +N, -N, +N% or -N% (at most -100%)",
                a.value.as_str()
            ));
        }
        (p, a) => p.as_ref().or(a.as_ref()).map(|v| v.value.to_string()),
    };
    let mut reqs = Requirements::new();
    for r in &spec.requirements {
        let key = r.key.value.as_str();
        if let Some(rejected) = requirement_rejection(r, Operators::NodePool) {
            return Err(format!("requirement {key}: {}", rejected.reason));
        }
        if let Some(why) = requirements::restricted_pod_label(key) {
            return Err(format!("requirement {key}: {why}"));
        }
        let values: Vec<&str> = r.values.iter().map(|v| v.value.as_str()).collect();
        let op = (r.operator.value.parse::<Operator>())
            .map_err(|_| format!("requirement {key}: unknown operator"))?;
        if op == Operator::NotIn && values.is_empty() {
            return Err(format!(
                "requirement {key}: NotIn must have a value defined"
            ));
        }
        let req =
            Requirement::new(key, op, values).map_err(|e| format!("requirement {key}: {e}"))?;
        reqs.add(req);
    }
    let mut capacity = ResourceList::new();
    for (k, v) in spec.capacity.iter() {
        if WELL_KNOWN_RESOURCES.contains(&k) {
            return Err(format!("capacity {k}: invalid resource restricted"));
        }
        let q = Quantity::parse_non_negative(v).map_err(|e| format!("capacity {k}: {e}"))?;
        capacity.insert(k.to_string(), q);
    }
    Ok(Overlay {
        obj,
        weight: spec.weight.as_ref().map_or(0, |w| w.value),
        requirements: reqs,
        price,
        capacity,
    })
}

/// The CRD's pattern for `price`: `^\d+(\.\d+)?$`.
fn is_price(s: &str) -> bool {
    let (whole, frac) = s.split_once('.').unwrap_or((s, "0"));
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    digits(whole) && digits(frac)
}

/// The CRD's pattern for `priceAdjustment`: `+N`, `-N`, `+N%`, `-N%` with N below 100, or
/// `-100%` (N a decimal, `\d*\.?\d+`).
fn is_adjustment(s: &str) -> bool {
    // `\d*\.?\d+`: digits, then at most one dot followed by at least one digit.
    let decimal = |p: &str| {
        let (whole, frac) = p.rsplit_once('.').unwrap_or(("", p));
        whole.bytes().all(|b| b.is_ascii_digit())
            && !frac.is_empty()
            && frac.bytes().all(|b| b.is_ascii_digit())
    };
    if s == "-100%" {
        return true;
    }
    match (s.strip_prefix('+'), s.strip_prefix('-')) {
        (Some(n), _) => decimal(n.strip_suffix('%').unwrap_or(n)),
        // `-\d{1,2}(\.\d+)?%`: below 100, with a whole part.
        (_, Some(n)) => match n.strip_suffix('%') {
            Some(p) => {
                let whole = p.split('.').next().unwrap_or_default();
                (1..=2).contains(&whole.len()) && decimal(p)
            }
            None => decimal(n),
        },
        _ => false,
    }
}

/// Core's `AdjustedPrice`: `change` as a price, or as an adjustment of `price` (never
/// below 0).
pub fn adjusted_price(price: f64, change: &str) -> f64 {
    let parse = |s: &str| s.parse::<f64>().unwrap_or(0.0);
    if !change.starts_with('+') && !change.starts_with('-') {
        return parse(change);
    }
    let adjusted = match change.strip_suffix('%') {
        Some(p) => price * (1.0 + parse(p) / 100.0),
        None => price + parse(change),
    };
    adjusted.max(0.0)
}

/// One offering of an instance type: a capacity type in a zone (`None`: the zones are
/// unknown).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Offering {
    pub capacity_type: &'static str,
    pub zone: Option<String>,
}

/// What the overlays give one NodePool's instance types, by catalog index.
#[derive(Debug, Default, PartialEq)]
pub struct PoolOverlay {
    /// Resources added to a type's capacity (`ApplyCapacityOverlay`).
    pub capacity: BTreeMap<usize, ResourceList>,
    /// The price change of each overlaid offering of a type.
    pub price: BTreeMap<usize, BTreeMap<Offering, String>>,
}

impl PoolOverlay {
    /// The price of catalog type `i` as `capacity_type` launches: the cheapest of its
    /// offerings of that capacity type, each with its overlay's change, `base` without one.
    pub fn price(&self, i: usize, capacity_type: &str, base: f64, zones: usize) -> f64 {
        let Some(changes) = self.price.get(&i) else {
            return base;
        };
        let changed: Vec<f64> = (changes.iter())
            .filter(|(o, _)| o.capacity_type == capacity_type)
            .map(|(_, c)| adjusted_price(base, c))
            .collect();
        let unchanged = changed.len() < zones.max(1);
        (changed.into_iter())
            .chain(unchanged.then_some(base))
            .fold(f64::INFINITY, f64::min)
    }
}

/// The updates of one type of one group of NodePools (core `instanceTypeUpdate`).
#[derive(Default)]
struct TypeUpdate {
    capacity: Option<CapacityUpdate>,
    price: BTreeMap<Offering, PriceUpdate>,
}

struct CapacityUpdate {
    update: ResourceList,
    lowest_weight_resources: ResourceList,
    lowest_weight: i64,
    /// The overlay of the lowest weight (an index into the overlays).
    lowest: usize,
}

struct PriceUpdate {
    update: String,
    lowest_weight: i64,
    lowest: usize,
}

/// NodePools the overlays cannot tell apart: each overlay selects all or none of them on
/// their name and labels, and they share their instance types' requirements.
struct Group<'p, 'a, 'c> {
    pools: Vec<usize>,
    pool: &'p Pool<'a, 'c>,
    /// Per overlay, whether it selects the pools' name and labels.
    selects: Vec<bool>,
    store: HashMap<usize, TypeUpdate>,
}

/// An overlay left out for a conflict, and the applied overlay it conflicts with first.
pub struct Conflict<'o, 'a> {
    pub overlay: &'o Overlay<'a>,
    pub with: &'o Overlay<'a>,
}

/// What `overlays` give each of `pools` (an entry per pool, shared by pools alike), and the
/// overlays left out for a conflict. `zones` are the cluster's, empty when unknown.
pub fn apply<'o, 'a>(
    overlays: &'o [Overlay<'a>],
    pools: &[Pool],
    zones: &[String],
) -> (Vec<Option<Arc<PoolOverlay>>>, Vec<Conflict<'o, 'a>>) {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_key: HashMap<(Vec<bool>, usize, bool), usize> = HashMap::new();
    for (i, pool) in pools.iter().enumerate() {
        let selects: Vec<bool> = overlays.iter().map(|o| selects_pool(o, pool)).collect();
        let key = (selects.clone(), pool.type_table_id(), pool.reservations);
        let next = groups.len();
        let g = *by_key.entry(key).or_insert(next);
        if g == next {
            groups.push(Group {
                pools: Vec::new(),
                pool,
                selects,
                store: HashMap::new(),
            });
        }
        groups[g].pools.push(i);
    }
    let mut conflicting = Vec::new();
    for (n, o) in overlays.iter().enumerate() {
        let selected: Vec<Vec<(usize, Vec<Offering>)>> = (groups.iter())
            .map(|g| selected_types(o, n, g, zones))
            .collect();
        let conflict = groups.iter().zip(&selected).find_map(|(g, types)| {
            (types.iter()).find_map(|(t, offerings)| conflicts(g.store.get(t), o, offerings))
        });
        if let Some(with) = conflict {
            conflicting.push(Conflict {
                overlay: o,
                with: &overlays[with],
            });
            continue;
        }
        for (g, types) in groups.iter_mut().zip(selected) {
            for (t, offerings) in types {
                store(g.store.entry(t).or_default(), o, n, offerings);
            }
        }
    }
    let mut out = vec![None; pools.len()];
    for g in groups {
        if g.store.is_empty() {
            continue;
        }
        let overlay = Arc::new(PoolOverlay {
            capacity: (g.store.iter())
                .filter_map(|(t, u)| Some((*t, u.capacity.as_ref()?.update.clone())))
                .filter(|(_, c)| !c.is_empty())
                .collect(),
            price: (g.store.iter())
                .filter(|(_, u)| !u.price.is_empty())
                .map(|(t, u)| {
                    let changes = (u.price.iter())
                        .map(|(o, p)| (o.clone(), p.update.clone()))
                        .collect();
                    (*t, changes)
                })
                .collect(),
        });
        for p in g.pools {
            out[p] = Some(overlay.clone());
        }
    }
    (out, conflicting)
}

/// Whether overlay `o` selects `pool` on what the pool is rather than its types:
/// `karpenter.sh/nodepool` and the template labels, which `getOverlaidOfferings` adds to
/// each type's requirements before `Compatible` (without undefined well-known labels
/// allowed: a key nothing defines fails unless it reads `NotIn`/`DoesNotExist`).
fn selects_pool(o: &Overlay, pool: &Pool) -> bool {
    let mut defined = Requirements::new();
    defined.add(Requirement::in_values(LABEL_NODEPOOL, [pool.name.as_str()]));
    for (k, v) in &pool.np.labels.0 {
        defined.add(Requirement::in_values(&k.value, [v.value.as_str()]));
    }
    let row = pool.all_types().next().map(|t| t.requirements);
    let undefined = o.requirements.iter().any(|r| {
        let key = r.key();
        !defined.has(key)
            && !row.is_some_and(|row| row.has(key))
            && !OFFERING_KEYS.contains(&key)
            && !TYPE_KEYS.contains(&key)
            && !matches!(r.operator(), Operator::NotIn | Operator::DoesNotExist)
    });
    !undefined && defined.intersects_ok(&o.requirements)
}

/// The types of group `g` that overlay `o` (the `n`th) selects, each with its offerings
/// that the overlay's requirements allow (`getOverlaidOfferings`; a type with none is not
/// selected).
fn selected_types(
    o: &Overlay,
    n: usize,
    g: &Group,
    zones: &[String],
) -> Vec<(usize, Vec<Offering>)> {
    if !g.selects[n] {
        return Vec::new();
    }
    let offerings = offerings(g.pool.reservations, zones);
    let compatible: Vec<Offering> = (offerings.into_iter())
        .filter(|of| offering_compatible(&o.requirements, of))
        .collect();
    if compatible.is_empty() {
        return Vec::new();
    }
    (g.pool.all_types())
        .filter(|t: &PoolType| t.requirements.intersects_ok(&o.requirements))
        .map(|t| (t.catalog_index(), compatible.clone()))
        .collect()
}

/// Every offering of a type: each capacity type in each zone.
fn offerings(reserved: bool, zones: &[String]) -> Vec<Offering> {
    let types: &[&'static str] = if reserved {
        &["on-demand", "spot", "reserved"]
    } else {
        &["on-demand", "spot"]
    };
    let zones: Vec<Option<String>> = if zones.is_empty() {
        vec![None]
    } else {
        zones.iter().cloned().map(Some).collect()
    };
    (types.iter())
        .flat_map(|ct| {
            zones.iter().map(|z| Offering {
                capacity_type: ct,
                zone: z.clone(),
            })
        })
        .collect()
}

/// `reqs.IsCompatible(offering.Requirements, AllowUndefinedWellKnownLabels)`: the overlay's
/// capacity-type and zone requirements intersect the offering's. An unknown zone matches.
fn offering_compatible(reqs: &Requirements, of: &Offering) -> bool {
    let mut offered = Requirements::new();
    offered.add(Requirement::in_values(
        LABEL_CAPACITY_TYPE,
        [of.capacity_type],
    ));
    if let Some(z) = &of.zone {
        offered.add(Requirement::in_values(LABEL_ZONE, [z.as_str()]));
    }
    offered.intersects_ok(reqs)
}

/// `isPriceUpdatesConflicting || isCapacityUpdatesConflicting` for one type: the overlay
/// it conflicts with.
fn conflicts(update: Option<&TypeUpdate>, o: &Overlay, offerings: &[Offering]) -> Option<usize> {
    let u = update?;
    let price = o.price.as_ref().and_then(|_| {
        (offerings.iter())
            .filter_map(|of| u.price.get(of))
            .find(|p| p.lowest_weight == o.weight)
            .map(|p| p.lowest)
    });
    let capacity = || {
        let c = u.capacity.as_ref()?;
        let shared = (o.capacity.iter()).any(|(k, _)| c.lowest_weight_resources.get(k).is_some());
        (c.lowest_weight == o.weight && shared).then_some(c.lowest)
    };
    price.or_else(capacity)
}

/// `updateInstanceTypeOffering` and `updateInstanceTypeCapacity` for one type.
fn store(u: &mut TypeUpdate, o: &Overlay, n: usize, offerings: Vec<Offering>) {
    if let Some(price) = &o.price {
        for of in offerings {
            u.price
                .entry(of)
                .and_modify(|p| {
                    p.lowest_weight = o.weight;
                    p.lowest = n;
                })
                .or_insert_with(|| PriceUpdate {
                    update: price.clone(),
                    lowest_weight: o.weight,
                    lowest: n,
                });
        }
    }
    if o.capacity.is_empty() {
        return;
    }
    match &mut u.capacity {
        None => {
            u.capacity = Some(CapacityUpdate {
                update: o.capacity.clone(),
                lowest_weight_resources: o.capacity.clone(),
                lowest_weight: o.weight,
                lowest: n,
            })
        }
        Some(c) => {
            for (k, q) in o.capacity.iter() {
                if c.update.get(k).is_none() {
                    c.update.insert(k.to_string(), q);
                }
            }
            c.lowest_weight_resources = o.capacity.clone();
            c.lowest_weight = o.weight;
            c.lowest = n;
        }
    }
}

#[cfg(test)]
mod tests;
