//go:build unix

package store

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/tilefit/tilefit/internal/pgtest"
	"github.com/tilefit/tilefit/result"
)

// helperEnv, when set to a database path, turns the test binary into a
// writer that saves cells until it is killed (see TestSIGKILLLosesNothing).
const helperEnv = "TILEFIT_STORE_KILL_HELPER"

func TestMain(m *testing.M) {
	if path := os.Getenv(helperEnv); path != "" {
		os.Exit(killHelper(path))
	}
	if path := os.Getenv(roHelperEnv); path != "" {
		os.Exit(roHelper(path))
	}
	if path := os.Getenv(openHelperEnv); path != "" {
		os.Exit(openHelper(path))
	}
	os.Exit(pgtest.Main(m))
}

func killHelper(path string) int {
	ctx := context.Background()
	unlock, err := Lock(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer unlock()
	s, err := Open(ctx, path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer s.Close()
	fmt.Println("ready")
	for i := 0; ; i++ {
		// Each run starts at k0 again: its own start times (the pid as
		// nanoseconds) keep the cells distinct (a cell's identity is unique).
		c := testCell(cpuProv, fmt.Sprintf("k%d", i), 256+i, 12, time.Unix(int64(i), int64(os.Getpid())).UTC())
		id, err := s.SaveCell(ctx, c)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 4
		}
		fmt.Println(id) // committed
	}
}

// TestSIGKILLLosesNothing kills a writer at seeded random moments and checks
// after each kill that the database opens, every stored cell is whole, and
// no committed cell was lost.
func TestSIGKILLLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tilefit.db")
	rng := rand.New(rand.NewPCG(1, 2))
	ctx := context.Background()
	prev := 0
	for kill := 0; kill < 6; kill++ {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), helperEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		if !sc.Scan() || sc.Text() != "ready" {
			t.Fatalf("helper did not start: %v", sc.Err())
		}
		committed := make(chan int)
		first := make(chan struct{})
		go func() {
			last := 0
			for sc.Scan() {
				if id, err := strconv.Atoi(sc.Text()); err == nil {
					if last == 0 {
						close(first)
					}
					last = id
				}
			}
			committed <- last
		}()
		// Kill at a random moment after the first commit of this run (on a
		// loaded machine the first commit can take a while).
		select {
		case <-first:
		case <-time.After(time.Minute):
			t.Fatal("helper committed nothing in a minute")
		}
		time.Sleep(time.Duration(20+rng.IntN(200)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		last := <-committed
		cmd.Wait()

		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("after kill %d: %v", kill, err)
		}
		cells, err := s.Cells(ctx, Filter{})
		s.Close()
		if err != nil {
			t.Fatalf("after kill %d: %v", kill, err)
		}
		if len(cells) < last || len(cells) <= prev {
			t.Errorf("after kill %d: %d cells; %d were reported committed, %d before", kill, len(cells), last, prev)
		}
		prev = len(cells)
		for _, c := range cells {
			want := testCell(cpuProv, c.Cell.Shape, c.Cell.M, 12, c.Started)
			if !reflect.DeepEqual(nanFree([]result.CellResult{c}), nanFree([]result.CellResult{want})) {
				t.Fatalf("after kill %d: cell %s is not whole", kill, c.Cell.Shape)
			}
		}
		t.Logf("kill %d: %d whole cells", kill, len(cells))
	}
}
