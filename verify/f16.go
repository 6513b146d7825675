package verify

import "github.com/x448/float16"

func f16bits(f float32) uint16 { return float16.Fromfloat32(f).Bits() }
