package rewriter

import (
	"context"
	"fmt"
	"os"

	"relayout/catalog"
)

// Output targets. Each dataset of a plan is stored in one of four layouts
// (Dataset.Kind, which Prepare sets from the planner's layout and what it
// created), each one type implementing target in a file of its own:
//
//	kind        type             file                  worker, after assembly (prep)    in unit order (put)
//	contiguous  contiguousOut    target_contiguous.go  pwrite at its place in the file  record it
//	chunks      rawChunksOut     target_chunks.go      pwrite each chunk at the         record it
//	                                                   address the chunk index lists
//	parts       encodedChunksOut target_parts.go       cut and encode chunks            append them to the part file
//	                                                                                    (JoinParts: H5Dwrite_chunk)
//	merged      mergedOut        target_merged.go      -                                pwrite into the array or
//	                                                                                    its cuboid
//
// targetOf is the one place a dataset's kind is looked at. Adding a
// layout is a planner kind, its Dataset.Kind set in Prepare, and one file
// here.

// Dataset kinds (Dataset.Kind).
const (
	kindContiguous = "contiguous"
	kindChunks     = "chunks" // raw chunks allocated when the file is prepared
	kindParts      = "parts"  // encoded chunks via the part files and JoinParts
	kindMerged     = "merged"
)

// A target stores the units of one dataset in its layout. The static
// methods (traits, units, within) describe the layout before a pass; open
// readies one pass of the engine over the dataset's units, and prep, put,
// finish and close run it.
type target interface {
	// traits is what the unit cutter, the budget and the digest table
	// need to know of the layout.
	traits() targetTraits
	// units cuts array a (placed as pl by Prepare) into the dataset's work
	// units, in write order; cuboid is each unit's cuboid (merged), split
	// reports units smaller than a row (a chunk row when chunked). g is
	// the grain of the dataset's joinable group (jointGrains).
	units(a *catalog.Array, pl contigTarget, g jointGrain, opts Options) (boxes []catalog.Box, cuboid []int, split bool, err error)
	// within is the box unit u of the dataset (of shape) must lie in.
	within(u *Unit, shape []int64) (catalog.Box, error)

	// open readies a pass of engine e over array a (checked, its blocks
	// disjoint when traits asks it); digest: the target takes the
	// dataset's digest, hashing the written bytes back in row-major order
	// (traits().readBack says how) or its stored chunks as it puts them
	// (traits().storedChunks); finish returns it.
	open(ctx context.Context, e *engine, a *catalog.Array, digest bool) error
	// prep runs on the worker that assembled a unit, beside other units:
	// it encodes the unit, or writes it where its place is fixed.
	prep(slab catalog.Box, buf []byte) (unitOut, error)
	// put runs in unit order: what must be written in order, and the
	// unit's record (rec.Written, rec.Chunks).
	put(u *Unit, slab catalog.Box, buf []byte, o unitOut, rec *UnitRecord) error
	// finish returns the digest the target took (open's digest), else "".
	finish() (string, error)
	// close releases what open took, whatever happened.
	close()
}

// targetTraits describe a layout to the engine and the planner of units.
type targetTraits struct {
	// encoded: each unit is cut into encoded chunks, kept beside its
	// buffer until put appends them to the shard's part file (the budget
	// charges a unit twice); JoinParts moves them into the file.
	encoded bool
	// disjoint: the array's overlapping blocks are cut apart before
	// assembly (cuboids, and a virtual dataset's sources, must not overlap).
	disjoint bool
	// readBack: how the written bytes can be hashed back in row-major
	// order for the dataset's digest (digestSite); rowPlane, for
	// readBackRows: the bytes of one plane of a chunk row, which the
	// read-back buffer must hold.
	readBack readBackCost
	rowPlane int64
	// storedBlocks: how many blocks the data is stored as, but for the
	// encoded chunks (the units' records list them): the report's blocks_out.
	storedBlocks int
	// bandStep: the rows a band of joinable datasets must be a multiple
	// of for this one (jointGrains); 0: the dataset keeps units of its
	// own. bandCut: its units are then the group's bands (else it only
	// constrains them: raw chunks keep their tiles).
	bandStep int64
	bandCut  bool
	// storedChunks: the dataset's digest is over its stored chunks
	// (catalog.DigestStoredChunks, a sparse array), taken by the target as
	// it puts them (digestStoredChunks), whatever else the units are.
	storedChunks bool
}

// readBackCost is how a layout's written bytes can be read back in
// row-major order for a digest.
type readBackCost int

const (
	readBackNone  readBackCost = iota // encoded or scattered: no row-major copy in the file
	readBackRows                      // chunk row by chunk row (costs more than a band's copy)
	readBackBytes                     // byte ranges from the page cache (costs what a band's copy does)
)

// targetOf is d's target: the one place a dataset's kind is looked at (a
// job from before kinds: encoded chunks when chunked, else contiguous).
func targetOf(d *Dataset) target {
	switch d.Kind {
	case kindMerged:
		return &mergedOut{d: d}
	case kindChunks:
		return &rawChunksOut{d: d}
	case kindParts:
		return &encodedChunksOut{d: d}
	case kindContiguous:
		return &contiguousOut{d: d}
	case "":
		if d.Chunk != nil {
			return &encodedChunksOut{d: d}
		}
		return &contiguousOut{d: d}
	}
	return &unknownKind{d: d}
}

// wholeShape is the box of a whole array of shape.
func wholeShape(shape []int64) catalog.Box {
	return catalog.Box{Lower: make([]int64, len(shape)), Count: shape}
}

// checkPlaced refuses n bytes at addr of a prepared file of fsize bytes
// (a damaged job.json).
func checkPlaced(f *os.File, fsize, addr, n int64) error {
	if n > 0 && (addr < 0 || addr+n > fsize) {
		return fmt.Errorf("%s: data at %d+%d outside the prepared file (%d bytes): %w", f.Name(), addr, n, fsize, catalog.ErrCorrupt)
	}
	return nil
}

// unknownKind is a dataset of a kind this version does not know (a job.json
// from a later one, or damaged): refused when a pass opens it.
type unknownKind struct{ d *Dataset }

func (t *unknownKind) traits() targetTraits { return targetTraits{} }
func (t *unknownKind) units(*catalog.Array, contigTarget, jointGrain, Options) ([]catalog.Box, []int, bool, error) {
	return nil, nil, false, t.err()
}
func (t *unknownKind) within(*Unit, []int64) (catalog.Box, error) { return catalog.Box{}, t.err() }
func (t *unknownKind) open(context.Context, *engine, *catalog.Array, bool) error {
	return t.err()
}
func (t *unknownKind) prep(catalog.Box, []byte) (unitOut, error) { return unitOut{}, t.err() }
func (t *unknownKind) put(*Unit, catalog.Box, []byte, unitOut, *UnitRecord) error {
	return t.err()
}
func (t *unknownKind) finish() (string, error) { return "", nil }
func (t *unknownKind) close()                  {}

func (t *unknownKind) err() error {
	return fmt.Errorf("job.json: dataset %s: kind %q: %w", t.d.Var, t.d.Kind, catalog.ErrCorrupt)
}
