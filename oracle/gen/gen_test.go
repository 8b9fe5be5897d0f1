package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

const validityScenarios = 500

func TestSameSeedSameBytes(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1 << 40} {
		for i := range uint64(50) {
			a, b := Generate(seed, i), Generate(seed, i)
			if RenderManifests(a) != RenderManifests(b) || RenderConfig(a) != RenderConfig(b) {
				t.Fatalf("seed %d index %d: two runs differ", seed, i)
			}
		}
	}
}

func TestSeedsAndIndicesDiffer(t *testing.T) {
	seen := map[string]string{}
	for _, seed := range []uint64{1, 2} {
		for i := range uint64(20) {
			s := Generate(seed, i)
			body := RenderManifests(s)
			body = body[strings.Index(body, "\n"):] // drop the header naming seed and index
			if other, dup := seen[body]; dup {
				t.Fatalf("%s and %s are identical", Dir(s), other)
			}
			seen[body] = Dir(s)
		}
	}
}

func TestScenariosAreValid(t *testing.T) {
	saved := P
	defer func() { P = saved }()
	P.StaticNodes = 0.3
	for i := range uint64(validityScenarios) {
		s := Generate(7, i)
		var errs []string
		errs = append(errs, checkScenario(s)...)
		errs = append(errs, checkRendered(RenderManifests(s))...)
		for _, e := range errs {
			t.Errorf("%s: %s", Dir(s), e)
		}
	}
}

func TestFeaturesAppear(t *testing.T) {
	saved := P
	defer func() { P = saved }()
	P.StaticNodes = 0.2
	tl := newTally()
	for i := range uint64(1000) {
		tl.add(Generate(3, i))
	}
	want := []string{
		"zones=2", "zones=3", "nc.alias=bottlerocket", "nc.maxPods", "nc.kubeReserved",
		"nc.blockDeviceMappings", "np.minValues", "np.taint NoSchedule", "np.taint NoExecute",
		"np.taint PreferNoSchedule", "np.startupTaints", "np.weight", "np.limits cpu",
		"np.limits memory", "np.req instance-generation Gt", "np.req instance-cpu Lt",
		"np.req team Exists", "np.req capacity-type In", "ds.hostPort", "ds.toleration blanket",
		"pod.request nvidia.com/gpu", "pod.podLevelResources", "pod.requiredTerms=2",
		"pod.preferred", "pod.spread zone DoNotSchedule", "pod.spread hostname ScheduleAnyway",
		"pod.antiAffinity hostname required", "pod.antiAffinity zone required", "pod.hostPort",
		"pod.ignored (nodepool DoesNotExist)", "pod.toleration Equal", "pod.required Gt",
		"job", "job.completions", "job.completions<parallelism", "job.hostPort", "node",
		"node.taint", "node.label team", "nodes=3",
	}
	for _, f := range want {
		if tl[f] < 5 {
			t.Errorf("feature %q appears in %d of 1000 scenarios", f, tl[f])
		}
	}
}

// checkScenario holds the model to the CRD and Kubernetes API rules the scenario must pass.
func checkScenario(s *Scenario) []string {
	var errs []string
	if len(s.Zones) < 2 || len(s.Zones) > 3 {
		errs = append(errs, fmt.Sprintf("%d zones", len(s.Zones)))
	}
	classes := map[string]bool{}
	for _, nc := range s.NodeClasses {
		classes[nc.Name] = true
		if nc.Alias != "al2023@latest" && nc.Alias != "bottlerocket@latest" {
			errs = append(errs, "alias "+nc.Alias)
		}
	}
	for _, np := range s.NodePools {
		errs = append(errs, checkNodePool(&np, classes)...)
	}
	for _, wl := range append(append(append([]Workload{}, s.DaemonSets...), s.Deployments...), s.Jobs...) {
		errs = append(errs, checkPod(wl.Name, &wl.Pod)...)
		if wl.Kind == "Deployment" && (wl.Replicas < 1 || wl.Replicas > 5) {
			errs = append(errs, fmt.Sprintf("%s: %d replicas", wl.Name, wl.Replicas))
		}
		if wl.Kind == "Job" && (wl.Parallelism < 1 || wl.Completions < 0 || wl.Pods() < 1 || wl.Pods() > wl.Parallelism) {
			errs = append(errs, fmt.Sprintf("%s: parallelism %d, completions %d, %d pods", wl.Name, wl.Parallelism, wl.Completions, wl.Pods()))
		}
	}
	names := map[string]bool{}
	zones := map[string]bool{}
	for _, z := range s.Zones {
		zones[z] = true
	}
	for _, n := range s.Nodes {
		if names[n.Name] {
			errs = append(errs, "two Nodes named "+n.Name)
		}
		names[n.Name] = true
		if !zones[n.Zone] {
			errs = append(errs, fmt.Sprintf("Node %s in zone %s, not one of the cluster's", n.Name, n.Zone))
		}
		if len(n.Allocatable) != len(n.Capacity) {
			errs = append(errs, "Node "+n.Name+": allocatable and capacity name different resources")
		}
	}
	return errs
}

// An old seed keeps its objects: the features added later draw after every other, so a
// scenario only gains lines from them (documents, and a NodePool's narrow cpu limit).
func TestLaterFeaturesOnlyAdd(t *testing.T) {
	saved := P
	defer func() { P = saved }()
	P.StaticNodes = 0.5
	for i := range uint64(300) {
		full := strings.Split(RenderManifests(Generate(20261130, i)), "\n")
		on := P
		P.Job, P.NarrowLimits, P.StaticNodes = 0, 0, 0
		s := Generate(20261130, i)
		P = on
		old := strings.Split(RenderManifests(s), "\n")
		j := 0
		for _, line := range full {
			if j < len(old) && line == old[j] {
				j++
			}
		}
		if j != len(old) {
			t.Fatalf("%s: line %q of the older features is gone", Dir(s), old[j])
		}
	}
}

func checkNodePool(np *NodePool, classes map[string]bool) []string {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, np.Name+": "+fmt.Sprintf(format, args...))
	}
	if !classes[np.NodeClass] {
		bad("nodeClassRef %s does not exist", np.NodeClass)
	}
	if np.Weight < 0 || np.Weight > 100 {
		bad("weight %d", np.Weight)
	}
	for _, r := range np.Reqs {
		for _, e := range checkReq(r, true) {
			bad("%s", e)
		}
		if r.Key == keyCapacityType {
			for _, v := range r.Values {
				if v != "on-demand" && v != "spot" && v != "reserved" {
					bad("capacity-type value %q", v)
				}
			}
		}
	}
	for _, l := range np.Labels {
		if restrictedPoolKey(l.Key) {
			bad("restricted label %s", l.Key)
		}
	}
	for _, ts := range [][]Taint{np.Taints, np.StartupTaints} {
		seen := map[string]bool{}
		for _, tn := range ts {
			if !validEffect(tn.Effect) || tn.Key == "" || seen[tn.Key+":"+tn.Effect] {
				bad("taint %+v", tn)
			}
			seen[tn.Key+":"+tn.Effect] = true
		}
	}
	return errs
}

// checkReq is the CRD's rule set for one requirement; pool requirements may carry minValues
// and must not use restricted keys.
func checkReq(r Req, pool bool) []string {
	var errs []string
	switch r.Op {
	case "In", "NotIn":
		if len(r.Values) == 0 {
			errs = append(errs, r.Key+" "+r.Op+" has no values")
		}
	case "Exists", "DoesNotExist":
		if len(r.Values) != 0 {
			errs = append(errs, r.Key+" "+r.Op+" has values")
		}
	case "Gt", "Lt":
		if len(r.Values) != 1 {
			errs = append(errs, fmt.Sprintf("%s %s has %d values", r.Key, r.Op, len(r.Values)))
		} else if n, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil || n < 0 {
			errs = append(errs, fmt.Sprintf("%s %s %q is not a non-negative integer", r.Key, r.Op, r.Values[0]))
		}
	default:
		errs = append(errs, "operator "+r.Op)
	}
	if r.MinValues != 0 && (!pool || r.MinValues < 1 || r.MinValues > 50) {
		errs = append(errs, fmt.Sprintf("%s minValues %d", r.Key, r.MinValues))
	}
	if r.Op == "In" && r.MinValues > len(r.Values) {
		errs = append(errs, fmt.Sprintf("%s minValues %d > %d values", r.Key, r.MinValues, len(r.Values)))
	}
	if pool && restrictedPoolKey(r.Key) {
		errs = append(errs, "restricted key "+r.Key)
	}
	return errs
}

// restrictedPoolKey: keys a NodePool may not use (CRD CEL, core v1 and the AWS provider).
func restrictedPoolKey(k string) bool {
	switch {
	case k == keyHostname || k == keyNodePool:
		return true
	case strings.HasPrefix(k, "karpenter.sh/"):
		return k != keyCapacityType
	case strings.HasPrefix(k, "karpenter.k8s.aws/"):
		return !strings.HasPrefix(k, "karpenter.k8s.aws/instance-")
	}
	return false
}

func validEffect(e string) bool {
	return e == "NoSchedule" || e == "PreferNoSchedule" || e == "NoExecute"
}

func checkPod(name string, p *Pod) []string {
	var errs []string
	bad := func(format string, args ...any) {
		errs = append(errs, name+": "+fmt.Sprintf(format, args...))
	}
	for _, t := range p.Required {
		if len(t) == 0 {
			bad("empty required term")
		}
		for _, r := range t {
			for _, e := range checkReq(r, false) {
				bad("%s", e)
			}
		}
	}
	for _, pt := range p.Preferred {
		if pt.Weight < 1 || pt.Weight > 100 {
			bad("preferred weight %d", pt.Weight)
		}
		for _, r := range pt.Term {
			for _, e := range checkReq(r, false) {
				bad("%s", e)
			}
		}
	}
	for _, a := range append(p.AntiAffinity, p.Affinity...) {
		if a.Weight < 0 || a.Weight > 100 {
			bad("(anti-)affinity weight %d", a.Weight)
		}
	}
	for _, tol := range p.Tolerations {
		if (tol.Key == "" && tol.Op != "Exists") || (tol.Op == "Exists" && tol.Value != "") ||
			(tol.Effect != "" && !validEffect(tol.Effect)) {
			bad("toleration %+v", tol)
		}
	}
	for _, s := range p.Spreads {
		if s.MaxSkew < 1 || (s.MinDomains != 0 && s.When != "DoNotSchedule") {
			bad("spread %+v", s)
		}
	}
	if len(p.PodRequests) > 0 && (p.Requests[0] != KV{"cpu", "100m"} || p.Requests[1] != KV{"memory", "128Mi"}) {
		bad("container requests %v may exceed pod-level %v", p.Requests, p.PodRequests)
	}
	return errs
}

// checkRendered reads the YAML text back: every operator that needs values is followed by
// them, no empty lists, no tabs.
func checkRendered(y string) []string {
	var errs []string
	lines := strings.Split(y, "\n")
	for i, l := range lines {
		if strings.Contains(l, "\t") || strings.Contains(l, "[]") {
			errs = append(errs, fmt.Sprintf("line %d: %q", i+1, l))
		}
		op, isOp := strings.CutPrefix(strings.TrimSpace(l), "operator: ")
		needs := op == "In" || op == "NotIn" || op == "Gt" || op == "Lt"
		if isOp && needs && (i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "values: [\"")) {
			errs = append(errs, fmt.Sprintf("line %d: %s without values", i+1, op))
		}
	}
	return errs
}

// The checks themselves must catch what the CRD rejects.
func TestCheckReqRejectsInvalid(t *testing.T) {
	bad := []Req{
		{Key: keyFamily, Op: "In"},
		{Key: keyCPU, Op: "Gt", Values: []string{"1.5"}},
		{Key: keyCPU, Op: "Lt", Values: []string{"-1"}},
		{Key: keyCPU, Op: "Lt", Values: []string{"2", "3"}},
		{Key: keyFamily, Op: "In", Values: []string{"m5"}, MinValues: 2},
		{Key: keyInstanceType, Op: "Exists", MinValues: 51},
		{Key: keyHostname, Op: "Exists"},
		{Key: "karpenter.sh/registered", Op: "Exists"},
		{Key: keyZone, Op: "Exists", Values: []string{"us-east-1a"}},
		{Key: keyZone, Op: "Gte", Values: []string{"1"}},
	}
	for _, r := range bad {
		if len(checkReq(r, true)) == 0 {
			t.Errorf("%+v passed", r)
		}
	}
	if errs := checkReq(Req{Key: keyFamily, Op: "In", Values: []string{"m5", "c5"}, MinValues: 2}, true); len(errs) > 0 {
		t.Errorf("valid requirement rejected: %v", errs)
	}
}
