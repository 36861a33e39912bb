package scorpio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// randomMap makes a decomposition of n destination elements over nb blocks:
// a random permutation dealt in shuffled runs of random length (so some
// runs stay contiguous), a fraction left unmapped (holes), pads sprinkled
// in, some blocks replaced by SCORPIO's two-entry padding. It returns the
// stored entries for base and, per block, the true destination of each slot
// (-1 for a pad), which the naive scatter uses.
func randomMap(rng *rand.Rand, n int64, nb int, base int) (stored [][]int64, dest [][]int64) {
	perm := rng.Perm(int(n))
	holeRate := []float64{0, 0, 0.1, 0.5}[rng.IntN(4)]
	padRate := []float64{0, 0.05, 0.3}[rng.IntN(3)]
	var slots []int64
	// deal in runs of 1..8 consecutive destinations
	for i := 0; i < len(perm); {
		l := 1 + rng.IntN(8)
		start := int64(perm[i])
		for k := 0; k < l && start+int64(k) < n; k++ {
			slots = append(slots, start+int64(k))
		}
		i += l
	}
	// dedupe (runs overlap), drop holes, add pads
	seen := make([]bool, n)
	var kept []int64
	for _, s := range slots {
		if seen[s] {
			continue
		}
		seen[s] = true
		if rng.Float64() < holeRate {
			continue
		}
		kept = append(kept, s)
		if rng.Float64() < padRate {
			kept = append(kept, -1)
		}
	}
	if base == 0 && !slices.Contains(kept, -1) && int64(len(kept)) < n {
		kept = append(kept, -1) // a 0-based map without pads and not full is undetectable
	}
	stored = make([][]int64, nb)
	dest = make([][]int64, nb)
	for b := 0; b < nb; b++ {
		lo, hi := len(kept)*b/nb, len(kept)*(b+1)/nb
		d := kept[lo:hi]
		if hi-lo <= 1 && rng.IntN(2) == 0 {
			// SCORPIO's padding to two entries, second 0.
			d = append(append([]int64(nil), d...), -1)
			if len(d) == 1 {
				d = append(d, -1)
			}
			st := []int64{0, 0}
			if d[0] >= 0 {
				st[0] = d[0] + int64(base)
			} else if base == 0 {
				d, st = []int64{-1, -1}, []int64{-1, -1} // [0,0] would be element 0: see TestPaddingBlocks
			}
			stored[b], dest[b] = st, d
			continue
		}
		dest[b] = d
		st := make([]int64, len(d))
		for j, x := range d {
			if x < 0 {
				st[j] = int64(base) - 1
			} else {
				st[j] = x + int64(base)
			}
		}
		stored[b] = st
	}
	return stored, dest
}

// naive places every element one at a time by the true destinations.
func naive(n int64, dest [][]int64, data [][]byte, es int, fill []byte) []byte {
	out := make([]byte, n*int64(es))
	for i := int64(0); i < n; i++ {
		copy(out[i*int64(es):], fill)
	}
	for b, d := range dest {
		for j, x := range d {
			if x >= 0 {
				copy(out[x*int64(es):(x+1)*int64(es)], data[b][j*es:(j+1)*es])
			}
		}
	}
	return out
}

func randomData(rng *rand.Rand, stored [][]int64, es int) [][]byte {
	data := make([][]byte, len(stored))
	for b, m := range stored {
		data[b] = make([]byte, len(m)*es)
		for i := range data[b] {
			data[b][i] = byte(rng.IntN(255) + 1)
		}
	}
	return data
}

// TestPlanMatchesNaive is the property: on random maps (permutations dealt
// in shuffled runs, pads, holes, padding blocks, both bases, element sizes
// 1, 4 and 8) the plan's runs plus Scatter and Fill place exactly what an
// element-by-element scatter places, and the plan's structure is sound.
func TestPlanMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	for iter := 0; iter < 600; iter++ {
		n := int64(1 + rng.IntN(3000))
		nb := 1 + rng.IntN(20)
		base := rng.IntN(2)
		es := []int{1, 4, 8}[rng.IntN(3)]
		stored, dest := randomMap(rng, n, nb, base)
		dims := []int64{n}
		if n%6 == 0 {
			dims = []int64{6, n / 6}
		}
		p, err := BuildPlan("test", 512, dims, stored, nil)
		if err != nil {
			t.Fatalf("iter %d (n %d base %d): %v", iter, n, base, err)
		}
		if p.Base != base {
			// Only the documented ambiguity may flip it: one pad, the last
			// element a hole, otherwise a perfect cover.
			t.Fatalf("iter %d: base %d detected, want %d (n %d): %v", iter, p.Base, base, n, stored)
		}
		checkStructure(t, p)
		data := randomData(rng, stored, es)
		fill := bytes.Repeat([]byte{0}, es)
		want := naive(n, dest, data, es, fill)
		got := make([]byte, n*int64(es))
		for i := range got {
			got[i] = 0xEE
		}
		if err := p.Scatter(got, data, es); err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		p.Fill(got, fill)
		if !bytes.Equal(got, want) {
			i := 0
			for got[i] == want[i] {
				i++
			}
			t.Fatalf("iter %d (n %d, %d blocks, base %d, es %d): first difference at element %d", iter, n, nb, base, es, i/es)
		}
		// Padded blocks may arrive short (BlockNeed elements).
		short := make([][]byte, len(data))
		for b := range data {
			short[b] = data[b][:p.BlockNeed[b]*int64(es)]
		}
		got2 := make([]byte, len(got))
		if err := p.Scatter(got2, short, es); err != nil {
			t.Fatalf("iter %d: short padded blocks: %v", iter, err)
		}
		p.Fill(got2, fill)
		if !bytes.Equal(got2, want) {
			t.Fatalf("iter %d: short padded blocks scatter differently", iter)
		}
	}
}

func checkStructure(t *testing.T, p *Plan) {
	t.Helper()
	runs := p.RunList()
	if int64(len(runs)) != p.NumRuns {
		t.Fatalf("%d runs listed, NumRuns %d", len(runs), p.NumRuns)
	}
	var at, covered int64
	ri, hi := 0, 0
	for at < p.Elems {
		switch {
		case ri < len(runs) && runs[ri].Dst == at:
			r := runs[ri]
			if r.Len <= 0 || r.Src < 0 || r.Src+r.Len > p.BlockLen[r.Block] {
				t.Fatalf("run %d %+v outside block of %d", ri, r, p.BlockLen[r.Block])
			}
			if ri > 0 {
				q := runs[ri-1]
				if q.Dst+q.Len == r.Dst && q.Block == r.Block && q.Src+q.Len == r.Src {
					t.Fatalf("runs %d and %d not merged: %+v %+v", ri-1, ri, q, r)
				}
			}
			at += r.Len
			covered += r.Len
			ri++
		case hi < len(p.Holes) && p.Holes[hi].Dst == at:
			at += p.Holes[hi].Len
			hi++
		default:
			t.Fatalf("element %d neither in a run nor a hole", at)
		}
	}
	if ri != len(runs) || hi != len(p.Holes) || at != p.Elems || covered != p.Covered {
		t.Fatalf("runs %d/%d holes %d/%d at %d of %d covered %d/%d", ri, len(runs), hi, len(p.Holes), at, p.Elems, covered, p.Covered)
	}
}

// TestPaddingBlocks: SCORPIO pads a group's map of 0 or 1 entries to two,
// the second 0; in a 0-based map that second 0 is a pad, and an empty
// group's [0, 0] gives element 0 only when no other block covers it.
func TestPaddingBlocks(t *testing.T) {
	// 0-based: block 1 is an empty group's padding, element 0 is block 0's.
	p, err := BuildPlan("t", 1, []int64{4}, [][]int64{{0, 1, -1}, {0, 0}, {3, 0}, {2, -1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []Run{{Dst: 0, Src: 0, Len: 2, Block: 0}, {Dst: 2, Src: 0, Len: 1, Block: 3}, {Dst: 3, Src: 0, Len: 1, Block: 2}}
	if p.Base != 0 || !slices.Equal(p.RunList(), want) || len(p.Holes) != 0 || !slices.Equal(p.BlockNeed, []int64{3, 0, 1, 2}) {
		t.Fatalf("base %d runs %+v holes %+v need %v", p.Base, p.RunList(), p.Holes, p.BlockNeed)
	}
	// 0-based: [0, 0] is element 0 when nobody else has it.
	p, err = BuildPlan("t", 1, []int64{3}, [][]int64{{1, 2, -1}, {0, 0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Covered != 3 || p.RunList()[0] != (Run{Dst: 0, Src: 0, Len: 1, Block: 1}) {
		t.Fatalf("runs %+v", p.RunList())
	}
	// 1-based: the zeros are plain pads.
	p, err = BuildPlan("t", 1, []int64{3}, [][]int64{{1, 2}, {0, 0}, {3, 0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Base != 1 || p.Covered != 3 || p.Pads != 3 {
		t.Fatalf("base %d covered %d pads %d", p.Base, p.Covered, p.Pads)
	}
	// A CONTIG map without pads: 0-based by its perfect cover.
	p, err = BuildPlan("t", 1, []int64{4}, [][]int64{{2, 3}, {0, 1}}, nil)
	if err != nil || p.Base != 0 || p.Covered != 4 {
		t.Fatalf("perfect 0-based cover: %v %+v", err, p)
	}
}

// TestPlanCorrupt: entries out of range and duplicated destinations are
// corrupt, naming the decomposition, block and entry.
func TestPlanCorrupt(t *testing.T) {
	for _, c := range []struct {
		name   string
		blocks [][]int64
		want   string
	}{
		{"beyond", [][]int64{{1, 2}, {5}}, "block 1 entry 0: map entry 5 outside 4 elements"},
		{"duplicate", [][]int64{{1, 2}, {3, 2}}, "block 1 entry 1: element 1 already mapped by block 0 entry 1"},
		{"below -1", [][]int64{{0, 1, -1}, {-2}}, "block 1 entry 0: map entry -2 (0-based)"},
		{"beyond 0-based", [][]int64{{0, -1, 4}}, "map entry 4 outside 4 elements"},
	} {
		_, err := BuildPlan("md.0:/__pio__/decomp/7", 7, []int64{4}, c.blocks, nil)
		if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "decomposition 7") || !strings.Contains(err.Error(), "/__pio__/decomp/7") {
			t.Errorf("%s: %v, want corrupt %q", c.name, err, c.want)
		}
	}
	p, err := BuildPlan("t", 3, []int64{4}, [][]int64{{1, 2}, {3, 4, 0}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 32)
	err = p.Scatter(dst, [][]byte{make([]byte, 16), make([]byte, 16)}, 8)
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "data block 1 holds 16 bytes (8-byte elements), its map block 3 entries") {
		t.Fatalf("misaligned block: %v", err)
	}
	if err := p.Scatter(dst, [][]byte{make([]byte, 16)}, 8); !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("missing block: %v", err)
	}
}

// TestScatterAllocs: Scatter and Fill allocate nothing.
func TestScatterAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	stored, _ := randomMap(rng, 5000, 8, 1)
	p, err := BuildPlan("t", 1, []int64{5000}, stored, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := randomData(rng, stored, 8)
	dst := make([]byte, 5000*8)
	fill := binary.LittleEndian.AppendUint64(nil, 7)
	if n := testing.AllocsPerRun(20, func() {
		if err := p.Scatter(dst, data, 8); err != nil {
			t.Fatal(err)
		}
		p.Fill(dst, fill)
	}); n != 0 {
		t.Fatalf("%v allocations per Scatter+Fill", n)
	}
}

// TestResident: Resident builds the plans of the decompositions the
// selected variables use, once (Plan hands the same ones back after), and
// reports the bytes they hold: their packed runs, holes and tables.
func TestResident(t *testing.T) {
	dir := testkit.SharedData(t, "scorpio/adios-io16")
	ctx := context.Background()
	s, err := OpenStream(dir, []string{sample + ".bp"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Resident(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d := s.members[0].d
	ids := map[int]bool{}
	for _, v := range d.Vars() {
		for _, w := range v.Writes {
			ids[w.Decomp] = true
		}
	}
	if len(ids) == 0 {
		t.Fatal("no darray write in the sample")
	}
	var want int64
	for id := range ids {
		if d.plans.m[id] == nil {
			t.Fatalf("decomposition %d: no plan built", id)
		}
		p, err := d.Plan(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var runs int64
		for _, r := range p.runs {
			runs += int64(len(r))
		}
		if p.Bytes() < runs+16*int64(len(p.Holes)) {
			t.Fatalf("decomposition %d: %d bytes for %d bytes of runs and %d holes", id, p.Bytes(), runs, len(p.Holes))
		}
		want += p.Bytes()
	}
	if got != want || got <= 0 {
		t.Fatalf("Resident %d, the plans hold %d", got, want)
	}
	// Nothing selected: nothing kept.
	none, err := OpenStream(dir, []string{sample + ".bp"}, Config{Match: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if n, err := none.Resident(ctx); n != 0 || err != nil {
		t.Fatalf("no variable selected: Resident %d, %v", n, err)
	}
}
