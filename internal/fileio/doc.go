// Package fileio is the one way relayout opens an input file: every format
// reader, the block pool of reader/blockio and internal/h5 (before it hands a
// path to H5Fopen) go through Open or CheckRegular, so a FIFO never blocks,
// only regular files (or symlinks to them) are read, and names taken from
// metadata stay inside the dataset root (InsideRoot). It sits in internal/ so
// that both the readers and internal/h5 can use it (layering_test.go).
//
// Pure Go (no cgo); no state, safe for concurrent use.
package fileio
