package karpsim

import (
	"regexp"

	"github.com/karplint/karplint/oracle/internal/verdict"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/utils/pretty"
)

// template is one NodeClaim template Scheduler.addToNewNodeClaim tries: its NodePool and
// the taints its NodeClaims carry, as Karpenter's errors print them (pretty.Taint).
type template struct {
	name   string
	taints []string
}

func newTemplate(np *v1.NodePool) template {
	t := template{name: np.Name}
	for _, taint := range np.Spec.Template.Spec.Taints {
		t.taints = append(t.taints, pretty.Taint(taint))
	}
	return t
}

var taintOf = regexp.MustCompile(`did not tolerate taint \(taint=(.*)\)$`)

// attribute names the NodePool of each of a pod's failures. Scheduler.addToNewNodeClaim
// returns multierr.Combine of one error per template, which flattens the error of a
// template whose several taints the pod does not tolerate (Taints.Tolerates appends one
// error per taint, in the taints' order) into as many failures. So a template's share is
// either one failure, or one or more taint failures that follow the order of its taints.
// The failures are named only when exactly one such split of them fits the templates.
func attribute(fs []verdict.Failure, templates []template) {
	var splits [][]int
	var walk func(j, i int, owner []int)
	walk = func(j, i int, owner []int) {
		if len(splits) > 1 {
			return
		}
		if i == len(templates) || j == len(fs) {
			if i == len(templates) && j == len(fs) {
				splits = append(splits, append([]int(nil), owner...))
			}
			return
		}
		for _, n := range shares(fs[j:], templates[i]) {
			next := owner
			for range n {
				next = append(next, i)
			}
			walk(j+n, i+1, next)
		}
	}
	walk(0, 0, make([]int, 0, len(fs)))
	if len(splits) != 1 {
		return
	}
	for j, i := range splits[0] {
		fs[j].NodePool = templates[i].name
	}
}

// shares gives how many of the failures fs starts with may be template t's: one that is
// not a taint's, or a run of taint failures whose taints come in the order of t's.
func shares(fs []verdict.Failure, t template) []int {
	if m := taintOf.FindStringSubmatch(fs[0].Message); m == nil {
		return []int{1}
	}
	var out []int
	at := 0
	for n, f := range fs {
		m := taintOf.FindStringSubmatch(f.Message)
		if m == nil {
			break
		}
		for at < len(t.taints) && t.taints[at] != m[1] {
			at++
		}
		if at == len(t.taints) {
			break
		}
		at++
		out = append(out, n+1)
	}
	return out
}
