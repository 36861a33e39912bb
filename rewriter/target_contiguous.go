package rewriter

import (
	"context"
	"os"

	"relayout/catalog"
)

// contiguousOut is a contiguous dataset: each unit is pwritten at its
// place in the prepared file by the worker that assembled it (the units of
// an item in parallel: writing does not wait its turn), and in unit order
// the rows it completes are handed to writeback and, for the digest, read
// back from the page cache.
type contiguousOut struct {
	d *Dataset

	e        *engine
	a        *catalog.Array
	f        *os.File
	back     *readbackHash // the digest read back, else nil
	rowsDone int64         // rows of dimension 0 written whole
}

func (t *contiguousOut) traits() targetTraits {
	return targetTraits{readBack: readBackBytes, storedBlocks: 1, bandStep: 1, bandCut: true}
}

// units are the group's bands where they fit a tile, else the array's
// write units (Options.writeUnits).
func (t *contiguousOut) units(a *catalog.Array, _ contigTarget, g jointGrain, opts Options) ([]catalog.Box, []int, bool, error) {
	if boxes := g.units(a, min(opts.Limits.JoinLimit, opts.Limits.TileLimit), opts); boxes != nil {
		return boxes, nil, false, nil
	}
	boxes, _, err := opts.writeUnits(a)
	split := len(boxes) > 0 && len(a.Shape) > 1 && boxes[0].Count[0] == 1 && boxes[0].Count[1] < a.Shape[1]
	return boxes, nil, split, err
}

func (t *contiguousOut) within(_ *Unit, shape []int64) (catalog.Box, error) {
	return wholeShape(shape), nil
}

func (t *contiguousOut) open(ctx context.Context, e *engine, a *catalog.Array, readBack bool) error {
	f, fsize, err := e.file(t.d)
	if err != nil {
		return err
	}
	if err := checkPlaced(f, fsize, t.d.Addr, product(a.Shape)*int64(a.DType.Size)); err != nil {
		return err
	}
	t.e, t.a, t.f = e, a, f
	if readBack {
		t.back, err = startReadbackHash(ctx, f, e.mem, min(e.opts.Limits.ReadLimit, readbackBytes), e.opts.Digest, readBytes(f))
	}
	return err
}

func (t *contiguousOut) prep(slab catalog.Box, buf []byte) (unitOut, error) {
	return unitOut{}, writeBox(t.f, t.d.Addr, t.a.Shape, slab, buf, t.a.DType.Size, t.e.opts.Monitor)
}

func (t *contiguousOut) put(_ *Unit, slab catalog.Box, buf []byte, _ unitOut, rec *UnitRecord) error {
	t.e.wroteFile(t.f, len(buf), rec)
	if endsRows(slab, t.a.Shape) { // rows up to this unit's end are all written
		end := slab.Lower[0] + slab.Count[0]
		rowBytes := product(t.a.Shape[1:]) * int64(t.a.DType.Size)
		off, n := t.d.Addr+t.rowsDone*rowBytes, (end-t.rowsDone)*rowBytes
		startWriteback(t.f, off, n)
		if t.back != nil {
			t.back.add(off, n)
		}
		t.rowsDone = end
	}
	return nil
}

func (t *contiguousOut) finish() (string, error) {
	if t.back == nil {
		return "", nil
	}
	return t.back.stop()
}

func (t *contiguousOut) close() {
	if t.back != nil {
		t.back.abort()
	}
}
