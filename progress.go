package main

import (
	"os"

	"golang.org/x/term"

	"relayout/rewriter"
)

// startProgress sets up relayout run's progress display (--progress) on
// stderr and returns the Monitor to pass to the rewriter with the function
// that ends the display.
func startProgress(mode string, quiet bool) (*rewriter.Monitor, func(), error) {
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
	mon := rewriter.NewMonitor()
	return mon, rewriter.ShowProgress(mon, mode, os.Stderr), nil
}
