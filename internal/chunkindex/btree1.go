package chunkindex

import (
	"bytes"
	"math"

	"relayout/catalog"
)

// lexLess reports whether a sorts before b (row-major chunk order).
func lexLess(a, b []int64) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// walkBtree1 lists the chunks of a version 1 B-tree (node type 1).
func (f *file) walkBtree1(lay *layout, e *emitter) error {
	w := &btree1{f: f, lay: lay, e: e, visited: map[int64]bool{}}
	return w.node(lay.addr, -1, 0)
}

type btree1 struct {
	f       *file
	lay     *layout
	e       *emitter
	visited map[int64]bool
}

// node walks the node at absolute offset off; level is the level its parent
// expects (-1 for the root), depth the recursion depth.
func (w *btree1) node(off int64, level, depth int) error {
	f := w.f
	if depth > maxDepth {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: deeper than %d levels", maxDepth)
	}
	if w.visited[off] {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: reached twice (cycle)")
	}
	w.visited[off] = true
	hl := 8 + 2*f.so
	head, err := f.read(off, int64(hl), "B-tree node")
	if err != nil {
		return err
	}
	if !bytes.Equal(head[:4], []byte("TREE")) {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: bad signature")
	}
	if head[4] != 1 {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: node type %d, want 1 (raw data chunks)", head[4])
	}
	nodeLevel := int(head[5])
	if nodeLevel > maxDepth {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: level %d, more than %d", nodeLevel, maxDepth)
	}
	if level >= 0 && nodeLevel != level {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: level %d, parent expects %d", nodeLevel, level)
	}
	entries := int(le(head[6:8]))
	if entries > 2*f.istoreK {
		return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: %d entries, more than 2K = %d", entries, 2*f.istoreK)
	}
	ndims := w.lay.rank + 1
	key := 8 + 8*ndims
	body, err := f.read(off+int64(hl), int64(entries*(key+f.so)+key), "B-tree node entries")
	if err != nil {
		return err
	}
	c := cursor{b: body}
	var offs, prev []int64
	for i := 0; i < entries; i++ {
		size, mask := c.u32(), c.u32()
		if nodeLevel == 0 {
			offs = w.e.offsets()
			for d := 0; d < ndims; d++ {
				v := c.u(8)
				if v > math.MaxInt64 {
					return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: key %d: offset %d", i, v)
				}
				if d < w.lay.rank {
					offs[d] = int64(v)
				}
			}
		} else {
			c.skip(8 * ndims)
		}
		child, err := f.addr(c.u(f.so), "B-tree child")
		if err != nil {
			return err
		}
		if child == undef {
			return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: entry %d: undefined child address", i)
		}
		if nodeLevel == 0 {
			// Keys of a leaf increase (the B-tree is ordered by chunk
			// coordinates); a damaged key breaks the order.
			if prev != nil && !lexLess(prev, offs) {
				return catalog.Corrupt("hdf5", "", int64(off), "B-tree node: key %d %v not after key %d %v", i, offs, i-1, prev)
			}
			prev = offs
			if err := w.e.emitOffsets(offs, mask, child, uint64(size)); err != nil {
				return err
			}
			continue
		}
		if err := w.node(child, nodeLevel-1, depth+1); err != nil {
			return err
		}
	}
	return nil
}
