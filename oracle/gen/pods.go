package main

// DaemonSets and Deployments: requests, node selection, tolerations, topology spread,
// anti-affinity and host ports. Values a pod asks for are usually drawn from what the
// scenario's NodePools and zones offer, sometimes from outside it (ForeignValue), so that
// about half the pods fit and the rest fail for varied reasons.

// universe is what a key's values are drawn from, and a value no NodePool offers.
func (g *gen) universe(key string) (values []string, foreign string) {
	switch key {
	case keyFamily:
		return families, "x2gd"
	case keyCategory:
		return categories, "z"
	case keyArch:
		return []string{"amd64"}, "arm64"
	case keyCapacityType:
		return capacityTypes, "reserved"
	case keyZone:
		return g.s.Zones, foreignZone
	case keyInstanceType:
		return instanceTypes, "m7g.large"
	case keyNodePool:
		var ps []string
		for _, np := range g.s.NodePools {
			ps = append(ps, np.Name)
		}
		return ps, "np-z"
	case keyCPU:
		return []string{"2", "4", "8"}, "3"
	case keyGeneration:
		return []string{"5", "6"}, "1"
	case keyGPUCount:
		return []string{"1"}, "3"
	case "tier":
		return tiers, "gpu"
	default: // team
		return teams, "nobody"
	}
}

// values is 1..max values for key, or the one foreign value.
func (g *gen) values(key string, max int) []string {
	xs, foreign := g.universe(key)
	if g.chance(P.ForeignValue) {
		return []string{foreign}
	}
	return g.subset(xs, max)
}

// podExpr is one node-affinity expression on key, any operator the key makes sense with.
func (g *gen) podExpr(key string) Req {
	switch key {
	case keyCPU:
		if g.chance(0.5) {
			return Req{Key: key, Op: "Lt", Values: []string{g.pickW(cpuLt)}}
		}
		return Req{Key: key, Op: "Gt", Values: []string{g.pickW(cpuGt)}}
	case keyGeneration:
		return Req{Key: key, Op: "Gt", Values: []string{g.pickW(generationGt)}}
	case keyGPUCount:
		if g.chance(0.6) {
			return Req{Key: key, Op: "Exists"}
		}
		return Req{Key: key, Op: "DoesNotExist"}
	}
	switch x := g.r.Float64(); {
	case x < 0.65:
		return Req{Key: key, Op: "In", Values: g.values(key, 2)}
	case x < 0.85:
		return Req{Key: key, Op: "NotIn", Values: g.values(key, 1)}
	case x < 0.95:
		return Req{Key: key, Op: "Exists"}
	default:
		return Req{Key: key, Op: "DoesNotExist"}
	}
}

// distinctKeys is n different keys from podKeys.
func (g *gen) distinctKeys(n int) []string {
	var keys []string
	for len(keys) < n {
		k := g.pickW(podKeys)
		dup := false
		for _, have := range keys {
			dup = dup || have == k
		}
		if !dup {
			keys = append(keys, k)
		}
	}
	return keys
}

func (g *gen) nodeSelector() []KV {
	n := 1
	if g.chance(P.SecondExpr) {
		n = 2
	}
	var out []KV
	for _, k := range g.distinctKeys(n) {
		out = append(out, KV{k, g.values(k, 1)[0]})
	}
	return out
}

// term is one node selector term of 1-2 expressions on distinct keys.
func (g *gen) term() Term {
	n := 1
	if g.chance(P.SecondExpr) {
		n = 2
	}
	var t Term
	for _, k := range g.distinctKeys(n) {
		t = append(t, g.podExpr(k))
	}
	return t
}

func (g *gen) requiredTerms() []Term {
	ts := []Term{g.term()}
	if g.chance(P.SecondTerm) {
		ts = append(ts, g.term())
	}
	return ts
}

func (g *gen) preferredTerms() []Preferred {
	ps := []Preferred{{Weight: 1 + g.r.IntN(100), Term: g.term()}}
	if g.chance(P.SecondTerm) {
		ps = append(ps, Preferred{Weight: 1 + g.r.IntN(100), Term: g.term()})
	}
	return ps
}

// allTaints is every distinct NodePool taint of the scenario, in pool order.
func (g *gen) allTaints() []Taint {
	var out []Taint
	seen := map[Taint]bool{}
	for _, np := range g.s.NodePools {
		for _, t := range np.Taints {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// tolerate is a toleration matching t: by key and value, by key alone, or any effect.
func (g *gen) tolerate(t Taint) Toleration {
	tol := Toleration{Key: t.Key, Op: "Exists", Effect: t.Effect}
	if t.Value != "" && g.chance(0.6) {
		tol.Op, tol.Value = "Equal", t.Value
	}
	if g.chance(0.2) {
		tol.Effect = ""
	}
	return tol
}
