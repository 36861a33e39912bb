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
//     not dominate);
//   - reader bandwidth: one sequential pass over the whole file in 8 MiB
//     reads (cache dropped again first);
//   - aggregate bandwidth: Options.Streams readers each reading its own
//     contiguous part at once (cache dropped again first), total bytes over
//     wall time. From one node this is what one node can pull, a lower
//     bound of a parallel file system's aggregate.
//
// The scratch file is removed whatever happens.
package calibrate
