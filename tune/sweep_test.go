package tune

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/measure"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

func testConfig() Config {
	w := workload.Workload{Name: "t", Shapes: []workload.Shape{{Name: "a", N: 5, K: 7, Calls: 2}, {Name: "b", N: 3, K: 33, Calls: 1}}, Ms: []int{9, 17}}
	return Config{Families: []*kernel.Family{fakeFamily()}, Workload: w, Seed: 7, Measure: measure.Options{Rounds: 6, MinRounds: 6}}
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func statuses(t *testing.T, st *store.Store) map[string]result.Status {
	t.Helper()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]result.Status{}
	for _, c := range cells {
		for _, cand := range c.Candidates {
			out[c.Cell.Shape+"/"+itoa(c.Cell.M)+"/"+cand.Tile] = cand.Status
		}
	}
	return out
}

func itoa(i int) string { return fmt.Sprintf("%02d", i) }

func TestSweepVerifiesTimesAndStores(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.bugs["4"] = "tail" // 9 % 4 and 17 % 4 leave rows unwritten
	fb.bugs["16"] = "nan"
	fb.vendor = true
	cfg := testConfig()
	cfg.Baselines = []*kernel.Baseline{fakeBaseline()}
	cfg.AA = true
	cfg.Tiles = []string{"4", "16", "32"}
	fb.bugs["32"] = "nondet"
	st := openStore(t)
	sum, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 4 || sum.Skipped != 0 {
		t.Fatalf("summary %+v", sum)
	}
	cells, _ := st.Cells(ctx, store.Filter{})
	if len(cells) != 4 {
		t.Fatalf("%d cells stored", len(cells))
	}
	for _, c := range cells {
		got := map[string]result.Candidate{}
		for _, cand := range c.Candidates {
			got[cand.Tile] = cand
		}
		if r := got["8"]; r.Status != result.OK || !r.Bitwise || len(r.Samples) != 6 {
			t.Errorf("%s M=%d reference: %+v", c.Cell.Shape, c.Cell.M, r)
		}
		if r := got["4"]; r.Status != result.NumericFailed || !strings.Contains(r.Detail, "unwritten") || r.Samples != nil {
			t.Errorf("%s M=%d tail bug not caught: %+v", c.Cell.Shape, c.Cell.M, r)
		}
		if r := got["16"]; r.Status != result.NumericFailed {
			t.Errorf("NaN not caught: %+v", r)
		}
		if r := got["32"]; r.Status != result.ParityFailed || !strings.Contains(r.Detail, "two runs differ") {
			t.Errorf("nondeterminism not caught: %+v", r)
		}
		if r := got["fakeblas"]; r.Tile != "" {
			t.Errorf("vendor stored under its kernel name: %+v", r)
		}
		if r := got["openblas"]; r.Status != result.OK || r.Bitwise || !r.Vendor {
			t.Errorf("vendor: %+v", r)
		}
		// What the backend knows of each kernel is stored with it.
		if r := got["8"]; r.Resources[result.ResRegs] != 40 || r.Resources[result.ResSharedBytes] != 512 {
			t.Errorf("reference resources %v, want regs 40, smem 512", r.Resources)
		}
		if r := got["openblas"]; r.Resources != nil {
			t.Errorf("vendor resources %v, want none", r.Resources)
		}
	}
	// A/A twin: one per shape class; both shapes are "skinny".
	aa := 0
	for _, c := range cells {
		for _, cand := range c.Candidates {
			if cand.AA {
				aa++
				if cand.Status != result.OK || len(cand.Samples) != 6 || cand.Resources[result.ResRegs] != 40 {
					t.Errorf("A/A twin %+v", cand)
				}
			}
		}
	}
	if aa != 1 {
		t.Errorf("%d A/A twins, want 1", aa)
	}

	// Resume: the same sweep runs nothing and measures nothing twice.
	before := fb.timed["8"]
	sum, err = Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 0 || sum.Skipped != 4 || fb.timed["8"] != before {
		t.Fatalf("resume re-ran: %+v, reference timed %d → %d", sum, before, fb.timed["8"])
	}
	// A new M adds only its cells; a new tile joins measured cells with the
	// reference as its anchor.
	cfg.Workload.Ms = []int{9, 17, 40}
	cfg.Tiles = append(cfg.Tiles, "2")
	sum, err = Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 6 {
		t.Fatalf("want 6 cells run (2 new M, 4 with a new tile), got %+v", sum)
	}
	cells, _ = st.Cells(ctx, store.Filter{})
	for _, c := range cells[4:] {
		if c.Cell.M != 40 && len(c.Candidates) != 2 {
			t.Errorf("new tile session %s M=%d has %d candidates, want 2 (reference + new)", c.Cell.Shape, c.Cell.M, len(c.Candidates))
		}
	}
}

func TestSweepSurvivesDeviceErrorAndCompileFailure(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.bugs["4"] = "err"
	fb.bugs["16"] = "guard"
	fb.compile["32"] = "error: expected ';'"
	cfg := testConfig()
	cfg.Tiles = []string{"4", "16", "32"}
	st := openStore(t)
	sum, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells != 4 {
		t.Fatalf("summary %+v", sum)
	}
	s := statuses(t, st)
	if s["a/09/8"] != result.OK {
		t.Errorf("reference: %v (all %v)", s["a/09/8"], s)
	}
	for _, m := range []string{"09", "17"} {
		if s["a/"+m+"/4"] != result.Crashed && s["a/"+m+"/4"] != result.Skipped {
			t.Errorf("device error: %v", s["a/"+m+"/4"])
		}
		if s["a/"+m+"/16"] != result.NumericFailed {
			t.Errorf("guard: %v", s["a/"+m+"/16"])
		}
		if s["a/"+m+"/32"] != result.CompileFailed {
			t.Errorf("compile: %v", s["a/"+m+"/32"])
		}
	}
	// Crashed in two cells → skipped in the rest.
	if s["b/17/4"] != result.Skipped {
		t.Errorf("a tile that failed twice was retried: %v", s["b/17/4"])
	}
}

func TestCandidatesValidatesTiles(t *testing.T) {
	if _, err := Candidates(fakeFamily(), []string{"3"}); err == nil || !strings.Contains(err.Error(), "TM=3 not allowed") {
		t.Fatalf("err = %v", err)
	}
	c, err := Candidates(fakeFamily(), []string{"4", "8", "4"})
	if err != nil || len(c) != 2 || c[0].Tile != "8" {
		t.Fatalf("%+v %v", c, err)
	}
}

func TestCacheBytes(t *testing.T) {
	for props, want := range map[string]int64{"l3=32768K": 32 << 20, "l2_bytes=62914560": 62914560, "l2=2M": 2 << 20, "": 64 << 20, "l3=junk": 64 << 20} {
		d := backend.Device{Props: map[string]string{}}
		if k, v, ok := strings.Cut(props, "="); ok {
			d.Props[k] = v
		}
		if got := cacheBytes(d); got != want {
			t.Errorf("cacheBytes(%s) = %d, want %d", props, got, want)
		}
	}
}

// TestRecycledOutputsKeepTheBase: the outputs of verified candidates go
// back to the backend for reuse, but a class's bitwise base is kept: a tile
// verified after several equal ones, with one element different, still
// fails parity (were the base's buffer recycled, that tile's output would
// overwrite it and compare equal to itself).
func TestRecycledOutputsKeepTheBase(t *testing.T) {
	ctx := context.Background()
	fb := newFake()
	fb.bugs["2"] = "flip"
	cfg := testConfig()
	cfg.Tiles = []string{"4", "16", "32", "2"}
	st := openStore(t)
	if _, err := Sweep(ctx, cfg, NewLocal(func(context.Context) (backendT, error) { return fb, nil }, nil), st, nil); err != nil {
		t.Fatal(err)
	}
	got := statuses(t, st)
	if len(got) == 0 {
		t.Fatal("nothing stored")
	}
	for k, s := range got {
		want := result.OK
		if strings.HasSuffix(k, "/2") {
			want = result.ParityFailed
		}
		if s != want {
			t.Errorf("%s: %s, want %s", k, s, want)
		}
	}
	if fb.recycled == 0 {
		t.Error("no output was handed back for reuse")
	}
}

// TestSweepConstWeights: a family's ConstWeights tiles join its default
// sweep only with Config.ConstWeights; named tiles are unaffected; the
// sweep's announcement names the tiles that assume constant weights.
func TestSweepConstWeights(t *testing.T) {
	fam := fakeFamily()
	fam.ConstWeights = []string{"32", "8"} // 8 is the reference: added once
	fam.AssumesConstWeights = func(p kernel.Params) bool { return p["TM"] == 32 }
	tiles := func(cs []JobCandidate) string {
		var n []string
		for _, c := range cs {
			n = append(n, c.Tile)
		}
		return strings.Join(n, ",")
	}
	for _, c := range []struct {
		tiles []string
		cw    bool
		want  string
	}{{nil, false, "8,4,16"}, {nil, true, "8,4,16,32"}, {[]string{"4"}, true, "8,4"}} {
		cs, err := CandidatesFor([]*kernel.Family{fam}, c.tiles, c.cw)
		if err != nil {
			t.Fatal(err)
		}
		if got := tiles(cs); got != c.want {
			t.Errorf("tiles %v, const %v: %s, want %s", c.tiles, c.cw, got, c.want)
		}
		note := AssumesNote([]*kernel.Family{fam}, cs)
		if strings.Contains(c.want, "32") != strings.Contains(note, ": 32") {
			t.Errorf("tiles %v, const %v: note %q", c.tiles, c.cw, note)
		}
	}
	for _, cw := range []bool{false, true} {
		cfg := testConfig()
		cfg.Families = []*kernel.Family{fam}
		cfg.ConstWeights = cw
		st := openStore(t)
		if _, err := Sweep(context.Background(), cfg, NewLocal(func(context.Context) (backendT, error) { return newFake(), nil }, nil), st, nil); err != nil {
			t.Fatal(err)
		}
		s := statuses(t, st)
		if _, ok := s["a/09/32"]; ok != cw {
			t.Errorf("ConstWeights %v: tile 32 swept %v (%v)", cw, ok, s)
		}
		if cw && s["b/17/32"] != result.OK {
			t.Errorf("tile 32 in b/17: %v", s["b/17/32"])
		}
	}
}
