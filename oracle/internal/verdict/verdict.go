// Package verdict is what each side says about one pod, the failure kinds of Karpenter's
// messages, and the per-pod comparison (docs/oracle-contract.md "Failure kinds" and
// "Comparison, per pod").
package verdict

import (
	"fmt"
	"strings"
)

// Outcome of one pod.
type Outcome string

// Outcomes.
const (
	Scheduled Outcome = "scheduled"
	Pending   Outcome = "pending"
	Ignored   Outcome = "ignored"
	// Unknown is a pod a side said nothing about (e.g. a replica karplint has no row for).
	Unknown Outcome = "unknown"
)

// KindIgnored is the first kind of a pod Karpenter ignores before scheduling.
const KindIgnored = "ignored"

// Failure is one NodePool's error for a pod.
type Failure struct {
	NodePool string `json:"nodepool,omitempty"`
	Kind     string `json:"kind"`
	Message  string `json:"message"`
}

// Pod is one side's verdict on one pod.
type Pod struct {
	Pod      string  `json:"pod"`      // namespace/name, name = <workload>-<i>
	Workload string  `json:"workload"` // Kind/namespace/name
	Replica  int     `json:"replica"`
	Outcome  Outcome `json:"outcome"`
	NodePool string  `json:"nodepool,omitempty"`
	// Round is the provisioning round that placed the pod (at the fixed point only).
	Round    int       `json:"round,omitempty"`
	Reason   string    `json:"reason,omitempty"` // the whole message, when not scheduled
	Failures []Failure `json:"failures,omitempty"`
}

// FirstKind is the kind the comparison reads for a pod that is not scheduled.
func (p Pod) FirstKind() string {
	switch p.Outcome {
	case Ignored:
		return KindIgnored
	case Pending:
		if len(p.Failures) > 0 {
			return p.Failures[0].Kind
		}
		return Classify(p.Reason)
	}
	return ""
}

// Misclassified is the first per-NodePool failure whose kind is not the class of its
// message by Classify, and that class: a side's own kind must be what its words say.
func (p Pod) Misclassified() (*Failure, string) {
	for i, f := range p.Failures {
		if f.NodePool == "" || f.Message == "" {
			continue
		}
		if read := Classify(f.Message); read != f.Kind {
			return &p.Failures[i], read
		}
	}
	return nil, ""
}

// Kinds lists the kind of every per-NodePool failure, in order.
func (p Pod) Kinds() []string {
	out := make([]string, len(p.Failures))
	for i, f := range p.Failures {
		out[i] = f.Kind
	}
	return out
}

// KindNoNodePool is the kind of Karpenter's error when NewScheduler dropped every NodePool
// because its own requirements left none of its instance types (scheduler.go:
// "nodepool requirements filtered out all available instance types"); the error names no
// NodePool.
const KindNoNodePool = "no-nodepool"

// Karpenter v1.14.3's wording of the messages whose kind is not found by a phrase shared
// with other messages.
const (
	MsgNoNodePool = "nodepool requirements filtered out all available instance types"
	// MsgNoCompatibleInstanceTypes is the NodePool event NewScheduler publishes for the same
	// drop (events.go NoCompatibleInstanceTypes).
	MsgNoCompatibleInstanceTypes = "nodepool requirements filtered out all compatible available instance types"
	// MsgHostPortConflict is pkg/scheduling/hostportusage.go's error; existingnode.go wraps
	// it as "checking host port usage, ...". Both are only said of existing or in-flight
	// nodes, never of a new NodeClaim.
	MsgHostPortConflict = "pod hostport conflicts with existing hostport configuration"
	MsgHostPortUsage    = "checking host port usage"
)

// Karpenter v1.14.3's minValues failures (cloudprovider/types.go SatisfiesMinValues,
// scheduler.go, nodeclaim.go). Matched as phrases, not on "minValues" alone: every message
// that prints requirements (`requirements=…`, `… not in …`, topology domains) prints a
// requirement's own " minValues N", which says nothing about why the pod failed.
var minValuesPhrases = []string{
	"minvalues requirement is not met",
	"couldn’t meet minvalues requirements",
	"couldn't meet minvalues requirements",
	"validating minvalues",
}

// Classify gives the failure kind of one NodePool's Karpenter message. The order of the
// checks matters where one phrase contains another ("incompatible volume requirements"
// before "incompatible requirements").
//
// Host ports: a pod whose host port a DaemonSet already holds fails on a new NodeClaim
// without any host-port wording in v1.14.3. filterInstanceTypesByRequirements
// (nodeclaim.go) skips every DaemonSet overhead group whose HostPortUsage conflicts with
// the pod, so no instance type is even looked at and InstanceTypeFilterError says "no
// instance type met the scheduling requirements or had enough resources or had a required
// offering": that is classified as Karpenter words it, resources. host-ports is kept for the
// two messages that do name host ports (MsgHostPortUsage, MsgHostPortConflict).
func Classify(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case m == "":
		return "other"
	case strings.Contains(m, "did not tolerate"):
		return "taint"
	case strings.Contains(m, "incompatible volume requirements"):
		return "volume"
	case strings.Contains(m, "incompatible requirements"):
		return "requirements"
	case strings.HasPrefix(m, "key ") && strings.Contains(m, " not in "):
		// Requirements.Intersects unwrapped: NodeClaim.CanAdd returns it as is when the
		// domains topology leaves conflict with the NodeClaim's requirements.
		return "requirements"
	case containsAny(m, minValuesPhrases):
		return "min-values"
	case strings.Contains(m, "exceed limits"), strings.Contains(m, "limits have been exhausted"):
		return "limits"
	case strings.Contains(m, "unsatisfiable topology constraint"):
		return "topology"
	case strings.Contains(m, MsgNoNodePool), strings.Contains(m, MsgNoCompatibleInstanceTypes):
		return KindNoNodePool
	case strings.Contains(m, MsgHostPortUsage), strings.Contains(m, MsgHostPortConflict):
		return "host-ports"
	case strings.Contains(m, "no instance type"):
		return "resources"
	}
	return "other"
}

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// Comparison of the two sides' verdicts on one pod.
type Comparison struct {
	Pod       string `json:"pod"`
	Agree     bool   `json:"agree"`
	Class     string `json:"class,omitempty"` // why they disagree, e.g. "karplint schedules, karpenter resources"
	Karpenter Pod    `json:"karpenter"`
	Karplint  Pod    `json:"karplint"`
}

// Compare applies the contract's rule: both schedule or neither; if scheduled, the same
// NodePool; if not, the same first failure kind.
func Compare(karpenter, karplint Pod) Comparison {
	c := Comparison{Pod: karpenter.Pod, Karpenter: karpenter, Karplint: karplint}
	ks, ls := karpenter.Outcome == Scheduled, karplint.Outcome == Scheduled
	switch {
	case karplint.Outcome == Unknown || karpenter.Outcome == Unknown:
		c.Class = fmt.Sprintf("karpenter %s, karplint %s", summary(karpenter), summary(karplint))
	case ks && ls:
		c.Agree = karpenter.NodePool == karplint.NodePool
		if !c.Agree {
			c.Class = "different nodepool"
		}
	case !ks && !ls:
		c.Agree = karpenter.FirstKind() == karplint.FirstKind()
		if !c.Agree {
			c.Class = fmt.Sprintf("karpenter %s, karplint %s", karpenter.FirstKind(), karplint.FirstKind())
		} else if f, read := karplint.Misclassified(); f != nil {
			c.Agree = false
			c.Class = fmt.Sprintf("karplint says %s, its message reads %s", f.Kind, read)
		}
	default:
		c.Class = fmt.Sprintf("karpenter %s, karplint %s", summary(karpenter), summary(karplint))
	}
	return c
}

func summary(p Pod) string {
	switch p.Outcome {
	case Scheduled:
		return "schedules"
	case Unknown:
		return "unknown"
	}
	return p.FirstKind()
}

// CompareFinal compares the two sides at the fixed point: as Compare, and a pod both place
// on the same NodePool must be placed in the same round.
func CompareFinal(karpenter, karplint Pod) Comparison {
	c := Compare(karpenter, karplint)
	if c.Agree && karpenter.Outcome == Scheduled && karpenter.Round != karplint.Round {
		c.Agree = false
		c.Class = fmt.Sprintf("different round (karpenter %d, karplint %d)", karpenter.Round, karplint.Round)
	}
	return c
}
