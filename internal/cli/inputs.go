package cli

import (
	"context"

	"github.com/tilefit/tilefit/policy"
)

// readPolicy reads and validates the policy file at path (policy.ReadFile).
func readPolicy(ctx context.Context, path string) (policy.Policy, []byte, error) {
	return policy.ReadFile(ctx, path)
}
