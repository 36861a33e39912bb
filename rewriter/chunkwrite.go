package rewriter

import (
	"fmt"
	"hash"
	"os"

	"golang.org/x/sys/unix"

	"relayout/catalog"
	"relayout/internal/chunkindex"
	"relayout/planner"
)

// chunkTarget is a raw chunked dataset whose chunks HDF5 allocated when it
// was created (h5.DatasetSpec.Allocate): phase 2 pwrites them like the
// contiguous datasets, off HDF5's global lock.
type chunkTarget struct {
	layout  planner.Layout
	objAddr uint64 // the dataset's object header (h5.OutDataset.ObjAddr)
}

// canAllocateChunks reports whether a's chunks can be allocated up front and
// pwritten: raw (no filters) and every chunk touched by a block (a sparse
// array's holes would otherwise take space). Where one plane of a chunk row
// exceeds the read-back buffer, the digest is not read back chunk row by
// chunk row (digestSite): such arrays were sent through the part files,
// their bytes written twice (SCORPIO's 57.6 MB record slabs).
func canAllocateChunks(a *catalog.Array, opts Options) bool {
	return opts.Deflate == 0 && len(a.Shape) > 0 && a.Elements() > 0 && planner.FullyCovered(a)
}

// allocatedChunks lists the chunks HDF5 allocated for a dataset (its object
// header at objAddr) from the file's chunk index, in time linear in the
// chunks (internal/chunkindex; the library's per-chunk queries walk the
// index each time). It returns their offsets row-major over the grid, and
// refuses an index that lacks a chunk, lists one twice, or holds one of
// another size or outside the file.
func allocatedChunks(f *os.File, objAddr uint64, grid, chunk []int64, chunkBytes int64) ([]int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	addrs := make([]int64, product(grid))
	for i := range addrs {
		addrs[i] = -1
	}
	err = chunkindex.List(f, fi.Size(), objAddr, func(c chunkindex.Chunk) error {
		k := int64(0)
		for d := range c.Offset {
			k = k*grid[d] + c.Offset[d]/chunk[d]
		}
		switch {
		case len(c.Offset) != len(grid) || k < 0 || k >= int64(len(addrs)) || addrs[k] >= 0:
			return fmt.Errorf("chunk at %v listed twice or off the grid", c.Offset)
		case c.Size != chunkBytes || c.Address < 0 || c.Address+chunkBytes > fi.Size():
			return fmt.Errorf("chunk at %v: %d bytes at %d in a file of %d, want %d", c.Offset, c.Size, c.Address, fi.Size(), chunkBytes)
		}
		addrs[k] = c.Address
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: chunk index: %w", f.Name(), err)
	}
	for k, a := range addrs {
		if a < 0 {
			return nil, fmt.Errorf("%s: chunk %d of %v not allocated", f.Name(), k, grid)
		}
	}
	return addrs, nil
}

// eachChunk calls fn with the grid coordinates of every chunk inside slab,
// in row-major order. Units are cut on chunk boundaries (or end with the
// array); any other slab is a planner bug.
func eachChunk(slab catalog.Box, chunk []int64, fn func(c []int64) error) error {
	rank := len(chunk)
	lo, hi := make([]int64, rank), make([]int64, rank)
	for d := range rank {
		if slab.Lower[d]%chunk[d] != 0 {
			return fmt.Errorf("unit %v not aligned to chunk %v", slab, chunk)
		}
		lo[d] = slab.Lower[d] / chunk[d]
		hi[d] = (slab.Lower[d] + slab.Count[d] + chunk[d] - 1) / chunk[d]
		if lo[d] >= hi[d] {
			return nil
		}
	}
	c := append([]int64(nil), lo...)
	for {
		if err := fn(c); err != nil {
			return err
		}
		d := rank - 1
		for ; d >= 0; d-- {
			if c[d]++; c[d] < hi[d] {
				break
			}
			c[d] = lo[d]
		}
		if d < 0 {
			return nil
		}
	}
}

// writeChunkFrom pwrites chunk c (grid coordinates) at addr in the full
// chunk shape, gathering its rows along the last dimension from buf (slab's
// row-major bytes; the chunk lies inside slab except where it passes the
// array's end) and padding with zeros beyond the array. It returns the bytes
// written.
func writeChunkFrom(f *os.File, addr int64, buf []byte, slab catalog.Box, shape, chunk, c []int64, size int64, zeros []byte) (int64, error) {
	rank := len(chunk)
	last := rank - 1
	rowBytes := chunk[last] * size
	k0 := c[last] * chunk[last]
	valid := min(chunk[last], shape[last]-k0) * size // bytes of each row inside the array
	// strides of slab's buffer, in bytes
	stride := make([]int64, rank)
	s := size
	for d := last; d >= 0; d-- {
		stride[d] = s
		s *= slab.Count[d]
	}
	var iov [][]byte
	var pending int64 // bytes in iov: flushed at writePiece (see writeAt)
	off := addr
	flush := func() error {
		for len(iov) > 0 {
			n, err := unix.Pwritev(int(f.Fd()), iov, off)
			if err != nil {
				return fmt.Errorf("%s: writing a chunk at %d: %w", f.Name(), off, err)
			}
			off += int64(n)
			pending -= int64(n)
			for n > 0 { // a short write: drop what was written
				if n >= len(iov[0]) {
					n -= len(iov[0])
					iov = iov[1:]
				} else {
					iov[0] = iov[0][n:]
					n = 0
				}
			}
		}
		return nil
	}
	idx := make([]int64, last) // position in the chunk along dimensions 0..last-1
	for {
		inside := true
		pos := (k0 - slab.Lower[last]) * size
		for d := range last {
			g := c[d]*chunk[d] + idx[d]
			if g >= shape[d] {
				inside = false
				break
			}
			pos += (g - slab.Lower[d]) * stride[d]
		}
		if inside {
			iov = append(iov, buf[pos:pos+valid])
			if valid < rowBytes {
				iov = append(iov, zeros[:rowBytes-valid])
			}
		} else {
			iov = append(iov, zeros[:rowBytes])
		}
		pending += rowBytes
		if len(iov) >= 1022 || pending >= writePiece { // IOV_MAX is 1024
			if err := flush(); err != nil {
				return off - addr, err
			}
		}
		d := last - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < chunk[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			break
		}
	}
	err := flush()
	return off - addr, err
}

// Chunks whose rows (along the last dimension) are shorter than gatherRow
// bytes are cut into a copy and written with one pwrite, if the whole chunk
// is at most gatherChunk bytes: 64000 chunks of 8³ float64 took 1.42 s with
// pwritev of 64-byte entries, against ~1.0 s through copies. (Variables:
// tests turn gathering off to exercise pwritev.)
var (
	gatherRow   int64 = 512
	gatherChunk int64 = 1 << 20
)

// hashChunkRows hashes rows [lo, hi) along dimension 0 of an array stored in
// chunks (at addrs, row-major over the chunk grid, each in the full chunk
// shape) in the array's row-major order. A few planes at a time, the slice
// of every chunk of their chunk row that holds them (contiguous within a
// chunk) is read into buf; the planes are then hashed run by run along the
// last dimension. One plane of a chunk row must fit buf (canAllocateChunks).
func hashChunkRows(f *os.File, h hash.Hash, buf []byte, shape, chunk []int64, size int64, addrs []int64, lo, hi int64) error {
	rank := len(shape)
	grid := chunkGrid(shape, chunk)
	perRow := product(grid[1:])        // chunks in a chunk row
	slice := product(chunk[1:]) * size // bytes of one plane within a chunk
	planes := max(1, min(chunk[0], int64(len(buf))/(perRow*slice)))
	if perRow*slice > int64(len(buf)) {
		return fmt.Errorf("%s: a plane of %d chunks of %d bytes exceeds the %d-byte read-back buffer", f.Name(), perRow, slice, len(buf))
	}
	for p := lo; p < hi; {
		c0 := p / chunk[0]
		q := min(hi, (c0+1)*chunk[0], p+planes)
		m := q - p
		for r := range perRow {
			dst := buf[r*m*slice : (r+1)*m*slice]
			at := addrs[c0*perRow+r] + (p-c0*chunk[0])*slice
			if _, err := f.ReadAt(dst, at); err != nil {
				return fmt.Errorf("%s: reading back %d bytes at %d for the digest: %w", f.Name(), len(dst), at, err)
			}
		}
		if rank == 1 {
			h.Write(buf[:m*size])
		} else {
			hashPlanes(h, buf, shape, chunk, grid, size, m)
		}
		p = q
	}
	return nil
}

// hashPlanes hashes m planes read by hashChunkRows (chunk r's slices at
// buf[r*m*slice:]) in row-major order: for each plane, each index along
// dimensions 1..rank-2, and each chunk along the last dimension, the run of
// elements inside the array.
func hashPlanes(h hash.Hash, buf []byte, shape, chunk, grid []int64, size, m int64) {
	rank := len(shape)
	last := rank - 1
	slice := product(chunk[1:]) * size
	mid := shape[1:last] // dimensions between the first and the last
	idx := make([]int64, len(mid))
	for t := range m {
		for {
			// chunk index (within the chunk row) of the row's first chunk,
			// and the row's element offset within such a chunk
			r, local := int64(0), int64(0)
			for d := 1; d < last; d++ {
				j := idx[d-1]
				r = r*grid[d] + j/chunk[d]
				local = local*chunk[d] + j%chunk[d]
			}
			r *= grid[last]
			local *= chunk[last]
			for cl := range grid[last] {
				n := min(chunk[last], shape[last]-cl*chunk[last]) * size
				at := (r+cl)*m*slice + t*slice + local*size
				h.Write(buf[at : at+n])
			}
			d := len(mid) - 1
			for ; d >= 0; d-- {
				if idx[d]++; idx[d] < mid[d] {
					break
				}
				idx[d] = 0
			}
			if d < 0 {
				break
			}
		}
	}
}
