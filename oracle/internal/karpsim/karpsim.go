// Package karpsim runs Karpenter's real provisioner (sigs.k8s.io/karpenter v1.14.3,
// pkg/controllers/provisioning Provisioner.Schedule, which builds the scheduler with
// NewScheduler + NewTopology and calls Solve) on one scenario, in-process, over
// controller-runtime's fake client with the field indexes Karpenter's operator registers.
// Nothing of the scheduler is re-implemented here: this package only lays out the cluster
// (Ready NodePools, DaemonSets, one pending pod per Deployment replica) and reads back, per
// pod, where Karpenter put it or why not.
package karpsim

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/awslabs/operatorpkg/status"
	"go.uber.org/multierr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/controllers/provisioning"
	pscheduling "sigs.k8s.io/karpenter/pkg/controllers/provisioning/scheduling"
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"

	_ "github.com/karplint/karplint/oracle/internal/awslabels" // the AWS provider's label registrations
	"github.com/karplint/karplint/oracle/internal/prices"
	"github.com/karplint/karplint/oracle/internal/scenario"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

// NodePoolState says whether Karpenter would use a NodePool, and why not.
type NodePoolState struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight"`
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
	Types  int    `json:"instanceTypes"`
}

// Result is Karpenter's verdict on every pod of a scenario.
type Result struct {
	// Pods is the verdict of the first provisioning round (one Provisioner.Schedule).
	Pods []verdict.Pod `json:"pods"`
	// Final is each pod's fate at the fixed point: rounds run until one places no pod.
	Final     []verdict.Pod   `json:"final"`
	NodePools []NodePoolState `json:"nodePools"`
	// NodeClaims counts the NodeClaims Karpenter would create in the first round, per NodePool.
	NodeClaims map[string]int `json:"nodeClaims"`
	// Rounds is how many Provisioner.Schedule calls ran (the last placed no pod).
	Rounds int `json:"rounds"`
	// Launched are the nodes the rounds' NodeClaims became.
	Launched []Launched    `json:"launched,omitempty"`
	Duration time.Duration `json:"-"`
}

// MaxRounds bounds the rounds of one scenario; each round that places a pod launches at
// least one node or fills an existing one, so a fixed point comes well before.
const MaxRounds = 64

// Config is what the rounds need besides the scenario and its instance types.
type Config struct {
	// Prices orders the instance types a NodeClaim launches (data/prices/on-demand.csv).
	// Without it the oracle runs one round only.
	Prices prices.Table
	// Rounds, when positive, stops after that many rounds.
	Rounds int
}

// Options returns Karpenter's controller options at their production defaults (the flag
// defaults of pkg/operator/options, read from the environment like the controller does).
func Options() (*options.Options, error) {
	o := &options.Options{}
	fs := &options.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	o.AddFlags(fs)
	if err := o.Parse(fs); err != nil {
		return nil, err
	}
	return o, nil
}

// Run schedules every pending pod of sc with the given instance types per NodePool, one
// round only.
func Run(ctx context.Context, sc *scenario.Scenario, its map[string][]*cloudprovider.InstanceType) (*Result, error) {
	return RunRounds(ctx, sc, its, Config{Rounds: 1})
}

// RunRounds runs provisioning rounds to a fixed point, as a cluster lives them: each round
// is one Provisioner.Schedule over the pods still Pending (GetPendingPods lists the pods
// with no node); after it, every NodeClaim it made launches (launcher: cheapest type,
// first zone) and becomes a registered, initialized Node with its NodeClaim in the cluster
// state (Cluster.UpdateNodeClaim, Cluster.UpdateNode), its pods and the DaemonSet pods that
// run there bound to it (Cluster.UpdatePod), and pods the round put on existing nodes are
// bound there. The next round's NewScheduler sees those nodes as existing nodes
// (calculateExistingNodeClaims → NewExistingNode), charges their capacity to their
// NodePool's limits (updateRemainingResources) and NewTopology counts their pods
// (countDomains). The rounds stop when one places no pod.
func RunRounds(ctx context.Context, sc *scenario.Scenario, its map[string][]*cloudprovider.InstanceType, cfg Config) (*Result, error) {
	start := time.Now()
	opts, err := Options()
	if err != nil {
		return nil, err
	}
	ctx = options.ToContext(ctx, opts)

	res := &Result{NodeClaims: map[string]int{}}
	objs := []client.Object{}
	for _, ns := range sc.Namespaces() {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{corev1.LabelMetadataName: ns}}})
	}
	nodeClasses := map[string]bool{}
	for _, nc := range sc.NodeClasses {
		nodeClasses[nc.Name] = true
		obj := &awsv1.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: nc.Name}}
		if nc.Object != nil {
			obj = nc.Object.DeepCopy()
		}
		objs = append(objs, obj)
	}
	for _, np := range sc.NodePools {
		np = np.DeepCopy()
		st := markReadiness(ctx, np, nodeClasses)
		st.Types = len(its[np.Name])
		res.NodePools = append(res.NodePools, st)
		objs = append(objs, np)
	}
	for _, ds := range sc.DaemonSets {
		objs = append(objs, ds.DeepCopy())
	}
	for _, n := range sc.Nodes {
		objs = append(objs, n.DeepCopy())
	}
	pods := []*corev1.Pod{}
	for _, w := range sc.Workloads() {
		for i := 0; i < w.Pods; i++ {
			p := podFor(w, i)
			pods = append(pods, p)
			objs = append(objs, p)
		}
	}

	kube := newClient(objs)
	cp := &cloudProvider{byNodePool: its}
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, kube, cp)
	// The static Nodes of the scenario, with the DaemonSet pods that run there: unmanaged
	// existing nodes (no NodeClaim: StateNode.Managed is false, so Registered and
	// Initialized), as the node controller's informer would put them in the cluster state.
	for _, n := range sc.Nodes {
		node := &corev1.Node{}
		if err := kube.Get(ctx, client.ObjectKeyFromObject(n), node); err != nil {
			return nil, err
		}
		for _, p := range daemonPodsFor(ctx, node, sc.DaemonSets) {
			if err := kube.Create(ctx, p); err != nil {
				return nil, err
			}
		}
		if err := cluster.UpdateNode(ctx, node); err != nil {
			return nil, fmt.Errorf("static node %s: %w", n.Name, err)
		}
	}
	rec := &recorder{}
	prov := provisioning.NewProvisioner(kube, rec, cp, cluster, clk, nil, nil)

	// Provisioner.GetPendingPods drops the pods Validate rejects ("ignoring pod"); ask the
	// same function first, to keep each ignored pod's reason.
	ignored := map[types.UID]error{}
	for _, p := range pods {
		if err := prov.Validate(ctx, p); err != nil {
			ignored[p.UID] = err
		}
	}
	l := &launcher{prices: cfg.Prices, zones: append([]string(nil), sc.Zones...)}
	sort.Strings(l.zones)
	placed := map[types.UID]string{}
	roundOf := map[types.UID]int{}
	errs := map[types.UID]error{}
	debug := os.Getenv("ORACLE_DEBUG_NODECLAIMS") != ""
	maxRounds := MaxRounds
	if cfg.Rounds > 0 {
		maxRounds = cfg.Rounds
	}
	if cfg.Prices == nil {
		maxRounds = 1
	}
	var templates []template
	for round := 1; round <= maxRounds; round++ {
		rec.reset()
		results, err := prov.Schedule(ctx)
		if err != nil {
			return nil, fmt.Errorf("karpenter round %d: %w", round, err)
		}
		res.Rounds = round
		if round == 1 {
			templates = templateOrder(sc.NodePools, res.NodePools, rec)
		}
		n := 0
		for _, en := range results.ExistingNodes {
			// A node an earlier round launched keeps its NodePool; a static node has none.
			pool := en.Labels()[v1.NodePoolLabelKey]
			if pool == "" {
				pool = ExistingNodePool
			}
			for _, p := range en.Pods {
				placed[p.UID] = pool
				roundOf[p.UID] = round
				if err := bind(ctx, kube, cluster, p, en.Name()); err != nil {
					return nil, err
				}
				n++
			}
		}
		for _, nc := range results.NewNodeClaims {
			if debug {
				names := make([]string, 0, len(nc.InstanceTypeOptions))
				for _, it := range nc.InstanceTypeOptions {
					names = append(names, it.Name)
				}
				podNames := make([]string, 0, len(nc.Pods))
				for _, p := range nc.Pods {
					podNames = append(podNames, p.Name)
				}
				fmt.Fprintf(os.Stderr, "round %d nodeclaim %s pods=%v requirements=%v types(%d)=%v\n", round, nc.NodePoolName, podNames, nc.Requirements, len(names), names)
			}
			if round == 1 {
				res.NodeClaims[nc.NodePoolName]++
			}
			for _, p := range nc.Pods {
				placed[p.UID] = nc.NodePoolName
				roundOf[p.UID] = round
				n++
			}
			if round == maxRounds {
				continue
			}
			if err := launchNode(ctx, kube, cluster, l, nc, round, sc.DaemonSets, res); err != nil {
				return nil, err
			}
		}
		if round == 1 {
			res.Pods = verdicts(pods, ignored, placed, errs, results, templates, res.NodePools, nil)
		}
		errs = map[types.UID]error{}
		for p, e := range results.PodErrors {
			errs[p.UID] = e
		}
		if n == 0 || round == maxRounds {
			res.Final = verdicts(pods, ignored, placed, errs, results, templates, res.NodePools, roundOf)
			break
		}
	}
	res.Duration = time.Since(start)
	return res, nil
}

// ExistingNodePool is the NodePool both sides give a pod bound to a node that already
// exists: a static node, or a node an earlier round launched.
const ExistingNodePool = "(existing node)"

// verdicts reads each pod's fate after a round: placed (in this or an earlier round), or
// the round's error for it. roundOf, when given, fills each placed pod's round.
func verdicts(pods []*corev1.Pod, ignored map[types.UID]error, placed map[types.UID]string, errs map[types.UID]error, results pscheduling.Results, templates []template, states []NodePoolState, roundOf map[types.UID]int) []verdict.Pod {
	errs = mergeErrors(errs, results)
	noPools := !anyReady(states)
	var out []verdict.Pod
	for _, p := range pods {
		v := podVerdict(p, ignored, placed, errs, noPools)
		attribute(v.Failures, templates)
		if roundOf != nil && v.Outcome == verdict.Scheduled {
			v.Round = roundOf[p.UID]
		}
		out = append(out, v)
	}
	return out
}

func mergeErrors(errs map[types.UID]error, results pscheduling.Results) map[types.UID]error {
	out := map[types.UID]error{}
	for k, v := range errs {
		out[k] = v
	}
	for p, e := range results.PodErrors {
		out[p.UID] = e
	}
	return out
}

// launchNode makes nc a node (launcher.launch, launcher.nodeFor) with its pods and the
// DaemonSet pods that run there bound to it, in the client and the cluster state.
func launchNode(ctx context.Context, kube client.Client, cluster *state.Cluster, l *launcher, nc *pscheduling.NodeClaim, round int, dss []*appsv1.DaemonSet, res *Result) error {
	it, zone, capacityType := l.launch(nc)
	if it == nil {
		return nil // no offering: Create fails, the pods stay where Karpenter nominated them
	}
	claim, node := l.nodeFor(nc, it, zone, capacityType)
	if err := kube.Create(ctx, claim); err != nil {
		return fmt.Errorf("nodeclaim %s: %w", claim.Name, err)
	}
	if err := kube.Create(ctx, node); err != nil {
		return fmt.Errorf("node %s: %w", node.Name, err)
	}
	for _, p := range daemonPodsFor(ctx, node, dss) {
		if err := kube.Create(ctx, p); err != nil {
			return err
		}
	}
	cluster.UpdateNodeClaim(claim)
	if err := cluster.UpdateNode(ctx, node); err != nil {
		return fmt.Errorf("node %s: %w", node.Name, err)
	}
	ln := Launched{Round: round, Node: node.Name, NodePool: nc.NodePoolName, InstanceType: it.Name, Zone: zone, CapacityType: capacityType}
	for _, p := range nc.Pods {
		if err := bind(ctx, kube, cluster, p, node.Name); err != nil {
			return err
		}
		ln.Pods = append(ln.Pods, p.Name)
	}
	res.Launched = append(res.Launched, ln)
	return nil
}

// bind binds pod p to node in the client and the cluster state (Cluster.UpdatePod).
func bind(ctx context.Context, kube client.Client, cluster *state.Cluster, p *corev1.Pod, node string) error {
	stored := &corev1.Pod{}
	if err := kube.Get(ctx, client.ObjectKeyFromObject(p), stored); err != nil {
		return err
	}
	bindTo(stored, node)
	if err := kube.Update(ctx, stored); err != nil {
		return fmt.Errorf("binding %s/%s: %w", p.Namespace, p.Name, err)
	}
	return cluster.UpdatePod(ctx, stored)
}

// templateOrder names the NodeClaim templates Scheduler.addToNewNodeClaim tries, in order:
// the Ready NodePools with instance types, by weight (nodepoolutils.OrderByWeight), less
// those NewScheduler dropped with a NoCompatibleInstanceTypes event. It also notes the drop
// on the NodePool's state.
func templateOrder(nps []*v1.NodePool, states []NodePoolState, rec *recorder) []template {
	dropped := map[string]string{}
	for _, e := range rec.events {
		if np, ok := e.InvolvedObject.(*v1.NodePool); ok && e.Reason == events.NoCompatibleInstanceTypes {
			dropped[np.Name] = e.Message
		}
	}
	usable := map[string]bool{}
	for i := range states {
		if msg, ok := dropped[states[i].Name]; ok {
			states[i].Reason = joinReason(states[i].Reason, msg)
		}
		usable[states[i].Name] = states[i].Ready && states[i].Types > 0 && dropped[states[i].Name] == ""
	}
	ordered := []*v1.NodePool{}
	for _, np := range nps {
		if usable[np.Name] {
			ordered = append(ordered, np)
		}
	}
	nodepoolutils.OrderByWeight(ordered)
	out := make([]template, len(ordered))
	for i, np := range ordered {
		out[i] = newTemplate(np)
	}
	return out
}

// recorder keeps the events Karpenter publishes during one run.
type recorder struct {
	mu     sync.Mutex
	events []events.Event
}

func (r *recorder) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

func (r *recorder) Publish(es ...events.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, es...)
}

func anyReady(nps []NodePoolState) bool {
	for _, np := range nps {
		if np.Ready {
			return true
		}
	}
	return false
}

func podVerdict(p *corev1.Pod, ignored map[types.UID]error, placed map[types.UID]string, errs map[types.UID]error, noPools bool) verdict.Pod {
	v := verdict.Pod{
		Pod:      p.Namespace + "/" + p.Name,
		Workload: p.Annotations[workloadLabel],
		Replica:  replicaOf(p),
	}
	if err, ok := ignored[p.UID]; ok {
		v.Outcome = verdict.Ignored
		v.Reason = "ignoring pod, " + err.Error()
		return v
	}
	if np, ok := placed[p.UID]; ok {
		v.Outcome = verdict.Scheduled
		v.NodePool = np
		return v
	}
	if err, ok := errs[p.UID]; ok {
		v.Outcome = verdict.Pending
		v.Reason = err.Error()
		v.Failures = failures(err)
		return v
	}
	if noPools {
		// Provisioner.Schedule: ErrNodePoolsNotFound marks every pod with this error.
		v.Outcome = verdict.Pending
		v.Reason = "no dynamic nodepools found"
		v.Failures = []verdict.Failure{{Kind: verdict.Classify(v.Reason), Message: v.Reason}}
		return v
	}
	v.Outcome = verdict.Unknown
	v.Reason = "karpenter returned neither a NodeClaim nor an error for the pod"
	return v
}

// failures splits a pod's error into its per-NodePool errors: Scheduler.addToNewNodeClaim
// returns multierr.Combine of one error per NodeClaim template, in weight order (a NodePool
// that NewScheduler dropped because its requirements left no instance type has none).
func failures(err error) []verdict.Failure {
	var out []verdict.Failure
	for _, e := range multierr.Errors(err) {
		out = append(out, verdict.Failure{Kind: verdict.Classify(e.Error()), Message: e.Error()})
	}
	return out
}

// markReadiness sets the NodePool's status conditions the way Karpenter's nodepool
// readiness and validation controllers would: NodeClassReady when the EC2NodeClass it names
// exists, ValidationSucceeded when RuntimeValidate passes.
func markReadiness(ctx context.Context, np *v1.NodePool, nodeClasses map[string]bool) NodePoolState {
	st := NodePoolState{Name: np.Name}
	if np.Spec.Weight != nil {
		st.Weight = *np.Spec.Weight
	}
	conds := np.StatusConditions()
	ref := np.Spec.Template.Spec.NodeClassRef
	if ref != nil && nodeClasses[ref.Name] {
		conds.SetTrue(v1.ConditionTypeNodeClassReady)
	} else {
		conds.SetFalse(v1.ConditionTypeNodeClassReady, "NodeClassNotFound", "NodeClass not found on cluster")
		st.Reason = "NodeClassNotFound"
	}
	if err := np.RuntimeValidate(ctx); err != nil {
		conds.SetFalse(v1.ConditionTypeValidationSucceeded, "NodePoolValidationFailed", err.Error())
		st.Reason = joinReason(st.Reason, "ValidationFailed: "+err.Error())
	} else {
		conds.SetTrue(v1.ConditionTypeValidationSucceeded)
	}
	st.Ready = conds.IsTrue(status.ConditionReady)
	return st
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// newClient is controller-runtime's fake client over the scenario's objects, with the
// field indexes Karpenter's operator registers (pkg/operator/operator.go setupIndexers).
func newClient(objs []client.Object) client.Client {
	return fake.NewClientBuilder().
		WithScheme(scheme.Scheme).
		WithObjects(objs...).
		WithIndex(&corev1.Pod{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*corev1.Pod).Spec.NodeName}
		}).
		WithIndex(&corev1.Node{}, "spec.providerID", func(o client.Object) []string {
			return []string{o.(*corev1.Node).Spec.ProviderID}
		}).
		WithIndex(&storagev1.VolumeAttachment{}, "spec.nodeName", func(o client.Object) []string {
			return []string{o.(*storagev1.VolumeAttachment).Spec.NodeName}
		}).
		WithIndex(&v1.NodeClaim{}, "status.providerID", func(o client.Object) []string {
			return []string{o.(*v1.NodeClaim).Status.ProviderID}
		}).
		WithIndex(&v1.NodeClaim{}, "spec.nodeClassRef.group", func(o client.Object) []string {
			return []string{o.(*v1.NodeClaim).Spec.NodeClassRef.Group}
		}).
		WithIndex(&v1.NodeClaim{}, "spec.nodeClassRef.kind", func(o client.Object) []string {
			return []string{o.(*v1.NodeClaim).Spec.NodeClassRef.Kind}
		}).
		WithIndex(&v1.NodeClaim{}, "spec.nodeClassRef.name", func(o client.Object) []string {
			return []string{o.(*v1.NodeClaim).Spec.NodeClassRef.Name}
		}).
		WithIndex(&v1.NodePool{}, "spec.template.spec.nodeClassRef.group", func(o client.Object) []string {
			return []string{nodeClassRef(o).Group}
		}).
		WithIndex(&v1.NodePool{}, "spec.template.spec.nodeClassRef.kind", func(o client.Object) []string {
			return []string{nodeClassRef(o).Kind}
		}).
		WithIndex(&v1.NodePool{}, "spec.template.spec.nodeClassRef.name", func(o client.Object) []string {
			return []string{nodeClassRef(o).Name}
		}).
		Build()
}

func nodeClassRef(o client.Object) v1.NodeClassReference {
	if ref := o.(*v1.NodePool).Spec.Template.Spec.NodeClassRef; ref != nil {
		return *ref
	}
	return v1.NodeClassReference{}
}

const (
	workloadLabel = "oracle.karplint.io/workload"
	replicaLabel  = "oracle.karplint.io/replica"
)

// podFor is pod i of workload w as the API server would store it: the template's
// labels and spec, requests defaulted from limits (core/v1 SetDefaults_Pod), Pending with
// PodScheduled=False/Unschedulable so Karpenter treats it as provisionable.
func podFor(w scenario.Workload, i int) *corev1.Pod {
	name := fmt.Sprintf("%s-%d", w.Name, i)
	labels := map[string]string{}
	for k, v := range w.Template.Labels {
		labels[k] = v
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   w.Namespace,
			UID:         types.UID(w.Namespace + "/" + name),
			Labels:      labels,
			Annotations: w.Template.Annotations,
			CreationTimestamp: metav1.Time{
				Time: time.Unix(1_700_000_000, 0),
			},
		},
		Spec: *w.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{
			Phase: corev1.PodPending,
			Conditions: []corev1.PodCondition{{
				Type:   corev1.PodScheduled,
				Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable,
			}},
		},
	}
	// Bookkeeping the oracle reads back, as annotations so no selector sees it.
	p.Annotations = mergeAnnotations(p.Annotations, map[string]string{
		workloadLabel: w.Key(),
		replicaLabel:  fmt.Sprint(i),
	})
	defaultRequests(p)
	return p
}

func mergeAnnotations(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func replicaOf(p *corev1.Pod) int {
	var i int
	_, _ = fmt.Sscan(p.Annotations[replicaLabel], &i)
	return i
}

// defaultRequests mirrors the API server's pod defaulting (k8s.io/kubernetes
// pkg/apis/core/v1 SetDefaults_Pod and, for pod-level resources, SetDefaults_PodSpec): a
// resource with a limit and no request gets the limit as its request.
func defaultRequests(p *corev1.Pod) {
	fill := func(r *corev1.ResourceRequirements) {
		for name, q := range r.Limits {
			if _, ok := r.Requests[name]; !ok {
				if r.Requests == nil {
					r.Requests = corev1.ResourceList{}
				}
				r.Requests[name] = q.DeepCopy()
			}
		}
	}
	for i := range p.Spec.Containers {
		fill(&p.Spec.Containers[i].Resources)
	}
	for i := range p.Spec.InitContainers {
		fill(&p.Spec.InitContainers[i].Resources)
	}
	if p.Spec.Resources != nil {
		fill(p.Spec.Resources)
	}
}

// SortPods orders verdicts by pod name, numerically by replica.
func SortPods(ps []verdict.Pod) {
	sort.SliceStable(ps, func(a, b int) bool {
		if ps[a].Workload != ps[b].Workload {
			return ps[a].Workload < ps[b].Workload
		}
		return ps[a].Replica < ps[b].Replica
	})
}
