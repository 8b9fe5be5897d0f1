package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// Cache converts each distinct NodePool instance-type array of `karplint debug
// instance-types` once per process. Scenarios share EC2NodeClasses, so the same array
// (~1,400 types, megabytes of JSON) comes back for most NodePools of most scenarios;
// parsing and converting it took most of the oracle's time per scenario.
//
// Entries are keyed by the SHA-256 of the array's bytes, exactly as karplint printed them
// (not of the NodePool's name: a different EC2NodeClass gives different bytes). The
// converted types are shared by every scenario and every job that hits the entry, as the AWS
// provider shares its cached instance types between the provisioner's and the disruption
// controller's concurrent scheduling simulations: Karpenter's scheduler only reads them (an
// InstanceType's allocatable is computed once, under its own sync.Once).
//
// A converted array is ~25 MB of Go objects, and most arrays occur once (a scenario's own
// kubelet settings), so the cache keeps the most recently used entries only: on 200
// generated scenarios four arrays made up over half of the NodePools.
type Cache struct {
	mu      sync.Mutex
	max     int
	clock   uint64
	entries map[[sha256.Size]byte]*entry
	hits    atomic.Int64
	misses  atomic.Int64
}

type entry struct {
	once    sync.Once
	lastUse uint64
	types   []*cloudprovider.InstanceType
	stats   *Converted // only its Filled, Missing and Derived counts
	err     error
}

// DefaultCacheEntries bounds NewCache's cache (about 400 MB of converted types).
const DefaultCacheEntries = 16

// NewCache returns an empty cache of at most DefaultCacheEntries arrays.
func NewCache() *Cache {
	return NewCacheSize(DefaultCacheEntries)
}

// NewCacheSize returns an empty cache of at most max arrays (at least one).
func NewCacheSize(max int) *Cache {
	if max < 1 {
		max = 1
	}
	return &Cache{max: max, entries: map[[sha256.Size]byte]*entry{}}
}

// Stats reports how many NodePool arrays were served from the cache and how many were
// parsed and converted.
func (c *Cache) Stats() (hits, misses int64) {
	return c.hits.Load(), c.misses.Load()
}

// Convert parses and converts the document b, reusing the conversion of every NodePool
// array already seen. A nil cache converts everything afresh.
func (c *Cache) Convert(b []byte) (*Converted, error) {
	doc, err := c.Split(b)
	if err != nil {
		return nil, err
	}
	return doc.Convert()
}

// Convert converts every NodePool array of the document.
func (s *Split) Convert() (*Converted, error) {
	doc := s
	out := newConverted()
	for _, np := range doc.Names() {
		types, stats, err := doc.Types(np)
		if err != nil {
			return nil, err
		}
		out.ByNodePool[np] = types
		out.Keys[np] = doc.Key(np)
		out.add(stats)
	}
	return out, nil
}

// Split is the document b cut into its NodePool arrays, each hashed but converted only when
// asked (Split.Types): the oracle compares karplint's arrays with the AWS provider's types and
// skips the conversion of a pair it has compared before.
type Split struct {
	c      *Cache
	arrays map[string][]byte
	keys   map[string][sha256.Size]byte
}

// Split cuts b into its NodePool arrays (see Split).
func (c *Cache) Split(b []byte) (*Split, error) {
	doc, err := split(b)
	if err != nil {
		return nil, err
	}
	s := &Split{c: c, arrays: doc.nodePools, keys: map[string][sha256.Size]byte{}}
	for np, raw := range doc.nodePools {
		s.keys[np] = sha256.Sum256(raw)
	}
	return s, nil
}

// Names are the document's NodePools, sorted.
func (s *Split) Names() []string {
	names := make([]string, 0, len(s.arrays))
	for n := range s.arrays {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Key is the hex SHA-256 of NodePool np's array ("" when the document has none).
func (s *Split) Key(np string) string {
	k, ok := s.keys[np]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%x", k)
}

// Types converts NodePool np's array (through the cache), with what the conversion filled
// in; none when the document has no such NodePool.
func (s *Split) Types(np string) ([]*cloudprovider.InstanceType, *Converted, error) {
	raw, ok := s.arrays[np]
	if !ok {
		return nil, newConverted(), nil
	}
	e := s.c.get(s.keys[np], raw)
	if e.err != nil {
		return nil, nil, fmt.Errorf("nodepool %q: %w", np, e.err)
	}
	// A fresh slice per scenario: the scheduler may reorder or filter its own copy, but
	// never the types themselves.
	return append([]*cloudprovider.InstanceType(nil), e.types...), e.stats, nil
}

func (c *Cache) get(key [sha256.Size]byte, raw []byte) *entry {
	if c == nil {
		e := &entry{}
		e.fill(raw)
		return e
	}
	c.mu.Lock()
	c.clock++
	e, ok := c.entries[key]
	if !ok {
		if len(c.entries) >= c.max {
			c.evictLocked()
		}
		e = &entry{}
		c.entries[key] = e
	}
	e.lastUse = c.clock
	c.mu.Unlock()
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	e.once.Do(func() { e.fill(raw) })
	return e
}

// evictLocked drops the least recently used entry; a scenario still converting or
// scheduling with it keeps its own reference.
func (c *Cache) evictLocked() {
	var oldest [sha256.Size]byte
	first := true
	var oldestUse uint64
	for k, e := range c.entries {
		if first || e.lastUse < oldestUse {
			oldest, oldestUse, first = k, e.lastUse, false
		}
	}
	delete(c.entries, oldest)
}

func (e *entry) fill(raw []byte) {
	var types []InstanceType
	if err := json.Unmarshal(raw, &types); err != nil {
		e.err = fmt.Errorf("instance types: %w", err)
		return
	}
	e.stats = newConverted()
	e.types, e.err = convertTypes(types, e.stats)
}

func newConverted() *Converted {
	return &Converted{ByNodePool: map[string][]*cloudprovider.InstanceType{}, Keys: map[string]string{}, Filled: map[string]int{}, Missing: map[string]int{}, Derived: map[string]int{}}
}

// NewConverted is an empty conversion, to Merge others into.
func NewConverted() *Converted { return newConverted() }

// Merge adds o's counts of filled, missing and derived labels to c's.
func (c *Converted) Merge(o *Converted) { c.add(o) }

func (c *Converted) add(o *Converted) {
	for _, p := range []struct{ dst, src map[string]int }{{c.Filled, o.Filled}, {c.Missing, o.Missing}, {c.Derived, o.Derived}} {
		for k, v := range p.src {
			p.dst[k] += v
		}
	}
}

// document is a `karplint debug instance-types` output with each NodePool's array left as
// bytes.
type document struct {
	version   int
	zones     []string
	nodePools map[string][]byte
}

// split finds the top-level members of the document and the array of every NodePool
// without decoding the arrays: encoding/json took ~45 ms just to scan the ~8 MB into
// json.RawMessage values, a bracket scan takes a few. Each array is decoded (and so
// validated) by json.Unmarshal on a cache miss; a document the scan cannot follow is
// handed to encoding/json whole, whose error is then reported.
func split(b []byte) (*document, error) {
	doc, err := scanDocument(b)
	if err != nil {
		var f struct {
			Version   int                        `json:"version"`
			Zones     []string                   `json:"zones"`
			NodePools map[string]json.RawMessage `json:"nodePools"`
		}
		if jerr := json.Unmarshal(b, &f); jerr != nil {
			return nil, fmt.Errorf("instance types: %w", jerr)
		}
		doc = &document{version: f.Version, zones: f.Zones, nodePools: map[string][]byte{}}
		for k, v := range f.NodePools {
			doc.nodePools[k] = v
		}
	}
	if doc.version != 1 {
		return nil, fmt.Errorf("instance types: version %d, want 1", doc.version)
	}
	return doc, nil
}

func scanDocument(b []byte) (*document, error) {
	doc := &document{nodePools: map[string][]byte{}}
	err := members(b, func(key string, val []byte) error {
		switch key {
		case "version":
			return json.Unmarshal(val, &doc.version)
		case "zones":
			return json.Unmarshal(val, &doc.zones)
		case "nodePools":
			return members(val, func(np string, arr []byte) error {
				if len(arr) == 0 || arr[0] != '[' {
					return fmt.Errorf("nodepool %q: not an array", np)
				}
				doc.nodePools[np] = arr
				return nil
			})
		}
		return nil
	})
	return doc, err
}

// members calls fn with every key and raw value of the JSON object b.
func members(b []byte, fn func(key string, val []byte) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return fmt.Errorf("not an object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("offset %d: want a key", i)
		}
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		var key string
		if err := json.Unmarshal(b[i:end], &key); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return fmt.Errorf("offset %d: want ':'", i)
		}
		i = skipSpace(b, i+1)
		end, err = skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(key, b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return fmt.Errorf("unterminated object")
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return nil
		default:
			return fmt.Errorf("offset %d: want ',' or '}'", i)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at b[i], matching brackets outside
// strings. It does not validate what it skips.
func skipValue(b []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			j++
			for j < len(b) && b[j] != '"' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(b) {
				return 0, fmt.Errorf("unterminated string")
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return j, nil // a scalar ended by its container
			}
		case ',':
			if depth == 0 {
				return j, nil
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 && j > i {
				return j, nil
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return j + 1, nil
		}
	}
	if depth == 0 && len(b) > i {
		return len(b), nil // a scalar at the end of the input
	}
	return 0, fmt.Errorf("unterminated value")
}
