package cli

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// TestSelectSaysWhichProvenance: with two sweeps of the family in the
// database (the fixture's edited source, then a later built-in one), select
// says which it uses, lists both with their source and the flag that picks
// each, and --provenance picks the other.
func TestSelectSaysWhichProvenance(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir) // provenance selProv: an edited source
	builtinProv := selProv
	builtinProv.SourceHash = result.SourceHash(builtin.CPUGemmF16().Source)
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	cells, _ := selFixture()
	for _, c := range cells[:3] {
		c.Prov = builtinProv
		c.Started, c.Finished = c.Started.Add(24*time.Hour), c.Finished.Add(24*time.Hour)
		if _, err := st.SaveCell(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	edited, latest := selProv.Key(), builtinProv.Key()

	var stdout, stderr bytes.Buffer
	if err := runSelect(testCtx(), selParse(t, "--db", db, "--policy-out", "", "--confirm=false"), nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	got := stderr.String()
	for _, want := range []string{
		"using provenance " + latest + " (gemm_f16 on cpu (fixture cpu (2 cores)), built-in source, X=f16,W=f16,Y=f32; 3 cells, swept 2025-06-02 12:",
		"the latest of the 2 sweeps on cpu in " + db + ":",
		"  --provenance " + latest + "  gemm_f16 on cpu (fixture cpu (2 cores)), built-in source",
		"← used\n",
		"  --provenance " + edited + "  gemm_f16 on cpu (fixture cpu (2 cores)), edited source (sha256 5e5e5e5e5e5e…), X=f16,W=f16,Y=f32; 16 cells, swept 2025-06-01 12:",
		"pick another with --provenance KEY (and --source FILE when it ran an edited source)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "--provenance "+latest) > strings.Index(got, "--provenance "+edited) {
		t.Errorf("sweeps not listed newest first:\n%s", got)
	}

	stderr.Reset()
	if err := runSelect(testCtx(), selParse(t, "--db", db, "--policy-out", "", "--confirm=false", "--provenance", edited), nil, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "using provenance " + edited + " (gemm_f16 on cpu (fixture cpu (2 cores)), edited source (sha256 5e5e5e5e5e5e…)"; !strings.Contains(stderr.String(), want) ||
		!strings.Contains(stderr.String(), "chosen by --provenance of the 2 sweeps") {
		t.Errorf("--provenance: stderr lacks %q:\n%s", want, stderr.String())
	}

	// One sweep only: one line, still naming it.
	stderr.Reset()
	one := t.TempDir()
	if err := runSelect(testCtx(), selParse(t, "--db", selDB(t, one), "--policy-out", "", "--confirm=false"), nil, io.Discard, &stderr); err != nil {
		t.Fatal(err)
	}
	if want := "using provenance " + edited + " (gemm_f16 on cpu (fixture cpu (2 cores)), edited source (sha256 5e5e5e5e5e5e…), X=f16,W=f16,Y=f32; 16 cells, swept 2025-06-01 12:34 UTC): the only sweep on cpu in "; !strings.Contains(stderr.String(), want) {
		t.Errorf("one sweep: stderr lacks %q:\n%s", want, stderr.String())
	}
}

// TestConfirmationCount: the progress of select's confirmations knows in
// advance how many there will be (a dry run of the selection), and the
// count is the number the selection asks for.
func TestConfirmationCount(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)
	_, ratios := selFixture()
	var asked []string
	planned := -1
	factory := func(ctx context.Context, f *selectFlags, fams []*kernel.Family, prov result.Provenance, stderr io.Writer) (policy.Confirmer, func(), error) {
		planned = len(f.confirmWeights)
		return selConfirmer(ratios, &asked)(ctx, f, fams, prov, stderr)
	}
	if err := runSelect(testCtx(), selParse(t, "--db", db, "--policy-out", "", "--rounds", "12"), factory, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if planned != len(asked) || planned < 5 {
		t.Errorf("planned %d confirmations, %d asked: %q", planned, len(asked), asked)
	}
}
