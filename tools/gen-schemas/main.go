// Command gen-schemas writes karplint's field schemas (data/schemas/fields.txt): the fields the
// API server knows on the objects the `unknown-field` rule checks.
//
//   - Karpenter's objects (NodePool, NodeClaim, NodeOverlay from sigs.k8s.io/karpenter,
//     EC2NodeClass from github.com/aws/karpenter-provider-aws) come from the CRD manifests the
//     modules ship (pkg/apis/crds/*.yaml): the OpenAPI schema of every served version, merged
//     over the releases in coreVersions and providerVersions (a field any of them declares is
//     known). The API server prunes what this schema does not declare, unless a node says
//     x-kubernetes-preserve-unknown-fields; maps (additionalProperties) take any key.
//   - Built-in workloads and the pod template come from the k8s.io/api Go types pinned in
//     go.mod, by reflection over their json tags: these are the types the API server decodes
//     into, and strict field validation rejects any key their json tags do not name
//     (sigs.k8s.io/json, case-sensitive). Only the types in checkedTypes have their fields
//     listed; a field of another struct type is not looked into.
//
// Usage:
//
//	gen-schemas [-date YYYY-MM-DD] [-out FILE]   write the schemas (default: stdout, today's date)
//
// The CRD modules are fetched with `go mod download -json`. scripts/gen-schemas.sh runs it
// from the repository root.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// The Karpenter releases whose CRDs are merged: v1.0 serves both the v1 and the v1beta1
// APIs (its v1beta1 schema is the one v0.37 stored), and v1.14 is the release karplint
// mirrors.
var (
	coreVersions     = []string{"v1.0.8", "v1.14.3"}
	providerVersions = []string{"v1.0.8", "v1.14.3"}
)

const (
	coreModule     = "sigs.k8s.io/karpenter"
	providerModule = "github.com/aws/karpenter-provider-aws"
)

// crdFiles are the CRD manifests read from each module, by module.
var crdFiles = map[string][]string{
	coreModule: {
		"karpenter.sh_nodepools.yaml",
		"karpenter.sh_nodeclaims.yaml",
		"karpenter.sh_nodeoverlays.yaml",
	},
	providerModule: {"karpenter.k8s.aws_ec2nodeclasses.yaml"},
}

// builtinRoots are the workload kinds whose objects are checked, with their Go types.
var builtinRoots = []struct {
	apiVersion, kind string
	t                reflect.Type
}{
	{"v1", "Pod", reflect.TypeOf(corev1.Pod{})},
	{"v1", "ReplicationController", reflect.TypeOf(corev1.ReplicationController{})},
	{"apps/v1", "DaemonSet", reflect.TypeOf(appsv1.DaemonSet{})},
	{"apps/v1", "Deployment", reflect.TypeOf(appsv1.Deployment{})},
	{"apps/v1", "ReplicaSet", reflect.TypeOf(appsv1.ReplicaSet{})},
	{"apps/v1", "StatefulSet", reflect.TypeOf(appsv1.StatefulSet{})},
	{"batch/v1", "CronJob", reflect.TypeOf(batchv1.CronJob{})},
	{"batch/v1", "Job", reflect.TypeOf(batchv1.Job{})},
}

// checkedTypes are the Go types whose fields are listed: the path from an object to its pod
// spec, and what Karpenter's scheduling reads beneath it (node selection, affinity,
// tolerations, topology spread, resources, ports, volumes and their claims). Any other
// struct is a leaf.
var checkedTypes = map[string]bool{
	"apps.DaemonSet": true, "apps.DaemonSetSpec": true, "apps.Deployment": true,
	"apps.DeploymentSpec": true, "apps.ReplicaSet": true, "apps.ReplicaSetSpec": true,
	"apps.StatefulSet": true, "apps.StatefulSetSpec": true,
	"batch.CronJob": true, "batch.CronJobSpec": true, "batch.Job": true, "batch.JobSpec": true,
	"batch.JobTemplateSpec": true,
	"core.Affinity": true, "core.Container": true, "core.ContainerPort": true,
	"core.EphemeralVolumeSource": true, "core.NodeAffinity": true, "core.NodeSelector": true,
	"core.NodeSelectorRequirement": true, "core.NodeSelectorTerm": true,
	"core.PersistentVolumeClaim": true, "core.PersistentVolumeClaimSpec": true,
	"core.PersistentVolumeClaimTemplate": true, "core.PersistentVolumeClaimVolumeSource": true,
	"core.Pod": true, "core.PodAffinity": true, "core.PodAffinityTerm": true,
	"core.PodAntiAffinity": true, "core.PodOS": true, "core.PodResourceClaim": true,
	"core.PodSchedulingGate": true, "core.PodSpec": true, "core.PodTemplateSpec": true,
	"core.PreferredSchedulingTerm": true, "core.ReplicationController": true,
	"core.ReplicationControllerSpec": true, "core.ResourceClaim": true,
	"core.ResourceRequirements": true, "core.Toleration": true,
	"core.TopologySpreadConstraint": true, "core.Volume": true,
	"core.VolumeResourceRequirements": true, "core.WeightedPodAffinityTerm": true,
	"meta.LabelSelector": true, "meta.LabelSelectorRequirement": true, "meta.ObjectMeta": true,
}

// schemas collects the types written: name → field → reference.
type schemas struct {
	types map[string]map[string]string
	roots []string
}

func main() {
	date := flag.String("date", time.Now().UTC().Format(time.DateOnly), "generation date written to the header (YYYY-MM-DD)")
	out := flag.String("out", "", "output file (default: stdout)")
	flag.Parse()
	if err := run(*date, *out); err != nil {
		fmt.Fprintln(os.Stderr, "gen-schemas:", err)
		os.Exit(1)
	}
}

func run(date, out string) error {
	if _, err := time.Parse(time.DateOnly, date); err != nil {
		return fmt.Errorf("-date %q is not YYYY-MM-DD", date)
	}
	s := &schemas{types: map[string]map[string]string{}}
	for _, r := range builtinRoots {
		s.roots = append(s.roots, fmt.Sprintf("root %s %s %s", r.apiVersion, r.kind, s.goType(r.t)))
	}
	s.goType(reflect.TypeOf(corev1.PodTemplateSpec{}))
	crds := map[string]map[string]any{} // "group/version kind" → merged schema
	for module, versions := range map[string][]string{coreModule: coreVersions, providerModule: providerVersions} {
		for _, v := range versions {
			dir, err := download(module, v)
			if err != nil {
				return err
			}
			for _, f := range crdFiles[module] {
				if err := readCRD(filepath.Join(dir, "pkg", "apis", "crds", f), crds); err != nil {
					return err
				}
			}
		}
	}
	keys := make([]string, 0, len(crds))
	for k := range crds {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		apiVersion, kind, _ := strings.Cut(k, " ")
		version := apiVersion[strings.LastIndex(apiVersion, "/")+1:]
		name := s.crdType(kind+"."+version, crds[k], true)
		s.roots = append(s.roots, fmt.Sprintf("root %s %s %s", apiVersion, kind, name))
	}
	w := io.Writer(os.Stdout)
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	return s.write(w, date)
}

// download fetches module@version into the module cache and returns its directory.
func download(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", err
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, m.Error)
	}
	return m.Dir, nil
}

// readCRD merges the schema of every version a CRD manifest serves into crds. A file a
// release does not ship (NodeOverlay before v1.7) is skipped.
func readCRD(path string, crds map[string]map[string]any) error {
	raw, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	var crd struct {
		Spec struct {
			Group string
			Names struct{ Kind string }
			// Versions: each with its name, whether it is served, and its OpenAPI schema.
			Versions []struct {
				Name   string
				Served bool
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, v := range crd.Spec.Versions {
		if !v.Served || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		key := crd.Spec.Group + "/" + v.Name + " " + crd.Spec.Names.Kind
		crds[key] = merge(crds[key], v.Schema.OpenAPIV3Schema)
	}
	return nil
}

// merge is the union of two OpenAPI schemas: every property either declares, and any keys
// where either preserves unknown fields or takes additional properties.
func merge(a, b map[string]any) map[string]any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for _, k := range []string{"x-kubernetes-preserve-unknown-fields", "additionalProperties"} {
		if _, ok := b[k]; ok {
			out[k] = b[k]
		}
	}
	if bt, ok := b["type"]; ok {
		out["type"] = bt
	}
	pa, _ := a["properties"].(map[string]any)
	pb, _ := b["properties"].(map[string]any)
	if pa != nil || pb != nil {
		props := map[string]any{}
		for k, v := range pa {
			props[k] = v
		}
		for k, v := range pb {
			va, _ := props[k].(map[string]any)
			vb, _ := v.(map[string]any)
			props[k] = merge(va, vb)
		}
		out["properties"] = props
	}
	ia, _ := a["items"].(map[string]any)
	ib, _ := b["items"].(map[string]any)
	if ia != nil || ib != nil {
		out["items"] = merge(ia, ib)
	}
	return out
}

// crdType writes the type of an OpenAPI object schema named name and returns its reference.
func (s *schemas) crdType(name string, schema map[string]any, root bool) string {
	props, _ := schema["properties"].(map[string]any)
	fields := map[string]string{}
	for field, raw := range props {
		sub, _ := raw.(map[string]any)
		switch {
		case root && field == "metadata":
			fields[field] = "meta.ObjectMeta"
		case root && field == "status":
			fields[field] = "-"
		default:
			fields[field] = s.crdRef(name+"."+field, sub)
		}
	}
	s.types[name] = fields
	return name
}

// crdRef is the reference to an OpenAPI schema: `*` for any keys, `-` for a value not
// looked into, a type, or `[…]` for a list of objects.
func (s *schemas) crdRef(name string, schema map[string]any) string {
	if schema == nil {
		return "-"
	}
	if p, _ := schema["x-kubernetes-preserve-unknown-fields"].(bool); p {
		return "*"
	}
	switch schema["type"] {
	case "object":
		if props, _ := schema["properties"].(map[string]any); len(props) > 0 {
			if _, extra := schema["additionalProperties"]; extra {
				return "*"
			}
			return s.crdType(name, schema, false)
		}
		return "*"
	case "array":
		items, _ := schema["items"].(map[string]any)
		if r := s.crdRef(name, items); r != "-" && r != "*" {
			return "[" + r + "]"
		}
		return "-"
	}
	return "-"
}

// goType writes a checked Go struct type (its json fields, inline structs expanded) and
// returns its name.
func (s *schemas) goType(t reflect.Type) string {
	name := goName(t)
	if _, done := s.types[name]; done {
		return name
	}
	fields := map[string]string{}
	s.types[name] = fields
	s.goFields(t, fields)
	return name
}

func (s *schemas) goFields(t reflect.Type, fields map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if tag == "" && f.Anonymous || strings.Contains(f.Tag.Get("json"), ",inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			s.goFields(ft, fields)
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		fields[tag] = s.goRef(f.Type)
	}
}

// goRef is the reference to a Go field type.
func (s *schemas) goRef(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map:
		return "*"
	case reflect.Slice:
		e := t.Elem()
		for e.Kind() == reflect.Pointer {
			e = e.Elem()
		}
		if e.Kind() == reflect.Struct && checkedTypes[goName(e)] {
			return "[" + s.goType(e) + "]"
		}
		return "-"
	case reflect.Struct:
		if checkedTypes[goName(t)] {
			return s.goType(t)
		}
	}
	return "-"
}

// goName is `core.PodSpec` for k8s.io/api/core/v1.PodSpec: the package's API group (meta for
// apimachinery's metav1) and the type.
func goName(t reflect.Type) string {
	parts := strings.Split(t.PkgPath(), "/")
	group := "meta"
	if len(parts) >= 3 && parts[0] == "k8s.io" && parts[1] == "api" {
		group = parts[2]
	}
	return group + "." + t.Name()
}

// moduleVersion is the version of a module this binary was built with (k8s.io/api).
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "unknown"
}

func (s *schemas) write(w io.Writer, date string) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, `# karplint's field schemas: the fields the API server knows on the objects the
# unknown-field rule checks. Generated by tools/gen-schemas (scripts/gen-schemas.sh); do not
# edit by hand.
# date: %s
# source: k8s.io/api %s, the Go types' json tags (built-in workloads and the pod template)
# source: %s %s, pkg/apis/crds/karpenter.sh_{nodepools,nodeclaims,nodeoverlays}.yaml
# source: %s %s, pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml
# The CRDs' schemas are merged over those releases: a field any of them declares is known.
#
# root APIVERSION KIND TYPE: the type of a whole object.
# type NAME, then one line per field: " FIELD REF". REF is TYPE (an object of that type),
# [REF] (a list of them), * (any keys: a map, or x-kubernetes-preserve-unknown-fields) or
# - (a value whose keys are not checked).
`, date, moduleVersion("k8s.io/api"), coreModule, strings.Join(coreVersions, ", "),
		providerModule, strings.Join(providerVersions, ", "))
	sort.Strings(s.roots)
	for _, r := range s.roots {
		fmt.Fprintln(b, r)
	}
	names := make([]string, 0, len(s.types))
	for n := range s.types {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(b, "type %s\n", n)
		fields := make([]string, 0, len(s.types[n]))
		for f := range s.types[n] {
			fields = append(fields, f)
		}
		sort.Strings(fields)
		for _, f := range fields {
			fmt.Fprintf(b, " %s %s\n", f, s.types[n][f])
		}
	}
	return b.Flush()
}
