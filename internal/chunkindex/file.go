package chunkindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"relayout/catalog"
)

// Bounds on untrusted input. Real files stay far below every one of them.
const (
	maxDepth      = 64      // B-tree levels
	maxHeaderMsgs = 1 << 16 // object header messages, over all chunks
	maxOHChunks   = 1024    // object header continuation chunks
	maxRank       = 32      // HDF5's own limit (H5S_MAX_RANK)
)

var signature = []byte{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'}

// defaultIstoreK is HDF5's default K of chunk B-trees (HDF5_BTREE_CHUNK_IK_DEF).
const defaultIstoreK = 32

// file is an HDF5 file seen through an io.ReaderAt, with the superblock's
// address geometry. Every read is checked against size before allocating,
// and the bytes read over one List call are capped (see budget).
type file struct {
	r    io.ReaderAt
	size int64
	base int64 // absolute offset of HDF5 address 0
	so   int   // size of offsets (addresses), bytes
	sl   int   // size of lengths, bytes
	// istoreK is the K of chunk B-trees (version 1): a node holds at most
	// 2K entries. Superblock version 1 records it, the others use the
	// library's default.
	istoreK int
	// budget caps the bytes read by one List call. Index structures of a
	// well-formed file do not overlap, so they total less than the file;
	// a crafted file whose nodes all point at one big block would
	// otherwise make the walk quadratic in the file size.
	budget int64
	// onMessage, when set, sees every object header message headerMessages
	// walks (CheckAttributes).
	onMessage func(message) error
}

func unsupported(format string, args ...any) error {
	return fmt.Errorf("chunkindex: "+format+": %w", append(args, catalog.ErrUnsupported)...)
}

// read returns n bytes at absolute offset off.
func (f *file) read(off, n int64, what string) ([]byte, error) {
	if off < 0 || n < 0 || off > f.size || n > f.size-off {
		return nil, catalog.Corrupt("hdf5", "", int64(off), "%s: %d bytes run past the end of the file (size %d)", what, n, f.size)
	}
	if n > f.budget {
		return nil, catalog.Corrupt("hdf5", "", int64(off), "%s: index structures read more than twice the file size (overlapping or looping structures)", what)
	}
	f.budget -= n
	b := make([]byte, n)
	if _, err := f.r.ReadAt(b, off); err != nil && !(err == io.EOF && off+n == f.size) {
		return nil, fmt.Errorf("chunkindex: %s at offset %d: %w", what, off, err)
	}
	return b, nil
}

// undef is the value an undefined address decodes to.
const undef = -1

// addr converts a relative HDF5 address to an absolute file offset: undef
// for the undefined address (all bits set), an error if it lies outside
// the file.
func (f *file) addr(rel uint64, what string) (int64, error) {
	if f.so < 8 && rel == 1<<(8*f.so)-1 || rel == ^uint64(0) {
		return undef, nil
	}
	if rel >= uint64(f.size) || f.base+int64(rel) >= f.size {
		return 0, catalog.Corrupt("hdf5", "", -1, "%s: address %d lies outside the file (size %d, base %d)", what, rel, f.size, f.base)
	}
	return f.base + int64(rel), nil
}

// le decodes an n-byte little-endian unsigned integer (n ≤ 8).
func le(b []byte) uint64 {
	var v uint64
	for i := len(b) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// cursor walks a byte slice whose length the caller has checked.
type cursor struct {
	b   []byte
	off int
}

func (c *cursor) left() int { return len(c.b) - c.off }

func (c *cursor) skip(n int) { c.off += n }

func (c *cursor) u(n int) uint64 {
	v := le(c.b[c.off : c.off+n])
	c.off += n
	return v
}

func (c *cursor) u8() uint8 { return uint8(c.u(1)) }

func (c *cursor) u16() uint16 {
	v := binary.LittleEndian.Uint16(c.b[c.off:])
	c.off += 2
	return v
}

func (c *cursor) u32() uint32 {
	v := binary.LittleEndian.Uint32(c.b[c.off:])
	c.off += 4
	return v
}

// openFile finds the format signature (at 0, 512, 1024, 2048, ...) and
// decodes the superblock there.
func openFile(r io.ReaderAt, size int64) (*file, error) {
	f := &file{r: r, size: size, budget: 2*size + 1<<20, istoreK: defaultIstoreK}
	for off := int64(0); off < size; off = max(512, 2*off) {
		if size-off < 8 {
			break
		}
		sig, err := f.read(off, 8, "superblock signature")
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(sig, signature) {
			continue
		}
		return f, f.superblock(off)
	}
	return nil, catalog.Corrupt("hdf5", "", -1, "no HDF5 format signature found (size %d)", size)
}

func (f *file) superblock(off int64) error {
	head, err := f.read(off, min(64, f.size-off), "superblock")
	if err != nil {
		return err
	}
	if len(head) < 9 {
		return catalog.Corrupt("hdf5", "", int64(off), "superblock: truncated")
	}
	version := head[8]
	var pos int
	switch version {
	case 0, 1:
		if len(head) < 24 {
			return catalog.Corrupt("hdf5", "", int64(off), "superblock: truncated")
		}
		f.so, f.sl = int(head[13]), int(head[14])
		pos = 24
		if version == 1 {
			// indexed storage internal node K (H5Pset_istore_k), reserved
			f.istoreK = int(le(head[24:26]))
			if f.istoreK == 0 {
				return catalog.Corrupt("hdf5", "", int64(off), "superblock: indexed storage node K 0")
			}
			pos += 4
		}
	case 2, 3:
		if len(head) < 12 {
			return catalog.Corrupt("hdf5", "", int64(off), "superblock: truncated")
		}
		f.so, f.sl = int(head[9]), int(head[10])
		pos = 12
	default:
		return unsupported("superblock at offset %d: version %d", off, version)
	}
	for _, n := range []int{f.so, f.sl} {
		if n != 2 && n != 4 && n != 8 {
			return catalog.Corrupt("hdf5", "", int64(off), "superblock: size of offsets/lengths %d/%d", f.so, f.sl)
		}
	}
	if len(head) < pos+f.so {
		return catalog.Corrupt("hdf5", "", int64(off), "superblock: truncated")
	}
	// The base address field (at pos) is, by the specification, the
	// superblock's own offset; like the library, trust where the signature
	// was found (a user block shifts both) over a disagreeing field.
	f.base = off
	return nil
}

// bytesFor is the number of bytes needed to encode m (at least one).
func bytesFor(m uint64) int {
	return (bits.Len64(m|1)-1)/8 + 1
}

// mulCheck multiplies non-negative values, failing on overflow past limit.
func mulCheck(a, b, limit uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 || lo > limit {
		return 0, false
	}
	return lo, true
}
