package main

// Builds one random but valid scenario from (seed, index). Every knob that decides how often
// a feature appears is in the tables at the top of this file, so the mix can be tuned without
// touching the code below. Validity (what Karpenter's CRDs and the Kubernetes API accept) is
// the generator's job: the tests in gen_test.go check it on the model, and a scenario that
// karplint or Karpenter rejects is a generator bug.

import "math/rand/v2"

// Probabilities of optional features, per object unless stated.
var P = struct {
	ThreeZones        float64 // cluster has all 3 zones (else 2)
	Bottlerocket      float64 // EC2NodeClass alias bottlerocket@latest (else al2023@latest)
	MaxPods           float64 // EC2NodeClass kubelet.maxPods
	KubeReserved      float64 // EC2NodeClass kubelet.kubeReserved
	RootVolume        float64 // EC2NodeClass blockDeviceMappings with a root volume size
	PoolWeight        float64 // NodePool weight
	PoolTeamLabel     float64 // NodePool template label team (when no team requirement)
	PoolTierLabel     float64 // NodePool template label tier
	PoolTaints        float64 // NodePool taints
	SecondTaint       float64 // a second taint, given taints
	PoolStartup       float64 // NodePool startupTaints
	LimitsCPU         float64 // NodePool limits.cpu (often tight)
	LimitsMemory      float64 // NodePool limits.memory
	NotIn             float64 // a set requirement uses NotIn instead of In
	MinValues         float64 // an In requirement carries minValues
	ForeignValue      float64 // a pod asks for a value no NodePool or zone offers
	DSHostPort        float64 // DaemonSet container hostPort
	DSBlanket         float64 // DaemonSet tolerates everything (operator: Exists)
	DSTolerate        float64 // DaemonSet tolerates a given NodePool taint
	DSNodeSelector    float64 // DaemonSet nodeSelector
	NodeSelector      float64 // Deployment nodeSelector
	Required          float64 // Deployment required node affinity
	SecondTerm        float64 // a second OR-ed required (or preferred) term
	SecondExpr        float64 // a second expression in a term / nodeSelector entry
	Preferred         float64 // Deployment preferred node affinity
	Tolerate          float64 // a pod tolerates a given NodePool taint
	WrongToleration   float64 // a pod carries a toleration with the wrong value
	BlanketToleration float64 // a pod tolerates everything
	GPU               float64 // a pod requests nvidia.com/gpu: 1
	Ephemeral         float64 // a pod requests ephemeral-storage
	PodLevel          float64 // pod-level spec.resources.requests
	Spread            float64 // topologySpreadConstraints
	SecondSpread      float64 // a second spread constraint (the other key)
	MinDomains        float64 // minDomains on a DoNotSchedule spread
	AntiAffinity      float64 // pod anti-affinity on itself
	AntiRequired      float64 // anti-affinity (or affinity) is required (else preferred)
	Affinity          float64 // pod affinity on itself (drawn last, so it leaves earlier draws)
	HostPort          float64 // Deployment container hostPort
	IgnoredPod        float64 // pod requires karpenter.sh/nodepool DoesNotExist (Karpenter ignores it)
	// Drawn after every feature above, so a seed's other objects stay what they were.
	StaticNodes  float64 // per scenario: 1-3 static Nodes of a managed node group (gen --static-nodes)
	NodeTaint    float64 // a static Node carries a taint
	NodeTeam     float64 // a static Node carries a team label
	Job          float64 // per scenario: a Job (and a second one, with the same chance)
	Completions  float64 // a Job sets completions (else parallelism alone)
	NarrowLimits float64 // per NodePool without a cpu limit: a few nodes' worth of cpu
}{
	ThreeZones:        0.5,
	Bottlerocket:      0.2,
	MaxPods:           0.2,
	KubeReserved:      0.15,
	RootVolume:        0.2,
	PoolWeight:        0.5,
	PoolTeamLabel:     0.3,
	PoolTierLabel:     0.2,
	PoolTaints:        0.3,
	SecondTaint:       0.2,
	PoolStartup:       0.15,
	LimitsCPU:         0.3,
	LimitsMemory:      0.15,
	NotIn:             0.2,
	MinValues:         0.25,
	ForeignValue:      0.12,
	DSHostPort:        0.25,
	DSBlanket:         0.3,
	DSTolerate:        0.5,
	DSNodeSelector:    0.2,
	NodeSelector:      0.45,
	Required:          0.35,
	SecondTerm:        0.3,
	SecondExpr:        0.3,
	Preferred:         0.2,
	Tolerate:          0.6,
	WrongToleration:   0.1,
	BlanketToleration: 0.08,
	GPU:               0.08,
	Ephemeral:         0.06,
	PodLevel:          0.08,
	Spread:            0.25,
	SecondSpread:      0.15,
	MinDomains:        0.15,
	AntiAffinity:      0.15,
	AntiRequired:      0.7,
	Affinity:          0.05,
	HostPort:          0.12,
	IgnoredPod:        0.02,
	// Off unless asked for (--static-nodes P): karplint matches a pod's requirements on a
	// label a static Node lacks as if the Node had it (docs/oracle-contract.md), so they
	// would fail the CI seed's gate for that alone.
	StaticNodes:  0,
	NodeTaint:    0.25,
	NodeTeam:     0.3,
	Job:          0.25,
	Completions:  0.7,
	NarrowLimits: 0.2,
}

// Probability that a NodePool constrains each key (at most one requirement per key).
var poolReqP = []struct {
	key string
	p   float64
}{
	{"karpenter.k8s.aws/instance-family", 0.4},
	{"karpenter.k8s.aws/instance-category", 0.25},
	{"karpenter.k8s.aws/instance-generation", 0.3},
	{"karpenter.k8s.aws/instance-cpu", 0.3},
	{"kubernetes.io/arch", 0.25},
	{"karpenter.sh/capacity-type", 0.45},
	{"topology.kubernetes.io/zone", 0.25},
	{"node.kubernetes.io/instance-type", 0.12},
	{"team", 0.25},
}

// Keys a pod's nodeSelector and node-affinity expressions draw from, by weight.
var podKeys = weighted{
	{"karpenter.k8s.aws/instance-family", 3}, {"karpenter.k8s.aws/instance-category", 2},
	{"karpenter.k8s.aws/instance-generation", 1}, {"karpenter.k8s.aws/instance-cpu", 2},
	{"kubernetes.io/arch", 2}, {"karpenter.sh/capacity-type", 3},
	{"topology.kubernetes.io/zone", 3}, {"node.kubernetes.io/instance-type", 1},
	{"karpenter.k8s.aws/instance-gpu-count", 1}, {"karpenter.sh/nodepool", 1},
	{"team", 3}, {"tier", 1},
}

// Object counts, inclusive ranges.
var counts = struct{ NodeClasses, NodePools, DaemonSets, Deployments, Replicas [2]int }{
	NodeClasses: [2]int{1, 3}, NodePools: [2]int{1, 3}, DaemonSets: [2]int{0, 2},
	Deployments: [2]int{1, 4}, Replicas: [2]int{1, 5},
}

// Weighted value tables: a value appears in proportion to its weight.
type weighted []struct {
	v string
	w int
}

var (
	cpuRequests = weighted{{"100m", 4}, {"250m", 4}, {"500m", 4}, {"1", 4}, {"2", 3},
		{"4", 2}, {"8", 2}, {"16", 1}, {"40", 1}}
	memRequests = weighted{{"128Mi", 4}, {"512Mi", 4}, {"1Gi", 4}, {"4Gi", 3}, {"16Gi", 2},
		{"64Gi", 1}, {"200Gi", 1}}
	dsCPU        = weighted{{"50m", 3}, {"100m", 3}, {"200m", 2}, {"500m", 1}, {"1", 1}}
	dsMemory     = weighted{{"64Mi", 3}, {"128Mi", 3}, {"256Mi", 2}, {"1Gi", 1}, {"2Gi", 1}}
	ephemeral    = weighted{{"5Gi", 2}, {"30Gi", 2}, {"100Gi", 1}}
	cpuLimits    = weighted{{"4", 3}, {"8", 2}, {"16", 2}, {"100", 2}, {"1000", 2}}
	memLimits    = weighted{{"16Gi", 2}, {"64Gi", 2}, {"1000Gi", 2}}
	maxPods      = weighted{{"8", 1}, {"20", 1}, {"58", 1}, {"110", 2}}
	rootVolumes  = weighted{{"20Gi", 1}, {"50Gi", 2}, {"100Gi", 1}}
	cpuLt        = weighted{{"3", 1}, {"5", 2}, {"9", 2}, {"17", 2}, {"33", 1}, {"65", 1}}
	cpuGt        = weighted{{"1", 2}, {"3", 2}, {"7", 1}, {"15", 1}}
	hostPorts    = weighted{{"9100", 3}, {"8080", 2}}
	minValuesAll = 0.6 // share of In minValues equal to len(values), the strictest
	existsMinVal = weighted{{"2", 2}, {"10", 2}, {"30", 1}, {"50", 1}}
	generationGt = weighted{{"2", 2}, {"3", 2}, {"4", 2}, {"5", 2}, {"6", 1}}
	narrowLimits = weighted{{"6", 2}, {"12", 2}, {"24", 1}}
	parallelism  = weighted{{"1", 1}, {"2", 2}, {"3", 2}, {"6", 2}, {"10", 1}}
	completions  = weighted{{"1", 1}, {"2", 1}, {"4", 2}, {"8", 1}}
)

// Static Node shapes: capacity and allocatable as the kubelet reports them (allocatable is
// capacity less kube-reserved and the eviction threshold).
var staticShapes = []struct {
	Type                  string
	Capacity, Allocatable []KV
}{
	{"m5.large", []KV{{"cpu", "2"}, {"memory", "7577Mi"}, {"pods", "29"}, {"ephemeral-storage", "20Gi"}},
		[]KV{{"cpu", "1930m"}, {"memory", "6903Mi"}, {"pods", "29"}, {"ephemeral-storage", "17Gi"}}},
	{"m5.xlarge", []KV{{"cpu", "4"}, {"memory", "15155Mi"}, {"pods", "58"}, {"ephemeral-storage", "20Gi"}},
		[]KV{{"cpu", "3920m"}, {"memory", "14162Mi"}, {"pods", "58"}, {"ephemeral-storage", "17Gi"}}},
	{"c6i.xlarge", []KV{{"cpu", "4"}, {"memory", "7577Mi"}, {"pods", "58"}, {"ephemeral-storage", "20Gi"}},
		[]KV{{"cpu", "3920m"}, {"memory", "6584Mi"}, {"pods", "58"}, {"ephemeral-storage", "17Gi"}}},
	{"r6i.large", []KV{{"cpu", "2"}, {"memory", "15155Mi"}, {"pods", "29"}, {"ephemeral-storage", "20Gi"}},
		[]KV{{"cpu", "1930m"}, {"memory", "14481Mi"}, {"pods", "29"}, {"ephemeral-storage", "17Gi"}}},
}

// Value universes.
var (
	allZones      = []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	foreignZone   = "us-east-1d"
	families      = []string{"m5", "m6i", "c6i", "c5", "r6i", "t3", "g4dn", "p3"}
	categories    = []string{"c", "m", "r", "t", "g", "p"}
	instanceTypes = []string{"m5.large", "m5.xlarge", "m6i.2xlarge", "c5.large", "c6i.xlarge",
		"r6i.large", "t3.medium", "t3.small", "g4dn.xlarge"}
	capacityTypes = []string{"on-demand", "spot"}
	teams         = []string{"blue", "green", "red"}
	tiers         = []string{"web", "batch"}
	names         = []string{"a", "b", "c", "d", "e"}
)

// Taints a NodePool may carry, and startup taints.
var (
	taintCatalog = []Taint{
		{"dedicated", "blue", "NoSchedule"},
		{"nvidia.com/gpu", "true", "NoSchedule"},
		{"spot-only", "true", "PreferNoSchedule"},
		{"workload", "batch", "NoExecute"},
		{"example.com/special", "", "NoSchedule"},
	}
	startupCatalog = []Taint{
		{"ebs.csi.aws.com/agent-not-ready", "", "NoExecute"},
		{"node.cilium.io/agent-not-ready", "true", "NoSchedule"},
	}
)

// gen holds the random source and the scenario being built.
type gen struct {
	r *rand.Rand
	s *Scenario
}

// Generate builds scenario index of seed: a PCG seeded from both, so any scenario can be
// regenerated alone.
func Generate(seed, index uint64) *Scenario {
	g := &gen{r: rand.New(rand.NewPCG(seed, index)), s: &Scenario{Seed: seed, Index: index}}
	g.zones()
	for i := range g.between(counts.NodeClasses) {
		g.s.NodeClasses = append(g.s.NodeClasses, g.nodeClass(i))
	}
	for i := range g.between(counts.NodePools) {
		g.s.NodePools = append(g.s.NodePools, g.nodePool(i))
	}
	for i := range g.between(counts.DaemonSets) {
		g.s.DaemonSets = append(g.s.DaemonSets, g.daemonSet(i))
	}
	for i := range g.between(counts.Deployments) {
		g.s.Deployments = append(g.s.Deployments, g.deployment(i))
	}
	// The features added later draw last, so the objects above stay what they were.
	for i := range g.s.NodePools {
		np := &g.s.NodePools[i]
		if !hasKey(np.Limits, "cpu") && g.chance(P.NarrowLimits) {
			np.Limits = append(np.Limits, KV{"cpu", g.pickW(narrowLimits)})
		}
	}
	for i := 0; i < 2 && g.chance(P.Job); i++ {
		g.s.Jobs = append(g.s.Jobs, g.job(i))
	}
	// Static Nodes draw last of all: turning them on or off changes nothing else.
	if g.chance(P.StaticNodes) {
		for i := range 1 + g.r.IntN(3) {
			g.s.Nodes = append(g.s.Nodes, g.staticNode(i))
		}
	}
	return g.s
}

func hasKey(kvs []KV, k string) bool {
	for _, kv := range kvs {
		if kv.Key == k {
			return true
		}
	}
	return false
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) between(lohi [2]int) int { return lohi[0] + g.r.IntN(lohi[1]-lohi[0]+1) }

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *gen) pickW(t weighted) string {
	total := 0
	for _, e := range t {
		total += e.w
	}
	n := g.r.IntN(total)
	for _, e := range t {
		if n < e.w {
			return e.v
		}
		n -= e.w
	}
	return t[len(t)-1].v
}

// subset returns 1..max distinct elements of xs, in xs's order.
func (g *gen) subset(xs []string, max int) []string {
	n := 1 + g.r.IntN(min(max, len(xs)))
	chosen := make([]bool, len(xs))
	for _, i := range g.r.Perm(len(xs))[:n] {
		chosen[i] = true
	}
	var out []string
	for i, x := range xs {
		if chosen[i] {
			out = append(out, x)
		}
	}
	return out
}

// zones picks 3 zones, or 2 of the 3.
func (g *gen) zones() {
	skip := -1
	if !g.chance(P.ThreeZones) {
		skip = g.r.IntN(len(allZones))
	}
	for i, z := range allZones {
		if i != skip {
			g.s.Zones = append(g.s.Zones, z)
		}
	}
}

func (g *gen) nodeClass(i int) NodeClass {
	nc := NodeClass{Name: "nc-" + names[i], Alias: "al2023@latest"}
	if g.chance(P.Bottlerocket) {
		nc.Alias = "bottlerocket@latest"
	}
	if g.chance(P.MaxPods) {
		nc.MaxPods = atoi(g.pickW(maxPods))
	}
	if g.chance(P.KubeReserved) {
		nc.KubeReserved = []KV{{"cpu", g.pick([]string{"100m", "250m", "500m"})},
			{"memory", g.pick([]string{"512Mi", "1Gi", "2Gi"})}}
	}
	if g.chance(P.RootVolume) {
		nc.RootVolume = g.pickW(rootVolumes)
	}
	return nc
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
