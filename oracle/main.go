// Command oracle is karplint's differential oracle: it runs Karpenter's real provisioning
// scheduler (sigs.k8s.io/karpenter v1.14.3) on generated scenarios and compares its verdict
// on every pod with karplint's (docs/oracle-contract.md).
//
//	oracle run    [--karplint PATH] [--catalog FILE] [--karplint-types] [--out DIR] [--jobs N] [--min-agreement P] [--min-agreement-final P] [--min-agreement-lint P] SCENARIOS
//	oracle replay [--karplint PATH] [--catalog FILE] [--karplint-types] DIR
//	oracle solve  [--karplint PATH --karplint-types | --catalog FILE | --instance-types FILE] DIR
//
// Karpenter schedules with the instance types the AWS provider's own NewInstanceType builds
// from data/ec2-instance-types.csv and each EC2NodeClass (internal/provider), and `run` and
// `replay` compare them with karplint's `debug instance-types` export.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"github.com/karplint/karplint/oracle/internal/catalog"
	"github.com/karplint/karplint/oracle/internal/harness"
	"github.com/karplint/karplint/oracle/internal/karplint"
	"github.com/karplint/karplint/oracle/internal/karpsim"
	"github.com/karplint/karplint/oracle/internal/prices"
	"github.com/karplint/karplint/oracle/internal/provider"
	"github.com/karplint/karplint/oracle/internal/scenario"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

const usage = `usage:
  oracle run    [--karplint PATH] [--catalog FILE] [--karplint-types] [--out DIR] [--jobs N] [--min-agreement P] [--min-agreement-final P] [--min-agreement-lint P] SCENARIOS
  oracle replay [--karplint PATH] [--catalog FILE] [--karplint-types] DIR
  oracle solve  [--karplint PATH --karplint-types | --catalog FILE | --instance-types FILE] DIR
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type common struct {
	fs            *flag.FlagSet
	karplint      string
	catalog       string
	prices        string
	ec2           string
	karplintTypes bool
	rounds        int
	verbose       bool
}

func newCommon(name string, stderr io.Writer) *common {
	c := &common{fs: flag.NewFlagSet(name, flag.ContinueOnError)}
	c.fs.SetOutput(stderr)
	c.fs.StringVar(&c.karplint, "karplint", "", "karplint binary (runs `plan` and `debug instance-types`)")
	c.fs.StringVar(&c.catalog, "catalog", "", "shared instance-type catalog for every NodePool, instead of `karplint debug instance-types`")
	c.fs.StringVar(&c.prices, "prices", "", "on-demand price table that orders the types a NodeClaim launches (default: data/prices/on-demand.csv of the repository above the working directory)")
	c.fs.StringVar(&c.ec2, "ec2-instance-types", "", "EC2 instance-type data the AWS provider's NewInstanceType builds Karpenter's instance types from (default: data/ec2-instance-types.csv of the repository above the working directory)")
	c.fs.BoolVar(&c.karplintTypes, "karplint-types", false, "Karpenter schedules with karplint's `debug instance-types` export instead of the AWS provider's types (they are still compared)")
	c.fs.IntVar(&c.rounds, "rounds", 0, "stop Karpenter after this many provisioning rounds (0: to the fixed point)")
	c.fs.BoolVar(&c.verbose, "v", false, "Karpenter's logs on stderr")
	return c
}

func (c *common) config() (harness.Config, error) {
	cfg := harness.Config{Rounds: c.rounds}
	path := c.prices
	if path == "" {
		var err error
		if path, err = prices.DefaultPath("."); err != nil {
			return cfg, err
		}
	}
	table, err := prices.Read(path)
	if err != nil {
		return cfg, err
	}
	cfg.Prices = table
	if c.karplint != "" {
		cfg.Karplint = &karplint.Binary{Path: c.karplint}
	}
	if c.catalog != "" {
		sh, err := catalog.ReadShared(c.catalog)
		if err != nil {
			return cfg, err
		}
		cfg.Catalog = sh
		return cfg, nil
	}
	b, err := c.builder(table)
	if err != nil {
		return cfg, err
	}
	cfg.Provider, cfg.KarplintTypes = b, c.karplintTypes
	return cfg, nil
}

// builder reads the EC2 data and reconstructs every type's InstanceTypeInfo.
func (c *common) builder(table prices.Table) (*provider.Builder, error) {
	path := c.ec2
	if path == "" {
		var err error
		if path, err = provider.DefaultCSVPath("."); err != nil {
			return nil, err
		}
	}
	types, err := provider.Load(path)
	if err != nil {
		return nil, err
	}
	return provider.NewBuilder(types, table), nil
}

func (c *common) context(stderr io.Writer) context.Context {
	logger := logr.Discard()
	if c.verbose {
		logger = zap.New(zap.WriteTo(stderr), zap.Level(zapcore.DebugLevel))
	}
	ctrllog.SetLogger(logger)
	return ctrllog.IntoContext(context.Background(), logger)
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	code := 0
	switch args[0] {
	case "run":
		code, err = cmdRun(args[1:], stdout, stderr)
	case "replay":
		err = cmdReplay(args[1:], stdout, stderr)
	case "solve":
		err = cmdSolve(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "oracle: %v\n", err)
		return 2
	}
	return code
}

// tuneGC trades memory for time in `run`, unless GOGC or GOMEMLIMIT say otherwise: the
// scheduler allocates heavily on ~1,400 instance types per NodePool, and at the default
// GOGC=100 the collector took ~15% of the CPU. GOGC=400 under a 2 GiB soft limit cut the
// CPU time of 200 generated scenarios by ~15% (peak RSS ~2 GB instead of ~1.3 GB).
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(2 << 30)
	}
}

func cmdRun(args []string, stdout, stderr io.Writer) (int, error) {
	c := newCommon("run", stderr)
	out := c.fs.String("out", "", "write every disagreeing scenario here")
	jobs := c.fs.Int("jobs", 2, "scenarios run in parallel")
	minAgree := c.fs.Float64("min-agreement", -1, "exit 1 when fewer than this percentage of scenarios agree after the first round")
	minFinal := c.fs.Float64("min-agreement-final", -1, "exit 1 when fewer than this percentage of scenarios agree at the fixed point")
	minCatalog := c.fs.Float64("min-agreement-catalog", -1, "exit 1 when fewer than this percentage of scenarios have karplint's instance types equal to the AWS provider's")
	minLint := c.fs.Float64("min-agreement-lint", -1, "exit 1 when fewer than this percentage of scenarios agree on the lint's findings at the fixed point")
	if err := c.fs.Parse(args); err != nil {
		return 0, err
	}
	if c.fs.NArg() != 1 {
		return 0, fmt.Errorf("run: want one SCENARIOS directory")
	}
	cfg, err := c.config()
	if err != nil {
		return 0, err
	}
	cfg.Jobs, cfg.Out = *jobs, *out
	tuneGC()
	results, err := harness.RunAll(c.context(stderr), cfg, c.fs.Arg(0), stdout)
	if err != nil {
		return 0, err
	}
	code := 0
	for _, gate := range []struct {
		min  float64
		what string
		ok   func(*harness.Scenario) bool
	}{
		{*minAgree, "--min-agreement", func(s *harness.Scenario) bool { return s.Agree }},
		{*minFinal, "--min-agreement-final", func(s *harness.Scenario) bool { return s.AgreeFinal }},
		{*minCatalog, "--min-agreement-catalog", func(s *harness.Scenario) bool { return s.AgreeCatalog }},
		{*minLint, "--min-agreement-lint", func(s *harness.Scenario) bool { return s.AgreeLint }},
	} {
		if gate.min < 0 {
			continue
		}
		agree, judged := 0, 0
		for _, s := range results {
			if gate.what == "--min-agreement-catalog" && !s.CatalogJudged && s.Error == "" {
				continue
			}
			if gate.what == "--min-agreement-lint" && s.Lint == nil && s.Error == "" {
				continue
			}
			judged++
			if gate.ok(s) {
				agree++
			}
		}
		pct := 100.0
		if judged > 0 {
			pct = 100 * float64(agree) / float64(judged)
		}
		if pct < gate.min {
			fmt.Fprintf(stderr, "oracle: agreement %.1f%% is below %s %.1f%%\n", pct, gate.what, gate.min)
			code = 1
		}
	}
	return code, nil
}

func cmdReplay(args []string, stdout, stderr io.Writer) error {
	c := newCommon("replay", stderr)
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	if c.fs.NArg() != 1 {
		return fmt.Errorf("replay: want one scenario directory")
	}
	cfg, err := c.config()
	if err != nil {
		return err
	}
	s := harness.RunOne(c.context(stderr), cfg, c.fs.Arg(0))
	if s.Error != "" {
		return fmt.Errorf("%s: %s", s.Name, s.Error)
	}
	fmt.Fprintf(stdout, "scenario %s\n", s.Name)
	for _, np := range s.NodePools {
		fmt.Fprintf(stdout, "  nodepool %-20s weight %3d ready %-5v types %3d %s\n", np.Name, np.Weight, np.Ready, np.Types, np.Reason)
	}
	if s.CatalogJudged {
		printCatalog(stdout, s.Catalog)
	}
	fmt.Fprintf(stdout, "karpenter scheduled with %s's instance types\n", s.InstanceTypes)
	printPods(stdout, s.Pods)
	fmt.Fprintf(stdout, "fixed point after %d rounds:\n", s.Rounds)
	for _, ln := range s.Launched {
		fmt.Fprintf(stdout, "  round %d: %s %s %s %s %s pods %v\n", ln.Round, ln.Node, ln.NodePool, ln.InstanceType, ln.Zone, ln.CapacityType, ln.Pods)
	}
	printPods(stdout, s.Final)
	if s.Lint != nil {
		fmt.Fprintln(stdout, "lint's findings at the fixed point:")
		for _, w := range s.Lint {
			mark := "agree   "
			if !w.Agree {
				mark = "DISAGREE"
			}
			fmt.Fprintf(stdout, "%s %s  %s (karpenter: %d of %d Pending %v)\n", mark, w.Workload, w.Class, w.Pending, w.Pods, w.Kinds)
			for _, d := range w.Findings {
				fmt.Fprintf(stdout, "    lint %s: %s\n", d.Rule, d.Message)
			}
		}
		fmt.Fprintf(stdout, "oracle: %d/1 scenarios agree on the lint's findings\n", map[bool]int{true: 1}[s.AgreeLint])
	}
	if s.CatalogJudged {
		fmt.Fprintf(stdout, "oracle: %d/1 scenarios agree on the instance types\n", map[bool]int{true: 1}[s.AgreeCatalog])
	}
	fmt.Fprintf(stdout, "timing: karplint %s, karpenter %s, provider's types %s, total %s\n", s.Timing.Karplint.Round(time.Microsecond), s.Timing.Karpenter.Round(time.Microsecond), s.Timing.Provider.Round(time.Microsecond), s.Timing.Total.Round(time.Microsecond))
	fmt.Fprintf(stdout, "oracle: %d/1 scenarios agree at the fixed point\n", map[bool]int{true: 1}[s.AgreeFinal])
	fmt.Fprintf(stdout, "oracle: %d/1 scenarios agree\n", map[bool]int{true: 1}[s.Agree])
	return nil
}

func side(w io.Writer, who string, p verdict.Pod) {
	switch p.Outcome {
	case verdict.Scheduled:
		if p.Round > 0 {
			fmt.Fprintf(w, "    %s schedules on %s in round %d\n", who, p.NodePool, p.Round)
		} else {
			fmt.Fprintf(w, "    %s schedules on %s\n", who, p.NodePool)
		}
	default:
		fmt.Fprintf(w, "    %s %s [%s] %s\n", who, p.Outcome, strings.Join(kindsOrFirst(p), ","), p.Reason)
		for _, f := range p.Failures {
			if f.Message != "" && f.Message != p.Reason {
				fmt.Fprintf(w, "      %s %s: %s\n", f.Kind, f.NodePool, f.Message)
			}
		}
	}
}

func kindsOrFirst(p verdict.Pod) []string {
	if k := p.Kinds(); len(k) > 0 {
		return k
	}
	return []string{p.FirstKind()}
}

func cmdSolve(args []string, stdout, stderr io.Writer) error {
	c := newCommon("solve", stderr)
	itFile := c.fs.String("instance-types", "", "`karplint debug instance-types` output to use")
	if err := c.fs.Parse(args); err != nil {
		return err
	}
	if c.fs.NArg() != 1 {
		return fmt.Errorf("solve: want one scenario directory")
	}
	ctx := c.context(stderr)
	dir := c.fs.Arg(0)
	sc, err := scenario.Load(dir)
	if err != nil {
		return err
	}
	var file *catalog.File
	switch {
	case *itFile != "":
		file, err = catalog.Read(*itFile)
	case c.catalog != "":
		var sh *catalog.Shared
		if sh, err = catalog.ReadShared(c.catalog); err == nil {
			names := []string{}
			for _, np := range sc.NodePools {
				names = append(names, np.Name)
			}
			file = sh.ForNodePools(names)
		}
	case c.karplintTypes && c.karplint != "":
		var b []byte
		if b, err = (&karplint.Binary{Path: c.karplint}).InstanceTypes(ctx, dir); err == nil {
			file, err = catalog.Parse(b)
		}
	}
	if err != nil {
		return err
	}
	cfg, err := c.config()
	if err != nil {
		return err
	}
	var types map[string][]*cloudprovider.InstanceType
	if file != nil {
		conv, err := file.Convert()
		if err != nil {
			return err
		}
		types = conv.ByNodePool
	} else if types, err = providerTypes(ctx, cfg.Provider, sc); err != nil {
		return err
	}
	res, err := karpsim.RunRounds(ctx, sc, types, karpsim.Config{Prices: cfg.Prices, Rounds: cfg.Rounds})
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// providerTypes are the AWS provider's instance types of every NodePool of sc.
func providerTypes(ctx context.Context, b *provider.Builder, sc *scenario.Scenario) (map[string][]*cloudprovider.InstanceType, error) {
	out := map[string][]*cloudprovider.InstanceType{}
	for _, np := range sc.NodePools {
		ref := np.Spec.Template.Spec.NodeClassRef
		if ref == nil {
			continue
		}
		if nc := sc.NodeClass(ref.Name); nc != nil && nc.Object != nil {
			its, _, err := b.ForNodeClass(ctx, nc.Object, sc.Zones)
			if err != nil {
				return nil, err
			}
			out[np.Name] = its
		}
	}
	return out, nil
}

// printCatalog prints how karplint's instance types differ from the provider's: per class,
// how many types, and the first few differences.
func printCatalog(w io.Writer, diffs []provider.Difference) {
	if len(diffs) == 0 {
		fmt.Fprintln(w, "instance types: karplint's export equals the AWS provider's")
		return
	}
	byField := map[string][]provider.Difference{}
	var fields []string
	for _, d := range diffs {
		if byField[d.Field] == nil {
			fields = append(fields, d.Field)
		}
		byField[d.Field] = append(byField[d.Field], d)
	}
	sort.Strings(fields)
	for _, f := range fields {
		ds := byField[f]
		fmt.Fprintf(w, "instance types DIFFER on %s (%d NodePool types)\n", f, len(ds))
		for i, d := range ds {
			if i == 5 {
				fmt.Fprintf(w, "    … and %d more\n", len(ds)-5)
				break
			}
			fmt.Fprintf(w, "    nodepool %s %s\n", d.NodePool, d)
		}
	}
}

// printPods prints each pod's comparison, agreeing or not, with both sides' verdicts.
func printPods(stdout io.Writer, pods []verdict.Comparison) {
	for _, p := range pods {
		mark := "agree   "
		if !p.Agree {
			mark = "DISAGREE"
		}
		fmt.Fprintf(stdout, "%s %s  %s\n", mark, p.Pod, p.Class)
		side(stdout, "karpenter", p.Karpenter)
		side(stdout, "karplint ", p.Karplint)
	}
}
