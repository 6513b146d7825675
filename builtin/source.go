package builtin

// This file holds the text the built-in families share beside their own
// source files, and how a family's Source is put together from them:
//
//   - src/cuda/ptx_common.cuh: the PTX wrappers of the mma.sync CUDA sources
//     (gemm_f16, gemm_stream, and the fused core fused_common.cu);
//   - src/cpu/f16_common.h: the portable fp16 ↔ fp32 conversions of the CPU
//     sources (gemm_f16, and the fused core fused_common.c).
//
// A family's Source is the whole text its backend compiles, these files
// included: that is what `tilefit families source NAME` prints and what an
// edited copy given to --source replaces, so a printed source compiles as it
// is, and a user's one-file family needs none of them.

import (
	_ "embed"
	"strings"
)

//go:embed src/cuda/ptx_common.cuh
var cudaPTXCommon string

//go:embed src/cpu/f16_common.h
var cpuF16Common string

// A srcFile is one file of a family's compiled text: its name (for #line)
// and its text.
type srcFile struct{ name, text string }

// ptxCommon is src/cuda/ptx_common.cuh.
func ptxCommon() srcFile { return srcFile{"ptx_common.cuh", cudaPTXCommon} }

// f16Common is src/cpu/f16_common.h.
func f16Common() srcFile { return srcFile{"f16_common.h", cpuF16Common} }

// joinSource is the text a family compiles: its prelude (defines the shared
// files need, e.g. NQ and NACC of the fused CUDA core), then each file in
// order, each after a #line directive so that compiler messages name the
// right file and line.
func joinSource(prelude string, files ...srcFile) string {
	var b strings.Builder
	b.WriteString(prelude)
	for _, f := range files {
		b.WriteString("\n#line 1 \"" + f.name + "\"\n")
		b.WriteString(f.text)
	}
	return b.String()
}
