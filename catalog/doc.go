// Package catalog is relayout's shared, format-neutral vocabulary: datasets,
// arrays (one variable at one step and level), blocks (a stored piece of an
// array in a source file), the one interface every reader hands blocks out
// through (Source, source.go), element types, attributes, the output manifest,
// the digest algorithms of manifests and journals (Digest: sha256, blake3,
// xxh64, none) and the SQLite catalog store. Being imported by every package, it
// also holds Populate, which maps a large fresh allocation's pages in one
// call (a page fault costs 12–15 µs on the virtual machines measured).
//
// It must not import any other relayout package and does no data I/O other than
// the catalog database itself. Types are plain values; a Store is safe for use
// by one goroutine at a time per method call (database/sql serialises).
package catalog
