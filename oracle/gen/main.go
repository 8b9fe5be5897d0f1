// Command gen writes random, valid Karpenter scenarios for karplint's differential oracle
// (docs/oracle-contract.md). Each scenario is a directory holding
// manifests.yaml (EC2NodeClasses, NodePools, DaemonSets, Deployments) and .karplint.yaml
// (the cluster's zones). Output depends only on the seed: scenario i of seed S is generated
// from its own PCG stream, so it can be regenerated alone with --only i.
//
//	go run ./gen --seed 7 --count 100 --out /tmp/scenarios
//	go run ./gen --seed 7 --only 42 --out /tmp/one
//	go run ./gen --seed 7 --count 1000 --stats   # feature counts, nothing written
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	seed := flag.Uint64("seed", 1, "seed of the scenario set")
	count := flag.Uint64("count", 10, "number of scenarios (indices 0..count-1)")
	only := flag.Int64("only", -1, "generate only this index")
	out := flag.String("out", "", "directory to write scenarios into")
	stats := flag.Bool("stats", false, "print how many scenarios use each feature instead of writing")
	flag.Float64Var(&P.StaticNodes, "static-nodes", P.StaticNodes, "probability that a scenario has 1-3 static Nodes (drawn last: the other objects stay the same)")
	flag.Parse()
	if *out == "" && !*stats {
		fmt.Fprintln(os.Stderr, "gen: --out DIR is required (or --stats)")
		os.Exit(2)
	}
	first, last := uint64(0), *count
	if *only >= 0 {
		first, last = uint64(*only), uint64(*only)+1
	}
	tally := newTally()
	for i := first; i < last; i++ {
		s := Generate(*seed, i)
		if *stats {
			tally.add(s)
			continue
		}
		if err := write(*out, s); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	if *stats {
		tally.print(os.Stdout, last-first)
	}
}

// Dir is the scenario's directory name under --out.
func Dir(s *Scenario) string { return fmt.Sprintf("s%d-%d", s.Seed, s.Index) }

func write(out string, s *Scenario) error {
	dir := filepath.Join(out, Dir(s))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), []byte(RenderManifests(s)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ".karplint.yaml"), []byte(RenderConfig(s)), 0o644)
}
