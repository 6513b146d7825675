package tilefit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tilefit/tilefit/backend"
)

func TestMain(m *testing.M) {
	MaybeServeWorkerWith(Builtin())
	os.Exit(m.Run())
}

// TestBuiltinBackends: the binary's registry holds cpu and cuda, in that
// order, and refuses a second backend of either name.
func TestBuiltinBackends(t *testing.T) {
	reg := Builtin()
	if got := reg.Backends(); !slices.Equal(got, []string{"cpu", "cuda"}) {
		t.Fatalf("Builtin().Backends() = %v, want [cpu cuda]", got)
	}
	open := func(context.Context, int) (backend.Backend, error) { return nil, errors.New("none") }
	if err := reg.AddBackend("cpu", open); err == nil {
		t.Error("a second cpu backend was accepted")
	}
	if err := reg.AddBackend("a:b", open); err == nil {
		t.Error(`the backend name "a:b" was accepted (--tiles a:b:TILE could not name it)`)
	}
}

// TestUserBackend: a backend added to the registry is one the verbs know,
// with no list of names in the command layer: devices lists it (here one
// that never opens, and says why), and an unknown name is refused with the
// registered names.
func TestUserBackend(t *testing.T) {
	reg := Builtin()
	if err := reg.AddBackend("mine", func(context.Context, int) (backend.Backend, error) {
		return nil, errors.New("mine: no such device on this host")
	}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := RunWith(context.Background(), reg, []string{"devices", "--backend", "mine", "--measure=false"}, &stdout, &stderr); code != ExitOK {
		t.Fatalf("devices --backend mine: exit %d: %s", code, stderr.String())
	}
	if want := "mine: not available: mine: no such device on this host"; !strings.Contains(stdout.String(), want) {
		t.Errorf("devices --backend mine printed %q, want it to say %q", stdout.String(), want)
	}
	stdout.Reset()
	stderr.Reset()
	if code := RunWith(context.Background(), reg, []string{"sweep", "--backend", "tpu"}, &stdout, &stderr); code != ExitUsage {
		t.Fatalf("sweep --backend tpu: exit %d, want %d", code, ExitUsage)
	}
	if want := `unknown backend "tpu" (known: cpu, cuda, mine)`; !strings.Contains(stderr.String(), want) {
		t.Errorf("sweep --backend tpu said %q, want %q", stderr.String(), want)
	}
}

// TestOutsideModule builds examples/gemmbias — a module of its own that
// imports tilefit through its public packages, with a replace directive to
// this checkout — and runs its tests (the conformance suite on the user's
// family, a sweep through tilefit.RunWith in worker processes) the way an
// outside user would: GOWORK off, the module's own go.mod and go.sum as
// committed (-mod=readonly), nothing fetched (GOPROXY=off: the module cache
// has this module's dependencies).
func TestOutsideModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on the PATH: cannot build the outside module examples/gemmbias")
	}
	if testing.Short() {
		t.Skip("-short: not building the outside module examples/gemmbias")
	}
	dir := filepath.Join("examples", "gemmbias")
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=readonly"), "GOPROXY=off", "CGO_ENABLED=0")
	for _, args := range [][]string{{"vet", "./..."}, {"build", "-o", os.DevNull, "./cmd/biastune"}, {"test", "./..."}} {
		cmd := exec.Command(goBin, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
}

// TestOutsideModuleVersions: examples/gemmbias requires every module it
// shares with this one at this module's version, so that its go.sum stays
// complete when a dependency is upgraded here (update both go.mod files).
func TestOutsideModuleVersions(t *testing.T) {
	req := regexp.MustCompile(`(?m)^\s+(\S+) (v\S+)`)
	read := func(path string) map[string]string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, g := range req.FindAllStringSubmatch(string(b), -1) {
			m[g[1]] = g[2]
		}
		return m
	}
	main, ex := read("go.mod"), read(filepath.Join("examples", "gemmbias", "go.mod"))
	for mod, v := range ex {
		if w, ok := main[mod]; ok && w != v {
			t.Errorf("examples/gemmbias/go.mod requires %s %s, this module %s", mod, v, w)
		}
	}
	if len(ex) == 0 {
		t.Error("examples/gemmbias/go.mod requires nothing")
	}
}
