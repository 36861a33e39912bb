// Package blockio fetches and decodes the bytes of catalog blocks without
// going through any format library: a bounded pool of open files (Files), a
// positional read that checks every offset and length against the file size
// before allocating, and pure-Go decoders for the HDF5 filter pipeline stages
// relayout supports (deflate, shuffle, fletcher32, lzf, blosc) and the ADIOS2
// operators bzip2 and blosc (sub-package blosc: c-blosc1/c-blosc2 chunks and
// the ADIOS2 operator framing). A metadata file a reader decodes again and
// again can be mapped instead (Files.Map, read under Guarded, which turns a
// fault past the end of a file that shrank into a corruption error).
//
// It must not import cgo packages or format readers; it knows nothing about
// variables, only about (file, offset, length, codecs). Files and Source are
// safe for concurrent use: the pool is guarded by a mutex, reads use pread
// (os.File.ReadAt) so goroutines share descriptors, and at most Max files are
// open at once (a reader waits, honouring its context, when all are busy).
// Source implements catalog.Source for every format reader: coalesced runs,
// raw blocks read straight into their destinations (catalog.Reads.Into),
// prefetch hints, read counters.
package blockio
