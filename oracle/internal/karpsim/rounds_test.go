package karpsim

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/karplint/karplint/oracle/internal/catalog"
	"github.com/karplint/karplint/oracle/internal/prices"
	"github.com/karplint/karplint/oracle/internal/scenario"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

// runRounds runs testdata/scenarios/<name> to its fixed point with the shared catalog and
// the repository's price table.
func runRounds(t *testing.T, name string) *Result {
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
	table, err := prices.Read("../../../data/prices/on-demand.csv")
	if err != nil {
		t.Fatal(err)
	}
	res, err := RunRounds(context.Background(), sc, conv.ByNodePool, Config{Prices: table})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func byPod(ps []verdict.Pod) map[string]verdict.Pod {
	out := map[string]verdict.Pod{}
	for _, p := range ps {
		out[p.Pod] = p
	}
	return out
}

// Each launched NodeClaim charges its real capacity (2 CPUs of a c6i.large) to the limits,
// not the largest type it might have become, so each round places what the last left room
// for.
func TestRoundsRefillLimits(t *testing.T) {
	res := runRounds(t, "rounds-limits")
	first := byPod(res.Pods)
	for _, pod := range []string{"default/spread-0", "default/spread-1"} {
		if p := first[pod]; p.Outcome != verdict.Scheduled || p.NodePool != "small" {
			t.Errorf("round 1 %s: %s %q, want scheduled on small", pod, p.Outcome, p.NodePool)
		}
	}
	for _, pod := range []string{"default/spread-2", "default/spread-3"} {
		if p := first[pod]; p.Outcome != verdict.Pending || p.FirstKind() != "limits" {
			t.Errorf("round 1 %s: %s %v (%s), want pending on limits", pod, p.Outcome, p.Kinds(), p.Reason)
		}
	}
	final := byPod(res.Final)
	wantRound := map[string]int{"default/spread-0": 1, "default/spread-1": 1, "default/spread-2": 2, "default/spread-3": 3}
	for pod, round := range wantRound {
		p := final[pod]
		if p.Outcome != verdict.Scheduled || p.NodePool != "small" || p.Round != round {
			t.Errorf("fixed point %s: %s on %q in round %d (%s), want small in round %d", pod, p.Outcome, p.NodePool, p.Round, p.Reason, round)
		}
	}
	if res.Rounds != 4 {
		t.Errorf("%d rounds, want 4 (the last places nothing)", res.Rounds)
	}
	if len(res.Launched) != 4 {
		t.Fatalf("%d nodes launched, want 4: %+v", len(res.Launched), res.Launched)
	}
	for _, ln := range res.Launched {
		if ln.InstanceType != "c6i.large" || ln.Zone != "us-east-1a" {
			t.Errorf("launched %s as %s in %q, want the cheapest type c6i.large in the first zone", ln.Node, ln.InstanceType, ln.Zone)
		}
	}
}

// A static Node is an unmanaged existing node: three replicas fit there, the other two
// fail on the tainted pool, and later rounds change nothing.
func TestStaticNodeAbsorbsPods(t *testing.T) {
	res := runRounds(t, "static-node")
	for _, pods := range [][]verdict.Pod{res.Pods, res.Final} {
		got := byPod(pods)
		on, pending := 0, 0
		for _, p := range got {
			switch {
			case p.Outcome == verdict.Scheduled && p.NodePool == ExistingNodePool:
				on++
			case p.Outcome == verdict.Pending && p.FirstKind() == "taint":
				pending++
			default:
				t.Errorf("%s: %s %q %v", p.Pod, p.Outcome, p.NodePool, p.Kinds())
			}
		}
		if on != 3 || pending != 2 {
			t.Errorf("%d on the static node and %d pending on the taint, want 3 and 2", on, pending)
		}
	}
	if res.Rounds != 2 || len(res.Launched) != 0 {
		t.Errorf("%d rounds, %d launched; want 2 rounds (the second places nothing) and no launch", res.Rounds, len(res.Launched))
	}
}
