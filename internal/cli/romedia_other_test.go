//go:build !linux

package cli

import (
	"errors"
	"syscall"
)

const readOnlyMediaEnv = "TILEFIT_TEST_RO_DIR"

func readOnlyMediaAttr() *syscall.SysProcAttr { return nil }

func mountReadOnly(string) error { return errors.New("no mount namespaces here") }
