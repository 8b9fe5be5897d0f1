package provider

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	"github.com/karplint/karplint/oracle/internal/prices"
)

var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

func al2023() *awsv1.EC2NodeClass {
	return &awsv1.EC2NodeClass{
		ObjectMeta: metav1.ObjectMeta{Name: "default"},
		Spec:       awsv1.EC2NodeClassSpec{AMISelectorTerms: []awsv1.AMISelectorTerm{{Alias: "al2023@latest"}}},
	}
}

func csvRows(t *testing.T) []Row {
	t.Helper()
	rows, err := ReadCSV(filepath.Join("..", "..", "..", CSVFile))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func build(t *testing.T, rows []Row, nc *awsv1.EC2NodeClass) map[string]*cloudprovider.InstanceType {
	t.Helper()
	types, err := NewTypes(rows)
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := Context(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	its, _, err := NewBuilder(types, prices.Table{"m5.large": 0.096}).ForNodeClass(ctx, nc, zones)
	if err != nil {
		t.Fatal(err)
	}
	return byName(its)
}

// single is what the provider's docs generator prints of a requirement: its value when it
// has exactly one, else nothing.
func single(it *cloudprovider.InstanceType, key string) string {
	if !it.Requirements.Has(key) {
		return ""
	}
	if v := it.Requirements.Get(key).Values(); len(v) == 1 {
		return v[0]
	}
	return ""
}

var allocatableColumns = []string{"cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu",
	"amd.com/gpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore", "vpc.amazonaws.com/efa",
	"vpc.amazonaws.com/pod-eni"}

// TestReconstructionMatchesTheCSV: every type NewInstanceType builds from the reconstructed
// InstanceTypeInfo under AL2023 with no blockDeviceMappings and no kubelet settings has the
// labels and the allocatable of its CSV row, which the provider's docs generator wrote from
// the same function on DescribeInstanceTypes' answer.
func TestReconstructionMatchesTheCSV(t *testing.T) {
	rows := csvRows(t)
	its := build(t, rows, al2023())
	if len(its) != len(rows) {
		t.Fatalf("built %d types of %d rows", len(its), len(rows))
	}
	for _, r := range rows {
		it := its[r.Name]
		for key, want := range r.Labels {
			if got := single(it, key); got != want {
				t.Errorf("%s label %s: provider %q, csv %q", r.Name, key, got, want)
			}
		}
		if got := single(it, corev1.LabelInstanceTypeStable); got != r.Name {
			t.Errorf("%s: instance-type %q", r.Name, got)
		}
		for key := range it.Requirements {
			if key == corev1.LabelInstanceTypeStable {
				continue
			}
			if _, ok := r.Labels[key]; !ok && single(it, key) != "" && key != corev1.LabelTopologyRegion {
				t.Errorf("%s label %s: provider %q, csv none", r.Name, key, single(it, key))
			}
		}
		alloc := it.Allocatable()
		for _, res := range allocatableColumns {
			want := resource.MustParse("0")
			if v := r.Allocatable[res]; v != "" {
				want = resource.MustParse(v)
			}
			got := alloc[corev1.ResourceName(res)]
			if got.Cmp(want) != 0 {
				t.Errorf("%s allocatable %s: provider %s, csv %s", r.Name, res, got.String(), want.String())
			}
		}
	}
}

func find(t *testing.T, rows []Row, name string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no %s in the CSV", name)
	return Row{}
}

// TestInfo checks the reconstructed InstanceTypeInfo of a few kinds of type.
func TestInfo(t *testing.T) {
	rows := csvRows(t)
	for _, tc := range []struct {
		name                string
		vcpus               int32
		mib                 int64
		arch                string
		gpus, neuron, cores int32
		efa                 int32
		metal               bool
		hypervisor          string
		eni                 ENISource
		enis, ips           int32
	}{
		{name: "m5.large", vcpus: 2, mib: 8192, arch: "x86_64", hypervisor: "nitro", eni: ENIFromProvider, enis: 3, ips: 10},
		{name: "g5.12xlarge", vcpus: 48, mib: 196608, arch: "x86_64", gpus: 4, efa: 1, hypervisor: "nitro", eni: ENIFromProvider, enis: 15, ips: 50},
		{name: "trn1.32xlarge", vcpus: 128, mib: 524288, arch: "x86_64", neuron: 16, cores: 2, efa: 8, hypervisor: "nitro", eni: ENIFromProvider},
		{name: "m5.metal", vcpus: 96, mib: 393216, arch: "x86_64", metal: true, hypervisor: "", eni: ENIFromProvider, enis: 15, ips: 50},
		{name: "m7g.large", vcpus: 2, mib: 8192, arch: "arm64", hypervisor: "nitro", eni: ENIFromProvider, enis: 3, ips: 10},
		{name: "c9g.large", vcpus: 2, mib: 4096, arch: "arm64", hypervisor: "nitro", eni: ENIFromCSV, enis: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, src, err := find(t, rows, tc.name).Info()
			if err != nil {
				t.Fatal(err)
			}
			if *info.VCpuInfo.DefaultVCpus != tc.vcpus || *info.MemoryInfo.SizeInMiB != tc.mib {
				t.Errorf("vcpus %d MiB %d, want %d %d", *info.VCpuInfo.DefaultVCpus, *info.MemoryInfo.SizeInMiB, tc.vcpus, tc.mib)
			}
			if got := string(info.ProcessorInfo.SupportedArchitectures[0]); got != tc.arch {
				t.Errorf("arch %s, want %s", got, tc.arch)
			}
			var gpus int32
			if info.GpuInfo != nil {
				gpus = *info.GpuInfo.Gpus[0].Count
			}
			if gpus != tc.gpus {
				t.Errorf("gpus %d, want %d", gpus, tc.gpus)
			}
			var neuron, cores int32
			if info.NeuronInfo != nil {
				neuron, cores = *info.NeuronInfo.NeuronDevices[0].Count, *info.NeuronInfo.NeuronDevices[0].CoreInfo.Count
			}
			if neuron != tc.neuron || cores != tc.cores {
				t.Errorf("neuron %d × %d cores, want %d × %d", neuron, cores, tc.neuron, tc.cores)
			}
			var efa int32
			if info.NetworkInfo.EfaInfo != nil {
				efa = *info.NetworkInfo.EfaInfo.MaximumEfaInterfaces
			}
			if efa != tc.efa {
				t.Errorf("efa %d, want %d", efa, tc.efa)
			}
			if *info.BareMetal != tc.metal || string(info.Hypervisor) != tc.hypervisor {
				t.Errorf("bare metal %v hypervisor %q, want %v %q", *info.BareMetal, info.Hypervisor, tc.metal, tc.hypervisor)
			}
			if src != tc.eni {
				t.Errorf("network limits from %s, want %s", src, tc.eni)
			}
			if tc.enis > 0 && *info.NetworkInfo.MaximumNetworkInterfaces != tc.enis {
				t.Errorf("%d ENIs, want %d", *info.NetworkInfo.MaximumNetworkInterfaces, tc.enis)
			}
			if tc.ips > 0 && *info.NetworkInfo.Ipv4AddressesPerInterface != tc.ips {
				t.Errorf("%d IPv4 per ENI, want %d", *info.NetworkInfo.Ipv4AddressesPerInterface, tc.ips)
			}
		})
	}
}

// TestNodeClassSettingsReachNewInstanceType: maxPods, kubeReserved and a root volume of the
// EC2NodeClass change the provider's capacity and overhead the way NewInstanceType computes
// them, and Bottlerocket's are its own.
func TestNodeClassSettingsReachNewInstanceType(t *testing.T) {
	rows := []Row{find(t, csvRows(t), "m5.large")}
	nc := al2023()
	nc.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr(int32(20)), KubeReserved: map[string]string{"cpu": "250m"}}
	size := resource.MustParse("80Gi")
	nc.Spec.BlockDeviceMappings = []*awsv1.BlockDeviceMapping{{DeviceName: ptr("/dev/xvda"), RootVolume: true, EBS: &awsv1.BlockDevice{VolumeSize: &size}}}
	it := build(t, rows, nc)["m5.large"]
	for res, want := range map[corev1.ResourceName]string{"pods": "20", "ephemeral-storage": "80Gi", "cpu": "2"} {
		if got := it.Capacity[res]; got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("capacity %s %s, want %s", res, got.String(), want)
		}
	}
	// AL2023's kube-reserved memory follows the ENI-limited pods (29), not maxPods.
	for res, want := range map[corev1.ResourceName]string{"cpu": "250m", "memory": "574Mi"} {
		if got := it.Overhead.KubeReserved[res]; got.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("kubeReserved %s %s, want %s", res, got.String(), want)
		}
	}
	br := al2023()
	br.Spec.AMISelectorTerms = []awsv1.AMISelectorTerm{{Alias: "bottlerocket@latest"}}
	br.Spec.Kubelet = &awsv1.KubeletConfiguration{MaxPods: ptr(int32(20))}
	it = build(t, rows, br)["m5.large"]
	// Bottlerocket's kube-reserved memory follows the pods it runs: 11 × 20 + 255.
	if got := it.Overhead.KubeReserved[corev1.ResourceMemory]; got.Cmp(resource.MustParse("475Mi")) != 0 {
		t.Errorf("bottlerocket kubeReserved memory %s, want 475Mi", got.String())
	}
}

// TestOfferings: every zone × capacity type, the table's price (spot like on-demand), the
// zone-id requirement dropped, and a1 unavailable on AL2023 (the provider's compatibility
// check).
func TestOfferings(t *testing.T) {
	rows := csvRows(t)
	its := build(t, []Row{find(t, rows, "m5.large"), find(t, rows, "a1.medium")}, al2023())
	m5 := its["m5.large"]
	if len(m5.Offerings) != 6 || len(m5.Offerings.Available()) != 6 {
		t.Fatalf("m5.large: %d offerings, %d available", len(m5.Offerings), len(m5.Offerings.Available()))
	}
	for _, o := range m5.Offerings {
		if o.Price != 0.096 {
			t.Errorf("m5.large offering price %v", o.Price)
		}
	}
	if m5.Requirements.Has(awsv1.LabelTopologyZoneID) {
		t.Errorf("m5.large has a zone-id requirement")
	}
	got := m5.Requirements.Get(corev1.LabelTopologyZone).Values()
	sort.Strings(got)
	if len(got) != 3 || got[0] != zones[0] {
		t.Errorf("zones %v", got)
	}
	a1 := its["a1.medium"]
	if len(a1.Offerings.Available()) != 0 {
		t.Errorf("a1.medium on AL2023: %d available offerings", len(a1.Offerings.Available()))
	}
	if a1.Offerings[0].Price != UnpricedPrice {
		t.Errorf("a1.medium without a price: offering price %v", a1.Offerings[0].Price)
	}
}

func ptr[T any](v T) *T { return &v }
