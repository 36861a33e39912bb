// Package chombo turns Chombo AMR HDF5 files (plot files and checkpoints, as
// written by Chombo's WriteAMRHierarchyHDF5 and LevelData writers) into
// catalog arrays and blocks. A directory of Chombo files of one dimension is
// a time series whose steps are the files' "iteration" attributes (or the
// first number in the file name).
//
// What it emits: one catalog.Array per (component, step, level). Components
// of "data:datatype=0" are named by the root component_<c> attributes;
// checkpoint data sets "<name>:datatype=0" are one variable when they hold one
// component, and take the root's "x<name>", "y<name>", "z<name>" names (else
// "<name>_<c>") when they hold several. Axes, Offset, Fill, Boxes and block
// conventions are those of reader/amrex: (i, j[, k]) = (x, y[, z]) order,
// Order ColMajor (Chombo stores each box's components one after the other,
// each in Fortran order), Offset and Shape the level's prob_domain on every
// level (a finer level's is the level-0 domain refined by the cumulative
// ratio: the openPMD mesh-refinement layout, sparse where the level has no
// box), NaN fill, and Stored/StoredLower for
// boxes stored with outputGhost ghost cells. Block.Offset is the dataset's
// file address plus the component's element offset (data:offsets=0[b] +
// c × points) × element size; Rank comes from the Processors dataset. Attrs
// carry dx (per dimension), ref_ratio (to the next coarser level; Chombo's own
// attribute points to the next finer one), dt and time.
//
// It uses internal/h5 for metadata only (attributes, the boxes and offsets
// datasets, the data dataset's address); block bytes are pread by
// reader/blockio. Data sets that are chunked or filtered are refused with
// catalog.ErrUnsupported (Chombo itself writes contiguous datasets); non
// FArrayBox data (face-centred "unknown" objects, particles) is listed in
// DatasetInfo.Skipped. Boxes must lie in their level's prob_domain and the
// offsets must match the boxes' sizes, else a *catalog.CorruptError.
//
// Concurrency: Open and Scan run on the caller's goroutine (Scan does no
// I/O); ReadBlock is safe for concurrent use. It must not write anything.
package chombo
