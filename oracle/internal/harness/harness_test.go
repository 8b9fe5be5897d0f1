package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karplint/karplint/oracle/internal/prices"
	"github.com/karplint/karplint/oracle/internal/provider"
)

// The stored artefacts of testdata/scenarios/{mixed,weights}/.oracle stand in for the
// karplint binary: mixed agrees pod for pod, weights has karplint put replica 2 on the
// lighter NodePool.
func TestRunAllWithStoredArtefacts(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"mixed", "weights"} {
		if err := copyDir(filepath.Join("../../testdata/scenarios", s), filepath.Join(root, "in", s)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	var buf bytes.Buffer
	results, err := RunAll(context.Background(), Config{Jobs: 2, Out: out}, filepath.Join(root, "in"), &buf)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if last := lines[len(lines)-1]; last != "oracle: 1/2 scenarios agree" {
		t.Errorf("last line %q\n%s", last, buf.String())
	}
	if !strings.Contains(buf.String(), "oracle: 5/6 pods agree") || !strings.Contains(buf.String(), "different nodepool") {
		t.Errorf("summary:\n%s", buf.String())
	}
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
	}
	// The disagreeing scenario is written out, replayable from its own artefacts.
	for _, f := range []string{"manifests.yaml", ".oracle/disagreement.json", ".oracle/karplint-plan.json", ".oracle/instance-types.json"} {
		if _, err := os.Stat(filepath.Join(out, "weights", f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "mixed")); !os.IsNotExist(err) {
		t.Errorf("agreeing scenario written out: %v", err)
	}
	replay := RunOne(context.Background(), Config{}, filepath.Join(out, "weights"))
	if replay.Agree || len(replay.Disagreements()) != 1 || replay.Disagreements()[0].Pod != "default/api-2" {
		t.Errorf("replay: agree=%v %+v", replay.Agree, replay.Disagreements())
	}
}

// With the AWS provider's types, Karpenter reaches the same verdicts on the stored
// scenarios, and each NodePool's export is compared with the provider's types: the
// agreement line is printed, and every difference is in catalog-differences.json.
func TestRunAllWithProviderTypes(t *testing.T) {
	root := t.TempDir()
	for _, s := range []string{"mixed", "weights"} {
		if err := copyDir(filepath.Join("../../testdata/scenarios", s), filepath.Join(root, "in", s)); err != nil {
			t.Fatal(err)
		}
	}
	types, err := provider.Load("../../../data/ec2-instance-types.csv")
	if err != nil {
		t.Fatal(err)
	}
	table, err := prices.Read("../../../data/prices/on-demand.csv")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	var buf bytes.Buffer
	cfg := Config{Jobs: 2, Out: out, Provider: provider.NewBuilder(types, table), Prices: table}
	results, err := RunAll(context.Background(), cfg, filepath.Join(root, "in"), &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "oracle: 1/2 scenarios agree\n") {
		t.Errorf("summary:\n%s", buf.String())
	}
	agree := 0
	for _, r := range results {
		if r.Error != "" {
			t.Errorf("%s: %s", r.Name, r.Error)
		}
		if !r.CatalogJudged || r.InstanceTypes != "provider" {
			t.Errorf("%s: judged %v, scheduled with %q", r.Name, r.CatalogJudged, r.InstanceTypes)
		}
		if r.AgreeCatalog {
			agree++
		}
	}
	if want := fmt.Sprintf("oracle: %d/2 scenarios agree on the instance types", agree); !strings.Contains(buf.String(), want) {
		t.Errorf("no %q in\n%s", want, buf.String())
	}
	if _, err := os.Stat(filepath.Join(out, CatalogFile)); (agree < 2) != (err == nil) {
		t.Errorf("%d/2 agree on the instance types; %s: %v", agree, CatalogFile, err)
	}
}
