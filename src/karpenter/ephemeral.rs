//! Simulator, AWS part: the ephemeral-storage capacity of a node, from its EC2NodeClass.
//!
//! Karpenter sizes a node's `ephemeral-storage` from the node class, not the instance type,
//! with one exception: under `instanceStorePolicy: RAID0` the instance store is the node's
//! disk, so the capacity is the type's NVMe total (karpenter-model §6.1). Otherwise the block
//! device mapping marked `rootVolume: true` decides, then the mapping on the AMI family's ephemeral
//! device (Bottlerocket's data volume `/dev/xvdb`, not its OS volume `/dev/xvda`), then the
//! family's default mapping. Mirrors aws `pkg/providers/instancetype/types.go`
//! `ephemeralStorage` and `pkg/providers/amifamily/*.go` `EphemeralBlockDevice` /
//! `DefaultBlockDeviceMappings` at karpenter-provider-aws v1.14.2.

use super::allocatable::AmiFamily;
use super::catalog::{InstanceType, LABEL_LOCAL_NVME};
use crate::quantity::Quantity;

/// One `spec.blockDeviceMappings[]` entry, as much of it as sizes ephemeral-storage.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockDeviceMapping {
    /// `deviceName`, e.g. `/dev/xvda`.
    pub device_name: Option<String>,
    /// `rootVolume`.
    pub root_volume: bool,
    /// `ebs.volumeSize`, when set and a valid quantity.
    pub volume_size: Option<Quantity>,
}

/// What backs a node's ephemeral-storage under one node class. Allocatable is cached per
/// node configuration (see `pool::TypeRequirementCache`): this is the part of that key which
/// is the same for every type, even where the capacity is not (RAID0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EphemeralStorage {
    /// An EBS volume of this size, whatever the instance type.
    Volume(Quantity),
    /// `instanceStorePolicy: RAID0`: the instance type's NVMe instance-store total; a type
    /// without instance store gets the `ebs` volume.
    Raid0 {
        /// The volume a type without instance store uses.
        ebs: Quantity,
    },
}

impl EphemeralStorage {
    /// The storage policy of a node class with AMI family `family`, block device mappings
    /// `mappings` and, when `raid0`, `instanceStorePolicy: RAID0`.
    pub fn of(family: AmiFamily, mappings: &[BlockDeviceMapping], raid0: bool) -> Self {
        let ebs = ebs_volume(family, mappings);
        if raid0 {
            EphemeralStorage::Raid0 { ebs }
        } else {
            EphemeralStorage::Volume(ebs)
        }
    }

    /// The ephemeral-storage capacity of a node of type `it`. Mirrors the RAID0 branch of
    /// `types.go` `ephemeralStorage`: `TotalSizeInGB` as a decimal `"<n>G"` quantity (so
    /// m6idn.32xlarge has `7600G`, as the provider's "should launch instances w/ instance
    /// storage for ephemeral storage resource requests when disks are mounted for
    /// ephemeral-storage" expects). The catalog knows that total from the
    /// `karpenter.k8s.aws/instance-local-nvme` label, which it has for NVMe instance store
    /// only: a type with HDD or SATA instance store (d2, h1, older xen types) gets the EBS
    /// volume here, where Karpenter would take its instance-store total.
    pub fn capacity(self, it: &InstanceType) -> Quantity {
        match self {
            EphemeralStorage::Volume(q) => q,
            EphemeralStorage::Raid0 { ebs } => it
                .label(LABEL_LOCAL_NVME)
                .and_then(|gb| gb.parse::<i64>().ok())
                .filter(|gb| *gb > 0)
                .map(|gb| Quantity::from_millis(i128::from(gb) * 1_000_000_000 * 1000))
                .unwrap_or(ebs),
        }
    }
}

/// The EBS volume that backs ephemeral-storage: the non-RAID0 part of `types.go`
/// `ephemeralStorage`. With mappings: the first `rootVolume: true` one that has a size; on
/// Custom (no known ephemeral device) the *last* mapping's size, else `DefaultEBS` (20Gi);
/// elsewhere the mapping on the family's ephemeral device, if it has a size. Otherwise the
/// size of the family's default mapping for that device.
fn ebs_volume(family: AmiFamily, mappings: &[BlockDeviceMapping]) -> Quantity {
    if !mappings.is_empty() {
        if let Some(size) = mappings
            .iter()
            .find(|m| m.root_volume)
            .and_then(|m| m.volume_size)
        {
            return size;
        }
        match family.ephemeral_block_device() {
            None => {
                return mappings
                    .last()
                    .and_then(|m| m.volume_size)
                    .unwrap_or(family.default_ephemeral_volume());
            }
            Some(device) => {
                if let Some(size) = mappings
                    .iter()
                    .find(|m| m.device_name.as_deref() == Some(device))
                    .and_then(|m| m.volume_size)
                {
                    return size;
                }
            }
        }
    }
    family.default_ephemeral_volume()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::karpenter::catalog::Catalog;

    fn q(s: &str) -> Quantity {
        Quantity::parse(s).unwrap()
    }

    fn bdm(device: &str, root: bool, size: Option<&str>) -> BlockDeviceMapping {
        BlockDeviceMapping {
            device_name: Some(device.to_string()),
            root_volume: root,
            volume_size: size.map(q),
        }
    }

    /// One row per upstream case (aws `pkg/providers/instancetype/suite_test.go` and
    /// `launchtemplate/suite_test.go` at v1.14.2, named by their `It(…)`), plus the branches
    /// of `ephemeralStorage` they leave implicit.
    #[allow(clippy::too_many_lines, reason = "one table, a row per case")]
    #[test]
    fn ephemeral_storage_follows_the_provider() {
        let al2023_default = AmiFamily::AL2023.default_ephemeral_volume();
        /// (upstream case name, family, mappings, RAID0, instance type, expected capacity)
        type Row = (
            &'static str,
            AmiFamily,
            Vec<BlockDeviceMapping>,
            bool,
            &'static str,
            &'static str,
        );
        let rows: &[Row] = &[
            (
                "should default to EBS defaults when volumeSize is not defined in blockDeviceMappings for AL2 Root volume",
                AmiFamily::AL2,
                vec![bdm("/dev/xvda", false, None)],
                false,
                "m5.large",
                "20Gi",
            ),
            (
                "should default to EBS defaults when volumeSize is not defined in blockDeviceMappings for AL2023 Root volume",
                AmiFamily::AL2023,
                vec![bdm("/dev/xvda", false, None)],
                false,
                "m5.large",
                "20Gi",
            ),
            (
                "should default to EBS defaults when volumeSize is not defined in blockDeviceMappings for Bottlerocket Root volume",
                AmiFamily::Bottlerocket,
                vec![bdm("/dev/xvdb", false, None)],
                false,
                "m5.large",
                "20Gi",
            ),
            (
                "should default to EBS defaults when volumeSize is not defined in blockDeviceMappings for custom AMIs",
                AmiFamily::Custom,
                vec![bdm("/dev/xvda", false, None)],
                false,
                "m5.large",
                "20Gi",
            ),
            (
                "should pack pods using the configured root volume in blockdevicemappings",
                AmiFamily::Custom,
                vec![
                    bdm("/dev/xvda", false, Some("20G")),
                    bdm("/dev/xvdb", true, Some("40G")),
                    bdm("/dev/xvdc", false, Some("20G")),
                ],
                false,
                "m5.large",
                "40G",
            ),
            (
                "should pack pods if the pod's ephemeral-storage exceeds node capacity and instance storage is mounted",
                AmiFamily::AL2023,
                vec![],
                true,
                "m6idn.32xlarge",
                "7600G",
            ),
            (
                "should launch instances w/ instance storage for ephemeral storage resource requests when disks are mounted for ephemeral-storage",
                AmiFamily::AL2023,
                vec![],
                true,
                "m6idn.32xlarge",
                "7600G",
            ),
            (
                "should not launch instances w/ instance storage for ephemeral storage resource requests when exceeding blockDeviceMapping",
                AmiFamily::AL2023,
                vec![],
                false,
                "m6idn.32xlarge",
                "20Gi",
            ),
            // RAID0 wins over a root volume, on a type that has instance store.
            (
                "raid0 before the root volume",
                AmiFamily::AL2023,
                vec![bdm("/dev/xvda", true, Some("100Gi"))],
                true,
                "m5d.large",
                "75G",
            ),
            // RAID0 on a type without instance store falls back to the EBS volume.
            (
                "raid0 without instance store",
                AmiFamily::AL2023,
                vec![bdm("/dev/xvda", true, Some("100Gi"))],
                true,
                "m5.large",
                "100Gi",
            ),
            // Bottlerocket's /dev/xvda is its OS volume: only /dev/xvdb sizes ephemeral-storage.
            (
                "bottlerocket os volume does not count",
                AmiFamily::Bottlerocket,
                vec![bdm("/dev/xvda", false, Some("200Gi"))],
                false,
                "m5.large",
                "20Gi",
            ),
            (
                "bottlerocket data volume",
                AmiFamily::Bottlerocket,
                vec![
                    bdm("/dev/xvda", false, Some("4Gi")),
                    bdm("/dev/xvdb", false, Some("200Gi")),
                ],
                false,
                "m5.large",
                "200Gi",
            ),
            (
                "al2023 xvda",
                AmiFamily::AL2023,
                vec![bdm("/dev/xvda", false, Some("80Gi"))],
                false,
                "m5.large",
                "80Gi",
            ),
            (
                "windows sda1",
                AmiFamily::Windows2022,
                vec![bdm("/dev/sda1", false, Some("120Gi"))],
                false,
                "m5.large",
                "120Gi",
            ),
            (
                "windows default",
                AmiFamily::Windows2022,
                vec![bdm("/dev/xvda", false, Some("120Gi"))],
                false,
                "m5.large",
                "50Gi",
            ),
            // Custom: the last mapping, whatever its device.
            (
                "custom last mapping",
                AmiFamily::Custom,
                vec![
                    bdm("/dev/xvda", false, Some("30Gi")),
                    bdm("/dev/xvdz", false, Some("300Gi")),
                ],
                false,
                "m5.large",
                "300Gi",
            ),
            // A root volume without a size does not win: the device mapping decides.
            (
                "root volume without size",
                AmiFamily::AL2023,
                vec![
                    bdm("/dev/xvdb", true, None),
                    bdm("/dev/xvda", false, Some("60Gi")),
                ],
                false,
                "m5.large",
                "60Gi",
            ),
        ];
        assert_eq!(al2023_default, q("20Gi"));
        let catalog = Catalog::builtin();
        for (name, family, mappings, raid0, ty, want) in rows {
            let it = catalog.get(ty).unwrap();
            let got = EphemeralStorage::of(*family, mappings, *raid0).capacity(it);
            assert_eq!(got, q(want), "{name}");
        }
    }
}
