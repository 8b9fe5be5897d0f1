//! Simulator, topology: which domains a topology key has (karpenter-model §5) and which NodePools a
//! pod template can reach, for the topology-spread, pod-affinity and volume-zone rules.
//!
//! Karpenter builds the domains of a key from every ready NodePool's requirements (their
//! `In` values, intersected with the instance types' labels) and from existing nodes. Some
//! domains come from facts karplint cannot see: a NodePool without a zone requirement gets
//! its zones from the EC2NodeClass subnets, its capacity types from offerings. Such a key is
//! *open*: the known values are a lower bound and rules must not count on an upper bound.

use super::pod;
pub use super::requirements::LABEL_HOSTNAME;
use super::requirements::{LABEL_ZONE, Requirement, normalize_key};
use super::sim::Simulator;
use super::taints::{self, Effect};
use crate::index::{Index, selector_matches};
use crate::model::de::SpannedMap;
use crate::model::workload::PodSpec;
use crate::model::workload::{LabelSelector, PodAffinityTerm};
use crate::model::{Kind, Object};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// The values a topology key can take.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Domains {
    /// Values known from NodePool requirements, instance types and static nodes.
    pub values: BTreeSet<String>,
    /// More values may exist that karplint cannot see (zones from subnets, a hostname per
    /// node, a custom label a NodePool declares with `Exists`).
    pub open: bool,
}

impl Domains {
    /// The number of domains, when it is bounded by what karplint can see.
    pub fn count(&self) -> Option<usize> {
        (!self.open).then_some(self.values.len())
    }

    pub fn is_empty_for_sure(&self) -> bool {
        !self.open && self.values.is_empty()
    }

    fn merge(&mut self, other: Domains) {
        self.values.extend(other.values);
        self.open |= other.open;
    }

    /// What a NodePool offers, for a note: `[a b c]`, with the values karplint cannot see
    /// said so.
    pub fn render_offer(&self) -> String {
        match (self.open, self.values.is_empty()) {
            (false, _) => self.render(),
            (true, true) => "values karplint cannot see (its subnets, its offerings)".to_string(),
            (true, false) => format!("{} and values karplint cannot see", self.render()),
        }
    }

    /// `[a b c]`, as Karpenter prints value sets.
    pub fn render(&self) -> String {
        let v: Vec<&str> = self.values.iter().map(String::as_str).collect();
        format!("[{}]", v.join(" "))
    }
}

/// Keys whose values on a new node come from facts outside the YAML (subnets, offerings).
fn from_outside(key: &str) -> bool {
    matches!(
        key,
        LABEL_ZONE
            | "topology.k8s.aws/zone-id"
            | "topology.kubernetes.io/region"
            | "karpenter.sh/capacity-type"
    )
}

/// The values one NodePool offers for `key` (normalised, not the hostname), added to
/// `values` without copying those the pool's requirements hold; whether more may exist.
/// `offered` are the values its types' offerings have for the key, when karplint knows
/// them (the cluster's zones, the capacity types); for unions over many pools.
fn add_pool_domains<'p>(
    pool: &'p super::pool::Pool,
    key: &str,
    offered: Option<Vec<&str>>,
    values: &mut BTreeSet<Cow<'p, str>>,
) -> bool {
    let type_label = pool.types().next().is_some_and(|t| t.requirements.has(key));
    let req = pool.requirements.get(key);
    match (req, offered) {
        (Some(r), _) if !r.is_complement() => {
            values.extend(r.values().iter().map(|v| Cow::Borrowed(v.as_str())));
        }
        (_, Some(offered)) => {
            let allowed = offered.into_iter().filter(|v| req.is_none_or(|r| r.has(v)));
            values.extend(allowed.map(|v| Cow::Owned(v.to_string())));
        }
        _ if type_label => {
            for t in pool.types() {
                // An instance type's requirement is a finite set (or `DoesNotExist`): its
                // smallest member is what `Requirement::any` picks.
                let v = t.requirements.get(key).value().map(Cow::Borrowed);
                if let Some(v) = v
                    && req.is_none_or(|r| r.has(&v))
                {
                    values.insert(v);
                }
            }
        }
        // `Exists`/`NotIn` on a zone, or a custom key the pool declares open-ended: values
        // come from subnets, offerings or the pod itself.
        (Some(_), None) => return true,
        (None, None) if from_outside(key) => return true,
        (None, None) => {}
    }
    false
}

fn narrow(mut d: Domains, pod_req: Option<&Requirement>) -> Domains {
    let Some(r) = pod_req else { return d };
    d.values.retain(|v| r.has(v));
    if d.open && !r.is_complement() {
        // The pod pins the key: at most its own values, of which some may not exist.
        d.open = false;
        d.values.extend(r.values().iter().cloned());
    }
    d
}

/// Values of `key` on static nodes (Node objects in the tree or context).
pub fn node_domains(index: &Index, key: &str) -> Domains {
    let mut d = Domains::default();
    for n in index.of_kind(Kind::Node) {
        for (k, v) in n.labels().iter() {
            if normalize_key(k) == key {
                d.values.insert(v.to_string());
            }
        }
    }
    d
}

/// Whether Karpenter knows no domain at all for `key` (over every NodePool and static node,
/// karpenter-model §5), stopping at the first NodePool that offers a value or leaves the key open.
pub fn no_domains_for_sure(sim: &Simulator, index: &Index, key: &str) -> bool {
    let key = normalize_key(key);
    if !node_domains(index, key).values.is_empty() {
        return false;
    }
    if key == LABEL_HOSTNAME {
        return sim.pools.is_empty();
    }
    let mut values = BTreeSet::new();
    (sim.pools.iter().enumerate()).all(|(i, p)| {
        !add_pool_domains(p, key, sim.offered_values(i, key), &mut values) && values.is_empty()
    })
}

/// The union of the domains `pools` offer for `key`, unnarrowed, copying each value once.
fn union_of_pools(sim: &Simulator, key: &str, pools: &[usize]) -> Domains {
    let mut d = Domains::default();
    if key == LABEL_HOSTNAME {
        d.open = !pools.is_empty();
        return d;
    }
    sim.domain_memo
        .get_or_insert_with((key.to_string(), pools.to_vec()), || {
            let mut values = BTreeSet::new();
            for &i in pools {
                let offered = sim.offered_values(i, key);
                d.open |= add_pool_domains(&sim.pools[i], key, offered, &mut values);
            }
            d.values = values.into_iter().map(Cow::into_owned).collect();
            d
        })
}

/// The domains NodePool `pool` offers for `key`, its instance types' offerings included
/// (the cluster's zones, the capacity types).
pub fn offered_by(sim: &Simulator, key: &str, pool: usize) -> Domains {
    union_of_pools(sim, normalize_key(key), &[pool])
}

/// How a pod template relates to each NodePool, ignoring resources and limits.
#[derive(Debug, Clone)]
pub struct Reach {
    /// Pools whose requirements the pod is compatible with (some relaxation attempt).
    pub compatible: Vec<usize>,
    /// Of those, the pools whose taints the pod also tolerates.
    pub tolerated: Vec<usize>,
    /// The pod's strictest requirements (first attempt), for narrowing domains.
    pub strict: super::requirements::Requirements,
}

impl Reach {
    pub fn of(sim: &Simulator, obj: &Object, spec: &PodSpec) -> Option<Reach> {
        let attempts = pod::attempts(obj, spec).ok()?;
        let tolerations = pod::tolerations(spec, sim.admission);
        let memo_key = (
            attempts.iter().map(|a| a.requirements.clone()).collect(),
            tolerations.clone(),
        );
        let lists = sim.reach_memo.get_or_insert_with(memo_key, || {
            let mut compatible = Vec::new();
            let mut tolerated = Vec::new();
            for (i, p) in sim.pools.iter().enumerate() {
                let ok = attempts
                    .iter()
                    .any(|a| p.requirements.compatible_with_ok(&a.requirements, p.flavor));
                if !ok {
                    continue;
                }
                compatible.push(i);
                let tolerates = p.taints.iter().all(|(t, _)| {
                    t.effect == Effect::PreferNoSchedule || taints::is_tolerated(&tolerations, t)
                });
                if tolerates {
                    tolerated.push(i);
                }
            }
            // Kept for the run: without the growth slack (up to a NodePool count each).
            compatible.shrink_to_fit();
            tolerated.shrink_to_fit();
            std::sync::Arc::new((compatible, tolerated))
        });
        let (compatible, tolerated) = (lists.0.clone(), lists.1.clone());
        // The last attempt is the most relaxed: what the pod insists on. With several OR-ed
        // required terms no single one bounds the pod, so nothing narrows its domains.
        let or_terms = spec
            .affinity
            .node_affinity
            .required
            .as_ref()
            .is_some_and(|r| r.node_selector_terms.len() > 1);
        let strict = if or_terms {
            Default::default()
        } else {
            attempts.last()?.requirements.clone()
        };
        Some(Reach {
            compatible,
            tolerated,
            strict,
        })
    }

    /// The domains of `key` over some of the pools, narrowed by the pod's own selector
    /// unless `honor_affinity` is false (`nodeAffinityPolicy: Ignore`).
    pub fn domains(
        &self,
        sim: &Simulator,
        index: &Index,
        key: &str,
        pools: &[usize],
        honor_affinity: bool,
    ) -> Domains {
        let key = normalize_key(key);
        let pod_req = self.strict.get(key).filter(|_| honor_affinity);
        let mut d = narrow(node_domains(index, key), pod_req);
        // Static nodes only widen the set; they are never the pod's reason to wait.
        // Narrowing the union is narrowing each pool's domains and taking their union; the
        // hostname alone is never narrowed for a pool.
        let pools = union_of_pools(sim, key, pools);
        d.merge(if key == LABEL_HOSTNAME {
            pools
        } else {
            narrow(pools, pod_req)
        });
        d
    }
}

/// The labels of the pods a workload creates (a bare Pod's own labels).
pub fn pod_labels(obj: &Object) -> &SpannedMap {
    match (obj.kind, obj.workload()) {
        (Kind::Pod, _) | (_, None) => obj.labels(),
        (_, Some(w)) => &w.template.metadata.labels,
    }
}

/// Does `sel` select pods with these labels? A missing selector selects nothing.
pub fn selects(sel: Option<&LabelSelector>, labels: &SpannedMap) -> bool {
    sel.is_some_and(|s| selector_matches(s, |k| labels.get(k).map(|v| v.value.as_str())))
}

/// Which namespaces a pod (anti-)affinity term looks in (`Topology.buildNamespaceList`):
/// the pod's own when the term names none, else the listed ones and those its
/// `namespaceSelector` selects. `None` means any namespace: an empty selector (`{}`), or one
/// on labels other than `kubernetes.io/metadata.name`, which karplint cannot evaluate
/// without the cluster's Namespace labels. A selector on `kubernetes.io/metadata.name` alone
/// (`matchLabels` or `In`) selects those names: the API server gives every namespace that
/// label.
pub fn term_namespaces<'t>(term: &'t PodAffinityTerm, own: &'t str) -> Option<Vec<&'t str>> {
    let listed = term.namespaces.iter().map(|n| n.value.as_str());
    let Some(sel) = &term.namespace_selector else {
        if term.namespaces.is_empty() {
            return Some(vec![own]);
        }
        return Some(listed.collect());
    };
    let by_name = named_namespaces(sel)?;
    Some(listed.chain(by_name).collect())
}

/// The namespaces a selector picks by `kubernetes.io/metadata.name` alone, `None` when it
/// reads any other label or operator (or nothing: `{}` selects every namespace).
fn named_namespaces<'s>(sel: &'s LabelSelector) -> Option<Vec<&'s str>> {
    const NAME: &str = "kubernetes.io/metadata.name";
    let mut names: Option<BTreeSet<&'s str>> = None;
    let mut narrow = |values: BTreeSet<&'s str>| {
        names = Some(match names.take() {
            Some(n) => n.intersection(&values).copied().collect(),
            None => values,
        });
    };
    for (k, v) in sel.match_labels.iter() {
        if k != NAME {
            return None;
        }
        narrow(BTreeSet::from([v]));
    }
    for e in sel.match_expressions.iter() {
        if e.key.value.as_str() != NAME || e.operator.value.as_str() != "In" {
            return None;
        }
        narrow(e.values.iter().map(|v| v.value.as_str()).collect());
    }
    names.map(|n| n.into_iter().collect())
}
