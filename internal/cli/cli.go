// Package cli is tilefit's command line: one file per verb, flags in a local
// FlagSet, no logic beyond wiring the library packages together.
//
// Exit codes: 0 success; 1 a requested cell was not measured (sweep, scan,
// ab), or the run found failures that --fail-on-error asks to fail on; 2 bad usage or bad input (every error a user can cause), and
// any other error that stops a command; 130 interrupted.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/tilefit/tilefit/backend"
	"github.com/tilefit/tilefit/internal/interrupt"
	"github.com/tilefit/tilefit/internal/suggest"
	"github.com/tilefit/tilefit/kernel"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitFailures    = 1
	ExitUsage       = 2
	ExitInterrupted = interrupt.ExitCode
)

type verb struct {
	name    string
	summary string
	usage   string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// graceful verbs honour the first interrupt at their own boundaries
	// (sweep: between cells); the others stop at once.
	graceful bool
}

func verbs() []verb {
	return []verb{
		devicesVerb(),
		familiesVerb(),
		sweepVerb(),
		reportVerb(),
		abVerb(),
		selectVerb(),
		scanVerb(),
		serveVerb(),
		dbVerb(),
		versionVerb(),
	}
}

// exitError carries an exit code through an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failuresError makes the command exit 1 (a cell not measured;
// --fail-on-error).
func failuresError(format string, a ...any) error {
	return &exitError{code: ExitFailures, err: fmt.Errorf(format, a...)}
}

// RunWith runs tilefit with args (without the program name) and returns the
// exit code. reg holds the families and baselines, bes the backends: what
// the binary registered (tilefit.Builtin, plus a program's own); the
// process must have called MaybeServeWorker with the same registries
// first, since a sweep's worker processes are this binary.
func RunWith(ctx context.Context, reg *kernel.Registry, bes *backend.Registry, args []string, stdout, stderr io.Writer) int {
	ctx = withEnv(ctx, reg, bes)
	if len(args) == 0 {
		usage(stderr)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "--version", "-version":
		name, args = "version", append([]string{"version"}, args[1:]...)
	}
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if v, ok := lookup(args[1]); ok {
				v.run(ctx, []string{"--help"}, stdout, stderr)
				return ExitOK
			}
			fmt.Fprintf(stderr, "tilefit: unknown verb %q%s\n", args[1], verbSuggestion(args[1]))
			return ExitUsage
		}
		usage(stdout)
		return ExitOK
	}
	v, ok := lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "tilefit: unknown verb %q%s (try: tilefit help)\n", name, verbSuggestion(name))
		return ExitUsage
	}
	if !v.graceful {
		var cancel context.CancelFunc
		ctx, cancel = interrupt.Now(ctx)
		defer cancel()
	}
	err := v.run(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	}
	var ee *exitError
	code := ExitUsage
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case ctx.Err() != nil:
		// Interrupted in a step that has no interrupt message of its own
		// (opening the database, compiling, the device): still 130.
		code = ExitInterrupted
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "tilefit %s: %s\n", name, msg)
	}
	return code
}

// verbSuggestion is "; did you mean sweep?" for a mistyped verb name (by
// the flags' typo rule), else "".
func verbSuggestion(name string) string {
	var names []string
	for _, v := range verbs() {
		names = append(names, v.name)
	}
	if s := suggest.Closest(names, name); s != "" {
		return "; did you mean " + s + "?"
	}
	return ""
}

func lookup(name string) (verb, bool) {
	for _, v := range verbs() {
		if v.name == name {
			return v, true
		}
	}
	return verb{}, false
}

func usage(w io.Writer) {
	fmt.Fprint(w, "tilefit finds the fastest correct GEMM tile for each shape and token count.\n\nUsage: tilefit VERB [flags]\n\nVerbs:\n")
	vs := verbs()
	sort.Slice(vs, func(i, j int) bool { return vs[i].name < vs[j].name })
	for _, v := range vs {
		fmt.Fprintf(w, "  %-9s %s\n", v.name, v.summary)
	}
	fmt.Fprint(w, "\n\"tilefit help VERB\" or \"tilefit VERB --help\" describes a verb.\nExit codes: 0 ok, 1 a requested cell not measured, or failures (--fail-on-error), 2 bad usage or input, 130 interrupted.\n")
}

// flagSet is a verb's flags with its usage text.
type flagSet struct {
	*flag.FlagSet
	text string
	help io.Writer
	pos  []string // positional arguments, wherever they stood among the flags
}

// Args returns the positional arguments.
func (fs *flagSet) Args() []string { return fs.pos }

// NArg returns the number of positional arguments.
func (fs *flagSet) NArg() int { return len(fs.pos) }

// Arg returns the i'th positional argument, or "".
func (fs *flagSet) Arg(i int) string {
	if i < 0 || i >= len(fs.pos) {
		return ""
	}
	return fs.pos[i]
}

// newFlags returns the flags of verb v; --help prints text and the flags to
// help.
func newFlags(v string, text string, help io.Writer) *flagSet {
	fs := flag.NewFlagSet(v, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, text: text, help: help}
}

// parse parses args; flags may stand before or after positional arguments
// ("source gemm_f16 --backend cuda"), and "--" ends the flags. --help prints
// the usage and the flags (flag.ErrHelp, exit 0); a bad flag comes back as an
// exit-2 error naming the flag and pointing at the help.
func parse(fs *flagSet, args []string) error {
	var err error
	args = joinBoolWords(fs.FlagSet, args)
	for {
		if err = fs.Parse(args); err != nil {
			break
		}
		rest := fs.FlagSet.Args()
		if len(rest) == 0 {
			return checkEmpty(fs)
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			fs.pos = append(fs.pos, rest...)
			return checkEmpty(fs)
		}
		fs.pos = append(fs.pos, rest[0])
		args = rest[1:]
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(fs.help, fs.text)
		fmt.Fprintln(fs.help, "\nFlags:")
		fs.SetOutput(fs.help)
		fs.PrintDefaults()
		return err
	}
	return parseFlagError(fs.FlagSet, err)
}

// nonEmpty are the flags whose empty value is never meant: "--m ”" or
// "--source $UNSET" would otherwise silently mean the default.
var nonEmpty = map[string]bool{"m": true, "tiles": true, "source": true, "workload": true, "policy": true, "baseline": true, "db": true}

// checkEmpty refuses a nonEmpty flag given with an empty value.
func checkEmpty(fs *flagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && nonEmpty[f.Name] && f.Value.String() == "" {
			err = fmt.Errorf("--%s: empty value; leave the flag out for its default", f.Name)
		}
	})
	return err
}
