// Package amrex turns AMReX plotfiles (native "HyperCLaw-V1.1"/VisMF format:
// a text Header, per-level Cell_H MultiFab headers, binary Cell_D_NNNNN files
// holding FABs) into catalog arrays and blocks. A directory holding several
// plotfiles (plt00000, plt00100, ...) is one dataset whose steps are the
// plotfiles' steps.
//
// What it emits: one catalog.Array per (component, step, level). Var is the
// plotfile component name; Step the Header's level-0 step (the number ending
// the directory name when those repeat in a series); Level the AMR level.
// Axes are (i, j[, k]) = (x, y[, z]) in that order: Shape and Offset list x
// first, and the rewriter's C-order output is therefore indexed [x][y][z].
// Offset is the global index (in the level's own index space) of the array's
// first cell and Shape its extent: the level's domain on every level, which
// on a finer level is the level-0 domain refined by the cumulative ratio (the
// openPMD mesh-refinement layout: a refined level spans the previous level's
// extent, and its boxes cover part of it). Fill is NaN in the data's type and
// byte order, for the cells no box covers. Boxes lists the level's boxes relative to Offset.
// Each box is one Block: Box is its valid cells relative to Offset, Order is
// ColMajor (FABs are Fortran order), File the Cell_D file relative to the
// dataset root, Offset the first byte of this component inside the FAB
// (FabOnDisk offset + FAB header + component × points × element size).
// When the FABs carry ghost cells, Stored is the grown extent and StoredLower
// the ghost width (where the valid region starts). Rank is the Cell_D file
// number when files are per rank (written one file per rank, or fewer than
// 256 files in NFiles mode), else -1. Attrs carry dx, ref_ratio (to the next
// coarser level, 1 on level 0), prob_lo, prob_hi, time and level_step.
//
// Open reads and checks all metadata: every count parsed from text is
// bounded by the bytes left before anything is allocated, every box must lie
// in its level's domain, every FAB header must agree with Cell_H and its data
// must fit in its file, and no path taken from the metadata may leave the
// dataset directory ("..", absolute paths, symlinks resolving outside).
// Errors name the file and the line (text) or offset (binary): damage is a
// *catalog.CorruptError; otherwise they wrap ErrNotFound or ErrUnsupported. Particle containers and
// other directories are listed in DatasetInfo.Skipped.
//
// It must not write anything and never reads block bytes itself beyond FAB
// headers: Dataset.ReadBlock is a raw pread through reader/blockio.
//
// Concurrency: Open and Scan run on the caller's goroutine (Scan does no
// I/O); ReadBlock is safe for concurrent use.
package amrex
