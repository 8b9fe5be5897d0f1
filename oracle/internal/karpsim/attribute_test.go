package karpsim

import (
	"testing"

	"github.com/karplint/karplint/oracle/internal/verdict"
)

func taintFailure(taint string) verdict.Failure {
	return verdict.Failure{Kind: "taint", Message: "did not tolerate taint (taint=" + taint + ")"}
}

func TestAttributeSplitsATemplatesSeveralTaints(t *testing.T) {
	req := verdict.Failure{Kind: "requirements", Message: `incompatible requirements, label "team" does not have known values`}
	cases := []struct {
		name      string
		templates []template
		failures  []verdict.Failure
		want      []string
	}{
		{"one failure per template",
			[]template{{name: "a", taints: []string{"x=1:NoSchedule"}}, {name: "b"}},
			[]verdict.Failure{taintFailure("x=1:NoSchedule"), req},
			[]string{"a", "b"}},
		{"two taints of the first template",
			[]template{{name: "a", taints: []string{"x=1:NoSchedule", "y:NoExecute"}}, {name: "b"}},
			[]verdict.Failure{taintFailure("x=1:NoSchedule"), taintFailure("y:NoExecute"), req},
			[]string{"a", "a", "b"}},
		{"a taint of each of two templates",
			[]template{{name: "a", taints: []string{"x=1:NoSchedule", "y:NoExecute"}}, {name: "b", taints: []string{"y:NoExecute"}}},
			[]verdict.Failure{taintFailure("x=1:NoSchedule"), taintFailure("y:NoExecute")},
			[]string{"a", "b"}},
		{"both taints of the first, one of the second",
			[]template{{name: "a", taints: []string{"x=1:NoSchedule", "y:NoExecute"}}, {name: "b", taints: []string{"y:NoExecute"}}},
			[]verdict.Failure{taintFailure("x=1:NoSchedule"), taintFailure("y:NoExecute"), taintFailure("y:NoExecute")},
			[]string{"a", "a", "b"}},
		{"two splits fit: left unnamed",
			[]template{{name: "a", taints: []string{"x:NoSchedule", "y:NoSchedule"}}, {name: "b", taints: []string{"y:NoSchedule", "z:NoSchedule"}}},
			[]verdict.Failure{taintFailure("x:NoSchedule"), taintFailure("y:NoSchedule"), taintFailure("z:NoSchedule")},
			[]string{"", "", ""}},
		{"more failures than fit: left unnamed",
			[]template{{name: "a", taints: []string{"x=1:NoSchedule"}}},
			[]verdict.Failure{taintFailure("x=1:NoSchedule"), taintFailure("y:NoExecute")},
			[]string{"", ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			attribute(c.failures, c.templates)
			for i, f := range c.failures {
				if f.NodePool != c.want[i] {
					t.Errorf("failure %d: NodePool %q, want %q", i, f.NodePool, c.want[i])
				}
			}
		})
	}
}
