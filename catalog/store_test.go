package catalog

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

func sampleArray(step int64) *Array {
	return &Array{
		Var: "B/x", Step: step, DType: DType{Kind: Float, Size: 8, BigEndian: true},
		Shape: []int64{47, 47}, Offset: []int64{0, 0}, Fill: []byte{0, 0, 0, 0, 0, 0, 0, 0},
		Attrs:     []Attr{{Name: "unitSI", Type: "float64", Scalar: true, Floats: []float64{1.5}}},
		StepAttrs: []Attr{{Name: "time", Type: "float64", Scalar: true, Floats: []float64{0.25}}},
		Source:    "f.h5:/data/1/meshes/B/x",
		Blocks: []Block{
			Block{Box: Box{Lower: []int64{0, 0}, Count: []int64{32, 47}}, File: "f.h5", Offset: 4096, Length: 100,
				Codecs: []Codec{{Name: "shuffle", Params: []uint32{8}}, {Name: "deflate", Params: []uint32{6}}}, Rank: -1}.WithStored([]int64{32, 64}, nil),
			Block{Box: Box{Lower: []int64{32, 0}, Count: []int64{15, 47}}, File: "f.h5", Offset: 8192, Length: 5640, Order: ColMajor, Rank: 3}.
				WithStored(nil, []int64{0, 0}),
		},
		Boxes: []Box{{Lower: []int64{0, 0}, Count: []int64{32, 47}}, {Lower: []int64{32, 0}, Count: []int64{15, 47}}},
	}
}

func TestStoreRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	info := DatasetInfo{Path: "in.h5", Root: "/d", Format: "openpmd-hdf5", Skipped: []string{"/data/1/particles: particles"}}
	if err := s.SetInfo(info); err != nil {
		t.Fatal(err)
	}
	for _, step := range []int64{100, 0} {
		if err := s.Put(sampleArray(step)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(sampleArray(0)); err == nil {
		t.Fatal("duplicate (var, step, level) accepted")
	}
	s.Close()

	s, err = OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Array(Key{"B/x", 100, 0})
	if err != nil {
		t.Fatal(err)
	}
	want := sampleArray(100)
	want.Grain = []int64{32, 0} // the store records it (BlockGrain)
	if !reflect.DeepEqual(got, func() *Array { w := *want; w.Blocks = want.Blocks; return &w }()) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	var steps []int64
	if err := s.EachArray(context.Background(), "B/x", func(a *Array) error { steps = append(steps, a.Step); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(steps, []int64{0, 100}) {
		t.Fatalf("steps %v", steps)
	}
	vs, err := s.Variables()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 1 || vs[0].Arrays != 2 || vs[0].Blocks != 4 || vs[0].Bytes != 2*47*47*8 || vs[0].StoredBytes != 2*5740 || vs[0].Files != 1 {
		t.Fatalf("summary %+v", vs)
	}
	if _, err := s.Array(Key{"nope", 0, 0}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing array: %v", err)
	}
	gotInfo, err := s.Info()
	if err != nil || gotInfo.Format != info.Format || !reflect.DeepEqual(gotInfo.Skipped, info.Skipped) {
		t.Fatalf("info %+v %v", gotInfo, err)
	}

	// The schema is documented for users of the sqlite3 shell: check it answers there.
	if sqlite, err := exec.LookPath("sqlite3"); err == nil {
		out, err := exec.Command(sqlite, path, "SELECT count(*), sum(length) FROM blocks JOIN arrays ON arrays.id = blocks.array_id WHERE var = 'B/x' AND step = 100").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "2|5740" {
			t.Fatalf("sqlite3: %q %v", out, err)
		}
	}
}

func TestOpenStoreRejectsOtherFiles(t *testing.T) {
	if _, err := OpenStore(filepath.Join(t.TempDir(), "missing.db")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing: %v", err)
	}
}

func TestDTypeNumPy(t *testing.T) {
	for _, s := range []string{"<f8", ">f4", "|i1", "<u2", ">i8", "|u1", "|S1"} {
		d, err := ParseDType(s)
		if err != nil || d.NumPy() != s {
			t.Fatalf("%s: %v %v", s, d, err)
		}
	}
	for _, s := range []string{"", "<f2", "<x8", "<i3", "|S2"} {
		if _, err := ParseDType(s); err == nil {
			t.Fatalf("%q accepted", s)
		}
	}
}

// TestStoreSpan: a stream's date span and unlimited dimensions round-trip;
// a catalog of an earlier version (no span or unlimited column) reads
// without them and takes no new ones.
func TestStoreSpan(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	info := DatasetInfo{Path: "hist", Root: "/d", Format: "netcdf-classic", Span: []string{"185001", "201412"}, Unlimited: []string{"time"}}
	if err := s.SetInfo(info); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Info(); err != nil || !reflect.DeepEqual(got.Span, info.Span) || !reflect.DeepEqual(got.Unlimited, info.Unlimited) {
		t.Fatalf("span %q unlimited %q %v, want %q %q", got.Span, got.Unlimited, err, info.Span, info.Unlimited)
	}
	if _, err := s.db.Exec(`ALTER TABLE dataset DROP COLUMN span`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`ALTER TABLE dataset DROP COLUMN unlimited`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = OpenStore(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Info(); err != nil || got.Span != nil || got.Unlimited != nil || got.Format != "netcdf-classic" {
		t.Fatalf("earlier catalog: %+v %v", got, err)
	}
	if err := s.SetInfo(info); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("a span into an earlier catalog: %v", err)
	}
	if err := s.SetInfo(DatasetInfo{Path: "hist", Root: "/d", Format: "netcdf-classic", Unlimited: []string{"time"}}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("unlimited dimensions into an earlier catalog: %v", err)
	}
	if err := s.SetInfo(DatasetInfo{Path: "hist", Root: "/d", Format: "netcdf-classic"}); err != nil {
		t.Fatalf("neither into an earlier catalog: %v", err)
	}
}

// TestStoreParticles: a particle record component keeps its species and
// its attributes' Species and Record marks, its block grain and its
// dimension names; a catalog of an earlier version (no species, grain or
// dims column) reads as meshes, its grain and dimension names unknown, and
// is read-only.
func TestStoreParticles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	a := &Array{Var: ParticleVar("e", "position/x"), Species: "e", DType: DType{Kind: Float, Size: 4},
		Shape: []int64{10}, Offset: []int64{0}, Dims: []string{"particle"},
		Attrs: []Attr{{Name: "particleShape", Type: "string", Strings: []string{"TSC"}, Species: true},
			{Name: "macroWeighted", Type: "uint32", Scalar: true, Uints: []uint64{1}, Record: true}},
		Blocks: []Block{{Box: Box{Lower: []int64{4}, Count: []int64{6}}, File: "data.0", Offset: 0, Length: 24, Rank: 1},
			{Box: Box{Lower: []int64{0}, Count: []int64{4}}, File: "data.0", Offset: 24, Length: 16, Rank: 0}}}
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = OpenStore(path); err != nil {
		t.Fatal(err)
	}
	got, err := s.Array(a.Key())
	if err != nil {
		t.Fatal(err)
	}
	if got.Species != "e" || !reflect.DeepEqual(got.Attrs, a.Attrs) || len(got.Blocks) != 2 || !reflect.DeepEqual(got.Grain, []int64{4}) ||
		!reflect.DeepEqual(got.Dims, []string{"particle"}) ||
		!reflect.DeepEqual(got.Blocks[0].Box, a.Blocks[0].Box) || got.Blocks[1].Rank != 0 {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, a)
	}
	// A catalog of an earlier version has neither column: it still reads
	// (no species, nothing constant) and refuses new arrays.
	for _, c := range []string{"species", "constant", "grain", "dims"} {
		if _, err := s.db.Exec(`ALTER TABLE arrays DROP COLUMN ` + c); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if s, err = OpenStore(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.Array(a.Key()); err != nil || got.Species != "" || got.Constant || got.Grain != nil || got.Dims != nil {
		t.Fatalf("earlier catalog: %+v %v", got, err)
	}
	if vs, err := s.Variables(); err != nil || len(vs) != 1 || vs[0].ConstantBytes != 0 {
		t.Fatalf("earlier catalog: variables %+v %v", vs, err)
	}
	b := *a
	b.Var = "other"
	if err := s.Put(&b); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Put into an earlier catalog: %v", err)
	}
}

// KeepBlocks: a kept block list is what the database holds, read once
// (a second Array shares it); the first lists that fit are kept and a list
// that does not fit evicts none of them (passes in catalog order over more
// arrays than fit then find the first ones every time); a lower limit drops
// the lists kept last.
func TestStoreKeepBlocks(t *testing.T) {
	s, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, step := range []int64{0, 1, 2} {
		if err := s.Put(sampleArray(step)); err != nil {
			t.Fatal(err)
		}
	}
	one := blocksBytes(sampleArray(0).Blocks)
	s.KeepBlocks(2 * one) // two lists
	read := func(step int64) []Block {
		t.Helper()
		a, err := s.Array(Key{"B/x", step, 0})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a.Blocks, sampleArray(step).Blocks) {
			t.Fatalf("step %d: blocks %+v", step, a.Blocks)
		}
		return a.Blocks
	}
	same := func(x, y []Block) bool { return &x[0] == &y[0] }
	b0 := read(0)
	if !same(b0, read(0)) {
		t.Fatal("a kept list was decoded again")
	}
	if cap(b0) != len(b0) {
		t.Fatalf("kept list has capacity %d beyond its %d blocks: an append would write into it", cap(b0), len(b0))
	}
	b1 := read(1)
	if same(read(2), read(2)) {
		t.Fatal("a third list was kept beyond the limit")
	}
	for pass := range 2 { // passes in order: the first two every time
		if !same(b0, read(0)) || !same(b1, read(1)) {
			t.Fatalf("pass %d: a list kept first was evicted for one that did not fit", pass)
		}
		read(2)
	}
	s.KeepBlocks(one) // drops the list kept last
	if !same(b0, read(0)) || same(b1, read(1)) {
		t.Fatal("a lower limit did not drop the list kept last")
	}
	s.KeepBlocks(one - 1) // drops both
	if read(0); len(s.cache.entries) != 0 {
		t.Fatalf("%d lists kept larger than the limit", len(s.cache.entries))
	}
}

// Put keeps the lists it stores while they fit (KeepBlocks set first), in
// the order stored: Array shares the kept list (nothing decoded), and a
// list is never kept past the limit. A compact list is kept as it is,
// charged blocksBytes; a list with memory blocksBytes would not count (a
// lower corner with spare capacity, an equal count held twice) is kept as
// a compact copy equal to what the database returns.
func TestStorePutKeeps(t *testing.T) {
	s, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	one := blocksBytes(sampleArray(0).Blocks)
	s.KeepBlocks(2 * one) // two lists
	put := map[int64]*Array{}
	for _, step := range []int64{2, 0, 1} {
		put[step] = sampleArray(step)
		if err := s.Put(put[step]); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.cache.entries) != 2 || s.cache.entries[0].k != (Key{"B/x", 2, 0}) || s.cache.entries[1].k != (Key{"B/x", 0, 0}) {
		t.Fatalf("kept %+v, want steps 2 and 0 (the first stored that fit)", s.cache.entries)
	}
	a, err := s.Array(Key{"B/x", 2, 0})
	if err != nil || &a.Blocks[0] != &put[2].Blocks[0] || cap(a.Blocks) != len(a.Blocks) {
		t.Fatalf("step 2: not the compact list put, kept as it is (%v)", err)
	}
	if s.KeptBytes() != 2*one {
		t.Fatalf("kept %d bytes, want %d", s.KeptBytes(), 2*one)
	}
	// The database's own list decodes to the same blocks.
	s.KeepBlocks(0)
	if d, err := s.Array(Key{"B/x", 2, 0}); err != nil || !reflect.DeepEqual(d.Blocks, sampleArray(2).Blocks) {
		t.Fatalf("decoded %+v, want %+v (%v)", d.Blocks, sampleArray(2).Blocks, err)
	}

	loose := map[string]func(a *Array){
		"lower with spare capacity": func(a *Array) {
			a.Blocks[1].Box.Lower = append(make([]int64, 0, 64), a.Blocks[1].Box.Lower...)
		},
		"equal count held twice": func(a *Array) {
			a.Blocks[1].Box.Count = slices.Clone(a.Blocks[0].Box.Count)
		},
		"list with spare capacity": nil,
	}
	for name, loosen := range loose {
		s, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		a := sampleArray(0)
		if loosen != nil {
			loosen(a)
		} else {
			a.Blocks = append(make([]Block, 0, 40), a.Blocks...)
		}
		want := slices.Clone(a.Blocks)
		s.KeepBlocks(1 << 20)
		if err := s.Put(a); err != nil {
			t.Fatal(err)
		}
		got, err := s.Array(a.Key())
		if err != nil || !reflect.DeepEqual(got.Blocks, want) {
			t.Fatalf("%s: kept %+v, want %+v (%v)", name, got.Blocks, want, err)
		}
		switch {
		case loosen == nil:
			// Kept as it is, its spare capacity charged.
			if &got.Blocks[0] != &a.Blocks[0] || s.KeptBytes()-s.cache.headerBytes() != blocksBytes(want)+38*int64(unsafe.Sizeof(Block{})) {
				t.Fatalf("%s: kept %d bytes", name, s.KeptBytes())
			}
		case &got.Blocks[0] == &a.Blocks[0] || !compact(got.Blocks) || s.KeptBytes()-s.cache.headerBytes() != blocksBytes(got.Blocks):
			t.Fatalf("%s: not kept as a compact copy (%d bytes)", name, s.KeptBytes())
		}
	}
	// Without KeepBlocks, nothing is kept.
	s2, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.Put(sampleArray(0)); err != nil || len(s2.cache.entries) != 0 {
		t.Fatalf("without KeepBlocks: %d lists kept, %v", len(s2.cache.entries), err)
	}
}

// The blocks of a tiling share their count and stored shape once stored:
// the copy Put keeps and the list decoded from the database hold one count
// and one extra part for all of them, equal to what was put, and
// blocksBytes charges each once (exactly what those copies hold).
func TestStoreSharesCounts(t *testing.T) {
	s, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 64
	chunk := Block{File: "f.h5", Length: 512, Rank: -1}.WithStored([]int64{4, 4, 4}, nil)
	a := &Array{Var: "c", DType: DType{Kind: Float, Size: 8}, Shape: []int64{16, 16, 16}, Offset: make([]int64, 3)}
	for i := range n {
		b := chunk
		b.Box = Box{Lower: []int64{int64(i / 16 * 4), int64(i / 4 % 4 * 4), int64(i % 4 * 4)}, Count: []int64{4, 4, 4}}
		b.Offset = int64(i) * 512
		a.Blocks = append(a.Blocks, b)
	}
	// n blocks, n lower corners, one count, one extra part and its shape.
	want := int64(n)*int64(unsafe.Sizeof(Block{})) + 8*3*n + 8*3 + int64(unsafe.Sizeof(blockExtra{})) + 8*3
	if got := blocksBytes(a.Blocks); got != want {
		t.Fatalf("blocksBytes = %d, want %d", got, want)
	}
	s.KeepBlocks(want)
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	kept, err := s.Array(a.Key())
	if err != nil || s.KeptBytes() != want {
		t.Fatalf("kept %d bytes, want %d (%v)", s.KeptBytes(), want, err)
	}
	s.KeepBlocks(0)
	decoded, err := s.Array(a.Key())
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]Block{"kept": kept.Blocks, "decoded": decoded.Blocks} {
		if !reflect.DeepEqual(got, a.Blocks) {
			t.Fatalf("%s blocks differ from those put", name)
		}
		for i := 1; i < n; i++ {
			if &got[i].Box.Count[0] != &got[0].Box.Count[0] || got[i].extra != got[0].extra {
				t.Fatalf("%s block %d: its count or stored shape is a copy of block 0's", name, i)
			}
		}
		if b := blocksBytes(got); b != want {
			t.Fatalf("%s: blocksBytes = %d, want %d", name, b, want)
		}
	}
}

// A summary store (OmitBlockLists) answers Variables and EachArrayHeader as
// a full one does, from arrays whose blocks lie in several files, one of
// them inline, and refuses to give blocks it never stored.
func TestStoreOmitBlockLists(t *testing.T) {
	arrays := func() []*Array {
		a, b := sampleArray(0), sampleArray(1)
		b.Blocks = append(b.Blocks, Block{Box: Box{Lower: []int64{0, 0}, Count: []int64{1, 1}}, File: "g.h5", Offset: 64, Length: 8, Rank: 1},
			Block{Box: Box{Lower: []int64{1, 1}, Count: []int64{1, 1}}, Length: 8, Rank: -1}.WithInline([]byte{1, 2, 3, 4, 5, 6, 7, 8}))
		return []*Array{a, b}
	}
	build := func(omit bool) *Store {
		s, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
		if err != nil {
			t.Fatal(err)
		}
		if omit {
			s.OmitBlockLists()
		}
		for _, a := range arrays() {
			if err := s.Put(a); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	full, summary := build(false), build(true)
	defer full.Close()
	defer summary.Close()
	want, err := full.Variables()
	if err != nil {
		t.Fatal(err)
	}
	got, err := summary.Variables()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("summary store: %+v (%v), want %+v", got, err, want)
	}
	if want[0].Files != 3 || want[0].Blocks != 6 || want[0].StoredBytes != 2*5740+16 {
		t.Fatalf("full store: %+v, want 3 files (one inline), 6 blocks, %d bytes", want[0], 2*5740+16)
	}
	var headers int
	if err := summary.EachArrayHeader(context.Background(), "B/x", func(a *Array) error { headers++; return nil }); err != nil || headers != 2 {
		t.Fatalf("headers: %d (%v), want 2", headers, err)
	}
	if _, err := summary.Array(Key{"B/x", 1, 0}); err == nil || !strings.Contains(err.Error(), "not stored") {
		t.Fatalf("blocks of a summary store: %v, want an error saying the lists were not stored", err)
	}
}

// TestBlockGrain: the block grid's step per dimension, edge blocks cut
// short by the array's edge included; a header read back from the store
// (no blocks) has it too.
func TestBlockGrain(t *testing.T) {
	grid := func(shape, block []int64) []Block {
		var bs []Block
		for i := int64(0); i < shape[0]; i += block[0] {
			for j := int64(0); j < shape[1]; j += block[1] {
				bs = append(bs, Block{Box: Box{Lower: []int64{i, j}, Count: []int64{min(block[0], shape[0]-i), min(block[1], shape[1]-j)}}, File: "data.0", Length: 8})
			}
		}
		return bs
	}
	for _, c := range []struct {
		name   string
		shape  []int64
		blocks []Block
		want   []int64
	}{
		{"448 in 32", []int64{448, 64}, grid([]int64{448, 64}, []int64{32, 32}), []int64{32, 32}},
		{"edges cut short", []int64{100, 90}, grid([]int64{100, 90}, []int64{32, 24}), []int64{32, 24}},
		{"one block along an axis", []int64{64, 10}, grid([]int64{64, 10}, []int64{16, 10}), []int64{16, 0}},
		{"no common step", []int64{10, 4}, []Block{{Box: Box{Lower: []int64{0, 0}, Count: []int64{6, 4}}}, {Box: Box{Lower: []int64{6, 0}, Count: []int64{4, 4}}}, {Box: Box{Lower: []int64{3, 0}, Count: []int64{0, 4}}}}, []int64{6, 0}},
		{"AMR boxes", []int64{16, 16}, []Block{{Box: Box{Lower: []int64{2, 4}, Count: []int64{6, 8}}}, {Box: Box{Lower: []int64{9, 4}, Count: []int64{3, 2}}}}, []int64{1, 2}},
		{"another rank", []int64{8, 8}, []Block{{Box: Box{Lower: []int64{0}, Count: []int64{8}}}}, nil},
	} {
		a := &Array{Var: "v", DType: DType{Kind: Float, Size: 8}, Shape: c.shape, Offset: make([]int64, len(c.shape)), Blocks: c.blocks}
		if got := a.BlockGrain(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: grain %v, want %v", c.name, got, c.want)
		}
	}
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := &Array{Var: "v", DType: DType{Kind: Float, Size: 8}, Shape: []int64{100, 90}, Offset: []int64{0, 0}, Blocks: grid([]int64{100, 90}, []int64{32, 24})}
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	var headers []*Array
	if err := s.EachArrayHeader(context.Background(), "v", func(h *Array) error { headers = append(headers, h); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(headers) != 1 || headers[0].Blocks != nil || !reflect.DeepEqual(headers[0].BlockGrain(), []int64{32, 24}) {
		t.Fatalf("header from the store: %+v", headers)
	}
}

// TestStoreKeepsHeaders: beside a block list it keeps, Put keeps the
// array's header as the database gives it back: Array and EachArrayHeader
// return equal copies of it (equal to the row decoded again once nothing
// is kept), each sharing nothing with the others (a change to one is in no
// other), a header-only read without the blocks; KeptBytes counts the
// headers and lowering KeepBlocks drops them. A header that does not fit
// is not kept.
func TestStoreKeepsHeaders(t *testing.T) {
	s, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.KeepBlocks(1 << 20)
	a := sampleArray(3)
	a.Dims = []string{"y", "x"}
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	if s.cache.headerBytes() <= 0 || s.KeptBytes() != blocksBytes(a.Blocks)+s.cache.headerBytes() {
		t.Fatalf("kept %d bytes, %d of them headers", s.KeptBytes(), s.cache.headerBytes())
	}
	first, err := s.Array(a.Key())
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Array(a.Key())
	if err != nil || !reflect.DeepEqual(first, second) || &second.Attrs[0] == &first.Attrs[0] || &second.Shape[0] == &first.Shape[0] {
		t.Fatalf("kept %+v, want a copy of %+v (%v)", second, first, err)
	}
	second.Attrs[0].Floats[0], second.Shape[0], second.Dims[0], second.Boxes[0].Lower[0] = 99, 99, "z", 99
	third, err := s.Array(a.Key())
	if err != nil || !reflect.DeepEqual(first, third) {
		t.Fatalf("after a change to a copy: %+v, want %+v (%v)", third, first, err)
	}
	var hdr *Array
	if err := s.EachArrayHeader(context.Background(), a.Var, func(x *Array) error { hdr = x; return nil }); err != nil {
		t.Fatal(err)
	}
	want := *first
	want.Blocks = nil
	if !reflect.DeepEqual(hdr, &want) {
		t.Fatalf("header %+v, want %+v", hdr, &want)
	}
	s.KeepBlocks(0)
	if s.KeptBytes() != 0 || s.cache.headerBytes() != 0 {
		t.Fatalf("kept %d bytes after KeepBlocks(0)", s.KeptBytes())
	}
	db, err := s.Array(a.Key()) // the database's row, decoded again
	if err != nil || !reflect.DeepEqual(db, first) {
		t.Fatalf("database %+v, want %+v (%v)", db, first, err)
	}

	// Room for the blocks only: no header kept.
	s2, err := CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	s2.KeepBlocks(blocksBytes(a.Blocks))
	if err := s2.Put(sampleArray(3)); err != nil || len(s2.cache.entries) != 1 || s2.cache.headerBytes() != 0 {
		t.Fatalf("%d lists, %d header bytes kept (%v)", len(s2.cache.entries), s2.cache.headerBytes(), err)
	}
}
