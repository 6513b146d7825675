//go:build tools

// Package tilefit pins the module's dependencies while packages are built
// up; see the packages for the code.
package tilefit

import (
	_ "github.com/ebitengine/purego"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/x448/float16"
	_ "go.yaml.in/yaml/v3"
	_ "golang.org/x/term"
	_ "modernc.org/sqlite"
)
