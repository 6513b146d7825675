package builtin

import (
	"flag"
	. "github.com/tilefit/tilefit/kernel"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated section of wgmma_core.cuh")

// TestWgmmaOpsUpToDate: the wgmma wrappers in wgmma_core.cuh are what
// wgmmaOps generates (run with -update to rewrite them).
func TestWgmmaOpsUpToDate(t *testing.T) {
	const path = "src/cuda/wgmma_core.cuh"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, ok := spliceWgmmaOps(string(src), wgmmaOps())
	if !ok {
		t.Fatalf("%s lacks the generated-section markers", path)
	}
	if want == string(src) {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s; rebuild to embed it", path)
		return
	}
	t.Errorf("%s: generated wgmma wrappers are stale; run go test ./builtin -run TestWgmmaOpsUpToDate -update", path)
}

// TestWgmmaOps: one wrapper per N = 8..256, each with N/2 accumulator
// operands and the two descriptors after them.
func TestWgmmaOps(t *testing.T) {
	ops := wgmmaOps()
	if n := strings.Count(ops, "__device__ __forceinline__ void wgmma("); n != 32 {
		t.Fatalf("%d wrappers, want 32", n)
	}
	for _, n := range []int{8, 128, 256} {
		sec := ops[strings.Index(ops, "m64n"+itoa(n)+"k16"):]
		sec = sec[:strings.Index(sec, "#endif")]
		if c := strings.Count(sec, `"+f"`); c != n/2 {
			t.Errorf("N %d: %d accumulator operands, want %d", n, c, n/2)
		}
		if !strings.Contains(sec, "%"+itoa(n/2)+", %"+itoa(n/2+1)+", 1, 1, 1, 0, 0;") {
			t.Errorf("N %d: descriptors are not operands %d and %d:\n%s", n, n/2, n/2+1, sec)
		}
	}
}

func itoa(v int) string {
	const d = "0123456789"
	if v < 10 {
		return d[v : v+1]
	}
	return itoa(v/10) + d[v%10:v%10+1]
}

// TestWgmmaSpace: the default sweep is valid, names round-trip, and the
// restrictions refuse what the source's static_asserts refuse.
func TestWgmmaSpace(t *testing.T) {
	fam := CUDAGemmWgmma()
	tiles := fam.Tiles()
	if len(tiles) < 3 {
		t.Fatalf("%d tiles: %v", len(tiles), tiles)
	}
	for _, p := range fam.Space() {
		name := fam.TileName(p)
		q, err := fam.ParseTile(name)
		if err != nil || q.String() != p.String() {
			t.Errorf("tile %s: round trip gives %v, %v", name, q, err)
		}
		if b := WgmmaSharedBytes(p); b > CUDAMaxSharedBytes {
			t.Errorf("tile %s: %d bytes of shared memory", name, b)
		}
	}
	if _, err := fam.ParseTile(fam.Reference); err != nil {
		t.Errorf("reference: %v", err)
	}
	for tile, why := range map[string]string{
		"128_256_1":           "accumulators",
		"256_256_2":           "accumulators",
		"64_128_2":            "multiple of 64·CONSUMERS",
		"128_256_2.stages5":   "shared memory",
		"128_100_2":           "BN",
		"256_128_2.pingpong1": "accumulators",
		"128_128_1.pingpong1": "PINGPONG needs CONSUMERS = 2",
	} {
		_, err := fam.ParseTile(tile)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("tile %s: error %v, want one mentioning %q", tile, err, why)
		}
	}
	for _, ok := range []string{"128_256_2", "128_256_2.stages4", "256_128_2", "64_256_1", "128_128_1", "128_192_2.stages5", "128_128_2.stages6", "128_168_2.raster1.group4", "128_128_2.pingpong1", "64_256_2.pingpong1", "64_48_1.stages15"} {
		if _, err := fam.ParseTile(ok); err != nil {
			t.Errorf("tile %s: %v", ok, err)
		}
	}
	p, _ := fam.ParseTile("128_256_2")
	if got, want := WgmmaSharedBytes(p), 4*(128+256)*128+256+1024; got != want {
		t.Errorf("shared bytes %d, want %d", got, want)
	}
	if WgmmaThreads(p) != 384 {
		t.Errorf("threads %d, want 384", WgmmaThreads(p))
	}
}

// TestWgmmaPlan: the launch shape, the tensor maps and the refusal of K
// that is not a multiple of 8.
func TestWgmmaPlan(t *testing.T) {
	fam := CUDAGemmWgmma()
	p, err := fam.ParseTile("128_192_2")
	if err != nil {
		t.Fatal(err)
	}
	pl, err := fam.Plan(p, Dims{"M": 1983, "N": 324, "K": 10240})
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Launches) != 1 {
		t.Fatalf("%d launches", len(pl.Launches))
	}
	l := pl.Launches[0]
	// 16 tile rows × 2 tile columns = 32 tiles < 132: one CTA per tile.
	if l.Entry != WgmmaEntry || l.Grid != [3]int{32, 1, 1} || l.Block != [3]int{384, 1, 1} || l.Shared != WgmmaSharedBytes(p) {
		t.Errorf("launch %+v", l)
	}
	if len(l.Args) != 6 || l.Args[0].Kind != ArgTensorMap || l.Args[1].Kind != ArgTensorMap || l.Args[2].Kind != ArgOperand || l.Args[2].Name != "Y" {
		t.Fatalf("args %+v", l.Args)
	}
	for i, a := range l.Args[3:] {
		if a.Kind != ArgDim || a.Name != []string{"M", "N", "K"}[i] {
			t.Errorf("arg %d: %+v", 3+i, a)
		}
	}
	x, w := l.Args[0].Map, l.Args[1].Map
	if x.Buffer != "X" || x.DType != F16 || x.Dims[0] != 10240 || x.Dims[1] != 1983 || x.Strides[0] != 20480 || x.Box[0] != 64 || x.Box[1] != 128 || x.Swizzle != 3 {
		t.Errorf("X map %+v", x)
	}
	if w.Buffer != "W" || w.Dims[1] != 324 || w.Box[1] != 192 || w.Swizzle != 3 {
		t.Errorf("W map %+v", w)
	}
	// A big output: the persistent grid is GRID CTAs.
	pl, err = fam.Plan(p, Dims{"M": 8192, "N": 8192, "K": 8192})
	if err != nil || pl.Launches[0].Grid[0] != 132 {
		t.Errorf("8192³: grid %v, %v", pl.Launches[0].Grid, err)
	}
	q := p.Clone()
	q["GRID"] = 0
	pl, err = fam.Plan(q, Dims{"M": 8192, "N": 8192, "K": 8192})
	if err != nil || pl.Launches[0].Grid[0] != 64*43 {
		t.Errorf("8192³ GRID 0: grid %v, %v", pl.Launches[0].Grid, err)
	}
	if _, err := fam.Plan(p, Dims{"M": 37, "N": 48, "K": 100}); err == nil || !strings.Contains(err.Error(), "K % 8 == 0") {
		t.Errorf("K 100: %v, want a K %% 8 refusal", err)
	}
}

// TestWgmmaStagesAuto: STAGES 0 takes as many stages as fit in 227 KiB
// (at most 15), an explicit STAGES is kept.
func TestWgmmaStagesAuto(t *testing.T) {
	fam := CUDAGemmWgmma()
	for tile, want := range map[string]int{"128_256_2": 4, "128_128_2": 7, "64_48_1": 15, "64_64_1": 14, "128_192_2": 5, "128_128_2.stages3": 3} {
		p, err := fam.ParseTile(tile)
		if err != nil {
			t.Fatal(err)
		}
		if got := WgmmaStages(p); got != want {
			t.Errorf("%s: %d stages, want %d", tile, got, want)
		}
		if b := WgmmaSharedBytes(p); b > CUDAMaxSharedBytes {
			t.Errorf("%s: %d bytes", tile, b)
		}
	}
}

// TestWgmmaRegistered: the built-in registry carries gemm_wgmma for the
// gemm_f16 operator on cuda, in gemm_f16's numerics class.
func TestWgmmaRegistered(t *testing.T) {
	f, err := New().Lookup("cuda", "gemm_wgmma")
	if err != nil {
		t.Fatal(err)
	}
	if f.Operator == nil || f.Operator.Name != "gemm_f16" {
		t.Fatalf("operator %+v", f.Operator)
	}
	ref, _ := f.ParseTile(f.Reference)
	if f.Numerics == nil {
		t.Fatal("no numerics class")
	}
	if c := f.Numerics(ref); c != CUDAGemmF16().Name {
		t.Errorf("numerics class %q, want %q", c, CUDAGemmF16().Name)
	}
	if f.Operator.Signature() != CUDAGemmF16().Operator.Signature() {
		t.Errorf("signature %s differs from gemm_f16's %s", f.Operator.Signature(), CUDAGemmF16().Operator.Signature())
	}
}

// TestWgmmaSplitKPlan: KSPLIT > 0 plans the partials into scratch P and a
// reduce launch over S chunks; the class names the chunk; M does not enter
// the class or the chunking.
func TestWgmmaSplitKPlan(t *testing.T) {
	fam := CUDAGemmWgmma()
	p, err := fam.ParseTile("64_48_1.ksplit16")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []int{1, 256, 1983} {
		pl, err := fam.Plan(p, Dims{"M": m, "N": 324, "K": 10240})
		if err != nil {
			t.Fatal(err)
		}
		if len(pl.Launches) != 2 || len(pl.Scratch) != 1 {
			t.Fatalf("M %d: plan %+v", m, pl)
		}
		sc := pl.Scratch[0]
		if sc.Name != "P" || sc.DType != F32 || sc.Elems != 10*m*324 {
			t.Errorf("M %d: scratch %+v, want P of 10·M·N fp32", m, sc)
		}
		k0, r := pl.Launches[0], pl.Launches[1]
		if k0.Args[2].Kind != ArgScratch || k0.Args[2].Name != "P" {
			t.Errorf("M %d: partials go to %+v", m, k0.Args[2])
		}
		units := ((m + 63) / 64) * 7 * 10
		if k0.Grid[0] != min(units, 132) {
			t.Errorf("M %d: grid %d, want min(%d units, 132)", m, k0.Grid[0], units)
		}
		if r.Entry != WgmmaReduceEntry || r.Args[0].Name != "P" || r.Args[1].Name != "Y" || r.Args[4].Kind != ArgInt || r.Args[4].Value != 10 {
			t.Errorf("M %d: reduce %+v", m, r)
		}
	}
	if c := WgmmaNumerics(p); c != "gemm_f16/splitk1024" {
		t.Errorf("class %q", c)
	}
	q, _ := fam.ParseTile("128_128_2.ksplit16")
	if WgmmaNumerics(q) != WgmmaNumerics(p) {
		t.Error("tiles of one chunk size in different classes")
	}
	r, _ := fam.ParseTile("64_48_1.ksplit40")
	if WgmmaNumerics(r) == WgmmaNumerics(p) || WgmmaNumerics(r) == WgmmaNumericsClass {
		t.Errorf("KSPLIT 40 class %q", WgmmaNumerics(r))
	}
	if WgmmaChunks(p, 72) != 1 || WgmmaChunks(p, 1024) != 1 || WgmmaChunks(p, 1032) != 2 {
		t.Errorf("chunks %d %d %d", WgmmaChunks(p, 72), WgmmaChunks(p, 1024), WgmmaChunks(p, 1032))
	}
}
