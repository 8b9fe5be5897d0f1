package karpsim

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/karplint/karplint/oracle/internal/catalog"
	"github.com/karplint/karplint/oracle/internal/scenario"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

// run solves testdata/scenarios/<name> with the shared catalog for every NodePool.
func run(t *testing.T, name string) map[string]verdict.Pod {
	t.Helper()
	sc, err := scenario.Load(filepath.Join("../../testdata/scenarios", name))
	if err != nil {
		t.Fatal(err)
	}
	sh, err := catalog.ReadShared("../../testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, np := range sc.NodePools {
		names = append(names, np.Name)
	}
	conv, err := sh.ForNodePools(names).Convert()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), sc, conv.ByNodePool)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]verdict.Pod{}
	for _, p := range res.Pods {
		out[p.Pod] = p
	}
	return out
}

type want struct {
	outcome  verdict.Outcome
	nodepool string
	kinds    []string // per NodePool, in the order Karpenter tried them
	pools    []string
}

func check(t *testing.T, got map[string]verdict.Pod, wants map[string]want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Errorf("%d pods, want %d", len(got), len(wants))
	}
	for pod, w := range wants {
		p, ok := got[pod]
		if !ok {
			t.Errorf("%s: no verdict", pod)
			continue
		}
		if p.Outcome != w.outcome || p.NodePool != w.nodepool {
			t.Errorf("%s: %s on %q (%s), want %s on %q", pod, p.Outcome, p.NodePool, p.Reason, w.outcome, w.nodepool)
		}
		if w.kinds != nil && !reflect.DeepEqual(p.Kinds(), w.kinds) {
			t.Errorf("%s: kinds %v, want %v (%s)", pod, p.Kinds(), w.kinds, p.Reason)
		}
		if w.pools != nil {
			var pools []string
			for _, f := range p.Failures {
				pools = append(pools, f.NodePool)
			}
			if !reflect.DeepEqual(pools, w.pools) {
				t.Errorf("%s: failures from %v, want %v", pod, pools, w.pools)
			}
		}
	}
}

func TestUntoleratedTaint(t *testing.T) {
	check(t, run(t, "taint"), map[string]want{
		"default/web-0": {outcome: verdict.Pending, kinds: []string{"taint"}, pools: []string{"ml"}},
		"default/web-1": {outcome: verdict.Pending, kinds: []string{"taint"}, pools: []string{"ml"}},
	})
}

// 8 cpu against at most 4 vCPU; the 3-cpu pod asks by limits only and gets them as
// requests, and still fits a 4-vCPU type next to the DaemonSet's 100m.
func TestTooBigForEveryType(t *testing.T) {
	check(t, run(t, "too-big"), map[string]want{
		"default/huge-0": {outcome: verdict.Pending, kinds: []string{"resources"}, pools: []string{"general"}},
		"default/fits-0": {outcome: verdict.Scheduled, nodepool: "general"},
	})
}

func TestHeavierNodePoolWins(t *testing.T) {
	check(t, run(t, "weights"), map[string]want{
		"default/api-0": {outcome: verdict.Scheduled, nodepool: "b-heavy"},
		"default/api-1": {outcome: verdict.Scheduled, nodepool: "b-heavy"},
		"default/api-2": {outcome: verdict.Scheduled, nodepool: "b-heavy"},
	})
}

func TestGPUIgnoredAndUnknownLabel(t *testing.T) {
	check(t, run(t, "mixed"), map[string]want{
		"default/trainer-0": {outcome: verdict.Scheduled, nodepool: "gpu"},
		"default/pinned-0":  {outcome: verdict.Ignored},
		"default/team-0":    {outcome: verdict.Pending, kinds: []string{"taint", "requirements"}, pools: []string{"gpu", "general"}},
	})
}

// A NodePool naming a missing EC2NodeClass is not Ready, so Karpenter has no NodePool.
func TestNodePoolWithoutNodeClassIsNotReady(t *testing.T) {
	sc, err := scenario.Load("../../testdata/scenarios/weights")
	if err != nil {
		t.Fatal(err)
	}
	sc.NodeClasses = nil
	res, err := Run(context.Background(), sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, np := range res.NodePools {
		if np.Ready || np.Reason != "NodeClassNotFound" {
			t.Errorf("nodepool %s ready=%v reason=%q", np.Name, np.Ready, np.Reason)
		}
	}
	for _, p := range res.Pods {
		if p.Outcome != verdict.Pending || p.Reason != "no dynamic nodepools found" {
			t.Errorf("%s: %s %q", p.Pod, p.Outcome, p.Reason)
		}
	}
}

func TestHostPortHeldByDaemonSetIsResources(t *testing.T) {
	check(t, run(t, "host-port"), map[string]want{
		"default/clash-0": {outcome: verdict.Pending, kinds: []string{"resources"}, pools: []string{"general"}},
	})
}
