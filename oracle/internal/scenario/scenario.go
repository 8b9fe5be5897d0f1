// Package scenario reads one scenario directory (docs/oracle-contract.md "A scenario"): the
// NodePools, EC2NodeClasses, DaemonSets and Deployments of manifests.yaml as typed
// Kubernetes and Karpenter objects, and the zones of .karplint.yaml.
package scenario

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
)

// ManifestsFile and ConfigFile are the files of a scenario directory.
const (
	ManifestsFile = "manifests.yaml"
	ConfigFile    = ".karplint.yaml"
)

// NodeClass is an EC2NodeClass: its name (a NodePool whose nodeClassRef names no
// EC2NodeClass is not Ready in Karpenter) and the object as the AWS provider's API types read
// it (AMI family, kubelet, blockDeviceMappings, … reach NewInstanceType).
type NodeClass struct {
	Name   string
	Object *awsv1.EC2NodeClass
}

// Scenario is one scenario directory, parsed.
type Scenario struct {
	Dir         string
	NodePools   []*v1.NodePool
	NodeClasses []NodeClass
	DaemonSets  []*appsv1.DaemonSet
	Deployments []*appsv1.Deployment
	Jobs        []*batchv1.Job
	// Nodes are the static Nodes (capacity outside Karpenter: no karpenter.sh/nodepool label).
	Nodes []*corev1.Node
	Zones []string
	// Skipped counts documents of other kinds, by apiVersion/kind.
	Skipped map[string]int
}

type head struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// Load reads the scenario in dir.
func Load(dir string) (*Scenario, error) {
	s := &Scenario{Dir: dir, Skipped: map[string]int{}}
	b, err := os.ReadFile(filepath.Join(dir, ManifestsFile))
	if err != nil {
		return nil, err
	}
	if err := s.parseManifests(b); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ManifestsFile), err)
	}
	if cb, err := os.ReadFile(filepath.Join(dir, ConfigFile)); err == nil {
		var cfg struct {
			Cluster struct {
				Zones []string `json:"zones"`
			} `json:"cluster"`
		}
		if err := yaml.Unmarshal(cb, &cfg); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ConfigFile), err)
		}
		s.Zones = cfg.Cluster.Zones
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return s, nil
}

func (s *Scenario) parseManifests(b []byte) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		if err := s.parseDoc(doc); err != nil {
			return fmt.Errorf("document %d: %w", i, err)
		}
	}
}

func (s *Scenario) parseDoc(doc []byte) error {
	var h head
	if err := yaml.Unmarshal(doc, &h); err != nil {
		return err
	}
	if h.Kind == "" {
		return nil // an empty or comment-only document
	}
	switch h.APIVersion + "/" + h.Kind {
	case "karpenter.sh/v1/NodePool":
		np := &v1.NodePool{}
		if err := yaml.Unmarshal(doc, np); err != nil {
			return fmt.Errorf("NodePool %q: %w", h.Metadata.Name, err)
		}
		s.NodePools = append(s.NodePools, np)
	case "karpenter.k8s.aws/v1/EC2NodeClass":
		nc := &awsv1.EC2NodeClass{}
		if err := yaml.Unmarshal(doc, nc); err != nil {
			return fmt.Errorf("EC2NodeClass %q: %w", h.Metadata.Name, err)
		}
		s.NodeClasses = append(s.NodeClasses, NodeClass{Name: h.Metadata.Name, Object: nc})
	case "apps/v1/DaemonSet":
		ds := &appsv1.DaemonSet{}
		if err := yaml.Unmarshal(doc, ds); err != nil {
			return fmt.Errorf("DaemonSet %q: %w", h.Metadata.Name, err)
		}
		defaultNamespace(&ds.ObjectMeta.Namespace)
		s.DaemonSets = append(s.DaemonSets, ds)
	case "apps/v1/Deployment":
		d := &appsv1.Deployment{}
		if err := yaml.Unmarshal(doc, d); err != nil {
			return fmt.Errorf("Deployment %q: %w", h.Metadata.Name, err)
		}
		defaultNamespace(&d.ObjectMeta.Namespace)
		s.Deployments = append(s.Deployments, d)
	case "batch/v1/Job":
		j := &batchv1.Job{}
		if err := yaml.Unmarshal(doc, j); err != nil {
			return fmt.Errorf("Job %q: %w", h.Metadata.Name, err)
		}
		defaultNamespace(&j.ObjectMeta.Namespace)
		s.Jobs = append(s.Jobs, j)
	case "v1/Node":
		n := &corev1.Node{}
		if err := yaml.Unmarshal(doc, n); err != nil {
			return fmt.Errorf("Node %q: %w", h.Metadata.Name, err)
		}
		s.Nodes = append(s.Nodes, n)
	default:
		s.Skipped[h.APIVersion+"/"+h.Kind]++
	}
	return nil
}

func defaultNamespace(ns *string) {
	if *ns == "" {
		*ns = "default"
	}
}

// NodeClass is the EC2NodeClass named name, nil when the scenario has none.
func (s *Scenario) NodeClass(name string) *NodeClass {
	for i := range s.NodeClasses {
		if s.NodeClasses[i].Name == name {
			return &s.NodeClasses[i]
		}
	}
	return nil
}

// Namespaces are the namespaces of the scenario's workloads, sorted.
func (s *Scenario) Namespaces() []string {
	seen := map[string]bool{"default": true}
	for _, d := range s.Deployments {
		seen[d.Namespace] = true
	}
	for _, d := range s.DaemonSets {
		seen[d.Namespace] = true
	}
	for _, j := range s.Jobs {
		seen[j.Namespace] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Workload is a controller of pending pods: a Deployment or a Job.
type Workload struct {
	Kind      string // "Deployment" or "Job"
	Name      string
	Namespace string
	// Pods is how many pods run at once: a Deployment's replicas (1 when unset, the API
	// server's default); a Job's min(parallelism, completions), each defaulting to 1, and
	// parallelism alone when completions is unset (the Job controller's active pods).
	Pods     int
	Template corev1.PodTemplateSpec
}

// Key is Kind/namespace/name.
func (w Workload) Key() string { return w.Kind + "/" + w.Namespace + "/" + w.Name }

// Workloads lists the Deployments, then the Jobs.
func (s *Scenario) Workloads() []Workload {
	var out []Workload
	for _, d := range s.Deployments {
		n := 1
		if d.Spec.Replicas != nil {
			n = int(*d.Spec.Replicas)
		}
		out = append(out, Workload{Kind: "Deployment", Name: d.Name, Namespace: d.Namespace, Pods: n, Template: d.Spec.Template})
	}
	for _, j := range s.Jobs {
		out = append(out, Workload{Kind: "Job", Name: j.Name, Namespace: j.Namespace, Pods: JobPods(j), Template: j.Spec.Template})
	}
	return out
}

// JobPods is how many pods of Job j run at once (the Job controller's manageJob: active
// pods up to parallelism, and no more than the completions still to go).
func JobPods(j *batchv1.Job) int {
	par := 1
	if j.Spec.Parallelism != nil {
		par = int(*j.Spec.Parallelism)
	}
	if j.Spec.Completions != nil && int(*j.Spec.Completions) < par {
		return int(*j.Spec.Completions)
	}
	return par
}
