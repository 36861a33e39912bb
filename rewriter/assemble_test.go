package rewriter

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"sync"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// fakeSource serves blocks from in-memory "files"; codecs are ignored (the
// bytes are already decoded), which lets tests mark blocks as compressed so
// they are fetched whole.
type fakeSource struct {
	catalog.Plain
	files map[string][]byte
	mu    sync.Mutex
	reads []string // "file@offset+length"
}

func (s *fakeSource) ReadBlock(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	if b.Inline() != nil {
		return append([]byte(nil), b.Inline()...), nil
	}
	f, ok := s.files[b.File]
	if !ok {
		return nil, fmt.Errorf("fake: %s: %w", b.File, catalog.ErrNotFound)
	}
	s.mu.Lock()
	s.reads = append(s.reads, fmt.Sprintf("%s@%d+%d", b.File, b.Offset, b.Length))
	s.mu.Unlock()
	return append([]byte(nil), f[b.Offset:b.Offset+b.Length]...), nil
}

// ReadBlocks implements catalog.Source, a block at a time.
func (s *fakeSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, _ []byte) ([]byte, error) { return s.ReadBlock(ctx, b, dt) }, fn)
}

// encode writes the elements of a stored array of shape stored, whose element
// at stored index p holds val(origin+p), in the given order and byte order.
// It walks indices itself (no strides shared with the code under test).
func encode(stored, origin []int64, order catalog.Order, dt catalog.DType, val func(idx []int64) uint64) []byte {
	n := int64(1)
	for _, c := range stored {
		n *= c
	}
	out := make([]byte, 0, n*int64(dt.Size))
	idx := make([]int64, len(stored))
	for e := int64(0); e < n; e++ {
		// Element e in storage order: decompose with the fastest dimension first.
		r := e
		if order == catalog.RowMajor {
			for d := len(stored) - 1; d >= 0; d-- {
				idx[d] = r % stored[d]
				r /= stored[d]
			}
		} else {
			for d := 0; d < len(stored); d++ {
				idx[d] = r % stored[d]
				r /= stored[d]
			}
		}
		g := make([]int64, len(idx))
		for d := range idx {
			g[d] = origin[d] + idx[d]
		}
		out = appendElem(out, val(g), dt)
	}
	return out
}

func appendElem(out []byte, u uint64, dt catalog.DType) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if dt.BigEndian {
		order = binary.BigEndian
	}
	switch dt.Size {
	case 1:
		return append(out, byte(u))
	case 2:
		return order.AppendUint16(out, uint16(u))
	case 4:
		return order.AppendUint32(out, uint32(u))
	}
	return order.AppendUint64(out, u)
}

// expected builds the row-major little-endian bytes of an array where val
// gives each element (ok=false: uncovered, holds fill).
func expected(shape []int64, dt catalog.DType, val func(idx []int64) (uint64, bool), fill uint64) []byte {
	le := dt.LittleEndian()
	origin := make([]int64, len(shape))
	return encode(shape, origin, catalog.RowMajor, le, func(idx []int64) uint64 {
		if v, ok := val(idx); ok {
			return v
		}
		return fill
	})
}

// runAssembly streams a through the slab pipeline and returns the bytes the
// sink saw, in order, and the digest.
func runAssembly(t *testing.T, src catalog.Source, a *catalog.Array, layout planner.Layout, budget int64, jobs int) ([]byte, string) {
	t.Helper()
	if err := checkArray(a); err != nil {
		t.Fatal(err)
	}
	slabs := planner.Slabs(a.Shape, layout, a.DType.Size, budget)
	var got []byte
	part := &jointPart{a: a, slabs: slabs, sink: func(slab catalog.Box, buf []byte, _ unitOut) error {
		if want := slab.Elements() * int64(a.DType.Size); int64(len(buf)) != want {
			t.Errorf("slab %v: %d bytes, want %d", slab, len(buf), want)
		}
		got = append(got, buf...)
		return nil
	}}
	sums, err := streamJoint(context.Background(), pipeEnv{}, src, []*jointPart{part}, singleItems(0, len(slabs)), nil, jobs)
	if err != nil {
		t.Fatal(err)
	}
	return got, sums[0]
}

func checkBytes(t *testing.T, got, want []byte, sum string, dt catalog.DType) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d bytes, want %d", len(got), len(want))
	}
	for i := 0; i < len(got); i += dt.Size {
		if !bytes.Equal(got[i:i+dt.Size], want[i:i+dt.Size]) {
			t.Fatalf("element %d: got %s, want %s", i/dt.Size,
				formatElem(got[i:], dt.LittleEndian()), formatElem(want[i:], dt.LittleEndian()))
		}
	}
	w := sha256.Sum256(want)
	if sum != hex.EncodeToString(w[:]) {
		t.Fatalf("sha256 %s, want %s", sum, hex.EncodeToString(w[:]))
	}
}

func in(idx, lo, hi []int64) bool {
	for d := range idx {
		if idx[d] < lo[d] || idx[d] >= hi[d] {
			return false
		}
	}
	return true
}

func TestAssembleBigEndianInt32WithFill(t *testing.T) {
	be := catalog.DType{Kind: catalog.Int, Size: 4, BigEndian: true}
	val := func(idx []int64) uint64 { return uint64(int32(idx[0]*16777259 + idx[1]*65599 - 50000000)) }
	neg7 := int32(-7)
	fill := binary.BigEndian.AppendUint32(nil, uint32(neg7))
	a := &catalog.Array{Var: "v", DType: be, Shape: []int64{6, 5}, Fill: fill, Blocks: []catalog.Block{
		{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{3, 5}}, File: "a", Length: 60},
		{Box: catalog.Box{Lower: []int64{3, 0}, Count: []int64{3, 3}}, File: "b", Length: 36,
			Codecs: []catalog.Codec{{Name: "fake"}}},
	}}
	src := &fakeSource{files: map[string][]byte{
		"a": encode([]int64{3, 5}, []int64{0, 0}, catalog.RowMajor, be, val),
		"b": encode([]int64{3, 3}, []int64{3, 0}, catalog.RowMajor, be, val),
	}}
	want := expected(a.Shape, be, func(idx []int64) (uint64, bool) {
		return val(idx), in(idx, []int64{0, 0}, []int64{3, 5}) || in(idx, []int64{3, 0}, []int64{6, 3})
	}, uint64(uint32(neg7)))
	// Two rows (40 bytes) per slab: block a spans slabs 0 and 1.
	got, sum := runAssembly(t, src, a, planner.Layout{Kind: planner.Contiguous}, 40, 2)
	checkBytes(t, got, want, sum, be)
	// The uncompressed block is read piecewise, rows 0-1 then row 2; the
	// "compressed" one whole, once per slab it touches.
	sort.Strings(src.reads)
	if w := []string{"a@0+40", "a@40+20", "b@0+36", "b@0+36"}; !reflect.DeepEqual(src.reads, w) {
		t.Fatalf("reads %v, want %v", src.reads, w)
	}
}

func TestAssembleColumnMajorFloat64(t *testing.T) {
	le := catalog.DType{Kind: catalog.Float, Size: 8}
	be := catalog.DType{Kind: catalog.Float, Size: 8, BigEndian: true}
	val := func(idx []int64) uint64 {
		return math.Float64bits(-1.5 * (float64((idx[0]*5+idx[1])*6+idx[2]) + 0.25))
	}
	type blk struct {
		lo, n []int64
		order catalog.Order
		dt    catalog.DType
	}
	blocks := []blk{
		{[]int64{0, 0, 0}, []int64{4, 5, 3}, catalog.ColMajor, le},
		{[]int64{0, 0, 3}, []int64{2, 5, 3}, catalog.ColMajor, be},
		{[]int64{2, 0, 3}, []int64{2, 5, 3}, catalog.RowMajor, le},
	}
	for _, dt := range []catalog.DType{le, be} {
		t.Run(dt.NumPy(), func(t *testing.T) {
			src := &fakeSource{files: map[string][]byte{}}
			a := &catalog.Array{Var: "f", DType: dt, Shape: []int64{4, 5, 6}}
			for i, b := range blocks {
				name := fmt.Sprint(i)
				src.files[name] = encode(b.n, b.lo, b.order, dt, val)
				a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: b.lo, Count: b.n},
					File: name, Length: int64(len(src.files[name])), Order: b.order})
			}
			want := expected(a.Shape, dt, func(idx []int64) (uint64, bool) { return val(idx), true }, 0)
			for _, jobs := range []int{1, 3} {
				got, sum := runAssembly(t, src, a, planner.Layout{Kind: planner.Contiguous}, 1, jobs)
				checkBytes(t, got, want, sum, dt)
			}
		})
	}
}

func TestAssemblePartialEdgeChunks(t *testing.T) {
	dt := catalog.DType{Kind: catalog.Int, Size: 2}
	shape := []int64{5, 7}
	val := func(idx []int64) uint64 { return uint64(uint16(int16(idx[0]*1000 - idx[1]*37))) }
	src := &fakeSource{files: map[string][]byte{}}
	a := &catalog.Array{Var: "c", DType: dt, Shape: shape}
	for _, lo := range [][]int64{{0, 0}, {0, 4}, {4, 0}, {4, 4}} {
		stored := []int64{4, 4}
		n := []int64{min(4, shape[0]-lo[0]), min(4, shape[1]-lo[1])}
		name := fmt.Sprint(lo)
		// Outside the valid box the stored chunk holds garbage.
		src.files[name] = encode(stored, lo, catalog.RowMajor, dt, func(idx []int64) uint64 {
			if idx[0] >= shape[0] || idx[1] >= shape[1] {
				return 0x7777
			}
			return val(idx)
		})
		b := catalog.Block{Box: catalog.Box{Lower: lo, Count: n}, File: name, Length: 32}.WithStored(stored, nil)
		if lo[1] == 4 {
			b.Codecs = []catalog.Codec{{Name: "fake"}} // fetched whole
		}
		a.Blocks = append(a.Blocks, b)
	}
	want := expected(shape, dt, func(idx []int64) (uint64, bool) { return val(idx), true }, 0)
	for _, budget := range []int64{1, 28, 1000} {
		got, sum := runAssembly(t, src, a, planner.Layout{Kind: planner.Contiguous}, budget, 2)
		checkBytes(t, got, want, sum, dt)
	}
}

func TestAssembleScalarAndInline(t *testing.T) {
	be := catalog.DType{Kind: catalog.Float, Size: 4, BigEndian: true}
	a := &catalog.Array{Var: "s", DType: be, Shape: []int64{}, Blocks: []catalog.Block{
		catalog.Block{Box: catalog.Box{Lower: []int64{}, Count: []int64{}}}.WithInline(binary.BigEndian.AppendUint32(nil, math.Float32bits(2.5))),
	}}
	got, sum := runAssembly(t, &fakeSource{}, a, planner.Layout{Kind: planner.Contiguous}, 1, 1)
	checkBytes(t, got, binary.LittleEndian.AppendUint32(nil, math.Float32bits(2.5)), sum, be)

	// An inline 1-D block read in slabs of 3 elements.
	u8 := catalog.DType{Kind: catalog.Uint, Size: 1}
	a = &catalog.Array{Var: "u", DType: u8, Shape: []int64{8}, Fill: []byte{9}, Blocks: []catalog.Block{
		catalog.Block{Box: catalog.Box{Lower: []int64{1}, Count: []int64{6}}}.WithInline([]byte{1, 2, 3, 4, 5, 6}),
	}}
	got, sum = runAssembly(t, &fakeSource{}, a, planner.Layout{Kind: planner.Contiguous}, 3, 2)
	checkBytes(t, got, []byte{9, 1, 2, 3, 4, 5, 6, 9}, sum, u8)
}

func TestAssembleEmptyArray(t *testing.T) {
	a := &catalog.Array{Var: "e", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{0, 3}}
	got, sum := runAssembly(t, &fakeSource{}, a, planner.Layout{Kind: planner.Contiguous}, 1, 1)
	checkBytes(t, got, nil, sum, a.DType)
}

func TestAssembleCorrupt(t *testing.T) {
	dt := catalog.DType{Kind: catalog.Int, Size: 4}
	// Decoded length does not match the stored shape.
	a := &catalog.Array{Var: "x", DType: dt, Shape: []int64{2, 2}, Blocks: []catalog.Block{
		{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{2, 2}}, File: "f", Length: 12,
			Codecs: []catalog.Codec{{Name: "fake"}}},
	}}
	src := &fakeSource{files: map[string][]byte{"f": make([]byte, 12)}}
	_, err := hashArray(context.Background(), pipeEnv{}, src, a, planner.Slabs(a.Shape, planner.Layout{Kind: planner.Contiguous}, 4, 1<<20), catalog.SHA256, 2)
	if !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("err %v, want ErrCorrupt", err)
	}
	// Blocks outside the array, of the wrong rank, or larger than stored.
	for _, b := range []catalog.Block{
		{Box: catalog.Box{Lower: []int64{1, 0}, Count: []int64{2, 2}}},
		{Box: catalog.Box{Lower: []int64{0}, Count: []int64{2}}},
		catalog.Block{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{2, 2}}}.WithStored([]int64{1, 2}, nil),
	} {
		a.Blocks = []catalog.Block{b}
		if err := checkArray(a); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("block %+v: err %v, want ErrCorrupt", b, err)
		}
	}
	a.Blocks, a.Fill = nil, []byte{1}
	if err := checkArray(a); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("short fill: err %v, want ErrCorrupt", err)
	}
}

func TestCutChunks(t *testing.T) {
	dt := catalog.DType{Kind: catalog.Int, Size: 2}
	shape, chunk := []int64{5, 7}, []int64{2, 3}
	val := func(idx []int64) uint64 { return uint64(idx[0]*10 + idx[1] + 1) }
	full := expected(shape, dt, func(idx []int64) (uint64, bool) { return val(idx), true }, 0)
	layout := planner.Layout{Kind: planner.Chunked, Chunk: chunk}
	got := map[string][]byte{}
	for _, slab := range planner.Slabs(shape, layout, 2, 30) {
		rowBytes := int64(7 * 2)
		buf := full[slab.Lower[0]*rowBytes : (slab.Lower[0]+slab.Count[0])*rowBytes]
		err := cutChunks(buf, slab, shape, chunk, 2, func(off []int64, data []byte) error {
			got[fmt.Sprint(off)] = append([]byte(nil), data...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 9 {
		t.Fatalf("%d chunks, want 9: %v", len(got), got)
	}
	for _, c0 := range []int64{0, 2, 4} {
		for _, c1 := range []int64{0, 3, 6} {
			want := encode(chunk, []int64{c0, c1}, catalog.RowMajor, dt, func(idx []int64) uint64 {
				if idx[0] >= shape[0] || idx[1] >= shape[1] {
					return 0
				}
				return val(idx)
			})
			key := fmt.Sprint([]int64{c0, c1})
			if !bytes.Equal(got[key], want) {
				t.Errorf("chunk %s: got %v, want %v", key, got[key], want)
			}
		}
	}
}

func TestFileNames(t *testing.T) {
	got := fileNames([]string{"B/x", "B.x", "/abs/name", "a b*c", "", ".hidden", "B_x", "B/x-2", "B.x-2"}, ".h5")
	want := []string{"B.x.h5", "B.x-2.h5", "abs.name.h5", "a_b_c.h5", "_.h5", "_.hidden.h5", "B_x.h5", "B.x-2-2.h5", "B.x-2-3.h5"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	for _, tc := range []struct {
		step  int64
		level int
		v     string
		want  string
	}{
		{1, 0, "B/x", "/data/1/meshes/B/x"},
		{20, 2, "rho", "/data/20/meshes/rho_lvl2"},
		{3, 1, "E/x", "/data/3/meshes/E_lvl1/x"},
		{3, 2, "a/b/c", "/data/3/meshes/a/b_lvl2/c"},
		{0, 0, "/a//b/./../c", "/data/0/meshes/a/b/_../c"},
	} {
		if got := datasetPath("meshes", tc.step, tc.level, tc.v, 3); got != tc.want {
			t.Errorf("datasetPath(%d, %d, %q) = %q, want %q", tc.step, tc.level, tc.v, got, tc.want)
		}
	}
}

func TestFormatElem(t *testing.T) {
	for _, tc := range []struct {
		b    []byte
		dt   catalog.DType
		want string
	}{
		{[]byte{0xff}, catalog.DType{Kind: catalog.Int, Size: 1}, "-1"},
		{[]byte{0xff}, catalog.DType{Kind: catalog.Uint, Size: 1}, "255"},
		{[]byte{0xfe, 0xff, 0xff, 0xff}, catalog.DType{Kind: catalog.Int, Size: 4}, "-2"},
		{binary.LittleEndian.AppendUint64(nil, math.Float64bits(1.5)), catalog.DType{Kind: catalog.Float, Size: 8}, "1.5"},
		{binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1)), catalog.DType{Kind: catalog.Float, Size: 4}, "0.1"},
	} {
		if got := formatElem(tc.b, tc.dt); got != tc.want {
			t.Errorf("formatElem(%v, %v) = %q, want %q", tc.b, tc.dt, got, tc.want)
		}
	}
	if got := unravel(catalog.Box{Lower: []int64{2, 0, 0}, Count: []int64{2, 3, 4}}, 17); !reflect.DeepEqual(got, []int64{3, 1, 1}) {
		t.Errorf("unravel = %v", got)
	}
}

// TestAssembleGhostCells: AMR boxes stored column-major with ghost cells
// around the valid region (StoredLower), NaN fill where no box is.
func TestAssembleGhostCells(t *testing.T) {
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	val := func(idx []int64) uint64 { return math.Float64bits(float64(idx[0]*100 + idx[1])) }
	ghostVal := math.Float64bits(-999)
	nan := math.Float64bits(math.NaN())
	type box struct{ lo, n []int64 }
	boxes := []box{{[]int64{0, 0}, []int64{3, 4}}, {[]int64{4, 2}, []int64{3, 3}}}
	src := &fakeSource{files: map[string][]byte{}}
	fill := binary.LittleEndian.AppendUint64(nil, nan)
	a := &catalog.Array{Var: "rho", DType: dt, Shape: []int64{7, 6}, Fill: fill}
	for i, b := range boxes {
		// Stored with 2 ghost cells on every side; ghosts hold -999.
		stored := []int64{b.n[0] + 4, b.n[1] + 4}
		origin := []int64{b.lo[0] - 2, b.lo[1] - 2}
		data := encode(stored, origin, catalog.ColMajor, dt, func(g []int64) uint64 {
			if in(g, b.lo, []int64{b.lo[0] + b.n[0], b.lo[1] + b.n[1]}) {
				return val(g)
			}
			return ghostVal
		})
		name := fmt.Sprint(i)
		src.files[name] = data
		a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: b.lo, Count: b.n},
			File: name, Length: int64(len(data)), Order: catalog.ColMajor}.WithStored(stored, []int64{2, 2}))
	}
	want := expected(a.Shape, dt, func(idx []int64) (uint64, bool) {
		for _, b := range boxes {
			if in(idx, b.lo, []int64{b.lo[0] + b.n[0], b.lo[1] + b.n[1]}) {
				return val(idx), true
			}
		}
		return 0, false
	}, nan)
	for _, jobs := range []int{1, 2} {
		got, sum := runAssembly(t, src, a, planner.Layout{Kind: planner.Contiguous}, 16, jobs)
		checkBytes(t, got, want, sum, dt)
	}
	// A valid region that does not fit its stored array is corrupt, not a panic.
	a.Blocks[0] = a.Blocks[0].WithStored(a.Blocks[0].Stored(), []int64{2, 5})
	if err := checkArray(a); !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("ghost region outside stored array: %v", err)
	}
}

func TestInPlace(t *testing.T) {
	f8 := catalog.DType{Kind: catalog.Float, Size: 8}
	slab := catalog.Box{Lower: []int64{4, 0, 0}, Count: []int64{4, 3, 5}}
	raw := func(lo, n []int64) *catalog.Block {
		return &catalog.Block{Box: catalog.Box{Lower: lo, Count: n}, Length: catalog.Box{Count: n}.Elements() * 8}
	}
	for _, tc := range []struct {
		b   *catalog.Block
		off int64
		ok  bool
	}{
		{raw([]int64{5, 0, 0}, []int64{2, 3, 5}), 15 * 8, true}, // whole rows
		{raw([]int64{5, 1, 0}, []int64{1, 2, 5}), 20 * 8, true}, // one row, whole last dim
		{raw([]int64{5, 1, 2}, []int64{1, 1, 3}), 22 * 8, true}, // a run
		{raw([]int64{5, 0, 0}, []int64{2, 3, 4}), 0, false},     // not whole along dim 2
		{raw([]int64{3, 0, 0}, []int64{2, 3, 5}), 0, false},     // sticks out of the slab
		{raw([]int64{5, 0, 0}, []int64{2, 2, 5}), 0, false},     // rows with holes
	} {
		off, ok := inPlace(tc.b, slab, f8)
		if ok != tc.ok || ok && off != tc.off {
			t.Errorf("%v: got %d %v, want %d %v", tc.b.Box, off, ok, tc.off, tc.ok)
		}
	}
	b := raw([]int64{5, 0, 0}, []int64{2, 3, 5})
	b.Order = catalog.ColMajor
	if _, ok := inPlace(b, slab, f8); ok {
		t.Error("column-major block read in place")
	}
	if _, ok := inPlace(raw([]int64{5, 0, 0}, []int64{2, 3, 5}), slab, catalog.DType{Kind: catalog.Float, Size: 8, BigEndian: true}); ok {
		t.Error("big-endian block read in place")
	}
	// Decoded bytes go in place whatever the stored length (a deflated
	// block, a SCORPIO frame), but not with ghost cells or a stored shape
	// of their own, nor a raw block whose length is not its box's.
	coded := raw([]int64{5, 0, 0}, []int64{2, 3, 5})
	coded.Codecs, coded.Length = []catalog.Codec{{Name: "deflate"}}, 17
	if off, ok := inPlace(coded, slab, f8); !ok || off != 15*8 {
		t.Errorf("deflated block: got %d %v, want in place at %d", off, ok, 15*8)
	}
	if _, ok := inPlace(new(coded.WithStored([]int64{2, 3, 6}, nil)), slab, f8); ok {
		t.Error("a block stored wider than its box read in place")
	}
	short := raw([]int64{5, 0, 0}, []int64{2, 3, 5})
	short.Length -= 8
	if _, ok := inPlace(short, slab, f8); ok {
		t.Error("a raw block shorter than its box read in place")
	}
}

// BenchmarkCopyBlockCubes is the gather of a 32-row unit of a 512^3 float64
// array from 32^3 row-major blocks (the make bench input): 64 MiB per op.
func BenchmarkCopyBlockCubes(b *testing.B) {
	const n, e = 512, 32
	slab := catalog.Box{Lower: []int64{0, 0, 0}, Count: []int64{e, n, n}}
	buf := make([]byte, e*n*n*8)
	data := make([]byte, e*e*e*8)
	var blocks []*catalog.Block
	for j := int64(0); j < n; j += e {
		for k := int64(0); k < n; k += e {
			blocks = append(blocks, &catalog.Block{Box: catalog.Box{Lower: []int64{0, j, k}, Count: []int64{e, e, e}},
				Order: catalog.RowMajor, Length: int64(len(data))})
		}
	}
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		for _, blk := range blocks {
			if err := copyBlock(buf, slab, blk, data, dt); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// TestBlockIndexMatchesScan: the indexed lookup finds exactly the blocks a
// scan of every block finds, in the same order, for irregular blocks of
// varied heights (AMR-like boxes, tall and flat ones mixed, a hole) and
// random bands, tiles and sub-boxes.
func TestBlockIndexMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 6))
	for trial := range 50 {
		shape := []int64{40 + rng.Int64N(60), 1 + rng.Int64N(30), 1 + rng.Int64N(20)}
		var blocks []catalog.Block
		// Cut dimension 0 into bands of random heights, each band into
		// boxes of random widths along dimension 1; skip some (holes).
		for lo := int64(0); lo < shape[0]; {
			h := min(1+rng.Int64N(12), shape[0]-lo)
			for j := int64(0); j < shape[1]; {
				w := min(1+rng.Int64N(8), shape[1]-j)
				if rng.IntN(10) > 0 {
					blocks = append(blocks, catalog.Block{
						Box:    catalog.Box{Lower: []int64{lo, j, 0}, Count: []int64{h, w, shape[2]}},
						File:   fmt.Sprintf("data.%d", rng.IntN(3)),
						Length: h * w * shape[2] * 8,
					})
				}
				j += w
			}
			lo += h
		}
		rng.Shuffle(len(blocks), func(i, j int) { blocks[i], blocks[j] = blocks[j], blocks[i] })
		ends := map[string]int64{} // extents laid out in a shuffled order per file
		for _, i := range rng.Perm(len(blocks)) {
			b := &blocks[i]
			b.Offset = ends[b.File]
			ends[b.File] += b.Length
		}
		a := &catalog.Array{Shape: shape, DType: catalog.DType{Kind: catalog.Float, Size: 8}, Blocks: blocks}
		x := indexBlocks(a)
		for range 40 {
			var slab catalog.Box
			slab.Lower, slab.Count = make([]int64, 3), make([]int64, 3)
			for d := range 3 {
				slab.Lower[d] = rng.Int64N(shape[d])
				slab.Count[d] = 1 + rng.Int64N(shape[d]-slab.Lower[d])
			}
			var want []string
			for i := range blocks {
				if _, ok := blocks[i].Box.Intersect(slab); ok {
					want = append(want, fmt.Sprint(i))
				}
			}
			var got []string
			x.each(slab, func(i int) { got = append(got, fmt.Sprint(i)) })
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("trial %d slab %v: index finds blocks %v, a scan %v", trial, slab, got, want)
			}
			reads := x.reads(slab)
			if len(reads) != len(want) {
				t.Fatalf("trial %d slab %v: %d reads for %d blocks", trial, slab, len(reads), len(want))
			}
			for k := 1; k < len(reads); k++ {
				p, q := reads[k-1], reads[k]
				if p.File > q.File || p.File == q.File && p.Offset > q.Offset {
					t.Fatalf("trial %d: reads not in file and offset order at %d", trial, k)
				}
			}
		}
	}
}
