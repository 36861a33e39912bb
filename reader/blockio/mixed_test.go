package blockio

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
)

// TestReadBlocksMixed: blocks of a float64 and an int16 array alternating
// in one file (as ADIOS2 aggregators store a step's variables) are read
// with one pread, each block checked against its own element type (a
// length that fits one type but not the other is corrupt input).
func TestReadBlocksMixed(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	f8 := catalog.DType{Kind: catalog.Float, Size: 8}
	i2 := catalog.DType{Kind: catalog.Int, Size: 2}
	var data []byte
	var blocks []*catalog.Block
	var dts []catalog.DType
	for i := 0; i < 2*n; i++ {
		dt := f8
		if i%2 == 1 {
			dt = i2
		}
		b := &catalog.Block{Box: catalog.Box{Lower: []int64{0}, Count: []int64{4}}, File: "d", Offset: int64(len(data)), Length: 4 * int64(dt.Size)}
		for k := int64(0); k < b.Length; k++ {
			data = append(data, byte(i*31+int(k)))
		}
		blocks, dts = append(blocks, b), append(dts, dt)
	}
	if err := os.WriteFile(filepath.Join(dir, "d"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	src := NewSource(NewFiles(dir, 2))
	seen := 0
	err := src.ReadBlocks(context.Background(), catalog.Reads{Blocks: blocks, DTypes: dts}, func(i int, got []byte) error {
		seen++
		if b := blocks[i]; !bytes.Equal(got, data[b.Offset:b.Offset+b.Length]) {
			t.Errorf("block %d: wrong bytes", i)
		}
		return nil
	})
	if err != nil || seen != len(blocks) {
		t.Fatalf("ReadBlocks of two types: %v, %d of %d blocks", err, seen, len(blocks))
	}
	if st := src.IOStats(); st.ReadCalls != 1 || st.ReadBytes != int64(len(data)) {
		t.Errorf("%d calls, %d bytes; want one read of %d", st.ReadCalls, st.ReadBytes, len(data))
	}
	dts[1] = f8 // 8 bytes of int16 read as float64: 4 elements want 32
	if err := src.ReadBlocks(context.Background(), catalog.Reads{Blocks: blocks, DTypes: dts}, func(int, []byte) error { return nil }); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("a block of the wrong length for its type: %v, want a corrupt-input error", err)
	}
	if err := src.ReadBlocks(context.Background(), catalog.Reads{Blocks: blocks, DTypes: dts[:3]}, func(int, []byte) error { return nil }); err == nil {
		t.Error("3 element types for 16 blocks: no error")
	}
}
