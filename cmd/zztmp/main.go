package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/tilefit/tilefit/kernel"
)

func main() {
	r := kernel.Builtin()
	for _, list := range os.Args[1:] {
		for _, t := range strings.Split(list, ",") {
			fam, tile := "gemm_f16", t
			if i := strings.Index(t, "/"); i >= 0 {
				fam, tile = t[:i], t[i+1:]
			}
			f, err := r.Lookup("cuda", fam)
			if err != nil {
				fmt.Println(t, err)
				continue
			}
			p, err := f.ParseTile(tile)
			if err != nil {
				fmt.Println(t, err)
				continue
			}
			if f.Name == "gemm_wgmma" {
				fmt.Println(t, "stages", kernel.WgmmaStages(p), "smem", kernel.WgmmaSharedBytes(p))
			}
		}
	}
	fmt.Println("checked")
}
