package main

// Feature counts over a scenario set (--stats), read back from the generated model rather
// than from the generator's own dice, so they show what the scenarios really contain.

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// tally counts, per feature, the scenarios that have it.
type tally map[string]int

func newTally() tally { return tally{} }

func (t tally) add(s *Scenario) {
	for f, on := range Features(s) {
		if on {
			t[f]++
		}
	}
}

func (t tally) print(w io.Writer, n uint64) {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(w, "%d scenarios; scenarios having each feature:\n", n)
	for _, k := range keys {
		fmt.Fprintf(w, "  %-44s %5d\n", k, t[k])
	}
}

// Features is the set of feature names present in s.
func Features(s *Scenario) map[string]bool {
	f := map[string]bool{}
	f[fmt.Sprintf("zones=%d", len(s.Zones))] = true
	f[fmt.Sprintf("nodeclasses=%d", len(s.NodeClasses))] = true
	f[fmt.Sprintf("nodepools=%d", len(s.NodePools))] = true
	f[fmt.Sprintf("daemonsets=%d", len(s.DaemonSets))] = true
	f[fmt.Sprintf("deployments=%d", len(s.Deployments))] = true
	for _, nc := range s.NodeClasses {
		nodeClassFeatures(f, &nc)
	}
	for _, np := range s.NodePools {
		nodePoolFeatures(f, &np)
	}
	for _, ds := range s.DaemonSets {
		podFeatures(f, "ds.", &ds.Pod)
	}
	for _, d := range s.Deployments {
		podFeatures(f, "pod.", &d.Pod)
	}
	for _, j := range s.Jobs {
		f["job"] = true
		f["job.completions"] = f["job.completions"] || j.Completions > 0
		f["job.completions<parallelism"] = f["job.completions<parallelism"] || (j.Completions > 0 && j.Completions < j.Parallelism)
		podFeatures(f, "pod.", &j.Pod)
		f["job.hostPort"] = f["job.hostPort"] || j.Pod.HostPort > 0
	}
	for _, n := range s.Nodes {
		f["node"] = true
		f["node.taint"] = f["node.taint"] || len(n.Taints) > 0
		f["node.label team"] = f["node.label team"] || len(n.Labels) > 0
	}
	f[fmt.Sprintf("nodes=%d", len(s.Nodes))] = len(s.Nodes) > 0
	return f
}

func nodeClassFeatures(f map[string]bool, nc *NodeClass) {
	f["nc.alias="+strings.TrimSuffix(nc.Alias, "@latest")] = true
	f["nc.maxPods"] = f["nc.maxPods"] || nc.MaxPods > 0
	f["nc.kubeReserved"] = f["nc.kubeReserved"] || len(nc.KubeReserved) > 0
	f["nc.blockDeviceMappings"] = f["nc.blockDeviceMappings"] || nc.RootVolume != ""
}

func nodePoolFeatures(f map[string]bool, np *NodePool) {
	for _, r := range np.Reqs {
		f["np.req "+shortKey(r.Key)+" "+r.Op] = true
		if r.MinValues > 0 {
			f["np.minValues"] = true
		}
	}
	for _, l := range np.Labels {
		f["np.label "+l.Key] = true
	}
	for _, t := range np.Taints {
		f["np.taint "+t.Effect] = true
	}
	f["np.startupTaints"] = f["np.startupTaints"] || len(np.StartupTaints) > 0
	f["np.weight"] = f["np.weight"] || np.Weight > 0
	for _, l := range np.Limits {
		f["np.limits "+l.Key] = true
	}
}

func podFeatures(f map[string]bool, prefix string, p *Pod) {
	for _, r := range p.Requests {
		f[prefix+"request "+r.Key] = true
	}
	f[prefix+"podLevelResources"] = f[prefix+"podLevelResources"] || len(p.PodRequests) > 0
	for _, kv := range p.NodeSelector {
		f[prefix+"nodeSelector "+shortKey(kv.Key)] = true
	}
	if len(p.Required) > 0 {
		f[prefix+fmt.Sprintf("requiredTerms=%d", len(p.Required))] = true
	}
	for _, t := range p.Required {
		for _, r := range t {
			f[prefix+"required "+r.Op] = true
			if r.Key == keyNodePool && r.Op == "DoesNotExist" {
				f[prefix+"ignored (nodepool DoesNotExist)"] = true
			}
		}
	}
	f[prefix+"preferred"] = f[prefix+"preferred"] || len(p.Preferred) > 0
	for _, t := range p.Tolerations {
		name := "toleration " + t.Op
		if t.Key == "" {
			name = "toleration blanket"
		}
		f[prefix+name] = true
	}
	for _, s := range p.Spreads {
		f[prefix+"spread "+shortKey(s.Key)+" "+s.When] = true
		f[prefix+"spread minDomains"] = f[prefix+"spread minDomains"] || s.MinDomains > 0
	}
	for _, a := range p.AntiAffinity {
		kind := "required"
		if a.Weight > 0 {
			kind = "preferred"
		}
		f[prefix+"antiAffinity "+shortKey(a.Key)+" "+kind] = true
	}
	for _, a := range p.Affinity {
		kind := "required"
		if a.Weight > 0 {
			kind = "preferred"
		}
		f[prefix+"affinity "+shortKey(a.Key)+" "+kind] = true
	}
	f[prefix+"hostPort"] = f[prefix+"hostPort"] || p.HostPort > 0
}

func shortKey(k string) string { return k[strings.LastIndex(k, "/")+1:] }
