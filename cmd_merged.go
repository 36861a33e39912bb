package main

import (
	"github.com/spf13/pflag"

	"relayout/planner"
	"relayout/rewriter"
)

// mergeOptions checks run's --scope and --ranks-per-node (only meaningful
// with --layout merged, which the journaled --resume path does not write).
func mergeOptions(fs *pflag.FlagSet, o runOptions) (rewriter.MergeOptions, error) {
	var m rewriter.MergeOptions
	if o.layout != planner.Merged {
		if fs.Changed("scope") || fs.Changed("ranks-per-node") {
			return m, usagef("run: --scope and --ranks-per-node need --layout merged")
		}
		return m, nil
	}
	sc, err := planner.ParseScope(o.scope)
	if err != nil {
		return m, usagef("run: --scope: %v", err)
	}
	if o.rpn < 0 || (sc == planner.ScopeNode && o.rpn < 1) {
		return m, usagef("run: --scope node needs --ranks-per-node >= 1")
	}
	m.Scope, m.RanksPerNode = sc, o.rpn
	return m, nil
}
