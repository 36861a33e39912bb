package amrex

import (
	"os"
	"path/filepath"
	"testing"
)

// Fuzz targets for the text parsers, seeded from the real plotfiles when
// ../shared/data is present (and from small inline seeds otherwise). Run with
// e.g. go test -fuzz FuzzCellH -fuzztime 30s ./reader/amrex.
//
// Memory cap: inputs above maxFuzzInput are ignored, and every parser must
// bound what it allocates by the input size (counts are checked against the
// bytes left before any slice is made); the bodies check that bound.
const maxFuzzInput = 1 << 20

// maxSeed keeps the fuzzer fast: larger real files (the 2-D Header and
// Cell_H) make each execution slow without adding grammar.
const maxSeed = 64 << 10

// seedFiles adds the named files of the real plotfiles as seeds, each with
// the plotfile's dimension when withDim is set.
func seedFiles(f *testing.F, withDim bool, rel ...string) {
	for sub, d := range map[string]int{"amrex/pelelmex-3d": 3, "amrex/pelelmex-2d": 2} {
		p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", sub))
		if err != nil {
			continue
		}
		for _, r := range rel {
			b, err := os.ReadFile(filepath.Join(p, r))
			switch {
			case err != nil || len(b) > maxSeed:
			case withDim:
				f.Add(b, d)
			default:
				f.Add(b)
			}
		}
	}
}

func FuzzHeader(f *testing.F) {
	seedFiles(f, false, "Header")
	f.Add([]byte("HyperCLaw-V1.1\n1\nx\n1\n0\n0\n0 \n1 \n\n((0) (3) (0)) \n0 \n0.25 \n0\n0\n0 1 0\n0\n0 1\nLevel_0/Cell\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzzInput {
			return
		}
		h, err := ParseHeader("Header", b)
		if err != nil {
			return
		}
		if len(h.Vars) > len(b) || len(h.Levels) != h.Finest+1 || len(h.Domains) != h.Finest+1 || len(h.RefRatio) != h.Finest {
			t.Fatalf("inconsistent header: %d vars, finest %d, %d levels, %d domains, %d ratios", len(h.Vars), h.Finest, len(h.Levels), len(h.Domains), len(h.RefRatio))
		}
		grids := 0
		for _, l := range h.Levels {
			grids += l.NGrids
		}
		if grids > len(b) {
			t.Fatalf("%d grids from %d bytes", grids, len(b))
		}
	})
}

func FuzzCellH(f *testing.F) {
	seedFiles(f, true, "Level_0/Cell_H", "Level_1/Cell_H")
	f.Add([]byte("2\n1\n1\n(1,1)\n(1 0\n((0,0) (3,3) (0,0))\n)\n1\nFabOnDisk: Cell_D_00000 0\n\n((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))\n"), 2)
	f.Add([]byte("4\n1\n1\n0\n(1 0\n((0) (3) (0))\n)\n1\nFabOnDisk: Cell_D_00000 0\n\n1,\n2,\n((8, (32 8 23 0 1 9 0 127)),(4, (1 2 3 4)))\n"), 1)
	f.Fuzz(func(t *testing.T, b []byte, d int) {
		if len(b) > maxFuzzInput {
			return
		}
		d = 1 + (d&3)%3
		c, err := ParseCellH("Cell_H", b, d)
		if err != nil {
			return
		}
		if len(c.Boxes) > len(b) || len(c.Fabs) != len(c.Boxes) || len(c.NGhost) != d {
			t.Fatalf("%d boxes, %d fabs, ghost %v from %d bytes", len(c.Boxes), len(c.Fabs), c.NGhost, len(b))
		}
		if (c.Version == 1) != (c.Real == nil) {
			t.Fatalf("version %d with real descriptor %v", c.Version, c.Real)
		}
		for _, row := range c.Min {
			if len(row) != c.NComp {
				t.Fatalf("min row of %d values for %d components", len(row), c.NComp)
			}
		}
	})
}

func FuzzFabHeader(f *testing.F) {
	for _, sub := range []string{"amrex/pelelmex-3d/Level_1/Cell_D_00001", "amrex/pelelmex-2d/Level_0/Cell_D_00086"} {
		p := filepath.Join("..", "..", "..", "shared", "data", sub)
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b[:min(len(b), maxFabHeader)])
		}
	}
	f.Add([]byte("FAB ((8, (32 8 23 0 1 9 0 127)),(4, (1 2 3 4)))((-1,-1) (4,4) (0,0)) 2\n\x00\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFabHeader {
			b = b[:maxFabHeader]
		}
		for d := 1; d <= 3; d++ {
			h, err := ParseFabHeader("Cell_D_00000", 0, b, d)
			if err != nil {
				continue
			}
			if h.Len <= 0 || h.Len > int64(len(b)) || b[h.Len-1] != '\n' || !h.Real.DType.Valid() || len(h.Box.Lo) != d {
				t.Fatalf("header %+v from %q", h, b)
			}
		}
	})
}

// FuzzBoxList drives the box and BoxArray grammar on its own.
func FuzzBoxList(f *testing.F) {
	f.Add([]byte("(2 0\n((0,0,0) (7,7,7) (0,0,0))\n((8,0,0) (15,7,7) (1,0,0))\n)"), 3)
	f.Add([]byte("((-1,-1) (4,4) (0,0))"), 2)
	f.Fuzz(func(t *testing.T, b []byte, d int) {
		if len(b) > maxFuzzInput {
			return
		}
		d = 1 + (d&3)%3
		l := newLexer("boxes", b)
		if l.peek() == '(' && len(b) > 1 && b[1] != '(' {
			// A BoxArray: "(n hash" then n boxes then ")".
			l.expect('(', "")
			n, err := l.int("count", 0, int64(l.remaining()/(7+6*d)))
			if err != nil {
				return
			}
			if _, err := l.int("hash", -1<<62, 1<<62); err != nil {
				return
			}
			for i := int64(0); i < n; i++ {
				bx, err := l.box("box", d)
				if err != nil {
					return
				}
				checkBox(t, bx, d)
			}
			return
		}
		for !l.eof() {
			bx, err := l.box("box", d)
			if err != nil {
				return
			}
			checkBox(t, bx, d)
		}
	})
}

func checkBox(t *testing.T, bx box, d int) {
	if len(bx.Lo) != d || len(bx.Hi) != d || len(bx.Type) != d {
		t.Fatalf("box %v for %d dimensions", bx, d)
	}
	for k := 0; k < d; k++ {
		if bx.Hi[k] < bx.Lo[k] || (bx.Type[k] != 0 && bx.Type[k] != 1) {
			t.Fatalf("accepted box %v", bx)
		}
	}
}
