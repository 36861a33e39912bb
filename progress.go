package main

import (
	"os"
	"runtime/debug"

	"golang.org/x/term"

	"relayout/rewriter"
)

// startProgress sets up relayout run's progress display (--progress) on
// stderr and returns the Monitor to pass to the rewriter with the function
// that ends the display. It also tells the Go runtime about the memory
// budget, so that garbage collection keeps the heap near what the rewriter
// charges to --max-mem (plus room for the catalog and the runtime).
func startProgress(mode string, quiet bool, maxMem int64) (*rewriter.Monitor, func(), error) {
	switch mode {
	case "auto":
		mode = "none"
		if !quiet && term.IsTerminal(int(os.Stderr.Fd())) {
			mode = "bar"
		}
	case "bar":
		if quiet {
			mode = "none"
		}
	case "json", "none":
	default:
		return nil, nil, usagef("run: --progress %q: want auto, bar, json or none", mode)
	}
	debug.SetMemoryLimit(maxMem + 48<<20)
	mon := rewriter.NewMonitor()
	return mon, rewriter.ShowProgress(mon, mode, os.Stderr), nil
}
