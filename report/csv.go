package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// CSVHeader is the CSV report's header row.
var CSVHeader = []string{
	"shape", "n", "k", "m", "calls", "tile", "status", "bitwise",
	"median_us", "min_us", "max_us", "samples", "gflops",
	"vendor", "aa", "prov_key", "rows_compared", "rows_changed",
}

// CSV writes one row per cell × candidate (merged: the latest outcome of
// every tile), in report order, under CSVHeader. Times are µs per call with
// three decimals, gflops has two; a field with no value is empty. The last
// three columns but two tell vendor candidates and A/A twins apart and name
// the provenance key (see JSON's "key"); the last two are the batch-
// invariance check of the row (its rows compared with those of the
// shape's largest M, and how many changed; empty when not compared).
func CSV(w io.Writer, in Input) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("write CSV report: %w", err)
	}
	for _, sec := range build(in).Provenances {
		for _, c := range sec.Cells {
			for _, cand := range c.Candidates {
				rec := []string{
					c.Shape, strconv.Itoa(c.N), strconv.Itoa(c.K), strconv.Itoa(c.M), strconv.Itoa(c.Calls),
					cand.Tile, string(cand.Status), strconv.FormatBool(cand.Bitwise),
					csvNum(cand.MedianUs, 3), csvNum(cand.MinUs, 3), csvNum(cand.MaxUs, 3),
					strconv.Itoa(cand.Samples), csvNum(cand.GFLOPs, 2),
					strconv.FormatBool(cand.Vendor), strconv.FormatBool(cand.AA), sec.Key, "", "",
				}
				if v := cand.Invariance; v != nil {
					rec[len(rec)-2], rec[len(rec)-1] = strconv.Itoa(v.Rows), strconv.Itoa(v.Changed)
				}
				if err := cw.Write(rec); err != nil {
					return fmt.Errorf("write CSV report: %w", err)
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write CSV report: %w", err)
	}
	return nil
}

func csvNum(x num, prec int) string {
	if !x.valid() {
		return ""
	}
	return strconv.FormatFloat(float64(x), 'f', prec, 64)
}
