// Package reader opens a simulation output of any supported format and
// presents it as a catalog.Source plus a stream of catalog arrays: Open
// detects the format (HDF5 / openPMD-HDF5 / Chombo files or directories, BP3
// files, BP4/BP5 directories, AMReX plotfiles, netCDF classic files,
// relayout output directories) and hands off to the format's sub-package;
// netCDF history files form streams (netcdf_open.go: a folder of them
// sharing one stream prefix, or a glob pattern given as the path, is one
// dataset whose record axis runs across the files, read by reader/netcdf,
// classic and netCDF-4 members alike, the netCDF-4 ones described by
// h5.OpenNetCDF4Member; a folder of several streams is refused listing
// them; a lone netCDF-4 file is reader/h5's); a folder that is none of them
// (folder.go) is a file-based BP series (bp.Series), or the one dataset it
// holds, or refused listing the datasets it holds; a path inside a dataset is
// refused naming the dataset. A BP dataset or AMReX plotfile whose index is
// too damaged to show its format by content is recognised by its files
// (bp.Shape, amrex.HasShape), and a format reader's damage error is reported
// as "this is a BP5 dataset but its md.idx is broken: <CorruptError>".
// Options.Vars selects variables by name or glob.
//
// Format quirks stay in the sub-packages (reader/h5); byte fetching and codec
// decoding are in reader/blockio. This package must not parse file contents
// beyond the few signature bytes format detection needs. Readers import
// catalog, each other and internal packages, never planner or rewriter
// (layering_test.go at the module root enforces it); reader/bp,
// reader/amrex, reader/netcdf and reader/blockio build with CGO_ENABLED=0.
//
// Concurrency: a Dataset's ReadBlock is safe for concurrent use; Scan runs on
// the caller's goroutine and must not run concurrently with itself.
package reader
