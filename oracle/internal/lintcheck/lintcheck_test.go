package lintcheck

import (
	"testing"

	"github.com/karplint/karplint/oracle/internal/karplint"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

func pending(name string, replica int, pool, kind, msg string) verdict.Pod {
	return verdict.Pod{Pod: "default/" + name, Workload: "Deployment/default/api", Replica: replica, Outcome: verdict.Pending,
		Reason: msg, Failures: []verdict.Failure{{NodePool: pool, Kind: kind, Message: msg}}}
}

func placed(name string, replica int) verdict.Pod {
	return verdict.Pod{Pod: "default/" + name, Workload: "Deployment/default/api", Replica: replica, Outcome: verdict.Scheduled, NodePool: "np"}
}

func finding(rule, msg string) karplint.Diagnostic {
	return karplint.Diagnostic{Rule: rule, Message: msg, Object: karplint.Object{Kind: "Deployment", Namespace: "default", Name: "api"}}
}

// withNote gives d a related note reading msg.
func withNote(d karplint.Diagnostic, msg string) karplint.Diagnostic {
	d.Related = append(d.Related, karplint.Related{Message: msg})
	return d
}

// tried is api-0 placed and api-1 Pending with reason, refused by each NodePool as given.
func tried(reason string, failures ...verdict.Failure) []verdict.Pod {
	return []verdict.Pod{placed("api-0", 0), {Pod: "default/api-1", Workload: "Deployment/default/api", Replica: 1,
		Outcome: verdict.Pending, Reason: reason, Failures: failures}}
}

func failure(pool, kind, msg string) verdict.Failure {
	return verdict.Failure{NodePool: pool, Kind: kind, Message: msg}
}

// repelled is the zone anti-affinity finding for api's 2 replicas, its note naming pool as
// the one offering the zone.
func repelled(pool string) karplint.Diagnostic {
	return withNote(finding("unsatisfiable-pod-affinity", antiMsg+`: 2 replicas repel each other but the NodePools this pod can use offer 1 topology.kubernetes.io/zone domain(s) [us-east-1a], so 1 replicas stay Pending`),
		`NodePool "`+pool+`" offers topology.kubernetes.io/zone [us-east-1a]`)
}

const (
	antiMsg     = "unsatisfiable topology constraint for pod anti-affinity, key=topology.kubernetes.io/zone"
	limitsMsg   = "all available instance types exceed limits for nodepool (NodePool=np)"
	topologyMsg = "unsatisfiable topology constraint for pod affinity, key=kubernetes.io/hostname"
)

func TestCompare(t *testing.T) {
	twoOfThree := []verdict.Pod{placed("api-0", 0), pending("api-1", 1, "np", "limits", limitsMsg), pending("api-2", 2, "np", "limits", limitsMsg)}
	cases := []struct {
		name  string
		pods  []verdict.Pod
		diags []karplint.Diagnostic
		agree bool
		class string
	}{
		{"placed, no finding", []verdict.Pod{placed("api-0", 0)}, nil, true, ""},
		{"placed, a finding", []verdict.Pod{placed("api-0", 0)},
			[]karplint.Diagnostic{finding("untolerated-taint", `no NodePool can schedule this pod: NodePool "np": did not tolerate taint`)},
			false, "karpenter places every pod, lint untolerated-taint"},
		{"pending, no finding", twoOfThree, nil, false, "karpenter limits, lint says nothing"},
		{"pending, the right rule and count", twoOfThree,
			[]karplint.Diagnostic{finding("replicas-exceed-capacity", `2 of 3 replicas stay Pending once every pod of the run is placed: NodePool "np": `+limitsMsg)},
			true, ""},
		{"pending, the wrong count", twoOfThree,
			[]karplint.Diagnostic{finding("replicas-exceed-capacity", `1 of 3 replicas stay Pending once every pod of the run is placed: NodePool "np": `+limitsMsg)},
			false, "replicas-exceed-capacity: karpenter leaves 2 of 3 Pending, lint 1"},
		{"pending, the wrong rule", twoOfThree,
			[]karplint.Diagnostic{finding("no-instance-type-fits", `2 of 3 replicas stay Pending once every pod of the run is placed: NodePool "np": no instance type has enough resources`)},
			false, "karpenter limits, lint no-instance-type-fits"},
		{"pending, pod affinity's own count", []verdict.Pod{placed("api-0", 0), pending("api-1", 1, "np", "topology", topologyMsg), pending("api-2", 2, "np", "topology", topologyMsg)},
			[]karplint.Diagnostic{finding("unsatisfiable-pod-affinity", topologyMsg+`: 3 replicas require affinity to their own labels, so all of them must join the first node Karpenter launches for them; a node of NodePool "np" holds 1, so 2 replicas stay Pending`)},
			true, ""},
		{"pending, topology on the pools the finding's notes name, a taint on the first pool",
			tried("did not tolerate taint", failure("tainted", "taint", "did not tolerate taint"), failure("np", "topology", antiMsg)),
			[]karplint.Diagnostic{repelled("np")}, true, ""},
		{"pending, topology on no pool the finding's notes name",
			tried("did not tolerate taint", failure("tainted", "taint", "did not tolerate taint"), failure("np", "topology", antiMsg)),
			[]karplint.Diagnostic{repelled("tainted")}, false, "karpenter taint, lint unsatisfiable-pod-affinity"},
		{"pending, limits on the pool the finding's notes name, topology on the first pool",
			tried(antiMsg, failure("first", "topology", antiMsg), failure("np", "limits", limitsMsg)),
			[]karplint.Diagnostic{repelled("np")}, true, ""},
		{"pending, limits on the pool the finding's notes name, topology on none",
			tried("did not tolerate taint", failure("tainted", "taint", "did not tolerate taint"), failure("np", "limits", limitsMsg)),
			[]karplint.Diagnostic{repelled("np")}, false, "karpenter limits, lint unsatisfiable-pod-affinity"},
		{"pending, a message that is not its rule's", twoOfThree,
			[]karplint.Diagnostic{finding("replicas-exceed-capacity", `2 of 3 replicas stay Pending once every pod of the run is placed: NodePool "np": no instance type has enough resources`)},
			false, "lint replicas-exceed-capacity, its message reads resources"},
	}
	for _, c := range cases {
		got := Compare(c.pods, c.diags)
		if len(got) != 1 {
			t.Fatalf("%s: %d workloads", c.name, len(got))
		}
		if got[0].Agree != c.agree || got[0].Class != c.class {
			t.Errorf("%s: agree %v class %q, want %v %q", c.name, got[0].Agree, got[0].Class, c.agree, c.class)
		}
	}
}

func TestMessageKind(t *testing.T) {
	for msg, want := range map[string]string{
		`no NodePool can schedule this pod: NodePool "np-b": NodePool requirements filtered out all compatible available instance types`: verdict.KindNoNodePool,
		`3 of 20 replicas stay Pending once every pod of the run is placed: NodePool "gpu": ` + limitsMsg:                                "limits",
	} {
		if got := MessageKind(msg); got != want {
			t.Errorf("%q: %s, want %s", msg, got, want)
		}
	}
}
