package cli

import (
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tilesOpsWorkload has a shape of each of two operators (a GEMM and hc_up),
// small enough that a cell runs in a moment on one core.
const tilesOpsWorkload = "name: twoops\nm: [37]\nshapes:\n  - {name: g, n: 64, k: 64, calls: 1}\n  - {name: h, op: hc_up_f16, s: 32, k: 64, calls: 1}\n"

// TestTilesRouteToTheirOperator: on a workload of two operators, --tiles
// FAMILY/TILE names a tile of one family, and so of one operator. Each
// tile is swept with its own operator and, when every tile names its
// family, only the operators named are swept (before: the other
// operator's sweep refused the tile, "no family … in this sweep").
func TestTilesRouteToTheirOperator(t *testing.T) {
	needCC(t)
	dir := t.TempDir()
	wl := filepath.Join(dir, "w.yaml")
	if err := os.WriteFile(wl, []byte(tilesOpsWorkload), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := func(db string, tiles string) map[string][]string {
		t.Helper()
		code, _, stderr := runCLI(t, "sweep", "--workload", wl, "--db", db, "--tiles", tiles, "--rounds", "2",
			"--vendor=false", "--aa=false", "--isolate=false", "--report=false")
		if code != 0 {
			t.Fatalf("--tiles %s: exit %d\n%s", tiles, code, stderr)
		}
		return sweptTiles(t, db)
	}
	got := sweep(filepath.Join(dir, "a.db"), "hc_up_f16/16_64_1")
	if _, ok := got["g"]; ok || !slices.Contains(got["h"], "16_64_1") {
		t.Errorf("--tiles hc_up_f16/16_64_1 swept %v; want shape h alone, with its tile", got)
	}
	got = sweep(filepath.Join(dir, "b.db"), "hc_up_f16/16_64_1,gemm_f16/16_32_1")
	if !slices.Contains(got["h"], "16_64_1") || !slices.Contains(got["g"], "16_32_1") || slices.Contains(got["g"], "16_64_1") || slices.Contains(got["h"], "16_32_1") {
		t.Errorf("two operators' tiles swept %v; want each tile on its own operator's shape only", got)
	}
	for _, c := range []struct{ tiles, want string }{
		{"nosuch/16_64_1", `unknown family "nosuch" for backend cpu`},
		{"gemm_q8_f16/64_128_2", "family gemm_q8_f16 computes operator gemm_q8_f16, which none of the swept shapes uses"},
	} {
		code, _, stderr := runCLI(t, "sweep", "--workload", wl, "--db", filepath.Join(dir, "c.db"), "--tiles", c.tiles)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("--tiles %s: exit %d, %q; want 2 and %q", c.tiles, code, stderr, c.want)
		}
	}
}

// sweptTiles returns the tiles stored per shape in database db.
func sweptTiles(t *testing.T, db string) map[string][]string {
	t.Helper()
	h, err := sql.Open("sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rows, err := h.Query("SELECT c.shape, k.tile FROM cell c JOIN candidate k ON k.cell_id = c.id WHERE k.vendor = 0")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var shape, tile string
		if err := rows.Scan(&shape, &tile); err != nil {
			t.Fatal(err)
		}
		out[shape] = append(out[shape], tile)
	}
	return out
}
