package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/progress"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/result"
)

// describeSource says which source a provenance ran: its families'
// built-in sources (of reg), or an edited revision (tilefit sweep --source)
// by its hash.
func describeSource(p result.Provenance, reg *kernel.Registry) string {
	var srcs []string
	for _, name := range strings.Split(p.Family, ",") {
		f, err := reg.Lookup(p.Backend, name)
		if err != nil {
			return fmt.Sprintf("source sha256 %.12s…", p.SourceHash)
		}
		srcs = append(srcs, f.Source)
	}
	if p.SourceHash == result.SourceHash(strings.Join(srcs, "\x00")) {
		return "built-in source"
	}
	return fmt.Sprintf("edited source (sha256 %.12s…)", p.SourceHash)
}

// writeProvenanceChoice tells select's user which sweep (provenance) the
// policy comes from, among the provenances of cells that match the flags,
// and how to pick another: every candidate provenance with its source
// (built-in or edited, by hash), device, output types, cell count and when
// it was swept, newest first.
func writeProvenanceChoice(w io.Writer, db string, cells []result.CellResult, used string, reg *kernel.Registry, picked bool) {
	type entry struct {
		key   string
		prov  result.Provenance
		cells int
		last  time.Time
	}
	byKey := map[string]*entry{}
	var order []*entry
	for _, c := range cells {
		k := c.Prov.Key()
		e := byKey[k]
		if e == nil {
			e = &entry{key: k, prov: c.Prov}
			byKey[k] = e
			order = append(order, e)
		}
		e.cells++
		if c.Finished.After(e.last) {
			e.last = c.Finished
		}
	}
	sort.SliceStable(order, func(i, j int) bool { return order[i].last.After(order[j].last) })
	describe := func(e *entry) string {
		when := "time unknown"
		if !e.last.IsZero() {
			when = "swept " + e.last.UTC().Format("2006-01-02 15:04 UTC")
		}
		return fmt.Sprintf("%s on %s (%s), %s, %s; %d cells, %s", e.prov.Family, e.prov.Backend, e.prov.Device,
			describeSource(e.prov, reg), strings.TrimSpace(e.prov.Types), e.cells, when)
	}
	u := byKey[used]
	if u == nil {
		return
	}
	how := "the latest"
	if picked {
		how = "chosen by --provenance"
	}
	if len(order) == 1 {
		fmt.Fprintf(w, "using provenance %s (%s): the only sweep on %s in %s\n", used, describe(u), u.prov.Backend, db)
		return
	}
	fmt.Fprintf(w, "using provenance %s (%s): %s of the %d sweeps on %s in %s:\n", used, describe(u), how, len(order), u.prov.Backend, db)
	for _, e := range order {
		mark := ""
		if e.key == used {
			mark = "  ← used"
		}
		fmt.Fprintf(w, "  --provenance %s  %s%s\n", e.key, describe(e), mark)
	}
	fmt.Fprintln(w, "pick another with --provenance KEY (and --source FILE when it ran an edited source)")
}

// errDryRun ends a confirmation of the dry run of confirmationWeights.
var errDryRun = errors.New("dry run")

// confirmationWeights returns the expected cost (cellWeight) of every
// confirmation policy.Select will ask for on cells with o, in order: a dry
// run of the selection whose confirmations only count (which cells need
// one depends on the sweep alone, not on earlier confirmations).
func confirmationWeights(ctx context.Context, cells []result.CellResult, o policy.SelectOptions) []float64 {
	var w []float64
	o.Confirm = func(_ context.Context, cell result.Cell, _, _ policy.Tile) (policy.Confirmation, error) {
		w = append(w, progress.CellWeight(cell))
		return policy.Confirmation{}, errDryRun
	}
	policy.Select(ctx, cells, o)
	return w
}
