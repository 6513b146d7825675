// Command biastune is tilefit with the gemm_bias_f16 family of
// examples/gemmbias registered beside the built-ins: what a user's own
// main looks like (docs/operators.md).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/tilefit/tilefit"
	"github.com/tilefit/tilefit/examples/gemmbias"
)

func main() {
	reg := tilefit.Builtin()
	if err := reg.Add(gemmbias.Family()); err != nil {
		fmt.Fprintln(os.Stderr, "biastune:", err)
		os.Exit(tilefit.ExitUsage)
	}
	os.Exit(tilefit.Main(context.Background(), reg, os.Args[1:], os.Stdout, os.Stderr))
}
