//go:build !unix

package cpu

import (
	"context"
	"os"
	"os/exec"
)

// runCompiler runs argv with the time limit only (no process groups or
// resource limits here).
func runCompiler(parent context.Context, o limits, argv []string, env []string, logFile *os.File) error {
	ctx, cancel := context.WithTimeout(parent, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	err := cmd.Run()
	if ctx.Err() != nil && parent.Err() == nil {
		return errCompileTimeout
	}
	return err
}
