package report

import (
	"math"
	"strconv"
)

// ceilings reads a device record's measured ceilings: the vendor matmul rate
// ("vendor_tflops", TFLOP/s) and the copy bandwidth ("copy_gbps", bytes
// read + written per second, GB/s). ok is false unless both are there.
func ceilings(d *Device) (flops, bytesPerSec float64, ok bool) {
	if d == nil {
		return 0, 0, false
	}
	tf, err1 := strconv.ParseFloat(d.Props["vendor_tflops"], 64)
	gb, err2 := strconv.ParseFloat(d.Props["copy_gbps"], 64)
	if err1 != nil || err2 != nil || tf <= 0 || gb <= 0 {
		return 0, 0, false
	}
	return tf * 1e12, gb * 1e9, true
}

// floorUs is the roofline floor of one call of c on a device of the given
// ceilings, in µs: max(FLOPs / peak, bytes moved / bandwidth). NaN when the
// cell has no byte count.
func floorUs(c *Cell, flops, bytesPerSec float64) float64 {
	if c.Bytes <= 0 {
		return math.NaN()
	}
	return math.Max(c.FLOPs/flops, c.Bytes/bytesPerSec) * 1e6
}
