package job

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"relayout/catalog"
)

// TestRunLogAndVerbose: a run's Log holds the catalog line, the done line
// and the summary (ending with the manifest's path) and no diagnostic;
// Verbose holds each variable's figures, the OK lines and the io: lines.
func TestRunLogAndVerbose(t *testing.T) {
	in := sample(t)
	out := filepath.Join(t.TempDir(), "out")
	var log, verbose bytes.Buffer
	env := Env{Log: &log, Verbose: &verbose, Verify: true, Jobs: 2, MaxMem: 64 << 20, Version: "test"}
	if err := Run(context.Background(), out, specOf(t, in, Spec{Readers: DefaultReaders}), env); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
	want := []string{"catalog: ", "done: ", "  written:   ", "  verified:  element by element: every element equals the input", "  manifest:  " + filepath.Join(out, "relayout.json")}
	if len(lines) != len(want) {
		t.Fatalf("log: %d lines, want %d:\n%s", len(lines), len(want), log.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("log line %d %q, want it to start with %q", i+1, lines[i], w)
		}
	}
	for _, re := range []string{`(?m)^E/x: 2 arrays, `, `(?m)^OK  E/x  `, `(?m)^io: read `, `(?m)^io: buffers peak `, `(?m)^io: verify read `, `(?m)^catalog: .* of block lists kept in memory`} {
		if !regexp.MustCompile(re).MatchString(verbose.String()) {
			t.Errorf("verbose: no line matching %s:\n%s", re, verbose.String())
		}
	}
}

// TestRouteLines: whole lines go by their prefix, however the writes cut
// them, from several goroutines at once.
func TestRouteLines(t *testing.T) {
	var main, other bytes.Buffer
	w := RouteLines(&main, &other, "OK ", "io: ")
	for _, p := range []string{"OK  a", "\nDIFF b\ni", "o: x\n", "OKAY\n", "io: y\nlast"} {
		if n, err := io.WriteString(w, p); n != len(p) || err != nil {
			t.Fatalf("write %q: %d, %v", p, n, err)
		}
	}
	if main.String() != "DIFF b\nOKAY\n" || other.String() != "OK  a\nio: x\nio: y\n" {
		t.Errorf("main %q, other %q", main.String(), other.String())
	}
	io.WriteString(w, "\n")
	if main.String() != "DIFF b\nOKAY\nlast\n" {
		t.Errorf("main %q after the last line ended", main.String())
	}
	main.Reset()
	other.Reset()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				io.WriteString(w, "OK  v\n")
				io.WriteString(w, "DIFF v\n")
			}
		}()
	}
	wg.Wait()
	if main.String() != strings.Repeat("DIFF v\n", 800) || other.String() != strings.Repeat("OK  v\n", 800) {
		t.Errorf("concurrent: main has %d bytes, other %d, want 800 lines each", main.Len(), other.Len())
	}
}

// TestSummarySparseRate: the summary's rate is of the bytes written, not
// of a sparse array's logical size (2^40 elements, a few chunks stored).
func TestSummarySparseRate(t *testing.T) {
	m := &catalog.Manifest{
		Report: &catalog.Report{Variables: []catalog.ReportVariable{{LogicalBytes: 8 << 40}}},
		IO:     &catalog.ManifestIO{WriteBytes: 2 << 20},
	}
	var w bytes.Buffer
	writeSummary(&w, t.TempDir(), m, 2*time.Second)
	if !strings.Contains(w.String(), "  written:   8192.0GiB of arrays") || !strings.Contains(w.String(), ", 1.0MiB/s") {
		t.Errorf("summary of 8 TiB logical, 2 MiB written in 2 s:\n%s", w.String())
	}
}
