package scorpio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
)

// Fuzz inputs: a decomposition as bytes = u8 block count, u16 dims[2] (LE),
// then int64 entries (LE) dealt to the blocks in equal shares; a put_var
// block as ndims (u8), element size (u8), then the block.

// realDir is the io16 set when present (fuzz seeds; no skip: the generic
// seeds still run).
func realSeedSets() []string {
	var out []string
	for _, set := range []string{"adios-io16", "adios-contig"} {
		p := filepath.Join("..", "..", "..", "shared", "data", "scorpio", set, sample+".bp")
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func encodeDecomp(blocks [][]int64, dims []int64) []byte {
	b := []byte{byte(len(blocks))}
	d := [2]int64{1, 1}
	copy(d[2-len(dims):], dims)
	b = binary.LittleEndian.AppendUint16(b, uint16(d[0]))
	b = binary.LittleEndian.AppendUint16(b, uint16(d[1]))
	for _, m := range blocks {
		for _, e := range m {
			b = binary.LittleEndian.AppendUint64(b, uint64(e))
		}
	}
	return b
}

func decodeDecomp(in []byte) (blocks [][]int64, dims []int64, ok bool) {
	if len(in) < 5 || in[0] == 0 {
		return nil, nil, false
	}
	nb := int(in[0])
	dims = []int64{int64(binary.LittleEndian.Uint16(in[1:])), int64(binary.LittleEndian.Uint16(in[3:]))}
	if dims[0]*dims[1] > 1<<20 { // memory cap: 8 MiB of inverse map
		return nil, nil, false
	}
	ents := (len(in) - 5) / 8
	blocks = make([][]int64, nb)
	for g := 0; g < nb; g++ {
		lo, hi := ents*g/nb, ents*(g+1)/nb
		for j := lo; j < hi; j++ {
			blocks[g] = append(blocks[g], int64(binary.LittleEndian.Uint64(in[5+8*j:])))
		}
	}
	return blocks, dims, true
}

// FuzzBuildPlan: any map either builds a plan whose scatter equals the
// element-by-element placement by the detected base, or is refused as
// corrupt/unsupported; never a panic. Seeds: the real decompositions.
func FuzzBuildPlan(f *testing.F) {
	f.Add(encodeDecomp([][]int64{{1, 2, 0}, {3, 0}}, []int64{3}))
	f.Add(encodeDecomp([][]int64{{0, -1, 2}, {1, 0}}, []int64{3}))
	f.Add(encodeDecomp([][]int64{{2, 3}, {0, 1}}, []int64{2, 2}))
	for _, dir := range realSeedSets() {
		d, err := Open(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, id := range []int{512, 513} { // the 1-D ones: 866 elements
			blocks, err := d.MapBlocks(context.Background(), id)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(encodeDecomp(blocks, d.decomps[id].dims))
		}
		d.Close()
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		blocks, dims, ok := decodeDecomp(in)
		if !ok {
			return
		}
		p, err := BuildPlan("fuzz", 1, dims, blocks, nil)
		if err != nil {
			if !errors.Is(err, catalog.ErrCorrupt) && !errors.Is(err, catalog.ErrUnsupported) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		checkStructure(t, p)
		data := make([][]byte, len(blocks))
		for g, m := range blocks {
			data[g] = make([]byte, len(m))
			for j := range data[g] {
				data[g][j] = byte(g*31 + j + 1)
			}
		}
		got := make([]byte, p.Elems)
		if err := p.Scatter(got, data, 1); err != nil {
			t.Fatal(err)
		}
		p.Fill(got, []byte{0})
		// The naive reading by the detected base (padding blocks: see
		// BuildPlan; their slot 1 is a pad, slot 0 of a 0-based [0, 0] only
		// if element 0 is free, which Covered accounts for).
		want := make([]byte, p.Elems)
		for g, m := range blocks {
			for j, e := range m {
				if padded(m) && p.Base == 0 && (j == 1 || e == 0) {
					continue
				}
				if x := e - int64(p.Base); x >= 0 {
					want[x] = data[g][j]
				}
			}
		}
		if p.Base == 0 && p.Elems > 0 && want[0] == 0 {
			for g, m := range blocks {
				if padded(m) && m[0] == 0 {
					want[0] = data[g][0]
					break
				}
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("scatter differs from the naive placement (base %d)", p.Base)
		}
	})
}

// FuzzParseBlob: put_var blocks either parse into a header and values of
// exactly prod(count) elements or are refused as corrupt. Seeds: the real
// lev, time and date_written blocks.
func FuzzParseBlob(f *testing.F) {
	f.Add(append([]byte{1, 8}, make([]byte, 24)...))
	for _, dir := range realSeedSets() {
		d, err := Open(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, v := range d.Vars() {
			for i := range v.Blobs {
				raw, err := d.readRaw(context.Background(), &v.Blobs[i].Block, catalog.DType{Kind: catalog.Uint, Size: 1})
				if err != nil {
					f.Fatal(err)
				}
				f.Add(append([]byte{byte(len(v.Dims)), byte(v.Type.Size)}, raw...))
			}
		}
		d.Close()
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 2 {
			return
		}
		start, count, data, err := ParseBlob(in[2:], int(in[0]), int(in[1]), binary.LittleEndian)
		if err != nil {
			if !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("error of no kind: %v", err)
			}
			return
		}
		n := int64(1)
		for k := range count {
			if start[k] < 0 || count[k] < 0 {
				t.Fatalf("start %v count %v", start, count)
			}
			n *= count[k]
		}
		if int64(len(data)) != n*int64(in[1]) {
			t.Fatalf("%d value bytes for count %v", len(data), count)
		}
	})
}
