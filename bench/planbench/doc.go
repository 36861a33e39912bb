// Package planbench holds the Go benchmark of the per-block cost of
// cataloguing and planning (issue 19's target: catalog + plan at most 1 µs a
// block, so that a million blocks cost about a second):
//
//	go test -run '^$' -bench . -benchtime 5x ./bench/planbench
//
// It has no code of its own: only planbench_test.go, which drives the
// catalog store and the planner as `relayout plan` and `relayout run` do.
// Figures are per block (ns/block) and, for a shared and loaded machine,
// in CPU seconds of the process per operation (cpu-s/op).
package planbench
