package main

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"relayout/job"
)

func TestParseBudget(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		msg  string // substring of the error; "" for success
	}{
		{"100", 0, "--max-mem 100 is 100 bytes; did you mean 100MiB?"},
		{"1", 0, "--max-mem 1 is 1 byte; did you mean 1MiB?"},
		{"10K", 0, "--max-mem 10K is 10240 bytes (the least"},
		{"abc", 0, `--max-mem "abc": not a size`},
		{"64KiB", 64 << 10, ""},
		{"1GiB", 1 << 30, ""},
		{"512M", 512 << 20, ""},
	} {
		n, err := parseBudget("run", "max-mem", c.in)
		if c.msg == "" {
			if err != nil || n != c.want {
				t.Errorf("%s: %d, %v; want %d", c.in, n, err, c.want)
			}
			continue
		}
		if !errors.Is(err, job.ErrUsage) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v; want a usage error containing %q", c.in, err, c.msg)
		}
	}
}

func TestSuggest(t *testing.T) {
	for _, c := range []struct {
		s     string
		cands []string
		want  []string
	}{
		{"paln", verbs, []string{"plan"}},
		{"rn", verbs, []string{"run"}},
		{"verfy", verbs, []string{"verify"}},
		{"frobnicate", verbs, nil},
		{"RHO", []string{"rho", "E/x"}, []string{"rho"}},
		{"e/X", []string{"E", "E/x", "E/y"}, []string{"E/x"}},
		{"chunk-shap", []string{"chunk-shape", "chunks", "out"}, []string{"chunk-shape", "chunks"}},
		{"Bx", []string{"B", "B/x", "E/x"}, []string{"B", "B/x"}},
	} {
		if got := suggest(c.s, c.cands, 3); !slices.Equal(got, c.want) {
			t.Errorf("suggest(%q) = %q, want %q", c.s, got, c.want)
		}
	}
	if d := editDistance("paln", "plan"); d != 1 {
		t.Errorf("a transposition is %d edits, want 1", d)
	}
	if got := didYouMean([]string{"a", "b", "c"}); got != "; did you mean a, b or c?" {
		t.Errorf("didYouMean: %q", got)
	}
}
