package tune

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/kernel"
	"github.com/tilefit/tilefit/result"
)

// ProvenanceOf returns the provenance a sweep of cfg on device dev records
// its cells under (Sweep's Summary.Prov): with its Key, a caller can ask
// the store what is already measured before sweeping.
func ProvenanceOf(cfg Config, dev backend.Device) (result.Provenance, error) {
	if len(cfg.Families) == 0 {
		return result.Provenance{}, errors.New("sweep: no family")
	}
	op, err := cfg.Families[0].Operator.Typed(cfg.Types)
	if err != nil {
		return result.Provenance{}, err
	}
	var names, srcs []string
	for _, f := range cfg.Families {
		if f.Operator.Name != op.Name {
			return result.Provenance{}, fmt.Errorf("family %s computes %s, not %s: one cell holds one operator", f.Name, f.Operator.Name, op.Name)
		}
		names, srcs = append(names, f.Name), append(srcs, f.Source)
	}
	if cfg.Source != "" {
		if len(cfg.Families) > 1 {
			return result.Provenance{}, errors.New("sweep: an edited source applies to one family")
		}
		srcs[0] = cfg.Source
	}
	return provenance(dev, names, srcs, op), nil
}

// provenance is the provenance of families names with sources srcs
// computing op on dev.
func provenance(dev backend.Device, names, srcs []string, op *kernel.Operator) result.Provenance {
	return result.Provenance{Backend: dev.Backend, Device: dev.Name, Arch: dev.Arch, Compiler: dev.Compiler,
		Flags: dev.Flags, Driver: dev.Driver, Family: strings.Join(names, ","), SourceHash: result.SourceHash(strings.Join(srcs, "\x00")),
		Operator: op.Name, Types: op.Types()}
}
