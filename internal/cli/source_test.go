package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// TestFamiliesSourceRoundTrip: "tilefit families source NAME" prints the
// whole text the family compiles (for gemm_f16 and the fused hc_up_f16 the
// shared f16_common.h first, then the family's own file), and "sweep
// --source FILE" compiles that file as it is, replacing the whole text: an
// unedited copy runs under the built-in source's hash (the same provenance
// as a sweep without --source), an edited copy under its own hash, and both
// give the reference tile's bits.
func TestFamiliesSourceRoundTrip(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	reg := builtin.New()
	for _, tc := range []struct {
		name, shape, other string
	}{
		{"gemm_f16", "{name: g, n: 48, k: 72, calls: 1}", "16_32_1"},
		{"hc_up_f16", "{name: u, op: hc_up_f16, s: 40, k: 24, calls: 1}", "16_64_1"},
	} {
		fam, err := reg.Lookup("cpu", tc.name)
		if err != nil {
			t.Fatal(err)
		}
		code, src, stderr := abRun(t, "families", "source", tc.name)
		if code != 0 {
			t.Fatalf("families source %s: exit %d: %s", tc.name, code, stderr)
		}
		if src != fam.Source {
			t.Fatalf("families source %s printed %d bytes, not the %d bytes the family compiles", tc.name, len(src), len(fam.Source))
		}
		i, j := strings.Index(src, "#line 1 \"f16_common.h\"\n"), strings.Index(src, "#line 1 \""+fam.SourceFile+"\"\n")
		if i < 0 || j < i {
			t.Fatalf("families source %s: want f16_common.h (at %d) before %s (at %d)", tc.name, i, fam.SourceFile, j)
		}
		edited := strings.Replace(src, "#line 1 \""+fam.SourceFile+"\"\n", "#line 1 \""+fam.SourceFile+"\"\n/* edited: a comment */\n", 1)
		wl := filepath.Join(dir, tc.name+".yaml")
		if err := os.WriteFile(wl, []byte("name: rt\nm: [37]\nshapes:\n  - "+tc.shape+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tiles := fam.Reference + "," + tc.other
		for _, copy := range []struct {
			file, text, hash string
		}{
			{"orig", src, result.SourceHash(fam.Source)},
			{"edited", edited, result.SourceHash(edited)},
		} {
			path := filepath.Join(dir, tc.name+"."+copy.file+".c")
			if err := os.WriteFile(path, []byte(copy.text), 0o644); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, tc.name+"."+copy.file+".db")
			code, _, stderr := abRun(t, "sweep", "--workload", wl, "--db", db, "--source", path, "--tiles", tiles,
				"--rounds", "6", "--aa=false", "--vendor=false", "--report=false", "--isolate=false", "--fail-on-error")
			if code != 0 {
				t.Fatalf("%s: sweep --source %s: exit %d\n%s", tc.name, copy.file, code, stderr)
			}
			st, err := store.OpenReadOnly(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			cells, err := st.Cells(context.Background(), store.Filter{})
			st.Close()
			if err != nil || len(cells) != 1 {
				t.Fatalf("%s %s: %d cells, %v", tc.name, copy.file, len(cells), err)
			}
			c := cells[0]
			if c.Prov.Family != tc.name || c.Prov.SourceHash != copy.hash {
				t.Errorf("%s %s: provenance %s source %.12s, want source %.12s (the whole file given)", tc.name, copy.file, c.Prov.Family, c.Prov.SourceHash, copy.hash)
			}
			if len(c.Candidates) != 2 {
				t.Errorf("%s %s: %d candidates, want 2", tc.name, copy.file, len(c.Candidates))
			}
			for _, cand := range c.Candidates {
				if cand.Status != result.OK || !cand.Bitwise {
					t.Errorf("%s %s %s: %s bitwise %v %s", tc.name, copy.file, cand.Tile, cand.Status, cand.Bitwise, cand.Detail)
				}
			}
		}
	}
}
