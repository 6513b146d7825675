package builtin

import "github.com/tilefit/tilefit/kernel"

// f16Table holds the float32 value of every fp16 bit pattern: this
// package's own read-only copy of kernel's table (kernel.F16Values), which
// DotF16 and the exact checks index directly.
var f16Table = kernel.F16Values()
