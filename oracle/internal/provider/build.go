// Package provider builds the instance types Karpenter's scheduler reads through the AWS
// provider's own code (github.com/aws/karpenter-provider-aws v1.14.3,
// pkg/providers/instancetype: DefaultResolver.Resolve → NewInstanceType, which computes the
// requirements, capacity and overhead), from the EC2 facts of data/ec2-instance-types.csv
// (the data karplint's catalog is generated from) and each scenario's EC2NodeClass, and
// compares them with karplint's `debug instance-types` export.
package provider

import (
	"context"
	"flag"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	coreoptions "sigs.k8s.io/karpenter/pkg/operator/options"
	"sigs.k8s.io/karpenter/pkg/scheduling"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	"github.com/aws/karpenter-provider-aws/pkg/operator/options"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype"
	"github.com/aws/karpenter-provider-aws/pkg/providers/instancetype/compatibility"

	"github.com/karplint/karplint/oracle/internal/prices"
)

// UnpricedPrice is the offering price of a type the price table lacks. The provider gives
// such an offering no price and marks it unavailable (offering/base_resolver.go); the oracle
// keeps every offering available (the scenario's capacity is unlimited, and karplint
// schedules on unpriced types too) and only orders it after every priced type, as the launch
// between rounds does.
const UnpricedPrice = math.MaxFloat32

// Types are the EC2 types of the CSV, reconstructed once.
type Types struct {
	Infos []ec2types.InstanceTypeInfo
	// ENIFromCSV names the types whose network limits were inverted from the CSV's pods
	// (the provider's table lacks them).
	ENIFromCSV []string
	Rows       map[string]Row
}

// NewTypes reconstructs every row's InstanceTypeInfo.
func NewTypes(rows []Row) (*Types, error) {
	t := &Types{Rows: map[string]Row{}}
	for _, r := range rows {
		info, src, err := r.Info()
		if err != nil {
			return nil, err
		}
		if src == ENIFromCSV {
			t.ENIFromCSV = append(t.ENIFromCSV, r.Name)
		}
		t.Infos = append(t.Infos, info)
		t.Rows[r.Name] = r
	}
	return t, nil
}

// Load reads and reconstructs the CSV at path.
func Load(path string) (*Types, error) {
	rows, err := ReadCSV(path)
	if err != nil {
		return nil, err
	}
	return NewTypes(rows)
}

// Context returns ctx with the AWS provider's controller options at their flag defaults
// (VM_MEMORY_OVERHEAD_PERCENT 0.075, RESERVED_ENIS 0, read from the environment like the
// controller does), which NewInstanceType reads for memory and pods.
func Context(ctx context.Context) (context.Context, error) {
	o := &options.Options{}
	fs := &coreoptions.FlagSet{FlagSet: newFlagSet()}
	o.AddFlags(fs)
	// cluster-name is required by Validate and read by nothing here.
	if err := o.Parse(fs, "--cluster-name", "karplint-oracle"); err != nil {
		return nil, err
	}
	return options.ToContext(ctx, o), nil
}

func newFlagSet() *flag.FlagSet {
	return flag.NewFlagSet("karpenter-provider-aws", flag.ContinueOnError)
}

// Region is the region of the zones (a zone less its letter), us-east-1 without zones.
func Region(zones []string) string {
	for _, z := range zones {
		return strings.TrimRight(z, "abcdefghijklmnopqrstuvwxyz")
	}
	return prices.Region
}

// Builder builds and caches the provider's instance types per EC2NodeClass and zones, as
// the provider caches them per node class (instanceTypesCache). A node class's types are
// ~25 MB of Go objects and most generated node classes occur in a few scenarios only, so it
// keeps the most recently used CacheEntries of them.
type Builder struct {
	Types  *Types
	Prices prices.Table
	mu     sync.Mutex
	cache  map[string]*built
	clock  uint64
	hits   int
	misses int
}

// CacheEntries bounds the builder's cache.
const CacheEntries = 16

type built struct {
	once    sync.Once
	lastUse uint64
	types   []*cloudprovider.InstanceType
	err     error
}

// NewBuilder returns a builder over types, pricing offerings from table.
func NewBuilder(types *Types, table prices.Table) *Builder {
	return &Builder{Types: types, Prices: table, cache: map[string]*built{}}
}

// entry returns the cache entry of key, making room for it (the caller fills it).
func (b *Builder) entry(key string) *built {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clock++
	e, ok := b.cache[key]
	if ok {
		b.hits++
	} else {
		b.misses++
		if len(b.cache) >= CacheEntries {
			oldest, at := "", uint64(0)
			for k, v := range b.cache {
				if oldest == "" || v.lastUse < at {
					oldest, at = k, v.lastUse
				}
			}
			delete(b.cache, oldest) // a scenario still using it keeps its own reference
		}
		e = &built{}
		b.cache[key] = e
	}
	e.lastUse = b.clock
	return e
}

// Stats reports how many node classes were built and how many served from the cache.
func (b *Builder) Stats() (hits, misses int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits, b.misses
}

// WithSubnets is nc with one subnet per zone in its status, as the subnet controller would
// resolve its subnetSelectorTerms in a cluster of those zones. The scenario names no zone
// IDs: each subnet's zone ID is its zone's name, so that ZoneInfo (grouped by zone ID)
// keeps one entry per zone.
func WithSubnets(nc *awsv1.EC2NodeClass, zones []string) *awsv1.EC2NodeClass {
	nc = nc.DeepCopy()
	nc.Status.Subnets = nil
	for _, z := range zones {
		nc.Status.Subnets = append(nc.Status.Subnets, awsv1.Subnet{ID: "subnet-" + z, Zone: z, ZoneID: z})
	}
	return nc
}

// ForNodeClass is what the AWS provider's GetInstanceTypes returns for a NodePool of node
// class nc in a cluster of zones: every type, resolved by
// instancetype.NewDefaultResolver(region).Resolve (NewInstanceType with the node class's AMI
// family, blockDeviceMappings, instanceStorePolicy, kubelet maxPods, podsPerCore,
// kubeReserved, systemReserved, evictionHard and evictionSoft), with one offering per zone
// and capacity type, shaped as offering/base_resolver.go builds them. The topology.k8s.aws/zone-id
// requirement is dropped: the scenario states no zone IDs (karplint leaves the label to facts
// outside the YAML). Offerings of a type the provider finds incompatible with the node class
// (compatibility.IsCompatibleWithNodeClass, e.g. a1 on AL2023) are unavailable, as there.
// The types are shared between callers: Karpenter's scheduler only reads them.
//
// key names the result: the provider's own cache key (DefaultResolver.CacheKey: kubelet,
// blockDeviceMappings, capacity reservations, network interfaces, instance store policy,
// AMI family) with the region and zones; equal keys, equal types.
func (b *Builder) ForNodeClass(ctx context.Context, nc *awsv1.EC2NodeClass, zones []string) (types []*cloudprovider.InstanceType, key string, err error) {
	zones = append([]string(nil), zones...)
	sort.Strings(zones)
	region := Region(zones)
	nc = WithSubnets(nc, zones)
	resolver := instancetype.NewDefaultResolver(region)
	key = resolver.CacheKey(nc) + "/" + region + "/" + strings.Join(zones, ",")
	e := b.entry(key)
	e.once.Do(func() { e.types, e.err = b.build(ctx, resolver, nc, zones) })
	if e.err != nil {
		return nil, key, e.err
	}
	return append([]*cloudprovider.InstanceType(nil), e.types...), key, nil
}

func (b *Builder) build(ctx context.Context, resolver *instancetype.DefaultResolver, nc *awsv1.EC2NodeClass, zones []string) (out []*cloudprovider.InstanceType, err error) {
	if options.FromContext(ctx) == nil {
		if ctx, err = Context(ctx); err != nil {
			return nil, err
		}
	}
	defer func() {
		// NewInstanceType panics on what DescribeInstanceTypes always has (ProcessorInfo,
		// NetworkInfo …): a reconstruction error, not a verdict.
		if r := recover(); r != nil {
			err = fmt.Errorf("provider: NewInstanceType: %v", r)
		}
	}()
	for _, info := range b.Types.Infos {
		it := resolver.Resolve(ctx, info, zones, nc)
		if it == nil {
			continue
		}
		delete(it.Requirements, awsv1.LabelTopologyZoneID)
		it.Offerings = b.offerings(it, info, nc, zones)
		out = append(out, it)
	}
	return out, nil
}

func (b *Builder) offerings(it *cloudprovider.InstanceType, info ec2types.InstanceTypeInfo, nc *awsv1.EC2NodeClass, zones []string) cloudprovider.Offerings {
	compatible := compatibility.IsCompatibleWithNodeClass(info, nc, nil)
	itZones := sets.New(it.Requirements.Get(corev1.LabelTopologyZone).Values()...)
	price, ok := b.Prices[it.Name]
	if !ok {
		price = UnpricedPrice
	}
	cts := it.Requirements.Get(karpv1.CapacityTypeLabelKey).Values()
	sort.Strings(cts)
	var out cloudprovider.Offerings
	for _, zone := range zones {
		for _, ct := range cts {
			if ct == karpv1.CapacityTypeReserved {
				continue
			}
			// Spot is priced like on-demand until live spot prices arrive
			// (pricing.go populateInitialSpotPricing).
			out = append(out, &cloudprovider.Offering{
				Requirements: scheduling.NewRequirements(
					scheduling.NewRequirement(karpv1.CapacityTypeLabelKey, corev1.NodeSelectorOpIn, ct),
					scheduling.NewRequirement(corev1.LabelTopologyZone, corev1.NodeSelectorOpIn, zone),
					scheduling.NewRequirement(cloudprovider.ReservationIDLabel, corev1.NodeSelectorOpDoesNotExist),
					scheduling.NewRequirement(awsv1.LabelCapacityReservationType, corev1.NodeSelectorOpDoesNotExist),
					scheduling.NewRequirement(awsv1.LabelCapacityReservationInterruptible, corev1.NodeSelectorOpDoesNotExist),
				),
				Price:     price,
				Available: compatible && itZones.Has(zone),
			})
		}
	}
	return out
}
