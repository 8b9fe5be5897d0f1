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
	"sigs.k8s.io/karpenter/pkg/controllers/state"
	"sigs.k8s.io/karpenter/pkg/events"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	nodepoolutils "sigs.k8s.io/karpenter/pkg/utils/nodepool"

	_ "github.com/karplint/karplint/oracle/internal/awslabels" // the AWS provider's label registrations
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
	Pods      []verdict.Pod   `json:"pods"`
	NodePools []NodePoolState `json:"nodePools"`
	// NodeClaims counts the NodeClaims Karpenter would create, per NodePool.
	NodeClaims map[string]int `json:"nodeClaims"`
	Duration   time.Duration  `json:"-"`
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

// Run schedules every pending pod of sc with the given instance types per NodePool.
func Run(ctx context.Context, sc *scenario.Scenario, its map[string][]*cloudprovider.InstanceType) (*Result, error) {
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
		objs = append(objs, &EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: nc.Name}})
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
	pods := []*corev1.Pod{}
	for _, d := range sc.Deployments {
		for i := 0; i < int(replicas(d)); i++ {
			p := podFor(d, i)
			pods = append(pods, p)
			objs = append(objs, p)
		}
	}

	kube := newClient(objs)
	cp := &cloudProvider{byNodePool: its}
	clk := clock.RealClock{}
	cluster := state.NewCluster(clk, kube, cp)
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
	results, err := prov.Schedule(ctx)
	if err != nil {
		return nil, fmt.Errorf("karpenter: %w", err)
	}

	placed := map[types.UID]string{}
	debug := os.Getenv("ORACLE_DEBUG_NODECLAIMS") != ""
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
			fmt.Fprintf(os.Stderr, "nodeclaim %s pods=%v requirements=%v types(%d)=%v\n", nc.NodePoolName, podNames, nc.Requirements, len(names), names)
		}
		res.NodeClaims[nc.NodePoolName]++
		for _, p := range nc.Pods {
			placed[p.UID] = nc.NodePoolName
		}
	}
	for _, en := range results.ExistingNodes {
		for _, p := range en.Pods {
			placed[p.UID] = "(existing node)"
		}
	}
	errs := map[types.UID]error{}
	for p, e := range results.PodErrors {
		errs[p.UID] = e
	}
	noPools := !anyReady(res.NodePools)
	templates := templateOrder(sc.NodePools, res.NodePools, rec)
	for _, p := range pods {
		v := podVerdict(p, ignored, placed, errs, noPools)
		if len(v.Failures) == len(templates) {
			for i := range v.Failures {
				v.Failures[i].NodePool = templates[i]
			}
		}
		res.Pods = append(res.Pods, v)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// templateOrder names the NodeClaim templates Scheduler.addToNewNodeClaim tries, in order:
// the Ready NodePools with instance types, by weight (nodepoolutils.OrderByWeight), less
// those NewScheduler dropped with a NoCompatibleInstanceTypes event. It also notes the drop
// on the NodePool's state.
func templateOrder(nps []*v1.NodePool, states []NodePoolState, rec *recorder) []string {
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
	out := make([]string, len(ordered))
	for i, np := range ordered {
		out[i] = np.Name
	}
	return out
}

// recorder keeps the events Karpenter publishes during one run.
type recorder struct {
	mu     sync.Mutex
	events []events.Event
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
		Workload: "Deployment/" + p.Namespace + "/" + p.Annotations[workloadLabel],
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
	workloadLabel = "oracle.karplint.io/deployment"
	replicaLabel  = "oracle.karplint.io/replica"
)

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1 // the API server's default
	}
	return *d.Spec.Replicas
}

// podFor is replica i of Deployment d as the API server would store it: the template's
// labels and spec, requests defaulted from limits (core/v1 SetDefaults_Pod), Pending with
// PodScheduled=False/Unschedulable so Karpenter treats it as provisionable.
func podFor(d *appsv1.Deployment, i int) *corev1.Pod {
	name := fmt.Sprintf("%s-%d", d.Name, i)
	labels := map[string]string{}
	for k, v := range d.Spec.Template.Labels {
		labels[k] = v
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   d.Namespace,
			UID:         types.UID(d.Namespace + "/" + name),
			Labels:      labels,
			Annotations: d.Spec.Template.Annotations,
			CreationTimestamp: metav1.Time{
				Time: time.Unix(1_700_000_000, 0),
			},
		},
		Spec: *d.Spec.Template.Spec.DeepCopy(),
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
		workloadLabel: d.Name,
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
