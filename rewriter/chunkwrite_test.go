package rewriter

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// TestAllocatedChunks: raw chunked arrays whose blocks cover them are
// written by pwritev into chunks HDF5 allocated at creation; a partially
// covered one keeps H5Dwrite_chunk (its holes take no space). Ranks 1, 2, 3
// and 4 with edge chunks, a big-endian column-major source, units of whole
// chunk rows (digest hashed as they come) and of single chunks (digest read
// back from the file): h5py's values and hashlib's sha256 must match.
func TestAllocatedChunks(t *testing.T) {
	le8 := catalog.DType{Kind: catalog.Float, Size: 8}
	vars := inputVars() // B/x (3-D, steps 1 and 2), rho (partial), E x (1-D), t (scalars)
	vars = append(vars, testVar{
		a:    catalog.Array{Var: "W", Step: 0, DType: le8, Shape: []int64{5, 6, 7, 9}},
		val:  func(x []int64) uint64 { return f64(float64(((x[0]*6+x[1])*7+x[2])*9+x[3]) - 0.5) },
		expr: "((i*6 + j)*7 + k)*9 + l - 0.5",
		blocks: []testBlock{
			{lo: []int64{0, 0, 0, 0}, n: []int64{5, 6, 4, 9}},
			{lo: []int64{0, 0, 4, 0}, n: []int64{5, 6, 3, 9}, order: catalog.ColMajor},
		},
	}, testVar{
		a:      catalog.Array{Var: "P", Step: 0, DType: catalog.DType{Kind: catalog.Int, Size: 2, BigEndian: true}, Shape: []int64{9, 14}},
		val:    func(x []int64) uint64 { return uint64(uint16(int16(x[0]*14 + x[1] - 50))) },
		expr:   "i*14 + j - 50",
		blocks: []testBlock{{lo: []int64{0, 0}, n: []int64{9, 14}}},
	})
	chunkOf := func(s []int64) []int64 {
		c := make([]int64, len(s))
		for d := range s {
			c[d] = min(4, s[d])
		}
		return c
	}
	allocated := map[string]bool{"W.h5": true, "P.h5": true, "E_x.h5": true, "B.x.h5": true, "rho.h5": false}
	for _, tc := range []struct {
		name   string
		maxMem int64
		tile   int64           // units of about this many bytes (0: default)
		early  map[string]bool // files whose chunks are allocated at creation (nil: not checked)
	}{
		{"whole chunk rows", 1 << 30, 0, allocated},
		{"single chunks", 1 << 30, 1, allocated},
		// Under a tiny budget a plane of W's chunk row exceeds the read-back
		// buffer: W falls back to H5Dwrite_chunk, the others do not.
		{"tiny budget", 40000, 0, nil},
	} {
		for _, gather := range []bool{true, false} {
			name := tc.name + ", chunks gathered"
			if !gather {
				name = tc.name + ", pwritev"
			}
			t.Run(name, func(t *testing.T) {
				if !gather {
					saved := gatherRow
					gatherRow = 0
					t.Cleanup(func() { gatherRow = saved })
				}
				runAllocatedCase(t, vars, chunkOf, tc.maxMem, tc.tile, tc.early)
			})
		}
	}
}

// runAllocatedCase rewrites vars into chunks of chunkOf(shape), checks
// every array with h5py and hashlib, and which files h5dump shows with
// chunks allocated at creation (early; nil: not checked).
func runAllocatedCase(t *testing.T, vars []testVar, chunkOf func([]int64) []int64, maxMem, tile int64, early map[string]bool) {
	dir := t.TempDir()
	st, src := buildInput(t, dir, vars)
	stage := filepath.Join(dir, "stage")
	opts := Options{Layout: "chunked", Jobs: 3, MaxMem: maxMem, Version: "test-1",
		LayoutFor: func(a *catalog.Array) (planner.Layout, error) {
			if len(a.Shape) == 0 {
				return planner.Layout{Kind: planner.Contiguous}, nil
			}
			return planner.Layout{Kind: planner.Chunked, Chunk: chunkOf(a.Shape)}, nil
		}}
	opts = opts.withLimits()
	if tile > 0 {
		opts.Limits.TileTarget = tile
	}
	m, err := Run(context.Background(), st, src, stage, opts)
	if err != nil {
		t.Fatal(err)
	}
	var arrays []testVar
	for _, v := range vars {
		if len(v.a.Shape) > 0 {
			arrays = append(arrays, v)
		}
	}
	checkOutput(t, stage, m, arrays, chunkOf)
	needTool(t, "/usr/bin/h5dump")
	for file, want := range early {
		out, err := exec.Command("/usr/bin/h5dump", "-p", "-H", filepath.Join(stage, file)).CombinedOutput()
		if err != nil {
			t.Fatalf("h5dump %s: %v\n%s", file, err, out)
		}
		if got := strings.Contains(string(out), "H5D_ALLOC_TIME_EARLY"); got != want {
			t.Errorf("%s: chunks allocated at creation = %v, want %v", file, got, want)
		}
	}
}

// writeAt writes a buffer of several pieces and a ragged end at its offset
// (the bytes before it untouched), in calls of at most writePiece bytes,
// and reports the bytes written when the file refuses them.
func TestWriteAtPieces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 3*writePiece+12345)
	for i := range b {
		b[i] = byte(i*7 + i>>16)
	}
	if n, err := writeAt(f, b, 100); err != nil || n != len(b) {
		t.Fatalf("wrote %d of %d bytes: %v", n, len(b), err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100+len(b) || !bytes.Equal(got[100:], b) || !bytes.Equal(got[:100], make([]byte, 100)) {
		t.Fatalf("file of %d bytes does not hold the buffer at 100", len(got))
	}
	ro, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n, err := writeAt(ro, b, 0); err == nil || n != 0 {
		t.Fatalf("read-only file: wrote %d bytes, err %v", n, err)
	}
}
