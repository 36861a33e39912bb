// Package verify checks a relayout output (the stage directory or OUT: one
// HDF5 file per variable and relayout.json) against its input, element by
// element, without any code of the writer.
//
// What it checks, per array of the input catalog (variable, step, level):
//
//   - the manifest names a dataset for it (or a constant record), with the
//     input's shape, offset and element type made little-endian, and the
//     HDF5 dataset has that type, shape and (chunked) chunk shape;
//   - output side: the dataset is read through the HDF5 library
//     (internal/h5's SlabReader: H5Dread of file-space hyperslabs into
//     row-major little-endian memory), band by band along dimension 0, so
//     the library, not relayout, finds contiguous, chunked, deflated and
//     virtual (merged, partly covered) data and unwritten chunks;
//   - input side: every block of the array is fetched from the reader
//     (catalog.Source.ReadBlocks: its decoded stored bytes; every read of
//     the input, whatever the path, is one call of run.readInput, fetch.go,
//     which checks each block's decoded size and times it) and each element
//     is placed by an index computation of this package (place.go; a
//     catalog.Source.ReadBlocks gets the blocks of a band read whole or by rows
//     in file order, a few lists of neighbours per band, so that many
//     small blocks cost few coalesced reads: batch.go; the arrays of one
//     step, level and shape, whose blocks interleave in the same file
//     regions, are verified as a joint group, the same band of every one
//     read in one pass (one ReadBlocks call over several arrays, joint.go), no byte read
//     through on behalf of another band; their small
//     blocks are placed, as they arrive, into the band's stage laid out
//     in output order, compared with the output front to back once all
//     are in: order.go): the stored shape, the valid region's corner inside it (ghost cells,
//     partial edge chunks), row- or column-major storage and the byte order
//     of the input type;
//   - every element of every block equals the output element at its global
//     index, bit for bit (NaN payloads included); overlapping blocks must
//     each agree with the output. Arrays whose blocks are disjoint and fit
//     the budget whole are first compared by a positional checksum
//     (checksum.go, quick.go): the output's and the input's row-major words
//     as the coefficients of a polynomial modulo 2^61-1, evaluated at a
//     point drawn at random for each check, each side summed in the order
//     it reads best (the output band by band, the input block by block in
//     file order, every array of a joint group in one pass), equal exactly
//     when every element is, but with a chance below 2^-30 an array that a
//     difference goes unseen. An array whose sums differ is compared
//     again element by element below, which reports the first
//     difference; Options.Exact skips the checksum. A Tap (tap.go,
//     Options.Tap) sums the input blocks while the rewrite reads them
//     (Tap.Source wraps the source the rewrite reads; a block counts only
//     when it is one of the catalog's kept blocks, each once), so that the check
//     reads only the blocks the rewrite did not read whole;
//   - holes (output elements no block covers) hold the fill value recorded
//     in the output dataset, and that fill value is the input's own (or a
//     NaN / zero when the input declares none);
//   - the digest of the output's row-major little-endian bytes, as read
//     through the library, equals the manifest's (of its options.digest,
//     catalog.Manifest.DigestKind: sha256, blake3, xxh64; none: nothing hashed);
//   - a sparse array (the manifest's digest_of "stored chunks") is checked
//     over chunks instead of bands (sparse.go): every chunk allocated (the
//     file's chunk index, internal/chunkindex) or touched by a block (its
//     own computation) compared as a band, one element of an unallocated
//     chunk read as the fill value, the digest over the allocated chunks
//     (catalog.DigestStoredChunks), nothing read over its holes;
//   - constant records: the group's value and shape attributes are the
//     input's, and the digest is that of the value repeated;
//   - AMR levels: the box table named by the manifest lists the input
//     level's boxes in global indices, and a refined level's openPMD
//     gridGlobalOffset is level 0's plus its index offset times its
//     gridSpacing;
//   - series.h5: every file it reads through exists and every virtual
//     dataset maps the whole same-path dataset of its variable's file.
//
// The first difference is reported as "DIFF <var> step <s> level <l> at
// [i,j,k]: in=… out=…" (indices relative to the array), the smallest
// row-major index that differs.
//
// What it shares: nothing with package rewriter (it must not import it,
// nor planner); it imports catalog (the vocabulary, the catalog store and
// the manifest) and internal/h5 (the HDF5 library), and fetches input
// blocks only through the catalog.Source it is given (or is handed them
// by it, through a Tap).
//
// Memory: one budget (Options.MaxMem) is shared by the arrays in flight
// (see Concurrency), each (each member of a joint group, whose bands may
// grow to a quarter of the group's shares) getting an equal share for its
// two output band buffers (one compared, one hashed) and the one read
// ahead (a joint group's members: two, the next band read once the last
// is hashed), the band's
// coverage bitmap (none when the blocks tile the array), the chunk cache
// of compressed chunked outputs (a row of chunks when bands lie inside
// one, so that each chunk is decoded once, while a quarter of the share is
// left to the input blocks; unfiltered chunks are read uncached, a chunk
// column at a time, into a scratch buffer of the library reader's:
// joint.go's chunkCaches)
// and the input blocks
// alive at once (and a band's stage of small blocks, order.go);
// raw row-major blocks are read only for the rows of the band, other
// blocks that span several bands are kept from their first band to their
// last.
//
// Concurrency: up to min(Options.Jobs, 4) arrays are verified at once (of
// one variable or the next ones; fewer when a share would fall below
// 32 MiB; a joint group takes a slot and a share per member, at most all
// of them: Limits.VerifySlots and VerifyShare, computed once by package
// limits from MaxMem and Jobs as the rewriter's limits are), so that the HDF5 reads of one array (one call at a time in the
// process: the library's global lock) overlap the input reads,
// comparisons and hashing of the others, and several arrays hash on
// several cores. Within an array, bands are read, compared and hashed as a
// pipeline (HDF5 reading band i+1 while band i is compared and band i-1
// hashed; a joint group's members read band i+1 once band i-1 is hashed,
// joint.go); Options.Jobs blocks are fetched and compared at once over all
// arrays. Lines are printed in catalog order, each variable's first
// difference that of its first array (step, level order) that differs.
// Progress is reported after every band.
//
// Digests: Check returns the digest (the manifest's algorithm) of every
// dataset verified whole,
// computed from the bytes read through the library (the one hash pass of
// a verified run: the writer then computes none, and commit skips its
// journal re-read), and what it read (Result.IO: the input Source's read
// counters over the check, the output bands' bytes and H5Dread calls).
package verify
