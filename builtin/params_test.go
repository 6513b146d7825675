package builtin

import (
	. "github.com/tilefit/tilefit/kernel"
	"reflect"
	"testing"
)

func TestParseParams(t *testing.T) {
	for _, fam := range New().Families() {
		for _, p := range fam.Space() {
			got, err := ParseParams(p.String())
			if err != nil || !reflect.DeepEqual(got, p) {
				t.Fatalf("%s: ParseParams(%q) = %v, %v; want %v", fam.Name, p.String(), got, err, p)
			}
		}
	}
	if p, err := ParseParams(""); err != nil || len(p) != 0 {
		t.Errorf("empty: %v, %v", p, err)
	}
	if p, err := ParseParams("TN=64,TM=-1"); err != nil || p["TM"] != -1 || p["TN"] != 64 {
		t.Errorf("unsorted, negative: %v, %v", p, err)
	}
	for _, bad := range []string{"TM", "TM=", "=4", "TM=4,,TN=2", "TM=x", "TM=1,TM=2"} {
		if _, err := ParseParams(bad); err == nil {
			t.Errorf("ParseParams(%q): no error", bad)
		}
	}
}
