package chunkindex

import (
	"bytes"
	"math"
	"math/bits"

	"relayout/catalog"
)

// arrayElems decodes the chunk entries shared by fixed and extensible
// arrays: address, and for filtered datasets (client 1) chunk size and
// filter mask. Entries with the undefined address are unallocated chunks.
type arrayElems struct {
	f         *file
	lay       *layout
	e         *emitter
	what      string
	entryWhat string // what + " chunk entry", built once: decode runs per chunk
	entry     int    // bytes per entry
	filtered  bool
	sizeLen   int
	// toScaled maps an element index to chunk-grid coordinates.
	toScaled func(idx uint64, out []uint64) error
	scaled   []uint64
}

func newArrayElems(f *file, lay *layout, e *emitter, what string, client uint8, entry int, at int64) (*arrayElems, error) {
	a := &arrayElems{f: f, lay: lay, e: e, what: what, entryWhat: what + " chunk entry", entry: entry, scaled: make([]uint64, lay.rank)}
	switch client {
	case 0:
		if entry != f.so {
			return nil, catalog.Corrupt("hdf5", "", int64(at), "%s header: entry size %d for unfiltered chunks", what, entry)
		}
	case 1:
		a.filtered = true
		a.sizeLen = entry - f.so - 4
		if a.sizeLen < 1 || a.sizeLen > 8 {
			return nil, catalog.Corrupt("hdf5", "", int64(at), "%s header: entry size %d for filtered chunks", what, entry)
		}
	default:
		return nil, catalog.Corrupt("hdf5", "", int64(at), "%s header: client %d", what, client)
	}
	return a, nil
}

// decode emits the allocated chunks among the entries in b, the first of
// which has element index first.
func (a *arrayElems) decode(b []byte, first uint64) error {
	c := cursor{b: b}
	for i := uint64(0); c.left() >= a.entry; i++ {
		rel := c.u(a.f.so)
		size, mask := a.lay.chunkBytes, uint32(0)
		if a.filtered {
			size = c.u(a.sizeLen)
			mask = c.u32()
		}
		addr, err := a.f.addr(rel, a.entryWhat)
		if err != nil {
			return err
		}
		if addr == undef {
			continue
		}
		if err := a.toScaled(first+i, a.scaled); err != nil {
			return err
		}
		if err := a.e.emit(a.scaled, a.lay, mask, addr, size); err != nil {
			return err
		}
	}
	return nil
}

// pageInit reports whether page i is marked initialized in a page bitmap
// (byte i/8, most significant bit first).
func pageInit(bm []byte, i uint64) bool {
	return bm[i/8]&(0x80>>(i%8)) != 0
}

// walkFixedArray lists the chunks of a fixed array index: a header and one
// data block holding one entry per chunk of the maximum extent, in
// row-major chunk order, possibly split into pages.
func (f *file) walkFixedArray(lay *layout, ds *dataspace, e *emitter) error {
	const what = "fixed array"
	hl := 4 + 4 + f.sl + f.so + 4
	b, err := f.read(lay.addr, int64(hl), what+" header")
	if err != nil {
		return err
	}
	if !bytes.Equal(b[:4], []byte("FAHD")) {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "fixed array header: bad signature")
	}
	if err := checksum(b, hl-4, lay.addr, what+" header"); err != nil {
		return err
	}
	c := cursor{b: b, off: 4}
	version, client, entry, pageBits := c.u8(), c.u8(), int(c.u8()), int(c.u8())
	if version != 0 {
		return unsupported("fixed array header at offset %d: version %d", lay.addr, version)
	}
	n := c.u(f.sl)
	dblk, err := f.addr(c.u(f.so), what+" data block")
	if err != nil {
		return err
	}
	a, err := newArrayElems(f, lay, e, what, client, entry, lay.addr)
	if err != nil {
		return err
	}
	g := gridDims(ds.max, lay.chunk)
	want := uint64(1)
	for _, d := range g {
		var ok bool
		if want, ok = mulCheck(want, d, math.MaxInt64); !ok {
			return catalog.Corrupt("hdf5", "", int64(lay.addr), "fixed array header: maximum extent is unlimited or too large")
		}
	}
	if n != want {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "fixed array header: %d entries, the maximum extent has %d chunks", n, want)
	}
	a.toScaled = func(idx uint64, out []uint64) error {
		if idx >= n {
			return catalog.Corrupt("hdf5", "", int64(lay.addr), "fixed array: entry %d beyond %d", idx, n)
		}
		unlinear(idx, g, out)
		return nil
	}
	if dblk == undef || n == 0 {
		return nil
	}
	if pageBits > 62 {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "fixed array header: page bits %d", pageBits)
	}
	if n > uint64(f.size)/uint64(entry) {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "fixed array header: %d entries cannot fit in the file", n)
	}
	prefix := int64(6 + f.so)
	pageN := uint64(1) << pageBits
	if n <= pageN {
		nb := prefix + int64(n)*int64(entry)
		b, err := f.read(dblk, nb+4, what+" data block") // and its checksum
		if err != nil {
			return err
		}
		if err := checkBlock(b, "FADB", client, lay.addr, f, dblk, what); err != nil {
			return err
		}
		if err := checksum(b, int(nb), dblk, what+" data block"); err != nil {
			return err
		}
		return a.decode(b[prefix:nb], 0)
	}
	npages := (n + pageN - 1) / pageN
	bm := int64((npages + 7) / 8)
	b, err = f.read(dblk, prefix+bm+4, what+" data block") // and its checksum
	if err != nil {
		return err
	}
	if err := checkBlock(b, "FADB", client, lay.addr, f, dblk, what); err != nil {
		return err
	}
	if err := checksum(b, int(prefix+bm), dblk, what+" data block"); err != nil {
		return err
	}
	bitmap := b[prefix : prefix+bm]
	pageSize := int64(pageN)*int64(entry) + 4
	start := dblk + prefix + bm + 4 // pages follow the block's checksum
	for p := uint64(0); p < npages; p++ {
		if !pageInit(bitmap, p) {
			continue
		}
		cnt := min(pageN, n-p*pageN)
		np := int64(cnt) * int64(entry)
		pb, err := f.read(start+int64(p)*pageSize, np+4, what+" data block page") // and its checksum
		if err != nil {
			return err
		}
		if err := checksum(pb, int(np), start+int64(p)*pageSize, what+" data block page"); err != nil {
			return err
		}
		if err := a.decode(pb[:np], p*pageN); err != nil {
			return err
		}
	}
	return nil
}

// checkBlock verifies the signature, version, client and header address
// that every array block starts with.
func checkBlock(b []byte, sig string, client uint8, hdr int64, f *file, off int64, what string) error {
	if !bytes.Equal(b[:4], []byte(sig)) {
		return catalog.Corrupt("hdf5", "", int64(off), "%s block: bad signature, want %s", what, sig)
	}
	if b[4] != 0 || b[5] != client {
		return catalog.Corrupt("hdf5", "", int64(off), "%s block: version %d client %d", what, b[4], b[5])
	}
	h, err := f.addr(le(b[6:6+f.so]), what+" block header address")
	if err != nil {
		return err
	}
	if h != hdr {
		return catalog.Corrupt("hdf5", "", int64(off), "%s block: belongs to header %d, not %d", what, h, hdr)
	}
	return nil
}

// walkExtArray lists the chunks of an extensible array index (one
// unlimited dimension). Elements live first in the index block, then in
// data blocks grouped into super blocks s = 0, 1, ...: super block s has
// 2^(s/2) data blocks of 2^((s+1)/2) * min elements each. The first few
// super blocks' data block addresses sit in the index block; later ones
// in secondary blocks.
func (f *file) walkExtArray(lay *layout, ds *dataspace, e *emitter) error {
	const what = "extensible array"
	hl := 4 + 8 + 6*f.sl + f.so + 4
	b, err := f.read(lay.addr, int64(hl), what+" header")
	if err != nil {
		return err
	}
	if !bytes.Equal(b[:4], []byte("EAHD")) {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array header: bad signature")
	}
	if err := checksum(b, hl-4, lay.addr, what+" header"); err != nil {
		return err
	}
	c := cursor{b: b, off: 4}
	version, client, elem := c.u8(), c.u8(), int(c.u8())
	maxBits, iblkElmts, dblkMin, sblkMinPtrs, pageBits := int(c.u8()), uint64(c.u8()), uint64(c.u8()), uint64(c.u8()), int(c.u8())
	if version != 0 {
		return unsupported("extensible array header at offset %d: version %d", lay.addr, version)
	}
	c.skip(6 * f.sl) // statistics
	iblk, err := f.addr(c.u(f.so), what+" index block")
	if err != nil {
		return err
	}
	a, err := newArrayElems(f, lay, e, what, client, elem, lay.addr)
	if err != nil {
		return err
	}
	if maxBits < 1 || maxBits > 64 || dblkMin == 0 || dblkMin&(dblkMin-1) != 0 ||
		sblkMinPtrs == 0 || sblkMinPtrs&(sblkMinPtrs-1) != 0 || pageBits > 62 {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array header: bad creation parameters")
	}
	minBits := bits.TrailingZeros64(dblkMin)
	if minBits > maxBits {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array header: bad creation parameters")
	}
	nsblks := 1 + maxBits - minBits
	iblkSblks := 2 * bits.TrailingZeros64(sblkMinPtrs)
	if iblkSblks > nsblks {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array header: bad creation parameters")
	}
	iblkDblks := int(2 * (sblkMinPtrs - 1))
	arrOff := (maxBits + 7) / 8
	pageN := uint64(1) << pageBits

	// Chunk-grid mapping: the unlimited dimension is the slowest-varying
	// one, the others keep their order over their maximum extent.
	unlim := -1
	for i, m := range ds.max {
		if m == ^uint64(0) {
			if unlim >= 0 {
				return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array index: more than one unlimited dimension")
			}
			unlim = i
		}
	}
	if unlim < 0 {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array index: no unlimited dimension")
	}
	g := gridDims(ds.max, lay.chunk)
	others := make([]uint64, 0, lay.rank-1)
	inner := uint64(1)
	for i, d := range g {
		if i == unlim {
			continue
		}
		others = append(others, d)
		var ok bool
		if inner, ok = mulCheck(inner, d, math.MaxInt64); !ok || d == 0 {
			return catalog.Corrupt("hdf5", "", int64(lay.addr), "extensible array index: extent too large or empty")
		}
	}
	rest := make([]uint64, len(others))
	a.toScaled = func(idx uint64, out []uint64) error {
		unlinear(idx%inner, others, rest)
		j := 0
		for i := range out {
			if i == unlim {
				out[i] = idx / inner
				continue
			}
			out[i] = rest[j]
			j++
		}
		return nil
	}
	if iblk == undef {
		return nil
	}

	// Index block.
	iblkLen := int64(6+f.so) + int64(iblkElmts)*int64(elem) + int64(iblkDblks+nsblks-iblkSblks)*int64(f.so)
	ib, err := f.read(iblk, iblkLen+4, what+" index block") // and its checksum
	if err != nil {
		return err
	}
	if err := checkBlock(ib, "EAIB", client, lay.addr, f, iblk, what); err != nil {
		return err
	}
	if err := checksum(ib, int(iblkLen), iblk, what+" index block"); err != nil {
		return err
	}
	ic := cursor{b: ib, off: 6 + f.so}
	if err := a.decode(ib[ic.off:ic.off+int(iblkElmts)*elem], 0); err != nil {
		return err
	}
	ic.skip(int(iblkElmts) * elem)

	visited := map[int64]bool{}
	next := iblkElmts // element index of the next data block's first element
	// dblock reads one data block of n elements (paged per bitmap bm, nil
	// when the block is not paged).
	dblock := func(addr int64, n uint64, bm []byte, bmFirst uint64) error {
		if visited[addr] {
			return catalog.Corrupt("hdf5", "", int64(addr), "extensible array data block: reached twice")
		}
		visited[addr] = true
		prefix := int64(6 + f.so + arrOff)
		if n <= pageN {
			nb := prefix + int64(n)*int64(elem)
			db, err := f.read(addr, nb+4, what+" data block") // and its checksum
			if err != nil {
				return err
			}
			if err := checkBlock(db, "EADB", client, lay.addr, f, addr, what); err != nil {
				return err
			}
			if err := checksum(db, int(nb), addr, what+" data block"); err != nil {
				return err
			}
			return a.decode(db[prefix:nb], next)
		}
		db, err := f.read(addr, prefix+4, what+" data block") // and its checksum
		if err != nil {
			return err
		}
		if err := checkBlock(db, "EADB", client, lay.addr, f, addr, what); err != nil {
			return err
		}
		if err := checksum(db, int(prefix), addr, what+" data block"); err != nil {
			return err
		}
		if bm == nil {
			return unsupported("extensible array data block at offset %d: paged data block referenced from the index block", addr)
		}
		pageSize := int64(pageN)*int64(elem) + 4
		for p := uint64(0); p < n/pageN; p++ {
			if !pageInit(bm, bmFirst+p) {
				continue
			}
			np, at := int64(pageN)*int64(elem), addr+prefix+4+int64(p)*pageSize
			pb, err := f.read(at, np+4, what+" data block page") // and its checksum
			if err != nil {
				return err
			}
			if err := checksum(pb, int(np), at, what+" data block page"); err != nil {
				return err
			}
			if err := a.decode(pb[:np], next+p*pageN); err != nil {
				return err
			}
		}
		return nil
	}
	for s := 0; s < nsblks; s++ {
		ndblks := uint64(1) << (s / 2)
		dn := (uint64(1) << ((s + 1) / 2)) * dblkMin
		if s < iblkSblks {
			for j := uint64(0); j < ndblks; j++ {
				addr, err := f.addr(ic.u(f.so), what+" data block")
				if err != nil {
					return err
				}
				if addr != undef {
					if err := dblock(addr, dn, nil, 0); err != nil {
						return err
					}
				}
				next += dn
			}
			continue
		}
		saddr, err := f.addr(ic.u(f.so), what+" secondary block")
		if err != nil {
			return err
		}
		if saddr == undef {
			next += ndblks * dn
			continue
		}
		if visited[saddr] {
			return catalog.Corrupt("hdf5", "", int64(saddr), "extensible array secondary block: reached twice")
		}
		visited[saddr] = true
		var bmLen int64
		npages := uint64(0)
		if dn > pageN {
			npages = dn / pageN
			// The library reserves whole bytes per data block but numbers
			// the bits consecutively over all of them (data block j, page
			// p is bit j*npages+p).
			bmLen = int64(ndblks * ((npages + 7) / 8))
		}
		if ndblks > uint64(f.size) {
			return catalog.Corrupt("hdf5", "", int64(saddr), "extensible array secondary block: too many data blocks")
		}
		sbLen := int64(6+f.so+arrOff) + bmLen + int64(ndblks)*int64(f.so)
		sb, err := f.read(saddr, sbLen+4, what+" secondary block") // and its checksum
		if err != nil {
			return err
		}
		if err := checkBlock(sb, "EASB", client, lay.addr, f, saddr, what); err != nil {
			return err
		}
		if err := checksum(sb, int(sbLen), saddr, what+" secondary block"); err != nil {
			return err
		}
		sc := cursor{b: sb, off: 6 + f.so + arrOff}
		bm := sb[sc.off : sc.off+int(bmLen)]
		sc.skip(int(bmLen))
		for j := uint64(0); j < ndblks; j++ {
			addr, err := f.addr(sc.u(f.so), what+" data block")
			if err != nil {
				return err
			}
			if addr != undef {
				if dn <= pageN {
					bm = nil
				}
				if err := dblock(addr, dn, bm, j*npages); err != nil {
					return err
				}
			}
			next += dn
		}
	}
	return nil
}
