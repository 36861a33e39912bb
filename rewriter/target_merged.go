package rewriter

import (
	"context"
	"fmt"
	"os"

	"relayout/catalog"
	"relayout/planner"
)

// mergedOut is a merged array (merged.go): one contiguous dataset when the
// cuboids cover it, else one dataset per cuboid (Dataset.Cuboids). Its
// units are row-major pieces of the cuboids, written in unit order.
type mergedOut struct {
	d *Dataset

	e *engine
	a *catalog.Array
	f *os.File
}

func (t *mergedOut) traits() targetTraits {
	return targetTraits{disjoint: true, readBack: readBackNone, storedBlocks: max(len(t.d.Cuboids), 1)}
}

// units are each cuboid in row-major pieces that fit the budget.
func (t *mergedOut) units(a *catalog.Array, pl contigTarget, _ jointGrain, opts Options) (boxes []catalog.Box, cuboid []int, split bool, err error) {
	for ui, u := range pl.merged.plan.Units {
		parts, _, err := units(u.Box.Count, planner.Layout{Kind: planner.Contiguous}, a.DType.Size, opts.Limits.UnitTarget)
		if err != nil {
			return nil, nil, false, err
		}
		for _, p := range parts {
			for k := range p.Lower {
				p.Lower[k] += u.Box.Lower[k]
			}
			boxes = append(boxes, p)
			cuboid = append(cuboid, ui)
		}
	}
	return boxes, cuboid, false, nil
}

// within is the unit's cuboid, when the array is stored as cuboids.
func (t *mergedOut) within(u *Unit, shape []int64) (catalog.Box, error) {
	whole := wholeShape(shape)
	if t.d.Cuboids == nil {
		return whole, nil
	}
	if u.Cuboid < 0 || u.Cuboid >= len(t.d.Cuboids) {
		return whole, fmt.Errorf("cuboid %d of %d", u.Cuboid, len(t.d.Cuboids))
	}
	c := t.d.Cuboids[u.Cuboid]
	box := catalog.Box{Lower: c.Lower, Count: c.Count}
	if len(c.Lower) != len(shape) || len(c.Count) != len(shape) || !inside(box, whole) {
		return box, fmt.Errorf("cuboid %v outside the shape %v", box, shape)
	}
	return box, nil
}

func (t *mergedOut) open(_ context.Context, e *engine, a *catalog.Array, _ bool) error {
	f, fsize, err := e.file(t.d)
	if err != nil {
		return err
	}
	size := int64(a.DType.Size)
	if t.d.Cuboids == nil {
		err = checkPlaced(f, fsize, t.d.Addr, product(a.Shape)*size)
	}
	for _, c := range t.d.Cuboids {
		if err == nil {
			err = checkPlaced(f, fsize, c.Addr, product(c.Count)*size)
		}
	}
	t.e, t.a, t.f = e, a, f
	return err
}

func (t *mergedOut) prep(catalog.Box, []byte) (unitOut, error) { return unitOut{}, nil }

func (t *mergedOut) put(u *Unit, slab catalog.Box, buf []byte, _ unitOut, rec *UnitRecord) error {
	mon := t.e.opts.Monitor
	var err error
	if t.d.Cuboids == nil {
		err = writeBox(t.f, t.d.Addr, t.a.Shape, slab, buf, t.a.DType.Size, mon)
	} else {
		c := t.d.Cuboids[u.Cuboid]
		rel := catalog.Box{Lower: make([]int64, len(c.Lower)), Count: slab.Count}
		for d := range rel.Lower {
			rel.Lower[d] = slab.Lower[d] - c.Lower[d]
		}
		err = writeBox(t.f, c.Addr, c.Count, rel, buf, t.a.DType.Size, mon)
	}
	if err != nil {
		return err
	}
	t.e.wroteFile(t.f, len(buf), rec)
	return nil
}

func (t *mergedOut) finish() (string, error) { return "", nil }
func (t *mergedOut) close()                  {}
