package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func twoRule() Policy {
	return Policy{Version: Version, Family: "gemm_f16", Backend: "cpu", Baseline: "reference tile 64_128_2 everywhere",
		Default: "64_128_2",
		Shapes: []Shape{
			{Shape: "Wout", N: 2560, K: 6144, Calls: 48, Rules: []Rule{{Tile: "128_64_2", Below: 1504}, {Tile: "64_128_2"}}},
			{Shape: "Walbe", N: 48, K: 2560, Calls: 72, Rules: []Rule{{Tile: "16_64_1", Below: 768}, {Tile: "32_64_1", Below: 1983}, {Tile: "64_32_2"}}},
		}}
}

func TestLookup(t *testing.T) {
	p := twoRule()
	for _, c := range []struct {
		shape string
		m     int
		tile  string
		ok    bool
	}{
		{"Wout", 1, "128_64_2", true},
		{"Wout", 1503, "128_64_2", true},
		{"Wout", 1504, "64_128_2", true},
		{"Wout", 1 << 20, "64_128_2", true},
		{"Walbe", 767, "16_64_1", true},
		{"Walbe", 768, "32_64_1", true},
		{"Walbe", 1982, "32_64_1", true},
		{"Walbe", 1983, "64_32_2", true},
		{"other", 256, "64_128_2", true},
	} {
		tile, ok := p.Lookup(c.shape, c.m)
		if tile != c.tile || ok != c.ok {
			t.Errorf("Lookup(%q, %d) = %q, %v; want %q, %v", c.shape, c.m, tile, ok, c.tile, c.ok)
		}
	}
	p.Default = ""
	if tile, ok := p.Lookup("other", 256); ok || tile != "" {
		t.Errorf("Lookup of a shape without rules and no default = %q, %v; want \"\", false", tile, ok)
	}
	u := Uniform("gemm_f16", "cpu", "64_128_2")
	if tile, ok := u.Lookup("anything", 7); !ok || tile != "64_128_2" {
		t.Errorf("Uniform.Lookup = %q, %v", tile, ok)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Policy)
		want string
	}{
		{"version", func(p *Policy) { p.Version = 3 }, "version 3 not supported"},
		{"family", func(p *Policy) { p.Family = "" }, "family missing"},
		{"dup", func(p *Policy) { p.Shapes[1].Shape = "Wout" }, `shape "Wout" appears twice`},
		{"open middle", func(p *Policy) { p.Shapes[1].Rules[1].Below = 0 }, `"below" 0 must be > 768`},
		{"closed last", func(p *Policy) { p.Shapes[0].Rules[1].Below = 4096 }, `last rule must have no "below"`},
		{"decreasing", func(p *Policy) { p.Shapes[1].Rules[1].Below = 700 }, `"below" 700 must be > 768`},
		{"no rules", func(p *Policy) { p.Shapes[0].Rules = nil }, "no rules"},
		{"bad tile", func(p *Policy) { p.Shapes[0].Rules[0].Tile = `a"b` }, `tile "a\"b" missing or has characters`},
		{"bad shape", func(p *Policy) { p.Shapes[0].Shape = "W out" }, `shape "W out" has characters`},
	} {
		p := twoRule()
		p.Shapes = append([]Shape(nil), p.Shapes...)
		for i := range p.Shapes {
			p.Shapes[i].Rules = append([]Rule(nil), p.Shapes[i].Rules...)
		}
		c.edit(&p)
		err := p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate() = %v; want it to contain %q", c.name, err, c.want)
		}
	}
	p := twoRule()
	if err := p.Validate(); err != nil {
		t.Fatalf("valid policy: %v", err)
	}
}

func TestSaveLoad(t *testing.T) {
	p := twoRule()
	path := filepath.Join(t.TempDir(), "p.json")
	if err := Save(path, p); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Errorf("round trip changed the policy:\n%+v\n%+v", p, q)
	}
	var a, b bytes.Buffer
	Write(&a, p)
	Write(&b, q)
	if a.String() != b.String() {
		t.Error("Write is not deterministic")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(s), 0o644)
		return path
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.json"), "no such file"},
		{write("syntax.json", `{"version": 1,`), "decode"},
		{write("unknown.json", `{"version": 1, "family": "f", "backend": "cpu", "baseline": "", "shapes": [], "belw": 3}`), `unknown field "belw"`},
		{write("version.json", `{"version": 9, "family": "f", "backend": "cpu", "baseline": "", "shapes": []}`), "version 9 not supported"},
		{write("trailing.json", `{"version": 1, "family": "f", "backend": "cpu", "baseline": "", "shapes": []} {}`), "data after"},
	} {
		_, err := Load(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v; want %q", filepath.Base(c.path), err, c.want)
		}
	}
}

// TestParseLegacyPolicy: a policy file written before operators (its sweep
// records out_f16, as docs/results/h200-strata/h200-policy.json does) still loads; its
// provenance key is kept as written and matches the legacy key.
func TestParseLegacyPolicy(t *testing.T) {
	p, err := Load(filepath.Join("..", "docs", "results", "h200-strata", "h200-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Version != 1 || p.Sweep == nil || !p.Sweep.Legacy || p.Sweep.Types != "X=f16,W=f16,Y=f32" || p.Sweep.Key() != p.Provenance {
		t.Errorf("legacy policy: version %d sweep %+v key %s, provenance %s", p.Version, p.Sweep, p.Sweep.Key(), p.Provenance)
	}
	if tile, ok := p.Lookup("Wout", 1983); !ok || tile != "64_128_4" {
		t.Errorf("Lookup(Wout, 1983) = %s, %v", tile, ok)
	}
	if _, err := Parse([]byte(`{"version": 1, "family": "f", "backend": "cpu", "baseline": "", "shapes": [], "sweep": {"out_f16": "yes"}}`)); err == nil {
		t.Error("a bad out_f16 accepted")
	}
	if _, err := Parse([]byte(`{"version": 1, "family": "f", "backend": "cpu", "baseline": "", "shapes": [], "sweep": {"out_f16": true, "bogus": 1}}`)); err == nil {
		t.Error("an unknown sweep field accepted")
	}
}
