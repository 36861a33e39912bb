package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader"
)

// The placement is checked against a reference encoder written here the
// other way round: it walks the stored array in storage order (an odometer
// whose fastest dimension is the last for row-major blocks and the first
// for column-major ones), writing for every stored index inside the valid
// region the value of its global index, in the block's byte order, and
// garbage elsewhere (ghost cells, the padding of partial edge chunks).

// value is the element of global index g as little-endian bytes of size.
func value(g []int64, size int) []byte {
	v := uint64(0x9e3779b97f4a7c15)
	for _, x := range g {
		v = (v ^ uint64(x+1)) * 0x100000001b3
	}
	b := binary.LittleEndian.AppendUint64(nil, v)
	return b[:size]
}

// encode is the reference encoder: the decoded bytes of block b.
func encode(b *catalog.Block, dt catalog.DType, garbage *rand.Rand) []byte {
	st := b.StoredShape()
	rank := len(st)
	var out []byte
	s := make([]int64, rank)
	n := int64(1)
	for _, c := range st {
		n *= c
	}
	for e := int64(0); e < n; e++ {
		inside := true
		g := make([]int64, rank)
		for d := range rank {
			sl := int64(0)
			if b.StoredLower() != nil {
				sl = b.StoredLower()[d]
			}
			g[d] = s[d] - sl + b.Box.Lower[d]
			if s[d] < sl || s[d] >= sl+b.Box.Count[d] {
				inside = false
			}
		}
		var v []byte
		if inside {
			v = value(g, dt.Size)
		} else {
			v = make([]byte, dt.Size)
			for i := range v {
				v[i] = byte(garbage.IntN(256))
			}
		}
		if dt.BigEndian {
			slices.Reverse(v)
		}
		out = append(out, v...)
		// Odometer in storage order.
		if b.Order == catalog.ColMajor {
			for d := 0; d < rank; d++ {
				if s[d]++; s[d] < st[d] {
					break
				}
				s[d] = 0
			}
		} else {
			for d := rank - 1; d >= 0; d-- {
				if s[d]++; s[d] < st[d] {
					break
				}
				s[d] = 0
			}
		}
	}
	return out
}

// expectBand is the row-major little-endian band with the block's values
// in region and sentinel bytes elsewhere.
func expectBand(band, region catalog.Box, size int) []byte {
	out := bytes.Repeat([]byte{0xa5}, int(band.Elements())*size)
	rank := len(band.Lower)
	idx := make([]int64, rank)
	for e := int64(0); e < band.Elements(); e++ {
		g := make([]int64, rank)
		in := true
		for d := range rank {
			g[d] = band.Lower[d] + idx[d]
			if g[d] < region.Lower[d] || g[d] >= region.Lower[d]+region.Count[d] {
				in = false
			}
		}
		if in {
			copy(out[e*int64(size):], value(g, size))
		}
		for d := rank - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < band.Count[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// memSource serves blocks from an in-memory "file" (raw, no codecs).
type memSource struct{ file []byte }

func (m memSource) ReadBlock(_ context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	if b.Offset < 0 || b.Offset+b.Length > int64(len(m.file)) {
		return nil, fmt.Errorf("read %d+%d of %d", b.Offset, b.Length, len(m.file))
	}
	return bytes.Clone(m.file[b.Offset : b.Offset+b.Length]), nil
}

// randomCase makes an array shape, a block (box, stored shape with ghost
// cells or edge padding, order, byte order) and a band along dimension 0.
func randomCase(r *rand.Rand) (shape []int64, b *catalog.Block, dt catalog.DType, band catalog.Box) {
	rank := r.IntN(5)
	dt = catalog.DType{Kind: catalog.Uint, Size: []int{1, 2, 4, 8}[r.IntN(4)], BigEndian: r.IntN(2) == 0}
	shape = make([]int64, rank)
	b = &catalog.Block{Box: catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}}
	if r.IntN(2) == 0 {
		b.Order = catalog.ColMajor
	}
	ghost := r.IntN(3) == 0
	padded := r.IntN(3) == 0
	var stored, lower []int64
	if ghost || padded {
		stored = make([]int64, rank)
	}
	if ghost {
		lower = make([]int64, rank)
	}
	*b = b.WithStored(stored, lower)
	for d := range rank {
		shape[d] = 1 + r.Int64N(7)
		b.Box.Lower[d] = r.Int64N(shape[d])
		b.Box.Count[d] = 1 + r.Int64N(shape[d]-b.Box.Lower[d])
		if b.Stored() != nil {
			b.Stored()[d] = b.Box.Count[d]
		}
		if ghost {
			b.StoredLower()[d] = r.Int64N(3)
			b.Stored()[d] += b.StoredLower()[d] + r.Int64N(3)
		}
		if padded {
			b.Stored()[d] += r.Int64N(3)
		}
	}
	band = catalog.Box{Lower: make([]int64, rank), Count: slices.Clone(shape)}
	if rank > 0 {
		band.Lower[0] = r.Int64N(shape[0])
		band.Count[0] = 1 + r.Int64N(shape[0]-band.Lower[0])
	}
	return
}

// checkPlacement runs one case: the block as encoded must match the band
// where they meet, a changed element inside the region must be found at
// its index, and the rows of a raw row-major block read in part
// (trimRows) must give the same answer.
func checkPlacement(t *testing.T, r *rand.Rand) {
	shape, b, dt, band := randomCase(r)
	a := &catalog.Array{DType: dt, Shape: shape, Blocks: []catalog.Block{*b}}
	if err := checkBlock(a, 0); err != nil {
		t.Fatalf("generated an invalid block: %v", err)
	}
	data := encode(b, dt, r)
	region, ok := b.Box.Intersect(band)
	if len(shape) == 0 {
		region, ok = catalog.Box{Lower: []int64{}, Count: []int64{}}, true
	}
	if !ok {
		return
	}
	p := newPlacement(b, dt)
	if int64(len(data)) != p.storedBytes() {
		t.Fatalf("encoded %d bytes, placement expects %d", len(data), p.storedBytes())
	}
	want := expectBand(band, region, dt.Size)
	if m := p.compare(data, region, band, want); m != nil {
		t.Fatalf("shape %v block %+v %v band %v: difference at %v in=%x out=%x", shape, *b, dt, band, m.index, m.in, m.out)
	}
	// One element of the region changed in the band.
	g := make([]int64, len(shape))
	off := int64(0)
	for d := range shape {
		g[d] = region.Lower[d] + r.Int64N(region.Count[d])
	}
	stride := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		off += (g[d] - band.Lower[d]) * stride
		stride *= band.Count[d]
	}
	bad := bytes.Clone(want)
	bad[off*int64(dt.Size)+int64(r.IntN(dt.Size))] ^= 0x40
	m := p.compare(data, region, band, bad)
	if m == nil || !slices.Equal(m.index, g) {
		t.Fatalf("shape %v block %+v %v band %v: changed element %v, found %+v", shape, *b, dt, band, g, m)
	}
	if !bytes.Equal(m.in, value(g, dt.Size)) {
		t.Fatalf("in=%x, want %x", m.in, value(g, dt.Size))
	}
	// Rows read in part.
	if len(shape) > 0 {
		file := append(bytes.Repeat([]byte{0xee}, 13), data...)
		fb := *b
		fb.Offset, fb.Length = 13, int64(len(data))
		tb, ok := trimRows(&fb, dt, band.Lower[0], band.Lower[0]+band.Count[0])
		if ok {
			td, err := memSource{file}.ReadBlock(context.Background(), tb, dt)
			if err != nil {
				t.Fatal(err)
			}
			tp := newPlacement(tb, dt)
			if int64(len(td)) != tp.storedBytes() {
				t.Fatalf("trimmed block %+v: %d bytes, want %d", *tb, len(td), tp.storedBytes())
			}
			if m := tp.compare(td, region, band, want); m != nil {
				t.Fatalf("trimmed block %+v of %+v band %v: difference at %v", *tb, fb, band, m.index)
			}
			if m := tp.compare(td, region, band, bad); m == nil || !slices.Equal(m.index, g) {
				t.Fatalf("trimmed block %+v: changed element %v, found %+v", *tb, g, m)
			}
		}
	}
}

func TestPlacementRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		checkPlacement(t, r)
	}
}

// FuzzPlacement: the differential test of the placement against the
// reference encoder, one random case per seed.
func FuzzPlacement(f *testing.F) {
	for i := range uint64(8) {
		f.Add(i, i*7919)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		checkPlacement(t, rand.New(rand.NewPCG(s1, s2)))
	})
}

// The placement against h5py: HDF5 files written by h5py (chunked with
// partial edge chunks, big- and little-endian types, compressed and raw)
// are read through relayout's HDF5 reader, and every block, placed by
// verify, must equal the whole array as h5py reads it (row-major
// little-endian), and must not equal it once one element is changed.
func TestPlacementAgainstH5py(t *testing.T) {
	dir := t.TempDir()
	fn := filepath.Join(dir, "in.h5")
	python(t, `
import sys, numpy as np, h5py
rng = np.random.default_rng(7)
with h5py.File(sys.argv[1], "w") as f:
    for i, (shape, chunks, dt, comp) in enumerate([
        ((13, 7, 5), (4, 3, 2), ">f8", None),
        ((13, 7, 5), (5, 7, 5), "<i2", "gzip"),
        ((29, 3), (8, 2), ">u4", None),
        ((17,), (5,), ">i8", "gzip"),
        ((6, 5, 4, 3), (4, 2, 3, 2), ">f4", None),
    ]):
        a = rng.integers(-1000, 1000, size=shape).astype(dt)
        f.create_dataset("a%d" % i, data=a, chunks=chunks, compression=comp)
        np.ascontiguousarray(a.astype(np.dtype(dt).newbyteorder("<"))).tofile(sys.argv[1] + ".a%d" % i)
`, fn)
	ds, err := reader.Open(fn, reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	n := 0
	err = ds.Scan(context.Background(), func(a *catalog.Array) error {
		n++
		want, err := os.ReadFile(fn + "." + a.Var)
		if err != nil {
			return err
		}
		band := catalog.Box{Lower: make([]int64, len(a.Shape)), Count: a.Shape}
		partial := 0
		for i := range a.Blocks {
			b := &a.Blocks[i]
			if err := checkBlock(a, i); err != nil {
				return err
			}
			data, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
			if err != nil {
				return err
			}
			p := newPlacement(b, a.DType)
			if m := p.compare(data, b.Box, band, want); m != nil {
				t.Errorf("%s block %v: differs from h5py at %v: in=%x h5py=%x", a.Var, b.Box, m.index, m.in, m.out)
			}
			if b.Stored() != nil && !slices.Equal(b.Stored(), b.Box.Count) {
				partial++
			}
			bad := bytes.Clone(want)
			// The block's last element.
			e, stride := int64(0), int64(1)
			for d := len(a.Shape) - 1; d >= 0; d-- {
				e += (b.Box.Lower[d] + b.Box.Count[d] - 1) * stride
				stride *= a.Shape[d]
			}
			bad[e*int64(a.DType.Size)] ^= 1
			if m := p.compare(data, b.Box, band, bad); m == nil {
				t.Errorf("%s block %v: a changed last element not found", a.Var, b.Box)
			}
		}
		if partial == 0 && a.Var != "a1" {
			t.Errorf("%s: no partial edge chunk among %d blocks", a.Var, len(a.Blocks))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Fatalf("%d arrays read, want 5", n)
	}
}

// The placement against ADIOS2's own reader (the adios2 Python module of
// ../shared/peers): the BP5 file written on big-endian s390x (ADIOS2 2.12
// lists no variables in the i386 one, so it is no oracle there), and the
// load-balanced BP4 set (64 blocks over 6 writers, 3 sub-files);
// every block, placed by verify, must equal the array ADIOS2 reads (where
// the block lies; holes are not the placement's business).
func TestPlacementAgainstADIOS2(t *testing.T) {
	for _, sub := range []string{"bp5/archive/Common.s390x.bp5.bp", "bp4/generated-lb/lb-bp4.bp", "bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp"} {
		t.Run(filepath.Base(sub), func(t *testing.T) {
			in := shared(t, sub)
			dump := t.TempDir()
			testkit.PeersPython(t, "-c", `
import sys, os, numpy as np, adios2
src, out = sys.argv[1:3]
with adios2.FileReader(src) as f:
    for name, v in f.available_variables().items():
        if "complex" in v["Type"] or "string" in v["Type"]:
            continue
        for s in range(int(v["AvailableStepsCount"])):
            a = np.asarray(f.read(name, step_selection=[s, 1]))
            fn = os.path.join(out, name.replace("/", "_") + ".%d" % s)
            np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tofile(fn)
`, in, dump)
			ds, err := reader.Open(in, reader.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			arrays, blocks, swapped := 0, 0, 0
			err = ds.Scan(context.Background(), func(a *catalog.Array) error {
				want, err := os.ReadFile(filepath.Join(dump, strings.ReplaceAll(a.Var, "/", "_")+"."+strconv.FormatInt(a.Step, 10)))
				if os.IsNotExist(err) {
					return nil // a type ADIOS2 dumps not (complex)
				}
				if err != nil {
					return err
				}
				if int64(len(want)) != a.Bytes() {
					return fmt.Errorf("%s step %d: ADIOS2 read %d bytes, the catalog says %d", a.Var, a.Step, len(want), a.Bytes())
				}
				arrays++
				band := catalog.Box{Lower: make([]int64, len(a.Shape)), Count: a.Shape}
				for i := range a.Blocks {
					b := &a.Blocks[i]
					if err := checkBlock(a, i); err != nil {
						return err
					}
					data, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
					if err != nil {
						return err
					}
					p := newPlacement(b, a.DType)
					region := b.Box
					if len(a.Shape) == 0 {
						region = catalog.Box{Lower: []int64{}, Count: []int64{}}
					}
					if m := p.compare(data, region, band, want); m != nil {
						t.Errorf("%s step %d block %v: differs from ADIOS2 at %v: in=%x adios2=%x", a.Var, a.Step, b.Box, m.index, m.in, m.out)
					}
					blocks++
					if p.swap {
						swapped++
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if arrays == 0 || blocks == 0 || strings.Contains(sub, "s390x") && swapped == 0 {
				t.Fatalf("%d arrays, %d blocks (%d big-endian) compared", arrays, blocks, swapped)
			}
			t.Logf("%s: %d arrays, %d blocks (%d big-endian) equal to ADIOS2's reads", sub, arrays, blocks, swapped)
		})
	}
}

// The placement of column-major AMReX boxes against yt (the AMReX
// frontend, Fortran-ordered grids): every grid of two fields of
// pelelmex-3d, turned row-major here, must equal the block of the same box
// as verify places it.
func TestPlacementAgainstYT(t *testing.T) {
	dir := shared(t, "amrex/pelelmex-3d")
	fields := []string{"temp", "x_velocity"}
	y := testkit.RunYT(t, "../reader/amrex/testdata/yt_dump.py", dir, "boxlib", fields...)
	ds, err := reader.Open(dir, reader.Options{Vars: fields})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	arrays := map[string]*catalog.Array{}
	if err := ds.Scan(context.Background(), func(a *catalog.Array) error {
		arrays[fmt.Sprintf("%s/%d", a.Var, a.Level)] = a
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for fi, field := range y.Fields {
		pos := 0
		for _, g := range y.Grids {
			n := int(g.Dims[0] * g.Dims[1] * g.Dims[2])
			vals := y.Values[fi][pos : pos+n]
			pos += n
			a := arrays[fmt.Sprintf("%s/%d", field, g.Level)]
			if a == nil {
				t.Fatalf("%s level %d: not in the catalog", field, g.Level)
			}
			box := catalog.Box{Lower: make([]int64, 3), Count: slices.Clone(g.Dims)}
			for d := range 3 {
				box.Lower[d] = g.Start[d] - a.Offset[d]
			}
			// yt's values are Fortran-ordered (x fastest); the band row-major.
			want := make([]byte, 8*n)
			for i := int64(0); i < g.Dims[0]; i++ {
				for j := int64(0); j < g.Dims[1]; j++ {
					for k := int64(0); k < g.Dims[2]; k++ {
						v := vals[(k*g.Dims[1]+j)*g.Dims[0]+i]
						binary.LittleEndian.PutUint64(want[8*((i*g.Dims[1]+j)*g.Dims[2]+k):], math.Float64bits(v))
					}
				}
			}
			bi := slices.IndexFunc(a.Blocks, func(b catalog.Block) bool {
				return slices.Equal(b.Box.Lower, box.Lower) && slices.Equal(b.Box.Count, box.Count)
			})
			if bi < 0 {
				t.Fatalf("%s level %d: no block of box %v", field, g.Level, box)
			}
			b := &a.Blocks[bi]
			data, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
			if err != nil {
				t.Fatal(err)
			}
			if m := newPlacement(b, a.DType).compare(data, box, box, want); m != nil {
				t.Fatalf("%s level %d box %v: differs from yt at %v: in=%x yt=%x", field, g.Level, box, m.index, m.in, m.out)
			}
			compared++
		}
	}
	t.Logf("%d column-major boxes equal to yt's grids", compared)
}
