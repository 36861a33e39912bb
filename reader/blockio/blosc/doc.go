// Package blosc decodes Blosc-compressed buffers in pure Go: c-blosc1 chunks
// (format versions 1 and 2, as the HDF5 blosc filter 32001 and ADIOS2 2.7
// write them), c-blosc2 chunks (format versions 3 to 5, the extended 32-byte
// header with its filter pipeline and special-value chunks, as ADIOS2 >= 2.10
// writes them), and the framing ADIOS2's blosc operator puts around them.
//
// It owns the chunk parser (chunk.go), the filters undone after
// decompression (filters.go: byte shuffle, bit shuffle, delta; truncated
// precision needs no undoing), the BloscLZ decompressor (blosclz.go, written
// from the format), the codec dispatch to LZ4/LZ4HC (pierrec/lz4), Snappy
// (golang/snappy), Zlib (stdlib) and Zstd (klauspost/compress), and the
// ADIOS2 operator buffer (adios.go).
//
// It must not do I/O, import cgo or know about variables: callers pass the
// stored bytes and the decoded size they expect, and every size a header
// declares is checked against that expectation and against the buffer before
// anything is allocated, so hostile input allocates at most the expected
// size (plus per-block scratch of at most one block). Errors are a
// *catalog.CorruptError without a file (damaged input; blockio names the
// block's file and offset) or wrap catalog.ErrUnsupported (a valid
// feature relayout does not decode: lazy, variable-length-block or
// dictionary chunks, user-defined codecs and filters).
//
// Every function is safe for concurrent use; there is no shared mutable
// state apart from the zstd decoder, which is safe for concurrent DecodeAll.
package blosc
