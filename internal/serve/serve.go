// Package serve is tilefit serve's web server: the stored runs of a
// database as HTML pages (report.HTML), for this machine only, read-only,
// with a bounded number of renders and a cache of rendered pages per
// database version.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/report"
	"github.com/tilefit/tilefit/store"
	"github.com/tilefit/tilefit/tune"
)

// Host is the only host serve listens on and answers for (besides
// localhost).
const Host = "127.0.0.1"

// CheckAddr checks a listening address: Host:PORT (port 0 picks a free
// one).
func CheckAddr(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("--addr: want %s:PORT, got %q", Host, addr)
	}
	if host != Host {
		return "", "", fmt.Errorf("--addr: serve listens on %s only (the results are not for the network, and there is no authentication); got host %q", Host, host)
	}
	return host, port, nil
}

// Run serves h on ln until ctx ends, then shuts the server down (requests
// in flight get 5 s). It returns an error only when serving fails.
func Run(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// Handler's bounds: at most Renders pages are rendered at once and at
// most Waiting renders wait for a turn (more get 503 and a Retry-After);
// rendered pages are kept, per database version, up to CacheBytes.
const (
	Renders    = 2
	Waiting    = 16
	CacheBytes = 256 << 20
)

// Handler answers GET (and HEAD) requests for the index, one run and
// every run; it never writes to st. reg derives the numerics classes of an
// old database's candidates (tune.LoadReport), which notes is told once.
// It answers only requests addressed to
// 127.0.0.1 or localhost (a page of another site that a DNS rebinding
// points at 127.0.0.1 sends its own name as Host), renders a bounded
// number of pages at once, and renders a page once per database version
// (the page is kept; identical requests during a render wait for it).
func Handler(st *store.Store, reg *kernel.Registry, notes io.Writer) http.Handler {
	return newPageServer(st, reg, notes)
}

// pageServer is Handler's state.
type pageServer struct {
	st    *store.Store
	mux   *http.ServeMux
	slots chan struct{}
	group singleflight.Group

	mu      sync.Mutex
	waiting int
	cache   map[string]cachedPage
	size    int

	rendered       atomic.Int64 // pages rendered (for tests)
	active, maxAct atomic.Int32 // renders running, the most at once
}

type cachedPage struct {
	version string
	body    []byte
	used    time.Time
}

// errBusy: too many renders are waiting; errNotFound: no such run.
var errBusy = errors.New("serve is busy rendering other pages; retry in a moment")

type notFound struct{ msg string }

func (e notFound) Error() string { return e.msg }

func newPageServer(st *store.Store, reg *kernel.Registry, notes io.Writer) *pageServer {
	s := &pageServer{st: st, mux: http.NewServeMux(), slots: make(chan struct{}, Renders), cache: map[string]cachedPage{}}
	var noted sync.Once // the note on classes of an old database, said once
	input := func(ctx context.Context, f store.Filter) (report.Input, error) {
		in, note, err := tune.LoadReport(ctx, st, f, nil, reg)
		if note != "" {
			noted.Do(func() { fmt.Fprintln(notes, note) })
		}
		in.Title = "tilefit: " + st.Path()
		return in, err
	}
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		s.page(w, r, "index", func(ctx context.Context, out io.Writer) error {
			in, err := input(ctx, store.Filter{})
			if err != nil {
				return err
			}
			return report.HTMLIndex(out, in, func(key string) string { return "run/" + key })
		})
	})
	s.mux.HandleFunc("GET /all", func(w http.ResponseWriter, r *http.Request) {
		s.page(w, r, "all", func(ctx context.Context, out io.Writer) error {
			in, err := input(ctx, store.Filter{})
			if err != nil {
				return err
			}
			return report.HTML(out, in)
		})
	})
	s.mux.HandleFunc("GET /run/{key}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("key")
		s.page(w, r, "run/"+key, func(ctx context.Context, out io.Writer) error {
			in, err := input(ctx, store.Filter{ProvKey: key})
			if err != nil {
				return err
			}
			if len(in.Cells) == 0 {
				return notFound{fmt.Sprintf("no run with provenance key %q in %s", key, st.Path())}
			}
			in.Title = "tilefit run " + key
			return report.HTML(out, in)
		})
	})
	return s
}

// ServeHTTP refuses requests for another host, then routes.
func (s *pageServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !loopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("tilefit serve answers requests for %s or localhost only, not for host %q (a page of another site reaching it through DNS rebinding)", Host, r.Host), http.StatusForbidden)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// loopbackHost reports whether a request's Host names this machine's
// loopback: 127.0.0.1 or localhost, with or without a port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host == Host || strings.EqualFold(host, "localhost")
}

// page answers with the page key rendered by render, from the cache when
// the database's version has not changed since it was rendered.
func (s *pageServer) page(w http.ResponseWriter, r *http.Request, key string, render func(context.Context, io.Writer) error) {
	version, err := s.st.Version(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	c, ok := s.cache[key]
	if ok && c.version == version {
		c.used = time.Now()
		s.cache[key] = c
	}
	s.mu.Unlock()
	body := c.body
	if !ok || c.version != version {
		v, err, _ := s.group.Do(key+"\x00"+version, func() (any, error) { return s.render(key, version, render) })
		var nf notFound
		switch {
		case errors.As(err, &nf):
			http.Error(w, nf.msg, http.StatusNotFound)
			return
		case errors.Is(err, errBusy):
			w.Header().Set("Retry-After", "2")
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		body = v.([]byte)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	// The page carries its own style and script and loads nothing.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(body)
}

// render renders one page when a render slot is free (it waits for one,
// unless too many wait already) and keeps it in the cache. The render
// does not end with the request that started it: others may be waiting
// for the same page.
func (s *pageServer) render(key, version string, render func(context.Context, io.Writer) error) ([]byte, error) {
	s.mu.Lock()
	if c, ok := s.cache[key]; ok && c.version == version {
		// A render of this version finished since the caller looked.
		s.mu.Unlock()
		return c.body, nil
	}
	if s.waiting >= Waiting {
		s.mu.Unlock()
		return nil, errBusy
	}
	s.waiting++
	s.mu.Unlock()
	s.slots <- struct{}{}
	s.mu.Lock()
	s.waiting--
	s.mu.Unlock()
	defer func() { <-s.slots }()
	n := s.active.Add(1)
	for m := s.maxAct.Load(); n > m && !s.maxAct.CompareAndSwap(m, n); m = s.maxAct.Load() {
	}
	defer s.active.Add(-1)
	s.rendered.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var b bytes.Buffer
	if err := render(ctx, &b); err != nil {
		return nil, err
	}
	s.keep(key, version, b.Bytes())
	return b.Bytes(), nil
}

// keep stores a rendered page, dropping the least recently used pages
// while the cache holds more than CacheBytes.
func (s *pageServer) keep(key, version string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.cache[key]; ok {
		s.size -= len(old.body)
	}
	s.cache[key] = cachedPage{version: version, body: body, used: time.Now()}
	s.size += len(body)
	for s.size > CacheBytes && len(s.cache) > 1 {
		oldest := ""
		for k, c := range s.cache {
			if k != key && (oldest == "" || c.used.Before(s.cache[oldest].used)) {
				oldest = k
			}
		}
		s.size -= len(s.cache[oldest].body)
		delete(s.cache, oldest)
	}
}
