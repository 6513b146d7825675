package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/kernel"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tilefit/tilefit/internal/pgtest"
	"github.com/tilefit/tilefit/result"
)

var cpuProv = result.Provenance{
	Backend:    "cpu",
	Device:     "Test CPU (2 cores)",
	Arch:       "x86_64 avx2 fma f16c",
	Compiler:   "cc (Debian 12.2.0) 12.2.0",
	Flags:      "-O3 -march=native -shared -fPIC",
	Family:     "gemm_f16",
	SourceHash: result.SourceHash("source"),
	Operator:   "gemm_f16",
	Types:      "X=f16,W=f16,Y=f32",
}

var cudaProv = result.Provenance{
	Backend:    "cuda",
	Device:     "NVIDIA H200",
	Arch:       "sm_90a",
	Compiler:   "nvrtc 13.0",
	Driver:     "580.65",
	Family:     "mma_f16",
	SourceHash: result.SourceHash("cuda source"),
	Operator:   "gemm_f16",
	Types:      "X=f16,W=f16,Y=f16",
}

// testCell builds a cell with a reference, two tiles, a vendor, an A/A twin,
// a compile failure and a crash.
func testCell(p result.Provenance, shape string, m int, rounds int, t0 time.Time) result.CellResult {
	samples := func(base float64) []float64 {
		s := make([]float64, rounds)
		for i := range s {
			s[i] = base + float64(i%3)*0.125 + 1e-9*float64(i)
		}
		return s
	}
	return result.CellResult{
		Prov:      p,
		Cell:      result.NewCell(shape, builtin.GemmF16(), kernel.Dims{"M": m, "N": 640, "K": 2560}, 96),
		Reference: "64_64_2",
		Seed:      1<<63 + 12345,
		Rounds:    rounds,
		Sets:      4,
		Started:   t0,
		Finished:  t0.Add(1500*time.Millisecond + 123456789),
		Clocks:    []string{"sm_mhz=1980 temp_c=41", "sm_mhz=1975 temp_c=42"},
		Candidates: []result.Candidate{
			{Tile: "64_64_2", Params: "TM=64,TN=64,THREADS=2", Status: result.OK, Bitwise: true, MaxErr: 0.25, CompileSeconds: 0.5, Dispatches: 8, Samples: samples(100)},
			{Tile: "64_64_2", Params: "TM=64,TN=64,THREADS=2", AA: true, Status: result.OK, Bitwise: true, MaxErr: 0.25, Dispatches: 8, Samples: samples(100.5)},
			{Tile: "32_64_2", Params: "TM=32,TN=64,THREADS=2", Status: result.OK, Bitwise: true, MaxErr: 0.25, CompileSeconds: 0.4, Dispatches: 8, Samples: samples(90), LeftAt: 6, // schema 6
				Resources: map[string]int{result.ResRegs: 96, result.ResLocalBytes: 0, result.ResSharedBytes: 24576}},
			{Tile: "16_32_1", Params: "TM=16,TN=32,THREADS=1", Status: result.CompileFailed, Detail: "error: too many registers\nline 2", MaxErr: math.NaN()},
			{Tile: "128_128_8", Params: "TM=128,TN=128,THREADS=8", Status: result.Crashed, Detail: "signal: segmentation fault", MaxErr: math.Inf(1), CompileSeconds: 0.7},
			{Tile: "openblas", Vendor: true, Status: result.OK, MaxErr: 0.5, Dispatches: 4, Samples: samples(80)},
		},
	}
}

// databases are the engines the store's suite runs against: every test
// that uses forEachDB runs once per engine, with the same assertions.
var databases = []struct {
	name string
	// target returns a fresh database's --db value (a file path or a
	// server URL naming a new schema).
	target func(t *testing.T) string
}{
	{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "tilefit.db") }},
	{"postgres", func(t *testing.T) string { return pgtest.Schema(t) }},
}

// forEachDB runs f on a fresh store of every engine (a subtest each; the
// PostgreSQL one is skipped with pgtest's message when no server can be
// had). target is the store's --db value, to open it again.
func forEachDB(t *testing.T, f func(t *testing.T, s *Store, target string)) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			target := db.target(t)
			s, err := Open(context.Background(), target)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			f(t, s, target)
		})
	}
}

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tilefit.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// nanFree replaces NaNs by a marker so that reflect.DeepEqual can compare.
func nanFree(cs []result.CellResult) []result.CellResult {
	out := make([]result.CellResult, len(cs))
	fix := func(x float64) float64 {
		if math.IsNaN(x) {
			return -424242
		}
		return x
	}
	for i, c := range cs {
		c.Candidates = append([]result.Candidate(nil), c.Candidates...)
		for j := range c.Candidates {
			cand := &c.Candidates[j]
			cand.MaxErr = fix(cand.MaxErr)
			cand.CompileSeconds = fix(cand.CompileSeconds)
			if cand.Samples != nil {
				s := make([]float64, len(cand.Samples))
				for k, x := range cand.Samples {
					s[k] = fix(x)
				}
				cand.Samples = s
			}
		}
		out[i] = c
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, path string) {
		ctx := context.Background()
		t0 := time.Date(2025, 11, 29, 19, 42, 1, 987654321, time.UTC)
		in := []result.CellResult{
			testCell(cpuProv, "Wshgu", 256, 12, t0),
			testCell(cudaProv, "Wshgu", 1983, 5, t0.Add(time.Hour)),
			testCell(cpuProv, "Wsg", 256, 3, t0.Add(2*time.Hour)),
		}
		in[1].Clocks = nil
		in[2].Clocks = []string{}
		in[2].Candidates[2].Samples[1] = math.NaN()
		in[2].Seed = 0
		for i, c := range in {
			id, err := s.SaveCell(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if id != int64(i+1) {
				t.Errorf("SaveCell id = %d, want %d", id, i+1)
			}
		}
		check := func(s *Store) {
			t.Helper()
			got, err := s.Cells(ctx, Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nanFree(got), nanFree(in)) {
				t.Errorf("Cells round trip differs:\n got %+v\nwant %+v", got, in)
			}
			if !math.IsNaN(got[0].Candidates[3].MaxErr) || !math.IsInf(got[0].Candidates[4].MaxErr, 1) {
				t.Errorf("NaN/Inf max_err not kept: %v %v", got[0].Candidates[3].MaxErr, got[0].Candidates[4].MaxErr)
			}
			provs, err := s.Provenances(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := []result.Provenance{cpuProv, cudaProv}; !reflect.DeepEqual(provs, want) {
				t.Errorf("Provenances = %+v, want %+v", provs, want)
			}
		}
		check(s)
		// And again through a fresh open of the same file.
		s.Close()
		s2, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		check(s2)

		for _, tc := range []struct {
			f    Filter
			want []int
		}{
			{Filter{ProvKey: cpuProv.Key()}, []int{0, 2}},
			{Filter{ProvKey: cudaProv.Key()}, []int{1}},
			{Filter{Backend: "cuda"}, []int{1}},
			{Filter{Family: "gemm_f16"}, []int{0, 2}},
			{Filter{Backend: "cpu", Family: "mma_f16"}, nil},
			{Filter{ProvKey: "nope"}, nil},
		} {
			got, err := s2.Cells(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var want []result.CellResult
			for _, i := range tc.want {
				want = append(want, in[i])
			}
			if !reflect.DeepEqual(nanFree(got), nanFree(want)) {
				t.Errorf("Cells(%+v): got %d cells, want %d (%v)", tc.f, len(got), len(want), tc.want)
			}
		}
	})
}

func TestTimesStoredInUTC(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		zone := time.FixedZone("UTC+5:30", 5*3600+1800)
		c := testCell(cpuProv, "Wz", 512, 2, time.Date(2025, 1, 2, 3, 4, 5, 6, zone))
		if _, err := s.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
		got, err := s.Cells(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if !got[0].Started.Equal(c.Started) || got[0].Started.Location() != time.UTC {
			t.Errorf("Started = %v, want %v in UTC", got[0].Started, c.Started)
		}
	})
}

func TestSaveCellRefusesDuplicateTile(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		c := testCell(cpuProv, "Wz", 512, 2, time.Unix(0, 0).UTC())
		c.Candidates = append(c.Candidates, c.Candidates[2])
		_, err := s.SaveCell(ctx, c)
		if err == nil || !strings.Contains(err.Error(), "32_64_2 appears twice") {
			t.Fatalf("SaveCell with a duplicate tile: err = %v", err)
		}
		// The unique constraint backs the check up.
		_, err = s.db.ExecContext(ctx, `INSERT INTO provenance (key, backend, device, arch, compiler, flags, driver, family, source_hash, out_f16)
		VALUES ('k', '', '', '', '', '', '', '', '', 0)`)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.db.ExecContext(ctx, `INSERT INTO cell (prov_key, shape, n, k, m, calls, reference, seed, rounds, sets, started, finished)
		VALUES ('k', 's', 1, 1, 1, 1, 'r', 0, 1, 1, '', '')`)
		if err != nil {
			t.Fatal(err)
		}
		ins := `INSERT INTO candidate (cell_id, pos, tile, params, vendor, aa, status, detail, bitwise, dispatches) VALUES (1, ?, 't', '', 0, 0, 'ok', '', 1, 1)`
		if _, err := s.db.ExecContext(ctx, ins, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.ExecContext(ctx, ins, 1); err == nil {
			t.Error("a second candidate row with the same tile in one cell was accepted")
		}
		cells, err := s.Cells(ctx, Filter{ProvKey: cpuProv.Key()})
		if err != nil || len(cells) != 0 {
			t.Errorf("after a refused SaveCell: %d cells, err %v", len(cells), err)
		}
	})
}

func TestMeasured(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		c := testCell(cpuProv, "Wshgu", 256, 3, t0)
		if _, err := s.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
		// Another M, another provenance: not part of the answer.
		if _, err := s.SaveCell(ctx, testCell(cpuProv, "Wshgu", 512, 3, t0)); err != nil {
			t.Fatal(err)
		}
		other := testCell(cudaProv, "Wshgu", 256, 3, t0)
		other.Candidates = append(other.Candidates, result.Candidate{Tile: "only_cuda", Status: result.OK})
		if _, err := s.SaveCell(ctx, other); err != nil {
			t.Fatal(err)
		}
		// A resumed sweep: the crashed tile retried and now OK, a new tile.
		resumed := c
		resumed.Started, resumed.Finished = t0.Add(time.Hour), t0.Add(2*time.Hour)
		resumed.Candidates = []result.Candidate{
			{Tile: "64_64_2", Status: result.OK, Bitwise: true, Samples: []float64{1, 2, 3}},
			{Tile: "128_128_8", Status: result.OK, Bitwise: true, Samples: []float64{1, 2, 3}},
			{Tile: "32_32_1", Status: result.ParityFailed, Detail: "index 7"},
		}
		if _, err := s.SaveCell(ctx, resumed); err != nil {
			t.Fatal(err)
		}
		got, err := s.Measured(ctx, cpuProv.Key(), c.Cell)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]result.Status{
			"64_64_2":   result.OK,
			"32_64_2":   result.OK,
			"16_32_1":   result.CompileFailed,
			"128_128_8": result.OK,
			"openblas":  result.OK,
			"32_32_1":   result.ParityFailed,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Measured = %v, want %v", got, want)
		}
		cell := c.Cell
		cell.M = 1024
		got, err = s.Measured(ctx, cpuProv.Key(), cell)
		if err != nil || len(got) != 0 {
			t.Errorf("Measured of an unmeasured cell = %v, %v; want empty", got, err)
		}
	})
}

func TestDevices(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, _ string) {
		ctx := context.Background()
		t0 := time.Date(2025, 1, 1, 0, 0, 0, 5, time.UTC)
		a := DeviceRecord{Backend: "cuda", Name: "NVIDIA H200", Props: map[string]string{"copy_gbps": "4200", "sms": "132"}, Measured: t0}
		b := DeviceRecord{Backend: "cpu", Name: "Test CPU", Props: map[string]string{"cores": "2"}, Measured: t0}
		for _, d := range []DeviceRecord{a, b} {
			if err := s.SaveDevice(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		a.Props = map[string]string{"copy_gbps": "4150"}
		a.Measured = t0.Add(time.Hour)
		if err := s.SaveDevice(ctx, a); err != nil {
			t.Fatal(err)
		}
		got, err := s.Devices(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := []DeviceRecord{a, b}; !reflect.DeepEqual(got, want) {
			t.Errorf("Devices = %+v, want %+v", got, want)
		}
	})
}

func TestSchemaVersionMatchesMigrations(t *testing.T) {
	if SchemaVersion != len(migrations) {
		t.Errorf("SchemaVersion = %d, but there are %d migrations", SchemaVersion, len(migrations))
	}
}

func pragmaInt(t *testing.T, path, pragma string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("PRAGMA " + pragma).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestMigrateEmptyFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second open finds the schema in place
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.SaveCell(ctx, testCell(cpuProv, "Wz", 256, 2, time.Unix(int64(1+i), 0).UTC())); err != nil {
			t.Fatal(err)
		}
		var sync, fk, busy int
		if err := s.db.QueryRow("SELECT (SELECT synchronous FROM pragma_synchronous), (SELECT foreign_keys FROM pragma_foreign_keys), (SELECT timeout FROM pragma_busy_timeout)").Scan(&sync, &fk, &busy); err != nil {
			t.Fatal(err)
		}
		if sync != 2 || fk != 1 || busy != int(busyTimeout.Milliseconds()) {
			t.Errorf("synchronous = %d (want 2, FULL), foreign_keys = %d, busy_timeout = %d", sync, fk, busy)
		}
		var open string
		if err := s.db.QueryRow("PRAGMA journal_mode").Scan(&open); err != nil || open != "wal" {
			t.Errorf("journal_mode of the open store = %q, %v; want wal", open, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if v := pragmaInt(t, path, "user_version"); v != SchemaVersion {
		t.Errorf("user_version = %d, want %d", v, SchemaVersion)
	}
	if v := pragmaInt(t, path, "application_id"); v != applicationID {
		t.Errorf("application_id = %#x, want %#x", v, applicationID)
	}
	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	var mode string
	// Closed, it is back in rollback-journal mode (Store.leaveWAL).
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "delete" {
		t.Errorf("journal_mode after Close = %q, %v; want delete", mode, err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM cell").Scan(&n); err != nil || n != 2 {
		t.Errorf("cells = %d, %v; want 2", n, err)
	}
}

func TestOddPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "my results #1")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "tile fit?%20.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SaveCell(ctx, testCell(cpuProv, "Wz", 256, 2, time.Unix(1, 0).UTC())); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Errorf("database not at %q: %v", path, err)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	if _, err := s.db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	_, err := Open(ctx, path)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer schema: err = %v, want ErrNewerSchema", err)
	}
	want := fmt.Sprintf("database %s has schema version %d; this tilefit knows up to %d: upgrade tilefit", path, SchemaVersion+1, SchemaVersion)
	if err.Error() != want {
		t.Errorf("message:\n got %q\nwant %q", err, want)
	}
	if v := pragmaInt(t, path, "user_version"); v != SchemaVersion+1 {
		t.Errorf("user_version changed to %d", v)
	}
}

func TestGarbageFileRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage.db": "this is not a database, just some bytes\x00\xff\x13 that go on for a while........",
		"short.db":   "SQLite",
		"fake.db":    sqliteHeader + strings.Repeat("\xff", 4000),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, path)
		if !errors.Is(err, ErrNotTilefit) {
			t.Errorf("%s: err = %v, want ErrNotTilefit", name, err)
			continue
		}
		if want := "open database " + path + ": not a tilefit database (file is not a database)"; err.Error() != want {
			t.Errorf("%s: message\n got %q\nwant %q", name, err, want)
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: Open modified the file", name)
		}
	}
}

func TestForeignDatabaseRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE notes (body TEXT)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrNotTilefit) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of another program's database: err = %v", err)
	}
}

func TestCorruptDatabaseRefused(t *testing.T) {
	ctx := context.Background()
	s, path := openTemp(t)
	for i := 0; i < 20; i++ {
		if _, err := s.SaveCell(ctx, testCell(cpuProv, fmt.Sprintf("S%d", i), 256, 12, time.Unix(1, 0).UTC())); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 5*4096 {
		t.Fatalf("database is only %d bytes", len(b))
	}
	for i := 2 * 4096; i < len(b)-4096; i += 4096 {
		copy(b[i+8:i+200], strings.Repeat("\xa5", 192)) // smash each page's header and cell pointers
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(ctx, path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open of a corrupt database: err = %v, want ErrCorrupt", err)
	}
	if !strings.HasPrefix(err.Error(), "database "+path+" is corrupt (") {
		t.Errorf("message %q does not name the file", err)
	}
}

func TestBadPaths(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct{ path, want string }{
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "x.db"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
		{"", "empty path"},
	} {
		_, err := Open(ctx, tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q): err = %v, want it to contain %q", tc.path, err, tc.want)
		}
	}
	if os.Geteuid() != 0 {
		path := filepath.Join(dir, "unreadable.db")
		if err := os.WriteFile(path, nil, 0); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ctx, path)
		if err == nil || !strings.Contains(err.Error(), "cannot read it") {
			t.Errorf("Open of an unreadable file: err = %v", err)
		}
	}
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tilefit.db")
	unlock, err := Lock(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(path)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Lock: err = %v, want ErrLocked", err)
	}
	want := fmt.Sprintf("database %s is in use by another tilefit process (pid %d); wait for it to finish or pass another --db", path, os.Getpid())
	if err.Error() != want {
		t.Errorf("message:\n got %q\nwant %q", err, want)
	}
	if err := unlock(); err != nil {
		t.Fatal(err)
	}
	if err := unlock(); err != nil {
		t.Errorf("second unlock: %v", err)
	}
	unlock, err = Lock(path)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock()
}

func TestConcurrentSaveCell(t *testing.T) {
	forEachDB(t, func(t *testing.T, s *Store, path string) {
		ctx := context.Background()
		// A second Store on the same file stands in for a second process.
		s2, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		const perWriter = 15
		var wg sync.WaitGroup
		errs := make(chan error, 4*perWriter)
		for w, st := range []*Store{s, s, s2, s2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < perWriter; i++ {
					c := testCell(cpuProv, fmt.Sprintf("w%d", w), i+1, 12, time.Unix(int64(i), 0).UTC())
					if _, err := st.SaveCell(ctx, c); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		cells, err := s.Cells(ctx, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cells) != 4*perWriter {
			t.Fatalf("%d cells stored, want %d", len(cells), 4*perWriter)
		}
		for _, c := range cells {
			want := testCell(cpuProv, c.Cell.Shape, c.Cell.M, 12, c.Started)
			if !reflect.DeepEqual(nanFree([]result.CellResult{c}), nanFree([]result.CellResult{want})) {
				t.Errorf("cell %s M=%d differs from what was saved", c.Cell.Shape, c.Cell.M)
			}
		}
	})
}

// fixtureCopy copies testdata/name (a database an older tilefit wrote)
// into a temporary directory and returns the copy's path, so that a test
// may migrate it.
func fixtureCopy(t *testing.T, name string) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSchema1Fixture opens a database written by tilefit before operators
// (schema 1; testdata/schema1.db was written by commit d442510's store with
// this package's testCell: two CPU cells of fp32 output, one CUDA cell of
// fp16 output), migrates it, and reads it back as gemm_f16 cells with their
// old provenance keys, dimensions and counts; new cells join beside them.
func TestSchema1Fixture(t *testing.T) {
	ctx := context.Background()
	path := fixtureCopy(t, "schema1.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cells, err := s.Cells(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 3 {
		t.Fatalf("%d cells, want 3", len(cells))
	}
	for _, c := range cells {
		p := c.Prov
		if !p.Legacy || p.Operator != "gemm_f16" || c.Cell.Op != "gemm_f16" || c.Cell.Dims.String() != fmt.Sprintf("K=2560,M=%d,N=640", c.Cell.M) {
			t.Errorf("legacy cell read as %+v / %+v", p, c.Cell)
		}
		es := 4.0
		if p.Backend == "cuda" {
			es = 2
			if p.Types != "X=f16,W=f16,Y=f16" || !p.OutF16() {
				t.Errorf("cuda provenance types %q", p.Types)
			}
		}
		m := float64(c.Cell.M)
		if c.Cell.FLOPs() != 2*m*640*2560 || c.Cell.Bytes != 2*m*2560+2*640*2560+es*m*640 {
			t.Errorf("counts %v %v", c.Cell.FLOPs(), c.Cell.Bytes)
		}
		if len(c.Candidates) != 6 || len(c.Candidates[0].Samples) != 8 {
			t.Errorf("candidates %d", len(c.Candidates))
		}
		// The stored key is still the provenance's key: resume and
		// filters find the old cells.
		done, err := s.Measured(ctx, p.Key(), c.Cell)
		if err != nil || len(done) == 0 {
			t.Errorf("Measured under the old key: %v, %v", done, err)
		}
	}
	// A new cell (schema 2) is stored and read beside them.
	np := cpuProv
	nc := testCell(np, "Wshgu", 512, 8, time.Now().UTC())
	nc.Cell = result.NewCell("Wshgu", builtin.GemmF16(), kernel.Dims{"M": 512, "N": 640, "K": 2560}, 96)
	nc.Candidates[0].Family = "gemm_f16"
	if _, err := s.SaveCell(ctx, nc); err != nil {
		t.Fatal(err)
	}
	got, err := s.Cells(ctx, Filter{ProvKey: np.Key()})
	if err != nil || len(got) != 1 {
		t.Fatalf("new cell: %v, %v", got, err)
	}
	if g := got[0]; g.Prov.Legacy || g.Cell.Dims.String() != "K=2560,M=512,N=640" || g.Cell.Flop != 2*512*640*2560 || g.Candidates[0].Family != "gemm_f16" {
		t.Errorf("new cell read as %+v %+v", g.Prov, g.Cell)
	}
	legacy := np
	legacy.Legacy = true
	if np.Key() == legacy.Key() {
		t.Error("the operator does not change the provenance key")
	}
}

// TestOlderSchemaReadOnly: a read-only open of a database written by an older
// tilefit reads it (through an upgraded private copy) and leaves the file's
// bytes as they were; the copy is gone after Close.
func TestOlderSchemaReadOnly(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the private copy goes
	path := fixtureCopy(t, "schema1.db")
	s, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	cells, err := s.Cells(ctx, Filter{})
	if err != nil || len(cells) != 3 {
		t.Fatalf("%d cells (%v), want 3", len(cells), err)
	}
	if c := cells[0]; !c.Prov.Legacy || c.Cell.Op != "gemm_f16" {
		t.Errorf("legacy cell read as %+v / %+v", c.Prov, c.Cell)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "schema1.db"))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(src) {
		t.Error("reading an older database changed its file")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the upgraded copy was left behind: %v", left)
	}
}
