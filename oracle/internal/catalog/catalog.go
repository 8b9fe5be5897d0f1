// Package catalog turns the instance types that `karplint debug instance-types DIR` prints
// (schema in docs/oracle-contract.md) into Karpenter's []*cloudprovider.InstanceType per NodePool,
// shaped the way the AWS provider builds them (pkg/providers/instancetype/types.go
// computeRequirements and offering/base_resolver.go at aws v1.14.3), so the real scheduler
// sees the same catalog karplint reasons with.
package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	"github.com/karplint/karplint/oracle/internal/awslabels"
)

// File is the whole `karplint debug instance-types` document.
type File struct {
	Version   int                       `json:"version"`
	Zones     []string                  `json:"zones"`
	NodePools map[string][]InstanceType `json:"nodePools"`
}

// InstanceType is one type a NodePool's EC2NodeClass can launch.
type InstanceType struct {
	Name         string            `json:"name"`
	Requirements []Requirement     `json:"requirements"`
	Offerings    []Offering        `json:"offerings"`
	Capacity     map[string]string `json:"capacity"`
	Overhead     Overhead          `json:"overhead"`
}

// Requirement is a node selector requirement on one label.
type Requirement struct {
	Key      string   `json:"key"`
	Operator string   `json:"operator"`
	Values   []string `json:"values"`
}

// Offering is one zone × capacity type.
type Offering struct {
	Zone         string  `json:"zone"`
	ZoneID       string  `json:"zoneId,omitempty"`
	CapacityType string  `json:"capacityType"`
	Price        float64 `json:"price"`
	Available    bool    `json:"available"`
}

// Overhead is what kubelet and the system reserve, in Kubernetes quantity strings.
type Overhead struct {
	KubeReserved      map[string]string `json:"kubeReserved"`
	SystemReserved    map[string]string `json:"systemReserved"`
	EvictionThreshold map[string]string `json:"evictionThreshold"`
}

// Read parses a `karplint debug instance-types` file.
func Read(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse parses the bytes of a `karplint debug instance-types` document.
func Parse(b []byte) (*File, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("instance types: %w", err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("instance types: version %d, want 1", f.Version)
	}
	return &f, nil
}

// Converted is the catalog as Karpenter types, with what the conversion had to fill in.
type Converted struct {
	ByNodePool map[string][]*cloudprovider.InstanceType
	// Keys names each NodePool's array by the SHA-256 of its bytes (Cache.Convert only):
	// equal keys, equal types.
	Keys map[string]string
	// Filled lists, per well-known label karplint did not export, how many types got the
	// AWS provider's default for it (DoesNotExist); Missing lists labels the AWS provider
	// always sets to a value but karplint left out (they stay unconstrained).
	Filled  map[string]int
	Missing map[string]int
	// Derived counts the types whose zone, region or capacity-type requirement was built
	// from their offerings because karplint did not export it.
	Derived map[string]int
}

// Convert builds Karpenter instance types for every NodePool of f (without a cache: see
// Cache.Convert for the bytes of an export).
func (f *File) Convert() (*Converted, error) {
	out := newConverted()
	names := make([]string, 0, len(f.NodePools))
	for n := range f.NodePools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, np := range names {
		types, err := convertTypes(f.NodePools[np], out)
		if err != nil {
			return nil, fmt.Errorf("nodepool %q: %w", np, err)
		}
		out.ByNodePool[np] = types
	}
	return out, nil
}

func convertTypes(its []InstanceType, c *Converted) ([]*cloudprovider.InstanceType, error) {
	out := make([]*cloudprovider.InstanceType, 0, len(its))
	for _, it := range its {
		k, err := it.convert(c)
		if err != nil {
			return nil, fmt.Errorf("instance type %q: %w", it.Name, err)
		}
		out = append(out, k)
	}
	return out, nil
}

func (it InstanceType) convert(c *Converted) (*cloudprovider.InstanceType, error) {
	reqs := scheduling.NewRequirements()
	for _, r := range it.Requirements {
		op := corev1.NodeSelectorOperator(r.Operator)
		switch op {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists,
			corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt,
			v1.NodeSelectorOpGte, v1.NodeSelectorOpLte:
		default:
			return nil, fmt.Errorf("requirement %q: unknown operator %q", r.Key, r.Operator)
		}
		reqs.Add(scheduling.NewRequirement(r.Key, op, r.Values...))
	}
	if !reqs.Has(corev1.LabelInstanceTypeStable) {
		reqs.Add(scheduling.NewRequirement(corev1.LabelInstanceTypeStable, corev1.NodeSelectorOpIn, it.Name))
	}
	for _, key := range awslabels.DefaultDoesNotExist {
		if !reqs.Has(key) {
			reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpDoesNotExist))
			c.Filled[key]++
		}
	}
	it.deriveFromOfferings(reqs, c)
	for _, key := range awslabels.AlwaysSet {
		if !reqs.Has(key) {
			c.Missing[key]++
		}
	}
	capacity, err := resources(it.Capacity)
	if err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	kube, err := resources(it.Overhead.KubeReserved)
	if err != nil {
		return nil, fmt.Errorf("kubeReserved: %w", err)
	}
	system, err := resources(it.Overhead.SystemReserved)
	if err != nil {
		return nil, fmt.Errorf("systemReserved: %w", err)
	}
	eviction, err := resources(it.Overhead.EvictionThreshold)
	if err != nil {
		return nil, fmt.Errorf("evictionThreshold: %w", err)
	}
	offerings := make(cloudprovider.Offerings, 0, len(it.Offerings))
	for _, o := range it.Offerings {
		offerings = append(offerings, o.convert())
	}
	return &cloudprovider.InstanceType{
		Name:         it.Name,
		Requirements: reqs,
		Offerings:    offerings,
		Capacity:     capacity,
		Overhead: &cloudprovider.InstanceTypeOverhead{
			KubeReserved:      kube,
			SystemReserved:    system,
			EvictionThreshold: eviction,
		},
	}, nil
}

// deriveFromOfferings is a fallback for exports without a zone, region or capacity-type
// requirement (karplint exports all three since its zone-aware `debug instance-types`; a
// requirement it exports is never touched). It gives such a type the one aws
// computeRequirements would build from the same offerings: zone In [the offerings' zones], capacity-type In [their capacity types],
// region In [the zones less their letter]. Without a zone requirement Karpenter's topology
// finds no zone domains and every zonal spread constraint fails.
func (it InstanceType) deriveFromOfferings(reqs scheduling.Requirements, c *Converted) {
	zones, cts, regions := sets.New[string](), sets.New[string](), sets.New[string]()
	for _, o := range it.Offerings {
		zones.Insert(o.Zone)
		cts.Insert(o.CapacityType)
		regions.Insert(strings.TrimRight(o.Zone, "abcdefghijklmnopqrstuvwxyz"))
	}
	for key, vals := range map[string]sets.Set[string]{
		corev1.LabelTopologyZone:   zones,
		v1.CapacityTypeLabelKey:    cts,
		corev1.LabelTopologyRegion: regions,
	} {
		if !reqs.Has(key) && vals.Len() > 0 {
			reqs.Add(scheduling.NewRequirement(key, corev1.NodeSelectorOpIn, sets.List(vals)...))
			c.Derived[key]++
		}
	}
}

// convert mirrors aws offering/base_resolver.go: an on-demand or spot offering names its
// capacity type and zone, and has no capacity reservation.
func (o Offering) convert() *cloudprovider.Offering {
	reqs := scheduling.NewRequirements(
		scheduling.NewRequirement(v1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, o.CapacityType),
		scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, o.Zone),
		scheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(awslabels.CapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
		scheduling.NewRequirement(awslabels.CapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
	)
	if o.ZoneID != "" {
		reqs.Add(scheduling.NewRequirement(awslabels.TopologyZoneID, corev1.NodeSelectorOpIn, o.ZoneID))
	}
	return &cloudprovider.Offering{Requirements: reqs, Price: o.Price, Available: o.Available}
}

func resources(m map[string]string) (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	for k, v := range m {
		q, err := resource.ParseQuantity(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%q: %w", k, v, err)
		}
		out[corev1.ResourceName(k)] = q
	}
	return out, nil
}

// Shared is one list of instance types offered to every NodePool, the shape of
// testdata/catalog.json: a stand-in for `karplint debug instance-types` in tests and in
// `oracle run --catalog` (every NodePool gets every type; its EC2NodeClass is not read).
type Shared struct {
	Version int            `json:"version"`
	Zones   []string       `json:"zones"`
	Types   []InstanceType `json:"types"`
}

// ReadShared parses a shared catalog file.
func ReadShared(path string) (*Shared, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s Shared
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &s, nil
}

// ForNodePools is the export karplint would print if every named NodePool could launch
// every type of the shared catalog.
func (s *Shared) ForNodePools(names []string) *File {
	f := &File{Version: 1, Zones: s.Zones, NodePools: map[string][]InstanceType{}}
	for _, n := range names {
		f.NodePools[n] = s.Types
	}
	return f
}
