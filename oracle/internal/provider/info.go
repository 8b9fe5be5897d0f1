package provider

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"k8s.io/apimachinery/pkg/api/resource"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
)

// ENISource says where a reconstructed type's network limits (interfaces, IPv4 addresses per
// interface, network cards) come from.
type ENISource string

const (
	// ENIFromProvider: the provider's own table (instancetype.Limits, zz_generated.vpclimits.go).
	ENIFromProvider ENISource = "provider table"
	// ENIFromCSV: the type is not in that table; one interface with (pods − 1) addresses,
	// the inverse of the CSV's ENI-limited pod count (max ENIs × (IPv4 per ENI − 1) + 2).
	ENIFromCSV ENISource = "csv pods"
)

// EC2 spells manufacturers in capitals where the provider's labels are lower-kebab-case
// (lowerKabobCase); the provider compares GPU manufacturers in EC2's spelling
// (nvidiaGPUs: "NVIDIA", amdGPUs: "AMD", habanaGaudis: "Habana").
var ec2Manufacturer = map[string]string{
	"nvidia": "NVIDIA", "amd": "AMD", "habana": "Habana", "intel": "Intel", "aws": "AWS",
	"qualcomm": "Qualcomm", "xilinx": "Xilinx",
}

func manufacturer(label string) *string {
	if m, ok := ec2Manufacturer[label]; ok {
		return aws.String(m)
	}
	return aws.String(label)
}

// Info rebuilds the ec2types.InstanceTypeInfo (what DescribeInstanceTypes returns) that
// NewInstanceType reads, from what the CSV states of the type: vCPUs, MiB, architecture, CPU
// manufacturer and sustained clock, hypervisor, encryption in transit, EBS bandwidth, local
// NVMe, GPUs, Neuron devices and other inference accelerators, EFA interfaces. Bare metal and
// the network limits come from the provider's table when it has the type. Nothing else is
// filled: the provider reads nothing else (the network bandwidth label and pod-eni come from
// its own tables).
func (r Row) Info() (ec2types.InstanceTypeInfo, ENISource, error) {
	info := ec2types.InstanceTypeInfo{
		InstanceType: ec2types.InstanceType(r.Name),
		// Every type is offered on-demand and spot (docs/oracle-contract.md "A scenario").
		SupportedUsageClasses:        []ec2types.UsageClassType{ec2types.UsageClassTypeOnDemand, ec2types.UsageClassTypeSpot},
		SupportedVirtualizationTypes: []ec2types.VirtualizationType{ec2types.VirtualizationTypeHvm},
		// The hypervisor label is always set (In [info.Hypervisor]); bare metal has none,
		// which the CSV writes as an empty cell.
		Hypervisor: ec2types.InstanceTypeHypervisor(r.Label(awsv1.LabelInstanceHypervisor)),
	}
	vcpus, err := r.int(awsv1.LabelInstanceCPU, true)
	if err != nil {
		return info, "", err
	}
	info.VCpuInfo = &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(int32(vcpus))}
	mib, err := r.int(awsv1.LabelInstanceMemory, true)
	if err != nil {
		return info, "", err
	}
	info.MemoryInfo = &ec2types.MemoryInfo{SizeInMiB: aws.Int64(mib)}

	arch := map[string]ec2types.ArchitectureType{"amd64": ec2types.ArchitectureTypeX8664, "arm64": ec2types.ArchitectureTypeArm64}[r.Label("kubernetes.io/arch")]
	if arch == "" {
		return info, "", fmt.Errorf("%s: kubernetes.io/arch %q is neither amd64 nor arm64", r.Name, r.Label("kubernetes.io/arch"))
	}
	info.ProcessorInfo = &ec2types.ProcessorInfo{SupportedArchitectures: []ec2types.ArchitectureType{arch}}
	if m := r.Label(awsv1.LabelInstanceCPUManufacturer); m != "" {
		info.ProcessorInfo.Manufacturer = manufacturer(m)
	}
	if mhz, err := r.int(awsv1.LabelInstanceCPUSustainedClockSpeedMhz, false); err != nil {
		return info, "", err
	} else if mhz > 0 {
		info.ProcessorInfo.SustainedClockSpeedInGhz = aws.Float64(float64(mhz) / 1000)
	}

	if ebs, err := r.int(awsv1.LabelInstanceEBSBandwidth, false); err != nil {
		return info, "", err
	} else if ebs > 0 {
		info.EbsInfo = &ec2types.EbsInfo{
			EbsOptimizedSupport: ec2types.EbsOptimizedSupportDefault,
			EbsOptimizedInfo:    &ec2types.EbsOptimizedInfo{MaximumBandwidthInMbps: aws.Int32(int32(ebs))},
		}
	}
	if nvme, err := r.int(awsv1.LabelInstanceLocalNVME, false); err != nil {
		return info, "", err
	} else if nvme > 0 {
		info.InstanceStorageInfo = &ec2types.InstanceStorageInfo{
			NvmeSupport:   ec2types.EphemeralNvmeSupportRequired,
			TotalSizeInGB: aws.Int64(nvme),
		}
	}

	if err := r.gpus(&info); err != nil {
		return info, "", err
	}
	if err := r.accelerators(&info); err != nil {
		return info, "", err
	}

	enc, err := r.bool(awsv1.LabelInstanceEncryptionInTransitSupported)
	if err != nil {
		return info, "", err
	}
	info.NetworkInfo = &ec2types.NetworkInfo{EncryptionInTransitSupported: aws.Bool(enc)}
	efa, err := r.quantity("vpc.amazonaws.com/efa")
	if err != nil {
		return info, "", err
	}
	if efa > 0 {
		info.NetworkInfo.EfaSupported = aws.Bool(true)
		info.NetworkInfo.EfaInfo = &ec2types.EfaInfo{MaximumEfaInterfaces: aws.Int32(int32(efa))}
	}
	src, err := r.network(&info)
	if err != nil {
		return info, "", err
	}
	return info, src, nil
}

// network fills the interfaces, addresses and cards from instancetype.Limits, or from the
// CSV's pod count for a type the table lacks.
func (r Row) network(info *ec2types.InstanceTypeInfo) (ENISource, error) {
	if l, ok := instancetype.Limits[r.Name]; ok && len(l.NetworkCards) > 0 {
		info.NetworkInfo.MaximumNetworkInterfaces = aws.Int32(int32(l.Interface))
		info.NetworkInfo.Ipv4AddressesPerInterface = aws.Int32(int32(l.IPv4PerInterface))
		info.NetworkInfo.DefaultNetworkCardIndex = aws.Int32(int32(l.DefaultNetworkCardIndex))
		info.NetworkInfo.MaximumNetworkCards = aws.Int32(int32(len(l.NetworkCards)))
		for _, c := range l.NetworkCards {
			info.NetworkInfo.NetworkCards = append(info.NetworkInfo.NetworkCards, ec2types.NetworkCardInfo{
				MaximumNetworkInterfaces: aws.Int32(int32(c.MaximumNetworkInterfaces)),
				NetworkCardIndex:         aws.Int32(int32(c.NetworkCardIndex)),
			})
		}
		info.BareMetal = aws.Bool(l.IsBareMetal)
		return ENIFromProvider, nil
	}
	pods, err := r.quantity("pods")
	if err != nil {
		return "", err
	}
	if pods < 3 {
		return "", fmt.Errorf("%s: not in the provider's ENI table and allocatable pods %d gives no interface", r.Name, pods)
	}
	info.NetworkInfo.MaximumNetworkInterfaces = aws.Int32(1)
	info.NetworkInfo.Ipv4AddressesPerInterface = aws.Int32(int32(pods - 1))
	info.NetworkInfo.DefaultNetworkCardIndex = aws.Int32(0)
	info.NetworkInfo.MaximumNetworkCards = aws.Int32(1)
	info.NetworkInfo.NetworkCards = []ec2types.NetworkCardInfo{{MaximumNetworkInterfaces: aws.Int32(1), NetworkCardIndex: aws.Int32(0)}}
	info.BareMetal = aws.Bool(strings.HasPrefix(r.Label(awsv1.LabelInstanceSize), "metal"))
	return ENIFromCSV, nil
}

// gpus: one GPU device of the labelled name, manufacturer, count and memory (every GPU type
// of the CSV has exactly one kind of GPU, so the provider sets the GPU labels).
func (r Row) gpus(info *ec2types.InstanceTypeInfo) error {
	name := r.Label(awsv1.LabelInstanceGPUName)
	if name == "" {
		return nil
	}
	count, err := r.int(awsv1.LabelInstanceGPUCount, true)
	if err != nil {
		return err
	}
	mem, err := r.int(awsv1.LabelInstanceGPUMemory, true)
	if err != nil {
		return err
	}
	info.GpuInfo = &ec2types.GpuInfo{Gpus: []ec2types.GpuDeviceInfo{{
		Name:         aws.String(name),
		Manufacturer: manufacturer(r.Label(awsv1.LabelInstanceGPUManufacturer)),
		Count:        aws.Int32(int32(count)),
		MemoryInfo:   &ec2types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(int32(mem))},
	}}}
	return nil
}

// accelerators: Neuron devices (the type has aws.amazon.com/neuron; cores per device =
// neuroncore / neuron), else one kind of inference accelerator.
func (r Row) accelerators(info *ec2types.InstanceTypeInfo) error {
	name := r.Label(awsv1.LabelInstanceAcceleratorName)
	neuron, err := r.quantity("aws.amazon.com/neuron")
	if err != nil {
		return err
	}
	if neuron > 0 {
		cores, err := r.quantity("aws.amazon.com/neuroncore")
		if err != nil {
			return err
		}
		if cores%neuron != 0 {
			return fmt.Errorf("%s: %d neuron cores over %d devices", r.Name, cores, neuron)
		}
		info.NeuronInfo = &ec2types.NeuronInfo{NeuronDevices: []ec2types.NeuronDeviceInfo{{
			Name:     aws.String(name),
			Count:    aws.Int32(int32(neuron)),
			CoreInfo: &ec2types.NeuronDeviceCoreInfo{Count: aws.Int32(int32(cores / neuron))},
		}}}
		return nil
	}
	if name == "" {
		return nil
	}
	count, err := r.int(awsv1.LabelInstanceAcceleratorCount, true)
	if err != nil {
		return err
	}
	info.InferenceAcceleratorInfo = &ec2types.InferenceAcceleratorInfo{Accelerators: []ec2types.InferenceDeviceInfo{{
		Name:         aws.String(name),
		Manufacturer: manufacturer(r.Label(awsv1.LabelInstanceAcceleratorManufacturer)),
		Count:        aws.Int32(int32(count)),
	}}}
	return nil
}

func (r Row) int(key string, required bool) (int64, error) {
	v := r.Label(key)
	if v == "" {
		if required {
			return 0, fmt.Errorf("%s: no %s", r.Name, key)
		}
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s=%q: %w", r.Name, key, v, err)
	}
	return n, nil
}

func (r Row) bool(key string) (bool, error) {
	v := r.Label(key)
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%s: %s=%q: %w", r.Name, key, v, err)
	}
	return b, nil
}

// quantity is an allocatable column as an integer (0 when empty).
func (r Row) quantity(res string) (int64, error) {
	v := r.Allocatable[res]
	if v == "" {
		return 0, nil
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return 0, fmt.Errorf("%s: allocatable %s=%q: %w", r.Name, res, v, err)
	}
	return q.Value(), nil
}
