//go:build cgo

package h5

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
)

// A compact dataset whose layout message holds fewer bytes than its extent
// needs is refused before H5Dread (HDF5 1.10 read past the message: a
// crash found by mutating a real file).
func TestReadRawShortCompact(t *testing.T) {
	path := filepath.Join(t.TempDir(), "compact.h5")
	runPython(t, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    d = h5py.h5d.create(f.id, b'c', h5py.h5t.IEEE_F64LE, h5py.h5s.create_simple((10,)), dcpl=dcpl)
    d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.arange(1.5, 11.5))
`, path)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 0, 80)
	for i := range 10 {
		raw = binary.LittleEndian.AppendUint64(raw, math.Float64bits(1.5+float64(i)))
	}
	at := bytes.Index(data, raw)
	if at < 2 || binary.LittleEndian.Uint16(data[at-2:]) != 80 {
		t.Fatalf("compact data and its size not found")
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := f.ReadRaw("/c"); err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("intact: %v", err)
	}
	f.Close()
	binary.LittleEndian.PutUint16(data[at-2:], 0)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadRaw("/c"); !errors.Is(err, catalog.ErrCorrupt) {
		t.Fatalf("short compact data: %v, want ErrCorrupt", err)
	}
}
