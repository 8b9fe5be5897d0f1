// Package karplint runs the karplint binary on a scenario (`plan --format json DIR`,
// `debug instance-types DIR`) and turns its plan rows into per-pod verdicts, one per
// Deployment replica (docs/oracle-contract.md "karplint's side").
package karplint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/karplint/karplint/oracle/internal/verdict"
)

// Object names the workload of a plan row.
type Object struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// PodRow is one replica's verdict, when karplint packs replicas. karplint goes on to a
// fixed point; FirstRound, for a pod Pending after the first round (placed in a later one or
// never), is the kind of its failure then.
type PodRow struct {
	Replica  int     `json:"replica"`
	Outcome  string  `json:"outcome"`
	NodePool *string `json:"nodepool"`
	// NodeGroup is the static node group a replica is bound to.
	NodeGroup  *string `json:"node_group"`
	Round      int     `json:"round"`
	Kind       string  `json:"kind"`
	FirstRound string  `json:"first_round"`
}

// Failure is one NodePool's error, in the order Karpenter tries the NodePools; NodePools,
// when several refuse in the same words (the first one's message), lists them all.
type Failure struct {
	NodePool  string   `json:"nodepool"`
	Kind      string   `json:"kind"`
	Message   string   `json:"message"`
	NodePools []string `json:"nodepools"`
}

// Row is one workload of `karplint plan --format json`.
type Row struct {
	Object   Object    `json:"object"`
	Replicas int       `json:"replicas"`
	Outcome  string    `json:"outcome"`
	NodePool *string   `json:"nodepool"`
	Reason   *string   `json:"reason"`
	Pods     []PodRow  `json:"pods"`
	Failures []Failure `json:"failures"`
}

// Binary is a karplint executable.
type Binary struct {
	Path    string
	Timeout time.Duration
}

func (b Binary) run(ctx context.Context, args ...string) ([]byte, error) {
	timeout := b.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.Path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	// `plan` exits 1 when a workload stays Pending; only a missing or unparsable stdout is an
	// error.
	if err != nil && stdout.Len() == 0 {
		return nil, fmt.Errorf("karplint %s: %w: %s", strings.Join(args, " "), err, firstLine(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// Plan runs `karplint plan --format json DIR` and returns its raw output.
func (b Binary) Plan(ctx context.Context, dir string) ([]byte, error) {
	return b.run(ctx, append([]string{"plan", "--format", "json"}, withConfig(dir)...)...)
}

// InstanceTypes runs `karplint debug instance-types DIR` and returns its raw output.
func (b Binary) InstanceTypes(ctx context.Context, dir string) ([]byte, error) {
	return b.run(ctx, append([]string{"debug", "instance-types"}, withConfig(dir)...)...)
}

// withConfig names the scenario's .karplint.yaml explicitly: karplint looks for its config
// from the working directory, not from the linted path, so without it the cluster's zones
// (and so every offering) would be lost.
func withConfig(dir string) []string {
	cfg := filepath.Join(dir, ".karplint.yaml")
	if _, err := os.Stat(cfg); err == nil {
		return []string{"--config", cfg, dir}
	}
	return []string{dir}
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// PlanVersion is the version of `plan --format json` this package reads.
const PlanVersion = 1

// Plan is the output of `karplint plan --format json`: `{"version": 1, "workloads": [...]}`.
type Plan struct {
	Version   int   `json:"version"`
	Workloads []Row `json:"workloads"`
}

// ParsePlan parses plan JSON: the versioned object, or a bare array of rows (the
// unversioned form).
func ParsePlan(b []byte) ([]Row, error) {
	trimmed := bytes.TrimSpace(b)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		var rows []Row
		if err := json.Unmarshal(trimmed, &rows); err != nil {
			return nil, fmt.Errorf("karplint plan json: %w", err)
		}
		return rows, nil
	}
	var plan Plan
	if err := json.Unmarshal(trimmed, &plan); err != nil {
		return nil, fmt.Errorf("karplint plan json: %w", err)
	}
	if plan.Version != PlanVersion {
		return nil, fmt.Errorf("karplint plan json: version %d, want %d", plan.Version, PlanVersion)
	}
	if plan.Workloads == nil {
		return nil, fmt.Errorf("karplint plan json: no \"workloads\" array")
	}
	return plan.Workloads, nil
}

// Workloads are the kinds of plan rows the oracle compares: those whose pods it makes.
var Workloads = map[string]bool{"Deployment": true, "Job": true}

// Pods expands the Deployment and Job rows into one verdict per replica after karplint's
// first round, named like the oracle names the pods (`<workload>-<i>`).
func Pods(rows []Row) []verdict.Pod { return expand(rows, false) }

// Final expands the rows into each replica's verdict at karplint's fixed point.
func Final(rows []Row) []verdict.Pod { return expand(rows, true) }

func expand(rows []Row, final bool) []verdict.Pod {
	var out []verdict.Pod
	for _, r := range rows {
		if !Workloads[r.Object.Kind] {
			continue
		}
		ns := r.Object.Namespace
		if ns == "" {
			ns = "default"
		}
		perReplica := map[int]PodRow{}
		for _, p := range r.Pods {
			perReplica[p.Replica] = p
		}
		for i := 0; i < r.Replicas; i++ {
			v := verdict.Pod{
				Pod:      fmt.Sprintf("%s/%s-%d", ns, r.Object.Name, i),
				Workload: r.Object.Kind + "/" + ns + "/" + r.Object.Name,
				Replica:  i,
			}
			if p, ok := perReplica[i]; ok {
				fillFromPod(&v, r, p, final)
			} else {
				fillFromRow(&v, r)
				if final && v.Outcome == verdict.Scheduled {
					v.Round = 1
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// ExistingNodePool is what the oracle calls the pool of a pod bound to a static node
// (karpsim.ExistingNodePool).
const ExistingNodePool = "(existing node)"

func fillFromRow(v *verdict.Pod, r Row) {
	v.Outcome = outcome(r.Outcome)
	if r.NodePool != nil && v.Outcome == verdict.Scheduled {
		v.NodePool = *r.NodePool
	}
	if r.Reason != nil {
		v.Reason = *r.Reason
	}
	if v.Outcome == verdict.Pending {
		for _, f := range r.Failures {
			v.Failures = append(v.Failures, failures(f)...)
		}
	}
}

func fillFromPod(v *verdict.Pod, r Row, p PodRow, final bool) {
	v.Outcome = outcome(p.Outcome)
	// After the first round: a replica with first_round was Pending then, with that kind.
	if p.FirstRound != "" && !final {
		v.Outcome = verdict.Pending
		p.Kind = p.FirstRound
	}
	if p.NodePool != nil && v.Outcome == verdict.Scheduled {
		v.NodePool = *p.NodePool
	}
	if p.NodeGroup != nil && v.Outcome == verdict.Scheduled {
		// Bound to a static node before the first round's batch.
		v.NodePool = ExistingNodePool
		p.Round = 1
	}
	if final && v.Outcome == verdict.Scheduled {
		v.Round = p.Round
	}
	if v.Outcome != verdict.Pending {
		return
	}
	if r.Reason != nil && outcome(r.Outcome) == verdict.Pending {
		v.Reason = *r.Reason
	}
	if p.Kind != "" {
		v.Failures = []verdict.Failure{{Kind: p.Kind, Message: v.Reason}}
		return
	}
	for _, f := range r.Failures {
		v.Failures = append(v.Failures, failures(f)...)
	}
}

// failures keeps karplint's kind; a row without one is classified from its message. An
// entry that lists the NodePools refusing in the same words is one failure per NodePool.
func failures(f Failure) []verdict.Failure {
	k := f.Kind
	if k == "" {
		k = verdict.Classify(f.Message)
	}
	pools := f.NodePools
	if len(pools) == 0 {
		pools = []string{f.NodePool}
	}
	out := make([]verdict.Failure, len(pools))
	for i, p := range pools {
		out[i] = verdict.Failure{NodePool: p, Kind: k, Message: f.Message}
	}
	return out
}

// outcome maps karplint's outcomes onto the oracle's. `not-provisioned` on a Deployment is
// a pod requiring karpenter.sh/nodepool DoesNotExist, which Karpenter's Validate ignores.
func outcome(s string) verdict.Outcome {
	switch s {
	case "schedules":
		return verdict.Scheduled
	case "pending":
		return verdict.Pending
	case "ignored", "not-provisioned":
		return verdict.Ignored
	}
	return verdict.Unknown
}

// Lint runs `karplint --format json DIR` (the lint, as CI and pre-commit run it) and
// returns its raw output.
func (b Binary) Lint(ctx context.Context, dir string) ([]byte, error) {
	return b.run(ctx, append([]string{"--format", "json"}, withConfig(dir)...)...)
}

// Diagnostic is one finding of the lint's JSON report.
type Diagnostic struct {
	Rule    string    `json:"rule"`
	Message string    `json:"message"`
	Object  Object    `json:"object"`
	Related []Related `json:"related,omitempty"`
}

// Related is one note of a diagnostic: a place in another object and what it says.
type Related struct {
	Message string `json:"message"`
}

// ParseLint parses `karplint --format json`: `{"version": 1, "diagnostics": [...]}`.
func ParseLint(b []byte) ([]Diagnostic, error) {
	var doc struct {
		Version     int          `json:"version"`
		Diagnostics []Diagnostic `json:"diagnostics"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(b), &doc); err != nil {
		return nil, fmt.Errorf("karplint lint json: %w", err)
	}
	if doc.Version != 1 {
		return nil, fmt.Errorf("karplint lint json: version %d, want 1", doc.Version)
	}
	if doc.Diagnostics == nil {
		return nil, fmt.Errorf("karplint lint json: no \"diagnostics\" array")
	}
	return doc.Diagnostics, nil
}
