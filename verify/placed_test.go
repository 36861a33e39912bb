package verify

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/reader"
)

// randomPlacement is a map of n places dealt over groups, as SCORPIO's
// rearrangers make them: some places left as holes, the rest shuffled in
// runs over the groups, pads between (−1 for 0-based, 0 for 1-based), and
// part values that say where they belong (place*10+1; pads hold −2). want
// is every place's value, fill (−5) for holes.
func randomPlacement(rng *rand.Rand, n int64, zeroBased bool) (pl *rawPlacement, want []int32) {
	want = make([]int32, n)
	var placed []int64
	for i := range n {
		want[i] = -5
		if rng.IntN(5) > 0 || zeroBased && rng.IntN(4) == 0 { // holes, or all placed
			placed = append(placed, i)
		}
	}
	rng.Shuffle(len(placed), func(i, j int) { placed[i], placed[j] = placed[j], placed[i] })
	groups := 1 + rng.IntN(6)
	maps, parts := make([][]int64, groups), make([][]byte, groups)
	pad := int64(0)
	if zeroBased {
		pad = -1
	}
	for _, p := range placed {
		g := rng.IntN(groups)
		if rng.IntN(6) == 0 {
			maps[g] = append(maps[g], pad)
			parts[g] = binary.LittleEndian.AppendUint32(parts[g], uint32(0xfffffffe))
		}
		e := p
		if !zeroBased {
			e++
		}
		maps[g] = append(maps[g], e)
		parts[g] = binary.LittleEndian.AppendUint32(parts[g], uint32(int32(p*10+1)))
		want[p] = int32(p*10 + 1)
	}
	for g, m := range maps {
		if zeroBased && len(m) == 2 && m[1] == 0 {
			// Two entries, the second 0, read as SCORPIO's padding of a
			// group of one element (the format does not tell a group of
			// two whose second place is 0 from it; placed.go): make it
			// three.
			maps[g] = append(m, -1)
			parts[g] = binary.LittleEndian.AppendUint32(parts[g], uint32(0xfffffffe))
		}
	}
	if zeroBased && int64(len(placed)) < n && !slices.ContainsFunc(maps, func(m []int64) bool { return slices.Contains(m, -1) }) {
		// A 0-based map with holes and no pad does not say its base (the
		// verifier, like the reader, takes it for 1-based): SCORPIO's
		// CONTIG maps with holes have pads.
		maps[0] = append(maps[0], -1)
		parts[0] = binary.LittleEndian.AppendUint32(parts[0], uint32(0xfffffffe))
	}
	return &rawPlacement{Parts: parts, Maps: maps, Fill: binary.LittleEndian.AppendUint32(nil, uint32(0xfffffffb))}, want
}

// TestPlacePartsRandom: the verifier's placement of random maps, both
// bases, with pads and holes, puts every value where the generator put
// it and the fill value in the holes.
func TestPlacePartsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	for i := range 400 {
		n := int64(1 + rng.IntN(300))
		zero := i%2 == 0
		pl, want := randomPlacement(rng, n, zero)
		out, err := placeParts(n, 4, pl)
		if err != nil {
			t.Fatalf("case %d (n %d, 0-based %v): %v", i, n, zero, err)
		}
		for k := range n {
			if got := int32(binary.LittleEndian.Uint32(out[4*k:])); got != want[k] {
				t.Fatalf("case %d (n %d, 0-based %v): place %d holds %d, want %d\nmaps %v", i, n, zero, k, got, want[k], pl.Maps)
			}
		}
		// The same as 8-byte and 2-byte elements (each value widened or
		// cut): the word-by-word paths and the generic one.
		for _, size := range []int{8, 2} {
			wide := &rawPlacement{Maps: pl.Maps, Parts: make([][]byte, len(pl.Parts)), Fill: resize(pl.Fill, size)}
			for g, part := range pl.Parts {
				for j := 0; j+4 <= len(part); j += 4 {
					wide.Parts[g] = append(wide.Parts[g], resize(part[j:j+4], size)...)
				}
			}
			out, err := placeParts(n, size, wide)
			if err != nil {
				t.Fatalf("case %d, %d-byte elements: %v", i, size, err)
			}
			for k := range n {
				if got, want := out[int64(size)*k:int64(size)*(k+1)], resize(binary.LittleEndian.AppendUint32(nil, uint32(want[k])), size); !slices.Equal(got, want) {
					t.Fatalf("case %d, %d-byte elements: place %d holds %x, want %x", i, size, k, got, want)
				}
			}
		}
	}
}

// TestPlacePartsPadding: SCORPIO's padding of groups with 0 or 1 elements
// (two entries, the second 0; [0, 0] for none) in a 0-based map, parts
// shorter than their maps where pads end them, and damaged maps.
func TestPlacePartsPadding(t *testing.T) {
	le := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	fill := le(-5)
	// 0-based: group 1 holds place 3 alone ([3, 0]), group 2 none
	// ([0, 0]); place 0 is group 0's.
	pl := &rawPlacement{Maps: [][]int64{{0, 1, -1, 2}, {3, 0}, {0, 0}}, Parts: [][]byte{le(10, 11, -2, 12), le(13), le(-2, -2)}, Fill: fill}
	out, err := placeParts(5, 4, pl)
	if err != nil || !slices.Equal(out, le(10, 11, 12, 13, -5)) {
		t.Fatalf("0-based padded: %v %v", le32(out), err)
	}
	// 1-based: pads are 0, whatever their count.
	pl = &rawPlacement{Maps: [][]int64{{1, 0, 2}, {0, 4}}, Parts: [][]byte{le(10, -2, 11), le(-2, 13)}, Fill: fill}
	if out, err = placeParts(4, 4, pl); err != nil || !slices.Equal(out, le(10, 11, -5, 13)) {
		t.Fatalf("1-based: %v %v", le32(out), err)
	}
	for name, maps := range map[string][][]int64{
		"twice":        {{1, 2}, {2, 0}},
		"out of range": {{1, 9}},
		"below -1":     {{-3, 1}},
		"short part":   {{1, 2, 3}},
	} {
		parts := make([][]byte, len(maps))
		for g := range maps {
			parts[g] = le(1, 2)
		}
		if _, err := placeParts(4, 4, &rawPlacement{Maps: maps, Parts: parts, Fill: fill}); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

// rawPlacement is a placement's maps and parts as values.
type rawPlacement struct {
	Parts [][]byte
	Maps  [][]int64
	Fill  []byte
}

// partSource serves blocks from memory: block b's bytes are blocks[b.Offset].
type partSource struct {
	catalog.Plain
	blocks [][]byte
}

func (s *partSource) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, _ catalog.DType, _ []byte) ([]byte, error) {
		return s.blocks[b.Offset], nil
	}, fn)
}

// add serves data as a block of s.
func (s *partSource) add(data []byte) *catalog.Block {
	s.blocks = append(s.blocks, data)
	return &catalog.Block{Offset: int64(len(s.blocks) - 1), Length: int64(len(data))}
}

// placement is rp as a source's placement: its maps stored as int64.
func (rp *rawPlacement) placement() *catalog.Placement {
	src := &partSource{}
	pl := &catalog.Placement{Source: src, MapType: catalog.DType{Kind: catalog.Int, Size: 8}, Fill: rp.Fill}
	for _, m := range rp.Maps {
		var raw []byte
		for _, e := range m {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(e))
		}
		pl.Maps = append(pl.Maps, src.add(raw))
	}
	for _, part := range rp.Parts {
		pl.Parts = append(pl.Parts, src.add(part))
	}
	return pl
}

// placeParts is ReadBlock's placement of rp's parts into a block of n
// elements of size bytes, its maps read anew.
func placeParts(n int64, size int, rp *rawPlacement) ([]byte, error) {
	ctx := context.Background()
	pl := rp.placement()
	mr, err := readMaps(ctx, pl, n, catalog.Reads{})
	if err != nil {
		return nil, err
	}
	out := make([]byte, n*int64(size))
	return out, mr.place(ctx, out, catalog.DType{Kind: catalog.Uint, Size: size}, pl, catalog.Reads{})
}

// resize is the 4 bytes b as size bytes: zero-extended, or cut.
func resize(b []byte, size int) []byte {
	out := make([]byte, size)
	copy(out, b)
	return out
}

func le32(b []byte) []int32 {
	var out []int32
	for i := 0; i+4 <= len(b); i += 4 {
		out = append(out, int32(binary.LittleEndian.Uint32(b[i:])))
	}
	return out
}

// scatterLiar is a SCORPIO input whose reads are wrong in one of two
// ways: its ReadBlock (the scatter the rewriter and the reader share)
// returns zeros, or its Placement hands over a map with two entries
// swapped.
type scatterLiar struct {
	reader.Dataset
	badRead bool
	badMap  bool
}

func (s *scatterLiar) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, _ []byte) ([]byte, error) {
		data, err := catalog.ReadBlock(ctx, s.Dataset, b, dt)
		if s.badRead && err == nil && len(b.Codecs) > 0 && strings.HasPrefix(b.Codecs[0].Name, "scorpio-darray") {
			clear(data)
		}
		return data, err
	}, fn)
}

func (s *scatterLiar) Placement(ctx context.Context, b *catalog.Block, dt catalog.DType) (*catalog.Placement, error) {
	pl, err := s.Dataset.Placement(ctx, b, dt)
	if pl == nil || err != nil || !s.badMap || b.Codecs[0].Dataset != "PS" {
		return pl, err
	}
	lie := *pl
	lie.Source = swappedMap{pl.Source, pl.Maps[0], pl.MapType.Size}
	return &lie, nil
}

// swappedMap is a source whose map block m has its first two entries
// swapped.
type swappedMap struct {
	catalog.Source
	m    *catalog.Block
	size int
}

func (s swappedMap) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return s.Source.ReadBlocks(ctx, r, func(i int, data []byte) error {
		if r.Blocks[i] == s.m {
			data = slices.Clone(data)
			a, b := data[:s.size], data[s.size:2*s.size]
			t := slices.Clone(a)
			copy(a, b)
			copy(b, t)
		}
		return fn(i, data)
	})
}

// TestPlacedIndependently: the verifier places a SCORPIO input's
// distributed variables from their maps itself. Verifying the io16
// sample's output passes when the input's ReadBlock (the reader's
// scatter, which the rewriter used) returns zeros: that scatter is not
// read. When the maps it is handed place two elements of PS the other way
// round, it reports PS as different.
func TestPlacedIndependently(t *testing.T) {
	in := filepath.Join(shared(t, "scorpio/adios-io16"), "f.eam.h1.0001-01-01-00000.nc.bp")
	out := rewrite(t, in)
	ds, store := input(t, in)
	if !ds.Caps().Places {
		t.Fatalf("the SCORPIO reader places no block: %+v", ds.Caps())
	}
	if ok, log := check(t, &scatterLiar{Dataset: ds, badRead: true}, store, out, Options{}); !ok {
		t.Fatalf("verify read the reader's scatter:\n%s", log)
	}
	ok, log := check(t, &scatterLiar{Dataset: ds, badMap: true}, store, out, Options{})
	if ok || !strings.Contains(log, "DIFF PS") {
		t.Fatalf("two elements of PS placed the other way round: ok %v\n%s", ok, log)
	}
	t.Log(strings.TrimSpace(log))
}

// FuzzPlaceParts: any maps and parts are placed or refused as corrupt,
// never a panic; what is placed holds each placed value once. Seeded from
// both bases, SCORPIO's padding and the io16 sample's first map block.
func FuzzPlaceParts(f *testing.F) {
	enc := func(maps [][]int64) []byte {
		var b []byte
		for _, m := range maps {
			b = binary.LittleEndian.AppendUint16(b, uint16(len(m)))
			for _, e := range m {
				b = binary.LittleEndian.AppendUint64(b, uint64(e))
			}
		}
		return b
	}
	f.Add(uint16(5), enc([][]int64{{0, 1, -1, 2}, {3, 0}, {0, 0}}))
	f.Add(uint16(4), enc([][]int64{{1, 0, 2}, {0, 4}}))
	f.Add(uint16(866), enc([][]int64{{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 0, 0, 0, 0, 53, 54}}))
	f.Fuzz(func(t *testing.T, n uint16, raw []byte) {
		var maps [][]int64
		for len(raw) >= 2 && len(maps) < 64 {
			k := int(binary.LittleEndian.Uint16(raw))
			raw = raw[2:]
			k = min(k, len(raw)/8)
			m := make([]int64, k)
			for j := range m {
				m[j] = int64(binary.LittleEndian.Uint64(raw[8*j:]))
			}
			raw = raw[8*k:]
			maps = append(maps, m)
		}
		parts := make([][]byte, len(maps))
		for g, m := range maps {
			for j := range m {
				parts[g] = binary.LittleEndian.AppendUint32(parts[g], uint32(g<<20|j))
			}
		}
		out, err := placeParts(int64(n), 4, &rawPlacement{Maps: maps, Parts: parts, Fill: []byte{0xff, 0xff, 0xff, 0xff}})
		if err != nil {
			if !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("error %v, not ErrCorrupt", err)
			}
			return
		}
		if len(out) != 4*int(n) {
			t.Fatalf("%d bytes for %d places", len(out), n)
		}
		seen := map[uint32]bool{}
		for i := 0; i < len(out); i += 4 {
			v := binary.LittleEndian.Uint32(out[i:])
			if v != 0xffffffff && seen[v] {
				t.Fatalf("value %#x placed twice", v)
			}
			seen[v] = true
		}
	})
}
