package cpu

import "github.com/tilefit/tilefit/backend"

// The CPU's device is the host: a problem's Verifier is the Go one
// (backend.HostVerifier over Run, embedded in problem).
var _ backend.Verifier = (*problem)(nil)
