// Package calibrate measures the read latency and bandwidth of a directory
// for the planner's read-cost model (`relayout calibrate DIR`).
//
// It writes a scratch file of Options.Size bytes in the directory, fsyncs
// it, drops it from the page cache (posix_fadvise DONTNEED, which Linux
// honours for clean pages of local and most network file systems; tmpfs
// keeps them, so a tmpfs directory measures memory), then times:
//
//   - latency: Options.Samples preads of 4 KiB at random 4 KiB-aligned
//     offsets, one at a time (the median, so read-ahead hits and outliers do
//     not dominate); then as many by each of Options.Streams readers at once
//     (cache dropped again first): the overlap of random reads, their time
//     one at a time over the wall time together;
//   - reader bandwidth: one sequential pass over the whole file in 8 MiB
//     reads (cache dropped again first);
//   - aggregate bandwidth: Options.Streams readers each reading its own
//     contiguous part at once (cache dropped again first), total bytes over
//     wall time. From one node this is what one node can pull, a lower
//     bound of a parallel file system's aggregate;
//   - for the library read model (planner/libcost.go): random reads of 4 KiB
//     and of 256 KiB (trimmed means: the model sums many), fitted as
//     latency + size/bandwidth of a read that starts a stream; an 8-byte
//     read from the page cache (the cost of one call, median); a memory copy
//     in 512-byte rows (what a library pays copying out of its chunk cache
//     or sieve buffer); the page size; the first write to fresh memory (what
//     a reader's array costs it); how many cores several workers can
//     use at once and the share of a core one busy thread gets (a loaded
//     machine stretches a reader's work by its inverse).
//
// MeasureChunks (chunks.go) adds what a chunk read through HDF5's chunk
// cache costs a new reader process.
//
// The scratch files are removed whatever happens.
package calibrate
