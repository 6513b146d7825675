package policy

import (
	"path/filepath"
	"testing"
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
