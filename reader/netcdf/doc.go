// Package netcdf reads netCDF classic files (CDF-1 "classic", CDF-2 "64-bit
// offset", CDF-5 "64-bit data"; ../shared/specs/netcdf-classic.md) natively,
// in pure Go, and turns one file or a stream of history files into catalog
// arrays and blocks.
//
// It owns: the header parser (header.go: ParseHeader, every count, length,
// rank, dimension id, offset and size checked against the file size and for
// overflow before anything is allocated; damage is a *catalog.CorruptError
// naming the file and the offset of the bad field), the conversion of
// netCDF types and attributes to the catalog's (attrs.go), the dataset
// (dataset.go) and the ordering of a stream of history files (stream.go).
//
// What it emits: one catalog.Array per numeric variable (Step 0, Level 0,
// Var the netCDF name, DType big-endian as stored, Offset zeros, Attrs the
// variable's attributes, Fill its _FillValue or the netCDF default fill of
// its type). A fixed-size variable is one block at its begin. A record
// variable's first axis runs over the records of every file of the stream,
// in time order; each record of each file is one block (its slab, recsize
// bytes from the previous record's: the interleaved layout of history
// files). A file shorter than its header implies, whose missing bytes all
// belong to the last variable in file order (PnetCDF with NC_NOFILL leaves
// never-written tails unallocated), is read as netCDF-C reads it: the slab's
// part in the file is split into at most rank row-major boxes, the rest is
// a hole read as zeros (that array's Fill is zero), and DatasetInfo.Skipped
// says so. char (text) variables are arrays of catalog.Char (MPAS's xtime,
// E3SM's date_written), moved as bytes. Global attributes are DatasetInfo.Attrs (the first member's, for
// a stream); Format is "netcdf-classic" and each array's Source names the
// variant (CDF-1/2/5).
//
// A stream (Open with several files) is ordered by the record coordinate:
// the numeric variable named like the record dimension, else MPAS's text
// timestamps (xtime, xtime_start*); by file name when the files have none.
// Its times must increase strictly across files, and every member must
// define the same dimensions (the record dimension's length aside) and
// variables (type, dimensions); fixed-size variables are read from the
// first member. Which files form a stream (a folder, a glob, the stream
// prefix of their names: StreamPrefix) is package reader's decision.
//
// A member may be a netCDF-4 file (netcdf4.go): a NetCDF4Opener given to
// Open (reader/h5's) describes it in HDF5's terms, netcdf4Member puts it in
// the classic model, and it goes through the same checks; its blocks are
// its HDF5 chunks (their filters as codecs, a byteswap stage first where it
// stores the other byte order than the stream's arrays, big-endian when a
// member is classic) placed at its first record. Open reads its record
// coordinate and fixed values through the opener's Read (the HDF5 library);
// Scan still does no I/O.
//
// It must not write anything, import cgo, any netCDF or HDF5 library, or read
// block bytes itself beyond the header and the few bytes of record
// coordinates a stream is ordered by: Dataset.ReadBlock is a raw pread
// through reader/blockio. vsize is never trusted (sizes come from the
// dimensions).
//
// Concurrency: Open and Scan run on the caller's goroutine (Scan does no
// I/O); ReadBlock and the other blockio.Source methods are safe for
// concurrent use.
package netcdf
