// Command biastune is tilefit with the gemm_bias_f16 families of
// examples/gemmbias (CPU and Hopper) registered beside the built-ins: what a user's own
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
	for _, f := range gemmbias.Families() {
		if err := reg.Add(f); err != nil {
			fmt.Fprintln(os.Stderr, "biastune:", err)
			os.Exit(tilefit.ExitUsage)
		}
	}
	os.Exit(tilefit.Main(context.Background(), reg, os.Args[1:], os.Stdout, os.Stderr))
}
