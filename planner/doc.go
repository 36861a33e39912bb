// Package planner turns catalog geometry into a write plan: the output layout
// of each array (contiguous or chunked, and the chunk shape) and the write
// units ("slabs") the rewriter assembles and writes one at a time.
//
// It is pure: no I/O, no cgo, no goroutines, and it imports only catalog.
// Every function is deterministic and safe for concurrent use. It must never
// import reader or rewriter.
package planner
