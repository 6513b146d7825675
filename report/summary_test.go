package report

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// TestSummaryBuildsTheModelOnce: the sweep's summary builds the report's
// model once for its decisions line, report and select commands, and the
// parity headlines without the chunk totals: what it prints equals what
// the separate functions print, and the parity and invariance summaries
// of a model built without totals equal the full model's.
func TestSummaryBuildsTheModelOnce(t *testing.T) {
	in := fixtureInput(t)
	full, lean := build(in), buildWith(in, false)
	if len(full.Provenances) == 0 || len(full.Provenances) != len(lean.Provenances) {
		t.Fatalf("%d and %d sections", len(full.Provenances), len(lean.Provenances))
	}
	for i := range full.Provenances {
		f, l := full.Provenances[i], lean.Provenances[i]
		if !reflect.DeepEqual(f.Parity, l.Parity) || !reflect.DeepEqual(f.Invariance, l.Invariance) || !reflect.DeepEqual(f.Decisions, l.Decisions) {
			t.Errorf("section %d: parity, invariance or decisions differ without the totals", i)
		}
		if l.Totals != nil || l.Chunk != nil {
			t.Errorf("section %d: totals computed when not asked for", i)
		}
	}
	if len(full.Chunks) == 0 {
		t.Fatal("the fixture has no chunk totals: the test says nothing")
	}
	var got bytes.Buffer
	if err := SweepSummary(&got, in, []Input{in}, true, "t.db", "smoke"); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	want.WriteString(ParityLine(in) + "\n")
	if line := DecisionsLine(in); line != "" {
		want.WriteString(capitalizeFirst(line) + ".\n")
	}
	want.WriteString("\n")
	if err := Markdown(&want, in); err != nil {
		t.Fatal(err)
	}
	gotS, wantS := got.String(), want.String()
	if !strings.HasPrefix(gotS, wantS) {
		t.Errorf("the summary's report differs from Markdown's:\n%s\n---\n%s", gotS, wantS)
	}
	for _, c := range SelectCommands(in, "t.db", "smoke") {
		if !strings.Contains(gotS[len(wantS):], c) {
			t.Errorf("the summary lacks the select command %q", c)
		}
	}
}
