package catalog

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/karplint/karplint/oracle/internal/awslabels"
)

func convertShared(t *testing.T) *Converted {
	t.Helper()
	sh, err := ReadShared("../../testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	conv, err := sh.ForNodePools([]string{"general"}).Convert()
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

func TestConvertRequirementsCapacityOverhead(t *testing.T) {
	conv := convertShared(t)
	its := conv.ByNodePool["general"]
	if len(its) != 5 {
		t.Fatalf("got %d types, want 5", len(its))
	}
	m5 := its[0]
	if m5.Name != "m5.large" {
		t.Fatalf("first type %q", m5.Name)
	}
	if got := m5.Requirements.Get(corev1.LabelInstanceTypeStable).Values(); len(got) != 1 || got[0] != "m5.large" {
		t.Errorf("instance-type requirement %v", got)
	}
	if got := m5.Requirements.Get(awslabels.InstanceGeneration).Values(); len(got) != 1 || got[0] != "5" {
		t.Errorf("generation %v", got)
	}
	// Karpenter's own allocatable: capacity − kubeReserved − systemReserved − eviction.
	alloc := m5.Allocatable()
	if got, want := alloc.Cpu().MilliValue(), int64(2000-70); got != want {
		t.Errorf("allocatable cpu %dm, want %dm", got, want)
	}
	wantMem := resource.MustParse("7577Mi")
	wantMem.Sub(resource.MustParse("574Mi"))
	wantMem.Sub(resource.MustParse("100Mi"))
	if alloc.Memory().Cmp(wantMem) != 0 {
		t.Errorf("allocatable memory %s, want %s", alloc.Memory(), &wantMem)
	}
	g4 := its[3]
	if q := g4.Capacity[corev1.ResourceName("nvidia.com/gpu")]; q.Value() != 1 {
		t.Errorf("g4dn gpu capacity %s", &q)
	}
}

func TestConvertOfferings(t *testing.T) {
	m5 := convertShared(t).ByNodePool["general"][0]
	if len(m5.Offerings) != 6 {
		t.Fatalf("%d offerings, want 3 zones × 2 capacity types", len(m5.Offerings))
	}
	spotB := scheduling.NewRequirements(
		scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, "us-east-1b"),
	)
	if got := m5.Offerings.Available().Compatible(spotB); len(got) != 1 {
		t.Errorf("%d spot offerings in us-east-1b, want 1", len(got))
	}
	reserved := scheduling.NewRequirements(scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeReserved))
	if got := m5.Offerings.Compatible(reserved); len(got) != 0 {
		t.Errorf("%d reserved offerings, want none", len(got))
	}
}

// A label the AWS provider starts at DoesNotExist and karplint did not export gets
// DoesNotExist, so `Exists` on it excludes the type as it would on EC2.
func TestConvertFillsAWSDefaults(t *testing.T) {
	f := &File{Version: 1, NodePools: map[string][]InstanceType{"np": {{
		Name:     "x1.large",
		Capacity: map[string]string{"cpu": "2", "memory": "4Gi", "pods": "10"},
	}}}}
	conv, err := f.Convert()
	if err != nil {
		t.Fatal(err)
	}
	it := conv.ByNodePool["np"][0]
	if op := it.Requirements.Get(awslabels.InstanceGPUCount).Operator(); op != corev1.NodeSelectorOpDoesNotExist {
		t.Errorf("gpu-count operator %s, want DoesNotExist", op)
	}
	if conv.Filled[awslabels.InstanceGPUCount] != 1 || conv.Missing[corev1.LabelArchStable] != 1 || conv.Derived[corev1.LabelTopologyZone] != 0 {
		t.Errorf("filled %v missing %v", conv.Filled, conv.Missing)
	}
	podWantsGPU := scheduling.NewRequirements(scheduling.NewRequirement(awslabels.InstanceGPUCount, corev1.NodeSelectorOpExists))
	if it.Requirements.Intersects(podWantsGPU) == nil {
		t.Error("a type without GPUs intersects instance-gpu-count Exists")
	}
}

func TestConvertRejectsBadInput(t *testing.T) {
	for name, it := range map[string]InstanceType{
		"operator": {Name: "a", Requirements: []Requirement{{Key: "k", Operator: "Like"}}},
		"quantity": {Name: "a", Capacity: map[string]string{"cpu": "two"}},
	} {
		f := &File{Version: 1, NodePools: map[string][]InstanceType{"np": {it}}}
		if _, err := f.Convert(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Parse([]byte(`{"version": 2}`)); err == nil {
		t.Error("version 2 accepted")
	}
}

// Zone, region and capacity type come from the offerings when karplint leaves them out, so
// Karpenter's topology still sees the zones as domains.
func TestConvertDerivesZonesFromOfferings(t *testing.T) {
	f := &File{Version: 1, NodePools: map[string][]InstanceType{"np": {{
		Name:     "m5.large",
		Capacity: map[string]string{"cpu": "2"},
		Offerings: []Offering{
			{Zone: "us-east-1b", CapacityType: "spot", Available: true},
			{Zone: "us-east-1a", CapacityType: "on-demand", Available: true},
		},
	}}}}
	conv, err := f.Convert()
	if err != nil {
		t.Fatal(err)
	}
	reqs := conv.ByNodePool["np"][0].Requirements
	for key, want := range map[string]string{
		corev1.LabelTopologyZone:   "[us-east-1a us-east-1b]",
		corev1.LabelTopologyRegion: "[us-east-1]",
		v1.CapacityTypeLabelKey:    "[on-demand spot]",
	} {
		if got := fmt.Sprint(sets.List(sets.New(reqs.Get(key).Values()...))); got != want {
			t.Errorf("%s = %s, want %s", key, got, want)
		}
	}
	if conv.Derived[corev1.LabelTopologyZone] != 1 {
		t.Errorf("derived %v", conv.Derived)
	}
}
