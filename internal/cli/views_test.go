package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tilefit/tilefit/result"
	"github.com/tilefit/tilefit/store"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestReportViews runs the report verb's formats on the select fixture's
// database: the HTML page, benchfmt, CSV with tags appended twice, and the
// Markdown with --plots linking the written figures.
func TestReportViews(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)

	html := filepath.Join(dir, "r.html")
	if code, _, stderr := runCLI(t, "report", "--db", db, "--format", "html", "--output", html); code != 0 {
		t.Fatalf("html: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `<table class="sortable" id="cells-`, `<img class="plot" src="data:image/svg`, "ALL BITWISE", "<script>"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}

	code, out, stderr := runCLI(t, "report", "--db", db, "--format", "benchfmt")
	if code != 0 {
		t.Fatalf("benchfmt: exit %d: %s", code, stderr)
	}
	if n := strings.Count(out, "\nBenchmarkTilefit/shape=Wout/n=2560/k=6144/m=256/op=gemm_f16/tile=64_128_2 8 "); n != 12 {
		t.Errorf("benchfmt: %d lines of Wout M=256 64_128_2, want 12 (one per sample):\n%s", n, out)
	}

	// CSV: a first run with tags, a second appended with another tag value.
	csvPath := filepath.Join(dir, "runs.csv")
	for _, run := range []string{"a", "b"} {
		args := []string{"report", "--db", db, "--format", "csv", "--tags", "run=" + run + ",host=dev", "--output", csvPath}
		if run == "b" {
			args = append(args, "--append")
		}
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("csv run %s: exit %d: %s", run, code, stderr)
		}
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatalf("the appended CSV does not parse: %v", err)
	}
	runs := map[string]int{}
	for _, r := range recs[1:] {
		runs[r[0]]++
		if r[0] == "run" {
			t.Error("a second header row was appended")
		}
	}
	if recs[0][0] != "run" || recs[0][1] != "host" || runs["a"] == 0 || runs["a"] != runs["b"] {
		t.Errorf("header %v, rows per run %v", recs[0][:3], runs)
	}

	// Markdown with plots in a folder beside the report: relative links to
	// files that exist.
	md := filepath.Join(dir, "out", "r.md")
	if err := os.Mkdir(filepath.Dir(md), 0o755); err != nil {
		t.Fatal(err)
	}
	plots := filepath.Join(dir, "out", "plots")
	if code, _, stderr := runCLI(t, "report", "--db", db, "--plots", plots, "--output", md); code != 0 {
		t.Fatalf("md --plots: exit %d: %s", code, stderr)
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+\.svg)\) \(\[PNG\]\(([^)]+\.png)\)\)`).FindAllStringSubmatch(string(text), -1)
	// chunk, ratio and one chart per shape (Wout, Walbe, Wsg).
	if len(links) != 5 {
		t.Fatalf("%d plot links in the Markdown, want 5:\n%s", len(links), text)
	}
	for _, l := range links {
		for _, p := range l[1:] {
			if !strings.HasPrefix(p, "plots/") {
				t.Errorf("link %s is not relative to the report", p)
			}
			if fi, err := os.Stat(filepath.Join(filepath.Dir(md), p)); err != nil || fi.Size() < 1000 {
				t.Errorf("linked plot %s: %v", p, err)
			}
		}
	}
	// A table is padded: every line of the per-cell table has one width.
	all := strings.Split(string(text), "\n")
	start := slices.IndexFunc(all, func(l string) bool { return strings.HasPrefix(l, "| shape ") && strings.Contains(l, "| fastest ") })
	if start < 0 {
		t.Fatalf("no per-cell table:\n%s", text)
	}
	width := utf8.RuneCountInString(all[start])
	rows := 0
	for _, line := range all[start:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		rows++
		if utf8.RuneCountInString(line) != width {
			t.Errorf("per-cell table line of width %d, the header's is %d: %q", utf8.RuneCountInString(line), width, line)
		}
	}
	if rows < 10 {
		t.Errorf("per-cell table of %d lines", rows)
	}
}

// TestServe starts tilefit serve on a free port of 127.0.0.1, reads its
// pages, checks that it answers only GET, and that the database file is
// unchanged by it.
func TestServe(t *testing.T) {
	dir := t.TempDir()
	db := selDB(t, dir)
	sum := func() [32]byte {
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr syncBuffer
	exit := make(chan int, 1)
	go func() {
		exit <- Run(ctx, []string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, pw, &stderr)
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() {
		t.Fatalf("serve printed nothing; stderr: %s", stderr.String())
	}
	m := regexp.MustCompile(`^tilefit serve: (http://127\.0\.0\.1:[0-9]+/) `).FindStringSubmatch(lines.Text())
	if m == nil {
		t.Fatalf("serve's first line: %q", lines.Text())
	}
	go io.Copy(io.Discard, pr) // the rest of its output
	base := m[1]
	client := &http.Client{Timeout: time.Minute}
	get := func(path string) (int, string, http.Header) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	code, index, hdr := get("")
	if code != 200 || !strings.Contains(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %v", code, hdr)
	}
	key := selProv.Key()
	if !strings.Contains(index, `href="run/`+key+`"`) {
		t.Errorf("the index does not link run %s:\n%s", key, index)
	}
	code, run, _ := get("run/" + key)
	if code != 200 || !strings.Contains(run, `id="prov-`+key+`"`) || !strings.Contains(run, "<img class=\"plot\"") {
		t.Errorf("GET /run/%s: %d\n%.500s", key, code, run)
	}
	// serve carries what the Markdown does: the whole chunk with its
	// intervals and verdicts (on the index too), the decisions with the
	// undecided count, the batch-invariance summary.
	interval := regexp.MustCompile(`[0-9]\.[0-9]{3} \[[0-9]\.[0-9]{3}, [0-9]\.[0-9]{3}\] (faster|slower|tie|undecided)`)
	if !strings.Contains(index, `id="chunk-0"`) || !interval.MatchString(index) {
		t.Errorf("the index lacks the whole chunk with its intervals")
	}
	for _, want := range []string{`id="chunk-0"`, `id="decision-counts-` + key + `"`, "undecided", "INVARIAN"} {
		if !strings.Contains(run, want) {
			t.Errorf("GET /run/%s lacks %q", key, want)
		}
	}
	if !interval.MatchString(run) {
		t.Errorf("GET /run/%s shows no comparison with its interval and verdict", key)
	}
	if code, _, _ := get("all"); code != 200 {
		t.Errorf("GET /all: %d", code)
	}
	if code, body, _ := get("run/0123456789abcdef"); code != 404 || !strings.Contains(body, "no run") {
		t.Errorf("GET of an unknown run: %d %s", code, body)
	}
	resp, err := client.Post(base, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", resp.StatusCode)
	}

	cancel()
	if code := <-exit; code != 0 {
		t.Errorf("serve stopped with exit %d: %s", code, stderr.String())
	}
	if sum() != before {
		t.Error("serve changed the database file")
	}
}

// The report of a candidate's kernel resources reaches the Markdown.
func TestReportResources(t *testing.T) {
	dir := t.TempDir()
	cells, _ := selFixture()
	for i := range cells {
		for j := range cells[i].Candidates {
			if c := &cells[i].Candidates[j]; c.Tile == "128_64_2" {
				c.Resources = map[string]int{result.ResRegs: 168, result.ResLocalBytes: 16, result.ResSharedBytes: 49152}
			}
		}
	}
	db := saveCells(t, filepath.Join(dir, "r.db"), cells)
	code, out, stderr := runCLI(t, "report", "--db", db)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !regexp.MustCompile("\\| `128_64_2` +\\| +168 \\| +16 \\| +49152 \\| +5 \\| +2 \\| +[0-9.]+ \\|").MatchString(out) {
		t.Errorf("no resources row for 128_64_2:\n%s", out)
	}
}

// saveCells stores cells in a new database at path.
func saveCells(t *testing.T, path string, cells []result.CellResult) string {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, c := range cells {
		if _, err := st.SaveCell(context.Background(), c); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
