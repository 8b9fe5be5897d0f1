package karplint

import (
	"testing"

	"github.com/karplint/karplint/oracle/internal/verdict"
)

const plan = `{"version": 1, "workloads": [
 {"object": {"kind": "DaemonSet", "name": "logs", "namespace": "kube-system"}, "replicas": 1,
  "outcome": "not-provisioned", "nodepool": null, "reason": "DaemonSet or nodeName: Karpenter does not provision for it"},
 {"object": {"kind": "Deployment", "name": "web"}, "replicas": 2, "outcome": "pending", "nodepool": null,
  "reason": "NodePool \"ml\": did not tolerate taint (taint=dedicated=ml:NoSchedule)",
  "failures": [{"nodepool": "ml", "kind": "taint", "message": "did not tolerate taint (taint=dedicated=ml:NoSchedule)"},
               {"nodepool": "general", "kind": "", "message": "no instance type has enough resources"}]},
 {"object": {"kind": "Deployment", "name": "api", "namespace": "prod"}, "replicas": 3, "outcome": "schedules",
  "nodepool": "a", "reason": null,
  "pods": [{"replica": 2, "outcome": "pending", "nodepool": null, "kind": "limits"}]},
 {"object": {"kind": "Deployment", "name": "agent", "namespace": "default"}, "replicas": 1,
  "outcome": "not-provisioned", "nodepool": null, "reason": "requires karpenter.sh/nodepool DoesNotExist"},
 {"object": {"kind": "Deployment", "name": "old", "namespace": "default"}, "replicas": 1,
  "outcome": "pending", "nodepool": null, "reason": "NodePool \"a\": all available instance types exceed limits for nodepool (NodePool=a)"}
]}`

func TestPodsExpandsReplicas(t *testing.T) {
	rows, err := ParsePlan([]byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	pods := Pods(rows)
	got := map[string]verdict.Pod{}
	for _, p := range pods {
		got[p.Pod] = p
	}
	if len(pods) != 7 {
		t.Fatalf("%d pods, want 7 (DaemonSet rows are not pods): %v", len(pods), pods)
	}
	for pod, want := range map[string]struct {
		outcome verdict.Outcome
		np      string
		first   string
	}{
		"default/web-0":   {verdict.Pending, "", "taint"},
		"default/web-1":   {verdict.Pending, "", "taint"},
		"prod/api-0":      {verdict.Scheduled, "a", ""},
		"prod/api-1":      {verdict.Scheduled, "a", ""},
		"prod/api-2":      {verdict.Pending, "", "limits"},
		"default/agent-0": {verdict.Ignored, "", "ignored"},
		"default/old-0":   {verdict.Pending, "", "limits"},
	} {
		p := got[pod]
		if p.Outcome != want.outcome || p.NodePool != want.np || p.FirstKind() != want.first {
			t.Errorf("%s: %s %q %q, want %s %q %q", pod, p.Outcome, p.NodePool, p.FirstKind(), want.outcome, want.np, want.first)
		}
	}
	if k := got["default/web-0"].Kinds(); len(k) != 2 || k[1] != "resources" {
		t.Errorf("web-0 kinds %v: a failure without a kind is classified from its message", k)
	}
}

func TestParsePlanRejectsGarbage(t *testing.T) {
	for _, b := range []string{
		"error: no such file",
		`{"version": 2, "workloads": []}`,
		`{"version": 1}`,
	} {
		if _, err := ParsePlan([]byte(b)); err == nil {
			t.Errorf("%s: accepted", b)
		}
	}
}

func TestParsePlanReadsTheVersionedObjectAndTheOldArray(t *testing.T) {
	row := `{"object": {"kind": "Deployment", "name": "web"}, "file": "w.yaml", "line": 4, "column": 9,
	  "replicas": 1, "outcome": "schedules", "nodepool": "a", "reason": null}`
	for _, b := range []string{`{"version": 1, "workloads": [` + row + `]}`, "\n [" + row + "]"} {
		rows, err := ParsePlan([]byte(b))
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if len(rows) != 1 || rows[0].Object.Name != "web" || rows[0].Outcome != "schedules" {
			t.Errorf("%s: %+v", b, rows)
		}
	}
}

const rounds = `{"version": 1, "workloads": [
 {"object": {"kind": "Job", "name": "batch"}, "replicas": 3, "outcome": "schedules", "nodepool": "a", "reason": null,
  "pods": [{"replica": 0, "outcome": "schedules", "nodepool": null, "node_group": "ng", "kind": null},
           {"replica": 1, "outcome": "schedules", "nodepool": "a", "round": 1, "kind": null},
           {"replica": 2, "outcome": "schedules", "nodepool": "a", "round": 2, "kind": null, "first_round": "limits"}]}
]}`

// After round 1 a replica with first_round is Pending with that kind; at the fixed point it
// is placed, in its round. A replica on a static node is on "(existing node)", in round 1.
func TestPodsAndFinalOfRounds(t *testing.T) {
	rows, err := ParsePlan([]byte(rounds))
	if err != nil {
		t.Fatal(err)
	}
	first, final := Pods(rows), Final(rows)
	if len(first) != 3 || len(final) != 3 {
		t.Fatalf("%d and %d pods, want 3", len(first), len(final))
	}
	if p := first[2]; p.Outcome != verdict.Pending || p.FirstKind() != "limits" || p.Workload != "Job/default/batch" {
		t.Errorf("after round 1, %s: %s %s (%s)", p.Pod, p.Outcome, p.FirstKind(), p.Workload)
	}
	for i, want := range []struct {
		pool  string
		round int
	}{{ExistingNodePool, 1}, {"a", 1}, {"a", 2}} {
		if p := final[i]; p.Outcome != verdict.Scheduled || p.NodePool != want.pool || p.Round != want.round {
			t.Errorf("fixed point %s: %s %q round %d, want %q round %d", p.Pod, p.Outcome, p.NodePool, p.Round, want.pool, want.round)
		}
	}
	if p := first[0]; p.NodePool != ExistingNodePool {
		t.Errorf("after round 1, %s: %q, want %q", p.Pod, p.NodePool, ExistingNodePool)
	}
}

func TestGroupedFailuresAreOnePerNodePool(t *testing.T) {
	const grouped = `{"version": 1, "workloads": [
 {"object": {"kind": "Deployment", "name": "sel"}, "replicas": 1, "outcome": "pending", "nodepool": null,
  "reason": "NodePool \"c\": incompatible requirements",
  "failures": [{"nodepool": "c", "kind": "requirements", "message": "incompatible requirements",
                "nodepools": ["c", "b", "a"]},
               {"nodepool": "gpu", "kind": "taint", "message": "did not tolerate taint (taint=gpu:NoSchedule)"}]}
]}`
	rows, err := ParsePlan([]byte(grouped))
	if err != nil {
		t.Fatal(err)
	}
	pods := Pods(rows)
	if len(pods) != 1 {
		t.Fatalf("%d pods, want 1", len(pods))
	}
	var got []string
	for _, f := range pods[0].Failures {
		got = append(got, f.NodePool+":"+f.Kind)
	}
	want := []string{"c:requirements", "b:requirements", "a:requirements", "gpu:taint"}
	if len(got) != len(want) {
		t.Fatalf("failures %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("failures %v, want %v", got, want)
		}
	}
}
