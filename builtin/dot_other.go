//go:build !amd64

package builtin

// haveDotF16x8 is false off amd64: DotF16 runs its portable loop alone.
const haveDotF16x8 = false

func dotF16x8(a, b *byte, n int) (sum, mag float64) { panic("dotF16x8 without amd64") }
