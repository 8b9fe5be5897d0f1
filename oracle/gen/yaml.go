package main

// Renders a Scenario as the two files of the oracle contract. Plain text building: every
// string scalar is double-quoted (strconv.Quote output is valid YAML for the ASCII we emit),
// keys are bare, and nothing is rendered by iterating a map, so bytes depend on the model only.

import (
	"fmt"
	"strconv"
	"strings"
)

type writer struct{ b strings.Builder }

func (w *writer) line(indent int, format string, args ...any) {
	w.b.WriteString(strings.Repeat("  ", indent))
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

func q(s string) string { return strconv.Quote(s) }

func flowList(xs []string) string {
	qs := make([]string, len(xs))
	for i, x := range xs {
		qs[i] = q(x)
	}
	return "[" + strings.Join(qs, ", ") + "]"
}

// kvs writes a mapping of ordered pairs under the current key.
func (w *writer) kvs(indent int, pairs []KV) {
	for _, p := range pairs {
		w.line(indent, "%s: %s", p.Key, q(p.Value))
	}
}

// RenderConfig is the scenario's .karplint.yaml. The oracle hands Karpenter the pods as
// written (no API server, so no admission plugin adds tolerations): karplint is told so.
func RenderConfig(s *Scenario) string {
	return fmt.Sprintf("cluster:\n  zones: [%s]\n  admission:\n    extendedResourceToleration: false\n",
		strings.Join(s.Zones, ", "))
}

// RenderManifests is the scenario's manifests.yaml: node classes, node pools, daemonsets,
// deployments, one document each.
func RenderManifests(s *Scenario) string {
	w := &writer{}
	w.line(0, "# karplint oracle scenario: seed %d, index %d (oracle/gen)", s.Seed, s.Index)
	for i := range s.NodeClasses {
		w.nodeClass(&s.NodeClasses[i])
	}
	for i := range s.NodePools {
		w.nodePool(&s.NodePools[i])
	}
	for i := range s.DaemonSets {
		w.workload(&s.DaemonSets[i])
	}
	for i := range s.Deployments {
		w.workload(&s.Deployments[i])
	}
	for i := range s.Jobs {
		w.workload(&s.Jobs[i])
	}
	for i := range s.Nodes {
		w.node(&s.Nodes[i])
	}
	return w.b.String()
}

func (w *writer) header(apiVersion, kind, name string, namespaced bool) {
	w.line(0, "---")
	w.line(0, "apiVersion: %s", apiVersion)
	w.line(0, "kind: %s", kind)
	w.line(0, "metadata:")
	w.line(1, "name: %s", name)
	if namespaced {
		w.line(1, "namespace: default")
	}
}

func (w *writer) nodeClass(nc *NodeClass) {
	w.header("karpenter.k8s.aws/v1", "EC2NodeClass", nc.Name, false)
	w.line(0, "spec:")
	w.line(1, "amiSelectorTerms:")
	w.line(2, "- alias: %s", nc.Alias)
	w.line(1, "role: %s", q("KarpenterNodeRole-oracle"))
	w.line(1, "subnetSelectorTerms:")
	w.line(2, "- tags:")
	w.line(4, "karpenter.sh/discovery: %s", q("oracle"))
	w.line(1, "securityGroupSelectorTerms:")
	w.line(2, "- tags:")
	w.line(4, "karpenter.sh/discovery: %s", q("oracle"))
	if nc.MaxPods > 0 || len(nc.KubeReserved) > 0 {
		w.line(1, "kubelet:")
		if nc.MaxPods > 0 {
			w.line(2, "maxPods: %d", nc.MaxPods)
		}
		if len(nc.KubeReserved) > 0 {
			w.line(2, "kubeReserved:")
			w.kvs(3, nc.KubeReserved)
		}
	}
	if nc.RootVolume != "" {
		w.blockDevices(nc)
	}
}

func (w *writer) blockDevices(nc *NodeClass) {
	w.line(1, "blockDeviceMappings:")
	device := "/dev/xvda"
	if strings.HasPrefix(nc.Alias, "bottlerocket") {
		// Bottlerocket: xvda holds the OS, xvdb the data (ephemeral) volume.
		w.line(2, "- deviceName: /dev/xvda")
		w.line(3, "ebs: {volumeSize: 4Gi, volumeType: gp3}")
		device = "/dev/xvdb"
	}
	w.line(2, "- deviceName: %s", device)
	w.line(3, "rootVolume: true")
	w.line(3, "ebs: {volumeSize: %s, volumeType: gp3, encrypted: true}", nc.RootVolume)
}

func (w *writer) nodePool(np *NodePool) {
	w.header("karpenter.sh/v1", "NodePool", np.Name, false)
	w.line(0, "spec:")
	if np.Weight > 0 {
		w.line(1, "weight: %d", np.Weight)
	}
	w.line(1, "template:")
	if len(np.Labels) > 0 {
		w.line(2, "metadata:")
		w.line(3, "labels:")
		w.kvs(4, np.Labels)
	}
	w.line(2, "spec:")
	w.line(3, "nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: %s}", np.NodeClass)
	if len(np.Reqs) > 0 {
		w.line(3, "requirements:")
		w.reqs(4, np.Reqs)
	}
	w.taints(3, "taints", np.Taints)
	w.taints(3, "startupTaints", np.StartupTaints)
	if len(np.Limits) > 0 {
		w.line(1, "limits:")
		w.kvs(2, np.Limits)
	}
}

func (w *writer) reqs(indent int, reqs []Req) {
	for _, r := range reqs {
		w.line(indent, "- key: %s", r.Key)
		w.line(indent+1, "operator: %s", r.Op)
		if len(r.Values) > 0 {
			w.line(indent+1, "values: %s", flowList(r.Values))
		}
		if r.MinValues > 0 {
			w.line(indent+1, "minValues: %d", r.MinValues)
		}
	}
}

func (w *writer) taints(indent int, field string, ts []Taint) {
	if len(ts) == 0 {
		return
	}
	w.line(indent, "%s:", field)
	for _, t := range ts {
		w.line(indent+1, "- key: %s", t.Key)
		if t.Value != "" {
			w.line(indent+2, "value: %s", q(t.Value))
		}
		w.line(indent+2, "effect: %s", t.Effect)
	}
}

func (w *writer) workload(wl *Workload) {
	apiVersion := "apps/v1"
	if wl.Kind == "Job" {
		apiVersion = "batch/v1"
	}
	w.header(apiVersion, wl.Kind, wl.Name, true)
	w.line(0, "spec:")
	if wl.Kind == "Deployment" {
		w.line(1, "replicas: %d", wl.Replicas)
	}
	if wl.Kind == "Job" {
		if wl.Parallelism > 0 {
			w.line(1, "parallelism: %d", wl.Parallelism)
		}
		if wl.Completions > 0 {
			w.line(1, "completions: %d", wl.Completions)
		}
	} else {
		w.line(1, "selector:")
		w.line(2, "matchLabels: {app: %s}", q(wl.Name))
	}
	w.line(1, "template:")
	w.line(2, "metadata:")
	w.line(3, "labels: {app: %s}", q(wl.Name))
	w.line(2, "spec:")
	p := &wl.Pod
	if len(p.NodeSelector) > 0 {
		w.line(3, "nodeSelector:")
		w.kvs(4, p.NodeSelector)
	}
	w.tolerations(3, p.Tolerations)
	w.affinity(3, wl.Name, p)
	w.spreads(3, wl.Name, p.Spreads)
	if len(p.PodRequests) > 0 {
		w.line(3, "resources:")
		w.line(4, "requests:")
		w.kvs(5, p.PodRequests)
	}
	if wl.Kind == "Job" {
		w.line(3, "restartPolicy: Never")
	}
	w.container(3, p)
}

// node is a static Node as the API server stores it: the labels the kubelet and EKS set,
// its taints, and its capacity and allocatable.
func (w *writer) node(n *StaticNode) {
	w.header("v1", "Node", n.Name, false)
	w.line(1, "labels:")
	w.kvs(2, []KV{
		{"eks.amazonaws.com/nodegroup", n.Group},
		{"node.kubernetes.io/instance-type", n.InstanceType},
		{"kubernetes.io/arch", "amd64"},
		{"kubernetes.io/os", "linux"},
		{"kubernetes.io/hostname", n.Name},
		{"topology.kubernetes.io/zone", n.Zone},
		{"topology.kubernetes.io/region", "us-east-1"},
	})
	w.kvs(2, n.Labels)
	if len(n.Taints) > 0 {
		w.line(0, "spec:")
		w.line(1, "taints:")
		for _, t := range n.Taints {
			w.line(2, "- key: %s", q(t.Key))
			if t.Value != "" {
				w.line(3, "value: %s", q(t.Value))
			}
			w.line(3, "effect: %s", t.Effect)
		}
	}
	w.line(0, "status:")
	w.line(1, "capacity:")
	w.kvs(2, n.Capacity)
	w.line(1, "allocatable:")
	w.kvs(2, n.Allocatable)
}

func (w *writer) container(indent int, p *Pod) {
	w.line(indent, "containers:")
	w.line(indent+1, "- name: main")
	w.line(indent+2, "image: %s", q("registry.k8s.io/pause:3.10"))
	if len(p.Requests) > 0 {
		w.line(indent+2, "resources:")
		w.line(indent+3, "requests:")
		w.kvs(indent+4, p.Requests)
	}
	if p.HostPort > 0 {
		w.line(indent+2, "ports:")
		w.line(indent+3, "- containerPort: %d", p.HostPort)
		w.line(indent+4, "hostPort: %d", p.HostPort)
		w.line(indent+4, "protocol: TCP")
	}
}

func (w *writer) tolerations(indent int, ts []Toleration) {
	if len(ts) == 0 {
		return
	}
	w.line(indent, "tolerations:")
	for _, t := range ts {
		w.line(indent+1, "- operator: %s", t.Op)
		if t.Key != "" {
			w.line(indent+2, "key: %s", t.Key)
		}
		if t.Value != "" {
			w.line(indent+2, "value: %s", q(t.Value))
		}
		if t.Effect != "" {
			w.line(indent+2, "effect: %s", t.Effect)
		}
	}
}

func (w *writer) affinity(indent int, app string, p *Pod) {
	if len(p.Required) == 0 && len(p.Preferred) == 0 && len(p.AntiAffinity) == 0 && len(p.Affinity) == 0 {
		return
	}
	w.line(indent, "affinity:")
	if len(p.Required) > 0 || len(p.Preferred) > 0 {
		w.line(indent+1, "nodeAffinity:")
		w.nodeAffinity(indent+2, p)
	}
	if len(p.Affinity) > 0 {
		w.line(indent+1, "podAffinity:")
		w.podAntiAffinity(indent+2, app, p.Affinity)
	}
	if len(p.AntiAffinity) > 0 {
		w.line(indent+1, "podAntiAffinity:")
		w.podAntiAffinity(indent+2, app, p.AntiAffinity)
	}
}

func (w *writer) nodeAffinity(indent int, p *Pod) {
	if len(p.Required) > 0 {
		w.line(indent, "requiredDuringSchedulingIgnoredDuringExecution:")
		w.line(indent+1, "nodeSelectorTerms:")
		for _, t := range p.Required {
			w.line(indent+2, "- matchExpressions:")
			w.reqs(indent+4, t)
		}
	}
	if len(p.Preferred) > 0 {
		w.line(indent, "preferredDuringSchedulingIgnoredDuringExecution:")
		for _, pt := range p.Preferred {
			w.line(indent+1, "- weight: %d", pt.Weight)
			w.line(indent+2, "preference:")
			w.line(indent+3, "matchExpressions:")
			w.reqs(indent+4, pt.Term)
		}
	}
}

func (w *writer) podAntiAffinity(indent int, app string, as []AntiAffinity) {
	var req, pref []AntiAffinity
	for _, a := range as {
		if a.Weight == 0 {
			req = append(req, a)
		} else {
			pref = append(pref, a)
		}
	}
	if len(req) > 0 {
		w.line(indent, "requiredDuringSchedulingIgnoredDuringExecution:")
		for _, a := range req {
			w.line(indent+1, "- topologyKey: %s", a.Key)
			w.line(indent+2, "labelSelector: {matchLabels: {app: %s}}", q(app))
		}
	}
	if len(pref) > 0 {
		w.line(indent, "preferredDuringSchedulingIgnoredDuringExecution:")
		for _, a := range pref {
			w.line(indent+1, "- weight: %d", a.Weight)
			w.line(indent+2, "podAffinityTerm:")
			w.line(indent+3, "topologyKey: %s", a.Key)
			w.line(indent+3, "labelSelector: {matchLabels: {app: %s}}", q(app))
		}
	}
}

func (w *writer) spreads(indent int, app string, ss []Spread) {
	if len(ss) == 0 {
		return
	}
	w.line(indent, "topologySpreadConstraints:")
	for _, s := range ss {
		w.line(indent+1, "- maxSkew: %d", s.MaxSkew)
		w.line(indent+2, "topologyKey: %s", s.Key)
		w.line(indent+2, "whenUnsatisfiable: %s", s.When)
		if s.MinDomains > 0 {
			w.line(indent+2, "minDomains: %d", s.MinDomains)
		}
		w.line(indent+2, "labelSelector: {matchLabels: {app: %s}}", q(app))
	}
}
