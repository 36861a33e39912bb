// Package h5 is relayout's only cgo package: a thin layer over the HDF5 C
// library (1.10.8, via gonum.org/v1/hdf5 for files, groups and dataset handles,
// and direct C calls for everything gonum lacks).
//
// Build: the files that call the library are //go:build cgo; types.go holds
// the plain types both builds share, and stub.go (//go:build !cgo) gives
// every other name with the same signature, failing with an error that
// wraps catalog.ErrUnsupported ("relayout was built without cgo: HDF5
// unavailable"), so that the whole module builds and vets with
// CGO_ENABLED=0 (make test checks it); such a binary catalogs and plans
// non-HDF5 inputs, but fails on whatever reads or writes HDF5 (the output
// included). The package's tests are cgo-only but stub_test.go.
//
// Read side (File): the object tree, attributes, dataset geometry (type, shape,
// layout, chunk shape, filters, fill value, contiguous data address, object
// header address) and the chunk list, so that readers can fetch data bytes
// themselves with pread. Write side (Writer): creates the output file's
// metadata — contiguous datasets with their space allocated up front and never
// written by HDF5 (the caller pwrites the data at Address() after Close), or
// chunked datasets filled with whole raw chunks through H5Dwrite_chunk — and
// attributes.
//
// It must not decode or move bulk data itself (no hyperslab reads/writes; ReadRaw
// exists only for tiny compact datasets), with two documented exceptions: the
// slow path File.ReadRegion, H5Dread of one chunk's region for datasets whose
// filter pipeline has a filter relayout does not decode natively (HDF5 plugin
// filters found via HDF5_PLUGIN_PATH; FilterAvailable checks them), and
// verification's SlabReader (hyperslab.go), H5Dread of file-space
// hyperslabs of a written dataset, so that package verify sees the output
// as every HDF5 reader does, through the library and nothing of relayout's
// own. It must not import any relayout package other than catalog and
// internal/fileio (Open checks a file under fileio's discipline before
// the library opens it by name).
//
// Addresses returned (DatasetInfo.Address, Chunk.Address) are absolute file
// offsets: HDF5's relative addresses plus the user-block size.
//
// Concurrency: the Debian HDF5 build is thread-safe with one global lock, so
// HDF5 calls never run in parallel. Each File and Writer also has its own
// mutex, so they may be shared between goroutines; callbacks (Walk, Chunks)
// run without that mutex held. HDF5 keeps its error stack per OS thread, so
// every call sequence runs with the goroutine locked to its thread (pin) to
// report the library's own message and to keep HDF5 from printing to stderr.
// Since only HDF5 mallocs, and one call at a time, the process's C heap is
// kept to one malloc arena (set at load time, h5.go): per-thread arenas
// only kept freed chunk buffers resident.
//
// Damage is a *catalog.CorruptError ("hdf5: <file>: [offset <n>: ]<object>:
// <what> (<hdf5 message>): corrupt input"); other errors follow "h5: <file>:
// <object>: <what> (<hdf5 message>): <sentinel>", wrapping
// catalog.ErrNotFound or ErrUnsupported.
package h5
