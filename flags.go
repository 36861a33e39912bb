package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// errHelp is returned after --help was printed (exit 0).
var errHelp = errors.New("help shown")

// newFlags makes a subcommand's flag set whose --help prints the synopsis,
// an example and the flags.
func newFlags(name, synopsis, example string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(os.Stdout, "Usage: %s\n\nExample:\n  %s\n\nFlags:\n%s\nExit codes: 0 success, 1 verification failed or partial, 2 bad input or usage, 130 interrupted.\n",
			synopsis, example, fs.FlagUsages())
	}
	return fs
}

// parseFlags parses args and turns pflag's errors into usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	return nil
}

// parseDims parses "64,64,64" or "4x4x4" into positive integers.
func parseDims(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == 'x' || r == 'X' })
	dims := make([]int64, len(fields))
	for i, f := range fields {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || v <= 0 {
			return nil, usagef("%q: dimensions must be positive integers like 64,64,64 or 4x4x4", s)
		}
		dims[i] = v
	}
	return dims, nil
}

// parseSize parses "1GiB", "512M", "1073741824".
func parseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v <= 0 {
		return 0, usagef("%q: not a size (examples: 1GiB, 512MiB, 1073741824)", s)
	}
	return int64(v * float64(mult)), nil
}
