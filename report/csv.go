package report

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/result"
)

// A Tag is a column of the same value in every CSV row (CUTLASS profiler's
// --tags): the run's label, a machine, a branch.
type Tag struct{ Key, Value string }

// CSVOptions shape the CSV report.
type CSVOptions struct {
	// Tags become leading columns, in order.
	Tags []Tag
	// Header, when set, is the header of an existing file the rows are
	// appended to: rows follow its columns (a column of Header this report
	// has no value for is empty), and no header row is written. Every
	// column of this report must be among them (ErrCSVColumns otherwise).
	Header []string
}

// ErrCSVColumns: the rows cannot be appended under an existing header
// that lacks some of their columns.
var ErrCSVColumns = errors.New("columns differ")

// ErrCSVTag: a tag without a name, or with the name of another column.
var ErrCSVTag = errors.New("a tag needs a name of its own (not another tag's or a column's)")

// csvFixed are the columns every CSV report has, after the tags; the
// dimension columns (m, n, k and the operator's others) follow "types",
// the parameter columns follow "aa".
var (
	csvHead = []string{"Problem", "Provider", "Operation", "Status", "Disposition",
		"prov_key", "backend", "device", "family", "operator", "types", "shape"}
	csvMid  = []string{"calls", "aa", "bitwise"}
	csvTail = []string{"samples", "Runtime", "runtime_min_ms", "runtime_max_ms", "Bytes", "Flops", "Flops/Byte",
		"GB/s", "GFLOPs", "ratio_to_reference", "ratio_lo", "ratio_hi", "verdict", "max_err", "regs", "local_bytes", "smem_bytes",
		"rows_compared", "rows_changed"}
)

// CSV writes the report as CSV with the habits of CUTLASS's profiler: one
// row per cell × candidate (the latest outcome of every tile), one column
// per problem dimension (m, n, k first, then the operator's others, lower
// case) and per kernel parameter (TM, TN, …: empty for vendors), the
// runtime in ms, GB/s and GFLOP/s. The columns, in order:
//
//	Problem      the cell's index in the report (0, 1, …)
//	Provider     "tilefit" for a family tile, else the vendor library
//	Operation    the tile (or vendor) name
//	Status       ok, compile, parity, numeric, crashed, timeout, skipped
//	Disposition  passed (checked and equal: bitwise for tiles,
//	             numerically for vendors), failed (parity or numeric),
//	             not_verified (compile, crash, timeout, skipped)
//	prov_key … shape   the provenance and the workload's shape name
//	m, n, k, …   the dimensions
//	calls, aa, bitwise
//	TM, TN, …    the parameters
//	samples      finite samples
//	Runtime      median ms per call; runtime_min_ms, runtime_max_ms
//	Bytes, Flops, Flops/Byte   of one call (the operator's counts)
//	GB/s, GFLOPs at the median
//	ratio_to_reference, ratio_lo, ratio_hi, verdict   the paired comparison
//	             with the reference tile (the report's one estimator: the
//	             median per-round ratio, its interval and verdict)
//	max_err
//	regs, local_bytes, smem_bytes   kernel resources, where known
//	rows_compared, rows_changed   the batch-invariance check: this M's
//	             rows against the shape's largest M (empty when not compared)
//
// A field with no value is empty.
func CSV(w io.Writer, in Input) error { return CSVWith(w, in, CSVOptions{}) }

// CSVWith is CSV with tags, or appending under an existing header.
func CSVWith(w io.Writer, in Input, opts CSVOptions) error {
	doc := build(in)
	cols := csvColumns(doc, opts.Tags)
	for i, t := range opts.Tags {
		if t.Key == "" || slices.Contains(cols[i+1:], t.Key) {
			return fmt.Errorf("tag %q: %w", t.Key, ErrCSVTag)
		}
	}
	out := cols
	if opts.Header != nil {
		var missing []string
		for _, c := range cols {
			if !slices.Contains(opts.Header, c) && !slices.Contains(opts.Header, csvSafe(c)) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: the existing header lacks %s", ErrCSVColumns, strings.Join(missing, ", "))
		}
		out = opts.Header
	}
	pos := map[string]int{}
	for i, c := range out {
		if _, ok := pos[c]; !ok {
			pos[c] = i
		}
	}
	cw := csv.NewWriter(w)
	fail := func(err error) error { return fmt.Errorf("write CSV report: %w", err) }
	if opts.Header == nil {
		head := make([]string, len(out))
		for i, c := range out {
			head[i] = csvSafe(c)
		}
		if err := cw.Write(head); err != nil {
			return fail(err)
		}
	}
	problem := 0
	for _, sec := range doc.Provenances {
		pv := sec.Provenance
		for _, c := range sec.Cells {
			for _, cand := range c.Candidates {
				rec := make([]string, len(out))
				set := func(col, v string) {
					if i, ok := pos[col]; ok {
						rec[i] = csvSafe(v)
					}
				}
				for _, t := range opts.Tags {
					set(t.Key, t.Value)
				}
				provider := "tilefit"
				if cand.Vendor {
					provider = cand.Tile
				}
				set("Problem", strconv.Itoa(problem))
				set("Provider", provider)
				set("Operation", cand.Tile)
				set("Status", string(cand.Status))
				set("Disposition", disposition(cand))
				set("prov_key", sec.Key)
				set("backend", pv.Backend)
				set("device", pv.Device)
				set("family", pv.Family)
				set("operator", pv.Operator)
				set("types", pv.Types)
				set("shape", c.Shape)
				for d, v := range c.Dims {
					set(strings.ToLower(d), strconv.Itoa(v))
				}
				set("calls", strconv.Itoa(c.Calls))
				set("aa", strconv.FormatBool(cand.AA))
				set("bitwise", strconv.FormatBool(cand.Bitwise))
				for name, v := range parseParams(cand.Params) {
					set(paramColumn(name), v)
				}
				set("samples", strconv.Itoa(cand.Samples))
				set("Runtime", csvNum(cand.MedianUs/1000, 6))
				set("runtime_min_ms", csvNum(cand.MinUs/1000, 6))
				set("runtime_max_ms", csvNum(cand.MaxUs/1000, 6))
				if c.Bytes > 0 {
					set("Bytes", strconv.FormatFloat(c.Bytes, 'f', -1, 64))
					set("Flops/Byte", csvNum(num(c.FLOPs/c.Bytes), 3))
				}
				set("Flops", strconv.FormatFloat(c.FLOPs, 'f', -1, 64))
				set("GB/s", csvNum(gbps(&c, cand.MedianUs), 3))
				set("GFLOPs", csvNum(cand.GFLOPs, 3))
				set("ratio_to_reference", csvNum(cand.RatioToReference, 4))
				if o := cand.VsReference; o != nil {
					set("ratio_lo", csvNum(num(o.Lo), 4))
					set("ratio_hi", csvNum(num(o.Hi), 4))
					set("verdict", string(o.Verdict))
				}
				if cand.Status == result.OK {
					set("max_err", csvNum(cand.MaxErr, 4))
				}
				for _, k := range []string{result.ResRegs, result.ResLocalBytes, result.ResSharedBytes} {
					if v, ok := cand.Resources[k]; ok {
						set(k, strconv.Itoa(v))
					}
				}
				if v := cand.Invariance; v != nil {
					set("rows_compared", strconv.Itoa(v.Rows))
					set("rows_changed", strconv.Itoa(v.Changed))
				}
				if err := cw.Write(rec); err != nil {
					return fail(err)
				}
			}
			problem++
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fail(err)
	}
	return nil
}

// csvSafe neutralises a value a spreadsheet would run as a formula (one
// starting with =, +, -, @, a tab or a carriage return, such as a device
// name "=HYPERLINK(…)" from a database) by a leading apostrophe, which
// spreadsheets show as text; numbers ("-1.5", "+3") are left as they are.
func csvSafe(v string) string {
	if v == "" || !strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	return "'" + v
}

// csvColumns is the header of doc's CSV: the tags, the fixed columns, the
// dimensions and the parameters that occur.
func csvColumns(doc Document, tags []Tag) []string {
	var dims, params []string
	for _, sec := range doc.Provenances {
		for _, c := range sec.Cells {
			for d := range c.Dims {
				if d := strings.ToLower(d); !slices.Contains(dims, d) {
					dims = append(dims, d)
				}
			}
			for _, cand := range c.Candidates {
				for name := range parseParams(cand.Params) {
					if p := paramColumn(name); !slices.Contains(params, p) {
						params = append(params, p)
					}
				}
			}
		}
	}
	for _, d := range []string{"m", "n", "k"} {
		if !slices.Contains(dims, d) {
			dims = append(dims, d)
		}
	}
	// m, n, k first, then the others by name; parameters by name.
	rank := map[string]int{"m": 0, "n": 1, "k": 2}
	sort.Slice(dims, func(i, j int) bool {
		ri, oki := rank[dims[i]]
		rj, okj := rank[dims[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		}
		return dims[i] < dims[j]
	})
	sort.Strings(params)
	var cols []string
	for _, t := range tags {
		cols = append(cols, t.Key)
	}
	cols = append(cols, csvHead...)
	cols = append(cols, dims...)
	cols = append(cols, csvMid...)
	cols = append(cols, params...)
	return append(cols, csvTail...)
}

// CSVReserved reports whether name is a column every CSV report may have
// (a tag must not take its name).
func CSVReserved(name string) bool {
	return slices.Contains(csvHead, name) || slices.Contains(csvMid, name) || slices.Contains(csvTail, name) ||
		slices.Contains([]string{"m", "n", "k"}, name)
}

// paramColumn is the column of kernel parameter name: the name itself,
// unless it collides with a fixed or dimension column.
func paramColumn(name string) string {
	if CSVReserved(name) || strings.ToLower(name) == name {
		return "param_" + name
	}
	return name
}

// parseParams splits "TM=64,TN=128,THREADS=2" into name → value.
func parseParams(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if k, v, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" {
			out[k] = v
		}
	}
	return out
}

// disposition is CUTLASS's verdict column for a candidate.
func disposition(c Candidate) string {
	switch c.Status {
	case result.OK:
		return "passed"
	case result.ParityFailed, result.NumericFailed:
		return "failed"
	}
	return "not_verified"
}

func csvNum(x num, prec int) string {
	if !x.valid() {
		return ""
	}
	return strconv.FormatFloat(float64(x), 'f', prec, 64)
}
