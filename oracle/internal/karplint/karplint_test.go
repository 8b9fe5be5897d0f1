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
