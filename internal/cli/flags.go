package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tilefit/tilefit/internal/suggest"
)

// joinBoolWords rewrites "--vendor false" (a boolean flag followed by the
// bare word true or false) as "--vendor=false", which the flag package
// otherwise reads as --vendor (true) and a positional argument "false".
// Values of other flags ("--tiles true") and everything after "--" are left
// alone. args is not modified.
func joinBoolWords(fs *flag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		name, ok := flagName(a)
		if !ok || strings.Contains(name, "=") {
			continue
		}
		f := fs.Lookup(name)
		if f == nil || i+1 == len(args) {
			continue
		}
		if isBool(f) {
			if w := args[i+1]; w == "true" || w == "false" {
				out[len(out)-1] = a + "=" + w
				i++
			}
			continue
		}
		// A flag that takes a value: its value is not a flag.
		out = append(out, args[i+1])
		i++
	}
	return out
}

// flagName returns the name of a flag argument ("-x", "--x", "--x=v"), or
// false when a is not one.
func flagName(a string) (string, bool) {
	switch {
	case len(a) < 2 || a[0] != '-' || a == "--":
		return "", false
	case strings.HasPrefix(a, "--"):
		return a[2:], true
	}
	return a[1:], true
}

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// parseFlagError rewrites an error of flag.FlagSet.Parse for a user: an unknown
// flag says so with the closest known name ("unknown flag --workolad; did
// you mean --workload?"); every message points at the verb's help.
func parseFlagError(fs *flag.FlagSet, err error) error {
	const undefined = "flag provided but not defined: "
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, undefined); ok {
		name = strings.TrimLeft(name, "-")
		msg = "unknown flag --" + name
		if s := suggestFlag(fs, name); s != "" {
			msg += "; did you mean --" + s + "?"
		}
	}
	return fmt.Errorf("%s (see: tilefit help %s)", msg, fs.Name())
}

// suggestFlag returns the flag of fs closest to name when it is a likely
// typo (suggest.Closest), else "".
func suggestFlag(fs *flag.FlagSet, name string) string {
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return suggest.Closest(names, name)
}

// deprecatedFlag registers old as an alias of flag new: it sets new's value
// and warns on warn that old is deprecated. The alias is listed in --help
// as deprecated.
func deprecatedFlag(fs *flag.FlagSet, warn io.Writer, old, new string) {
	fs.Func(old, "deprecated: use --"+new, func(v string) error {
		fmt.Fprintf(warn, "tilefit %s: warning: --%s is deprecated; use --%s %s\n", fs.Name(), old, new, v)
		return fs.Set(new, v)
	})
}

// flagSubset registers the shared sweep flags except those in skip (they go
// to a sink FlagSet no one parses).
type flagSubset struct {
	*flag.FlagSet
	skip map[string]bool
	sink *flag.FlagSet
}

func newFlagSubset(fs *flag.FlagSet, skip ...string) flagSubset {
	m := map[string]bool{}
	for _, s := range skip {
		m[s] = true
	}
	return flagSubset{FlagSet: fs, skip: m, sink: flag.NewFlagSet("unused", flag.ContinueOnError)}
}

func (f flagSubset) to(name string) *flag.FlagSet {
	if f.skip[name] {
		return f.sink
	}
	return f.FlagSet
}

func (f flagSubset) StringVar(p *string, name, value, usage string) {
	f.to(name).StringVar(p, name, value, usage)
}
func (f flagSubset) IntVar(p *int, name string, value int, usage string) {
	f.to(name).IntVar(p, name, value, usage)
}
func (f flagSubset) DurationVar(p *time.Duration, name string, value time.Duration, usage string) {
	f.to(name).DurationVar(p, name, value, usage)
}
func (f flagSubset) Uint64Var(p *uint64, name string, value uint64, usage string) {
	f.to(name).Uint64Var(p, name, value, usage)
}
func (f flagSubset) BoolVar(p *bool, name string, value bool, usage string) {
	f.to(name).BoolVar(p, name, value, usage)
}
