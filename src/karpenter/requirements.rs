//! Karpenter's label-requirement algebra, the core of the simulator stage.
//!
//! Karpenter decides whether a pod fits a NodePool by turning the NodePool template and the pod
//! into sets of allowed values per label key and intersecting them (core
//! `pkg/scheduling/requirement.go` and `requirements.go`). This module reproduces that algebra
//! exactly — including its quirks, such as two `NotIn`/`DoesNotExist` requirements never
//! conflicting and bounds silently rejecting non-integer values — so that the messages karplint
//! prints are the ones Karpenter would print. It also holds the label facts the algebra needs:
//! which keys are well-known, which aliases are normalized, and which keys a pod may not use.

use super::version::KarpenterVersion;
use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

// ---------------------------------------------------------------------------------------------
// Label facts
// ---------------------------------------------------------------------------------------------

/// The label core Karpenter puts on every node it launches, naming the NodePool.
pub const LABEL_NODEPOOL: &str = "karpenter.sh/nodepool";
/// Karpenter's capacity-type label (`on-demand`, `spot`, `reserved`).
pub const LABEL_CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";
/// The node's hostname label; restricted for pods and hidden from rendered requirement lists.
pub const LABEL_HOSTNAME: &str = "kubernetes.io/hostname";
/// The stable zone label every zonal alias normalizes to.
pub const LABEL_ZONE: &str = "topology.kubernetes.io/zone";

/// The `instance-*` suffixes the AWS provider registers as well-known at HEAD, shared by
/// `karpenter.k8s.aws/instance-<suffix>` and EKS Auto Mode's `eks.amazonaws.com/instance-<suffix>`.
pub const AWS_INSTANCE_LABEL_SUFFIXES: &[&str] = &[
    "hypervisor",
    "encryption-in-transit-supported",
    "category",
    "capability-flex",
    "family",
    "generation",
    "size",
    "local-nvme",
    "cpu",
    "cpu-manufacturer",
    "cpu-sustained-clock-speed-mhz",
    "memory",
    "ebs-bandwidth",
    "network-bandwidth",
    "gpu-name",
    "gpu-manufacturer",
    "gpu-count",
    "gpu-memory",
    "accelerator-name",
    "accelerator-manufacturer",
    "accelerator-count",
    "tenancy",
];

/// The values of `karpenter.k8s.aws/instance-tenancy` every instance type has (aws
/// `computeRequirements`: `In [default dedicated]`).
pub const TENANCIES: [&str; 2] = ["default", "dedicated"];

/// Well-known labels of Karpenter on AWS at HEAD: core's list plus what the AWS provider's
/// `pkg/apis/v1/labels.go` registers.
pub const WELL_KNOWN_LABELS: &[&str] = &[
    "karpenter.sh/nodepool",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "karpenter.sh/capacity-type",
    "node.kubernetes.io/windows-build",
    "topology.k8s.aws/zone-id",
    "karpenter.k8s.aws/instance-hypervisor",
    "karpenter.k8s.aws/instance-encryption-in-transit-supported",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-capability-flex",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-local-nvme",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-cpu-manufacturer",
    "karpenter.k8s.aws/instance-cpu-sustained-clock-speed-mhz",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-ebs-bandwidth",
    "karpenter.k8s.aws/instance-network-bandwidth",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-manufacturer",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-tenancy",
    "karpenter.k8s.aws/nitro-sandbox",
    "karpenter.k8s.aws/capacity-reservation-id",
    "karpenter.k8s.aws/capacity-reservation-type",
    "karpenter.k8s.aws/capacity-reservation-interruptible",
    "karpenter.k8s.aws/placement-group-id",
    "karpenter.k8s.aws/placement-group-partition",
];

/// Well-known labels of an EKS Auto Mode NodePool (nodeClassRef group `eks.amazonaws.com`,
/// kind `NodeClass`): core's list, the zone id, the node's compute type, and the
/// `eks.amazonaws.com/instance-*` labels that play the role of `karpenter.k8s.aws/instance-*`.
pub const EKS_AUTO_MODE_WELL_KNOWN_LABELS: &[&str] = &[
    "karpenter.sh/nodepool",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "karpenter.sh/capacity-type",
    "node.kubernetes.io/windows-build",
    "topology.k8s.aws/zone-id",
    "eks.amazonaws.com/compute-type",
    "eks.amazonaws.com/instance-hypervisor",
    "eks.amazonaws.com/instance-encryption-in-transit-supported",
    "eks.amazonaws.com/instance-category",
    "eks.amazonaws.com/instance-capability-flex",
    "eks.amazonaws.com/instance-family",
    "eks.amazonaws.com/instance-generation",
    "eks.amazonaws.com/instance-size",
    "eks.amazonaws.com/instance-local-nvme",
    "eks.amazonaws.com/instance-cpu",
    "eks.amazonaws.com/instance-cpu-manufacturer",
    "eks.amazonaws.com/instance-cpu-sustained-clock-speed-mhz",
    "eks.amazonaws.com/instance-memory",
    "eks.amazonaws.com/instance-ebs-bandwidth",
    "eks.amazonaws.com/instance-network-bandwidth",
    "eks.amazonaws.com/instance-gpu-name",
    "eks.amazonaws.com/instance-gpu-manufacturer",
    "eks.amazonaws.com/instance-gpu-count",
    "eks.amazonaws.com/instance-gpu-memory",
    "eks.amazonaws.com/instance-accelerator-name",
    "eks.amazonaws.com/instance-accelerator-manufacturer",
    "eks.amazonaws.com/instance-accelerator-count",
    "eks.amazonaws.com/instance-tenancy",
];

/// Which Karpenter is doing the scheduling: self-managed Karpenter with the AWS provider, or
/// the one built into EKS Auto Mode. They differ only in which label keys are well-known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LabelFlavor {
    /// `karpenter.sh` NodePools whose nodeClassRef is a `karpenter.k8s.aws` EC2NodeClass.
    #[default]
    KarpenterAws,
    /// NodePools whose nodeClassRef is an `eks.amazonaws.com` `NodeClass`.
    EksAutoMode,
}

impl LabelFlavor {
    /// The well-known label keys of this flavor, in declaration order.
    pub fn well_known_labels(self) -> &'static [&'static str] {
        match self {
            LabelFlavor::KarpenterAws => WELL_KNOWN_LABELS,
            LabelFlavor::EksAutoMode => EKS_AUTO_MODE_WELL_KNOWN_LABELS,
        }
    }

    /// Whether pods may constrain `key` without the NodePool declaring it.
    pub fn is_well_known(self, key: &str) -> bool {
        self.well_known_labels().contains(&key)
    }
}

/// Whether pods may constrain `key` without the NodePool declaring it (Karpenter on AWS, HEAD).
pub fn is_well_known(key: &str) -> bool {
    LabelFlavor::KarpenterAws.is_well_known(key)
}

/// Translates deprecated or provider-specific aliases to the stable key Karpenter uses
/// (core `NormalizedLabels`, plus the EBS CSI zone key the AWS provider adds). Karpenter
/// applies this to every requirement it builds, so `beta.kubernetes.io/arch: arm64` on a pod
/// constrains `kubernetes.io/arch`.
pub fn normalize_key(key: &str) -> &str {
    match key {
        "failure-domain.beta.kubernetes.io/zone" | "topology.ebs.csi.aws.com/zone" => LABEL_ZONE,
        "failure-domain.beta.kubernetes.io/region" => "topology.kubernetes.io/region",
        "beta.kubernetes.io/arch" => "kubernetes.io/arch",
        "beta.kubernetes.io/os" => "kubernetes.io/os",
        "beta.kubernetes.io/instance-type" => "node.kubernetes.io/instance-type",
        other => other,
    }
}

/// The part of a label key before the `/`, or `""` for an unprefixed key (core `GetLabelDomain`).
pub fn label_domain(key: &str) -> &str {
    match key.split_once('/') {
        Some((domain, _)) => domain,
        None => "",
    }
}

/// Why a pod may not constrain `key` at HEAD (core v1.9+ with the AWS provider), or `None`.
///
/// Karpenter ignores — never provisions for — a pod whose nodeSelector or required node
/// affinity uses such a key. Restricted are `kubernetes.io/hostname` and every key in a domain
/// ending in `karpenter.sh` or `karpenter.k8s.aws` that is not well-known (so, by code
/// reading, even `karpenter.k8s.aws/ec2nodeclass`).
pub fn restricted_pod_label(key: &str) -> Option<&'static str> {
    if is_well_known(key) {
        return None;
    }
    let domain = label_domain(key);
    if domain.ends_with("karpenter.sh") {
        return Some("label domain \"karpenter.sh\" is restricted");
    }
    if domain.ends_with("karpenter.k8s.aws") {
        return Some("label domain \"karpenter.k8s.aws\" is restricted");
    }
    if key == LABEL_HOSTNAME {
        return Some("label \"kubernetes.io/hostname\" is restricted");
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Operators and errors
// ---------------------------------------------------------------------------------------------

/// A node-selector operator as written in YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
    Gt,
    Lt,
    /// Karpenter-only (NodePool requirements, core v1.9+).
    Gte,
    /// Karpenter-only (NodePool requirements, core v1.9+).
    Lte,
}

impl Operator {
    /// Every operator, in declaration order.
    pub const ALL: [Operator; 8] = [
        Operator::In,
        Operator::NotIn,
        Operator::Exists,
        Operator::DoesNotExist,
        Operator::Gt,
        Operator::Lt,
        Operator::Gte,
        Operator::Lte,
    ];

    /// The Kubernetes spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::In => "In",
            Operator::NotIn => "NotIn",
            Operator::Exists => "Exists",
            Operator::DoesNotExist => "DoesNotExist",
            Operator::Gt => "Gt",
            Operator::Lt => "Lt",
            Operator::Gte => "Gte",
            Operator::Lte => "Lte",
        }
    }

    /// Whether the operator takes exactly one integer value.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte
        )
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Operator {
    type Err = RequirementError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Operator::ALL
            .into_iter()
            .find(|op| op.as_str() == s)
            .ok_or_else(|| RequirementError::UnknownOperator(s.to_owned()))
    }
}

/// Why a node-selector expression cannot be turned into a [`Requirement`]. Kubernetes API
/// validation (pods) or the NodePool CRD's CEL rules reject these; Karpenter ignores such pods.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequirementError {
    #[error("unsupported operator {0:?}")]
    UnknownOperator(String),
    #[error("key {key}: operator {operator} needs at least one value")]
    MissingValues { key: String, operator: Operator },
    #[error("key {key}: operator {operator} takes no values")]
    UnexpectedValues { key: String, operator: Operator },
    #[error("key {key}: operator {operator} needs exactly one value, got {count}")]
    NotSingleValue {
        key: String,
        operator: Operator,
        count: usize,
    },
    #[error("key {key}: operator {operator} needs an integer value, got {value:?}")]
    NotAnInteger {
        key: String,
        operator: Operator,
        value: String,
    },
    #[error("key {key}: value {value} of operator {operator} is out of range")]
    OutOfRange {
        key: String,
        operator: Operator,
        value: i64,
    },
}

// ---------------------------------------------------------------------------------------------
// Requirement
// ---------------------------------------------------------------------------------------------

/// The set of values a label key may take, in Karpenter's representation: a finite set
/// (`complement == false`) or the complement of one, optionally bounded by inclusive integer
/// bounds. `In` is a finite set, `NotIn` a complement, `Exists` the complement of ∅,
/// `DoesNotExist` the empty finite set, and `Gt`/`Lt`/`Gte`/`Lte` are `Exists` with bounds
/// (HEAD canonicalizes `Gt N` to `>=N+1` and `Lt N` to `<=N-1`).
///
/// Invariant kept by every constructor and by [`Requirement::intersection`]: only complement
/// sets carry bounds, so a finite set's values are exactly its members.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: Arc<str>,
    complement: bool,
    values: ValueSet,
    greater_than_or_equal: Option<i64>,
    less_than_or_equal: Option<i64>,
    min_values: Option<u32>,
}

/// A requirement's listed values, sorted and distinct: most requirements list one to a
/// few values, which a slice holds in one allocation where a tree set takes a node with
/// room for eleven. Shared, as the key is, so that the copies the batch and the refusals
/// make of a requirement allocate nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct ValueSet(Arc<[String]>);

impl ValueSet {
    fn contains(&self, value: &str) -> bool {
        self.0.binary_search_by(|v| v.as_str().cmp(value)).is_ok()
    }

    /// The values of both, or of either (`union`), or of `self` only (`difference`), as
    /// `keep(in_self, in_other)` says, and within `bounds`, by one merge of the two sorted
    /// lists. A result equal to either side shares its values.
    fn merge(
        &self,
        other: &ValueSet,
        keep: impl Fn(bool, bool) -> bool,
        bounds: (Option<i64>, Option<i64>),
    ) -> ValueSet {
        let (a, b) = (&self.0, &other.0);
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < a.len() || j < b.len() {
            let order = match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) => x.cmp(y),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let (value, in_a, in_b) = match order {
                std::cmp::Ordering::Less => (&a[i], true, false),
                std::cmp::Ordering::Greater => (&b[j], false, true),
                std::cmp::Ordering::Equal => (&a[i], true, true),
            };
            if keep(in_a, in_b) && within_bounds(value, bounds.0, bounds.1) {
                out.push(value);
            }
            i += usize::from(in_a);
            j += usize::from(in_b);
        }
        if out.len() == a.len() && out.iter().zip(a.iter()).all(|(x, y)| std::ptr::eq(*x, y)) {
            return self.clone();
        }
        if out.len() == b.len() && out.iter().zip(b.iter()).all(|(x, y)| std::ptr::eq(*x, y)) {
            return other.clone();
        }
        ValueSet(out.into_iter().cloned().collect())
    }
}

impl FromIterator<String> for ValueSet {
    fn from_iter<I: IntoIterator<Item = String>>(iter: I) -> Self {
        let mut values: Vec<String> = iter.into_iter().collect();
        values.sort_unstable();
        values.dedup();
        ValueSet(values.into())
    }
}

impl std::ops::Deref for ValueSet {
    type Target = [String];
    fn deref(&self) -> &[String] {
        &self.0
    }
}

fn max_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

fn min_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}

/// Karpenter's `withinIntPtrs`: with no bounds every value is in; with a bound only integers
/// inside it are (Go `strconv.Atoi` and Rust `i64::from_str` accept the same strings).
fn within_bounds(value: &str, gte: Option<i64>, lte: Option<i64>) -> bool {
    if gte.is_none() && lte.is_none() {
        return true;
    }
    let Ok(n) = value.parse::<i64>() else {
        return false;
    };
    gte.is_none_or(|g| n >= g) && lte.is_none_or(|l| n <= l)
}

impl Requirement {
    /// Builds a requirement from a node-selector expression, validating it the way the
    /// Kubernetes API (pods) and the NodePool CRD do: `In`/`NotIn` need at least one value,
    /// `Exists`/`DoesNotExist` none, and `Gt`/`Lt`/`Gte`/`Lte` exactly one integer. The key is
    /// normalized with [`normalize_key`].
    pub fn new<I, S>(key: &str, operator: Operator, values: I) -> Result<Self, RequirementError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let key = normalize_key(key);
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        let mut requirement = Requirement {
            key: key.into(),
            complement: true,
            values: ValueSet::default(),
            greater_than_or_equal: None,
            less_than_or_equal: None,
            min_values: None,
        };
        match operator {
            Operator::In | Operator::NotIn => {
                if values.is_empty() {
                    return Err(RequirementError::MissingValues {
                        key: key.to_owned(),
                        operator,
                    });
                }
                requirement.complement = operator == Operator::NotIn;
                requirement.values = values.into_iter().collect();
            }
            Operator::Exists | Operator::DoesNotExist => {
                if !values.is_empty() {
                    return Err(RequirementError::UnexpectedValues {
                        key: key.to_owned(),
                        operator,
                    });
                }
                requirement.complement = operator == Operator::Exists;
            }
            Operator::Gt | Operator::Lt | Operator::Gte | Operator::Lte => {
                let [value] = values.as_slice() else {
                    return Err(RequirementError::NotSingleValue {
                        key: key.to_owned(),
                        operator,
                        count: values.len(),
                    });
                };
                let Ok(n) = value.parse::<i64>() else {
                    return Err(RequirementError::NotAnInteger {
                        key: key.to_owned(),
                        operator,
                        value: value.clone(),
                    });
                };
                let out_of_range = |key: String| RequirementError::OutOfRange {
                    key,
                    operator,
                    value: n,
                };
                match operator {
                    Operator::Gt => match n.checked_add(1) {
                        Some(g) => requirement.greater_than_or_equal = Some(g),
                        None => return Err(out_of_range(key.to_owned())),
                    },
                    Operator::Lt => match n.checked_sub(1) {
                        Some(l) => requirement.less_than_or_equal = Some(l),
                        None => return Err(out_of_range(key.to_owned())),
                    },
                    Operator::Gte => requirement.greater_than_or_equal = Some(n),
                    _ => requirement.less_than_or_equal = Some(n),
                }
            }
        }
        Ok(requirement)
    }

    /// `key In [values]`; an empty list gives the empty set (`DoesNotExist`), as Karpenter's
    /// own instance-type requirements do when a type has no value for a label.
    pub fn in_values<I, S>(key: &str, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Requirement {
            key: normalize_key(key).into(),
            complement: false,
            values: values.into_iter().map(Into::into).collect(),
            greater_than_or_equal: None,
            less_than_or_equal: None,
            min_values: None,
        }
    }

    /// `key NotIn [values]`; an empty list gives `Exists`.
    pub fn not_in<I, S>(key: &str, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Requirement {
            complement: true,
            ..Requirement::in_values(key, values)
        }
    }

    /// `key Exists`: any value.
    pub fn exists(key: &str) -> Self {
        Requirement::not_in(key, std::iter::empty::<String>())
    }

    /// `key DoesNotExist`: the empty set.
    pub fn does_not_exist(key: &str) -> Self {
        Requirement::in_values(key, std::iter::empty::<String>())
    }

    /// The same requirement with a NodePool `minValues`.
    pub fn with_min_values(mut self, min_values: Option<u32>) -> Self {
        self.min_values = min_values;
        self
    }

    /// The (normalized) label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether the set is a complement (`NotIn`, `Exists` and the numeric operators).
    pub fn is_complement(&self) -> bool {
        self.complement
    }

    /// The listed values, sorted: members of a finite set, exclusions of a complement.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    /// The inclusive lower bound, if any.
    pub fn greater_than_or_equal(&self) -> Option<i64> {
        self.greater_than_or_equal
    }

    /// The inclusive upper bound, if any.
    pub fn less_than_or_equal(&self) -> Option<i64> {
        self.less_than_or_equal
    }

    /// The NodePool `minValues`, if any (intersection keeps the larger one).
    pub fn min_values(&self) -> Option<u32> {
        self.min_values
    }

    /// Karpenter's `Intersection`: the values allowed by both. Crossing bounds give
    /// `DoesNotExist`; values outside the combined bounds (including every non-integer when a
    /// bound exists) are dropped; finite results lose their bounds. The key is `self`'s.
    /// `self.intersection(other).is_empty()`, without building the intersection: the hot
    /// path of instance-type filtering.
    pub fn intersection_is_empty(&self, other: &Requirement) -> bool {
        let gte = max_opt(self.greater_than_or_equal, other.greater_than_or_equal);
        let lte = min_opt(self.less_than_or_equal, other.less_than_or_equal);
        if let (Some(g), Some(l)) = (gte, lte)
            && g > l
        {
            return true;
        }
        let ok = |v: &String| within_bounds(v, gte, lte);
        match (self.complement, other.complement) {
            (true, true) => false,
            (true, false) => !other
                .values
                .iter()
                .any(|v| !self.values.contains(v) && ok(v)),
            (false, true) => !self
                .values
                .iter()
                .any(|v| !other.values.contains(v) && ok(v)),
            (false, false) => !self
                .values
                .iter()
                .any(|v| other.values.contains(v) && ok(v)),
        }
    }

    pub fn intersection(&self, other: &Requirement) -> Requirement {
        let complement = self.complement && other.complement;
        let gte = max_opt(self.greater_than_or_equal, other.greater_than_or_equal);
        let lte = min_opt(self.less_than_or_equal, other.less_than_or_equal);
        let min_values = max_opt(self.min_values, other.min_values);
        if let (Some(g), Some(l)) = (gte, lte)
            && g > l
        {
            return Requirement::does_not_exist(&self.key).with_min_values(min_values);
        }
        let bounds = (gte, lte);
        let values = match (self.complement, other.complement) {
            (true, true) => self.values.merge(&other.values, |a, b| a || b, bounds),
            (true, false) => other.values.merge(&self.values, |a, b| a && !b, bounds),
            (false, true) => self.values.merge(&other.values, |a, b| a && !b, bounds),
            (false, false) => self.values.merge(&other.values, |a, b| a && b, bounds),
        };
        let (gte, lte) = if complement { (gte, lte) } else { (None, None) };
        Requirement {
            key: self.key.clone(),
            complement,
            values,
            greater_than_or_equal: gte,
            less_than_or_equal: lte,
            min_values,
        }
    }

    /// Whether the requirement allows `value` (Karpenter's `Has`).
    pub fn has(&self, value: &str) -> bool {
        self.values.contains(value) != self.complement
            && within_bounds(value, self.greater_than_or_equal, self.less_than_or_equal)
    }

    /// A value the requirement allows, as Karpenter picks one to label a new node: the
    /// smallest member of a finite set, or — for a complement — the smallest non-excluded
    /// integer from the lower bound (or from 0, going below 0 only when forced). Karpenter
    /// picks a random integer there; this picks deterministically. `None` when nothing is
    /// allowed.
    pub fn any(&self) -> Option<String> {
        if !self.complement {
            return self.values.first().cloned();
        }
        let high = self.less_than_or_equal.unwrap_or(i64::MAX);
        let start = match self.greater_than_or_equal {
            Some(low) => low,
            None => high.min(0),
        };
        let free = |n: &i64| !self.values.contains(&n.to_string());
        // The exclusions are finite, so a few candidates past them always suffice.
        let budget = self.values.len() + 1;
        let upward = (start..=high).take(budget).find(free);
        let downward = || match self.greater_than_or_equal {
            Some(_) => None,
            None => (i64::MIN..start).rev().take(budget).find(free),
        };
        upward.or_else(downward).map(|n| n.to_string())
    }

    /// The number of allowed values for a finite set, `None` for a complement (which Karpenter
    /// treats as `MaxInt64 - len(exclusions)`, i.e. practically infinite, even with bounds).
    pub fn len(&self) -> Option<usize> {
        (!self.complement).then_some(self.values.len())
    }

    /// Karpenter's `Len() == 0`: only a finite set with no values is empty. A complement is
    /// never empty by this measure, even when its bounds leave no integer outside its
    /// exclusions — the test Karpenter's `Intersects` uses.
    pub fn is_empty(&self) -> bool {
        !self.complement && self.values.is_empty()
    }

    /// The operator the set reads as (Karpenter's `Operator()`): `In`, `NotIn`, `Exists` or
    /// `DoesNotExist`; bounds read as `Exists` (or `NotIn` with exclusions).
    pub fn operator(&self) -> Operator {
        match (self.complement, self.values.is_empty()) {
            (true, true) => Operator::Exists,
            (true, false) => Operator::NotIn,
            (false, false) => Operator::In,
            (false, true) => Operator::DoesNotExist,
        }
    }

    /// Node-selector expressions that, intersected, give back this requirement: one for the
    /// set (`In`/`NotIn`/`Exists`/`DoesNotExist`) and one per bound (`Gte`/`Lte`). `minValues`
    /// is carried by [`Requirement::min_values`], not by the expressions.
    pub fn expressions(&self) -> Vec<(Operator, Vec<String>)> {
        let mut out = Vec::new();
        let operator = self.operator();
        let has_bounds = self.greater_than_or_equal.is_some() || self.less_than_or_equal.is_some();
        if !(operator == Operator::Exists && has_bounds) {
            out.push((operator, self.values.iter().cloned().collect()));
        }
        if let Some(g) = self.greater_than_or_equal {
            out.push((Operator::Gte, vec![g.to_string()]));
        }
        if let Some(l) = self.less_than_or_equal {
            out.push((Operator::Lte, vec![l.to_string()]));
        }
        out
    }

    /// Renders like [`fmt::Display`] but with core ≤ v1.8's exclusive bounds (` >N` / ` <N`),
    /// for messages quoted from older Karpenter versions.
    pub fn to_string_up_to_v1_8(&self) -> String {
        let mut s = self.render_set();
        if let Some(g) = self.greater_than_or_equal {
            s.push_str(&format!(" >{}", i128::from(g) - 1));
        }
        if let Some(l) = self.less_than_or_equal {
            s.push_str(&format!(" <{}", i128::from(l) + 1));
        }
        if let Some(m) = self.min_values {
            s.push_str(&format!(" minValues {m}"));
        }
        s
    }

    /// As Karpenter `version` prints it: [`fmt::Display`] from v1.9,
    /// [`Requirement::to_string_up_to_v1_8`] before ([`KarpenterVersion::inclusive_bounds`]).
    pub fn to_string_on(&self, version: KarpenterVersion) -> String {
        if version.inclusive_bounds() {
            self.to_string()
        } else {
            self.to_string_up_to_v1_8()
        }
    }

    fn render_set(&self) -> String {
        let operator = self.operator();
        match operator {
            Operator::Exists | Operator::DoesNotExist => format!("{} {operator}", self.key),
            _ => {
                let mut shown: Vec<String> = self.values.iter().take(5).cloned().collect();
                if self.values.len() > 5 {
                    shown.push(format!("and {} others", self.values.len() - 5));
                }
                format!("{} {operator} [{}]", self.key, shown.join(" "))
            }
        }
    }
}

/// Karpenter's `Requirement.String` at HEAD: `key In [a b]` (sorted; more than five values end
/// in `and N others`), `key Exists`, `key DoesNotExist`, then ` >=N`, ` <=N`, ` minValues N`.
impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render_set())?;
        if let Some(g) = self.greater_than_or_equal {
            write!(f, " >={g}")?;
        }
        if let Some(l) = self.less_than_or_equal {
            write!(f, " <={l}")?;
        }
        if let Some(m) = self.min_values {
            write!(f, " minValues {m}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Requirements
// ---------------------------------------------------------------------------------------------

/// Why a pod's requirements do not fit a NodePool template. `Display` gives Karpenter's text
/// without the `incompatible requirements, ` prefix; [`IncompatibleError::karpenter_message`]
/// adds it. Keys are normalized; rule code maps them back to YAML spans.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IncompatibleError {
    /// A custom (not well-known) key the pod constrains but the template never mentions.
    #[error("label {key:?} does not have known values{}", hint_suffix(.hint.as_deref()))]
    UndefinedLabel {
        key: Arc<str>,
        /// A well-known or template key the pod probably meant.
        hint: Option<String>,
    },
    /// A key both sides constrain with no common value.
    #[error("key {key}, {pod} not in {node}")]
    Conflict {
        key: Arc<str>,
        /// The pod's requirement on the key.
        pod: Box<Requirement>,
        /// The NodePool template's requirement on the key.
        node: Box<Requirement>,
    },
}

fn hint_suffix(hint: Option<&str>) -> String {
    hint.map(|h| format!(" (typo of {h:?}?)"))
        .unwrap_or_default()
}

impl IncompatibleError {
    /// The normalized key at fault.
    pub fn key(&self) -> &str {
        match self {
            IncompatibleError::UndefinedLabel { key, .. }
            | IncompatibleError::Conflict { key, .. } => key,
        }
    }

    /// The error as Karpenter words it inside `Failed to schedule pod, <err>`.
    pub fn karpenter_message(&self) -> String {
        format!("incompatible requirements, {self}")
    }

    /// [`IncompatibleError::karpenter_message`] with the requirements printed as Karpenter
    /// `version` prints them ([`Requirement::to_string_on`]).
    pub fn karpenter_message_on(&self, version: KarpenterVersion) -> String {
        match self {
            IncompatibleError::Conflict { key, pod, node } if !version.inclusive_bounds() => {
                format!(
                    "incompatible requirements, key {key}, {} not in {}",
                    pod.to_string_on(version),
                    node.to_string_on(version)
                )
            }
            _ => self.karpenter_message(),
        }
    }
}

/// A conjunction of requirements keyed by normalized label key (Karpenter's `Requirements`).
/// Adding a second requirement for a key intersects it with the first.
///
/// Kept as one vector sorted by key: a pod or a NodePool constrains a handful of keys, and
/// the batch holds and clones thousands of these, where a tree map costs a node of eleven
/// slots for even one key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Requirements {
    by_key: Vec<Requirement>,
}

impl Requirements {
    /// No requirements.
    pub fn new() -> Self {
        Requirements::default()
    }

    /// One `In [value]` requirement per label, as Karpenter builds them from a nodeSelector or
    /// from NodePool template labels.
    pub fn from_labels<'a, I>(labels: I) -> Self
    where
        I: IntoIterator<Item = (&'a str, &'a str)>,
    {
        labels
            .into_iter()
            .map(|(k, v)| Requirement::in_values(k, [v]))
            .collect()
    }

    /// Where the requirement on `key` (already normalized) is, or would be inserted.
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.by_key.binary_search_by(|r| r.key.as_ref().cmp(key))
    }

    /// The requirement on `key` (already normalized).
    fn on(&self, key: &str) -> Option<&Requirement> {
        self.position(key).ok().map(|i| &self.by_key[i])
    }

    /// Adds a requirement, intersecting it with any existing one for the same key.
    pub fn add(&mut self, requirement: Requirement) {
        match self.position(&requirement.key) {
            Ok(i) => self.by_key[i] = requirement.intersection(&self.by_key[i]),
            Err(i) => self.by_key.insert(i, requirement),
        }
    }

    /// Sets the requirement on its key, dropping any existing one (no intersection).
    pub fn replace(&mut self, requirement: Requirement) {
        match self.position(&requirement.key) {
            Ok(i) => self.by_key[i] = requirement,
            Err(i) => self.by_key.insert(i, requirement),
        }
    }

    /// Adds every requirement of `other`.
    pub fn add_all(&mut self, other: &Requirements) {
        for requirement in &other.by_key {
            self.add(requirement.clone());
        }
    }

    /// The requirement on `key` (normalized first), if one was added.
    pub fn get(&self, key: &str) -> Option<&Requirement> {
        self.on(normalize_key(key))
    }

    /// Karpenter's `Get`: the requirement on `key`, or `key Exists` when there is none.
    pub fn get_or_exists(&self, key: &str) -> Requirement {
        self.get(key)
            .cloned()
            .unwrap_or_else(|| Requirement::exists(normalize_key(key)))
    }

    /// Whether a requirement on `key` (normalized first) was added, whatever its operator.
    pub fn has(&self, key: &str) -> bool {
        self.position(normalize_key(key)).is_ok()
    }

    /// The keys, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.by_key.iter().map(|r| &*r.key)
    }

    /// The requirements, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = &Requirement> {
        self.by_key.iter()
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    /// Whether no key is constrained.
    pub fn is_empty(&self) -> bool {
        self.by_key.is_empty()
    }

    /// Whether some requirement has `minValues` (`HasMinValues`).
    pub fn has_min_values(&self) -> bool {
        self.by_key.iter().any(|r| r.min_values().is_some())
    }

    /// Karpenter's `Intersects` with `self` as the existing (NodePool) side: the first key, in
    /// sorted order, constrained by both sides with an empty intersection — except that two
    /// requirements both reading as `NotIn`/`DoesNotExist` never conflict.
    pub fn intersects(&self, pod: &Requirements) -> Result<(), IncompatibleError> {
        match self.conflicts(pod).next() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// `self.intersects(pod).is_ok()`, without building the error: for filters that only
    /// need the answer (instance types, DaemonSets, reachable pools).
    pub fn intersects_ok(&self, pod: &Requirements) -> bool {
        // Walk the smaller map and look keys up in the larger; the answer does not depend on
        // which key conflicts first.
        let conflict = |node: &Requirement, incoming: &Requirement| {
            node.intersection_is_empty(incoming) && !(lenient(incoming) && lenient(node))
        };
        if self.by_key.len() <= pod.by_key.len() {
            !self.by_key.iter().any(|node| {
                pod.on(&node.key)
                    .is_some_and(|incoming| conflict(node, incoming))
            })
        } else {
            !pod.by_key.iter().any(|incoming| {
                self.on(&incoming.key)
                    .is_some_and(|node| conflict(node, incoming))
            })
        }
    }

    /// Whether a NodeClaim of a NodePool with these requirements may ever take a pod with
    /// `pod` ([`Requirements::intersects_ok`] on the NodeClaim's requirements): a
    /// requirement reading as `Exists` narrows to `NotIn` on a NodeClaim once a pod asking
    /// `NotIn` joins it, and a pod's `NotIn`/`DoesNotExist` never conflicts with that.
    pub fn may_intersect_ok(&self, pod: &Requirements) -> bool {
        !self.by_key.iter().any(|node| {
            pod.on(&node.key).is_some_and(|incoming| {
                node.intersection_is_empty(incoming)
                    && !(lenient(incoming)
                        && (lenient(node) || node.operator() == Operator::Exists))
            })
        })
    }

    fn conflicts<'a>(
        &'a self,
        pod: &'a Requirements,
    ) -> impl Iterator<Item = IncompatibleError> + 'a {
        self.by_key.iter().filter_map(move |node| {
            let key = &node.key;
            let incoming = pod.on(key)?;
            if !node.intersection_is_empty(incoming) {
                return None;
            }
            if lenient(incoming) && lenient(node) {
                return None;
            }
            Some(IncompatibleError::Conflict {
                key: key.clone(),
                pod: Box::new(incoming.clone()),
                node: Box::new(node.clone()),
            })
        })
    }

    /// `Compatible(pod, AllowUndefinedWellKnownLabels)` with `self` as the NodePool template
    /// (requirements plus labels), for Karpenter on AWS. See [`Requirements::compatible_with`].
    pub fn compatible(&self, pod: &Requirements) -> Result<(), IncompatibleError> {
        self.compatible_with(pod, LabelFlavor::KarpenterAws)
    }

    /// `Compatible(pod, AllowUndefinedWellKnownLabels)` with `self` as the NodePool template.
    ///
    /// First, every custom pod key (sorted) the template does not mention, constrained with an
    /// operator other than `NotIn`/`DoesNotExist`, fails with `label "<key>" does not have
    /// known values` (HEAD stops at the first). Then keys on both sides must intersect.
    /// Well-known keys the template does not mention pass here.
    pub fn compatible_with(
        &self,
        pod: &Requirements,
        flavor: LabelFlavor,
    ) -> Result<(), IncompatibleError> {
        // The first of [`Requirements::incompatibilities_with`], the others not built.
        if let Some(Requirement { key, .. }) =
            (pod.by_key.iter()).find(|req| self.undefined(&req.key, req, flavor))
        {
            return Err(IncompatibleError::UndefinedLabel {
                key: key.clone(),
                hint: self.label_hint(key, flavor),
            });
        }
        match self.conflicts(pod).next() {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    /// A pod requirement on `key` that `self` does not define, a key neither well known
    /// nor asked leniently (`NotIn`, `DoesNotExist`).
    fn undefined(&self, key: &str, req: &Requirement, flavor: LabelFlavor) -> bool {
        !flavor.is_well_known(key) && self.on(key).is_none() && !lenient(req)
    }

    /// `Compatible(pod)` with no option, `self` being a node's labels
    /// (`NewLabelRequirements`): a key the node lacks passes only when `pod` asks it
    /// leniently (`NotIn`, `DoesNotExist`), well known or not; the others must intersect.
    pub fn met_as_labels(&self, pod: &Requirements) -> bool {
        let undefined = (pod.by_key.iter()).any(|req| self.on(&req.key).is_none() && !lenient(req));
        !undefined && self.intersects_ok(pod)
    }

    /// `self.compatible_with(pod, flavor).is_ok()`, without building the error.
    pub fn compatible_with_ok(&self, pod: &Requirements, flavor: LabelFlavor) -> bool {
        let undefined = (pod.by_key.iter()).any(|req| self.undefined(&req.key, req, flavor));
        !undefined && self.intersects_ok(pod)
    }

    /// Every reason `pod` does not fit (undefined custom keys first, then conflicts, each
    /// sorted by key) — what Karpenter ≤ v1.0 multierr-joined, and what a linter wants to
    /// report all at once.
    pub fn incompatibilities_with(
        &self,
        pod: &Requirements,
        flavor: LabelFlavor,
    ) -> Vec<IncompatibleError> {
        let mut out: Vec<IncompatibleError> = pod
            .by_key
            .iter()
            .filter(|req| self.undefined(&req.key, req, flavor))
            .map(|req| IncompatibleError::UndefinedLabel {
                key: req.key.clone(),
                hint: self.label_hint(&req.key, flavor),
            })
            .collect();
        out.extend(self.conflicts(pod));
        out
    }

    /// HEAD's `labelHint`: the first well-known key (declaration order), then template key
    /// (sorted), that contains `key` or ends with the part of `key` after its first `/`.
    /// (Go iterates sets in random order; karplint's order is fixed.)
    fn label_hint(&self, key: &str, flavor: LabelFlavor) -> Option<String> {
        let suffix = key.split_once('/').map_or(key, |(_, after)| after);
        let matches = |known: &str| known.ends_with(suffix) || holds(known, key);
        flavor
            .well_known_labels()
            .iter()
            .copied()
            .find(|known| matches(known))
            .or_else(|| self.keys().find(|known| matches(known)))
            .map(str::to_owned)
    }
}

/// `hay.contains(needle)` for the short strings of label keys: the positions of the
/// needle's first byte, then a comparison, where `str::contains` prepares a two-way search
/// for every call (a NodePool refusing a pod's custom label asks it of about forty keys).
fn holds(hay: &str, needle: &str) -> bool {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    hay.len() >= needle.len()
        && memchr::memchr_iter(first, &hay[..hay.len() - rest.len()])
            .any(|i| hay[i + 1..].starts_with(rest))
}

/// Requirements reading as `NotIn`/`DoesNotExist`: two of them never conflict, and a pod's
/// on a key the template does not define is no error.
fn lenient(r: &Requirement) -> bool {
    matches!(r.operator(), Operator::NotIn | Operator::DoesNotExist)
}

impl FromIterator<Requirement> for Requirements {
    fn from_iter<T: IntoIterator<Item = Requirement>>(iter: T) -> Self {
        let mut requirements = Requirements::new();
        for requirement in iter {
            requirements.add(requirement);
        }
        requirements
    }
}

impl Extend<Requirement> for Requirements {
    fn extend<T: IntoIterator<Item = Requirement>>(&mut self, iter: T) {
        for requirement in iter {
            self.add(requirement);
        }
    }
}

/// One instance type's requirement on one key, in a table of types that constrain the same
/// keys: an instance type's requirements are its labels, each `In [value]` or
/// `DoesNotExist`, so the value alone is stored. A catalog's types share one sorted key
/// list, and a table of 1,363 types costs a few hundred kilobytes instead of a
/// `Requirements` map (and a set per value) each.
#[derive(Debug, Clone)]
pub enum TypeValue {
    /// `key In [value]`.
    In(crate::model::de::Str),
    /// `key DoesNotExist`: the type lacks the label.
    DoesNotExist,
    /// No requirement on the key.
    Unconstrained,
}

impl TypeValue {
    /// The value of `In [value]`: what [`Requirement::any`] would pick to label a node.
    pub fn value(&self) -> Option<&str> {
        match self {
            TypeValue::In(v) => Some(v),
            TypeValue::DoesNotExist | TypeValue::Unconstrained => None,
        }
    }

    /// Whether `incoming` (a pod's or a NodePool's requirement on the same key) leaves no value
    /// this type can have, and is no lenient pair: [`Requirements::intersects_ok`] per key
    /// (`In [v]` ∩ `incoming` is empty exactly when `incoming` does not have `v`; a
    /// `DoesNotExist` conflicts with every requirement but `NotIn` and `DoesNotExist`).
    fn conflicts(&self, incoming: &Requirement) -> bool {
        match self {
            TypeValue::In(v) => !incoming.has(v),
            TypeValue::DoesNotExist => !lenient(incoming),
            TypeValue::Unconstrained => false,
        }
    }
}

/// The requirements of instance types as rows of [`TypeValue`] over one sorted key list.
#[derive(Debug, Default)]
pub struct TypeRows {
    keys: Vec<String>,
    values: Vec<TypeValue>,
    rows: usize,
}

impl TypeRows {
    /// One row per list of labels: (normalised key, value) pairs with distinct keys, where
    /// a value is `key In [value]` and `None` is `key DoesNotExist`, as [`Requirements`]
    /// built with [`Requirement::in_values`] and [`Requirement::does_not_exist`] would hold
    /// them.
    pub fn from_labels(rows: Vec<Vec<(&str, Option<&str>)>>) -> Self {
        let keys: BTreeSet<&str> = rows.iter().flatten().map(|(k, _)| *k).collect();
        let keys: Vec<String> = keys.into_iter().map(str::to_owned).collect();
        let n = rows.len();
        let mut values = Vec::with_capacity(n * keys.len());
        for mut labels in rows {
            labels.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut labels = labels.into_iter().peekable();
            for key in &keys {
                values.push(match labels.next_if(|(k, _)| *k == key.as_str()) {
                    Some((_, Some(v))) => TypeValue::In(v.into()),
                    Some((_, None)) => TypeValue::DoesNotExist,
                    None => TypeValue::Unconstrained,
                });
            }
        }
        TypeRows {
            keys,
            values,
            rows: n,
        }
    }

    pub fn len(&self) -> usize {
        self.rows
    }

    /// For each row, whether it meets `r` alone ([`TypeRow::intersects_ok`] of `r`). A row
    /// meets requirements key by key, so the rows that meet several requirements on distinct
    /// keys are those that meet each.
    pub fn meeting(&self, r: &Requirement) -> Vec<bool> {
        let key = normalize_key(&r.key);
        match self.keys.binary_search_by(|k| k.as_str().cmp(key)) {
            Ok(k) => (0..self.rows)
                .map(|i| !self.values[i * self.keys.len() + k].conflicts(r))
                .collect(),
            // A key the table does not hold is unconstrained on every row.
            Err(_) => vec![true; self.rows],
        }
    }

    /// Whether some row has a requirement on `key` (normalised).
    pub fn has_key(&self, key: &str) -> bool {
        self.keys.binary_search_by(|k| k.as_str().cmp(key)).is_ok()
    }

    pub fn row(&self, i: usize) -> TypeRow<'_> {
        let n = self.keys.len();
        TypeRow {
            keys: &self.keys,
            values: &self.values[i * n..(i + 1) * n],
        }
    }
}

/// One instance type's requirements (see [`TypeValue`]).
#[derive(Debug, Clone, Copy)]
pub struct TypeRow<'a> {
    keys: &'a [String],
    values: &'a [TypeValue],
}

impl<'a> TypeRow<'a> {
    /// The type's requirement on `key`.
    pub fn get(&self, key: &str) -> &'a TypeValue {
        let key = normalize_key(key);
        match self.keys.binary_search_by(|k| k.as_str().cmp(key)) {
            Ok(i) => &self.values[i],
            Err(_) => &TypeValue::Unconstrained,
        }
    }

    /// The labels the type gives its node: each key it holds `In [value]`.
    pub fn labels(self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        (self.keys.iter().zip(self.values)).filter_map(|(k, v)| Some((k.as_str(), v.value()?)))
    }

    /// Whether the type has a requirement on `key`.
    pub fn has(&self, key: &str) -> bool {
        !matches!(self.get(key), TypeValue::Unconstrained)
    }

    /// [`Requirements::intersects_ok`] of the type's requirements with `other`.
    pub fn intersects_ok(&self, other: &Requirements) -> bool {
        !other
            .by_key
            .iter()
            .any(|incoming| self.get(&incoming.key).conflicts(incoming))
    }

    /// `other` looked up once in this row's key list, for [`TypeRow::meets`] on every row
    /// of the same table: a pod is tried against hundreds of types per NodeClaim.
    pub fn query<'q>(&self, other: &'q Requirements) -> RowQuery<'a, 'q> {
        let at = (other.by_key.iter())
            .filter_map(|incoming| {
                let key = normalize_key(&incoming.key);
                let i = self.keys.binary_search_by(|k| k.as_str().cmp(key)).ok()?;
                Some((i, incoming))
            })
            .collect();
        RowQuery {
            keys: self.keys,
            other,
            at,
        }
    }

    /// [`TypeRow::intersects_ok`] with the requirements of `q`.
    pub fn meets(&self, q: &RowQuery<'_, '_>) -> bool {
        if !std::ptr::eq(self.keys, q.keys) {
            return self.intersects_ok(q.other);
        }
        // A key the table does not hold is unconstrained on every row: it never conflicts.
        !q.at
            .iter()
            .any(|&(i, incoming)| self.values[i].conflicts(incoming))
    }
}

/// Requirements resolved against the key list of one [`TypeRows`] ([`TypeRow::query`]).
pub struct RowQuery<'a, 'q> {
    keys: &'a [String],
    other: &'q Requirements,
    /// The index in `keys` of each requirement's key that the table holds.
    at: Vec<(usize, &'q Requirement)>,
}

/// Karpenter's `Requirements.String`: each requirement rendered, sorted, joined with `", "`;
/// `kubernetes.io/hostname` is hidden.
impl fmt::Display for Requirements {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_on(KarpenterVersion::NEWEST))
    }
}

impl Requirements {
    /// As Karpenter `version` prints them (`Requirements.String`): each requirement but the
    /// hostname's ([`Requirement::to_string_on`]), sorted, joined by `, `.
    pub fn to_string_on(&self, version: KarpenterVersion) -> String {
        let mut rendered: Vec<String> = self
            .by_key
            .iter()
            .filter(|r| &*r.key != LABEL_HOSTNAME)
            .map(|r| r.to_string_on(version))
            .collect();
        rendered.sort();
        rendered.join(", ")
    }
}

#[cfg(test)]
mod tests;
