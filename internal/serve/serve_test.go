package serve

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tilefit/tilefit/builtin"
	"github.com/tilefit/tilefit/internal/serve/servetest"
	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

// serveStore is a read-only store over a new database of n cells; save adds
// a cell through a writer.
func serveStore(t *testing.T, n int) (ro *store.Store, save func(result.CellResult)) {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "s.db")
	w, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	save = func(c result.CellResult) {
		t.Helper()
		if _, err := w.SaveCell(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i++ {
		save(servetest.Cell(fmt.Sprintf("S%d", i), 1+i))
	}
	ro, err = store.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	return ro, save
}

// TestServeRefusesOtherHosts (issue 18 item 6): serve answered any Host,
// so a page of another site, its name pointed at 127.0.0.1 (DNS
// rebinding), could read the results: curl -H 'Host: evil.example.com'
// http://127.0.0.1:PORT/all gave 200. Only 127.0.0.1 and localhost are
// answered now.
func TestServeRefusesOtherHosts(t *testing.T) {
	st, _ := serveStore(t, 2)
	h := Handler(st, builtin.New(), io.Discard)
	for host, want := range map[string]int{
		"evil.example.com":       http.StatusForbidden,
		"evil.example.com:8080":  http.StatusForbidden,
		"127.0.0.1.nip.io:8080":  http.StatusForbidden,
		"":                       http.StatusForbidden,
		"127.0.0.1:8080":         http.StatusOK,
		"127.0.0.1":              http.StatusOK,
		"localhost:8080":         http.StatusOK,
		"LocalHost:8080":         http.StatusOK,
		"[::1]:8080":             http.StatusForbidden,
		"localhost.evil.example": http.StatusForbidden,
	} {
		for _, path := range []string{"/", "/all"} {
			req := httptest.NewRequest("GET", "http://127.0.0.1"+path, nil)
			req.Host = host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != want {
				t.Errorf("GET %s with Host %q: %d, want %d", path, host, rec.Code, want)
			}
			if want == http.StatusForbidden && strings.Contains(rec.Body.String(), "S0") {
				t.Errorf("GET %s with Host %q: the refusal shows results", path, host)
			}
		}
	}
}

// TestServeBoundsRenders (issue 18 item 6): 200 parallel /all on a
// 900-cell database rendered 200 pages at once (4.19 GB RSS, 58 s
// latency). Renders are bounded now, and a page is rendered once per
// database version: parallel requests for it wait for the one render, and
// later ones get the kept page until a sweep stores a cell.
func TestServeBoundsRenders(t *testing.T) {
	st, save := serveStore(t, 3)
	s := newPageServer(st, builtin.New(), io.Discard)
	srv := httptest.NewServer(s)
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	parallel := func(paths ...string) {
		var wg sync.WaitGroup
		for i := 0; i < 40; i++ {
			for _, p := range paths {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if code, body := get(p); code != http.StatusOK {
						t.Errorf("GET %s: %d %.200s", p, code, body)
					}
				}()
			}
		}
		wg.Wait()
	}
	parallel("/all")
	if n := s.rendered.Load(); n != 1 {
		t.Errorf("40 parallel GET /all rendered %d pages, want 1", n)
	}
	if code, body := get("/all"); code != 200 || !strings.Contains(body, "S2") || s.rendered.Load() != 1 {
		t.Errorf("a later GET /all: %d, %d renders", code, s.rendered.Load())
	}
	save(servetest.Cell("Snew", 99))
	if _, body := get("/all"); !strings.Contains(body, "Snew") || s.rendered.Load() != 2 {
		t.Errorf("after a new cell: %d renders; the page shows it: %v", s.rendered.Load(), strings.Contains(body, "Snew"))
	}
	parallel("/", "/all", "/run/"+servetest.Prov.Key())
	if n := s.rendered.Load(); n != 4 {
		t.Errorf("%d renders after three pages asked 40 times each, want 4", n)
	}
	if m := s.maxAct.Load(); m > Renders {
		t.Errorf("%d renders ran at once, over the bound %d", m, Renders)
	}
	if code, _ := get("/run/0123456789abcdef"); code != http.StatusNotFound {
		t.Errorf("unknown run: %d", code)
	}
}
