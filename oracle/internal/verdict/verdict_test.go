package verdict

import "testing"

// Messages as Karpenter v1.14.3 prints them (pkg/controllers/provisioning/scheduling
// nodeclaim.go, scheduler.go, topologygroup.go, volumetopology.go).
func TestClassify(t *testing.T) {
	cases := []struct{ msg, kind string }{
		{"did not tolerate taint (taint=dedicated=ml:NoSchedule)", "taint"},
		{`incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]`, "requirements"},
		{`incompatible requirements, label "team" does not have known values`, "requirements"},
		{"incompatible volume requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1d] not in topology.kubernetes.io/zone In [us-east-1a]", "volume"},
		{`no instance type has enough resources, requirements=karpenter.sh/nodepool In [general], resources={"cpu":"8100m"}`, "resources"},
		{"no instance type met the scheduling requirements or had enough resources, requirements=..., resources=...", "resources"},
		{"no instance type has the required offering, requirements=..., resources=...", "resources"},
		{"all available instance types exceed limits for nodepool (NodePool=general)", "limits"},
		{"node limits have been exhausted for nodepool (NodePool=general)", "limits"},
		{"minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]), requirements=..., resources=...", "min-values"},
		{"unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = map[us-east-1a:1], podDomains = ..., nodeDomains = ...", "topology"},
		{"unsatisfiable topology constraint for pod anti-affinity, key=kubernetes.io/hostname", "topology"},
		{"checking host port usage, pod hostport conflicts with existing hostport configuration", "host-ports"},
		{"pod hostport conflicts with existing hostport configuration", "host-ports"},
		// A host port a DaemonSet holds, on a new NodeClaim: every DaemonSet overhead group is
		// skipped, so no instance type is checked at all.
		{`no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=karpenter.sh/nodepool In [general], resources={"cpu":"100m","pods":"1"}`, "resources"},
		{"no dynamic nodepools found", "other"},
		// A requirement's own minValues printed in a message about something else.
		{`no instance type has enough resources, requirements=karpenter.k8s.aws/instance-family In [c6i r6i] minValues 2, karpenter.sh/nodepool In [np-a], resources={"cpu":"9"}`, "resources"},
		{"incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1d] not in topology.kubernetes.io/zone In [us-east-1a] minValues 2", "requirements"},
		{"unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = us-east-1a: 1, podDomains = topology.kubernetes.io/zone In [us-east-1a] minValues 2, nodeDomains = topology.kubernetes.io/zone In [us-east-1a] minValues 2", "topology"},
		{"pod didn’t schedule because NodePool couldn’t meet minValues requirements, minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family])", "min-values"},
		{"nodepool requirements filtered out all available instance types", "no-nodepool"},
		// The domains topology leaves, refused by a NodeClaim's requirements (CanAdd returns
		// Requirements.Intersects' error unwrapped).
		{"key topology.kubernetes.io/zone, topology.kubernetes.io/zone DoesNotExist not in topology.kubernetes.io/zone In [us-east-1a us-east-1c]", "requirements"},
		{"", "other"},
	}
	for _, c := range cases {
		if got := Classify(c.msg); got != c.kind {
			t.Errorf("Classify(%q) = %q, want %q", c.msg, got, c.kind)
		}
	}
}

func pending(kinds ...string) Pod {
	p := Pod{Pod: "default/a-0", Outcome: Pending}
	for _, k := range kinds {
		p.Failures = append(p.Failures, Failure{Kind: k})
	}
	return p
}

func TestCompare(t *testing.T) {
	sched := func(np string) Pod { return Pod{Pod: "default/a-0", Outcome: Scheduled, NodePool: np} }
	ign := Pod{Pod: "default/a-0", Outcome: Ignored}
	cases := []struct {
		name       string
		karp, lint Pod
		agree      bool
		class      string
	}{
		{"same pool", sched("a"), sched("a"), true, ""},
		{"other pool", sched("a"), sched("b"), false, "different nodepool"},
		{"first kind only", pending("taint", "requirements"), pending("taint", "resources"), true, ""},
		{"first kind differs", pending("taint", "requirements"), pending("requirements"), false, "karpenter taint, karplint requirements"},
		{"one schedules", pending("resources"), sched("a"), false, "karpenter resources, karplint schedules"},
		{"both ignore", ign, ign, true, ""},
		{"ignored vs pending", ign, pending("requirements"), false, "karpenter ignored, karplint requirements"},
		{"no nodepool left", Pod{Outcome: Pending, Reason: "nodepool requirements filtered out all available instance types"}, pending("no-nodepool"), true, ""},
		{"reason only", Pod{Outcome: Pending, Reason: "did not tolerate taint (taint=a:NoSchedule)"}, pending("taint"), true, ""},
		{"karplint silent", sched("a"), Pod{Outcome: Unknown}, false, "karpenter schedules, karplint unknown"},
	}
	for _, c := range cases {
		got := Compare(c.karp, c.lint)
		if got.Agree != c.agree || got.Class != c.class {
			t.Errorf("%s: agree=%v class=%q, want agree=%v class=%q", c.name, got.Agree, got.Class, c.agree, c.class)
		}
	}
}
