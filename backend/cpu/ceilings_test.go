package cpu

import (
	"context"
	"strconv"
	"testing"
)

// TestCeilings: the CPU measures a copy bandwidth and, with OpenBLAS, the
// vendor's matmul rate, in the CUDA backend's keys and units.
func TestCeilings(t *testing.T) {
	c := newCPU(t, Options{})
	ceil, err := c.Ceilings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v, err := strconv.ParseFloat(ceil["copy_gbps"], 64); err != nil || v <= 0 {
		t.Errorf("copy_gbps = %q", ceil["copy_gbps"])
	}
	d, _ := c.Device(context.Background())
	if d.Props["openblas"] == "" {
		if _, ok := ceil["vendor_tflops"]; ok {
			t.Errorf("vendor_tflops without OpenBLAS: %v", ceil)
		}
		t.Skip("OpenBLAS not installed: no vendor_tflops")
	}
	if v, err := strconv.ParseFloat(ceil["vendor_tflops"], 64); err != nil || v <= 0 || v > 1000 {
		t.Errorf("vendor_tflops = %q", ceil["vendor_tflops"])
	}
	t.Logf("ceilings %v", ceil)
}
