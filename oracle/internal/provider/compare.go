package provider

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"sigs.k8s.io/karpenter/pkg/cloudprovider"
	"sigs.k8s.io/karpenter/pkg/scheduling"
)

// Difference is one field of one instance type on which karplint's export and the AWS
// provider's NewInstanceType disagree, for one NodePool.
type Difference struct {
	NodePool string `json:"nodepool"`
	Type     string `json:"instanceType"`
	// Field is the difference's class: `type`, `requirement KEY`, `capacity RES`,
	// `overhead RES` (kube-reserved + system-reserved + eviction threshold), `allocatable RES`
	// or `offerings`.
	Field    string `json:"field"`
	Karplint string `json:"karplint"`
	Provider string `json:"provider"`
}

// Absent is how a side that lacks a type or a requirement reads.
const Absent = "absent"

func (d Difference) String() string {
	return fmt.Sprintf("%s %s: karplint %s, provider %s", d.Type, d.Field, d.Karplint, d.Provider)
}

// Compare lists, type by type (by name), where karplint's instance types of one NodePool
// (its export, converted as for the scheduler) differ from the provider's: a type only one
// side has, each requirement's operator and values, each capacity quantity, the total
// overhead and the allocatable per resource (an absent quantity reads as zero, as for the
// scheduler), and which zone × capacity-type offerings are available. Prices are not
// compared: karplint's are a stand-in (docs/oracle-contract.md).
func Compare(nodePool string, karplint, provider []*cloudprovider.InstanceType) []Difference {
	kb, pb := byName(karplint), byName(provider)
	names := map[string]bool{}
	for n := range kb {
		names[n] = true
	}
	for n := range pb {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	var out []Difference
	for _, n := range sorted {
		k, p := kb[n], pb[n]
		add := func(field, kv, pv string) {
			out = append(out, Difference{NodePool: nodePool, Type: n, Field: field, Karplint: kv, Provider: pv})
		}
		switch {
		case k == nil:
			add("type", Absent, "present")
			continue
		case p == nil:
			add("type", "present", Absent)
			continue
		}
		if !sameRequirements(k.Requirements, p.Requirements) {
			for _, key := range keys(k.Requirements, p.Requirements) {
				if ra, rb := k.Requirements[key], p.Requirements[key]; ra != nil && rb != nil && sameRequirement(ra, rb) {
					continue
				}
				kv, pv := requirement(k.Requirements, key), requirement(p.Requirements, key)
				if kv != pv {
					add("requirement "+key, kv, pv)
				}
			}
		}
		for _, c := range []struct {
			field string
			k, p  corev1.ResourceList
		}{
			{"capacity", k.Capacity, p.Capacity},
			{"overhead", overhead(k), overhead(p)},
			{"allocatable", k.Allocatable(), p.Allocatable()},
		} {
			if sameQuantities(c.k, c.p) {
				continue
			}
			for _, res := range resourceNames(c.k, c.p) {
				kq, pq := c.k[res], c.p[res]
				if kq.Cmp(pq) != 0 {
					add(c.field+" "+string(res), quantity(kq), quantity(pq))
				}
			}
		}
		if ko, po := available(k.Offerings), available(p.Offerings); ko != po {
			add("offerings", ko, po)
		}
	}
	return out
}

// Comparer memoises Compare by the keys of both sides' arrays (scenarios share node
// classes, so the same pair comes back for most NodePools).
type Comparer struct {
	mu   sync.Mutex
	memo map[string][]Difference
}

// comparerEntries bounds the memo; it starts afresh when full.
const comparerEntries = 256

// NewComparer returns an empty memo.
func NewComparer() *Comparer { return &Comparer{memo: map[string][]Difference{}} }

// Compare is Compare(nodePool, karplint, provider), memoised under key (none when key is
// empty or c is nil).
func (c *Comparer) Compare(key, nodePool string, karplint, provider []*cloudprovider.InstanceType) []Difference {
	diffs, _ := c.CompareLazy(key, nodePool, func() ([]*cloudprovider.InstanceType, error) { return karplint, nil }, provider)
	return diffs
}

// CompareLazy is Compare with karplint's types fetched (converted) only when the memo lacks
// key.
func (c *Comparer) CompareLazy(key, nodePool string, karplint func() ([]*cloudprovider.InstanceType, error), provider []*cloudprovider.InstanceType) ([]Difference, error) {
	if c == nil || key == "" {
		k, err := karplint()
		if err != nil {
			return nil, err
		}
		return Compare(nodePool, k, provider), nil
	}
	c.mu.Lock()
	diffs, ok := c.memo[key]
	c.mu.Unlock()
	if !ok {
		k, err := karplint()
		if err != nil {
			return nil, err
		}
		diffs = Compare("", k, provider)
		c.mu.Lock()
		if len(c.memo) >= comparerEntries {
			c.memo = map[string][]Difference{}
		}
		c.memo[key] = diffs
		c.mu.Unlock()
	}
	out := make([]Difference, len(diffs))
	for i, d := range diffs {
		d.NodePool = nodePool
		out[i] = d
	}
	return out, nil
}

// sameRequirements is the fast path of the comparison: the same keys, each with the same
// operator and values (rendering every requirement costs more than comparing it).
func sameRequirements(a, b scheduling.Requirements) bool {
	if len(a) != len(b) {
		return false
	}
	for key, ra := range a {
		rb, ok := b[key]
		if !ok || !sameRequirement(ra, rb) {
			return false
		}
	}
	return true
}

func sameRequirement(ra, rb *scheduling.Requirement) bool {
	op := ra.Operator()
	if op != rb.Operator() || ra.Len() != rb.Len() {
		return false
	}
	if op == corev1.NodeSelectorOpIn || op == corev1.NodeSelectorOpNotIn {
		for _, v := range ra.Values() {
			if op == corev1.NodeSelectorOpIn && !rb.Has(v) || op == corev1.NodeSelectorOpNotIn && rb.Has(v) {
				return false
			}
		}
	}
	return true
}

// sameQuantities: every resource of either list has the same quantity in the other (absent
// reads as zero).
func sameQuantities(a, b corev1.ResourceList) bool {
	for k, qa := range a {
		if qb := b[k]; qa.Cmp(qb) != 0 {
			return false
		}
	}
	for k, qb := range b {
		if _, ok := a[k]; !ok && !qb.IsZero() {
			return false
		}
	}
	return true
}

func byName(its []*cloudprovider.InstanceType) map[string]*cloudprovider.InstanceType {
	m := make(map[string]*cloudprovider.InstanceType, len(its))
	for _, it := range its {
		m[it.Name] = it
	}
	return m
}

func keys(a, b scheduling.Requirements) []string {
	seen := map[string]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// requirement renders one requirement as `In [v …]` (sorted; an empty value as ""),
// `NotIn [...]`, `Exists`, `DoesNotExist`, or absent.
func requirement(reqs scheduling.Requirements, key string) string {
	if !reqs.Has(key) {
		return Absent
	}
	r := reqs.Get(key)
	op := r.Operator()
	switch op {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		vals := r.Values()
		sort.Strings(vals)
		for i, v := range vals {
			if v == "" {
				vals[i] = `""`
			}
		}
		return fmt.Sprintf("%s [%s]", op, strings.Join(vals, " "))
	}
	return string(op)
}

func overhead(it *cloudprovider.InstanceType) corev1.ResourceList {
	if it.Overhead == nil {
		return corev1.ResourceList{}
	}
	return it.Overhead.Total()
}

func resourceNames(a, b corev1.ResourceList) []corev1.ResourceName {
	seen := map[corev1.ResourceName]bool{}
	for k := range a {
		seen[k] = true
	}
	for k := range b {
		seen[k] = true
	}
	out := make([]corev1.ResourceName, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// quantity prints q in its own format (0 for zero, whatever its format).
func quantity(q resource.Quantity) string {
	if q.IsZero() {
		return "0"
	}
	return q.String()
}

// available renders the available offerings as sorted zone/capacity-type pairs.
func available(ofs cloudprovider.Offerings) string {
	var out []string
	for _, o := range ofs {
		if !o.Available {
			continue
		}
		out = append(out, o.Requirements.Get(corev1.LabelTopologyZone).Any()+"/"+o.Requirements.Get("karpenter.sh/capacity-type").Any())
	}
	if len(out) == 0 {
		return "none available"
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
