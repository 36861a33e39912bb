// Package bp reads ADIOS BP5 and BP4 directories and BP3 files (ADIOS2's BP3
// engine and ADIOS 1.x, with or without NAME.bp.dir/ sub-files) natively,
// without any ADIOS or FFS library, and presents them as catalog arrays and
// blocks. BP5 (bp5.go, ffs.go) decodes the FFS format descriptions of mmd.0
// and the per-writer FFS records of md.0 itself, for either byte order and
// 32- or 64-bit writers; a BP5 directory whose md.idx header text was
// overwritten is recognised by its binary header fields and first record
// (DatasetInfo.Skipped then says "md.idx header damaged; detected by
// structure"), so no --format flag is needed.
//
// What it owns: the metadata formats (md.idx records, md.0 per-step indexes,
// the BP3 footer and whole-file index, characteristic sets), the mapping of
// ADIOS variables and attributes (plain or openPMD) to catalog arrays, and
// the writer rank of each block. Layout diagrams are at the top of bp4.go,
// bp3.go, openpmd.go and ranks.go; index.go parses what the two share:
//
//	characteristic set   u8 count | u32 length | (u8 id, payload)...
//	  0 value   1 min   2 max   3 u64 record offset   4 dims: u8 n, u16 len,
//	  n x (u64 count, u64 shape, u64 start)   6 u64 payload offset
//	  7 u32 sub-file   8 u32 time index (1-based)   9 bitmap  10 stats
//	  11 operator: str8 name, u8 type, dims, u16 len, len bytes (u64 raw
//	     size, u64 stored size, ...)   12 minmax: u16 n, min, max[, sub-blocks]
//
// What it must not do: decode block bytes itself (reader/blockio preads and
// decodes codecs, bzip2 and blosc included: a blosc block is the whole
// operator buffer, framed as its ADIOS2 version wrote it), read whole data files, or trust any
// offset, length or count before checking it against the bytes that exist.
// Malformed input ends in a *catalog.CorruptError (unwrapping to ErrCorrupt)
// that names the file and offset; unsupported content (operators other than bzip2 and blosc, mixed
// block kinds; BP5 operators are identified at Scan from the payload's
// operator header) wraps catalog.ErrUnsupported; variables relayout cannot move
// (local arrays, strings, complex, long double) are listed in
// DatasetInfo.Skipped with the reason, never dropped silently.
//
// Choices: min/max statistics are length-checked but not kept (the catalog
// has no place for them); each (variable, step) is one array; Block.Box is the block's
// (start, count) in the writer's dimension order, with Order ColMajor for
// Fortran/column-major writers (the rewriter transposes). Global values are
// 0-d arrays, local values 1-d arrays of one element per block, joined arrays
// get starts from the running sum of counts. Steps are 0-based in md.idx
// order (BP4) or time-index order (BP3); openPMD uses the iteration number
// (variable-based: each step's /data/snapshot). A file-based series
// (series.go) is a directory of BP datasets, opened and scanned up to
// GOMAXPROCS members at once and merged in order.
//
// Memory: Open walks the metadata step by step (BP4: one step's md.0 slice at
// a time; BP5: one writer's metadata block at a time; BP3: its one index) and keeps, per (variable, step), only where its
// index entry is (about 100 bytes), plus the attributes. Scan re-reads one
// index entry per array, so it holds one entry's blocks at a time, parsed
// into the memory of the previous entry's sets (the largest entry's sets stay
// allocated until Scan returns: ~270 bytes per block of it; BP3 caches
// the entry of the variable being emitted, which covers all its steps; BP5
// maps md.0 (blockio.Files.Map) and decodes the writer blocks of the
// array's step in place, once per array, the pages of a step let go once
// decoded; where md.0 cannot be mapped it re-reads them through a 32 MiB
// cache). Scan drops these caches when it returns: the
// dataset stays open for the rewrite, which reads payloads only.
//
// Concurrency: ReadBlock is safe for concurrent use; Open and Scan run on the
// caller's goroutine (a series' on workers of their own, one per member at
// a time, each holding its member's caches) and Scan must not run
// concurrently with itself.
package bp
