package amrex

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// writeGhostPlotfile writes a 2-D, one-level plotfile the way VisMF writes
// MultiFabs with ghost cells: nghost 1, one file per rank (how = 0), FABs in
// FAB_IEEE_32 (big-endian float32). Valid cell (i, j) of component c holds
// c*1000 + i*10 + j; ghost cells hold -1.
func writeGhostPlotfile(t *testing.T, dir string) {
	t.Helper()
	boxes := [][2][2]int64{{{0, 0}, {3, 3}}, {{4, 0}, {7, 3}}}
	hdr := "HyperCLaw-V1.1\n2\na\nb\n2\n0.5\n0\n0 0 \n1 0.5 \n\n((0,0) (7,3) (0,0)) \n7 \n0.125 0.125 \n0\n0\n" +
		"0 2 0.5\n7\n0 0.5\n0 0.5\n0.5 1\n0 0.5\nLevel_0/Cell\n"
	var cellH strings.Builder
	cellH.WriteString("1\n0\n2\n1\n(2 0\n")
	for _, b := range boxes {
		fmt.Fprintf(&cellH, "((%d,%d) (%d,%d) (0,0))\n", b[0][0], b[0][1], b[1][0], b[1][1])
	}
	cellH.WriteString(")\n2\n")
	os.MkdirAll(filepath.Join(dir, "Level_0"), 0o755)
	var mins, maxs strings.Builder
	for n, b := range boxes {
		fmt.Fprintf(&cellH, "FabOnDisk: Cell_D_%05d 0\n", n)
		var data []byte
		data = fmt.Appendf(data, "FAB ((8, (32 8 23 0 1 9 0 127)),(4, (1 2 3 4)))((%d,%d) (%d,%d) (0,0)) 2\n",
			b[0][0]-1, b[0][1]-1, b[1][0]+1, b[1][1]+1)
		for c := 0; c < 2; c++ {
			for j := b[0][1] - 1; j <= b[1][1]+1; j++ {
				for i := b[0][0] - 1; i <= b[1][0]+1; i++ {
					v := float32(-1)
					if i >= b[0][0] && i <= b[1][0] && j >= b[0][1] && j <= b[1][1] {
						v = float32(c*1000) + float32(i*10+j)
					}
					data = binary.BigEndian.AppendUint32(data, math.Float32bits(v))
				}
			}
			fmt.Fprintf(&mins, "%d,", c*1000+int(b[0][0]*10+b[0][1]))
			fmt.Fprintf(&maxs, "%d,", c*1000+int(b[1][0]*10+b[1][1]))
		}
		mins.WriteString("\n")
		maxs.WriteString("\n")
		if err := os.WriteFile(filepath.Join(dir, "Level_0", fmt.Sprintf("Cell_D_%05d", n)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(&cellH, "\n2,2\n%s\n2,2\n%s\n", mins.String(), maxs.String())
	os.WriteFile(filepath.Join(dir, "Header"), []byte(hdr), 0o644)
	os.WriteFile(filepath.Join(dir, "Level_0", "Cell_H"), []byte(cellH.String()), 0o644)
}

func TestGhostCellsFloat32BigEndian(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "plt00007")
	writeGhostPlotfile(t, dir)
	ds, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	arrays := testkit.ScanAll(t, ds)
	if len(arrays) != 2 {
		t.Fatalf("%d arrays", len(arrays))
	}
	for c, a := range arrays {
		if a.Var != []string{"a", "b"}[c] || a.Step != 7 || a.DType != (catalog.DType{Kind: catalog.Float, Size: 4, BigEndian: true}) {
			t.Fatalf("array %s step %d dtype %v", a.Var, a.Step, a.DType)
		}
		if !slices.Equal(a.Fill, []byte{0x7f, 0xc0, 0, 0}) {
			t.Errorf("fill % x, want big-endian float32 NaN", a.Fill)
		}
		for n, b := range a.Blocks {
			if !slices.Equal(b.Stored(), []int64{6, 6}) || !slices.Equal(b.StoredLower(), []int64{1, 1}) || int(b.Rank) != n {
				t.Errorf("block %d: stored %v lower %v rank %d", n, b.Stored(), b.StoredLower(), b.Rank)
			}
		}
		dense := testkit.AssembleFortran(t, ds, a)
		testkit.EachIndex(a.Shape, func(idx []int64) {
			got, _ := testkit.At(a, dense, idx)
			if want := float64(c*1000) + float64(idx[0]*10+idx[1]); got != want {
				t.Errorf("%s At %v: %v, want %v", a.Var, idx, got, want)
			}
		})
	}
}
