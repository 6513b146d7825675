package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
)

// TestAssumesNote: select names the policy's tiles that assume constant
// weights (PDL 2) and says nothing for a policy without them.
func TestAssumesNote(t *testing.T) {
	fams := []*kernel.Family{builtin.CUDAHcUpWgmma(), builtin.CUDAGemmDecode()}
	pol := &policy.Policy{Tiles: []policy.Tile{
		{Name: "128_160_2", Family: "hc_up_wgmma", Params: mustTile(t, fams[0], "128_160_2")},
		{Name: "128_128_2.pingpong1.pdl2", Family: "hc_up_wgmma", Params: mustTile(t, fams[0], "128_128_2.pingpong1.pdl2")},
	}}
	note := assumesNote(pol, fams)
	if !strings.Contains(note, "128_128_2.pingpong1.pdl2 assumes the weights constant") || strings.Contains(note, "128_160_2,") {
		t.Errorf("note %q", note)
	}
	pol.Tiles = pol.Tiles[:1]
	if note := assumesNote(pol, fams); note != "" {
		t.Errorf("no PDL 2 tile, note %q", note)
	}
}

// TestSweepConstWeightsFlag: sweep takes --const-weights (and documents
// what it adds); a bad value is a usage error.
func TestSweepConstWeightsFlag(t *testing.T) {
	var f sweepFlags
	fs := newFlags("sweep", "", io.Discard)
	f.register(fs)
	if err := parse(fs, []string{"--const-weights"}); err != nil || !f.constWeights {
		t.Fatalf("parse: %v, constWeights %v", err, f.constWeights)
	}
	fl := fs.Lookup("const-weights")
	if fl == nil || !strings.Contains(fl.Usage, "PDL 2") {
		t.Errorf("usage: %+v", fl)
	}
	if code, _, stderr := runCLI(t, "sweep", "--const-weights=maybe"); code != 2 || !strings.Contains(stderr, "const-weights") {
		t.Errorf("--const-weights=maybe: exit %d, %q", code, stderr)
	}
}

func mustTile(t *testing.T, f *kernel.Family, tile string) kernel.Params {
	t.Helper()
	p, err := f.ParseTile(tile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
