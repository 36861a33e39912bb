package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

// manySmall is an array of many small blocks (4x3x4 tiles, shuffled in the
// file, some with ghost cells, in the storage order and byte order asked)
// and its expected output, row-major little-endian.
type manySmall struct {
	dir   string
	store *catalog.Store
	a     *catalog.Array
	want  []byte
}

func newManySmall(t *testing.T, dt catalog.DType, order func(i int) catalog.Order) *manySmall {
	t.Helper()
	dir := t.TempDir()
	shape := []int64{20, 18, 24}
	tile := []int64{4, 3, 4}
	a := &catalog.Array{Var: "E/x", Step: 3, DType: dt, Shape: shape, Offset: []int64{0, 0, 0}, Fill: make([]byte, dt.Size)}
	var boxes []catalog.Box
	for i := int64(0); i < shape[0]; i += tile[0] {
		for j := int64(0); j < shape[1]; j += tile[1] {
			for k := int64(0); k < shape[2]; k += tile[2] {
				boxes = append(boxes, catalog.Box{Lower: []int64{i, j, k}, Count: slicesClone(tile)})
			}
		}
	}
	r := rand.New(rand.NewPCG(19, 7))
	r.Shuffle(len(boxes), func(x, y int) { boxes[x], boxes[y] = boxes[y], boxes[x] })
	var file []byte
	for i, box := range boxes {
		b := catalog.Block{Box: box, File: "data.0", Offset: int64(len(file)), Rank: int32(i % 6), Order: order(i)}
		if i%3 == 1 { // ghost cells: one on each side of dimension 0, two after in 2
			b = b.WithStored([]int64{box.Count[0] + 2, box.Count[1], box.Count[2] + 2}, []int64{1, 0, 0})
		}
		data := encode(&b, dt, r)
		b.Length = int64(len(data))
		file = append(file, data...)
		a.Blocks = append(a.Blocks, b)
	}
	if err := os.WriteFile(filepath.Join(dir, "data.0"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	size := int64(dt.Size)
	want := make([]byte, a.Elements()*size)
	for i := range shape[0] {
		for j := range shape[1] {
			for k := range shape[2] {
				e := (i*shape[1]+j)*shape[2] + k
				copy(want[e*size:], value([]int64{i, j, k}, dt.Size))
			}
		}
	}
	store, err := catalog.CreateStore(filepath.Join(t.TempDir(), "in.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.SetInfo(catalog.DatasetInfo{Path: dir, Root: dir, Format: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := store.Put(a); err != nil {
		t.Fatal(err)
	}
	return &manySmall{dir: dir, store: store, a: a, want: want}
}

// writeOutput writes OUT with h5py alone: data as the dataset of E/x at
// step 3 and a manifest with its sha256.
func (s *manySmall) writeOutput(t *testing.T, data []byte) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(t.TempDir(), "raw")
	if err := os.WriteFile(raw, data, 0o644); err != nil {
		t.Fatal(err)
	}
	dt := s.a.DType.LittleEndian().NumPy()
	sum := python(t, `
import sys, hashlib, numpy as np, h5py
out, raw, dt, shape = sys.argv[1], sys.argv[2], sys.argv[3], eval(sys.argv[4])
b = open(raw, "rb").read()
with h5py.File(out + "/E.x.h5", "w") as f:
    f.create_dataset("/data/3/meshes/E/x", data=np.frombuffer(b, dtype=dt).reshape(shape))
print(hashlib.sha256(b).hexdigest())
`, out, raw, dt, fmt.Sprintf("(%d, %d, %d)", s.a.Shape[0], s.a.Shape[1], s.a.Shape[2]))
	m := catalog.Manifest{Tool: "relayout", Variables: []catalog.ManifestVariable{{
		Name: "E/x", DType: dt, File: "E.x.h5",
		Datasets: []catalog.ManifestDataset{{Step: 3, Path: "/data/3/meshes/E/x", Shape: s.a.Shape,
			Offset: []int64{0, 0, 0}, Layout: "contiguous", SHA256: strings.TrimSpace(sum)}},
	}}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, catalog.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestManySmallBlocks: an array of 720 small blocks, read through a batch
// source, is compared in output order (the stage path), and a corrupted
// element is found at its index with the input's and the output's values;
// of two, the first in row-major order is named even when the walk meets
// the other first (an earlier block-row holding a later row).
func TestManySmallBlocks(t *testing.T) {
	f8 := catalog.DType{Kind: catalog.Float, Size: 8}
	i4be := catalog.DType{Kind: catalog.Int, Size: 4, BigEndian: true}
	rowMajor := func(int) catalog.Order { return catalog.RowMajor }
	colMajor := func(int) catalog.Order { return catalog.ColMajor }
	mixed := func(i int) catalog.Order { return catalog.Order(i % 2) }
	cases := []struct {
		name  string
		dt    catalog.DType
		order func(int) catalog.Order
	}{
		{"row-major", f8, rowMajor},
		{"col-major", f8, colMajor},
		{"mixed-big-endian", i4be, mixed},
	}
	// Corruptions, by element index: [1,0,5] lies in the block-row
	// (0:4, 0:3), walked before (0:4, 3:6) holding [0,4,7], which comes
	// first in row-major order.
	corrupt := [][][]int64{
		{{13, 7, 22}},
		{{1, 0, 5}, {0, 4, 7}},
		{{19, 17, 23}},
	}
	staged := stageBlock
	defer func() { stageBlock = staged }()
	for _, c := range cases {
		s := newManySmall(t, c.dt, c.order)
		size := int64(c.dt.Size)
		// The outputs, written once: the expected one, then each corrupted.
		outs := []string{s.writeOutput(t, s.want)}
		var lines []string
		for _, idx := range corrupt {
			data := bytes.Clone(s.want)
			var first []int64
			for _, g := range idx {
				e := (g[0]*s.a.Shape[1]+g[1])*s.a.Shape[2] + g[2]
				data[e*size] ^= 0x10
				if first == nil || before(g, first) {
					first = g
				}
			}
			e := (first[0]*s.a.Shape[1]+first[1])*s.a.Shape[2] + first[2]
			dt := c.dt.LittleEndian()
			lines = append(lines, fmt.Sprintf("DIFF E/x step 3 level 0 at %s: in=%s out=%s", formatIndex(first),
				formatElem(s.want[e*size:(e+1)*size], dt), formatElem(data[e*size:(e+1)*size], dt)))
			outs = append(outs, s.writeOutput(t, data))
		}
		// mixed: blocks with ghost cells (larger stored arrays) are left
		// out of the stage and compared where they land, in the same bands
		// as the staged ones.
		for _, mixed := range []bool{false, true} {
			for _, jobs := range []int{1, 3} {
				stageBlock = staged
				if mixed {
					stageBlock = 4 * 3 * 4 * size // a block without ghosts
				}
				run := func(out string) (bool, string, *stats) {
					t.Helper()
					var st *stats
					statsHook = func(x *stats) { st = x }
					defer func() { statsHook = nil }()
					var log strings.Builder
					ok, err := Output(context.Background(), s.store, batchSource{fileSource{dir: s.dir}}, out, nil,
						Options{MaxMem: 1 << 20, Jobs: jobs, Log: &log, Exact: true})
					if err != nil {
						t.Fatalf("%s jobs %d: verify: %v\n%s", c.name, jobs, err, log.String())
					}
					return ok, log.String(), st
				}
				ok, log, st := run(outs[0])
				if !ok {
					t.Fatalf("%s jobs %d: want OK:\n%s", c.name, jobs, log)
				}
				ghosts := int64(0)
				for i := range s.a.Blocks {
					if s.a.Blocks[i].StoredLower() != nil {
						ghosts++
					}
				}
				if want := int64(len(s.a.Blocks)) - map[bool]int64{false: 0, true: ghosts}[mixed]; st.counter("ordered") != want || ghosts == 0 || st.counter("ghost") == 0 {
					t.Errorf("%s jobs %d mixed %v: %d blocks compared in output order, want %d of %d (%d with ghosts): %s",
						c.name, jobs, mixed, st.counter("ordered"), want, len(s.a.Blocks), ghosts, st)
				}
				if c.name != "row-major" && st.counter("col-major") == 0 {
					t.Errorf("%s jobs %d: no column-major block: %s", c.name, jobs, st)
				}
				for i, idx := range corrupt {
					ok, log, _ := run(outs[i+1])
					if line := strings.SplitN(log, "\n", 2)[0]; ok || line != lines[i] {
						t.Errorf("%s jobs %d mixed %v: corrupted %v: ok %v, want %q, got:\n%s", c.name, jobs, mixed, idx, ok, lines[i], log)
					}
				}
			}
		}
	}
}

// The stage plan on its own: random blocks (shapes, overlaps, ghosts,
// orders, byte orders) placed and compared against an output built by the
// reference encoder's values; a changed element is reported at its index.
func TestStagePlanRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ran := 0
	defer func() {
		if ran < 100 {
			t.Errorf("only %d of 300 cases staged", ran)
		}
	}()
	for it := range 300 {
		dt := []catalog.DType{{Kind: catalog.Float, Size: 8}, {Kind: catalog.Int, Size: 2, BigEndian: true}, {Kind: catalog.Uint, Size: 1}}[r.IntN(3)]
		rank := 1 + r.IntN(3)
		shape := make([]int64, rank)
		for d := range shape {
			shape[d] = 1 + r.Int64N(9)
		}
		band := catalog.Box{Lower: make([]int64, rank), Count: slicesClone(shape)}
		band.Lower[0] = r.Int64N(shape[0])
		band.Count[0] = 1 + r.Int64N(shape[0]-band.Lower[0])
		size := int64(dt.Size)
		out := make([]byte, band.Elements()*size)
		for e := range band.Elements() {
			copy(out[e*size:], value(unflat(e, band), dt.Size))
		}
		var part []batched
		var datas [][]byte
		for range 2 + r.IntN(12) {
			box := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
			// Blocks on a grid of rows (same outer extent) or anywhere.
			for d := range rank {
				box.Lower[d] = r.Int64N(shape[d])
				box.Count[d] = 1 + r.Int64N(shape[d]-box.Lower[d])
			}
			b := &catalog.Block{Box: box, Order: catalog.Order(r.IntN(2))}
			if r.IntN(2) == 0 {
				*b = b.WithStored(make([]int64, rank), make([]int64, rank))
				for d := range rank {
					b.StoredLower()[d] = r.Int64N(2)
					b.Stored()[d] = box.Count[d] + b.StoredLower()[d] + r.Int64N(2)
				}
			}
			region, ok := box.Intersect(band)
			if !ok {
				continue
			}
			part = append(part, batched{b: b, region: region, p: newPlacement(b, dt)})
			datas = append(datas, encode(b, dt, r))
		}
		sp := planStage(part, band, dt)
		if sp == nil {
			continue
		}
		ran++
		stage := make([]byte, sp.bytes)
		for k := range part {
			if sp.at[k] >= 0 {
				sp.place(sp.at[k], part[k].p, part[k].region, datas[k], stage, make([]int64, rank))
			}
		}
		var got *mismatch
		keep := func(m *mismatch) {
			if got == nil || before(m.index, got.index) {
				got = m
			}
		}
		sp.compare(stage, out, 0, len(sp.groups), make([]int64, rank), keep)
		if got != nil {
			t.Fatalf("case %d: equal output reported different at %v", it, got.index)
		}
		// Change one element covered by a staged block.
		k := r.IntN(len(part))
		for sp.at[k] < 0 {
			k = r.IntN(len(part))
		}
		reg := part[k].region
		g := make([]int64, rank)
		for d := range rank {
			g[d] = reg.Lower[d] + r.Int64N(reg.Count[d])
		}
		e := flat(g, band)
		bad := bytes.Clone(out)
		bad[e*size] ^= 0x40
		got = nil
		sp.compare(stage, bad, 0, len(sp.groups), make([]int64, rank), keep)
		if got == nil || !slices.Equal(got.index, g) || !bytes.Equal(got.in, out[e*size:(e+1)*size]) || !bytes.Equal(got.out, bad[e*size:(e+1)*size]) {
			t.Fatalf("case %d: element %v changed, got %+v", it, g, got)
		}
	}
}

func flat(g []int64, band catalog.Box) int64 {
	var e int64
	for d := range g {
		e = e*band.Count[d] + g[d] - band.Lower[d]
	}
	return e
}

func unflat(e int64, band catalog.Box) []int64 {
	g := make([]int64, len(band.Lower))
	for d := len(g) - 1; d >= 0; d-- {
		g[d] = band.Lower[d] + e%band.Count[d]
		e /= band.Count[d]
	}
	return g
}

// sortRegions must put a band's regions in regionOrder, by packed keys on
// tilings of one block shape (shuffled, cut by the band) and by comparison
// otherwise, and keep every entry once.
func TestSortRegions(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for it := range 300 {
		rank := 1 + r.IntN(3)
		edge := make([]int64, rank)
		shape := make([]int64, rank)
		for d := range rank {
			edge[d] = 1 + r.Int64N(4)
			shape[d] = edge[d] * (1 + r.Int64N(6))
		}
		band := catalog.Box{Lower: make([]int64, rank), Count: slicesClone(shape)}
		band.Lower[0] = r.Int64N(shape[0])
		band.Count[0] = 1 + r.Int64N(shape[0]-band.Lower[0])
		stride := make([]int64, rank)
		n := int64(1)
		for d := rank - 1; d >= 0; d-- {
			stride[d] = n
			n *= band.Count[d]
		}
		var part []batched
		tiled := it%2 == 0
		for k := range product(shape) / product(edge) {
			box := catalog.Box{Lower: make([]int64, rank), Count: slicesClone(edge)}
			for d := rank - 1; d >= 0; d-- {
				per := shape[d] / edge[d]
				box.Lower[d] = k % per * edge[d]
				k /= per
			}
			if !tiled { // any shape, anywhere
				for d := range rank {
					box.Lower[d] = r.Int64N(shape[d])
					box.Count[d] = 1 + r.Int64N(shape[d]-box.Lower[d])
				}
			}
			if region, ok := box.Intersect(band); ok {
				part = append(part, batched{region: region})
			}
		}
		if len(part) == 0 {
			continue
		}
		cand := make([]int, len(part))
		for i := range cand {
			cand[i] = i
		}
		r.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
		sortRegions(cand, part, band, stride)
		for i := 1; i < len(cand); i++ {
			if regionOrder(part[cand[i-1]].region, part[cand[i]].region) > 0 {
				t.Fatalf("case %d (tiled %v): %v before %v", it, tiled, part[cand[i-1]].region, part[cand[i]].region)
			}
		}
		seen := slices.Clone(cand)
		slices.Sort(seen)
		for i, k := range seen {
			if k != i {
				t.Fatalf("case %d: entries %v are not each entry once", it, seen)
			}
		}
	}
}

func product(v []int64) int64 {
	n := int64(1)
	for _, x := range v {
		n *= x
	}
	return n
}
