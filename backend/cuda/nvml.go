package cuda

import (
	"fmt"
	"unsafe"

	"github.com/ebitengine/purego"
)

// NVML constants used here (nvml.h).
const (
	nvmlClockSM        = 1
	nvmlTemperatureGPU = 0
)

// nvml is libnvidia-ml.so.1 with one device handle. Its calls are
// thread-safe and need no CUDA context.
type nvml struct {
	*lib
	dev         uintptr
	errorString func(int32) string
}

// openNVML loads NVML and finds the device with PCI bus id busID (the CUDA
// device's), falling back to NVML index ordinal.
func openNVML(busID string, ordinal int) (*nvml, error) {
	l, err := openLib("NVML (libnvidia-ml.so.1)", []string{"libnvidia-ml.so.1", "libnvidia-ml.so"}, nil)
	if err != nil {
		return nil, err
	}
	req := []string{"nvmlInit_v2", "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByIndex_v2",
		"nvmlDeviceGetClockInfo", "nvmlDeviceGetTemperature", "nvmlErrorString"}
	opt := []string{"nvmlSystemGetDriverVersion", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetMaxClockInfo"}
	if err := l.resolve(req, opt); err != nil {
		return nil, err
	}
	n := &nvml{lib: l}
	purego.RegisterFunc(&n.errorString, l.syms["nvmlErrorString"])
	if err := n.check("nvmlInit_v2", n.call("nvmlInit_v2")); err != nil {
		return nil, err
	}
	h := new(uintptr)
	bus := cString(busID)
	err = n.check("nvmlDeviceGetHandleByPciBusId_v2", n.call("nvmlDeviceGetHandleByPciBusId_v2", uintptr(unsafe.Pointer(&bus[0])), uintptr(unsafe.Pointer(h))))
	if err != nil {
		if err2 := n.check("nvmlDeviceGetHandleByIndex_v2", n.call("nvmlDeviceGetHandleByIndex_v2", uintptr(ordinal), uintptr(unsafe.Pointer(h)))); err2 != nil {
			return nil, fmt.Errorf("%w; %w", err, err2)
		}
	}
	n.dev = *h
	return n, nil
}

func (n *nvml) check(call string, r uintptr) error {
	if int32(r) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", call, n.errorString(int32(r)))
}

// reading returns "sm_mhz=1980 temp_c=41", followed, where the driver
// reports them, by the board power and its enforced limit (NVML gives
// milliwatts) and the SM clock's maximum: " power_w=698 limit_w=700
// max_mhz=1980" — what the report reads the power state from (power-limited:
// clocks well under the maximum at the limit).
func (n *nvml) reading() (string, error) {
	mhz, temp := new(uint32), new(uint32)
	if err := n.check("nvmlDeviceGetClockInfo", n.call("nvmlDeviceGetClockInfo", n.dev, nvmlClockSM, uintptr(unsafe.Pointer(mhz)))); err != nil {
		return "", err
	}
	if err := n.check("nvmlDeviceGetTemperature", n.call("nvmlDeviceGetTemperature", n.dev, nvmlTemperatureGPU, uintptr(unsafe.Pointer(temp)))); err != nil {
		return "", err
	}
	s := fmt.Sprintf("sm_mhz=%d temp_c=%d", *mhz, *temp)
	// The optional readings: one that fails is left out, never the reading.
	mw, limit, top := new(uint32), new(uint32), new(uint32) // heap: C writes through them
	if n.has("nvmlDeviceGetPowerUsage") && n.call("nvmlDeviceGetPowerUsage", n.dev, uintptr(unsafe.Pointer(mw))) == 0 {
		s += fmt.Sprintf(" power_w=%d", (*mw+500)/1000)
	}
	if n.has("nvmlDeviceGetEnforcedPowerLimit") && n.call("nvmlDeviceGetEnforcedPowerLimit", n.dev, uintptr(unsafe.Pointer(limit))) == 0 {
		s += fmt.Sprintf(" limit_w=%d", (*limit+500)/1000)
	}
	if n.has("nvmlDeviceGetMaxClockInfo") && n.call("nvmlDeviceGetMaxClockInfo", n.dev, nvmlClockSM, uintptr(unsafe.Pointer(top))) == 0 {
		s += fmt.Sprintf(" max_mhz=%d", *top)
	}
	return s, nil
}

// driverVersion is the NVIDIA driver version, e.g. "580.82.07" ("" when
// unknown).
func (n *nvml) driverVersion() string {
	if !n.has("nvmlSystemGetDriverVersion") {
		return ""
	}
	buf := make([]byte, 96)
	if n.call("nvmlSystemGetDriverVersion", uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))) != 0 {
		return ""
	}
	return goString(&buf[0])
}
