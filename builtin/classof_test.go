package builtin

import (
	"testing"
)

// TestRegistryClassOf: a tile's class from its parameters or, without
// them, from its display name (a family prefix stripped); an unknown
// family or tile is an error.
func TestRegistryClassOf(t *testing.T) {
	reg := New()
	fam := CUDAGemmWgmma()
	tile := fam.Reference
	p, err := fam.ParseTile(tile)
	if err != nil {
		t.Fatal(err)
	}
	want := fam.Class(p)
	for _, tc := range [][2]string{{p.String(), ""}, {"", tile}, {"", fam.Name + "/" + tile}} {
		got, err := reg.ClassOf("cuda", fam.Name, tc[0], tc[1])
		if err != nil || got != want {
			t.Errorf("ClassOf(%q, %q) = %q, %v; want %q", tc[0], tc[1], got, err, want)
		}
	}
	if _, err := reg.ClassOf("cuda", "nope", "", "1_2_3"); err == nil {
		t.Error("an unknown family has a class")
	}
	if _, err := reg.ClassOf("cuda", fam.Name, "", "not-a-tile"); err == nil {
		t.Error("an unparseable tile has a class")
	}
}
