package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/tilefit/tilefit/result"
)

// BenchName is the base name of the benchmark lines Benchfmt writes.
const BenchName = "Tilefit"

// Benchfmt writes the report in the Go benchmark format
// (golang.org/x/perf/benchfmt), so that benchstat compares two tilefit
// runs: one result line per stored sample of every OK candidate (the
// latest outcome of each tile in each cell),
//
//	BenchmarkTilefit/shape=Wout/n=2560/k=6144/m=256/op=gemm_f16/tile=64_128_2 8 89281780 ns/op 90.2 GFLOP/s
//
// with the cell (shape, N, K, M, operator) and the tile as name keys, the
// dispatches per sample as the iteration count, the sample as ns/op and the
// operator's rate as GFLOP/s. A '/' in a tile name (family/tile) is written
// ':', white space and '=' in a value '_'.
//
// File configuration lines (backend, operator, types) precede the results
// of each provenance; a provenance of the same backend, operator and types
// as an earlier one in the same output adds its key as "prov" so that the
// two stay apart. The rest of a provenance (device, compiler, family, source
// hash) is in a line that benchfmt readers skip. Compare two runs with
//
//	benchstat old.txt new.txt
func Benchfmt(w io.Writer, in Input) error {
	bw := benchfmt.NewWriter(w)
	fail := func(err error) error { return fmt.Errorf("write benchfmt report: %w", err) }
	if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: "GFLOP/s", Key: "better"},
		OrigUnit: "GFLOP/s", Value: "higher"}); err != nil {
		return fail(err)
	}
	seen := map[string]bool{}
	for _, sec := range build(in).Provenances {
		pv := sec.Provenance
		group := pv.Backend + "\x00" + pv.Operator + "\x00" + pv.Types
		cfg := func(k, v string) benchfmt.Config { return benchfmt.Config{Key: k, Value: []byte(v), File: true} }
		res := &benchfmt.Result{Config: []benchfmt.Config{cfg("backend", pv.Backend), cfg("operator", pv.Operator), cfg("types", pv.Types)}}
		if seen[group] {
			res.Config = append(res.Config, cfg("prov", sec.Key))
		}
		seen[group] = true
		if _, err := fmt.Fprintf(w, "\ntilefit provenance %s — device %s; arch %s; compiler %s; flags %s; driver %s; family %s; source %s; reference tile %s\n",
			sec.Key, pv.Device, pv.Arch, pv.Compiler, pv.Flags, orDash(pv.Driver), pv.Family, short(pv.SourceHash, 12), sec.Reference); err != nil {
			return fail(err)
		}
		for _, c := range sec.Cells {
			for _, cand := range c.Candidates {
				if cand.Status != result.OK {
					continue
				}
				name := benchKeys(c, cand.Tile, pv.Operator)
				iters := max(cand.Dispatches, 1)
				for _, us := range cand.SamplesUs {
					if !us.valid() || us <= 0 {
						continue
					}
					res.Name = []byte(name)
					res.Iters = iters
					res.Values = []benchfmt.Value{{Value: roundSig(float64(us)*1e3, 12), Unit: "ns/op"}} // 4.078 µs × 1e3 is 4078.0000000000005 in binary
					if c.FLOPs > 0 {
						res.Values = append(res.Values, benchfmt.Value{Value: roundSig(c.FLOPs/(float64(us)*1e3), 6), Unit: "GFLOP/s"})
					}
					if err := bw.Write(res); err != nil {
						return fail(err)
					}
				}
			}
		}
	}
	return nil
}

// benchKeys is the benchmark name (without "Benchmark") of tile in cell c.
func benchKeys(c Cell, tile, op string) string {
	var b strings.Builder
	b.WriteString(BenchName)
	key := func(k, v string) { b.WriteString("/" + k + "=" + benchValue(v)) }
	key("shape", c.Shape)
	if c.N > 0 {
		key("n", strconv.Itoa(c.N))
	}
	if c.K > 0 {
		key("k", strconv.Itoa(c.K))
	}
	key("m", strconv.Itoa(c.M))
	key("op", op)
	key("tile", tile)
	return b.String()
}

// benchValue makes v a name-key value: no white space, '/' or '='; a
// trailing "-N" (which benchfmt reads as GOMAXPROCS) loses its dash.
func benchValue(v string) string {
	v = strings.Map(func(r rune) rune {
		switch {
		case r == '/':
			return ':'
		case r == '=' || r == ' ' || r == '\t' || r == '\n' || r == '\r':
			return '_'
		}
		return r
	}, v)
	if i := strings.LastIndexByte(v, '-'); i >= 0 && i+1 < len(v) {
		if _, err := strconv.Atoi(v[i+1:]); err == nil {
			v = v[:i] + "_" + v[i+1:]
		}
	}
	if v == "" {
		v = "_"
	}
	return v
}

// roundSig rounds x to n significant digits (a shorter line, the same
// comparison).
func roundSig(x float64, n int) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', n, 64), 64)
	return f
}
