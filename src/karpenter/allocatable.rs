//! Node overhead: how the Karpenter simulator turns an instance type's capacity into the
//! allocatable resources a pod must fit into.
//!
//! Karpenter never waits to see a node before deciding whether a pod fits on it; it predicts
//! allocatable as `capacity − (kube-reserved + system-reserved + eviction threshold)` from the
//! instance type, the EC2NodeClass AMI family and its `kubelet` block (AWS provider
//! `pkg/providers/instancetype/types.go`, karpenter-model §6.1). karplint reproduces that
//! arithmetic bit for bit, including the float64 steps, so a "does not fit" verdict names the same
//! numbers Karpenter would. The formula is checked against all 1,363 types of the EC2
//! instance-type table `data/ec2-instance-types.csv` (`tests/allocatable_oracle.rs`).
//!
//! Memory, as found by matching that table (e.g. a1.medium: 2048 MiB arm64, 8 pods → 1392Mi):
//!
//! ```text
//! mib      = SizeInMiB − (64 if arm64)                  // Graviton CMA reservation first
//! capacity = mib − ceil(mib × 1 MiB × 0.075 / 1024 / 1024) MiB   // VM overhead, float64
//! alloc    = capacity − (11 × pods + 255) MiB − 100 MiB  // kube-reserved, eviction
//! ```
//!
//! so the VM overhead is taken on the memory *after* the 64 MiB arm64 deduction
//! (a1.medium: 1984 − 149 − 343 − 100 = 1392).

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use super::catalog::{InstanceType, RESOURCE_PRIVATE_IPV4};
use crate::quantity::{Quantity, ResourceList};

/// Karpenter's default `--vm-memory-overhead-percent`.
pub const DEFAULT_VM_MEMORY_OVERHEAD_PERCENT: f64 = 0.075;

/// `memory.available`, the memory eviction signal.
pub const MEMORY_AVAILABLE: &str = "memory.available";
/// `nodefs.available`, the ephemeral-storage eviction signal.
pub const NODEFS_AVAILABLE: &str = "nodefs.available";

const MIB: i128 = 1024 * 1024;
const GIB: i128 = 1024 * MIB;

/// Why an AMI family, alias or kubelet setting was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocatableError {
    /// `amiFamily` is not one Karpenter knows.
    #[error(
        "unknown amiFamily {0:?}, expected one of AL2, AL2023, Bottlerocket, Custom, Windows2019, Windows2022, Windows2025, Ubuntu"
    )]
    UnknownFamily(String),
    /// `amiSelectorTerms[].alias` is not `<family>@<version>` with a known family.
    #[error(
        "invalid alias {0:?}, expected <family>@<version> with family one of al2, al2023, bottlerocket, windows2019, windows2022, windows2025"
    )]
    BadAlias(String),
    /// An `evictionHard` value is neither a quantity nor a percentage.
    #[error("evictionHard {signal} value {value:?} is neither a quantity nor a percentage")]
    BadEvictionValue {
        /// The signal, e.g. `memory.available`.
        signal: String,
        /// The offending value.
        value: String,
    },
}

/// The EC2NodeClass AMI family, which decides pod density and overhead rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum AmiFamily {
    /// Amazon Linux 2.
    AL2,
    /// Amazon Linux 2023 (the default).
    #[default]
    AL2023,
    /// Bottlerocket.
    Bottlerocket,
    /// A custom AMI (Karpenter's default feature flags).
    Custom,
    /// Windows Server 2019.
    Windows2019,
    /// Windows Server 2022.
    Windows2022,
    /// Windows Server 2025.
    Windows2025,
    /// Ubuntu (v1beta1 and earlier only; default feature flags).
    Ubuntu,
}

impl AmiFamily {
    /// All families, in declaration order.
    pub const ALL: [AmiFamily; 8] = [
        AmiFamily::AL2,
        AmiFamily::AL2023,
        AmiFamily::Bottlerocket,
        AmiFamily::Custom,
        AmiFamily::Windows2019,
        AmiFamily::Windows2022,
        AmiFamily::Windows2025,
        AmiFamily::Ubuntu,
    ];

    /// The `amiFamily` spelling, e.g. `AL2023`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AmiFamily::AL2 => "AL2",
            AmiFamily::AL2023 => "AL2023",
            AmiFamily::Bottlerocket => "Bottlerocket",
            AmiFamily::Custom => "Custom",
            AmiFamily::Windows2019 => "Windows2019",
            AmiFamily::Windows2022 => "Windows2022",
            AmiFamily::Windows2025 => "Windows2025",
            AmiFamily::Ubuntu => "Ubuntu",
        }
    }

    /// Parses an `amiFamily` value (`AL2023`; matched case-insensitively).
    pub fn parse(s: &str) -> Result<AmiFamily, AllocatableError> {
        AmiFamily::ALL
            .into_iter()
            .find(|f| f.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| AllocatableError::UnknownFamily(s.to_string()))
    }

    /// Parses an `amiSelectorTerms[].alias` such as `al2023@latest` or
    /// `bottlerocket@v1.20.0`. Only the families Karpenter v1 accepts as aliases qualify.
    pub fn from_alias(alias: &str) -> Result<AmiFamily, AllocatableError> {
        let bad = || AllocatableError::BadAlias(alias.to_string());
        let (family, version) = alias.split_once('@').ok_or_else(bad)?;
        if version.is_empty() {
            return Err(bad());
        }
        match family {
            "al2" => Ok(AmiFamily::AL2),
            "al2023" => Ok(AmiFamily::AL2023),
            "bottlerocket" => Ok(AmiFamily::Bottlerocket),
            "windows2019" => Ok(AmiFamily::Windows2019),
            "windows2022" => Ok(AmiFamily::Windows2022),
            "windows2025" => Ok(AmiFamily::Windows2025),
            _ => Err(bad()),
        }
    }

    /// True for the Windows families.
    pub const fn is_windows(self) -> bool {
        matches!(
            self,
            AmiFamily::Windows2019 | AmiFamily::Windows2022 | AmiFamily::Windows2025
        )
    }

    /// `UsesENILimitedMemoryOverhead`: kube-reserved memory is sized from ENI-limited pods
    /// (ignoring `maxPods`) rather than the final pod count.
    pub const fn uses_eni_limited_memory_overhead(self) -> bool {
        !matches!(self, AmiFamily::Bottlerocket) && !self.is_windows()
    }

    /// `SupportsENILimitedPodDensity`: without `maxPods`, pods = ENI-limited pods (else 110).
    pub const fn supports_eni_limited_pod_density(self) -> bool {
        !self.is_windows()
    }

    /// `PodsPerCoreEnabled`: whether `kubelet.podsPerCore` is honoured.
    pub const fn pods_per_core_enabled(self) -> bool {
        !matches!(self, AmiFamily::Bottlerocket)
    }

    /// The `node.kubernetes.io/windows-build` value, for Windows families.
    pub const fn windows_build(self) -> Option<&'static str> {
        match self {
            AmiFamily::Windows2019 => Some("10.0.17763"),
            AmiFamily::Windows2022 => Some("10.0.20348"),
            AmiFamily::Windows2025 => Some("10.0.26100"),
            _ => None,
        }
    }

    /// The `kubernetes.io/os` value a type of architecture `arch` gets under this family:
    /// `linux`, `windows` (amd64 only), or `None` when the family cannot run the type
    /// (Windows on arm64: Karpenter gives it an empty OS set).
    pub fn os_label(self, arch: &str) -> Option<&'static str> {
        if self.is_windows() {
            (arch == "amd64").then_some("windows")
        } else {
            Some("linux")
        }
    }

    /// The block device pods' ephemeral storage lives on (aws `pkg/providers/amifamily/*.go`
    /// `EphemeralBlockDevice` at v1.14.2): `/dev/xvda` on AL2 and AL2023, Bottlerocket's data
    /// volume `/dev/xvdb` (its `/dev/xvda` is the OS volume), `/dev/sda1` on Windows and
    /// Ubuntu (v0.37 `ubuntu.go`), and unknown (`None`) for a Custom AMI.
    pub const fn ephemeral_block_device(self) -> Option<&'static str> {
        match self {
            AmiFamily::AL2 | AmiFamily::AL2023 => Some("/dev/xvda"),
            AmiFamily::Bottlerocket => Some("/dev/xvdb"),
            AmiFamily::Windows2019
            | AmiFamily::Windows2022
            | AmiFamily::Windows2025
            | AmiFamily::Ubuntu => Some("/dev/sda1"),
            AmiFamily::Custom => None,
        }
    }

    /// Size of the volume that backs ephemeral-storage when no blockDeviceMappings say
    /// otherwise: the family's default mapping on [`AmiFamily::ephemeral_block_device`]
    /// (`DefaultBlockDeviceMappings`), 50Gi on Windows and `DefaultEBS` (20Gi) elsewhere,
    /// Bottlerocket's data volume included; Custom has no default mappings and gets
    /// `DefaultEBS` too.
    pub const fn default_ephemeral_volume(self) -> Quantity {
        let gib = if self.is_windows() { 50 } else { 20 };
        Quantity::from_millis(gib * GIB * 1000)
    }
}

impl fmt::Display for AmiFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AmiFamily {
    type Err = AllocatableError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        AmiFamily::parse(s)
    }
}

/// The parts of EC2NodeClass `spec.kubelet` that change allocatable.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct KubeletConfig {
    /// `maxPods`.
    pub max_pods: Option<u32>,
    /// `podsPerCore` (0 or unset = no cap).
    pub pods_per_core: Option<u32>,
    /// `kubeReserved`: each key replaces Karpenter's default for that resource.
    pub kube_reserved: ResourceList,
    /// `systemReserved`.
    pub system_reserved: ResourceList,
    /// `evictionHard`: `memory.available` / `nodefs.available` → quantity or `N%`
    /// (`100%` disables). Karpenter HEAD ignores `evictionSoft` here. Values that parse as
    /// neither are skipped by [`allocatable`]; [`KubeletConfig::validate`] reports them.
    pub eviction_hard: BTreeMap<String, String>,
}

impl KubeletConfig {
    /// Checks the `evictionHard` values Karpenter would read.
    pub fn validate(&self) -> Result<(), AllocatableError> {
        for (signal, value) in &self.eviction_hard {
            if matches!(signal.as_str(), MEMORY_AVAILABLE | NODEFS_AVAILABLE)
                && EvictionValue::parse(value).is_none()
            {
                return Err(AllocatableError::BadEvictionValue {
                    signal: signal.clone(),
                    value: value.clone(),
                });
            }
        }
        Ok(())
    }
}

enum EvictionValue {
    Percent(f64),
    Absolute(Quantity),
}

impl EvictionValue {
    fn parse(v: &str) -> Option<EvictionValue> {
        if let Some(p) = v.strip_suffix('%') {
            let p: f64 = p.trim_matches('%').parse().ok()?;
            // 100% disables the threshold (kubelet config docs).
            Some(EvictionValue::Percent(if p == 100.0 { 0.0 } else { p }))
        } else {
            Quantity::parse(v).ok().map(EvictionValue::Absolute)
        }
    }

    /// `computeEvictionSignal`: a percentage is `ceil(capacity / 100 × p)` bytes, in float64.
    fn resolve(&self, capacity: Quantity) -> Quantity {
        match self {
            EvictionValue::Absolute(q) => *q,
            EvictionValue::Percent(p) => {
                let cap = capacity.as_millis() as f64 / 1000.0;
                // `as` saturates a float out of range; the product saturates too.
                Quantity::from_millis(((cap / 100.0 * p).ceil() as i128).saturating_mul(1000))
            }
        }
    }
}

/// Karpenter's per-type overhead, split like `cloudprovider.InstanceTypeOverhead`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Overhead {
    /// kube-reserved (defaults, then user keys).
    pub kube_reserved: ResourceList,
    /// system-reserved (user keys only).
    pub system_reserved: ResourceList,
    /// Eviction threshold.
    pub eviction_threshold: ResourceList,
}

impl Overhead {
    /// Sum of the three parts (`InstanceTypeOverhead.Total`).
    pub fn total(&self) -> ResourceList {
        let mut t = self.kube_reserved.clone();
        t.add(&self.system_reserved);
        t.add(&self.eviction_threshold);
        t
    }
}

/// Memory Karpenter assumes the node reports: MiB (−64 on arm64) minus the VM overhead
/// `ceil(bytes × pct / 1024 / 1024)` MiB, computed in float64 as Karpenter does.
pub fn memory_capacity(it: &InstanceType, vm_memory_overhead_percent: f64) -> Quantity {
    let mut mib = i128::from(it.memory_mib);
    if it.arch == "arm64" {
        mib -= 64;
    }
    let bytes = mib * MIB;
    let overhead_mib = (bytes as f64 * vm_memory_overhead_percent / 1024.0 / 1024.0).ceil() as i128;
    Quantity::from_millis((bytes - overhead_mib * MIB) * 1000)
}

/// The pod capacity: `maxPods`, else ENI-limited (families that support it) or 110, then
/// capped at `podsPerCore × vCPUs` where the family honours it.
pub fn pods(it: &InstanceType, kubelet: &KubeletConfig, family: AmiFamily) -> u64 {
    let mut count = match kubelet.max_pods {
        Some(n) => u64::from(n),
        None if family.supports_eni_limited_pod_density() => u64::from(it.eni_limited_pods),
        None => 110,
    };
    if let Some(ppc) = kubelet.pods_per_core
        && ppc > 0
        && family.pods_per_core_enabled()
    {
        count = count.min(u64::from(ppc) * u64::from(it.vcpus));
    }
    count
}

/// Karpenter's node capacity for the type (`computeCapacity`): cpu, memory after VM
/// overhead, ephemeral-storage (`ephemeral_volume`, from [`super::ephemeral`], or the family
/// default), pods, the type's
/// extended resources, and on Windows `vpc.amazonaws.com/PrivateIPv4Address` when the
/// IPv4-per-ENI figure is known.
pub fn capacity(
    it: &InstanceType,
    kubelet: &KubeletConfig,
    family: AmiFamily,
    vm_memory_overhead_percent: f64,
    ephemeral_volume: Option<Quantity>,
) -> ResourceList {
    let mut cap = it.capacity.clone();
    cap.insert("memory", memory_capacity(it, vm_memory_overhead_percent));
    cap.insert(
        "ephemeral-storage",
        ephemeral_volume.unwrap_or(family.default_ephemeral_volume()),
    );
    cap.insert(
        "pods",
        Quantity::from_units(i64::try_from(pods(it, kubelet, family)).unwrap_or(i64::MAX)),
    );
    if family.is_windows()
        && it.arch == "amd64"
        && let Some(ipv4) = it.ipv4_per_interface
    {
        cap.insert(
            RESOURCE_PRIVATE_IPV4,
            Quantity::from_units(i64::from(ipv4.saturating_sub(1))),
        );
    }
    cap
}

/// kube-reserved cpu: 6% of the first core, 1% of the second, 0.5% of cores 3–4 and 0.25%
/// of the rest, each tier truncated to whole millicores in float64 as Karpenter does
/// (1 vCPU → 60m, 2 → 70m, 4 → 80m, 8 → 90m, 96 → 310m).
pub fn kube_reserved_cpu(vcpus: u32) -> Quantity {
    let cpu = i64::from(vcpus) * 1000;
    let tiers: [(i64, i64, f64); 4] = [
        (0, 1000, 0.06),
        (1000, 2000, 0.01),
        (2000, 4000, 0.005),
        (4000, 1 << 31, 0.0025),
    ];
    let mut millis: i64 = 0;
    for (start, end, pct) in tiers {
        if cpu >= start {
            let r = if cpu < end { cpu - start } else { end - start } as f64;
            millis += (r * pct) as i64;
        }
    }
    Quantity::from_millis(i128::from(millis))
}

/// The overhead Karpenter subtracts for this type, family and kubelet configuration.
pub fn overhead(
    it: &InstanceType,
    kubelet: &KubeletConfig,
    family: AmiFamily,
    vm_memory_overhead_percent: f64,
    ephemeral_volume: Option<Quantity>,
) -> Overhead {
    let memory = memory_capacity(it, vm_memory_overhead_percent);
    let storage = ephemeral_volume.unwrap_or(family.default_ephemeral_volume());
    let reserved_pods = if family.uses_eni_limited_memory_overhead() {
        u64::from(it.eni_limited_pods)
    } else {
        pods(it, kubelet, family)
    };
    let reserved_mib = 11 * i128::from(reserved_pods) + 255;
    let mut kube_reserved = ResourceList::new()
        .with("cpu", kube_reserved_cpu(it.vcpus))
        .with("memory", Quantity::from_millis(reserved_mib * MIB * 1000))
        .with("ephemeral-storage", Quantity::from_millis(GIB * 1000));
    for (k, v) in kubelet.kube_reserved.iter() {
        kube_reserved.insert(k, v);
    }

    let storage_bytes = storage.as_millis() as f64 / 1000.0;
    let mut eviction_threshold = ResourceList::new()
        .with("memory", Quantity::from_millis(100 * MIB * 1000))
        .with(
            "ephemeral-storage",
            Quantity::from_millis((storage_bytes / 100.0 * 10.0).ceil() as i128 * 1000),
        );
    for (signal, resource, cap) in [
        (MEMORY_AVAILABLE, "memory", memory),
        (NODEFS_AVAILABLE, "ephemeral-storage", storage),
    ] {
        if let Some(v) = kubelet
            .eviction_hard
            .get(signal)
            .and_then(|v| EvictionValue::parse(v))
        {
            eviction_threshold.insert(resource, v.resolve(cap));
        }
    }
    Overhead {
        kube_reserved,
        system_reserved: kubelet.system_reserved.clone(),
        eviction_threshold,
    }
}

/// Allocatable = capacity − (kube-reserved + system-reserved + eviction threshold), with the
/// AMI family's default root volume. Extended resources pass through unchanged. Values can
/// go negative when reservations exceed capacity, as in Karpenter (nothing then fits).
pub fn allocatable(
    it: &InstanceType,
    kubelet: &KubeletConfig,
    family: AmiFamily,
    vm_memory_overhead_percent: f64,
) -> ResourceList {
    allocatable_with_ephemeral_volume(it, kubelet, family, vm_memory_overhead_percent, None)
}

/// [`allocatable`] with an explicit ephemeral-storage capacity (what
/// [`super::ephemeral::EphemeralStorage::capacity`] makes of the EC2NodeClass
/// `blockDeviceMappings` and `instanceStorePolicy` for this type).
pub fn allocatable_with_ephemeral_volume(
    it: &InstanceType,
    kubelet: &KubeletConfig,
    family: AmiFamily,
    vm_memory_overhead_percent: f64,
    ephemeral_volume: Option<Quantity>,
) -> ResourceList {
    let cap = capacity(
        it,
        kubelet,
        family,
        vm_memory_overhead_percent,
        ephemeral_volume,
    );
    let total = overhead(
        it,
        kubelet,
        family,
        vm_memory_overhead_percent,
        ephemeral_volume,
    )
    .total();
    cap.sub(&total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::catalog::Catalog;

    fn alloc(name: &str, kubelet: &KubeletConfig, family: AmiFamily) -> ResourceList {
        let it = Catalog::builtin().get(name).unwrap();
        allocatable(it, kubelet, family, DEFAULT_VM_MEMORY_OVERHEAD_PERCENT)
    }

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    #[test]
    fn cpu_tiers() {
        for (n, m) in [(1, 60), (2, 70), (3, 75), (4, 80), (8, 90), (96, 310)] {
            assert_eq!(kube_reserved_cpu(n).as_millis(), m, "{n} vCPU");
        }
    }

    #[test]
    fn spec_check_values() {
        let k = KubeletConfig::default();
        assert_eq!(
            alloc("a1.medium", &k, AmiFamily::AL2023).to_json_string(),
            r#"{"cpu":"940m","ephemeral-storage":"17Gi","memory":"1392Mi","pods":"8","vpc.amazonaws.com/pod-eni":"10"}"#
        );
        let g = alloc("g4dn.xlarge", &k, AmiFamily::AL2023);
        assert_eq!(g.get("cpu"), Some(q("3920m")));
        assert_eq!(g.get("memory"), Some(q("14481Mi")));
        assert_eq!(g.get("pods"), Some(q("29")));
        assert_eq!(g.get("nvidia.com/gpu"), Some(q("1")));
    }

    #[test]
    fn kubelet_overrides() {
        let base = alloc("m5.large", &KubeletConfig::default(), AmiFamily::AL2023);
        assert_eq!(base.get("memory"), Some(q("6903Mi")));
        assert_eq!(base.get("pods"), Some(q("29")));

        // maxPods raises pods but not kube-reserved memory on AL2023 (ENI-limited overhead).
        let max110 = KubeletConfig {
            max_pods: Some(110),
            ..KubeletConfig::default()
        };
        let a = alloc("m5.large", &max110, AmiFamily::AL2023);
        assert_eq!(a.get("pods"), Some(q("110")));
        assert_eq!(a.get("memory"), base.get("memory"));
        // On Bottlerocket the final pod count drives it: 81 more pods × 11 MiB.
        let b = alloc("m5.large", &max110, AmiFamily::Bottlerocket);
        assert_eq!(b.get("memory"), Some(q("6012Mi")));

        // kubeReserved memory replaces the 11×pods+255 default (574Mi for 29 pods).
        let kr = KubeletConfig {
            kube_reserved: ResourceList::new().with("memory", q("1Gi")),
            ..KubeletConfig::default()
        };
        assert_eq!(
            alloc("m5.large", &kr, AmiFamily::AL2023).get("memory"),
            Some(q("6453Mi"))
        );

        // evictionHard memory.available 5% of the post-VM-overhead capacity (7577Mi).
        let ev = KubeletConfig {
            eviction_hard: [(MEMORY_AVAILABLE.to_string(), "5%".to_string())].into(),
            ..KubeletConfig::default()
        };
        let cap_bytes: i128 = 7577 * MIB;
        let five = (cap_bytes as f64 / 100.0 * 5.0).ceil() as i128;
        assert_eq!(
            alloc("m5.large", &ev, AmiFamily::AL2023)
                .get("memory")
                .map(Quantity::as_millis),
            Some((cap_bytes - 574 * MIB - five) * 1000)
        );
        // 100% disables the threshold.
        let off = KubeletConfig {
            eviction_hard: [(MEMORY_AVAILABLE.to_string(), "100%".to_string())].into(),
            ..KubeletConfig::default()
        };
        assert_eq!(
            alloc("m5.large", &off, AmiFamily::AL2023).get("memory"),
            Some(q("7003Mi"))
        );
        // nodefs.available as a quantity, and systemReserved.
        let disk = KubeletConfig {
            eviction_hard: [(NODEFS_AVAILABLE.to_string(), "1Gi".to_string())].into(),
            system_reserved: ResourceList::new().with("cpu", q("100m")),
            ..KubeletConfig::default()
        };
        let d = alloc("m5.large", &disk, AmiFamily::AL2023);
        assert_eq!(d.get("ephemeral-storage"), Some(q("18Gi")));
        assert_eq!(d.get("cpu"), Some(q("1830m")));
    }

    #[test]
    fn pods_rules() {
        let it = Catalog::builtin().get("m5.large").unwrap();
        let ppc = KubeletConfig {
            pods_per_core: Some(4),
            ..KubeletConfig::default()
        };
        assert_eq!(pods(it, &ppc, AmiFamily::AL2023), 8);
        assert_eq!(pods(it, &ppc, AmiFamily::Bottlerocket), 29);
        assert_eq!(
            pods(it, &KubeletConfig::default(), AmiFamily::Windows2022),
            110
        );
        let w = alloc(
            "m5.large",
            &KubeletConfig::default(),
            AmiFamily::Windows2022,
        );
        assert_eq!(w.get("ephemeral-storage"), Some(q("44Gi")));
        // Windows sizes kube-reserved memory from 110 pods: 7577 − 1465 − 100.
        assert_eq!(w.get("memory"), Some(q("6012Mi")));
    }

    #[test]
    fn family_parsing() {
        assert_eq!(AmiFamily::parse("AL2023"), Ok(AmiFamily::AL2023));
        assert_eq!("bottlerocket".parse(), Ok(AmiFamily::Bottlerocket));
        assert!(AmiFamily::parse("AL2024").is_err());
        assert_eq!(
            AmiFamily::from_alias("al2023@latest"),
            Ok(AmiFamily::AL2023)
        );
        assert_eq!(
            AmiFamily::from_alias("windows2022@v20240101"),
            Ok(AmiFamily::Windows2022)
        );
        assert!(AmiFamily::from_alias("al2023").is_err());
        assert!(AmiFamily::from_alias("al2023@").is_err());
        assert!(AmiFamily::from_alias("ubuntu@latest").is_err());
        assert_eq!(AmiFamily::Windows2019.windows_build(), Some("10.0.17763"));
        assert_eq!(AmiFamily::Windows2022.os_label("arm64"), None);
        assert_eq!(AmiFamily::AL2.os_label("arm64"), Some("linux"));
    }

    #[test]
    fn validate_eviction() {
        let bad = KubeletConfig {
            eviction_hard: [(MEMORY_AVAILABLE.to_string(), "lots".to_string())].into(),
            ..KubeletConfig::default()
        };
        assert!(bad.validate().is_err());
        assert!(KubeletConfig::default().validate().is_ok());
    }
}
