package provider

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

// clone is an independent copy of it (its Allocatable is computed afresh).
func clone(it *cloudprovider.InstanceType) *cloudprovider.InstanceType {
	ofs := cloudprovider.Offerings{}
	for _, o := range it.Offerings {
		c := *o
		c.Requirements = scheduling.NewRequirements(o.Requirements.Values()...)
		ofs = append(ofs, &c)
	}
	return &cloudprovider.InstanceType{
		Name:         it.Name,
		Requirements: scheduling.NewRequirements(it.Requirements.Values()...),
		Offerings:    ofs,
		Capacity:     it.Capacity.DeepCopy(),
		Overhead: &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      it.Overhead.KubeReserved.DeepCopy(),
			SystemReserved:    it.Overhead.SystemReserved.DeepCopy(),
			EvictionThreshold: it.Overhead.EvictionThreshold.DeepCopy(),
		},
	}
}

func TestCompare(t *testing.T) {
	rows := csvRows(t)
	its := build(t, []Row{find(t, rows, "m5.large"), find(t, rows, "m7g.large")}, al2023())
	m5, m7g := its["m5.large"], its["m7g.large"]
	for _, tc := range []struct {
		name   string
		change func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType
		want   []Difference
	}{
		{name: "equal", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType { return k }},
		{name: "a zero quantity reads as absent", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
			delete(k[0].Capacity, "nvidia.com/gpu")
			return k
		}},
		{name: "memory capacity", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
			k[0].Capacity[corev1.ResourceMemory] = resource.MustParse("7600Mi")
			return k
		}, want: []Difference{
			{Type: "m5.large", Field: "capacity memory", Karplint: "7600Mi", Provider: "7577Mi"},
			{Type: "m5.large", Field: "allocatable memory", Karplint: "6926Mi", Provider: "6903Mi"},
		}},
		{name: "kube-reserved", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
			k[1].Overhead.KubeReserved[corev1.ResourceCPU] = resource.MustParse("80m")
			return k
		}, want: []Difference{
			{Type: "m7g.large", Field: "overhead cpu", Karplint: "80m", Provider: "70m"},
			{Type: "m7g.large", Field: "allocatable cpu", Karplint: "1920m", Provider: "1930m"},
		}},
		{name: "a requirement's values, one missing", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
			delete(k[0].Requirements, awsv1.LabelInstanceTenancy)
			k[0].Requirements[awsv1.LabelInstanceHypervisor] = scheduling.NewRequirement(awsv1.LabelInstanceHypervisor, corev1.NodeSelectorOpDoesNotExist)
			return k
		}, want: []Difference{
			{Type: "m5.large", Field: "requirement " + awsv1.LabelInstanceHypervisor, Karplint: "DoesNotExist", Provider: "In [nitro]"},
			{Type: "m5.large", Field: "requirement " + awsv1.LabelInstanceTenancy, Karplint: Absent, Provider: "In [dedicated default]"},
		}},
		{name: "offerings", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
			for _, o := range k[0].Offerings {
				o.Available = o.Requirements.Get(corev1.LabelTopologyZone).Has("us-east-1a")
			}
			return k
		}, want: []Difference{{Type: "m5.large", Field: "offerings", Karplint: "us-east-1a/on-demand us-east-1a/spot",
			Provider: "us-east-1a/on-demand us-east-1a/spot us-east-1b/on-demand us-east-1b/spot us-east-1c/on-demand us-east-1c/spot"}}},
		{name: "a type only one side has", change: func(k []*cloudprovider.InstanceType) []*cloudprovider.InstanceType {
			x := clone(k[0])
			x.Name = "x9.large"
			return []*cloudprovider.InstanceType{x, k[1]}
		}, want: []Difference{
			{Type: "m5.large", Field: "type", Karplint: Absent, Provider: "present"},
			{Type: "x9.large", Field: "type", Karplint: "present", Provider: Absent},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			karplint := tc.change([]*cloudprovider.InstanceType{clone(m5), clone(m7g)})
			got := Compare("np", karplint, []*cloudprovider.InstanceType{m5, m7g})
			for i := range tc.want {
				tc.want[i].NodePool = "np"
			}
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// TestComparerMemo: a memoised comparison names the NodePool it is asked for.
func TestComparerMemo(t *testing.T) {
	rows := csvRows(t)
	m5 := build(t, []Row{find(t, rows, "m5.large")}, al2023())["m5.large"]
	k := clone(m5)
	k.Capacity[corev1.ResourcePods] = resource.MustParse("110")
	c := NewComparer()
	a := c.Compare("key", "np-a", []*cloudprovider.InstanceType{k}, []*cloudprovider.InstanceType{m5})
	b := c.Compare("key", "np-b", []*cloudprovider.InstanceType{k}, []*cloudprovider.InstanceType{m5})
	if len(a) != 2 || len(b) != 2 || a[0].NodePool != "np-a" || b[0].NodePool != "np-b" || a[0].Field != "capacity pods" {
		t.Errorf("a %+v b %+v", a, b)
	}
}
