// Package scorpio reads the ADIOS BP output of SCORPIO (E3SM's I/O library,
// PIO_IOTYPE_ADIOS and ADIOSC) natively and models the netCDF file it
// stands for: dimensions, variables, attributes, and for every distributed
// variable the decomposition that places its values (issue 42).
//
// SCORPIO BP dataset (BP5; reader/bp parses the BP5 metadata, OpenLocal
// lists its 1-D local arrays):
//
//	NAME.nc          symlink -> NAME.nc.bp/md.0 (relative or absolute as the
//	                 model passed the name; may dangle: NAME.nc.bp is used)
//	NAME.nc.bp/      md.idx md.0 mmd.0 data.N (BP5), profiling.json
//	  /__pio__/dim/D                 u64 global value: length (0 = the record
//	                                 dimension; its length = frames written)
//	  /__pio__/var/V                 darray: elements of the file type, 1-D
//	                                 local array; per ADIOS step each writer
//	                                 (I/O group leader) writes one block per
//	                                 write call, in call order
//	                                 put_var: uint8 blocks = i64 start[nd] |
//	                                 i64 count[nd] | raw values (nd 0: value)
//	  /__pio__/var/V/def/{ncop "darray"|"put_var", nctype, ndims, dims[],
//	                      decomp "ID", adiostype}      attributes
//	  /__pio__/var/V/A               the variable's netCDF attribute A
//	  /__pio__/global/A              global attribute A
//	  /__pio__/fillmode              attribute (256 NC_NOFILL; last step only)
//	  /__pio__/decomp/ID             i64 map, one block per writer, stored
//	                                 once; entry j of writer g's block places
//	                                 element j of each of g's data blocks:
//	                                 1-based flat row-major index over the
//	                                 non-record dims, 0 = pad/hole (box and
//	                                 subset rearrangers) or 0-based, -1 =
//	                                 pad (CONTIG; only negative entries tell)
//	  /__pio__/decomp/ID/{dimlen[], ndims, piotype}    attributes
//	  /__pio__/track/frame_id/V      i32 per write of the step: record index
//	                                 (-1: V has no record dimension)
//	  /__pio__/track/decomp_id/V     i32 per write: decomposition id, > 0
//	                                 when a fill value was passed, else -id
//	  /__pio__/track/fillval_id/V    one element per write with decomp_id
//	                                 > 0, in order: the write's fill value
//	  /__pio__/info/decomp_stored    i32 (0: maps absent, darrays unplaceable)
//	  /__pio__/info/{nproc, block_nprocs, block_list, testing}, track/
//	  num_{data,decomp}_block_writers: bookkeeping, not needed to place data
//
//	one write of V (frame f, decomposition ID), G writers:
//	  data block of writer g  [ v0  v1  v2  v3 ... ]  element j
//	  map block of writer g   [ 17   0  18   3 ... ]  -> destination 16, pad,
//	                                                     17, 2, ... of frame f
//
// Frames are not ADIOS steps (SCORPIO caches up to 128 frames a step, and a
// frame's put_var time may land in an earlier step than its arrays); a
// group with 0 or 1 elements stores a two-entry map block [m, 0] ([0, 0])
// and a two-element data block (BuildPlan; the data block may be shorter).
//
// What it owns: the SCORPIO conventions above, the netCDF model (Dataset,
// Var, Dim, Write, Blob), decomposition plans (Plan: runs contiguous in the
// output and in one source block, holes; built once per decomposition and
// shared) and the element scatter (Plan.Scatter, Plan.Fill). It must not
// write output, plan layouts or verify (the engine and verify do, calling
// this API); it reads payloads only through reader/bp (blockio: blosc,
// bzip2 decoded there). Damaged input (maps out of range, a destination
// mapped twice, data blocks misaligned with their map blocks, a write's
// decomposition missing, decompositions not stored) is a
// *catalog.CorruptError naming the variable, decomposition, block and
// lengths; SCORPIO content it does not model wraps catalog.ErrUnsupported.
//
// API for the engine:
//
//	d, err := scorpio.Open(path)        // NAME.nc or NAME.nc.bp; scorpio.Is(path)
//	for _, v := range d.Vars() {        // Name, NCType, Type, Dims, Shape, Attrs, Kind
//	    for i := range v.Writes {       // Darray: Frame, Decomp, Fill, Blocks
//	        p, _ := d.Plan(ctx, v.Writes[i].Decomp) // cached, concurrent-safe
//	        // read v.Writes[i].Blocks, scattering each as it arrives:
//	        p.ScatterBlock(dst, g, data, v.Type.Size, what, blocks) // dst: p.Elems elements
//	        p.Fill(dst, d.FillValue(v, &v.Writes[i]))
//	    }                               // or d.ReadWrite(ctx, v, w, dst, timer)
//	    for i := range v.Blobs { d.ReadBlob(ctx, v, &v.Blobs[i]) } // PutVar
//	}
//
// Memory: Open keeps the block lists of the /__pio__ variables (about 100
// bytes a block) and reads only the small tracks. BuildPlan holds one bit
// per destination element and a block's runs while it builds, then its
// runs packed (a few bytes a run: 7 MB for the 1.8M runs of a 72 x 100,000
// map in shuffled runs of 4) and 16 bytes per hole; the map
// blocks are read once per decomposition and dropped (Placement hands the
// verifier the blocks to read, not their values). Scatter, ScatterBlock and Fill
// allocate nothing; ReadWrite holds no copy of a write's blocks (each is
// scattered from the read's buffer).
//
// Resident builds the plans of the selected variables' decompositions up
// front and reports the bytes they hold, which an in-memory job charges to
// --max-mem (reader.Resident) before it cuts its budget.
//
// Concurrency: Plan, Resident, ReadBlocks, ReadWrite (with its own dst),
// ReadBlob and a Plan's methods are safe for concurrent use; Open and Close
// are not.
package scorpio
