// Package prices reads karplint's on-demand price table (data/prices/on-demand.csv: the
// static tables of Karpenter's AWS provider v1.14.3, pkg/providers/pricing), which decide
// the instance type a NodeClaim launches between provisioning rounds.
package prices

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Region is the table the launch is priced from: the provider's fallback for every region
// without a table of its own (pricing.go Reset: "fall back to the always available
// us-east-1"), and the one karplint reads (scheduler.rs PRICE_REGION).
const Region = "us-east-1"

// Table is one region's on-demand price per instance type, per hour.
type Table map[string]float64

// Read parses the price table at path, keeping the rows of Region.
func Read(path string) (Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse parses the bytes of the price table.
func Parse(b []byte) (Table, error) {
	t := Table{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	header := false
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !header {
			if line != "region,instance_type,price_per_hour,currency" {
				return nil, fmt.Errorf("prices line %d: expected the header, found %q", n, line)
			}
			header = true
			continue
		}
		cells := strings.Split(line, ",")
		if len(cells) != 4 {
			return nil, fmt.Errorf("prices line %d: want 4 cells, found %q", n, line)
		}
		if cells[0] != Region {
			continue
		}
		p, err := strconv.ParseFloat(cells[2], 64)
		if err != nil {
			return nil, fmt.Errorf("prices line %d: %w", n, err)
		}
		t[cells[1]] = p
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t) == 0 {
		return nil, fmt.Errorf("prices: no %s rows", Region)
	}
	return t, nil
}

// DefaultPath finds data/prices/on-demand.csv above dir (the repository the oracle lives in).
func DefaultPath(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(d, "data", "prices", "on-demand.csv")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no data/prices/on-demand.csv above %s (give --prices)", dir)
		}
		d = parent
	}
}
