package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tilefit/tilefit/internal/input"
	"github.com/tilefit/tilefit/policy"
	"github.com/tilefit/tilefit/workload"
)

// readPolicy reads and validates the policy file at path (policy.ReadFile).
func readPolicy(ctx context.Context, path string) (policy.Policy, []byte, error) {
	return policy.ReadFile(ctx, path)
}

// parseMs parses a --m value: token counts separated by commas, by the rules
// of a workload file's m list (each in 1..workload.MaxM, none twice) and with
// the same wording.
func parseMs(flag, s string) ([]int, error) {
	items, err := input.SplitList(flag, s)
	if err != nil {
		return nil, err
	}
	ms := make([]int, len(items))
	for i, it := range items {
		m, err := strconv.Atoi(it)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, fmt.Errorf("%s: m[%d]: %s is out of range: M must be in 1..%d", flag, i, it, workload.MaxM)
		case err != nil:
			return nil, fmt.Errorf("%s: m[%d]: %q is not a number (want token counts M in 1..%d, separated by commas)", flag, i, it, workload.MaxM)
		}
		ms[i] = m
	}
	if _, err := (workload.Workload{}).WithMs(ms); err != nil {
		return nil, flagProblems(flag, err)
	}
	return ms, nil
}

// flagProblems prefixes every line of a validation error with the flag.
func flagProblems(flag string, err error) error {
	var ve *workload.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", flag, err)
	}
	lines := make([]string, len(ve.Problems))
	for i, p := range ve.Problems {
		lines[i] = flag + ": " + p.String()
	}
	return &flagError{msg: strings.Join(lines, "\n"), err: err}
}

type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }
