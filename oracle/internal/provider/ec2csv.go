package provider

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CSVFile is where the repository keeps the EC2 data karplint's catalog is generated from.
const CSVFile = "data/ec2-instance-types.csv"

// AllocatablePrefix starts the CSV's allocatable columns (`allocatable:memory`, …).
const AllocatablePrefix = "allocatable:"

// Row is one instance type of data/ec2-instance-types.csv: the labels Karpenter's AWS
// provider derived for it (an empty cell: no value) and the allocatable it computed under
// AL2023 with no blockDeviceMappings and no kubelet overrides (an empty cell: zero).
type Row struct {
	Name        string
	Labels      map[string]string
	Allocatable map[string]string
}

// Label is the value of label key ("" when the CSV gives none).
func (r Row) Label(key string) string { return r.Labels[key] }

// ReadCSV reads data/ec2-instance-types.csv (or a file of the same columns).
func ReadCSV(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := ParseCSV(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rows, nil
}

// ParseCSV parses the CSV's bytes.
func ParseCSV(r io.Reader) ([]Row, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if len(header) == 0 || header[0] != "instance_type" {
		return nil, fmt.Errorf("header: first column %q, want instance_type", strings.Join(header[:min(1, len(header))], ""))
	}
	var out []Row
	seen := map[string]bool{}
	for line := 2; ; line++ {
		cells, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		r := Row{Name: cells[0], Labels: map[string]string{}, Allocatable: map[string]string{}}
		if r.Name == "" || seen[r.Name] {
			return nil, fmt.Errorf("line %d: empty or repeated instance type %q", line, r.Name)
		}
		seen[r.Name] = true
		for i, col := range header[1:] {
			v := cells[i+1]
			if v == "" {
				continue
			}
			if res, ok := strings.CutPrefix(col, AllocatablePrefix); ok {
				r.Allocatable[res] = v
			} else {
				r.Labels[col] = v
			}
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no instance types")
	}
	return out, nil
}

// DefaultCSVPath finds data/ec2-instance-types.csv above dir (the repository the oracle
// lives in).
func DefaultCSVPath(dir string) (string, error) {
	d, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(d, CSVFile)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s above %s (give --ec2-instance-types)", CSVFile, dir)
		}
		d = parent
	}
}
