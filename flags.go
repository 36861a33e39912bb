package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

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

// flagSetOf returns the flag set verb defines, built by the verb's own
// code exactly as dispatch runs it, which stops at parseFlags before
// parsing anything; ok is false for a verb without flags or an unknown one.
// docs_test.go checks every command the documentation states against it.
func flagSetOf(verb string) (fs *pflag.FlagSet, ok bool) {
	run, ok := commands[verb]
	if !ok {
		return nil, false
	}
	definingMu.Lock()
	defer definingMu.Unlock()
	defining = func(f *pflag.FlagSet) { fs = f }
	defer func() { defining = nil }()
	if err := run(context.Background(), nil); !errors.Is(err, errDefined) {
		return nil, false
	}
	return fs, fs != nil
}

// defining, set by flagSetOf, receives a verb's flag set in place of
// parsing it; errDefined then stops the verb.
var (
	definingMu sync.Mutex
	defining   func(*pflag.FlagSet)
	errDefined = errors.New("flags defined, not parsed")
)

// parseFlags parses args and turns pflag's errors into usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if defining != nil {
		defining(fs)
		return errDefined
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return errHelp
		}
		hint := flagSuggestion(fs, err)
		if hint == "" {
			hint = singleDash(fs, args)
		}
		return usagef("%s: %v%s", fs.Name(), err, hint)
	}
	return nil
}

// verboseFlag defines -v/--verbose on a verb that prints diagnostics
// beside its results (run, commit, verify): help says what it adds.
func verboseFlag(fs *pflag.FlagSet, v *bool, help string) {
	fs.BoolVarP(v, "verbose", "v", false, help)
}

// checkVerbosity refuses -q with -v: one asks for less, the other for more.
func checkVerbosity(verb string, quiet, verbose bool) error {
	if quiet && verbose {
		return usagef("%s: -q/--quiet and -v/--verbose ask for less and more: give one", verb)
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

// minMaxMem is the smallest --max-mem accepted before any work: a budget
// below it moves data a few hundred bytes per call (--max-mem 100 made
// 294,915 write calls for 2.3 MiB) and is almost always a missing unit.
// Budgets above it that cannot hold one work unit are refused by the job.
const minMaxMem = 64 << 10

// parseBudget parses a memory budget flag (--max-mem) of verb, refusing
// budgets below minMaxMem, with the size meant when a bare number was given.
func parseBudget(verb, flag, s string) (int64, error) {
	n, err := parseSize(s)
	if err != nil {
		return 0, usagef("%s: --%s %q: not a size (examples: 1GiB, 512MiB)", verb, flag, s)
	}
	if n < minMaxMem {
		hint := ""
		if t := strings.TrimSpace(s); strings.Trim(t, "0123456789") == "" {
			hint = fmt.Sprintf("; did you mean %sMiB?", t)
		}
		return 0, usagef("%s: --%s %s is %s%s (the least accepted is 64KiB)", verb, flag, s, plural(n, "byte"), hint)
	}
	return n, nil
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	if strings.HasSuffix(unit, "y") {
		return fmt.Sprintf("%d %sies", n, unit[:len(unit)-1])
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// suggest returns the candidates closest to s: those equal to it ignoring
// case first, else those within a small edit distance (about a third of
// its length), else those that contain s or that s contains (ignoring case);
// at most max, best first.
func suggest(s string, candidates []string, max int) []string {
	ls := strings.ToLower(s)
	var exact []string
	for _, c := range candidates {
		if strings.ToLower(c) == ls && c != s {
			exact = append(exact, c)
		}
	}
	if len(exact) > 0 {
		return exact[:min(len(exact), max)]
	}
	type scored struct {
		c string
		d int
	}
	var near []scored
	limit := max1(len([]rune(s))/3, 1) + 1
	if len(s) <= 2 {
		limit = 1
	}
	for _, c := range candidates {
		if d := editDistance(ls, strings.ToLower(c)); d <= limit {
			near = append(near, scored{c, d})
		}
	}
	if len(near) == 0 && len(ls) >= 2 {
		for _, c := range candidates {
			lc := strings.ToLower(c)
			if strings.Contains(lc, ls) || strings.Contains(ls, lc) && len(lc) >= 2 {
				near = append(near, scored{c, 100 + abs(len(lc)-len(ls))})
			}
		}
	}
	sort.SliceStable(near, func(i, j int) bool { return near[i].d < near[j].d })
	var out []string
	for _, n := range near {
		if len(out) == max {
			break
		}
		out = append(out, n.c)
	}
	return out
}

func max1(a, b int) int {
	if a > b {
		return a
	}
	return b
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}

// editDistance is the Levenshtein distance of a and b (by runes), with a
// transposition of neighbours counting one (Damerau's optimal string
// alignment): "paln" is one edit from "plan".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// didYouMean formats suggestions: "" or "; did you mean plan?" or
// "; did you mean B/x or b/x?".
func didYouMean(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return "; did you mean " + s[0] + "?"
	}
	return "; did you mean " + strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1] + "?"
}

// flagSuggestion names the flags of fs closest to an unknown one.
func flagSuggestion(fs *pflag.FlagSet, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return ""
	}
	if name := ne.GetSpecifiedName(); name != "" {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Deprecated == "" {
				names = append(names, f.Name)
			}
		})
		s := suggest(name, names, 3)
		for i := range s {
			s[i] = "--" + s[i]
		}
		return didYouMean(s)
	}
	if short := ne.GetSpecifiedShortnames(); short != "" {
		if f := fs.Lookup(short); f != nil { // -out for --out
			return "; did you mean --" + f.Name + "?"
		}
	}
	return ""
}

// jsonIndent is v as indented JSON with a final newline, without HTML
// escaping: every JSON document relayout prints or writes goes through it
// (or an Encoder with SetEscapeHTML(false)), so "<f8" is not "\u003cf8".
func jsonIndent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// singleDash suggests --name for the first "-name" in args that spells a
// long flag with one dash (pflag reads "-out" as -o -u -t).
func singleDash(fs *pflag.FlagSet, args []string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(name) > 1 && fs.Lookup(name) != nil {
			return "; did you mean --" + name + "?"
		}
	}
	return ""
}
