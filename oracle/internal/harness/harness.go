// Package harness runs both sides on every scenario of a directory, compares them pod by
// pod, writes each disagreeing scenario out so it can be replayed, and summarises.
package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/karpenter/pkg/cloudprovider"

	"github.com/karplint/karplint/oracle/internal/awslabels"
	"github.com/karplint/karplint/oracle/internal/catalog"
	"github.com/karplint/karplint/oracle/internal/karplint"
	"github.com/karplint/karplint/oracle/internal/karpsim"
	"github.com/karplint/karplint/oracle/internal/lintcheck"
	"github.com/karplint/karplint/oracle/internal/prices"
	"github.com/karplint/karplint/oracle/internal/provider"
	"github.com/karplint/karplint/oracle/internal/scenario"
	"github.com/karplint/karplint/oracle/internal/verdict"
)

// ArtefactDir is where, inside a scenario directory, the oracle keeps its own files:
// hidden, so karplint (which skips hidden directories and reads *.json) never lints them.
const ArtefactDir = ".oracle"

// Artefact file names.
const (
	PlanFile          = "karplint-plan.json"
	InstanceTypesFile = "instance-types.json"
	DisagreementFile  = "disagreement.json"
	LintFile          = "karplint-lint.json"
)

// Config says where each side's inputs come from.
type Config struct {
	// Karplint runs the binary; nil reads the stored artefacts of each scenario.
	Karplint *karplint.Binary
	// Catalog, when set, replaces `karplint debug instance-types` for every scenario.
	Catalog *catalog.Shared
	Jobs    int
	Out     string
	// Cache converts each distinct NodePool instance-type array once; nil converts every
	// scenario's afresh (RunAll makes one when it is nil).
	Cache *catalog.Cache
	// Prices orders the instance types each NodeClaim launches between rounds; nil runs
	// one round only.
	Prices prices.Table
	// Rounds, when positive, stops Karpenter after that many rounds.
	Rounds int
	// Provider builds each NodePool's instance types with the AWS provider's NewInstanceType
	// from its EC2NodeClass (internal/provider); Karpenter schedules with them, and they are
	// compared with karplint's export. Nil (or a shared Catalog) leaves Karpenter with
	// karplint's export and compares nothing.
	Provider *provider.Builder
	// KarplintTypes makes Karpenter schedule with karplint's export even when Provider is
	// set (the comparison still runs).
	KarplintTypes bool
	// Comparer memoises the comparison (RunAll makes one when it is nil).
	Comparer *provider.Comparer
}

// Timing of one scenario.
type Timing struct {
	Karplint  time.Duration `json:"karplintMs"`
	Karpenter time.Duration `json:"karpenterMs"`
	// Provider is building the AWS provider's types and comparing them with karplint's.
	Provider time.Duration `json:"providerMs"`
	Total    time.Duration `json:"totalMs"`
}

// MarshalJSON writes durations as milliseconds.
func (t Timing) MarshalJSON() ([]byte, error) {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return json.Marshal(map[string]float64{"karplintMs": ms(t.Karplint), "karpenterMs": ms(t.Karpenter), "providerMs": ms(t.Provider), "totalMs": ms(t.Total)})
}

// Scenario is the outcome of one scenario.
type Scenario struct {
	Name string `json:"scenario"`
	Dir  string `json:"-"`
	// Agree: every pod agrees after the first round.
	Agree bool   `json:"agree"`
	Error string `json:"error,omitempty"`
	// AgreeFinal: every pod agrees at the fixed point.
	AgreeFinal bool                 `json:"agreeFinal"`
	Pods       []verdict.Comparison `json:"pods"`
	// Final compares each pod at the fixed point (outcome, NodePool, round, first kind).
	Final []verdict.Comparison `json:"final"`
	// Rounds Karpenter ran to its fixed point (the last placed no pod).
	Rounds   int                `json:"rounds"`
	Launched []karpsim.Launched `json:"launched,omitempty"`
	// AgreeLint: every workload's lint findings correspond to Karpenter's fixed point.
	AgreeLint  bool                    `json:"agreeLint"`
	Lint       []lintcheck.Workload    `json:"lint,omitempty"`
	NodePools  []karpsim.NodePoolState `json:"karpenterNodePools"`
	Conversion map[string]any          `json:"conversion,omitempty"`
	// CatalogJudged: karplint's export was compared with the provider's types; AgreeCatalog:
	// they do not differ. Catalog lists each difference (dropped by RunAll once tallied;
	// CatalogClasses keeps how many types each class touches).
	CatalogJudged  bool                  `json:"catalogJudged,omitempty"`
	AgreeCatalog   bool                  `json:"agreeCatalog"`
	Catalog        []provider.Difference `json:"catalogDifferences,omitempty"`
	CatalogClasses map[string]int        `json:"catalogClasses,omitempty"`
	// InstanceTypes says whose types Karpenter scheduled with: "provider" or "karplint".
	InstanceTypes string `json:"instanceTypes,omitempty"`
	// KarpenterRuns is how many times Karpenter ran before it agreed, when the first run
	// did not (see Reruns).
	KarpenterRuns int    `json:"karpenterRuns,omitempty"`
	Timing        Timing `json:"timing"`
	plan, types   []byte
	lint          []byte
	// finalKarpenter is the kept run's fixed point, for the lint comparison.
	finalKarpenter []verdict.Pod
}

// ComparedCacheEntries bounds the conversion cache when karplint's arrays are only compared
// (the comparer's memo spares most conversions, and each kept array is ~25 MB).
const ComparedCacheEntries = 2

// Reruns is how many more times Karpenter runs on a scenario whose first run disagrees.
// Karpenter's topology picks among equally good domains in Go's random map order
// (topologygroup.go nextDomainTopologySpread, nextDomainAffinity), so one scenario can end
// more than one way; karplint, which takes the first domain by name, agrees when it ends
// one of the ways Karpenter can. karplint's way need not be the likelier one: on scenario
// s20261130-918 of the CI seed (a zone spread whose first pod takes one of two empty zones)
// about one run in two ends as karplint does. With 40 reruns, a way Karpenter takes one run
// in ten is missed 1.3% of the time; a scenario that agrees costs no rerun.
const Reruns = 40

// Disagreements are the pods that do not agree.
func (s *Scenario) Disagreements() []verdict.Comparison {
	var out []verdict.Comparison
	for _, p := range s.Pods {
		if !p.Agree {
			out = append(out, p)
		}
	}
	return out
}

func allAgree(pods []verdict.Comparison) bool {
	for _, p := range pods {
		if !p.Agree {
			return false
		}
	}
	return true
}

// Dirs lists the scenario directories under root (root itself if it is one), sorted.
func Dirs(root string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(root, scenario.ManifestsFile)); err == nil {
		return []string{root}, nil
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		d := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(d, scenario.ManifestsFile)); e.IsDir() && err == nil {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

// RunOne runs both sides on one scenario directory.
func RunOne(ctx context.Context, cfg Config, dir string) *Scenario {
	start := time.Now()
	s := &Scenario{Name: filepath.Base(dir), Dir: dir}
	if err := s.run(ctx, cfg); err != nil {
		s.Error = err.Error()
	}
	s.Agree = s.Error == "" && len(s.Disagreements()) == 0
	s.AgreeFinal = s.Error == "" && allAgree(s.Final)
	s.AgreeCatalog = s.Error == "" && len(s.Catalog) == 0
	s.CatalogClasses = classCounts(s.Catalog)
	s.AgreeLint = s.Error == ""
	for _, w := range s.Lint {
		s.AgreeLint = s.AgreeLint && w.Agree
	}
	s.Timing.Total = time.Since(start)
	return s
}

func (s *Scenario) run(ctx context.Context, cfg Config) error {
	sc, err := scenario.Load(s.Dir)
	if err != nil {
		return fmt.Errorf("scenario: %w", err)
	}
	t0 := time.Now()
	if err := s.karplintSide(ctx, cfg, sc); err != nil {
		return err
	}
	s.Timing.Karplint = time.Since(t0)
	rows, err := karplint.ParsePlan(s.plan)
	if err != nil {
		return err
	}
	doc, err := cfg.Cache.Split(s.types)
	if err != nil {
		return err
	}
	// Karplint's arrays are converted when Karpenter schedules with them, else only for a
	// comparison the memo lacks.
	stats := catalog.NewConverted()
	var types map[string][]*cloudprovider.InstanceType
	s.InstanceTypes = "karplint"
	if cfg.Provider == nil || cfg.Catalog != nil || cfg.KarplintTypes {
		conv, err := doc.Convert()
		if err != nil {
			return err
		}
		types, stats = conv.ByNodePool, conv
	}
	if cfg.Provider != nil && cfg.Catalog == nil {
		tp := time.Now()
		built, err := s.providerTypes(ctx, cfg, sc, doc, stats)
		if err != nil {
			return err
		}
		s.Timing.Provider = time.Since(tp)
		if !cfg.KarplintTypes {
			types, s.InstanceTypes = built, "provider"
		}
	}
	if len(stats.Missing) > 0 || len(stats.Derived) > 0 {
		s.Conversion = map[string]any{"missingLabels": stats.Missing}
		if len(stats.Derived) > 0 {
			s.Conversion["derivedFromOfferings"] = stats.Derived
		}
	}
	t1 := time.Now()
	kcfg := karpsim.Config{Prices: cfg.Prices, Rounds: cfg.Rounds}
	res, err := karpsim.RunRounds(ctx, sc, types, kcfg)
	if err != nil {
		return err
	}
	s.Timing.Karpenter = time.Since(t1)
	first, final := karplint.Pods(rows), karplint.Final(rows)
	s.take(res, first, final, 0)
	var diags []karplint.Diagnostic
	if s.lint != nil {
		if diags, err = karplint.ParseLint(s.lint); err != nil {
			return err
		}
	}
	// A rerun is taken when it agrees where the kept run did not: at the first round, then
	// at the fixed point too.
	for run := 2; run <= Reruns+1 && !(allAgree(s.Pods) && allAgree(s.Final)); run++ {
		again, err := karpsim.RunRounds(ctx, sc, types, kcfg)
		if err != nil {
			return err
		}
		pods, fin := compare(again.Pods, first), compareFinal(again.Final, final)
		if allAgree(pods) && (allAgree(fin) || !allAgree(s.Pods)) {
			s.take(again, first, final, run)
		}
	}
	if s.lint != nil {
		s.Lint = lintcheck.Compare(s.finalKarpenter, diags)
	}
	return nil
}

// providerTypes builds every NodePool's instance types with the AWS provider from the
// EC2NodeClass it names (a NodePool naming none gets none, as the provider's GetInstanceTypes
// returns on NotFound) and compares them with karplint's export of the same NodePool (doc;
// what each conversion it needs fills in is merged into stats, unless stats already holds
// the whole document's).
func (s *Scenario) providerTypes(ctx context.Context, cfg Config, sc *scenario.Scenario, doc *catalog.Split, stats *catalog.Converted) (map[string][]*cloudprovider.InstanceType, error) {
	converted := len(stats.ByNodePool) > 0
	out := map[string][]*cloudprovider.InstanceType{}
	s.CatalogJudged = true
	for _, np := range sc.NodePools {
		ref := np.Spec.Template.Spec.NodeClassRef
		if ref == nil || ref.Kind != "EC2NodeClass" || ref.Group != awslabels.Group {
			continue
		}
		nc := sc.NodeClass(ref.Name)
		if nc == nil || nc.Object == nil {
			continue
		}
		its, key, err := cfg.Provider.ForNodeClass(ctx, nc.Object, sc.Zones)
		if err != nil {
			return nil, fmt.Errorf("nodepool %q: %w", np.Name, err)
		}
		out[np.Name] = its
		memo := ""
		if k := doc.Key(np.Name); k != "" {
			memo = k + "|" + key
		}
		name := np.Name
		diffs, err := cfg.Comparer.CompareLazy(memo, name, func() ([]*cloudprovider.InstanceType, error) {
			if converted {
				return stats.ByNodePool[name], nil
			}
			types, st, err := doc.Types(name)
			if err == nil {
				stats.Merge(st)
			}
			return types, err
		}, its)
		if err != nil {
			return nil, err
		}
		s.Catalog = append(s.Catalog, diffs...)
	}
	return out, nil
}

// classCounts is how many types each difference class touches (a type counted once per
// class, whatever its NodePools).
func classCounts(diffs []provider.Difference) map[string]int {
	if len(diffs) == 0 {
		return nil
	}
	seen := map[[2]string]bool{}
	out := map[string]int{}
	for _, d := range diffs {
		k := [2]string{d.Field, d.Type}
		if !seen[k] {
			seen[k] = true
			out[d.Field]++
		}
	}
	return out
}

// take keeps Karpenter's run res, compared with karplint's verdicts after the first round
// and at the fixed point; run is its number when it is a rerun.
func (s *Scenario) take(res *karpsim.Result, first, final []verdict.Pod, run int) {
	s.NodePools, s.Rounds, s.Launched = res.NodePools, res.Rounds, res.Launched
	s.Pods = compare(res.Pods, first)
	s.Final = compareFinal(res.Final, final)
	s.KarpenterRuns = run
	s.finalKarpenter = res.Final
}

func (s *Scenario) karplintSide(ctx context.Context, cfg Config, sc *scenario.Scenario) error {
	var err error
	if cfg.Karplint != nil {
		if s.plan, err = cfg.Karplint.Plan(ctx, s.Dir); err != nil {
			return err
		}
		if s.lint, err = cfg.Karplint.Lint(ctx, s.Dir); err != nil {
			return err
		}
	} else {
		if s.plan, err = os.ReadFile(filepath.Join(s.Dir, ArtefactDir, PlanFile)); err != nil {
			return fmt.Errorf("no --karplint and no stored plan: %w", err)
		}
		// A stored run without the lint's report compares plan only.
		s.lint, _ = os.ReadFile(filepath.Join(s.Dir, ArtefactDir, LintFile))
	}
	switch {
	case cfg.Catalog != nil:
		names := make([]string, len(sc.NodePools))
		for i, np := range sc.NodePools {
			names[i] = np.Name
		}
		s.types, err = json.Marshal(cfg.Catalog.ForNodePools(names))
		return err
	case cfg.Karplint != nil:
		s.types, err = cfg.Karplint.InstanceTypes(ctx, s.Dir)
		return err
	}
	if s.types, err = os.ReadFile(filepath.Join(s.Dir, ArtefactDir, InstanceTypesFile)); err != nil {
		return fmt.Errorf("no --karplint and no stored instance types: %w", err)
	}
	return nil
}

// compare pairs the two sides' pods by name; a pod only one side knows is a disagreement.
func compare(karp, lint []verdict.Pod) []verdict.Comparison {
	return compareWith(verdict.Compare, karp, lint)
}

// compareFinal pairs the pods at the fixed point (verdict.CompareFinal).
func compareFinal(karp, lint []verdict.Pod) []verdict.Comparison {
	return compareWith(verdict.CompareFinal, karp, lint)
}

func compareWith(cmp func(k, l verdict.Pod) verdict.Comparison, karp, lint []verdict.Pod) []verdict.Comparison {
	byName := map[string]verdict.Pod{}
	for _, p := range lint {
		byName[p.Pod] = p
	}
	var out []verdict.Comparison
	for _, k := range karp {
		l, ok := byName[k.Pod]
		if !ok {
			l = verdict.Pod{Pod: k.Pod, Workload: k.Workload, Replica: k.Replica, Outcome: verdict.Unknown}
		}
		delete(byName, k.Pod)
		out = append(out, cmp(k, l))
	}
	rest := make([]string, 0, len(byName))
	for n := range byName {
		rest = append(rest, n)
	}
	sort.Strings(rest)
	for _, n := range rest {
		l := byName[n]
		out = append(out, cmp(verdict.Pod{Pod: n, Workload: l.Workload, Replica: l.Replica, Outcome: verdict.Unknown}, l))
	}
	return out
}

// RunAll runs every scenario under root with cfg.Jobs workers, writes the disagreeing ones
// to cfg.Out, and prints the summary to w (its last line is `oracle: K/N scenarios agree`).
func RunAll(ctx context.Context, cfg Config, root string, w io.Writer) ([]*Scenario, error) {
	dirs, err := Dirs(root)
	if err != nil {
		return nil, err
	}
	jobs := cfg.Jobs
	if jobs < 1 {
		jobs = 1
	}
	if cfg.Cache == nil {
		cfg.Cache = catalog.NewCache()
		if cfg.Provider != nil && cfg.Catalog == nil && !cfg.KarplintTypes {
			// Karplint's arrays are only compared, and the comparer remembers each pair.
			cfg.Cache = catalog.NewCacheSize(ComparedCacheEntries)
		}
	}
	if cfg.Comparer == nil {
		cfg.Comparer = provider.NewComparer()
	}
	tally := newCatalogTally()
	start := time.Now()
	results := make([]*Scenario, len(dirs))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var writeErr error
	next := make(chan int)
	for j := 0; j < jobs; j++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := RunOne(ctx, cfg, dirs[i])
				// Written now and then dropped: a scenario's karplint outputs are megabytes,
				// too many to hold for a thousand scenarios.
				if !(s.Agree && s.AgreeFinal && s.AgreeLint) && cfg.Out != "" {
					if err := s.Write(cfg.Out); err != nil {
						mu.Lock()
						if writeErr == nil {
							writeErr = err
						}
						mu.Unlock()
					}
				}
				s.plan, s.types, s.lint, s.finalKarpenter = nil, nil, nil, nil
				tally.add(s)
				s.Catalog = nil
				results[i] = s
			}
		}()
	}
	for i := range dirs {
		next <- i
	}
	close(next)
	wg.Wait()
	if writeErr != nil {
		return results, writeErr
	}
	hits, misses := cfg.Cache.Stats()
	notes := []string{fmt.Sprintf("oracle: instance types: %d NodePool arrays converted, %d served from the cache", misses, hits)}
	if cfg.Provider != nil {
		ph, pm := cfg.Provider.Stats()
		notes = append(notes, fmt.Sprintf("oracle: instance types: %d node classes built with the AWS provider's NewInstanceType, %d served from the cache (%d types; %d with network limits from the CSV's pods, the provider's ENI table lacking them)",
			pm, ph, len(cfg.Provider.Types.Infos), len(cfg.Provider.Types.ENIFromCSV)))
	}
	if cfg.Out != "" && len(tally.byKey) > 0 {
		if err := tally.write(filepath.Join(cfg.Out, CatalogFile)); err != nil {
			return results, err
		}
		notes = append(notes, fmt.Sprintf("oracle: instance types: every difference in %s", filepath.Join(cfg.Out, CatalogFile)))
	}
	SummariseWith(w, results, time.Since(start), jobs, tally, notes...)
	return results, nil
}

// Write copies the scenario to out/<name> with its artefacts and disagreement.json.
func (s *Scenario) Write(out string) error {
	dst := filepath.Join(out, s.Name)
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	if err := copyDir(s.Dir, dst); err != nil {
		return err
	}
	art := filepath.Join(dst, ArtefactDir)
	if err := os.MkdirAll(art, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{DisagreementFile: append(b, '\n'), PlanFile: s.plan, InstanceTypesFile: s.types, LintFile: s.lint} {
		if data == nil {
			continue
		}
		if err := os.WriteFile(filepath.Join(art, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// Summarise prints per-pod agreement, the disagreement classes, timing, and last the
// scenario agreement line.
func Summarise(w io.Writer, results []*Scenario, wall time.Duration, jobs int, notes ...string) {
	SummariseWith(w, results, wall, jobs, nil, notes...)
}

// SummariseWith is Summarise with the run's instance-type differences (nil: none tallied).
func SummariseWith(w io.Writer, results []*Scenario, wall time.Duration, jobs int, tally *catalogTally, notes ...string) {
	agree, pods, podsAgree, derived, reran := 0, 0, 0, 0, 0
	agreeFinal, finalPods, finalAgree, multiRound := 0, 0, 0, 0
	agreeLint, lintWorkloads, lintAgree, lintJudged := 0, 0, 0, 0
	launched := 0
	catalogJudged, agreeCatalog := 0, 0
	lintClasses := map[string]int{}
	classes, finalClasses := map[string]int{}, map[string]int{}
	var totals, karps, lints, provs []time.Duration
	for _, s := range results {
		if s.Agree {
			agree++
		}
		if s.KarpenterRuns > 0 {
			reran++
		}
		if s.Error != "" {
			classes["error: "+firstWords(s.Error)]++
		}
		if s.Conversion != nil && s.Conversion["derivedFromOfferings"] != nil {
			derived++
		}
		for _, p := range s.Pods {
			pods++
			if p.Agree {
				podsAgree++
			} else {
				classes[p.Class]++
			}
		}
		if s.AgreeFinal {
			agreeFinal++
		}
		if s.Lint != nil || s.Error != "" {
			lintJudged++
			if s.AgreeLint {
				agreeLint++
			}
		}
		for _, w := range s.Lint {
			lintWorkloads++
			if w.Agree {
				lintAgree++
			} else {
				lintClasses[w.Class]++
			}
		}
		if s.Rounds > 2 {
			multiRound++
		}
		if s.CatalogJudged || (s.Error != "" && tally != nil) {
			catalogJudged++
			if s.AgreeCatalog {
				agreeCatalog++
			}
		}
		launched += len(s.Launched)
		for _, p := range s.Final {
			finalPods++
			if p.Agree {
				finalAgree++
			} else {
				finalClasses[p.Class]++
			}
		}
		totals = append(totals, s.Timing.Total)
		karps = append(karps, s.Timing.Karpenter)
		lints = append(lints, s.Timing.Karplint)
		provs = append(provs, s.Timing.Provider)
	}
	for _, s := range results {
		if !s.Agree {
			fmt.Fprintf(w, "disagree %s: %s\n", s.Name, describe(s, s.Pods))
		}
	}
	for _, s := range results {
		if s.Error == "" && s.Lint != nil && !s.AgreeLint {
			fmt.Fprintf(w, "disagree on the lint %s: %s\n", s.Name, describeLint(s.Lint))
		}
	}
	for _, s := range results {
		if s.Error == "" && !s.AgreeFinal {
			fmt.Fprintf(w, "disagree at the fixed point %s: %s\n", s.Name, describe(s, s.Final))
		}
	}
	for _, s := range results {
		if s.Error == "" && s.CatalogJudged && !s.AgreeCatalog {
			fmt.Fprintf(w, "disagree on the instance types %s: %s\n", s.Name, describeCatalog(s.CatalogClasses))
		}
	}
	if derived > 0 {
		fmt.Fprintf(w, "oracle: %d scenarios: karplint's export had no zone, region or capacity-type requirement; the oracle derived them from the offerings\n", derived)
	}
	if reran > 0 {
		fmt.Fprintf(w, "oracle: %d scenarios agree on a rerun of Karpenter (it picks among equal topology domains at random)\n", reran)
	}
	fmt.Fprintf(w, "oracle: %d/%d pods agree\n", podsAgree, pods)
	printTally(w, "", classes)
	fmt.Fprintf(w, "oracle: fixed point: %d/%d pods agree; %d scenarios needed more than one round that placed pods\n", finalAgree, finalPods, multiRound)
	printTally(w, "fixed point: ", finalClasses)
	fmt.Fprintf(w, "oracle: fixed point: %d nodes launched between rounds\n", launched)
	if lintJudged > 0 {
		fmt.Fprintf(w, "oracle: lint: %d/%d workloads agree\n", lintAgree, lintWorkloads)
		printTallyOf(w, "lint: ", "workloads", lintClasses)
	}
	if len(results) > 0 {
		provider := ""
		if tally != nil && mean(provs) > 0 {
			provider = fmt.Sprintf(", provider's types mean %s", ms(mean(provs)))
		}
		fmt.Fprintf(w, "oracle: per scenario: total mean %s p50 %s max %s (karplint mean %s, karpenter mean %s%s); wall %s with %d jobs\n",
			ms(mean(totals)), ms(pct(totals, 50)), ms(pct(totals, 100)), ms(mean(lints)), ms(mean(karps)), provider, wall.Round(time.Millisecond), jobs)
	}
	if tally != nil {
		tally.print(w)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	if catalogJudged > 0 {
		fmt.Fprintf(w, "oracle: %d/%d scenarios agree on the instance types\n", agreeCatalog, catalogJudged)
	}
	fmt.Fprintf(w, "oracle: %d/%d scenarios agree at the fixed point\n", agreeFinal, len(results))
	if lintJudged > 0 {
		fmt.Fprintf(w, "oracle: %d/%d scenarios agree on the lint's findings\n", agreeLint, lintJudged)
	}
	fmt.Fprintf(w, "oracle: %d/%d scenarios agree\n", agree, len(results))
}

func printTally(w io.Writer, prefix string, classes map[string]int) {
	printTallyOf(w, prefix, "pods", classes)
}

// counted is one class of a tally and how often it occurs.
type counted struct {
	k string
	v int
}

// byCount is classes, the most frequent first, then by name.
func byCount(classes map[string]int) []counted {
	var tally []counted
	for k, v := range classes {
		tally = append(tally, counted{k, v})
	}
	sort.Slice(tally, func(a, b int) bool {
		if tally[a].v != tally[b].v {
			return tally[a].v > tally[b].v
		}
		return tally[a].k < tally[b].k
	})
	return tally
}

func printTallyOf(w io.Writer, prefix, unit string, classes map[string]int) {
	for _, t := range byCount(classes) {
		fmt.Fprintf(w, "oracle: %s%6d %s  %s\n", prefix, t.v, unit, t.k)
	}
}

func describe(s *Scenario, pods []verdict.Comparison) string {
	if s.Error != "" {
		return "error: " + s.Error
	}
	var parts []string
	var dis []verdict.Comparison
	for _, p := range pods {
		if !p.Agree {
			dis = append(dis, p)
		}
	}
	for _, d := range dis {
		parts = append(parts, fmt.Sprintf("%s (%s)", d.Pod, d.Class))
		if len(parts) == 3 {
			break
		}
	}
	if n := len(dis); n > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", n-3))
	}
	return strings.Join(parts, ", ")
}

func describeLint(ws []lintcheck.Workload) string {
	var parts []string
	n := 0
	for _, w := range ws {
		if w.Agree {
			continue
		}
		n++
		if len(parts) < 3 {
			parts = append(parts, fmt.Sprintf("%s (%s)", w.Workload, w.Class))
		}
	}
	if n > 3 {
		parts = append(parts, fmt.Sprintf("and %d more", n-3))
	}
	return strings.Join(parts, ", ")
}

func firstWords(s string) string {
	if len(s) > 60 {
		return s[:60]
	}
	return s
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var t time.Duration
	for _, d := range ds {
		t += d
	}
	return t / time.Duration(len(ds))
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	i := (len(s) - 1) * p / 100
	return s[i]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
