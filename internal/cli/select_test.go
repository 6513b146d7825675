package cli

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
)

// selProv is the fixture sweep's provenance; its source hash is fixed so
// that the golden files do not change with the kernel source.
var selProv = result.Provenance{Backend: "cpu", Device: "fixture cpu (2 cores)", Arch: "x86_64 avx2 fma f16c",
	Compiler: "cc (fixture) 1.0", Flags: "-O3", Family: "gemm_f16", SourceHash: strings.Repeat("5e", 32), Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}

// selDrift multiplies both samples of a round alike (±30 %); selNoise is a
// sample's own ±0.4 %.
func selDrift(i int) float64 { return 1 + 0.3*math.Sin(float64(i)*1.7) }

func selNoise(i int, salt string) float64 {
	h := fnv.New32a()
	h.Write([]byte(salt))
	return 0.004 * math.Cos(float64(i)*2.3+float64(h.Sum32()%1000))
}

// selCand is a fixture candidate with its true µs per call.
type selCand struct {
	tile   string
	us     float64
	status result.Status
	vendor bool
	aa     bool
}

func selCell(shape string, n, k, m, calls int, cands ...selCand) result.CellResult {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(m) * time.Second)
	c := result.CellResult{Prov: selProv, Cell: result.Cell{Shape: shape, N: n, K: k, M: m, Calls: calls}, Reference: "64_128_2",
		Seed: 1, Rounds: 12, Sets: 4, Started: t0, Finished: t0.Add(2 * time.Second)}
	for _, s := range cands {
		st := s.status
		if st == "" {
			st = result.OK
		}
		cand := result.Candidate{Tile: s.tile, Vendor: s.vendor, AA: s.aa, Status: st, Bitwise: st == result.OK && !s.vendor, Dispatches: 8}
		if st == result.OK {
			cand.Samples = make([]float64, 12)
			for i := range cand.Samples {
				cand.Samples[i] = s.us * selDrift(i) * (1 + selNoise(i, fmt.Sprint(shape, m, s.tile)))
			}
		} else {
			cand.Detail = "differs from 64_128_2: element [3,5]"
		}
		c.Candidates = append(c.Candidates, cand)
	}
	return c
}

// selFixture is a hand-written sweep of three strata shapes at five M:
//
//   - Wout: the reference is fastest up to M 1024, 128_64_2 from M 1983
//     (confirmed 18 % faster): a threshold between the measured 1024 and
//     1983, placed at 1983 (the baseline keeps the gap); a faster tile that
//     failed parity is not admitted.
//   - Walbe: 16_64_1 confirmed faster at M 256 and 512, 32_64_1 from 1024:
//     two departures, the threshold at their midpoint 768.
//   - Wsg: 16_32_1 looks 3 % faster in the sweep everywhere, but the
//     confirmation finds 0.4 % (inside the noise: baseline kept) and at M
//     2048 1.5 % slower (the winner's curse: baseline kept).
//
// The vendor is in every cell, faster in some: shown beside, never chosen.
// M 512 was swept twice (a resumed sweep added 32_64_1 later).
func selFixture() ([]result.CellResult, map[string]float64) {
	ms := []int{256, 512, 1024, 1983, 2048}
	confirm := map[string]float64{}
	var cells []result.CellResult
	for _, m := range ms {
		u := float64(m) / 8
		wout := []selCand{{tile: "64_128_2", us: u}, {tile: "128_64_2", us: u * 1.08}, {tile: "openblas", us: u * 0.9, vendor: true}}
		if m >= 1983 {
			wout[1].us = u * 0.8
			confirm[fmt.Sprintf("Wout/%d/64_128_2/128_64_2", m)] = 0.82
		}
		if m == 256 {
			wout = append(wout, selCand{tile: "32_128_2", us: u * 0.5, status: result.ParityFailed}, selCand{tile: "64_128_2~aa", us: u, aa: true})
		}
		cells = append(cells, selCell("Wout", 2560, 6144, m, 48, wout...))

		win, lose := "16_64_1", "32_64_1"
		if m >= 1024 {
			win, lose = lose, win
		}
		if m == 512 {
			cells = append(cells, selCell("Walbe", 48, 2560, m, 72, selCand{tile: "64_128_2", us: u * 1.02}, selCand{tile: win, us: u * 0.75}))
			// A resumed run of the cell: it started later (a cell's identity
			// includes its start, unique in the store).
			resumed := selCell("Walbe", 48, 2560, m, 72, selCand{tile: "64_128_2", us: u}, selCand{tile: lose, us: u * 0.85},
				selCand{tile: "openblas", us: u * 1.2, vendor: true})
			resumed.Started, resumed.Finished = resumed.Started.Add(time.Millisecond), resumed.Finished.Add(time.Millisecond)
			cells = append(cells, resumed)
		} else {
			cells = append(cells, selCell("Walbe", 48, 2560, m, 72, selCand{tile: "64_128_2", us: u}, selCand{tile: win, us: u * 0.7},
				selCand{tile: lose, us: u * 0.85}, selCand{tile: "openblas", us: u * 1.2, vendor: true}))
		}
		confirm[fmt.Sprintf("Walbe/%d/64_128_2/%s", m, win)] = 0.74

		cells = append(cells, selCell("Wsg", 1, 2560, m, 48, selCand{tile: "64_128_2", us: u / 10}, selCand{tile: "16_32_1", us: u / 10 * 0.97},
			selCand{tile: "openblas", us: u / 10 * 0.6, vendor: true}))
		r := 0.996
		if m == 2048 {
			r = 1.015
		}
		confirm[fmt.Sprintf("Wsg/%d/64_128_2/16_32_1", m)] = r
	}
	return cells, confirm
}

// selConfirmer returns a confirmer factory serving fixture samples with the
// true ratios of ratios, recording each confirmation asked for.
func selConfirmer(ratios map[string]float64, asked *[]string) confirmerFactory {
	return func(ctx context.Context, f *selectFlags, fams []*kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error) {
		return func(ctx context.Context, cell result.Cell, baseline, cand policy.Tile) (policy.Confirmation, error) {
			key := fmt.Sprintf("%s/%d/%s/%s", cell.Shape, cell.M, baseline.Name, cand.Name)
			*asked = append(*asked, key)
			r, ok := ratios[key]
			if !ok {
				return policy.Confirmation{}, fmt.Errorf("no fixture confirmation for %s", key)
			}
			base := float64(cell.M) / 8
			if cell.Shape == "Wsg" {
				base /= 10
			}
			a, b := make([]float64, 12), make([]float64, 12)
			for i := range a {
				a[i] = base * selDrift(i+3) * (1 + selNoise(i, key+"/a"))
				b[i] = base * r * selDrift(i+3) * (1 + selNoise(i, key+"/b"))
			}
			return policy.Confirmation{A: a, B: b, Bitwise: true}, nil
		}, func() {}, nil
	}
}

// selDB writes the fixture into a new database in dir.
func selDB(t *testing.T, dir string) string {
	t.Helper()
	db := filepath.Join(dir, "fixture.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cells, _ := selFixture()
	for _, c := range cells {
		if _, err := st.SaveCell(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// selParse parses select's flags as the verb does.
func selParse(t *testing.T, args ...string) *selectFlags {
	t.Helper()
	fs := newFlags("select", selectUsage, io.Discard)
	var f selectFlags
	f.register(fs)
	if err := parse(fs, args); err != nil {
		t.Fatal(err)
	}
	f.given(fs)
	return &f
}

// selGolden compares got with testdata/name (-update rewrites it).
func selGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cli -run TestSelect -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is out of date (go test ./internal/cli -run TestSelect -update); got:\n%s", path, got)
	}
}

// TestSelectFixture is the acceptance test: select on a fixture
// sweep with injected confirmation samples gives the golden policy, with a
// threshold between two measured M values and cells kept at the baseline
// because their gain was inside the noise.
func TestSelectFixture(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)
	out := filepath.Join(dir, "policy.json")
	emitDir := filepath.Join(dir, "sel")
	// The injected confirmations are 12 fixed rounds: judged as such.
	f := selParse(t, "--db", db, "--policy-out", out, "--emit", "go,c,json", "--emit-dir", emitDir, "--rounds", "12")
	_, ratios := selFixture()
	var asked []string
	var stdout, stderr bytes.Buffer
	if err := runSelect(testCtx(), f, selConfirmer(ratios, &asked), &stdout, &stderr); err != nil {
		t.Fatalf("select: %v\n%s", err, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	selGolden(t, "select_fixture.policy.json", data)
	selGolden(t, "select_fixture.md", stdout.Bytes())

	p, err := policy.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	rules := func(shape string) []policy.Rule { return p.Shape(shape).Rules }
	if got, want := rules("Wout"), []policy.Rule{{Tile: "64_128_2", Below: 1983}, {Tile: "128_64_2"}}; !slices.Equal(got, want) {
		t.Errorf("Wout rules %+v; want %+v (threshold between the measured 1024 and 1983)", got, want)
	}
	if got, want := rules("Walbe"), []policy.Rule{{Tile: "16_64_1", Below: 768}, {Tile: "32_64_1"}}; !slices.Equal(got, want) {
		t.Errorf("Walbe rules %+v; want %+v", got, want)
	}
	if got, want := rules("Wsg"), []policy.Rule{{Tile: "64_128_2"}}; !slices.Equal(got, want) {
		t.Errorf("Wsg rules %+v; want %+v (gain inside the noise)", got, want)
	}
	for _, d := range p.Cells {
		switch {
		case d.Shape == "Wsg" && d.M < 2048:
			if d.Verdict != "tie" || d.Chosen != "64_128_2" || !d.Confirmed || d.SweepRatio > 0.98 {
				t.Errorf("Wsg M=%d: %+v; want a confirmed tie kept at the baseline", d.M, d)
			}
		case d.Shape == "Wsg":
			if d.Verdict != "slower" || d.Chosen != "64_128_2" {
				t.Errorf("Wsg M=2048: %+v; want slower, kept", d)
			}
		case d.Shape == "Wout" && d.M == 256:
			if d.Best != "64_128_2" || d.Vendor != "openblas" {
				t.Errorf("Wout M=256: parity failure or vendor admitted: %+v", d)
			}
		}
	}
	// One confirmation per cell whose winner is not the baseline.
	if len(asked) != 2+5+5 {
		t.Errorf("confirmations asked: %d %v; want 12", len(asked), asked)
	}
	for _, name := range []string{"select.go", "parity.go", "select_test.go", "tilefit_select.h", "tilefit_select_parity.h", "tileselect.json", "tileselect_parity.json"} {
		if _, err := os.Stat(filepath.Join(emitDir, name)); err != nil {
			t.Errorf("not emitted: %v", err)
		}
	}

	// The same command again gives the same bytes (deterministic).
	f2 := selParse(t, "--db", db, "--policy-out", out+"2", "--format", "json", "--rounds", "12")
	var again bytes.Buffer
	if err := runSelect(testCtx(), f2, selConfirmer(ratios, new([]string)), &again, io.Discard); err != nil {
		t.Fatal(err)
	}
	if data2, _ := os.ReadFile(out + "2"); !bytes.Equal(data, data2) || !bytes.Equal(data, again.Bytes()) {
		t.Error("select is not deterministic")
	}

	// tilefit report --policy appends the decision table.
	code, rep, errOut := abRun(t, "report", "--db", db, "--policy", out)
	if code != 0 || !strings.Contains(rep, "## Tile policy: gemm_f16 on cpu") || !strings.Contains(rep, "### Per-chunk totals, baseline vs policy") {
		t.Errorf("report --policy: exit %d, stderr %s, output:\n%s", code, errOut, rep)
	}
	if code, _, errOut := abRun(t, "report", "--db", db, "--policy", out, "--format", "json"); code != ExitUsage || !strings.Contains(errOut, "--format md") {
		t.Errorf("report --policy --format json: exit %d, %s", code, errOut)
	}

	// A second select with this policy as the baseline keeps every choice
	// and confirms nothing new where the baseline is already the winner.
	asked = nil
	f3 := selParse(t, "--db", db, "--policy-out", "", "--baseline", out, "--format", "json")
	var third bytes.Buffer
	if err := runSelect(testCtx(), f3, selConfirmer(ratios, &asked), &third, io.Discard); err != nil {
		t.Fatal(err)
	}
	p3, err := policy.Parse(third.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range p3.Cells {
		if tile, _ := p.Lookup(d.Shape, d.M); d.Baseline != tile {
			t.Errorf("%s M=%d: baseline %s; want the policy's %s", d.Shape, d.M, d.Baseline, tile)
		}
	}
}

func TestSelectNoConfirm(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)
	f := selParse(t, "--db", db, "--policy-out", "", "--confirm=false", "--workload", filepath.Join(dir, "w.yaml"))
	os.WriteFile(filepath.Join(dir, "w.yaml"), []byte("name: two\nm: [256, 1983]\nshapes:\n  - {name: Wout, n: 2560, k: 6144, calls: 10}\n"), 0o644)
	var stdout bytes.Buffer
	if err := runSelect(testCtx(), f, nil, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{"workload two", "### Wout (N 2560, K 6144, 10 calls per chunk)", "Rules: `64_128_2` for M < 1983, `128_64_2` otherwise.",
		"faster (sweep)", "not re-measured", "verdicts from the sweep's own paired samples"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Walbe") {
		t.Error("--workload did not restrict the shapes")
	}
}

func TestSelectBadInput(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)
	emptyDB := filepath.Join(dir, "empty.db")
	st, err := store.Open(context.Background(), emptyDB)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	wrong := filepath.Join(dir, "wrong.json")
	os.WriteFile(wrong, []byte(`{"version": 1, "family": "gemm_f16", "backend": "cuda", "baseline": "", "default": "64_128_4", "shapes": []}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"select", "--db", filepath.Join(dir, "none.db")}, "none.db does not exist"},
		{[]string{"select", "--db", emptyDB}, "no swept cells of any family on cpu"},
		{[]string{"select", "--db", emptyDB, "--family", "gemm_f16"}, "no swept cells of family gemm_f16 on cpu"},
		{[]string{"select", "--db", db, "--backend", "cuda", "--family", "gemm_f16,gemm_wgmma"}, "no swept cells of family gemm_f16,gemm_wgmma on cuda"},
		{[]string{"select", "--db", db, "--family", "gemm_f16,"}, "--family: item 2"},
		{[]string{"select", "--db", db, "--provenance", "0123456789abcdef"}, "with provenance 0123456789abcdef"},
		{[]string{"select", "--db", db, "--emit", "rust"}, `--emit: unknown kind "rust"`},
		{[]string{"select", "--db", db, "--baseline", wrong}, "is for family gemm_f16 on cuda"},
		{[]string{"select", "--db", db, "--baseline", filepath.Join(dir, "nope.json")}, "--baseline: policy file " + filepath.Join(dir, "nope.json") + " does not exist"},
		{[]string{"select", "--db", db, "--format", "yaml"}, "--format"},
		{[]string{"select", "--db", db, "--max-rules", "-1"}, "--max-rules"},
		{[]string{"select", "--db", db, "--family", "gemm_f64"}, "unknown family"},
		// The fixture's sweep ran an edited source on another machine.
		{[]string{"select", "--db", db, "--policy-out", ""}, "--confirm=false"},
		{[]string{"select", "--db", db, "--policy-out", "", "--isolate=false", "--source", filepath.Join(dir, "wrong.json")}, "is not the source the sweep ran"},
	} {
		code, _, stderr := abRun(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("tilefit %s: exit %d, stderr %q; want 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}

// TestSelectMultiFamily: select on a sweep of both CUDA families of
// gemm_f16 (mma.sync and wgmma, one numerics class, plus wgmma's split-K
// class): a tile of the second family wins Wout from M 1024; hc_read moves
// as a whole to the split-K class (its total confirmed faster); a tile
// whose rows changed with M is left out; the emitted selector states the
// class per shape and that it is batch-invariant.
func TestSelectMultiFamily(t *testing.T) {
	mma, wg := builtin.CUDAGemmF16(), builtin.CUDAGemmWgmma()
	prov := result.Provenance{Backend: "cuda", Device: "NVIDIA H200", Arch: "sm_90", Compiler: "nvrtc 13.0", Flags: "--gpu-architecture=sm_90a",
		Driver: "580", Family: "gemm_f16,gemm_wgmma", SourceHash: strings.Repeat("cd", 32), Operator: "gemm_f16", Types: "X=f16,W=f16,Y=f32"}
	type tc struct {
		fam  *kernel.Family
		tile string
		us   float64
		bad  string // a failure detail
	}
	name := func(f *kernel.Family, tile string) string {
		if f == wg {
			return "gemm_wgmma/" + tile
		}
		return tile
	}
	cell := func(shape string, n, k, m, calls int, cs ...tc) result.CellResult {
		t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(time.Duration(m) * time.Second)
		c := result.CellResult{Prov: prov, Cell: result.Cell{Shape: shape, N: n, K: k, M: m, Calls: calls, Op: "gemm_f16", Dims: kernel.Dims{"M": m, "N": n, "K": k}},
			Reference: mma.Reference, Seed: 1, Rounds: 12, Sets: 4, Started: t0, Finished: t0.Add(time.Second)}
		for _, x := range cs {
			p, err := x.fam.ParseTile(x.tile)
			if err != nil {
				t.Fatal(err)
			}
			cand := result.Candidate{Tile: name(x.fam, x.tile), Family: x.fam.Name, Params: p.String(), Status: result.OK, Dispatches: 8,
				Bitwise: x.fam.Numerics == nil || x.fam.Numerics(p) == "gemm_f16", Rows: []result.RowHashes{{Operand: "Y", Hashes: result.Hashes{1}}}}
			if x.bad != "" {
				cand.Status, cand.Detail, cand.Bitwise, cand.Rows = result.ParityFailed, x.bad, false, nil
			} else {
				cand.Samples = make([]float64, 12)
				for i := range cand.Samples {
					cand.Samples[i] = x.us * selDrift(i) * (1 + selNoise(i, fmt.Sprint(shape, m, x.tile)))
				}
			}
			c.Candidates = append(c.Candidates, cand)
		}
		c.Candidates = append(c.Candidates, result.Candidate{Tile: "cublas", Vendor: true, Status: result.OK, Dispatches: 8, Samples: []float64{50, 50, 50, 50, 50, 50}})
		return c
	}
	ratios := map[string]float64{}
	var cells []result.CellResult
	for _, m := range []int{256, 1024, 2048} {
		u := float64(m) / 8
		wout := []tc{{mma, mma.Reference, u, ""}, {wg, "128_256_2", u * 1.05, ""}, {mma, "64_128_4", u * 0.6, ""}}
		if m >= 1024 {
			wout[1].us = u * 0.7
			ratios[fmt.Sprintf("Wout/%d/%s/gemm_wgmma/128_256_2", m, mma.Reference)] = 0.72
		}
		if m == 2048 {
			wout[2].bad = "not batch-invariant: 2 of 1024 rows changed between M 256, 1024 and M=2048 (first: row 3 of Y at M=256 differs from M=2048)"
		}
		cells = append(cells, cell("Wout", 2560, 6144, m, 48, wout...))
		sk := "128_64_1.ksplit16"
		cells = append(cells, cell("hc_read", 324, 10240, m, 96, tc{mma, mma.Reference, u, ""}, tc{wg, "128_64_1", u * 0.95, ""}, tc{wg, sk, u * 0.5, ""}))
		ratios[fmt.Sprintf("hc_read/%d/%s/gemm_wgmma/%s", m, mma.Reference, sk)] = 0.52
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "multi.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cells {
		if _, err := st.SaveCell(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	for _, family := range []string{"gemm_f16,gemm_wgmma", "gemm_wgmma,gemm_f16", ""} {
		emitDir := filepath.Join(dir, "sel"+strings.ReplaceAll(family, ",", "_"))
		f := selParse(t, "--db", db, "--backend", "cuda", "--family", family, "--policy-out", "", "--format", "json", "--rounds", "12",
			"--emit", "go,c,cpp,json", "--emit-dir", emitDir)
		var asked []string
		var stdout, stderr bytes.Buffer
		if err := runSelect(testCtx(), f, selConfirmer(ratios, &asked), &stdout, &stderr); err != nil {
			t.Fatalf("--family %q: %v\n%s", family, err, stderr.String())
		}
		p, err := policy.Parse(stdout.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if p.Family != "gemm_f16,gemm_wgmma" || p.Default != mma.Reference || !slices.Equal(p.Dims, []string{"N", "K"}) {
			t.Errorf("family %q default %q dims %v", p.Family, p.Default, p.Dims)
		}
		wout, hc := p.Shape("Wout"), p.Shape("hc_read")
		if want := []policy.Rule{{Tile: mma.Reference, Below: 1024}, {Tile: "gemm_wgmma/128_256_2"}}; !slices.Equal(wout.Rules, want) || wout.Class != "gemm_f16" {
			t.Errorf("Wout %+v; want %+v in class gemm_f16", wout, want)
		}
		if want := []policy.Rule{{Tile: "gemm_wgmma/128_64_1.ksplit16"}}; !slices.Equal(hc.Rules, want) || hc.Class != "gemm_f16/splitk1024" {
			t.Errorf("hc_read %+v; want %+v in class gemm_f16/splitk1024", hc, want)
		}
		sk, ok := p.TileInfo("gemm_wgmma/128_64_1.ksplit16")
		if !ok || sk.Family != "gemm_wgmma" || sk.Params["KSPLIT"] != 16 || sk.Params["BN"] != 64 || sk.Class != "gemm_f16/splitk1024" {
			t.Errorf("split-K tile %+v", sk)
		}
		if ref, _ := p.TileInfo(mma.Reference); ref.Params["TM"] != 128 || ref.Params["WARPS"] != 4 || ref.Family != "gemm_f16" {
			t.Errorf("reference tile %+v", ref)
		}
		inv := p.Invariance
		if !inv.BatchInvariant || len(inv.Excluded) != 1 || inv.Excluded[0].Tile != "64_128_4" || !slices.Equal(inv.Checked, []string{"Wout", "hc_read"}) {
			t.Errorf("invariance %+v", inv)
		}
		for _, d := range p.Cells {
			if d.Best == "64_128_4" {
				t.Errorf("%s M=%d: the non-invariant 64_128_4 ranked best", d.Shape, d.M)
			}
		}
		src, err := os.ReadFile(filepath.Join(emitDir, "select.go"))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(src), "\n// ", " ")
		for _, want := range []string{"Policy for families gemm_f16,gemm_wgmma (operator gemm_f16) on backend cuda", "Batch-invariant: every shape uses tiles of one numerics class at every M",
			"Wout gemm_f16, hc_read gemm_f16/splitk1024", "Left out, their rows changed with M: 64_128_4 on Wout", "KSPLIT", "func SelectDims(n, k int, m int)"} {
			if !strings.Contains(text, want) {
				t.Errorf("select.go lacks %q", want)
			}
		}
		if _, err := os.Stat(filepath.Join(emitDir, "tilefit_select.hpp")); err != nil {
			t.Error(err)
		}
	}
}

// TestSwizzleScriptPolicies runs docs/results/h200-swizzle/h200-swizzle.sh with no GPU
// step: the variant policies it writes must load, name only tiles of the
// CUDA gemm_f16 family in the variant's block order, and keep the shipped
// policy's thresholds.
func TestSwizzleScriptPolicies(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not on PATH")
	}
	out := t.TempDir()
	cmd := exec.Command(bash, "docs/results/h200-swizzle/h200-swizzle.sh", out, "none")
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script: %v\n%s", err, b)
	}
	ctx := context.Background()
	shipped, _, err := readPolicy(ctx, filepath.Join("..", "..", "docs", "results", "h200-strata", "h200-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	fams := builtin.New().Of("cuda", "gemm_f16")[:1]
	for _, v := range []string{"swz1", "swz1.group2", "swz1.group16", "swz2", "swz2.group2", "swz3"} {
		p, _, err := readPolicy(ctx, filepath.Join(out, "policy-"+v+".json"))
		if err != nil {
			t.Fatal(err)
		}
		tiles, err := tune.PolicyTiles(p, fams)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		for name, tr := range tiles {
			if !strings.HasSuffix(name, "."+v) || tr.Name != name || tr.Params["SWZ"] == 0 {
				t.Errorf("%s: tile %s (%+v) is not in the variant's order", v, name, tr.Params)
			}
		}
		for i, s := range p.Shapes {
			for j, r := range s.Rules {
				if want := shipped.Shapes[i].Rules[j]; r.Below != want.Below || r.Tile != want.Tile+"."+v {
					t.Errorf("%s %s rule %d: %+v; want %+v in the variant's order", v, s.Shape, j, r, want)
				}
			}
		}
	}
}
