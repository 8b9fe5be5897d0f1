package karpsim

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	pscheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	instancefilter "github.com/aws/karpenter-provider-aws/pkg/providers/instance/filter"

	"github.com/karplint/karplint/oracle/internal/prices"
)

// Launched is one NodeClaim of a round that became a node.
type Launched struct {
	Round        int      `json:"round"`
	Node         string   `json:"node"`
	NodePool     string   `json:"nodepool"`
	InstanceType string   `json:"instanceType"`
	Zone         string   `json:"zone"`
	CapacityType string   `json:"capacityType"`
	Pods         []string `json:"pods"`
}

// launcher turns the NodeClaims of one Provisioner.Schedule into nodes, the way Karpenter's
// lifecycle controller and the AWS provider's instance.Create would: the capacity type
// (getCapacityType: spot when the NodeClaim allows it and some type offers it, else
// on-demand), the instance types (filterInstanceTypes: exotic types dropped when others
// remain; then the cheapest by the static on-demand table, as CreateFleet's `lowest-price`
// strategy does; spot is priced like on-demand until live spot prices arrive,
// pricing.go populateInitialSpotPricing), the first zone open to the NodeClaim, and the
// Node registered and initialized with the NodeClaim's labels and taints (startup taints
// removed, as after initialization).
type launcher struct {
	prices prices.Table
	zones  []string
	n      int
}

// launch picks the instance type, zone and capacity type of nc; nil when none of its
// types has an available offering (the AWS provider's Create then fails: InsufficientCapacity).
func (l *launcher) launch(nc *pscheduling.NodeClaim) (*cloudprovider.InstanceType, string, string) {
	reqs := scheduling.NewRequirements(nc.Requirements.Values()...)
	capacityType := v1.CapacityTypeOnDemand
	if reqs.Get(v1.CapacityTypeLabelKey).Has(v1.CapacityTypeSpot) {
		spot := scheduling.NewRequirements(reqs.Values()...)
		spot.Add(scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, v1.CapacityTypeSpot))
		for _, it := range nc.InstanceTypeOptions {
			if len(it.Offerings.Available().Compatible(spot)) > 0 {
				capacityType = v1.CapacityTypeSpot
				break
			}
		}
	}
	reqs.Add(scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, capacityType))
	options := []*cloudprovider.InstanceType{}
	for _, it := range nc.InstanceTypeOptions {
		if len(it.Offerings.Available().Compatible(reqs)) > 0 {
			options = append(options, it)
		}
	}
	if len(options) == 0 {
		return nil, "", ""
	}
	// The provider's own filter: bare metal, GPUs and accelerators dropped when other
	// types remain and the NodeClaim has no minValues.
	options, _ = instancefilter.ExoticInstanceTypeFilter(reqs).FilterReject(options)
	it := l.cheapest(options)
	zone := ""
	for _, z := range l.zones {
		zr := scheduling.NewRequirements(reqs.Values()...)
		zr.Add(scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, z))
		if reqs.Get(corev1.LabelTopologyZone).Has(z) && len(it.Offerings.Available().Compatible(zr)) > 0 {
			zone = z
			break
		}
	}
	return it, zone, capacityType
}

// cheapest is the type CreateFleet's lowest-price strategy launches: the lowest static
// on-demand price; a type the table lacks comes last (its offerings are unavailable to the
// provider, offering/base_resolver.go), the smaller (cpu, then memory) first; the name breaks
// ties (upstream's sort.Slice leaves equal prices in no order).
func (l *launcher) cheapest(its []*cloudprovider.InstanceType) *cloudprovider.InstanceType {
	s := append([]*cloudprovider.InstanceType(nil), its...)
	sort.SliceStable(s, func(a, b int) bool {
		pa, oka := l.prices[s[a].Name]
		pb, okb := l.prices[s[b].Name]
		switch {
		case oka && okb && pa != pb:
			return pa < pb
		case oka != okb:
			return oka
		case !oka && !okb:
			if c := s[a].Capacity.Cpu().Cmp(*s[b].Capacity.Cpu()); c != 0 {
				return c < 0
			}
			if c := s[a].Capacity.Memory().Cmp(*s[b].Capacity.Memory()); c != 0 {
				return c < 0
			}
		}
		return s[a].Name < s[b].Name
	})
	return s[0]
}

// nodeFor builds the NodeClaim (NodeClaimTemplate.ToNodeClaim, then what the lifecycle
// controller's launch and registration write: providerID, capacity, allocatable, the
// labels of the launched instance) and its Node, registered and initialized.
func (l *launcher) nodeFor(nc *pscheduling.NodeClaim, it *cloudprovider.InstanceType, zone, capacityType string) (*v1.NodeClaim, *corev1.Node) {
	l.n++
	name := fmt.Sprintf("%s-launched-%04d", nc.NodePoolName, l.n)
	claim := nc.ToNodeClaim()
	claim.Name = name
	claim.UID = types.UID("nodeclaim/" + name)
	labels := map[string]string{}
	for k, v := range claim.Labels {
		labels[k] = v
	}
	// The AWS provider's instanceToNodeClaim: every single-valued requirement of the
	// launched type becomes a label, with the zone and capacity type of its offering.
	for _, key := range it.Requirements.Keys().UnsortedList() {
		r := it.Requirements.Get(key)
		if r.Operator() == corev1.NodeSelectorOpIn && r.Len() == 1 {
			labels[key] = r.Any()
		}
	}
	labels[corev1.LabelInstanceTypeStable] = it.Name
	if zone != "" {
		labels[corev1.LabelTopologyZone] = zone
	}
	labels[v1.CapacityTypeLabelKey] = capacityType
	labels[corev1.LabelHostname] = name
	labels[v1.NodePoolLabelKey] = nc.NodePoolName
	labels[v1.NodeRegisteredLabelKey] = "true"
	labels[v1.NodeInitializedLabelKey] = "true"
	claim.Labels = labels
	providerID := "aws:///" + zone + "/" + name
	capacity := it.Capacity.DeepCopy()
	allocatable := it.Allocatable()
	claim.Status.ProviderID = providerID
	claim.Status.NodeName = name
	claim.Status.Capacity = capacity
	claim.Status.Allocatable = allocatable
	claim.StatusConditions().SetTrue(v1.ConditionTypeLaunched)
	claim.StatusConditions().SetTrue(v1.ConditionTypeRegistered)
	claim.StatusConditions().SetTrue(v1.ConditionTypeInitialized)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("node/" + name), Labels: labels},
		Spec: corev1.NodeSpec{
			ProviderID: providerID,
			Taints:     append([]corev1.Taint(nil), claim.Spec.Taints...),
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity.DeepCopy(),
			Allocatable: allocatable.DeepCopy(),
			Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
		},
	}
	return claim, node
}

// daemonPodsFor are the pods the DaemonSet controller would create on node: one per
// DaemonSet whose pod tolerates the node's NoSchedule and NoExecute taints (the controller's
// predicates leave PreferNoSchedule aside, as Karpenter's scheduler does once
// isDaemonPodCompatible has made its DaemonSet pods tolerate them) and whose required node
// affinity and selector the node's labels meet (scheduler.go isDaemonPodCompatibleWithNode),
// owned by its DaemonSet so Karpenter counts it as daemon overhead (StateNode.updateForPod)
// and its host ports as taken.
func daemonPodsFor(ctx context.Context, node *corev1.Node, dss []*appsv1.DaemonSet) []*corev1.Pod {
	var binding []corev1.Taint
	for _, t := range node.Spec.Taints {
		if t.Effect != corev1.TaintEffectPreferNoSchedule {
			binding = append(binding, t)
		}
	}
	var out []*corev1.Pod
	for _, ds := range dss {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:      ds.Name + "-" + node.Name,
				Namespace: ds.Namespace,
				UID:       types.UID(ds.Namespace + "/" + ds.Name + "-" + node.Name),
				Labels:    ds.Spec.Template.Labels,
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.Name,
					UID: types.UID("ds/" + ds.Namespace + "/" + ds.Name), Controller: ptr.To(true),
				}},
			},
			Spec: *ds.Spec.Template.Spec.DeepCopy(),
		}
		if err := scheduling.Taints(binding).ToleratesPod(p); err != nil {
			continue
		}
		if err := scheduling.NewLabelRequirements(node.Labels).Compatible(scheduling.NewStrictPodRequirements(p)); err != nil {
			continue
		}
		defaultRequests(p)
		bindTo(p, node.Name)
		out = append(out, p)
	}
	_ = ctx
	return out
}

// bindTo is what the kube-scheduler's binding writes: the node name, Running, PodScheduled.
func bindTo(p *corev1.Pod, node string) {
	p.Spec.NodeName = node
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}}
}

var _ = resource.MustParse
