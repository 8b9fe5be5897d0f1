package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"reflect"
	"testing"
)

func exportBytes(t *testing.T, indent bool, names ...string) []byte {
	t.Helper()
	sh, err := ReadShared("../../testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	f := sh.ForNodePools(names)
	var b []byte
	if indent {
		b, err = json.MarshalIndent(f, "", "  ")
	} else {
		b, err = json.Marshal(f)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScanMatchesEncodingJSON(t *testing.T) {
	for _, indent := range []bool{false, true} {
		b := exportBytes(t, indent, "general", `odd "name"\`, "gpu")
		doc, err := scanDocument(b)
		if err != nil {
			t.Fatalf("indent=%v: %v", indent, err)
		}
		var want struct {
			Version   int                        `json:"version"`
			Zones     []string                   `json:"zones"`
			NodePools map[string]json.RawMessage `json:"nodePools"`
		}
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if doc.version != want.Version || !reflect.DeepEqual(doc.zones, want.Zones) || len(doc.nodePools) != len(want.NodePools) {
			t.Fatalf("indent=%v: got version %d zones %v %d pools", indent, doc.version, doc.zones, len(doc.nodePools))
		}
		for k, v := range want.NodePools {
			if string(doc.nodePools[k]) != string(v) {
				t.Errorf("indent=%v: nodepool %q: arrays differ", indent, k)
			}
		}
	}
}

func TestCacheConvertsEachArrayOnce(t *testing.T) {
	c := NewCache()
	a, err := c.Convert(exportBytes(t, false, "general", "gpu"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Convert(exportBytes(t, false, "other"))
	if err != nil {
		t.Fatal(err)
	}
	if hits, misses := c.Stats(); misses != 1 || hits != 2 {
		t.Errorf("hits=%d misses=%d, want 2 and 1", hits, misses)
	}
	if a.ByNodePool["general"][0] != b.ByNodePool["other"][0] {
		t.Error("the same array was converted twice")
	}
	plain, err := exportFile(t).Convert()
	if err != nil {
		t.Fatal(err)
	}
	got, want := a.ByNodePool["general"], plain.ByNodePool["general"]
	if len(got) != len(want) {
		t.Fatalf("%d types, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Name != want[i].Name || got[i].Requirements.String() != want[i].Requirements.String() ||
			!reflect.DeepEqual(got[i].Capacity, want[i].Capacity) || len(got[i].Offerings) != len(want[i].Offerings) {
			t.Errorf("type %d: cached conversion differs from File.Convert", i)
		}
	}
	// Counts are per scenario: two NodePools, twice the first scenario's per-pool counts.
	for k, v := range plain.Filled {
		if a.Filled[k] != 2*v || b.Filled[k] != v {
			t.Errorf("filled %s: %d and %d, want %d and %d", k, a.Filled[k], b.Filled[k], 2*v, v)
		}
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCacheSize(2)
	a := []byte(`[]`)
	b := []byte(`[ ]`)
	d := []byte(`[  ]`)
	for _, raw := range [][]byte{a, b, a, d, a, b} {
		c.get(sha256.Sum256(raw), raw)
	}
	// a, b, (a hit), d evicts b, (a hit), b evicts d.
	if hits, misses := c.Stats(); hits != 2 || misses != 4 {
		t.Errorf("hits=%d misses=%d, want 2 and 4", hits, misses)
	}
	if len(c.entries) != 2 {
		t.Errorf("%d entries, want 2", len(c.entries))
	}
}

func exportFile(t *testing.T) *File {
	t.Helper()
	f, err := Parse(exportBytes(t, false, "general"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCacheRejectsBadDocuments(t *testing.T) {
	var c *Cache // nil: no caching, same checks
	for _, doc := range []string{
		`{"version": 2, "zones": [], "nodePools": {}}`,
		`{"version": 1, "nodePools": {"a": [{"name": 1}]}}`,
		`{"version": 1, "nodePools": {"a": [`,
		`[]`,
	} {
		if _, err := c.Convert([]byte(doc)); err == nil {
			t.Errorf("%s: no error", doc)
		}
	}
	if conv, err := c.Convert([]byte(` {"version":1,"zones":["z"],"nodePools":{}} `)); err != nil || len(conv.ByNodePool) != 0 {
		t.Errorf("empty export: %v %v", conv, err)
	}
}
