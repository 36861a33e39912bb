// Package h5 turns HDF5 inputs into catalog arrays and blocks: plain HDF5
// files (every numeric dataset is a variable), ADIOS2 HDF5-engine files
// (/Step<N>/<name>), openPMD-HDF5 files and file-based series (meshes records
// and components per iteration), and relayout's own output directories (mapped
// back to variables through relayout.json).
//
// It uses internal/h5 (the HDF5 library) only for metadata: the object tree,
// attributes, dataset geometry and the chunk list. Block bytes are never read
// through HDF5: Dataset.ReadBlock preads them and decodes the filter pipeline in
// Go (reader/blockio). Every block's extent is checked against its file's size
// before it is emitted. It must not write anything.
//
// Concurrency: Open and Scan run on the caller's goroutine; Scan must not run
// concurrently with itself. ReadBlock is safe for concurrent use (also during
// Scan). At most a few HDF5 files are open for metadata at a time; block reads
// go through a bounded file pool.
package h5
