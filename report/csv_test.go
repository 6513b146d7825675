package report

import (
	"bytes"
	"encoding/csv"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/result"
)

func readCSV(t *testing.T, s string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, s)
	}
	return recs
}

func TestCSVTagsAndAppend(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	cand := ok("x", 2000, 2000, 4000)
	cand.Params = "TM=16,TN=64"
	cand.Resources = map[string]int{result.ResRegs: 40, result.ResLocalBytes: 0, result.ResSharedBytes: 1024}
	r := row("A", 4, t0, ok("ref", 1000, 1000, 1000), cand)
	r.Cell.Bytes = 1e6
	in := Input{Cells: []result.CellResult{r}}
	var b bytes.Buffer
	tags := []Tag{{"run", "nightly"}, {"host", "h200-a"}}
	if err := CSVWith(&b, in, CSVOptions{Tags: tags}); err != nil {
		t.Fatal(err)
	}
	recs := readCSV(t, b.String())
	head := recs[0]
	if head[0] != "run" || head[1] != "host" || head[2] != "Problem" {
		t.Fatalf("tags are not the leading columns: %v", head)
	}
	col := func(rec []string, name string) string {
		for i, h := range head {
			if h == name {
				return rec[i]
			}
		}
		t.Fatalf("no column %s in %v", name, head)
		return ""
	}
	x := recs[2]
	// One column per dimension and per parameter; ms, GB/s, GFLOP/s.
	for name, want := range map[string]string{
		"run": "nightly", "host": "h200-a", "Operation": "x", "Provider": "tilefit", "Disposition": "passed",
		"m": "4", "n": "10", "k": "20", "TM": "16", "TN": "64",
		"Runtime": "2.000000", "runtime_max_ms": "4.000000", "GB/s": "0.500", "GFLOPs": "0.001",
		"Bytes": "1000000", "Flops": "1600", "ratio_to_reference": "2.0000", "ratio_lo": "2.0000", "ratio_hi": "4.0000", "verdict": "undecided", "regs": "40", "smem_bytes": "1024",
	} {
		if got := col(x, name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := col(recs[1], "TM"); got != "" {
		t.Errorf("the reference has no TM parameter, got %q", got)
	}

	// Append under the same header: rows only.
	b.Reset()
	if err := CSVWith(&b, in, CSVOptions{Tags: tags, Header: head}); err != nil {
		t.Fatal(err)
	}
	if got := readCSV(t, b.String()); len(got) != 2 || got[0][0] != "nightly" {
		t.Errorf("appended rows: %v", got)
	}
	// Under a wider header (an earlier run had a TK column): rows follow
	// its columns, TK empty.
	wider := append(append([]string{}, head[:20]...), append([]string{"TK"}, head[20:]...)...)
	b.Reset()
	if err := CSVWith(&b, in, CSVOptions{Tags: tags, Header: wider}); err != nil {
		t.Fatal(err)
	}
	got := readCSV(t, b.String())
	if len(got[1]) != len(wider) || got[1][20] != "" || got[1][len(wider)-3] != "1024" {
		t.Errorf("rows under a wider header: %v", got[1])
	}
	// Under a header that lacks a column of ours: refused.
	err := CSVWith(&b, in, CSVOptions{Tags: []Tag{{"branch", "main"}}, Header: head})
	if !errors.Is(err, ErrCSVColumns) || !strings.Contains(err.Error(), "lacks branch") {
		t.Errorf("append under a narrower header: %v", err)
	}
	// A tag may not take a column's name.
	for _, bad := range []Tag{{"Runtime", "1"}, {"TM", "1"}, {"", "x"}} {
		if err := CSVWith(&b, in, CSVOptions{Tags: []Tag{bad}}); !errors.Is(err, ErrCSVTag) {
			t.Errorf("tag %q: %v", bad.Key, err)
		}
	}
	if err := CSVWith(&b, in, CSVOptions{Tags: []Tag{{"a", "1"}, {"a", "2"}}}); !errors.Is(err, ErrCSVTag) {
		t.Errorf("a repeated tag: %v", err)
	}
}
