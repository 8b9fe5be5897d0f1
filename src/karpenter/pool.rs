//! Simulator, NodePool side: a NodePool (any API generation) turned into what Karpenter
//! schedules against (karpenter-model §1–§2, §6): template requirements with
//! `karpenter.sh/nodepool` and template labels, taints, limits, and the instance types its
//! requirements allow with their allocatable under the node class's kubelet settings and AMI
//! family.

use super::allocatable::{self, AmiFamily, KubeletConfig};
use super::catalog::{Catalog, InstanceType};
use super::ephemeral::{self, EphemeralStorage};
use super::memo::Memo;
use super::overlay::PoolOverlay;
use super::requirements::{
    self, LabelFlavor, Operator, Requirement, Requirements, TypeRow, TypeRows,
};
use super::taints::Taint;
use crate::index::Index;
use crate::model::karpenter::{KarpenterApi, Kubelet, NodePool};
use crate::model::{Body, Kind, Object, Span};
use crate::quantity::{Quantity, ResourceList};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

/// Instance-type requirements depend only on the label flavour and on the AMI family's
/// Windows build, if any (which changes `kubernetes.io/os` and
/// `node.kubernetes.io/windows-build`): built once per combination and shared by every
/// NodePool.
#[derive(Default)]
pub struct TypeRequirementCache {
    cells: BTreeMap<(bool, Option<&'static str>), Arc<TypeTable>>,
    /// Allocatable per instance type, per distinct (kubelet, AMI family, ephemeral storage
    /// policy): under RAID0 the storage differs per type, so the key holds the policy, not
    /// a size.
    allocatable: HashMap<AllocatableKey, Arc<AllocatableTable>>,
    /// Per instance type, its extended resources as first computed: shared by every
    /// [`Allocatable`] that has the same ones (they rarely depend on kubelet settings).
    extended: Option<Arc<Vec<OnceLock<Arc<ResourceList>>>>>,
}

/// What an [`AllocatableTable`] is computed from; the overlay compared by address (pools
/// alike to the overlays share one, see [`super::overlay::apply`]).
type AllocatableKey = (KubeletConfig, AmiFamily, EphemeralStorage, usize);

/// The requirements of every catalog type, and every key they mention: a NodePool
/// requirement on any other key cannot rule a type out.
#[derive(Debug)]
pub struct TypeTable {
    requirements: TypeRows,
    /// The types a set of requirements (on type keys only) allows, and whether the node
    /// class's AMI family launches them: NodePools that differ only in name, labels, taints
    /// or limits filter the catalog once.
    allowed: Memo<(Requirements, bool), Arc<Vec<usize>>>,
    /// [`TypeTable::exclusion`] per set of requirements: the pods of many workloads (and
    /// the copies of one tree) ask it of the same NodePool requirements.
    exclusions: Memo<Requirements, Option<Exclusion>>,
}

impl TypeTable {
    /// Catalog indices of the types whose requirements intersect `reqs` and that a node
    /// class of AMI `family` can launch ([`launches`]).
    fn allowing(
        &self,
        reqs: &Requirements,
        catalog: &[InstanceType],
        family: AmiFamily,
    ) -> Arc<Vec<usize>> {
        // Only requirements on keys some type carries can conflict with a type's.
        let on_type_keys: Requirements = reqs
            .iter()
            .filter(|r| self.requirements.has_key(r.key()))
            .cloned()
            .collect();
        let al2023 = family == AmiFamily::AL2023;
        self.allowed
            .get_or_insert_with((on_type_keys.clone(), al2023), || {
                Arc::new(
                    (0..self.requirements.len())
                        .filter(|&i| launches(family, &catalog[i]))
                        .filter(|&i| self.requirements.row(i).intersects_ok(&on_type_keys))
                        .collect(),
                )
            })
    }
}

/// [`Pool::exclusion`] over the rows of one type table.
fn exclusion(rows: &TypeRows, requirements: &Requirements) -> Option<Exclusion> {
    // The keys of `requirements` are distinct, so the types that meet two of them
    // together are those that meet each ([`TypeRows::meeting`]): one column per
    // requirement answers every pair.
    let meeting: Vec<(&Requirement, Vec<bool>)> = (requirements.iter())
        .map(|r| (r, rows.meeting(r)))
        .collect();
    if let Some((r, _)) = meeting.iter().find(|(_, m)| !m.contains(&true)) {
        return Some(Exclusion::Alone((*r).clone()));
    }
    let together = |a: &[bool], b: &[bool]| a.iter().zip(b).any(|(x, y)| *x && *y);
    meeting.iter().enumerate().find_map(|(i, (a, met_a))| {
        (meeting[i + 1..].iter())
            .find(|(_, met_b)| !together(met_a, met_b))
            .map(|(b, _)| Exclusion::Pair((*a).clone(), (*b).clone()))
    })
}

/// Whether a node class of AMI `family` launches `it` (aws `compatibility`
/// `amiFamilyCompatibility`): AL2023 has no AMI for the first Graviton generation (`a1.*`),
/// whose offerings the provider marks unavailable.
pub fn launches(family: AmiFamily, it: &InstanceType) -> bool {
    !(family == AmiFamily::AL2023 && it.name.starts_with("a1."))
}

/// The allocatable of every catalog type under one (kubelet, AMI family, ephemeral storage),
/// each computed the first time something reads it: a NodePool restricted to a few
/// families never pays for the other types, and most lint runs stop at the first type
/// that fits.
#[derive(Debug)]
pub struct AllocatableTable {
    kubelet: KubeletConfig,
    family: AmiFamily,
    storage: EphemeralStorage,
    /// Boxed: a cell no pool reads costs 16 bytes, not the 80 of an [`Allocatable`], and a
    /// run with a node class per team has a table per node class.
    cells: Vec<OnceLock<Box<Allocatable>>>,
    /// Per type, [`AllocatableTable::core_capacity`]; allocated when a pool with limits
    /// first asks (most tables never do).
    capacities: OnceLock<Box<[CapacityCell]>>,
    extended: Arc<Vec<OnceLock<Arc<ResourceList>>>>,
    /// What NodeOverlays give the types of the pools that share this table.
    overlay: Option<Arc<PoolOverlay>>,
}

impl AllocatableTable {
    /// The allocatable of catalog type `i` (`it`).
    fn get(&self, i: usize, it: &InstanceType) -> &Allocatable {
        self.cells[i].get_or_init(|| {
            let mut full = allocatable::allocatable_with_ephemeral_volume(
                it,
                &self.kubelet,
                self.family,
                allocatable::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
                Some(self.storage.capacity(it)),
            );
            if let Some(added) = self.overlaid(i) {
                // `ApplyCapacityOverlay`; extended resources have no overhead.
                for (k, q) in added.iter() {
                    full.insert(k.to_string(), q);
                }
            }
            let core = CORE.map(|c| full.remove(c).unwrap_or(Quantity::ZERO));
            let first = self.extended[i].get_or_init(|| Arc::new(full.clone()));
            let extended = if **first == full {
                first.clone()
            } else {
                Arc::new(full)
            };
            Box::new(Allocatable { core, extended })
        })
    }

    /// The resources NodeOverlays add to catalog type `i`.
    fn overlaid(&self, i: usize) -> Option<&ResourceList> {
        self.overlay.as_ref()?.capacity.get(&i)
    }

    /// Karpenter's capacity of the four core resources of catalog type `i` (`it`), computed
    /// on first use: what NodePool `limits` are charged with, read for every type at every
    /// new NodeClaim of a batch (without the overhead [`AllocatableTable::get`] computes).
    fn core_capacity(&self, i: usize, it: &InstanceType) -> &[Quantity; 4] {
        let cells = self
            .capacities
            .get_or_init(|| self.cells.iter().map(|_| OnceLock::new()).collect());
        cells[i].get_or_init(|| {
            Box::new(CORE.map(|c| self.capacity_of(it, c).unwrap_or(Quantity::ZERO)))
        })
    }

    /// Karpenter's capacity of one resource of `it` (`computeCapacity`): what NodePool
    /// `limits` are charged with.
    fn capacity_of(&self, it: &InstanceType, resource: &str) -> Option<Quantity> {
        match resource {
            "memory" => Some(allocatable::memory_capacity(
                it,
                allocatable::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT,
            )),
            "pods" => Some(Quantity::from_units(
                i64::try_from(allocatable::pods(it, &self.kubelet, self.family))
                    .unwrap_or(i64::MAX),
            )),
            "ephemeral-storage" => Some(self.storage.capacity(it)),
            _ => it.capacity.get(resource),
        }
    }

    /// The capacity of extended `resource` on catalog type `i` (`it`), NodeOverlays' first.
    fn extended_capacity(&self, i: usize, it: &InstanceType, resource: &str) -> Option<Quantity> {
        (self.overlaid(i).and_then(|c| c.get(resource))).or_else(|| it.capacity.get(resource))
    }

    /// Karpenter's capacity and overhead of catalog type `it` under this table's settings
    /// (their difference is [`AllocatableTable::get`]).
    fn shape(&self, i: usize, it: &InstanceType) -> (ResourceList, allocatable::Overhead) {
        let percent = allocatable::DEFAULT_VM_MEMORY_OVERHEAD_PERCENT;
        let mut capacity = allocatable::capacity(
            it,
            &self.kubelet,
            self.family,
            percent,
            Some(self.storage.capacity(it)),
        );
        for (k, q) in self.overlaid(i).into_iter().flat_map(|c| c.iter()) {
            capacity.insert(k.to_string(), q);
        }
        (
            capacity,
            allocatable::overhead(
                it,
                &self.kubelet,
                self.family,
                percent,
                Some(self.storage.capacity(it)),
            ),
        )
    }
}

/// The resources a node has for pods, compact: the four core resources inline and the
/// extended ones shared. A run with one node class per team would otherwise hold a
/// string-keyed map per instance type per node class.
#[derive(Debug, Clone)]
pub struct Allocatable {
    core: [Quantity; 4],
    extended: Arc<ResourceList>,
}

const CORE: [&str; 4] = ["cpu", "memory", "pods", "ephemeral-storage"];

/// What pods and DaemonSets ask of a node, summed once and laid out as [`Allocatable`] is,
/// to be compared with many instance types ([`Allocatable::holds`]).
#[derive(Debug, Clone)]
pub struct Demand {
    core: [Quantity; 4],
    extended: Vec<(String, Quantity)>,
}

impl Demand {
    /// `requests` plus `overhead`, each resource added with saturation.
    pub fn of(requests: &ResourceList, overhead: &ResourceList) -> Demand {
        let mut demand = Demand {
            core: [Quantity::ZERO; 4],
            extended: Vec::new(),
        };
        for (k, q) in requests.iter().chain(overhead.iter()) {
            match CORE.iter().position(|c| *c == k) {
                Some(i) => demand.core[i] = demand.core[i].saturating_add(q),
                None => match demand.extended.iter_mut().find(|(e, _)| e == k) {
                    Some((_, sum)) => *sum = sum.saturating_add(q),
                    None => demand.extended.push((k.to_string(), q)),
                },
            }
        }
        demand
    }
}

/// One type's [`AllocatableTable::core_capacity`], boxed: an unread cell costs 8 bytes.
type CapacityCell = OnceLock<Box<[Quantity; 4]>>;

impl Allocatable {
    pub fn get_or_zero(&self, resource: &str) -> Quantity {
        match CORE.iter().position(|c| *c == resource) {
            Some(i) => self.core[i],
            None => self.extended.get_or_zero(resource),
        }
    }

    /// Some resource is negative (the kubelet's reservations exceed the type): nothing fits
    /// on the type, not even a pod that requests nothing (`resources.Fits`).
    pub fn any_negative(&self) -> bool {
        self.core.iter().any(|q| q.as_millis() < 0)
    }

    /// Whether `demand` fits, as [`Demand::of`] sums it: no resource of the type is
    /// negative ([`Allocatable::any_negative`]), and each resource it asks for is zero or at
    /// most what the type has (`resources.Fits`).
    #[inline]
    pub fn holds(&self, demand: &Demand) -> bool {
        (self.core.iter().zip(&demand.core)).all(|(has, asked)| {
            let (has, asked) = (has.as_millis(), asked.as_millis());
            has >= 0 && (asked == 0 || asked <= has)
        }) && (demand.extended.iter())
            .all(|(k, asked)| asked.is_zero() || *asked <= self.extended.get_or_zero(k))
    }

    /// What is left of cpu, memory and pods once `demand` is placed, in milli-units
    /// (negative when it does not fit).
    #[inline]
    pub fn left(&self, demand: &Demand) -> [i128; 3] {
        let left = |i: usize| self.core[i].as_millis() - demand.core[i].as_millis();
        [left(0), left(1), left(2)]
    }

    /// [`Allocatable::left`] when `demand` fits ([`Allocatable::holds`]).
    #[inline]
    pub fn left_after(&self, demand: &Demand) -> Option<[i128; 3]> {
        self.holds(demand).then(|| self.left(demand))
    }

    /// The full list, for messages.
    pub fn to_list(&self) -> ResourceList {
        let mut list = (*self.extended).clone();
        for (k, q) in CORE.iter().zip(self.core) {
            list.insert(*k, q);
        }
        list
    }
}

impl TypeRequirementCache {
    fn get(&mut self, catalog: &Catalog, flavor: LabelFlavor, family: AmiFamily) -> Arc<TypeTable> {
        let key = (flavor == LabelFlavor::EksAutoMode, family.windows_build());
        self.cells
            .entry(key)
            .or_insert_with(|| {
                let types = catalog.as_slice();
                let requirements = TypeRows::from_labels(
                    types
                        .iter()
                        .map(|it| type_labels(it, family, flavor))
                        .collect(),
                );
                Arc::new(TypeTable {
                    requirements,
                    allowed: Memo::default(),
                    exclusions: Memo::default(),
                })
            })
            .clone()
    }

    fn allocatable(
        &mut self,
        catalog: &[InstanceType],
        kubelet: &KubeletConfig,
        family: AmiFamily,
        storage: EphemeralStorage,
        overlay: Option<Arc<PoolOverlay>>,
    ) -> Arc<AllocatableTable> {
        let key = (
            kubelet.clone(),
            family,
            storage,
            overlay.as_ref().map_or(0, |o| Arc::as_ptr(o) as usize),
        );
        if let Some(hit) = self.allocatable.get(&key) {
            return hit.clone();
        }
        let extended = self
            .extended
            .get_or_insert_with(|| Arc::new(catalog.iter().map(|_| OnceLock::new()).collect()))
            .clone();
        let table = Arc::new(AllocatableTable {
            kubelet: kubelet.clone(),
            family,
            storage,
            cells: catalog.iter().map(|_| OnceLock::new()).collect(),
            capacities: OnceLock::new(),
            extended,
            overlay,
        });
        self.allocatable.insert(key, table.clone());
        table
    }
}

/// An instance type a pool may launch, with the requirements it satisfies and what a pod
/// can use of it: a view into the pool's shared tables (see [`Pool::types`]).
#[derive(Debug, Clone, Copy)]
pub struct PoolType<'p, 'c> {
    pub it: &'c InstanceType,
    pub requirements: TypeRow<'p>,
    /// Index into the catalog and the pool's tables.
    index: usize,
    table: &'p AllocatableTable,
}

impl<'p> PoolType<'p, '_> {
    /// The type's place in the catalog, for [`Pool::type_at`].
    pub fn catalog_index(&self) -> usize {
        self.index
    }

    /// What a pod can use of the type, computed on first use.
    #[inline]
    pub fn allocatable(&self) -> &'p Allocatable {
        self.table.get(self.index, self.it)
    }

    /// The type's capacity of `resource` as Karpenter computes it (memory after the VM
    /// overhead, pods under the kubelet settings, the ephemeral volume), `None` when the
    /// type has none.
    pub fn capacity_of(&self, resource: &str) -> Option<Quantity> {
        match CORE.iter().position(|c| *c == resource) {
            Some(i) => Some(self.table.core_capacity(self.index, self.it)[i]),
            None => self.table.extended_capacity(self.index, self.it, resource),
        }
    }
}

/// See [`Pool::launchable`].
pub struct LaunchableType<'c> {
    pub it: &'c InstanceType,
    pub labels: Vec<(&'c str, Option<&'c str>)>,
    pub capacity: ResourceList,
    pub overhead: allocatable::Overhead,
    /// Whether the node class's AMI family launches it ([`launches`]): its offerings are
    /// unavailable when not.
    pub available: bool,
}

#[derive(Debug)]
pub struct Pool<'a, 'c> {
    pub obj: &'a Object,
    pub np: &'a NodePool,
    pub name: String,
    pub weight: i64,
    pub flavor: LabelFlavor,
    pub requirements: Requirements,
    /// Normalised key → span of the NodePool requirement or label that defines it.
    pub requirement_spans: BTreeMap<String, Span>,
    pub taints: Vec<(Taint, Span)>,
    pub limits: ResourceList,
    pub limit_spans: BTreeMap<String, Span>,
    /// Catalog indices of the instance types the NodePool requirements allow.
    type_ids: Arc<Vec<usize>>,
    catalog: &'c [InstanceType],
    /// Requirements of every catalog type, shared by pools of the same label flavour.
    type_requirements: Arc<TypeTable>,
    /// Allocatable of every catalog type, shared by pools of the same node configuration.
    allocatable: Arc<AllocatableTable>,
    /// Whether the node class (kubelet, AMI family, block devices) was found; when not,
    /// defaults are assumed and ephemeral-storage is not checked.
    pub node_class_known: bool,
    pub family: AmiFamily,
    /// The node class selects capacity reservations: `reserved` offerings may exist.
    pub reservations: bool,
    /// Per type of [`Pool::types`], whether its capacity is within the pool's `limits`.
    within_limits: Box<[bool]>,
}

/// See [`Pool::exclusion`].
#[derive(Debug, Clone, PartialEq)]
pub enum Exclusion {
    /// No instance type of the catalog meets this requirement.
    Alone(Requirement),
    /// Each is met by some instance type, never both by one.
    Pair(Requirement, Requirement),
}

/// See [`Pool::template_key`]. The shared tables are compared by address: pools that share
/// one were built from equal settings.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct TemplateKey {
    flavor: LabelFlavor,
    requirements: Requirements,
    taints: Vec<Taint>,
    limits: ResourceList,
    node_class_known: bool,
    type_ids: usize,
    type_requirements: usize,
    allocatable: usize,
}

/// The template label that names a pool of API generation `api`.
fn nodepool_label(api: KarpenterApi) -> &'static str {
    if api == KarpenterApi::V1alpha5 {
        "karpenter.sh/provisioner-name"
    } else {
        requirements::LABEL_NODEPOOL
    }
}

/// The template requirements of a v1alpha5 Provisioner get the webhook's defaults
/// (karpenter-model §1.3).
fn v1alpha5_defaults(reqs: &mut Requirements) {
    let set = |reqs: &mut Requirements, key: &str, values: &[&str]| {
        if !reqs.has(key) {
            reqs.add(Requirement::in_values(key, values.iter().copied()));
        }
    };
    set(reqs, "kubernetes.io/os", &["linux"]);
    set(reqs, "kubernetes.io/arch", &["amd64"]);
    set(reqs, requirements::LABEL_CAPACITY_TYPE, &["on-demand"]);
    let shaped = [
        "node.kubernetes.io/instance-type",
        "karpenter.k8s.aws/instance-family",
        "karpenter.k8s.aws/instance-category",
        "karpenter.k8s.aws/instance-generation",
    ]
    .iter()
    .any(|k| reqs.has(k));
    if !shaped {
        reqs.add(Requirement::in_values(
            "karpenter.k8s.aws/instance-category",
            ["c", "m", "r"],
        ));
        if let Ok(r) =
            Requirement::new("karpenter.k8s.aws/instance-generation", Operator::Gt, ["2"])
        {
            reqs.add(r);
        }
    }
}

fn kubelet_config(k: Option<&Kubelet>) -> KubeletConfig {
    let mut out = KubeletConfig::default();
    let Some(k) = k else { return out };
    out.max_pods = k
        .max_pods
        .as_ref()
        .and_then(|v| u32::try_from(v.value).ok());
    out.pods_per_core = k
        .pods_per_core
        .as_ref()
        .and_then(|v| u32::try_from(v.value).ok());
    let list = |m: &crate::model::de::SpannedMap| -> ResourceList {
        m.iter()
            .filter_map(|(k, v)| Some((k.to_string(), Quantity::parse_non_negative(v).ok()?)))
            .collect()
    };
    out.kube_reserved = list(&k.kube_reserved);
    out.system_reserved = list(&k.system_reserved);
    out.eviction_hard = k
        .eviction_hard
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    out
}

/// The labels of type `it` under AMI `family` (*aws* `computeRequirements`), as (key,
/// value) pairs: its AWS instance labels as `In [value]` and `DoesNotExist` (`None`) for
/// those it lacks (so `Exists` on a GPU label excludes CPU-only types), instance type, arch,
/// the family's OS for the arch, and `node.kubernetes.io/windows-build` (the Windows
/// family's build, else `DoesNotExist`). Zone and capacity type depend on offerings and stay
/// unconstrained here, as does tenancy, which is `In [default dedicated]` on every type
/// ([`requirements::TENANCIES`]): a pod or NodePool may ask for either.
fn type_labels(
    it: &InstanceType,
    family: AmiFamily,
    flavor: LabelFlavor,
) -> Vec<(&str, Option<&str>)> {
    // (`karpenter.k8s.aws/instance-X`, `eks.amazonaws.com/instance-X`) per suffix, spelled
    // once per run rather than once per type.
    static KEYS: OnceLock<Vec<(String, String)>> = OnceLock::new();
    let keys = KEYS.get_or_init(|| {
        requirements::AWS_INSTANCE_LABEL_SUFFIXES
            .iter()
            .map(|s| {
                (
                    format!("karpenter.k8s.aws/instance-{s}"),
                    format!("eks.amazonaws.com/instance-{s}"),
                )
            })
            .collect()
    });
    let mut out = Vec::with_capacity(2 * keys.len() + 3);
    for (key, eks_key) in keys {
        if key.ends_with("-tenancy") {
            continue;
        }
        let value = it.label(key);
        out.push((key.as_str(), value));
        if flavor == LabelFlavor::EksAutoMode {
            out.push((eks_key.as_str(), value));
        }
    }
    out.push(("node.kubernetes.io/instance-type", Some(it.name.as_str())));
    out.push(("kubernetes.io/arch", Some(it.arch.as_str())));
    out.push(("kubernetes.io/os", family.os_label(&it.arch)));
    out.push(("node.kubernetes.io/windows-build", family.windows_build()));
    out
}

/// The node class a NodePool references, if it is in the tree or context.
fn node_class<'a>(
    index: &Index<'a>,
    pool: &Object,
    np: &NodePool,
) -> Option<&'a crate::model::karpenter::NodeClass> {
    let name = np.node_class_ref.as_ref()?.name.as_ref()?.value.as_str();
    // Several node classes may share a name when one run holds several clusters' files:
    // take the one in the NodePool's own file, else the nearest file (sources are sorted by
    // path, so neighbouring ids are neighbouring files).
    [
        Kind::EC2NodeClass,
        Kind::AWSNodeTemplate,
        Kind::EksNodeClass,
    ]
    .into_iter()
    .flat_map(|k| index.of_kind(k))
    .filter(|o| o.name() == name)
    .min_by_key(|o| {
        (
            o.source != pool.source,
            o.source.abs_diff(pool.source),
            o.id,
        )
    })
    .and_then(|o| match &o.body {
        Body::NodeClass(nc) => Some(&**nc),
        _ => None,
    })
}

impl<'a, 'c> Pool<'a, 'c> {
    pub fn new(
        obj: &'a Object,
        np: &'a NodePool,
        index: &Index<'a>,
        catalog: &'c Catalog,
        cache: &std::sync::Mutex<TypeRequirementCache>,
    ) -> Self {
        let name = obj.name().to_string();
        let flavor = if np.is_eks_auto_mode() {
            LabelFlavor::EksAutoMode
        } else {
            LabelFlavor::KarpenterAws
        };
        let (reqs, spans) = Self::template_requirements(obj, np, &name);
        let taints = np
            .taints
            .iter()
            .filter_map(|t| Some((super::taints::from_model(t)?, obj.span(&t.key))))
            .collect();
        let (limits, limit_spans) = Self::limits(obj, np);

        let nc = node_class(index, obj, np);
        let kubelet = kubelet_config(np.kubelet.as_ref().or(nc.and_then(|c| c.kubelet.as_ref())));
        let family = Self::ami_family(nc, flavor);
        let storage = Self::ephemeral_storage(nc, family);

        let (type_reqs, allocs) = {
            // A poisoned lock only means another pool's set-up panicked; the tables are
            // still whole (entries are inserted complete).
            let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
            (
                c.get(catalog, flavor, family),
                c.allocatable(catalog.as_slice(), &kubelet, family, storage, None),
            )
        };
        let type_ids = type_reqs.allowing(&reqs, catalog.as_slice(), family);
        let mut pool = Pool {
            obj,
            np,
            name,
            weight: np.weight_value(),
            flavor,
            requirements: reqs,
            requirement_spans: spans,
            taints,
            limits,
            limit_spans,
            type_ids,
            catalog: catalog.as_slice(),
            type_requirements: type_reqs,
            allocatable: allocs,
            node_class_known: nc.is_some(),
            reservations: nc.is_some_and(|c| c.capacity_reservation_selector_terms.is_some()),
            family,
            within_limits: Box::new([]),
        };
        pool.within_limits = pool.within(&pool.limits);
        pool
    }

    /// Per type of [`Pool::types`], whether its capacity is within `remaining` for every
    /// limited resource but `nodes`: the types Karpenter keeps for a new NodeClaim
    /// (`filterByRemainingResources`).
    pub fn within(&self, remaining: &ResourceList) -> Box<[bool]> {
        let limited: Vec<(&str, Quantity)> =
            (remaining.iter()).filter(|(k, _)| *k != "nodes").collect();
        self.types()
            .map(|t| (limited.iter()).all(|(k, lim)| t.capacity_of(k).is_none_or(|c| c <= *lim)))
            .collect()
    }

    /// The pool with what NodeOverlays give its types (`None`: nothing), its allocatable
    /// taken from `cache`.
    pub fn overlaid(
        &mut self,
        overlay: Option<Arc<PoolOverlay>>,
        cache: &std::sync::Mutex<TypeRequirementCache>,
    ) {
        if self.allocatable.overlay == overlay {
            return;
        }
        let t = &self.allocatable;
        let (kubelet, family, storage) = (t.kubelet.clone(), t.family, t.storage);
        let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
        self.allocatable = c.allocatable(self.catalog, &kubelet, family, storage, overlay);
        drop(c);
        self.within_limits = self.within(&self.limits);
    }

    /// What NodeOverlays give the pool's types.
    pub fn overlay(&self) -> Option<&PoolOverlay> {
        self.allocatable.overlay.as_deref()
    }

    /// The address of the pool's table of type requirements: pools with equal ones share it.
    pub fn type_table_id(&self) -> usize {
        Arc::as_ptr(&self.type_requirements) as usize
    }

    /// Whether some usable type (one with no negative allocatable) is within `mask`
    /// ([`Pool::within`]).
    pub fn some_usable_type(&self, mask: &[bool]) -> bool {
        (self.types().zip(mask)).any(|(t, &within)| within && !t.allocatable().any_negative())
    }

    /// [`Pool::within`] the pool's own limits, computed once.
    pub fn within_limits(&self) -> &[bool] {
        &self.within_limits
    }

    /// The node template's requirements, each key with the span that defines it: template
    /// labels first, then `requirements` (a `${…}` placeholder value becomes `Exists`), the
    /// v1alpha5 webhook defaults, and `karpenter.sh/nodepool` (or `provisioner-name`).
    fn template_requirements(
        obj: &Object,
        np: &NodePool,
        name: &str,
    ) -> (Requirements, BTreeMap<String, Span>) {
        let mut reqs = Requirements::new();
        let mut spans = BTreeMap::new();
        for (k, v) in &np.labels.0 {
            let req = if v.value.as_str().contains("${") {
                Requirement::exists(&k.value)
            } else {
                Requirement::in_values(&k.value, [v.value.as_str()])
            };
            spans.insert(req.key().to_string(), obj.span(k));
            reqs.add(req);
        }
        for r in &np.requirements {
            if let Some(req) = Self::template_requirement(np.api, r) {
                spans
                    .entry(req.key().to_string())
                    .or_insert(obj.span(&r.key));
                reqs.add(req);
            }
        }
        if np.api == KarpenterApi::V1alpha5 {
            v1alpha5_defaults(&mut reqs);
        }
        reqs.add(Requirement::in_values(nodepool_label(np.api), [name]));
        (reqs, spans)
    }

    /// One `requirements[]` entry; a `${…}` placeholder among the values makes it `Exists`.
    /// `None` when the operator or values are invalid.
    /// A value Karpenter's NodePool validation rejects (a `parse-error`) is read as absent:
    /// the requirement, or only its `minValues`.
    fn template_requirement(
        api: KarpenterApi,
        r: &crate::model::workload::NodeSelectorRequirement,
    ) -> Option<Requirement> {
        use crate::model::rejected::{At, Operators, requirement_rejection};
        let rejected = match api {
            KarpenterApi::V1 => requirement_rejection(r, Operators::NodePool).map(|r| r.at),
            _ => None,
        };
        if matches!(rejected, Some(At::Operator | At::Value(_))) {
            return None;
        }
        let values: Vec<&str> = r.values.iter().map(|v| v.value.as_str()).collect();
        if values.iter().any(|v| v.contains("${")) {
            Some(Requirement::exists(&r.key.value))
        } else {
            let op = r.operator.value.parse::<Operator>().ok()?;
            let min_values = (r.min_values.as_ref())
                .filter(|_| rejected != Some(At::MinValues))
                .and_then(|m| u32::try_from(m.value).ok());
            Requirement::new(&r.key.value, op, values)
                .ok()
                .map(|req| req.with_min_values(min_values))
        }
    }

    /// `limits`, those that parse as quantities, with the span of each key.
    fn limits(obj: &Object, np: &NodePool) -> (ResourceList, BTreeMap<String, Span>) {
        let mut limits = ResourceList::new();
        let mut limit_spans = BTreeMap::new();
        for (k, v) in &np.limits.0 {
            if let Ok(q) = Quantity::parse(v.value.as_str()) {
                limits.insert(k.value.clone(), q);
                limit_spans.insert(k.value.to_string(), obj.span(k));
            }
        }
        (limits, limit_spans)
    }

    /// The node class's AMI family (`amiFamily`, else the first `amiSelectorTerms` alias);
    /// without one, Bottlerocket on EKS Auto Mode, else the default.
    fn ami_family(
        nc: Option<&crate::model::karpenter::NodeClass>,
        flavor: LabelFlavor,
    ) -> AmiFamily {
        nc.and_then(|c| {
            c.ami_family
                .as_ref()
                .and_then(|f| AmiFamily::parse(&f.value).ok())
                .or_else(|| {
                    c.ami_selector_terms.iter().find_map(|t| {
                        t.alias
                            .as_ref()
                            .and_then(|a| AmiFamily::from_alias(&a.value).ok())
                    })
                })
        })
        // EKS Auto Mode nodes run Bottlerocket.
        .unwrap_or(if flavor == LabelFlavor::EksAutoMode {
            AmiFamily::Bottlerocket
        } else {
            AmiFamily::default()
        })
    }

    /// What backs ephemeral-storage on the node class's nodes (see [`ephemeral`]): its
    /// `blockDeviceMappings` and `instanceStorePolicy` under `family`. A volume size that is
    /// not a valid quantity counts as unset (the CRD would have rejected it).
    fn ephemeral_storage(
        nc: Option<&crate::model::karpenter::NodeClass>,
        family: AmiFamily,
    ) -> EphemeralStorage {
        let Some(c) = nc else {
            return EphemeralStorage::of(family, &[], false);
        };
        let mappings: Vec<ephemeral::BlockDeviceMapping> = c
            .block_device_mappings
            .iter()
            .map(|b| ephemeral::BlockDeviceMapping {
                device_name: b.device_name.as_ref().map(|d| d.value.to_string()),
                root_volume: b.root_volume.as_ref().is_some_and(|r| r.value),
                volume_size: b
                    .ebs
                    .as_ref()
                    .and_then(|e| e.volume_size.as_ref())
                    .and_then(|s| Quantity::parse_non_negative(s.value.as_str()).ok()),
            })
            .collect();
        let raid0 = c
            .instance_store_policy
            .as_ref()
            .is_some_and(|p| p.value == "RAID0");
        EphemeralStorage::of(family, &mappings, raid0)
    }

    /// The catalog its types are indices into.
    pub fn catalog(&self) -> &'c [InstanceType] {
        self.catalog
    }

    /// Catalog type `i` as this pool sees it (its requirements and allocatable).
    #[inline]
    pub fn type_at(&self, i: usize) -> PoolType<'_, 'c> {
        PoolType {
            it: &self.catalog[i],
            requirements: self.type_requirements.requirements.row(i),
            index: i,
            table: &self.allocatable,
        }
    }

    /// What leaves no instance type for `requirements` (the pool's with a pod's added), in
    /// the terms a user fixes: a requirement that no type of the catalog meets on its own
    /// (`instance-family In [c6x m7z]`), else the first two that no type meets together.
    /// `None` when only three or more exclude each other. A type meets requirements as
    /// the instance-type stage judges it (`Requirements.Intersects` per key), so one
    /// requirement that fails alone or a pair that fails together is the cause.
    pub fn exclusion(&self, requirements: &Requirements) -> Option<Exclusion> {
        let table = &self.type_requirements;
        (table.exclusions).get_or_insert_cloned(requirements, || {
            exclusion(&table.requirements, requirements)
        })
    }

    /// Instance types the NodePool requirements allow on which a pod can fit, in catalog
    /// order: the NodeClaim template's options (`NewScheduler` keeps the types that fit a
    /// pod requesting nothing).
    pub fn usable_types(&self) -> impl Iterator<Item = PoolType<'_, 'c>> + Clone + '_ {
        self.types().filter(|t| !t.allocatable().any_negative())
    }

    /// Instance types the NodePool requirements allow, in catalog order.
    pub fn types(&self) -> impl ExactSizeIterator<Item = PoolType<'_, 'c>> + Clone + '_ {
        self.type_ids.iter().map(|&i| PoolType {
            it: &self.catalog[i],
            requirements: self.type_requirements.requirements.row(i),
            index: i,
            table: &self.allocatable,
        })
    }

    /// Whether `other` reads its instance types' labels from the same table: both then
    /// give every type the same labels.
    pub fn shares_type_labels(&self, other: &Pool) -> bool {
        Arc::ptr_eq(&self.type_requirements, &other.type_requirements)
    }

    /// Every type the pool's node class can launch, before the NodePool's requirements
    /// filter them (what `buildDomainGroups` reads), in catalog order.
    pub fn all_types(&self) -> impl Iterator<Item = PoolType<'_, 'c>> + '_ {
        (0..self.catalog.len()).map(|i| self.type_at(i))
    }

    /// Every type the pool's node class can launch, before the NodePool's requirements
    /// filter them, as Karpenter's cloud provider hands them to the scheduler: the labels as
    /// requirements (`None` = `DoesNotExist`), the capacity and the overhead.
    pub fn launchable(&self) -> impl Iterator<Item = LaunchableType<'c>> + '_ {
        self.catalog.iter().enumerate().map(|(i, it)| {
            let (capacity, overhead) = self.allocatable.shape(i, it);
            LaunchableType {
                it,
                labels: type_labels(it, self.family, self.flavor),
                capacity,
                overhead,
                available: launches(self.family, it),
            }
        })
    }

    /// Everything the simulator's stages read of the pool but its name and spans: pools with
    /// equal keys (one NodePool copied under several names, or into several files) judge
    /// every pod alike, so long as the pod does not select on [`Pool::nodepool_label`].
    pub(super) fn template_key(&self) -> TemplateKey {
        let mut requirements = self.requirements.clone();
        // The one requirement that names the pool becomes a bare `Exists` on the same key
        // (unless a template label narrowed it to something else).
        let label = self.nodepool_label();
        if self.requirements.get(label) == Some(&Requirement::in_values(label, [&*self.name])) {
            requirements.replace(Requirement::exists(label));
        }
        TemplateKey {
            flavor: self.flavor,
            requirements,
            taints: self.taints.iter().map(|(t, _)| t.clone()).collect(),
            limits: self.limits.clone(),
            node_class_known: self.node_class_known,
            type_ids: Arc::as_ptr(&self.type_ids) as usize,
            type_requirements: Arc::as_ptr(&self.type_requirements) as usize,
            allocatable: Arc::as_ptr(&self.allocatable) as usize,
        }
    }

    /// The template label that names the pool: `karpenter.sh/nodepool`, or
    /// `karpenter.sh/provisioner-name` on a v1alpha5 Provisioner.
    pub fn nodepool_label(&self) -> &'static str {
        nodepool_label(self.np.api)
    }

    /// The NodePool requirement or template label that defines `key`, else the pool's name.
    pub fn requirement_span(&self, key: &str) -> Span {
        self.requirement_spans
            .get(key)
            .copied()
            .unwrap_or_else(|| self.name_span())
    }

    /// The span that best stands for this pool in a related note.
    pub fn name_span(&self) -> Span {
        self.obj.name_span()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const RESOURCES: [&str; 5] = [
        "cpu",
        "memory",
        "pods",
        "ephemeral-storage",
        "nvidia.com/gpu",
    ];

    fn list(millis: &[Option<i64>]) -> ResourceList {
        let mut list = ResourceList::new();
        for (name, m) in RESOURCES.iter().zip(millis) {
            if let Some(m) = m {
                list.insert(*name, Quantity::from_millis(i128::from(*m)));
            }
        }
        list
    }

    fn quantities() -> impl Strategy<Value = Vec<Option<i64>>> {
        proptest::collection::vec(proptest::option::of(-2i64..6), RESOURCES.len())
    }

    proptest! {
        /// A [`Demand`] summed once answers as `resources.Fits` over the two lists
        /// ([`super::super::sim::fits_with`]), and leaves what subtracting them leaves.
        #[test]
        fn demand_fits_as_the_lists_do(req in quantities(), over in quantities(), has in quantities()) {
            let (requests, overhead, mut full) = (list(&req), list(&over), list(&has));
            let core = CORE.map(|c| full.remove(c).unwrap_or(Quantity::ZERO));
            let alloc = Allocatable { core, extended: Arc::new(full) };
            let demand = Demand::of(&requests, &overhead);
            prop_assert_eq!(alloc.holds(&demand), super::super::sim::fits_with(&requests, &overhead, &alloc));
            for (i, r) in ["cpu", "memory", "pods"].iter().enumerate() {
                let used = requests.get_or_zero(r).saturating_add(overhead.get_or_zero(r));
                prop_assert_eq!(alloc.left(&demand)[i], alloc.get_or_zero(r).as_millis() - used.as_millis());
            }
        }
    }

    /// Every built-in type's labels land in its row, for both label flavours and both OS
    /// labels (the rows' semantics against `Requirements` are a proptest in
    /// `requirements::tests`).
    #[test]
    fn type_rows_hold_the_type_labels() {
        let catalog = Catalog::builtin();
        let types = catalog.as_slice();
        for flavor in [LabelFlavor::KarpenterAws, LabelFlavor::EksAutoMode] {
            for family in [AmiFamily::default(), AmiFamily::Windows2022] {
                let labels = |i: usize| type_labels(&types[i], family, flavor);
                let rows = TypeRows::from_labels((0..types.len()).map(labels).collect());
                assert_eq!(rows.len(), types.len());
                for (i, it) in types.iter().enumerate() {
                    let row = rows.row(i);
                    let labels = labels(i);
                    let keys: std::collections::BTreeSet<&str> =
                        labels.iter().map(|(k, _)| *k).collect();
                    assert_eq!(keys.len(), labels.len(), "{}: keys are distinct", it.name);
                    for (k, v) in labels {
                        assert!(row.has(k), "{} {k}", it.name);
                        assert_eq!(row.get(k).value(), v, "{} {k}", it.name);
                    }
                }
            }
        }
    }
}
