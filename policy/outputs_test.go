package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/tilefit/tilefit/internal/outpath"
)

// TestPolicyPath: without --policy-out the policy goes beside the
// selector code (with --emit or --emit-dir), else where --policy-out says.
func TestPolicyPath(t *testing.T) {
	dir := filepath.Join("out", "sel")
	for _, tc := range []struct {
		o    Outputs
		want string
	}{
		{Outputs{PolicyOut: "policy.json", EmitDir: dir}, "policy.json"},
		{Outputs{PolicyOut: "policy.json", EmitDir: dir, Kinds: []string{EmitCKind}}, filepath.Join(dir, "policy.json")},
		{Outputs{PolicyOut: "policy.json", EmitDir: dir, EmitDirGiven: true}, filepath.Join(dir, "policy.json")},
		{Outputs{PolicyOut: "p.json", PolicyOutGiven: true, EmitDir: dir, Kinds: []string{EmitCKind}}, "p.json"},
		{Outputs{PolicyOut: "", EmitDir: dir, Kinds: []string{EmitCKind}}, ""},
	} {
		if got := tc.o.PolicyPath(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.o, got, tc.want)
		}
	}
}

// TestCheckWherePolicyLands: the policy file is checked where it is
// written — in the emit folder when --policy-out was not given — so a
// database named policy.json there is refused, not overwritten (issue 18,
// item 1).
func TestCheckWherePolicyLands(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(db, []byte("SQLite format 3\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range []Outputs{
		{PolicyOut: "policy.json", EmitDir: dir, EmitDirGiven: true},
		{PolicyOut: "policy.json", EmitDir: dir, EmitDirGiven: true, Kinds: []string{EmitJSONKind}},
	} {
		err := o.Check(outpath.Database(db))
		if !errors.Is(err, outpath.ErrProtected) {
			t.Errorf("%+v: %v, want the database refused", o, err)
		}
	}
	if err := (Outputs{PolicyOut: "policy.json", EmitDir: t.TempDir(), EmitDirGiven: true}).Check(outpath.Database(db)); err != nil {
		t.Errorf("another folder: %v", err)
	}
}
