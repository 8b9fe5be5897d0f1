// Package awslabels registers with Karpenter core what the AWS provider registers when it is
// linked in, since the oracle runs core without the provider: the well-known labels, the
// restricted label domain, the known values of instance-tenancy, the reservation labels and
// the EBS CSI zone alias. Mirrors aws/karpenter-provider-aws v1.14.3 pkg/apis/v1/labels.go
// init, pkg/apis/v1/doc.go init and pkg/operator/operator.go (NormalizedLabels). It is data,
// not scheduling logic: the scheduler that reads it is core's.
package awslabels

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// Group is the AWS provider's API group, a restricted label domain.
const Group = "karpenter.k8s.aws"

// Labels of aws pkg/apis/v1/labels.go.
const (
	CapacityReservationID                = Group + "/capacity-reservation-id"
	CapacityReservationType              = Group + "/capacity-reservation-type"
	CapacityReservationInterruptible     = Group + "/capacity-reservation-interruptible"
	InstanceHypervisor                   = Group + "/instance-hypervisor"
	InstanceEncryptionInTransitSupported = Group + "/instance-encryption-in-transit-supported"
	InstanceCategory                     = Group + "/instance-category"
	InstanceCapabilityFlex               = Group + "/instance-capability-flex"
	InstanceFamily                       = Group + "/instance-family"
	InstanceGeneration                   = Group + "/instance-generation"
	InstanceLocalNVME                    = Group + "/instance-local-nvme"
	InstanceSize                         = Group + "/instance-size"
	InstanceCPU                          = Group + "/instance-cpu"
	InstanceCPUManufacturer              = Group + "/instance-cpu-manufacturer"
	InstanceCPUSustainedClockSpeedMhz    = Group + "/instance-cpu-sustained-clock-speed-mhz"
	InstanceMemory                       = Group + "/instance-memory"
	InstanceEBSBandwidth                 = Group + "/instance-ebs-bandwidth"
	InstanceNetworkBandwidth             = Group + "/instance-network-bandwidth"
	InstanceGPUName                      = Group + "/instance-gpu-name"
	InstanceGPUManufacturer              = Group + "/instance-gpu-manufacturer"
	InstanceGPUCount                     = Group + "/instance-gpu-count"
	InstanceGPUMemory                    = Group + "/instance-gpu-memory"
	InstanceAcceleratorName              = Group + "/instance-accelerator-name"
	InstanceAcceleratorManufacturer      = Group + "/instance-accelerator-manufacturer"
	InstanceAcceleratorCount             = Group + "/instance-accelerator-count"
	InstanceTenancy                      = Group + "/instance-tenancy"
	PlacementGroupID                     = Group + "/placement-group-id"
	PlacementGroupPartition              = Group + "/placement-group-partition"
	NodeClass                            = Group + "/ec2nodeclass"
	TopologyZoneID                       = "topology.k8s.aws/zone-id"
)

// DefaultDoesNotExist are the labels aws computeRequirements starts at DoesNotExist and
// sets only when the type has the property (so a type without a GPU has instance-gpu-count
// DoesNotExist, and `Exists` on it excludes the type). The catalog conversion gives a type
// karplint exported without one of these the same DoesNotExist.
var DefaultDoesNotExist = []string{
	corev1.LabelWindowsBuild,
	InstanceCPUManufacturer, InstanceCPUSustainedClockSpeedMhz, InstanceEBSBandwidth,
	InstanceNetworkBandwidth, InstanceCategory, InstanceCapabilityFlex, InstanceFamily,
	InstanceGeneration, InstanceLocalNVME, InstanceSize, InstanceGPUName,
	InstanceGPUManufacturer, InstanceGPUCount, InstanceGPUMemory, InstanceAcceleratorName,
	InstanceAcceleratorManufacturer, InstanceAcceleratorCount,
	CapacityReservationID, CapacityReservationType, CapacityReservationInterruptible,
}

// AlwaysSet are the labels aws computeRequirements always gives a value; a type without
// them is reported by the conversion (the scheduler then treats the label as unconstrained).
var AlwaysSet = []string{
	corev1.LabelInstanceTypeStable, corev1.LabelArchStable, corev1.LabelOSStable,
	corev1.LabelTopologyZone, corev1.LabelTopologyRegion, v1.CapacityTypeLabelKey,
	InstanceCPU, InstanceMemory, InstanceHypervisor, InstanceEncryptionInTransitSupported,
	InstanceTenancy,
}

func init() {
	v1.RestrictedLabelDomains = v1.RestrictedLabelDomains.Insert(Group)
	v1.WellKnownLabels = v1.WellKnownLabels.Insert(
		CapacityReservationID, CapacityReservationType, CapacityReservationInterruptible,
		InstanceHypervisor, InstanceEncryptionInTransitSupported, InstanceCategory,
		InstanceCapabilityFlex, InstanceFamily, InstanceGeneration, InstanceSize,
		InstanceLocalNVME, InstanceCPU, InstanceCPUManufacturer,
		InstanceCPUSustainedClockSpeedMhz, InstanceMemory, InstanceEBSBandwidth,
		InstanceNetworkBandwidth, InstanceGPUName, InstanceGPUManufacturer, InstanceGPUCount,
		InstanceGPUMemory, InstanceAcceleratorName, InstanceAcceleratorManufacturer,
		InstanceAcceleratorCount, TopologyZoneID, InstanceTenancy, corev1.LabelWindowsBuild,
		PlacementGroupID, PlacementGroupPartition,
	)
	v1.WellKnownValuesForRequirements[InstanceTenancy] = sets.New("dedicated", "default")
	cloudprovider.ReservationIDLabel = CapacityReservationID
	cloudprovider.ReservedCapacityLabels.Insert(CapacityReservationID, CapacityReservationType)
	v1.NormalizedLabels["topology.ebs.csi.aws.com/zone"] = corev1.LabelTopologyZone
}
