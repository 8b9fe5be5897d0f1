package main

import "fmt"

// The two workload kinds. DaemonSets never trigger provisioning but add overhead (and host
// ports) to every NodePool they tolerate; Deployments are the pods the oracle compares.

func (g *gen) daemonSet(i int) Workload {
	wl := Workload{Kind: "DaemonSet", Name: "ds-" + names[i]}
	p := &wl.Pod
	p.Requests = []KV{{"cpu", g.pickW(dsCPU)}, {"memory", g.pickW(dsMemory)}}
	if g.chance(P.DSHostPort) {
		p.HostPort = atoi(g.pickW(hostPorts))
	}
	if g.chance(P.DSBlanket) {
		p.Tolerations = []Toleration{{Op: "Exists"}}
	} else {
		for _, t := range g.allTaints() {
			if g.chance(P.DSTolerate) {
				p.Tolerations = append(p.Tolerations, g.tolerate(t))
			}
		}
	}
	if g.chance(P.DSNodeSelector) {
		if g.chance(0.5) {
			p.NodeSelector = []KV{{keyArch, "amd64"}}
		} else {
			p.NodeSelector = []KV{{"team", g.pick(teams)}}
		}
	}
	return wl
}

func (g *gen) deployment(i int) Workload {
	wl := Workload{Kind: "Deployment", Name: "app-" + names[i], Replicas: g.between(counts.Replicas)}
	p := &wl.Pod
	g.requests(p)
	if g.chance(P.NodeSelector) {
		p.NodeSelector = g.nodeSelector()
	}
	if g.chance(P.Required) {
		p.Required = g.requiredTerms()
	}
	if g.chance(P.IgnoredPod) {
		// Karpenter ignores pods that refuse its nodes (its own controller's affinity).
		if len(p.Required) == 0 {
			p.Required = []Term{nil}
		}
		p.Required[0] = append(p.Required[0], Req{Key: keyNodePool, Op: "DoesNotExist"})
	}
	if g.chance(P.Preferred) {
		p.Preferred = g.preferredTerms()
	}
	p.Tolerations = g.podTolerations()
	if g.chance(P.Spread) {
		p.Spreads = g.spreads()
	}
	if g.chance(P.AntiAffinity) {
		p.AntiAffinity = []AntiAffinity{g.antiAffinity()}
	}
	if g.chance(P.HostPort) {
		p.HostPort = atoi(g.pickW(hostPorts))
	}
	if g.chance(P.Affinity) {
		p.Affinity = []AntiAffinity{g.antiAffinity()}
	}
	return wl
}

// requests sets container (and sometimes pod-level) requests. With pod-level requests the
// container asks for the minimum of each table, so it never exceeds the pod's total.
func (g *gen) requests(p *Pod) {
	cpu, mem := g.pickW(cpuRequests), g.pickW(memRequests)
	if g.chance(P.PodLevel) {
		p.PodRequests = []KV{{"cpu", cpu}, {"memory", mem}}
		cpu, mem = cpuRequests[0].v, memRequests[0].v
	}
	p.Requests = []KV{{"cpu", cpu}, {"memory", mem}}
	if g.chance(P.Ephemeral) {
		p.Requests = append(p.Requests, KV{"ephemeral-storage", g.pickW(ephemeral)})
	}
	if g.chance(P.GPU) {
		p.Requests = append(p.Requests, KV{"nvidia.com/gpu", "1"})
	}
}

func (g *gen) podTolerations() []Toleration {
	var out []Toleration
	taints := g.allTaints()
	for _, t := range taints {
		if g.chance(P.Tolerate) {
			out = append(out, g.tolerate(t))
		}
	}
	if len(taints) > 0 && g.chance(P.WrongToleration) {
		t := taints[g.r.IntN(len(taints))]
		out = append(out, Toleration{Key: t.Key, Op: "Equal", Value: "other", Effect: t.Effect})
	}
	if g.chance(P.BlanketToleration) {
		out = append(out, Toleration{Op: "Exists"})
	}
	return out
}

// spreads is a zone and/or hostname spread over the workload's own pods.
func (g *gen) spreads() []Spread {
	keys := []string{keyZone}
	if g.chance(0.4) {
		keys[0] = keyHostname
	}
	if g.chance(P.SecondSpread) {
		if keys[0] == keyZone {
			keys = append(keys, keyHostname)
		} else {
			keys = append(keys, keyZone)
		}
	}
	var out []Spread
	for _, k := range keys {
		s := Spread{MaxSkew: 1, Key: k, When: "DoNotSchedule"}
		if g.chance(0.2) {
			s.MaxSkew = 2
		}
		if g.chance(0.3) {
			s.When = "ScheduleAnyway"
		} else if g.chance(P.MinDomains) {
			s.MinDomains = 2 + g.r.IntN(3)
		}
		out = append(out, s)
	}
	return out
}

func (g *gen) antiAffinity() AntiAffinity {
	a := AntiAffinity{Key: keyHostname}
	if g.chance(0.4) {
		a.Key = keyZone
	}
	if !g.chance(P.AntiRequired) {
		a.Weight = 1 + g.r.IntN(100)
	}
	return a
}

// job is a Job whose pod is drawn like a Deployment's: min(parallelism, completions) pods
// run at once.
func (g *gen) job(i int) Workload {
	wl := g.deployment(i)
	wl.Kind, wl.Name, wl.Replicas = "Job", "job-"+names[i], 0
	wl.Parallelism = atoi(g.pickW(parallelism))
	if g.chance(P.Completions) {
		wl.Completions = atoi(g.pickW(completions))
	}
	return wl
}

// Pods is how many pods of the workload run at once.
func (wl *Workload) Pods() int {
	if wl.Kind != "Job" {
		return wl.Replicas
	}
	par := max(wl.Parallelism, 1)
	if wl.Parallelism == 0 && wl.Completions == 0 {
		return 1
	}
	if wl.Completions > 0 && wl.Completions < par {
		return wl.Completions
	}
	return par
}

// staticNode is a Node of managed node group ng-a, in a zone of the cluster.
func (g *gen) staticNode(i int) StaticNode {
	shape := staticShapes[g.r.IntN(len(staticShapes))]
	n := StaticNode{
		Name:         fmt.Sprintf("ip-10-0-%d-%d.ec2.internal", i, 10+g.r.IntN(200)),
		Group:        "ng-a",
		InstanceType: shape.Type,
		Zone:         g.pick(g.s.Zones),
		Capacity:     shape.Capacity,
		Allocatable:  shape.Allocatable,
	}
	if g.chance(P.NodeTeam) {
		n.Labels = []KV{{"team", g.pick(teams)}}
	}
	if g.chance(P.NodeTaint) {
		n.Taints = []Taint{taintCatalog[g.r.IntN(len(taintCatalog))]}
	}
	return n
}
