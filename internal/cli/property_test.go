package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/workload"
)

// A propGen generates tilefit command lines for TestCLIProperties: mostly
// bad input of every kind (flags, workload files, sources, databases), and
// a few real sweeps of tiny workloads on the CPU.
type propGen struct {
	rng *rand.Rand
	dir string
	db  string // the database every sweep shares
	n   int    // files written so far
}

func (g *propGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }

func (g *propGen) chance(p float64) bool { return g.rng.Float64() < p }

func (g *propGen) file(ext, text string) string {
	g.n++
	path := filepath.Join(g.dir, fmt.Sprintf("f%d%s", g.n, ext))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		panic(err)
	}
	return path
}

// workload writes a workload file: tiny valid shapes (N, K ≤ 64, M ≤ 9) or,
// with bad true, one with a defect of some kind.
func (g *propGen) workload(bad bool) (string, *workload.Workload) {
	w := workload.Workload{Name: fmt.Sprintf("p%d", g.n)}
	for i := range 1 + g.rng.IntN(2) {
		w.Shapes = append(w.Shapes, workload.Shape{Name: fmt.Sprintf("s%d", i), N: []int{1, 3, 8, 17, 48}[g.rng.IntN(5)],
			K: []int{1, 7, 16, 33, 64}[g.rng.IntN(5)], Calls: 1 + g.rng.IntN(9)})
	}
	for _, m := range g.rng.Perm(9)[:1+g.rng.IntN(2)] {
		w.Ms = append(w.Ms, m+1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nm: %s\nshapes:\n", w.Name, strings.Join(strings.Fields(fmt.Sprint(w.Ms)), ", "))
	for _, s := range w.Shapes {
		fmt.Fprintf(&b, "  - {name: %s, n: %d, k: %d, calls: %d}\n", s.Name, s.N, s.K, s.Calls)
	}
	text := b.String()
	if !bad {
		return g.file(".yaml", text), &w
	}
	switch g.rng.IntN(9) {
	case 0:
		text = text[:g.rng.IntN(len(text))] // cut anywhere
	case 1:
		text = strings.Replace(text, "n: ", "n: -", 1)
	case 2:
		text = strings.Replace(text, "calls", "colls", 1)
	case 3:
		text = strings.Replace(text, "m: [", "m: [0, ", 1)
	case 4:
		text += "  - {name: s0, n: 8, k: 8}\n" // a duplicate name
	case 5:
		text = strings.Replace(text, "k: ", "k: 99999999999999999999", 1)
	case 6:
		text = "x: &a [*a]\n" + text
	case 7:
		text = "\xff\xfe" + text
	default:
		text = strings.Replace(text, "m: [", "m: [1048577, ", 1)
	}
	return g.file(".yaml", text), nil
}

// badPath is a path that no reader may accept or block on.
func (g *propGen) badPath() string {
	switch g.rng.IntN(7) {
	case 0:
		return g.file(".c", "")
	case 1:
		return g.file(".c", " \n\t \n")
	case 2:
		g.n++
		fifo := filepath.Join(g.dir, fmt.Sprintf("f%d.fifo", g.n))
		syscall.Mkfifo(fifo, 0o644)
		return fifo
	case 3:
		return g.dir
	case 4:
		return "/dev/null"
	case 5:
		return filepath.Join(g.dir, "missing", "x")
	}
	return ""
}

// args returns a command line and, for a sweep that should run, its
// workload (nil otherwise).
func (g *propGen) args(allowSweep bool) ([]string, *workload.Workload, string) {
	verb := g.pick("sweep", "sweep", "sweep", "report", "select", "ab", "families")
	args := []string{verb}
	add := func(p float64, flag string, values ...string) {
		if g.chance(p) {
			args = append(args, flag, g.pick(values...))
		}
	}
	var wl *workload.Workload
	out := "f32"
	switch verb {
	case "sweep", "ab":
		valid := allowSweep && verb == "sweep" && g.chance(0.5)
		if valid {
			path, w := g.workload(false)
			wl = w
			out = g.pick("f32", "f16")
			args = append(args, "--workload", path, "--tiles", g.pick("16_32_1", "16_32_1,32_64_2", "64_128_2"),
				"--rounds", g.pick("2", "3", "6"), "--db", g.db, "--out-type", out, "--isolate=false", "--report="+g.pick("true", "false"),
				"--vendor=false", "--aa="+g.pick("true", "false"), "--seed", fmt.Sprint(g.rng.Uint64()))
			add(0.3, "--max-samples", "1", "16", "100000")
			add(0.2, "--budget", "1s", "0", "10ms")
			break
		}
		// Bad input of one kind (or two), all refused before compiling.
		if verb == "ab" {
			args = append(args, "--a", g.pick("tile:64_128_2", "tile:64_96_2", "source:"+g.badPath(), "policy:"+g.badPath(), "", "x:y"),
				"--b", g.pick("tile:64_128_2", "policy:"+g.badPath(), "source:"+g.badPath(), "tile:"))
		}
		switch g.rng.IntN(12) {
		case 0:
			p, _ := g.workload(true)
			args = append(args, "--workload", p)
		case 1:
			args = append(args, "--workload", g.badPath())
		case 2:
			args = append(args, "--m", g.pick("0", "5,5", "abc", "99999999999999999999", ",", "1,,2", "-3", "1048577", ""))
		case 3:
			args = append(args, "--tiles", g.pick(",,", "64_96_2", "x", "16_32_1,,", "128_256_2.tk512", ","))
		case 4:
			args = append(args, g.pick("--rounds", "--dispatches", "--max-samples", "--budget"), g.pick("-1", "x", "99999999999999999999", "-5s", "1e3"))
		case 5:
			args = append(args, "--out-type", g.pick("bf16", "", "F32"))
		case 6:
			args = append(args, "--backend", g.pick("tpu", ""), "--family", g.pick("gemm_f64", ""))
		case 7:
			if verb == "sweep" {
				args = append(args, "--source", g.badPath())
			} else {
				args = append(args, "--format", "xml")
			}
		case 8:
			args = append(args, "--db", g.pick("", "/dev/null", g.dir, filepath.Join(g.dir, "no", "such.db")))
		case 9:
			args = append(args, "--"+g.pick("rouns", "m=", "=", "-"), "3")
		case 10:
			args = append(args, "stray")
		default:
			p, _ := g.workload(true)
			args = append(args, "--workload", p, "--m", "0,0")
		}
		if verb == "sweep" && !slices.Contains(args, "--db") {
			args = append(args, "--db", g.db)
		}
	case "report":
		args = append(args, "--db", g.pick(g.db, g.db, g.badPath(), g.file(".db", "not a database")))
		add(0.5, "--format", "md", "json", "csv", "xml")
		add(0.2, "--workload", "smoke", "strata", g.badPath())
		add(0.2, "--policy", g.badPath(), g.file(".json", "{}"))
		add(0.1, "--backend", "cpu", "cuda")
	case "select":
		args = append(args, "--db", g.pick(g.db, g.db, g.badPath()), "--confirm=false", "--policy-out", "")
		add(0.3, "--m", "1,2", "5,5", "0", "x")
		add(0.3, "--emit", "go", ",,", "rust", "go,c,json")
		add(0.3, "--emit-dir", filepath.Join(g.dir, "emit"))
		add(0.2, "--baseline", g.badPath(), g.file(".json", "[]"))
		add(0.2, "--max-rules", "-1", "0", "2")
	case "families":
		add(0.5, "--backend", "cpu", "cuda", "tpu")
		if g.chance(0.5) {
			args = append(args, "source", g.pick("gemm_f16", "nope", ""))
		}
	}
	return args, wl, out
}

// storedCells is every stored (provenance, shape, N, K, M, tile, status)
// of db, or nil when there is no readable database yet.
func storedCells(t *testing.T, db string) map[string]bool {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return nil
	}
	st, err := store.OpenReadOnly(context.Background(), db)
	if err != nil {
		t.Fatalf("the shared database no longer opens: %v", err)
	}
	defer st.Close()
	cells, err := st.Cells(context.Background(), store.Filter{})
	if err != nil {
		t.Fatalf("the shared database no longer reads: %v", err)
	}
	out := map[string]bool{}
	for _, c := range cells {
		for _, cand := range c.Candidates {
			out[fmt.Sprintf("%s|%s|%d|%d|%d|%v|%s|%v", c.Prov.Key(), c.Cell.Shape, c.Cell.N, c.Cell.K, c.Cell.M, c.Prov.OutF16(), cand.Tile, cand.AA)] = true
		}
		out[fmt.Sprintf("cell|%s|%d|%d|%d|%v", c.Cell.Shape, c.Cell.N, c.Cell.K, c.Cell.M, c.Prov.OutF16())] = true
	}
	return out
}

// TestCLIProperties runs tilefit on generated command lines and workloads
// (seeded: the same runs every time) and checks the properties every run
// must keep: no panic, an exit code of 0, 1, 2 or 130, a message with every
// 2, no stored cell ever lost (the database shared by every sweep only
// grows), a sweep that succeeds stores every cell of its workload, and a
// refused sweep leaves no new file behind. Real sweeps are of tiny shapes
// on the CPU, in-process; the rest is bad input refused before compiling.
func TestCLIProperties(t *testing.T) {
	sweeps := 6
	if _, err := exec.LookPath("cc"); err != nil || testing.Short() {
		sweeps = 0
	}
	dir := t.TempDir()
	g := &propGen{rng: rand.New(rand.NewPCG(8, 2026)), dir: dir, db: filepath.Join(dir, "shared.db")}
	prev := storedCells(t, g.db)
	ran := 0
	for i := 0; i < 300; i++ {
		args, wl, out := g.args(ran < sweeps)
		before := listDir(t, dir)
		ctx := context.Background()
		cancelled := wl == nil && g.chance(0.05)
		if cancelled {
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		code, stdout, stderr := runProp(t, ctx, args)
		what := fmt.Sprintf("run %d: tilefit %q", i, args)
		switch code {
		case ExitOK, ExitFailures, ExitUsage, ExitInterrupted:
		case -1:
			continue // panicked: reported by runProp
		default:
			t.Errorf("%s: exit %d\n%s", what, code, stderr)
		}
		if code == ExitUsage && !strings.HasPrefix(stderr, "tilefit ") && !strings.Contains(stderr, "\ntilefit ") {
			t.Errorf("%s: exit 2 without a message: %q", what, stderr)
		}
		if wl != nil {
			ran++
			if code != ExitOK {
				t.Errorf("%s: a sweep of a valid tiny workload: exit %d\n%s%s", what, code, stdout, stderr)
			}
		}
		now := storedCells(t, g.db)
		for k := range prev {
			if !now[k] {
				t.Fatalf("%s lost a stored result: %s", what, k)
			}
		}
		if wl != nil && code == ExitOK {
			for _, s := range wl.Shapes {
				for _, m := range wl.Ms {
					if k := fmt.Sprintf("cell|%s|%d|%d|%d|%v", s.Name, s.N, s.K, m, out == "f16"); !now[k] {
						t.Errorf("%s: cell %s M=%d is not stored", what, s.Name, m)
					}
				}
			}
		}
		if args[0] == "sweep" && code == ExitUsage {
			if after := listDir(t, dir); after != before && !sameExceptDB(before, after, g.db) {
				t.Errorf("%s: the refusal changed files:\n%s\nto\n%s", what, before, after)
			}
		}
		prev = now
	}
	if ran < sweeps {
		t.Errorf("only %d of %d sweeps ran", ran, sweeps)
	}
	t.Logf("300 command lines, %d real sweeps, %d stored results", ran, len(prev))
}

// sameExceptDB reports whether two listings differ only in the shared
// database's own files (a reader may touch its -shm).
func sameExceptDB(a, b, db string) bool {
	keep := func(s string) string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, db) {
				out = append(out, l)
			}
		}
		return strings.Join(out, "\n")
	}
	return keep(a) == keep(b)
}

// runProp runs tilefit in-process and turns a panic into a test error
// (code -1).
func runProp(t *testing.T, ctx context.Context, args []string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb syncBuffer
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("tilefit %q panicked: %v", args, r)
			code = -1
		}
	}()
	code = Run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}
