package tune

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/store"
)

// TestSweepStoresClasses: the sweep stores every family candidate's
// numerics class (the family's Numerics of its tile), and LoadReport gives
// the report those stored classes, with no note and no lookup in a
// registry: a registry that does not know the family changes nothing.
func TestSweepStoresClasses(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	cfg := testConfig()
	fam := *cfg.Families[0]
	fam.Numerics = func(p kernel.Params) string { return "fake/tm" + itoa(p["TM"]) }
	cfg.Families = []*kernel.Family{&fam}
	cfg.Tiles = []string{"4", "16"}
	cfg.AA = true // the twin records the class of the tile it twins
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	cells, err := st.Cells(ctx, store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	aa := 0
	for _, c := range cells {
		for _, cand := range c.Candidates {
			if cand.AA {
				aa++
			}
			p, _ := kernel.ParseParams(cand.Params)
			if want := "fake/tm" + itoa(p["TM"]); cand.Class != want {
				t.Errorf("%s M=%d %s: stored class %q, want %q", c.Cell.Shape, c.Cell.M, cand.Tile, cand.Class, want)
			}
		}
	}
	if aa == 0 {
		t.Fatal("no A/A twin was stored")
	}
	empty, err := kernel.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	in, note, err := LoadReport(ctx, st, store.Filter{}, nil, empty)
	if err != nil {
		t.Fatal(err)
	}
	if note != "" {
		t.Errorf("a database with stored classes got the note %q", note)
	}
	doc, err := jsonDoc(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc, `"class": "fake/tm04"`) || !strings.Contains(doc, `"class": "fake/tm16"`) {
		t.Errorf("the report does not carry the stored classes:\n%.2000s", doc)
	}
}

func jsonDoc(in report.Input) (string, error) {
	var b strings.Builder
	err := report.JSON(&b, in)
	return b.String(), err
}

// TestLoadReportOldDatabase: the recorded H200 sweep (schema 5, before the
// store kept classes) still reports: LoadReport derives every family
// candidate's class from the registry's families — its wgmma tiles share
// gemm_f16's class, as the sweep found them bitwise equal — and says so in
// one note.
func TestLoadReportOldDatabase(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "docs", "results", "h200-final", "final.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "final.sqlite")
	if err := os.WriteFile(db, src, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	in, note, err := LoadReport(ctx, st, store.Filter{}, nil, builtin.New())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(note, "stored without their numerics class") || strings.Count(note, "\n") != 0 {
		t.Errorf("note %q", note)
	}
	classes := map[string]bool{}
	for _, c := range in.Cells {
		for _, cand := range c.Candidates {
			if !cand.Vendor {
				classes[cand.Class] = true
				if cand.Class == "" {
					t.Fatalf("%s M=%d %s has no class", c.Cell.Shape, c.Cell.M, cand.Tile)
				}
			}
		}
	}
	if !classes["gemm_f16"] || classes["gemm_wgmma"] {
		t.Errorf("classes %v: want gemm_f16, and no class named after the family gemm_wgmma (its tiles share gemm_f16's numerics)", classes)
	}
	if line := report.ParityLine(in); !strings.HasPrefix(line, "ALL BITWISE within each numerics class") {
		t.Errorf("parity line %q", line)
	}
}
