package builtin

import "golang.org/x/sys/cpu"

// haveDotF16x8 reports whether dotF16x8 can run here (AVX2 and F16C; AVX
// implies the OS saves the YMM registers).
var haveDotF16x8 = cpu.X86.HasAVX2 && cpu.X86.HasF16C

// dotF16x8 returns Σ a[j]·b[j] and Σ|a[j]·b[j]| over the n fp16 elements
// at a and b, n a positive multiple of 8 (dot_amd64.s).
//
//go:noescape
func dotF16x8(a, b *byte, n int) (sum, mag float64)
