// Package lintcheck compares the lint's scheduling findings (`karplint --format json`) with
// Karpenter's verdict at the fixed point, workload by workload
// (docs/oracle-contract.md "Comparison of the lint's findings").
package lintcheck

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/karplint/karplint/oracle/internal/karplint"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

// Rules are the lint's scheduling rules and the failure kinds each reports: the kind of
// Karpenter's error for a Pending replica says which rule must report it.
var Rules = map[string][]string{
	"untolerated-taint":             {"taint"},
	"incompatible-requirements":     {"requirements"},
	"no-instance-type-fits":         {"resources", "min-values", verdict.KindNoNodePool, "host-ports", "volume"},
	"replicas-exceed-capacity":      {"limits"},
	"unsatisfiable-topology-spread": {"topology"},
	"unsatisfiable-pod-affinity":    {"topology"},
	"restricted-label-selector":     {verdict.KindIgnored},
}

// RuleFor is the rule a kind is reported under (the first, for topology).
func RuleFor(kind string) string {
	names := make([]string, 0, len(Rules))
	for r := range Rules {
		names = append(names, r)
	}
	sort.Strings(names)
	for _, r := range names {
		for _, k := range Rules[r] {
			if k == kind {
				return r
			}
		}
	}
	return ""
}

// Workload is the comparison of one workload.
type Workload struct {
	Workload string `json:"workload"`
	Agree    bool   `json:"agree"`
	Class    string `json:"class,omitempty"`
	// Karpenter's side at the fixed point.
	Pods    int      `json:"pods"`
	Pending int      `json:"pending"`
	Kinds   []string `json:"kinds,omitempty"` // of the Pending pods, each once, in replica order
	// PoolKinds are the kinds Karpenter's errors give each NodePool, for the Pending pods.
	PoolKinds map[string][]string `json:"poolKinds,omitempty"`
	// The lint's side.
	Findings    []karplint.Diagnostic `json:"findings,omitempty"`
	LintPending int                   `json:"lintPending"`
}

var (
	batchHead = regexp.MustCompile(`^(\d+) of (\d+) replicas stay Pending`)
	// The pod (anti-)affinity findings that count the replicas a node or the zones hold.
	soPending = regexp.MustCompile(`, so (\d+) replicas stay Pending$`)
)

// pendingOf is how many replicas a scheduling finding says stay Pending: "K of N replicas
// stay Pending …" (the batch), "…, so K replicas stay Pending" (pod affinity's counts),
// else every replica ("no NodePool can schedule this pod").
func pendingOf(d karplint.Diagnostic, pods int) int {
	for _, re := range []*regexp.Regexp{batchHead, soPending} {
		if m := re.FindStringSubmatch(d.Message); m != nil {
			n, _ := strconv.Atoi(m[1])
			return n
		}
	}
	return pods
}

// MessageKind classifies the Karpenter part of a finding's message (after its last
// `NodePool "name": `) with the oracle's classifier.
func MessageKind(msg string) string {
	if i := strings.LastIndex(msg, `": `); i >= 0 && strings.Contains(msg[:i], `NodePool "`) {
		msg = msg[i+3:]
	}
	return verdict.Classify(msg)
}

// Compare judges every workload of Karpenter's fixed-point verdicts against the lint's
// findings: a workload with Pending pods must have a scheduling finding whose rule reports
// one of their kinds, whose message classifies as that rule's kind, and which counts as
// many Pending replicas; a workload fully placed must have none. Pods Karpenter ignores
// are Pending for good: a restricted label must be reported by restricted-label-selector,
// a pod kept off Karpenter's nodes (karpenter.sh/nodepool DoesNotExist) is not judged.
func Compare(final []verdict.Pod, diags []karplint.Diagnostic) []Workload {
	byWorkload := map[string][]verdict.Pod{}
	var order []string
	for _, p := range final {
		if _, ok := byWorkload[p.Workload]; !ok {
			order = append(order, p.Workload)
		}
		byWorkload[p.Workload] = append(byWorkload[p.Workload], p)
	}
	findings := map[string][]karplint.Diagnostic{}
	for _, d := range diags {
		if _, ok := Rules[d.Rule]; !ok {
			continue
		}
		ns := d.Object.Namespace
		if ns == "" {
			ns = "default"
		}
		k := d.Object.Kind + "/" + ns + "/" + d.Object.Name
		findings[k] = append(findings[k], d)
	}
	var out []Workload
	for _, w := range order {
		out = append(out, compareOne(w, byWorkload[w], findings[w]))
		delete(findings, w)
	}
	rest := make([]string, 0, len(findings))
	for w := range findings {
		rest = append(rest, w)
	}
	sort.Strings(rest)
	for _, w := range rest {
		out = append(out, Workload{Workload: w, Findings: findings[w], Class: "finding on a workload the oracle has no pods of"})
	}
	return out
}

func compareOne(name string, pods []verdict.Pod, ds []karplint.Diagnostic) Workload {
	w := Workload{Workload: name, Pods: len(pods), Findings: ds}
	seen := map[string]bool{}
	unjudged := false
	for _, p := range pods {
		kind := ""
		switch p.Outcome {
		case verdict.Pending:
			kind = p.FirstKind()
		case verdict.Ignored:
			if !strings.Contains(p.Reason, "restricted") {
				unjudged = true
				continue
			}
			kind = verdict.KindIgnored
		default:
			continue
		}
		w.Pending++
		for _, f := range p.Failures {
			if f.NodePool == "" {
				continue
			}
			if w.PoolKinds == nil {
				w.PoolKinds = map[string][]string{}
			}
			if !contains(w.PoolKinds[f.NodePool], f.Kind) {
				w.PoolKinds[f.NodePool] = append(w.PoolKinds[f.NodePool], f.Kind)
			}
		}
		if !seen[kind] {
			seen[kind] = true
			w.Kinds = append(w.Kinds, kind)
		}
	}
	for _, d := range ds {
		w.LintPending = max(w.LintPending, pendingOf(d, len(pods)))
	}
	switch {
	case unjudged && w.Pending == 0:
		w.Agree, w.Class = true, ""
	case w.Pending == 0 && len(ds) == 0:
		w.Agree = true
	case w.Pending == 0:
		w.Class = fmt.Sprintf("karpenter places every pod, lint %s", ds[0].Rule)
	case len(ds) == 0:
		w.Class = fmt.Sprintf("karpenter %s, lint says nothing", strings.Join(w.Kinds, "+"))
	default:
		w.Agree, w.Class = judge(w, ds)
	}
	return w
}

// judge a workload with Pending pods and findings: some finding's rule reports a kind of
// the Pending pods, its message reads as its rule's kind, and it counts the Pending pods.
func judge(w Workload, ds []karplint.Diagnostic) (bool, string) {
	var class string
	for _, d := range ds {
		kinds := Rules[d.Rule]
		// The pool the finding leads with (karplint names the pool the pod was meant for,
		// not always the first Karpenter tried) must have failed the way its rule says.
		// A topology finding names no pool: it is about the pools its notes say offer the
		// domains it counts, the pools the pod can use.
		want := w.Kinds
		if pool := namedPool(d.Message); pool != "" && w.PoolKinds[pool] != nil {
			want = w.PoolKinds[pool]
		} else if pools := offeringPools(d); len(pools) > 0 {
			if kinds := offeringKinds(w.PoolKinds, pools); len(kinds) > 0 {
				want = kinds
			}
		}
		if !overlaps(kinds, want) {
			class = fmt.Sprintf("karpenter %s, lint %s", strings.Join(want, "+"), d.Rule)
			continue
		}
		if mk := MessageKind(d.Message); !contains(kinds, mk) && d.Rule != "restricted-label-selector" {
			class = fmt.Sprintf("lint %s, its message reads %s", d.Rule, mk)
			continue
		}
		if n := pendingOf(d, w.Pods); n != w.Pending {
			class = fmt.Sprintf("%s: karpenter leaves %d of %d Pending, lint %d", d.Rule, w.Pending, w.Pods, n)
			continue
		}
		return true, ""
	}
	return false, class
}

var poolName = regexp.MustCompile(`NodePool "([^"]*)": `)

// namedPool is the NodePool a finding's message leads with.
func namedPool(msg string) string {
	if m := poolName.FindStringSubmatch(msg); m != nil {
		return m[1]
	}
	return ""
}

// offeringKinds are the kinds Karpenter's errors give the offering pools. A pool refused
// on its limits was never asked about topology: addToNewNodeClaim filters a NodePool's
// instance types by its remaining resources before NodeClaim.CanAdd adds the topology
// requirements. There, the topology Karpenter refused the same pods with on another pool
// (its domains are the pod's, not the pool's) stands for the topology it did not check.
func offeringKinds(poolKinds map[string][]string, pools []string) []string {
	var kinds []string
	add := func(k string) {
		if !contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	for _, pool := range pools {
		for _, k := range poolKinds[pool] {
			add(k)
			if k == "limits" && anyPoolKind(poolKinds, "topology") {
				add("topology")
			}
		}
	}
	return kinds
}

// anyPoolKind reports whether Karpenter's errors give some NodePool the kind.
func anyPoolKind(poolKinds map[string][]string, kind string) bool {
	for _, ks := range poolKinds {
		if contains(ks, kind) {
			return true
		}
	}
	return false
}

var offersNote = regexp.MustCompile(`^NodePool "([^"]*)" offers `)

// offeringPools are the NodePools a topology finding's notes name as offering the domains
// it counts ("NodePool \"np\" offers topology.kubernetes.io/zone [...]").
func offeringPools(d karplint.Diagnostic) []string {
	var pools []string
	for _, r := range d.Related {
		if m := offersNote.FindStringSubmatch(r.Message); m != nil {
			pools = append(pools, m[1])
		}
	}
	return pools
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if contains(b, x) {
			return true
		}
	}
	return false
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
