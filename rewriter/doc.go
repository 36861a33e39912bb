// Package rewriter executes the plan: for every variable of a catalog it
// assembles slabs from the input blocks, writes one read-optimized HDF5 file
// per variable, records a manifest, moves the result into place (Commit) and
// proves that every element arrived (Verify).
//
// # Output
//
// Variable v goes to <stage>/<name>.h5, where name is v with leading and
// trailing "/" dropped, "/" replaced by "." and every byte outside
// [A-Za-z0-9._-] replaced by "_" ("B/x" -> "B.x.h5", "a b" -> "a_b.h5"); a
// name that would be empty or start with "." gets a "_" prefix; a name already
// taken by an earlier variable (in sorted order) gets "-2", "-3", ... before
// ".h5". Array (v, step, level) is the dataset /data/<step>/meshes/<v>, with
// "_lvl<level>" appended for level > 0 (empty and "." components of v are
// dropped, ".." becomes "_.."). Data is little-endian, row-major, unfiltered,
// contiguous or chunked (planner.ChooseLayout). Attributes: the array's on
// its dataset, the step's on /data/<step>, the input's root attributes plus
// relayout_version and relayout_source on "/". relayout.json (the manifest)
// lists every dataset with the sha256 of its row-major little-endian bytes.
//
// # Durability
//
// A file is written as <stage>/.<name>.h5.tmp, synced once, then renamed; the
// manifest is written last, also through a synced temporary file. Commit
// renames the files into the output directory and the manifest last, and
// never overwrites.
//
// # Concurrency
//
// Variables and arrays are written one after another. Within an array, up to
// Options.Jobs goroutines assemble slabs (reading blocks through the
// catalog.Source, which is safe for concurrent use); a single goroutine takes
// the slabs in order to hash and write them, so HDF5 (one global lock) is only
// called from one goroutine at a time. About 2*Jobs slabs of at most
// MaxMem/(2*Jobs) bytes are alive at once. Cancelling the context stops the
// pipeline; a failed Run leaves no partial file under a final name.
//
// The package must not parse input formats (readers do, through
// catalog.Source) and calls HDF5 only through internal/h5.
package rewriter
