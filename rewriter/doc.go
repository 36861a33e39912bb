// Package rewriter executes a prepared plan, and nothing else: for every
// variable of a catalog it assembles slabs from the input blocks and writes
// one read-optimized HDF5 file per variable into a stage directory, with
// the manifest to be (Plan.Manifest). The job's lifecycle — the work
// directory, locks, job.json, journals, the commit record and the moves
// into OUT, the stage's manifest, syncs and report — is package job's,
// which drives this one through a few names:
//
//	Prepare        the stage's files and the Plan: datasets, units, shards
//	RewriteShard   one Shard's units through the engine; each finished
//	               unit's UnitRecord to the Shard's Journal (an interface:
//	               job's journal file), or kept by an in-memory Plan
//	JoinParts      the part files' chunks into the files, each renamed to
//	               its final name in the stage
//	Plan.ReadBack  the joined stage read back, unit by unit, for job's
//	               check of each unit against its record (damage between
//	               write and commit; a Difference when one differs), and
//	               the datasets' digests
//	Options, PrepareOptions, Monitor (NewMonitor, Progress),
//	RemoveTemps
//
// The rewriter imports neither job nor reader: job passes plain values
// (the stage, the part files, the units done before) and the Journal.
// Proving that every element arrived is package verify's, which shares no
// code with this package.
//
// # Output
//
// Variable v goes to <stage>/<name>.h5, where name is v with leading and
// trailing "/" dropped, "/" replaced by "." and every byte outside
// [A-Za-z0-9._-] replaced by "_" ("B/x" -> "B.x.h5", "a b" -> "a_b.h5"); a
// name that would be empty or start with "." gets a "_" prefix; a name already
// taken by an earlier variable (in sorted order), or "series.h5", gets "-2",
// "-3", ... before ".h5". Data is little-endian, row-major, contiguous or
// chunked (planner.ChooseLayout), raw or shuffled and deflated.
// relayout.json (the manifest) lists every dataset with the digest of its
// row-major little-endian bytes (Options.Digest, catalog.Digest: sha256 by
// default under "sha256", blake3 under "blake3", xxh64 under "xxh64", or none), its filters ("compression") and each file's
// storage decision.
//
// # netCDF time series
//
// A netCDF input (catalog format "netcdf-classic" or "netcdf4") is written
// as one netCDF-4 file per variable, <name>.nc, holding the variable, the
// coordinate variables of its dimensions and the ancillary variables its
// attributes name (copies: manifest datasets whose Var names the variable
// they hold), each dimension an HDF5 dimension scale (netcdf.go). No
// series.h5. Every other input gets the openPMD structure below.
//
// # openPMD structure
//
// Every other file is a group-based openPMD series (standard 1.1.0) holding one
// mesh or particle record component, whatever the input (openpmd.go,
// particles.go), that openPMD-api reads as it is:
//
//	/                              openPMD (the input's version, else 1.1.0), openPMDextension
//	                               (uint32), basePath "/data/%T/", meshesPath (an openPMD
//	                               input's, e.g. "fields/", else "meshes/"), iterationEncoding
//	                               "groupBased", iterationFormat "/data/%T/", relayout_version,
//	                               relayout_date, relayout_source; an openPMD input's software,
//	                               softwareVersion, date and other root attributes kept (other
//	                               inputs: software "relayout", theirs as relayout_input_*);
//	                               particlesPath: an openPMD input's (openPMD-api requires it of
//	                               openPMD 1.0), else "particles/" when particles are written
//	/data/<step>                   time, dt, timeUnitSI (the input's iteration attributes); with a
//	                               particlesPath, both <meshes> and <particles> groups (possibly empty)
//	/data/<step>/<meshes>/<record> record group: unitDimension, timeOffset, geometry,
//	                               geometryParameters, dataOrder, axisLabels, gridSpacing,
//	                               gridGlobalOffset, gridUnitSI, gridUnitDimension,
//	                               refinementRatio, fieldSmoothing, fieldSmoothingParameters,
//	                               and the record's own custom attributes (Attr.Record)
//	/data/<step>/<meshes>/<record>/<component>   the dataset: unitSI, position and every
//	                               attribute the standard does not name; a constant record
//	                               component is a group with value and shape (constant.go)
//	/data/<step>/<particles>/<species>   species group: the species' attributes (Attr.Species)
//	/data/<step>/<particles>/<species>/<record>   record group: unitDimension, timeOffset,
//	                               macroWeighted, weightingPower and custom record attributes
//	/data/<step>/<particles>/<species>/<record>/<component>   1-D dataset (the input's particle
//	                               order): unitSI and the rest; a scalar record (weighting, id) is
//	                               one dataset with both; constant components are groups as above
//	/data/<step>/<particles>/<species>/particlePatches/<record>[/<component>]   the patches
//	/data/<step>/relayout_values/<name>   a rank-0 global value (not a mesh: yt would take a
//	                               0-D mesh for the domain)
//	/data/<step>/relayout_boxes/<record>_lvl<L>/<component>   an AMR level's box table
//	/data/<step>/<axis>[_lvl<L>]   with --netcdf only: coordinate of one dimension (an HDF5
//	                               dimension scale)
//
// Variable "particles/<species>/<record>[/<component>]" with Array.Species
// set is a particle record component (catalog.ParticleVar; never a mesh
// name, which has at most two parts); particle attributes the input lacks
// are filled in as named in particles.go, no mesh attribute is added.
// Variable "E/x" is record E, component x; a one-part name ("rho") is a
// scalar record: one dataset with all of the above. A name of more parts is
// record "a/b", component "c" (not valid openPMD: records are one level
// deep). Readers merge record attributes into each component's, marked
// Attr.Record; the writer splits them back by that mark and the lists above.
// Attributes keep their stored type (float32, int16, ...). Refined levels
// follow the openPMD MeshRefinement extension: record "<record>_lvl<L>"
// ("E_lvl1/x", "rho_lvl1"), with refinementRatio (to level L-1); a level
// dataset spans the previous level's whole extent (the level-0 domain
// refined by the cumulative ratio, as the readers give it: gridGlobalOffset
// is the domain's origin, gridSpacing the level's) and is made sparse by
// chunking: it is chunked whatever the layout asked (planner.LevelLayout,
// decided in arrayLayout, the reason in the log and the manifest's note),
// and chunks that no box touches are never written (they read as the fill
// value). Its boxes are in the box table. Required
// attributes the input lacks (any non-openPMD input) are filled in and
// named in the object's relayout_defaulted attribute: geometry "cartesian",
// dataOrder "C", axisLabels x,y,z, gridSpacing from "dx" (AMReX, Chombo) or
// 1, gridGlobalOffset from "prob_lo" and the array offset, gridUnitSI 1,
// unitDimension zeros, timeOffset 0, unitSI 1, position 0.5 for AMReX and
// Chombo (cell centred) else 0, time from "time" or the step, dt from "dt"
// or 0, timeUnitSI 1.
//
// With Options.NetCDF (run --netcdf) each dimension of each dataset gets a
// 1-D float64 coordinate, an HDF5 dimension scale in /data/<step>
// (netCDF-4 finds dimensions in ancestor groups; openPMD readers do not look
// outside the meshes group): gridGlobalOffset + (i + position) * gridSpacing
// along the axis named by axisLabels (reversed for dataOrder "F";
// thetaMode's extra first dimension is "mode"), or the index where the
// attributes do not describe the dimension; named "<axis>_axis" when an
// axis name is also a group or dataset on the array's path (xarray refuses
// a component "x" over a dimension "x"). Off by default: an attached scale
// writes a DIMENSION_LIST attribute (object references) on the dataset,
// and openPMD-api 0.16 then skips the whole component.
//
// <stage>/series.h5 (series.go) has the same root, iteration and record
// attributes and presents every record component as an HDF5 virtual
// dataset of the whole same-path dataset of its file (a relative name), with
// the component's attributes: openPMD-api, openpmd-viewer, yt and h5py open
// the whole reorganized series through it. openPMD-api does not follow
// external links; box tables, rank-0 values and empty mesh arrays (which
// no openPMD reader opens) are external links, while an empty particle
// component (an iteration without particles) is an empty dataset of its own. A virtual dataset whose source
// file is missing reads as its fill value without an error, so the manifest
// lists the files series.h5 needs (series_files) and package verify checks
// them; the job's commit moves series.h5 with the rest.
//
// # ParaView views
//
// <stage>/view_<step>.hdf (views.go), also written by Prepare, presents
// every step's uniform meshes (level 0, cartesian, rank 1-3) as a VTKHDF
// 1.0 ImageData file for ParaView 5.11: PointData arrays that are virtual
// datasets of the whole datasets of the variables' files, Origin, Spacing
// and a Direction mapping VTK's index axes (x: the array's last axis) to
// the physical axes of axisLabels; one view per step and grid (a staggered
// component: view-<array>_<step>.hdf). What got none, and why, goes to the
// manifest's views_skipped; Options.NoViews makes none. The job's commit
// moves them with the rest, RemoveTemps removes them after a failure.
//
// <stage>/view-amr_<step>.hdf (amrviews.go) presents every step's AMR
// hierarchies (levels 0..L of a cell-centred 2-D or 3-D mesh variable) as a
// VTKHDF 1.0 OverlappingAMR file: per level its Spacing, its AMRBox table
// (the level's boxes, VTK's x the dataset's last axis: an OverlappingAMR
// has no Direction) and CellData arrays that are 1-D virtual datasets
// mapping each box to its hyperslab of the level's dataset (a 2-D level: a
// slab of its refinement ratio to level 0 in cells, each layer one more
// mapping of the box, so that ParaView blanks coarse cells under fine
// ones); beside it, view-amr_<step>.gdf (gdf.go), the same hierarchy in
// yt's Grid Data Format, each box a grid whose fields are virtual datasets
// of the box, with the input's openPMD units. An openPMD input's
// mesh-refinement records ("rho_lvl1") join their level 0 ("rho").
//
// <stage>/view-particles-<species>_<step>.hdf (particleviews.go) presents
// a species' particles of a step whose positionOffset is 0 as a VTKHDF
// UnstructuredGrid of VERTEX cells: Points and PointData virtual, the cell
// arrays stored (compressed).
//
// # File systems
//
// Prepare takes the output's file system (Options.FS, from fsinfo.Detect) and
// the user's overrides (Options.Storage); fsinfo.DecideFile (fsinfo.Decide with one
// writer per file) decides each file's Lustre stripes and HDF5 alignment.
// On Lustre the temporary file is created with its stripes set before HDF5
// opens it (a failure keeps the default layout and is recorded); every file
// is created with H5Pset_alignment when the decision aligns.
//
// # Durability
//
// A file is written as <stage>/.<name>.h5.tmp, synced once, then renamed
// (an in-memory job, redone whole after a crash, renames it first and
// leaves its sync to the job, which syncs it while other files' chunks are
// joined and its output is verified: job's syncStage, before the commit).
// A journaled shard's data is synced before the Journal writes the records
// naming it (the engine's sync, handed over by Journal.SetSync). The
// manifest, the commit record and the renames into OUT are the job's
// (job/commitlog.go): a kill at any instant leaves OUT recoverable to the
// same output.
//
// # Holes and overlapping blocks
//
// Places no block covers cost no bytes unless --fill (Options.Fill): a
// partly covered array that would be contiguous is chunked
// (planner.HoleLayout, decided in arrayLayout, holes.go) and its untouched
// chunks are never allocated. They read back as the array's fill value
// (leFill: its own, else NaN for floating point and zero for integers) in
// every layout:
// assembly writes it into contiguous data and units, and every dataset
// carries it as its HDF5 fill value for unwritten chunks and a virtual
// dataset's unmapped space. A reused unit buffer is filled (or cleared)
// wherever its blocks do not cover it exactly. A sparse array (planner's
// sparse.go, Dataset.Sparse: holes that dwarf its data, such as a netCDF-4
// variable of 2^40 elements with one chunk written) goes through the part
// files with units over its touched chunks alone (planner.SparseUnits),
// joins no band, and its digest is over its stored chunks
// (catalog.DigestStoredChunks: digestStoredChunks, hashed by the parts
// target as it puts them, or from a journaled commit's read back of its
// units): nothing is cut, assembled, hashed or read over its holes. Blocks that overlap are
// found from their boxes (planner.OverlapPairs) before an array is written;
// only their shared regions are read and compared: equal values (halos)
// are fine, different ones refuse the array as corrupt input naming both
// blocks (overlap.go).
//
// # Concurrency
//
// One engine (engine.go) executes every job, whether in memory (relayout
// run: Prepare with PrepareOptions.InMemory, the one shard in this
// process, JoinParts in place) or journaled (run --resume; plan -o,
// rewrite --shard, commit; the journals are job's): Prepare writes each file's structure and
// cuts every dataset into work units; a shard runs its units dataset after
// dataset. Within a dataset, up to Options.Jobs goroutines assemble units
// (reading blocks through the catalog.Source, which is safe for concurrent
// use); a single goroutine takes the units in order to record them, and
// one per dataset of the pipeline hashes that dataset's units in the same
// order. Every unit is charged to the one MaxMem budget (memBudget) before
// its buffers exist (an anonymous mapping outside the Go heap, reused by
// later units), and at most Jobs+1 units
// are alive at once, however large the budget; commit's check charges the
// same budget type. Units are whole rows along dimension 0 whose boundaries
// sit on the source blocks' edges, so that each block is read once, whole
// (planner.AlignedSlabs); where a band of block rows exceeds 16 MiB (or
// what a unit may hold), contiguous output is written in cache-sized
// (8 MiB) block-aligned tiles (planner.AlignedTiles) and the digest is
// read back from the written file (the page cache) band by band through a
// 1 MiB buffer (readbackBytes); units of encoded chunks or cuboids that
// are not row-major runs have theirs gathered band by band in a buffer
// charged to the budget (banddigest.go). One function, engine.digestSite,
// chooses each dataset's digest site (in order, bands, read back by the
// target, a pass over the input), with the reason of each case; whether a
// job's pipeline takes the datasets' digests at all (an in-memory job
// without verification), its units' (journaled) or none is package job's
// one decision (planDigests). Units whose blocks interleave in the
// input file are joined (interleave.go).
//
// Every input byte is read once also where datasets interleave: the
// datasets of one step, level and shape (ADIOS2's aggregators store every
// variable of a step block by block in the same sub-file regions) go
// through one pipeline (engine.groups; every shard, in memory or journaled,
// joins its groups: joinGroups). Prepare cuts their units in a common
// grain (jointGrain: the same row bands for every dataset of the group,
// whatever its element size, on the chunk rows of the chunked ones and
// between block edges), and items are whole bands of every dataset
// (jointItems, jointRegions): k bands, the fewest whose predicted reads
// average at least 256 KiB a request (minItemRead), within a quarter of
// the budget and 64 MiB (Options.Limits.ItemLimit). An item is admitted,
// assembled and released as one: one pass over the union of its units'
// blocks in file order (one ReadBlocks call: runs coalesced across
// the datasets, each block decoded with its own element type and copied
// into its own unit; the sub-files read in parallel, each in segments
// whose gaps holding other items' blocks are at most 1/32 of their bytes,
// gapSegment and jointIndex, so that those blocks are skipped), and
// each unit is then written, hashed and journaled as its own dataset's,
// in that dataset's order. Chosen by measurement on BP5 output of 4 variables of
// 192^3 in 351,536 blocks of 4^3 (8 writers, 4 sub-files, 123 MB of data):
// one pass per dataset read 425 MB in 519 calls; reading only each
// dataset's own extents (no coalescing through others' blocks) read 123 MB
// in 351,536 calls with 3-5x the fetch time; a per-item cache of the first
// unit's runs read 123 MB in 86-330 calls but held every gap byte too,
// which capped items and left BP4 256^3 in 8^3 blocks at 1.47x; the joint
// pass reads 123 MB in 8 calls (BP4: 307 MB in 20 calls for 307 MB
// stored). Items of half the budget held a whole scattered region (load
// balancing) at once: 527 MB peak RSS on bp_gen.py BP4 256^3 in 8^3
// blocks, and 1.9x the stored bytes at --max-mem 256MiB, where the region
// did not fit. Items of a sixteenth of the budget in gap-bounded segments
// read it once at 241 MB but in 90,785 calls: sized in bytes (a float32
// dataset's units twice the rows of a float64 one's), an item held some
// datasets' units of a band and the others' blocks left gaps, and BP4's
// block headers, counted as gaps, made each block a call of its own (only
// gaps holding other items' blocks count now). Items of whole 32-row bands read
// that input once in 1,024 calls at 256 MB peak RSS, at both budgets (the
// writers' Morton order puts a band's blocks in runs that lengthen
// eightfold with each doubling of its rows; 64-row items read in 128
// calls but peak at 423 MB). Contiguous units are pwritten at the
// addresses Prepare recorded by the workers that assembled them (an
// item's units in parallel), merged ones by the ordered sink. Raw chunked arrays that their
// blocks cover have every chunk allocated when the dataset is created; the
// workers pwritev each chunk of a unit straight from its buffer (no copy, no
// HDF5 call), and a digest that units smaller than a chunk row cannot give
// in order is read back chunk row by chunk row (chunkwrite.go); sparse or
// compressed chunked arrays are cut and encoded by the workers, appended to
// the shard's part file, and written by JoinParts with H5Dwrite_chunk
// (HDF5, one global lock, is only called from one goroutine at a time).
// When a unit is admitted, the reads of the next two are announced to the
// kernel (catalog.Source.Prefetch) so that the disk has more requests in flight
// than there are workers. Cancelling the context stops the pipeline; a
// failed in-memory job leaves no partial file under a final name
// (RemoveTemps).
//
// # Output targets
//
// Each output layout is one type behind one interface, target (target.go;
// targetOf is the one place a dataset's kind is looked at): it cuts its
// dataset into units, prepares a unit's bytes on the worker that assembled
// it, puts it in unit order and finishes with the digest it read back, in
// a file of its own (target_contiguous.go, target_chunks.go,
// target_parts.go, target_merged.go). Adding a layout is a planner kind,
// the Dataset.Kind Prepare sets for it, and one target file.
//
// The package must not parse input formats (readers do, through
// catalog.Source) and calls HDF5 only through internal/h5. It imports
// planner, catalog and internal packages, never reader or job
// (layering_test.go at the module root enforces the layering).
package rewriter
