package main

// NodePools and their requirements, taints and limits. Each key is constrained at most once
// per NodePool, so a pool's requirements read as one condition per key; the CRD rules
// (In has values, Gt/Lt one non-negative integer, minValues within 1..len(values)) hold by
// construction.

const (
	keyFamily       = "karpenter.k8s.aws/instance-family"
	keyCategory     = "karpenter.k8s.aws/instance-category"
	keyGeneration   = "karpenter.k8s.aws/instance-generation"
	keyCPU          = "karpenter.k8s.aws/instance-cpu"
	keyGPUCount     = "karpenter.k8s.aws/instance-gpu-count"
	keyArch         = "kubernetes.io/arch"
	keyCapacityType = "karpenter.sh/capacity-type"
	keyNodePool     = "karpenter.sh/nodepool"
	keyZone         = "topology.kubernetes.io/zone"
	keyInstanceType = "node.kubernetes.io/instance-type"
	keyHostname     = "kubernetes.io/hostname"
)

func (g *gen) nodePool(i int) NodePool {
	nc := g.s.NodeClasses[g.r.IntN(len(g.s.NodeClasses))]
	np := NodePool{Name: "np-" + names[i], NodeClass: nc.Name}
	if g.chance(P.PoolWeight) {
		np.Weight = 1 + g.r.IntN(100)
	}
	teamReq := false
	for _, e := range poolReqP {
		if g.chance(e.p) {
			np.Reqs = append(np.Reqs, g.poolReq(e.key))
			teamReq = teamReq || e.key == "team"
		}
	}
	// A team label next to a team requirement could contradict it; keep one of the two.
	if !teamReq && g.chance(P.PoolTeamLabel) {
		np.Labels = append(np.Labels, KV{"team", g.pick(teams)})
	}
	if g.chance(P.PoolTierLabel) {
		np.Labels = append(np.Labels, KV{"tier", g.pick(tiers)})
	}
	if g.chance(P.PoolTaints) {
		np.Taints = g.poolTaints()
	}
	if g.chance(P.PoolStartup) {
		np.StartupTaints = []Taint{startupCatalog[g.r.IntN(len(startupCatalog))]}
	}
	if g.chance(P.LimitsCPU) {
		np.Limits = append(np.Limits, KV{"cpu", g.pickW(cpuLimits)})
	}
	if g.chance(P.LimitsMemory) {
		np.Limits = append(np.Limits, KV{"memory", g.pickW(memLimits)})
	}
	return np
}

// poolTaints is one or two distinct taints from the catalog.
func (g *gen) poolTaints() []Taint {
	n := 1
	if g.chance(P.SecondTaint) {
		n = 2
	}
	var out []Taint
	for _, i := range g.r.Perm(len(taintCatalog))[:n] {
		out = append(out, taintCatalog[i])
	}
	return out
}

func (g *gen) poolReq(key string) Req {
	switch key {
	case keyFamily:
		return g.setReq(key, families, 3)
	case keyCategory:
		return g.setReq(key, categories, 3)
	case keyGeneration:
		return Req{Key: key, Op: "Gt", Values: []string{g.pickW(generationGt)}}
	case keyCPU:
		if g.chance(0.6) {
			return Req{Key: key, Op: "Lt", Values: []string{g.pickW(cpuLt)}}
		}
		return Req{Key: key, Op: "Gt", Values: []string{g.pickW(cpuGt)}}
	case keyArch:
		return Req{Key: key, Op: "In", Values: g.pickList([][]string{
			{"amd64"}, {"amd64"}, {"amd64"}, {"amd64", "arm64"}, {"arm64"}})}
	case keyCapacityType:
		return g.setReq(key, capacityTypes, 2)
	case keyZone:
		return g.setReq(key, g.s.Zones, 2)
	case keyInstanceType:
		if g.chance(0.7) {
			return g.setReq(key, instanceTypes, 4)
		}
		mv := atoi(g.pickW(existsMinVal))
		return Req{Key: key, Op: "Exists", MinValues: mv}
	default: // team
		return g.customPoolReq(key)
	}
}

// setReq is In (sometimes with minValues) or NotIn over 1..max values of xs.
func (g *gen) setReq(key string, xs []string, max int) Req {
	r := Req{Key: key, Op: "In", Values: g.subset(xs, max)}
	if g.chance(P.NotIn) {
		r.Op = "NotIn"
		return r
	}
	if g.chance(P.MinValues) {
		// Often len(values): unsatisfiable as soon as one value has no instance type left.
		r.MinValues = len(r.Values)
		if !g.chance(minValuesAll) {
			r.MinValues = 1 + g.r.IntN(len(r.Values))
		}
	}
	return r
}

func (g *gen) customPoolReq(key string) Req {
	switch x := g.r.Float64(); {
	case x < 0.5:
		return Req{Key: key, Op: "In", Values: g.subset(teams, 2)}
	case x < 0.8:
		return Req{Key: key, Op: "Exists"}
	case x < 0.9:
		return Req{Key: key, Op: "NotIn", Values: g.subset(teams, 1)}
	default:
		return Req{Key: key, Op: "DoesNotExist"}
	}
}

func (g *gen) pickList(xss [][]string) []string {
	return append([]string(nil), xss[g.r.IntN(len(xss))]...)
}
