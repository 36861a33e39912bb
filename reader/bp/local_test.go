package bp

import (
	"context"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestOpenLocal: a SCORPIO BP5 set (16 writers, 1-D local arrays) through
// OpenLocal lists its local arrays with their blocks end to end in writer
// order; Open still lists them as skipped.
func TestOpenLocal(t *testing.T) {
	dir := dataDir(t, "scorpio/adios-io16/f.eam.h1.0001-01-01-00000.nc.bp")
	plain := open(t, dir)
	if !slices.ContainsFunc(plain.Info().Skipped, func(s string) bool { return strings.HasPrefix(s, "/__pio__/var/T: local array") }) {
		t.Fatalf("Open: /__pio__/var/T not skipped as a local array: %q", plain.Info().Skipped)
	}
	d, err := OpenLocal(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	byName := map[string]int{}
	for i, a := range arrays {
		byName[a.Var] = i
	}
	i, ok := byName["/__pio__/var/T"]
	if !ok {
		t.Fatal("OpenLocal: /__pio__/var/T not listed")
	}
	a := arrays[i]
	if len(a.Blocks) != 48 || !slices.Equal(a.Shape, []int64{48 * 4608}) || a.DType.Size != 4 {
		t.Fatalf("T: %d blocks, shape %v, %v", len(a.Blocks), a.Shape, a.DType)
	}
	var at int64
	for k, b := range a.Blocks {
		if b.Box.Lower[0] != at || b.Box.Count[0] != 4608 || b.Rank != int32(k/3) {
			t.Fatalf("T block %d: box %v rank %d", k, b.Box, b.Rank)
		}
		at += b.Box.Count[0]
	}
	// A decomposition block holds int64 map entries, 1-based: the first
	// block of 512 starts 1 2 ... 16 (PROVENANCE).
	m := arrays[byName["/__pio__/decomp/512"]]
	raw, err := catalog.ReadBlock(context.Background(), d, &m.Blocks[0], m.DType)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 96*8 || binary.LittleEndian.Uint64(raw) != 1 || binary.LittleEndian.Uint64(raw[15*8:]) != 16 {
		t.Fatalf("decomp 512 block 0: %d bytes, starts %v", len(raw), raw[:16])
	}
	attrs := d.RawAttrs()
	if !slices.ContainsFunc(attrs, func(a catalog.Attr) bool {
		return a.Name == "/__pio__/var/T/def/decomp" && len(a.Strings) == 1 && a.Strings[0] == "514"
	}) {
		t.Fatal("RawAttrs: no /__pio__/var/T/def/decomp = 514")
	}
	if _, err := OpenLocal(dataDir(t, "bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp"), Config{}); err == nil {
		t.Fatal("OpenLocal accepted a BP4 directory")
	}
}
