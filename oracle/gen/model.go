package main

// The in-memory shape of one scenario. The generator fills it, yaml.go renders it and the
// tests check it, so validity is judged on the same values that reach the manifests.

// KV is one ordered key/value pair (labels, requests, limits): slices keep output stable.
type KV struct{ Key, Value string }

// Req is a node selector requirement (NodePool requirement or pod node affinity).
type Req struct {
	Key       string
	Op        string
	Values    []string
	MinValues int // 0 = absent; NodePools only
}

// Taint is a NodePool taint or startup taint.
type Taint struct{ Key, Value, Effect string }

// Toleration is a pod toleration; an empty Key with Op Exists tolerates everything.
type Toleration struct{ Key, Op, Value, Effect string }

// NodeClass is an EC2NodeClass.
type NodeClass struct {
	Name         string
	Alias        string // al2023@latest | bottlerocket@latest
	MaxPods      int    // 0 = absent
	KubeReserved []KV
	// RootVolume is the size of the ephemeral-storage volume ("" = no blockDeviceMappings).
	RootVolume string
}

// NodePool is a karpenter.sh/v1 NodePool.
type NodePool struct {
	Name          string
	NodeClass     string
	Weight        int // 0 = absent
	Labels        []KV
	Reqs          []Req
	Taints        []Taint
	StartupTaints []Taint
	Limits        []KV
}

// Term is one node selector term (its expressions are AND-ed).
type Term []Req

// Preferred is a weighted preferred node-affinity term.
type Preferred struct {
	Weight int
	Term   Term
}

// Spread is a topology spread constraint selecting the workload's own pods.
type Spread struct {
	MaxSkew    int
	Key        string
	When       string // DoNotSchedule | ScheduleAnyway
	MinDomains int    // 0 = absent; only with DoNotSchedule
}

// AntiAffinity is a pod affinity or anti-affinity term selecting the workload's own pods.
type AntiAffinity struct {
	Key    string
	Weight int // 0 = required, else preferred with this weight
}

// Pod is a pod template.
type Pod struct {
	Requests     []KV // the container's requests
	PodRequests  []KV // pod-level spec.resources.requests (cpu/memory only)
	NodeSelector []KV
	Required     []Term
	Preferred    []Preferred
	Tolerations  []Toleration
	Spreads      []Spread
	AntiAffinity []AntiAffinity
	Affinity     []AntiAffinity // pod affinity to its own pods
	HostPort     int            // 0 = none
}

// Workload is a DaemonSet, Deployment or Job.
type Workload struct {
	Kind     string // DaemonSet | Deployment | Job
	Name     string
	Replicas int // Deployments only
	// Parallelism and Completions of a Job (0 = absent: the API server defaults both to 1
	// when neither is set).
	Parallelism, Completions int
	Pod                      Pod
}

// StaticNode is a Node of a managed node group: capacity outside Karpenter.
type StaticNode struct {
	Name         string
	Group        string
	InstanceType string
	Zone         string
	Labels       []KV // extra labels (team)
	Taints       []Taint
	Capacity     []KV
	Allocatable  []KV
}

// Scenario is one generated test case.
type Scenario struct {
	Seed        uint64
	Index       uint64
	Zones       []string
	NodeClasses []NodeClass
	NodePools   []NodePool
	DaemonSets  []Workload
	Deployments []Workload
	Jobs        []Workload
	Nodes       []StaticNode
}
