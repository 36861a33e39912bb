// Package h5 turns HDF5 inputs into catalog arrays and blocks: plain HDF5
// files (every numeric dataset is a variable), ADIOS2 HDF5-engine files
// (/Step<N>/<name>), openPMD-HDF5 files and file-based series (meshes records
// and components per iteration), and relayout's own output directories (mapped
// back to variables through relayout.json).
//
// It uses internal/h5 (the HDF5 library) for metadata: the object tree,
// attributes, dataset geometry and the chunk list. Block bytes are read
// natively: Dataset.ReadBlock preads them and decodes the filter pipeline in Go
// (reader/blockio: deflate, shuffle, fletcher32, lzf, blosc). The one exception is
// the slow path of library.go: chunks of a dataset whose pipeline has any other
// filter (an HDF5 plugin: lz4, bzip2, zfp, ...) carry the codec
// catalog.HDF5LibraryCodec and are read by H5Dread of their region, one at a
// time under the library's lock, through at most 16 files kept open; Open refuses
// a filter the library does not have (H5Zfilter_avail), naming it and
// HDF5_PLUGIN_PATH. Every block's extent is checked against its file's size
// before it is emitted. OpenNetCDF4Member describes a netCDF-4 file for a
// stream of history files that reader/netcdf reads (its datasets, dimension
// scales, attributes and blocks, catalogued as here). It must not write anything.
//
// Concurrency: Open and Scan run on the caller's goroutine; Scan must not run
// concurrently with itself. ReadBlock is safe for concurrent use (also during
// Scan). At most a few HDF5 files are open for metadata at a time; block reads
// go through a bounded file pool.
package h5
