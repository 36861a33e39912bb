// Package planner turns catalog geometry into a write plan: the output layout
// of each array (contiguous or chunked, and the chunk shape) and the write
// units ("slabs") the rewriter assembles and writes one at a time.
//
// It owns:
//   - geometry.go: N-dimensional box helpers (intersection, containment,
//     bounding box, exact-cover and disjointness checks) that everyone else
//     uses instead of ad-hoc index arithmetic;
//   - cluster.go, merge.go: merging a group of blocks into few exact cuboids
//     (the seed paper's Berger–Rigoutsos variant) per writer rank, per node or
//     globally;
//   - cost.go: the read-cost model (requests, bytes, time per read pattern and
//     reader count) and Auto, which picks a layout with it;
//   - layout.go, slabs.go: the layout flags and the rewriter's write units;
//   - level.go, holes.go: arrays chunked whatever was asked, with a note:
//     refined AMR levels (LevelLayout) and partly covered arrays that would
//     be contiguous (HoleLayout, unless --fill), so that holes cost nothing;
//   - sparse.go: which of those are sparse (holes that dwarf the data), the
//     work units over their touched chunks alone (SparseUnits) and the
//     bytes they store (SparseBytes);
//   - plan.go: the per-variable plan `relayout plan` prints (cuboid counts per
//     scope, chosen layout, costs before/merged/after), cached by a
//     fingerprint of each array's block geometry;
//   - svg.go: the `relayout inspect --svg` picture, returned as bytes.
//
// It is pure: no I/O, no cgo, and it imports only catalog. It must never
// import reader or rewriter. Every function is deterministic and safe for
// concurrent use.
//
// Concurrency: a call may run its own work on GOMAXPROCS workers, all joined
// before it returns (none outlives the call), with the serial path's
// results: the merge of a large array's groups (merge.go, from
// parallelMergeBlocks blocks), its cost predictions (plan.go's parallel,
// from parallelCostPieces pieces), and the global scope's count beside the
// merge of the plan's own scope (mergeScopes; planGeometry joins it with
// waitGlobal).
package planner
