package tune

import (
	"context"
	"fmt"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/workload"
)

// CheckDevice validates the workload's buffers against half the device
// memory (a cell holds its input sets twice: generated, and in the problem).
func CheckDevice(ctx context.Context, ex Executor, w workload.Workload, reg *kernel.Registry) (backend.Device, error) {
	dev, err := ex.Device(ctx)
	if err != nil {
		return dev, err
	}
	if dev.Memory > 0 {
		if err := w.Validate(workload.Options{MaxBytes: dev.Memory / 2, Operators: reg}); err != nil {
			return dev, fmt.Errorf("workload %s on %s: %w", w.Name, dev.Name, err)
		}
	}
	return dev, nil
}
