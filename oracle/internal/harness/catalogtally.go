package harness

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// CatalogFile is where RunAll writes every difference between karplint's instance types and
// the AWS provider's, over the whole run (in --out).
const CatalogFile = "catalog-differences.json"

// catalogTally gathers the differences of every scenario: each distinct (class, type,
// karplint's value, provider's value) once, with how many NodePools and scenarios showed it.
type catalogTally struct {
	mu        sync.Mutex
	byKey     map[catalogKey]*CatalogDifference
	scenarios map[string]map[string]bool // class → scenarios
}

type catalogKey struct{ field, typ, karplint, provider string }

// CatalogDifference is one line of catalog-differences.json.
type CatalogDifference struct {
	Field     string `json:"field"`
	Type      string `json:"instanceType"`
	Karplint  string `json:"karplint"`
	Provider  string `json:"provider"`
	NodePools int    `json:"nodepools"`
	Scenarios int    `json:"scenarios"`
	// Example is the first scenario and NodePool it was seen in.
	Example string `json:"example"`
	seen    map[string]bool
}

func newCatalogTally() *catalogTally {
	return &catalogTally{byKey: map[catalogKey]*CatalogDifference{}, scenarios: map[string]map[string]bool{}}
}

func (t *catalogTally) add(s *Scenario) {
	if t == nil || len(s.Catalog) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, d := range s.Catalog {
		k := catalogKey{d.Field, d.Type, d.Karplint, d.Provider}
		e := t.byKey[k]
		if e == nil {
			e = &CatalogDifference{Field: d.Field, Type: d.Type, Karplint: d.Karplint, Provider: d.Provider,
				Example: s.Name + " nodepool " + d.NodePool, seen: map[string]bool{}}
			t.byKey[k] = e
		}
		e.NodePools++
		if !e.seen[s.Name] {
			e.seen[s.Name] = true
			e.Scenarios++
		}
		if t.scenarios[d.Field] == nil {
			t.scenarios[d.Field] = map[string]bool{}
		}
		t.scenarios[d.Field][s.Name] = true
	}
}

// sorted lists the differences by class, then type, then values.
func (t *catalogTally) sorted() []*CatalogDifference {
	out := make([]*CatalogDifference, 0, len(t.byKey))
	for _, e := range t.byKey {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Field != b.Field {
			return a.Field < b.Field
		}
		if a.Type != b.Type {
			return a.Type < b.Type
		}
		if a.Karplint != b.Karplint {
			return a.Karplint < b.Karplint
		}
		return a.Provider < b.Provider
	})
	return out
}

func (t *catalogTally) write(path string) error {
	b, err := json.MarshalIndent(map[string]any{"version": 1, "differences": t.sorted()}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// print writes one line per class: how many types, in how many scenarios, with the first
// type's values as an example.
func (t *catalogTally) print(w io.Writer) {
	type class struct {
		field     string
		types     map[string]bool
		example   *CatalogDifference
		scenarios int
	}
	classes := map[string]*class{}
	for _, e := range t.sorted() {
		c := classes[e.Field]
		if c == nil {
			c = &class{field: e.Field, types: map[string]bool{}, example: e, scenarios: len(t.scenarios[e.Field])}
			classes[e.Field] = c
		}
		c.types[e.Type] = true
	}
	list := make([]*class, 0, len(classes))
	for _, c := range classes {
		list = append(list, c)
	}
	sort.Slice(list, func(i, j int) bool {
		if len(list[i].types) != len(list[j].types) {
			return len(list[i].types) > len(list[j].types)
		}
		return list[i].field < list[j].field
	})
	for _, c := range list {
		fmt.Fprintf(w, "oracle: instance types: %6d types  %s, in %d scenarios (e.g. %s: karplint %s, provider %s)\n",
			len(c.types), c.field, c.scenarios, c.example.Type, c.example.Karplint, c.example.Provider)
	}
}

// describeCatalog names a scenario's first classes with the types each touches.
func describeCatalog(classes map[string]int) string {
	l := byCount(classes)
	out := ""
	for i, e := range l {
		if i == 3 {
			out += fmt.Sprintf(", and %d more classes", len(l)-3)
			break
		}
		if i > 0 {
			out += ", "
		}
		out += fmt.Sprintf("%s (%d types)", e.k, e.v)
	}
	return out
}
