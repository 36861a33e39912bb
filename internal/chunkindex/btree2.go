package chunkindex

import (
	"bytes"
	"math"

	"relayout/catalog"
)

// Version 2 B-tree record types for chunk indexes.
const (
	bt2Chunks         = 10
	bt2FilteredChunks = 11
)

// bt2 is a version 2 B-tree being walked.
type bt2 struct {
	f       *file
	lay     *layout
	e       *emitter
	typ     uint8
	recSize int
	sizeLen int // filtered records: width of the chunk size field
	// per depth d (0 = leaves): width of the child record count and of the
	// total record count in an internal node at depth d, and the most
	// records a node at depth d can hold.
	nrecW, totW []int
	maxRec      []uint64
	visited     map[int64]bool
	scaled      []uint64
}

// walkBtree2 lists the chunks of a version 2 B-tree (record type 10 or 11).
func (f *file) walkBtree2(lay *layout, e *emitter) error {
	hl := 4 + 1 + 1 + 4 + 2 + 2 + 1 + 1 + f.so + 2 + f.sl + 4
	b, err := f.read(lay.addr, int64(hl), "v2 B-tree header")
	if err != nil {
		return err
	}
	if !bytes.Equal(b[:4], []byte("BTHD")) {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "v2 B-tree header: bad signature")
	}
	if err := checksum(b, hl-4, lay.addr, "v2 B-tree header"); err != nil {
		return err
	}
	c := cursor{b: b, off: 4}
	if v := c.u8(); v != 0 {
		return unsupported("v2 B-tree header at offset %d: version %d", lay.addr, v)
	}
	t := &bt2{f: f, lay: lay, e: e, typ: c.u8(), visited: map[int64]bool{}, scaled: make([]uint64, lay.rank)}
	nodeSize := uint64(c.u32())
	t.recSize = int(c.u16())
	depth := int(c.u16())
	c.skip(2) // split and merge percentages
	root, err := f.addr(c.u(f.so), "v2 B-tree root")
	if err != nil {
		return err
	}
	rootRecs := uint64(c.u16())
	fixed := f.so + 8*lay.rank
	switch t.typ {
	case bt2Chunks:
		if t.recSize != fixed {
			return catalog.Corrupt("hdf5", "", int64(lay.addr), "v2 B-tree header: record size %d, want %d", t.recSize, fixed)
		}
	case bt2FilteredChunks:
		t.sizeLen = t.recSize - fixed - 4
		if t.sizeLen < 1 || t.sizeLen > 8 {
			return catalog.Corrupt("hdf5", "", int64(lay.addr), "v2 B-tree header: record size %d", t.recSize)
		}
	default:
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "v2 B-tree header: record type %d is not a chunk index", t.typ)
	}
	if depth > maxDepth {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "v2 B-tree header: depth %d", depth)
	}
	if nodeSize > uint64(f.size) || nodeSize < 10+uint64(t.recSize) {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "v2 B-tree header: node size %d", nodeSize)
	}
	if err := t.geometry(nodeSize, depth); err != nil {
		return err
	}
	if root == undef {
		return nil
	}
	return t.node(root, rootRecs, depth)
}

// geometry derives, level by level, the widths of the child pointer fields
// and the record capacity of nodes, as the specification describes: a leaf
// holds (node size - overhead) / record size records; an internal node's
// count fields are as wide as needed for its children's maximum.
func (t *bt2) geometry(nodeSize uint64, depth int) error {
	const overhead = 10 // signature, version, type, checksum
	so := uint64(t.f.so)
	rec := uint64(t.recSize)
	t.nrecW = make([]int, depth+1)
	t.totW = make([]int, depth+1)
	t.maxRec = make([]uint64, depth+1)
	t.maxRec[0] = (nodeSize - overhead) / rec
	total := t.maxRec[0] // most records below a node of the level just done
	for d := 1; d <= depth; d++ {
		t.nrecW[d] = bytesFor(t.maxRec[d-1])
		if d > 1 {
			t.totW[d] = bytesFor(total)
		}
		ptr := so + uint64(t.nrecW[d]+t.totW[d])
		if nodeSize < overhead+ptr+rec {
			return catalog.Corrupt("hdf5", "", int64(t.lay.addr), "v2 B-tree header: node size %d too small for depth %d", nodeSize, depth)
		}
		t.maxRec[d] = (nodeSize - overhead - ptr) / (rec + ptr)
		// (max+1) children each holding total, plus max records here;
		// saturate: only the width of the count matters.
		if v, ok := mulCheck(t.maxRec[d]+1, total, math.MaxUint64/2); ok {
			total = v + t.maxRec[d]
		} else {
			total = math.MaxUint64 / 2
		}
	}
	return nil
}

// node walks the node at off holding nrec records at depth d (0 = leaf),
// in key order: child 0, record 0, child 1, ...
func (t *bt2) node(off int64, nrec uint64, d int) error {
	f := t.f
	if t.visited[off] {
		return catalog.Corrupt("hdf5", "", int64(off), "v2 B-tree node: reached twice (cycle)")
	}
	t.visited[off] = true
	if nrec > t.maxRec[d] {
		return catalog.Corrupt("hdf5", "", int64(off), "v2 B-tree node: %d records, at most %d fit", nrec, t.maxRec[d])
	}
	ptr := 0
	if d > 0 {
		ptr = f.so + t.nrecW[d] + t.totW[d]
	}
	n := 6 + int64(nrec)*int64(t.recSize)
	if d > 0 {
		n += int64(nrec+1) * int64(ptr)
	}
	b, err := f.read(off, n+4, "v2 B-tree node") // and its checksum
	if err != nil {
		return err
	}
	sig := []byte("BTLF")
	if d > 0 {
		sig = []byte("BTIN")
	}
	if !bytes.Equal(b[:4], sig) {
		return catalog.Corrupt("hdf5", "", int64(off), "v2 B-tree node: bad signature, want %s", sig)
	}
	if b[4] != 0 || b[5] != t.typ {
		return catalog.Corrupt("hdf5", "", int64(off), "v2 B-tree node: version %d type %d", b[4], b[5])
	}
	if err := checksum(b, int(n), off, "v2 B-tree node"); err != nil {
		return err
	}
	recs := cursor{b: b[6 : 6+int(nrec)*t.recSize]}
	ptrs := cursor{b: b[6+int(nrec)*t.recSize:]}
	for i := uint64(0); i <= nrec; i++ {
		if d > 0 {
			child, err := f.addr(ptrs.u(f.so), "v2 B-tree child")
			if err != nil {
				return err
			}
			cn := ptrs.u(t.nrecW[d])
			ptrs.skip(t.totW[d])
			if child == undef {
				return catalog.Corrupt("hdf5", "", int64(off), "v2 B-tree node: child %d: undefined address", i)
			}
			if err := t.node(child, cn, d-1); err != nil {
				return err
			}
		}
		if i < nrec {
			if err := t.record(&recs, off); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *bt2) record(c *cursor, node int64) error {
	f := t.f
	a, err := f.addr(c.u(f.so), "v2 B-tree chunk record")
	if err != nil {
		return err
	}
	size, mask := t.lay.chunkBytes, uint32(0)
	if t.typ == bt2FilteredChunks {
		size = c.u(t.sizeLen)
		mask = c.u32()
	}
	for i := range t.scaled {
		t.scaled[i] = c.u(8)
	}
	if a == undef {
		return catalog.Corrupt("hdf5", "", int64(node), "v2 B-tree node: chunk record with undefined address")
	}
	return t.e.emit(t.scaled, t.lay, mask, a, size)
}
