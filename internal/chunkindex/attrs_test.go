package chunkindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"relayout/catalog"
)

const genAttrs = `
import sys, h5py, numpy as np
for libver in ('earliest', 'latest'):
    with h5py.File(sys.argv[1] + '/attrs-%s.h5' % libver, 'w', libver=libver) as f:
        d = f.create_dataset('d', data=np.arange(4.0))
        d.attrs['unitSI'] = 1.5
        d.attrs['axisLabels'] = np.array([b'x', b'y'])
        d.attrs['gridSpacing'] = np.array([0.5, 0.25])
`

// CheckAttributes accepts the attribute messages h5py writes (object header
// versions 1 and 2) and refuses damaged sizes, names and types with
// ErrCorrupt (HDF5 1.10 crashes on some of them).
func TestCheckAttributes(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genAttrs, dir)
	for _, name := range []string{"attrs-earliest.h5", "attrs-latest.h5"} {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		addr := objAddr(t, p, "/d")
		check := func(b []byte) error {
			_, err := CheckAttributes(bytes.NewReader(b), int64(len(b)), addr)
			return err
		}
		names, err := CheckAttributes(bytes.NewReader(data), int64(len(data)), addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"axisLabels", "gridSpacing", "unitSI"}) {
			t.Errorf("%s: attribute names %q", name, names)
		}
		at := bytes.Index(data, []byte("gridSpacing\x00"))
		if at < 8 {
			t.Fatalf("%s: attribute name not found", name)
		}
		// The 8 bytes before the name: version, flags, name/datatype/
		// dataspace sizes (version 3 has the encoding byte after them).
		hdr := at - 8
		if data[hdr] != 1 {
			hdr = at - 9
		}
		// The dataspace's first dimension (2 elements).
		v1 := data[hdr] == 1
		nameLen, dtLen := int(data[hdr+2])|int(data[hdr+3])<<8, int(data[hdr+4])|int(data[hdr+5])<<8
		ds := at + nameLen + dtLen
		dim := ds + 4
		if v1 {
			ds = at + (nameLen+7)&^7 + (dtLen+7)&^7
			dim = ds + 8
		}
		if d := binary.LittleEndian.Uint64(data[dim:]); d != 2 {
			t.Fatalf("%s: dimension %d at %d, want 2", name, d, dim)
		}
		for what, damage := range map[string]func(b []byte){
			"dimension of 2^40": func(b []byte) { binary.LittleEndian.PutUint64(b[dim:], 1<<40) },
			"data past the end": func(b []byte) { binary.LittleEndian.PutUint64(b[dim:], 3) },
			"datatype size 0":   func(b []byte) { b[hdr+4], b[hdr+5] = 0, 0 },
			"name too long":     func(b []byte) { b[hdr+2], b[hdr+3] = 0xff, 0x7f },
			"name unterminated": func(b []byte) { b[at+len("gridSpacing")] = 'x' },
			"version 7":         func(b []byte) { b[hdr] = 7 },
		} {
			b := bytes.Clone(data)
			damage(b)
			if err := check(b); !errors.Is(err, catalog.ErrCorrupt) {
				t.Errorf("%s: %s: %v, want ErrCorrupt", name, what, err)
			}
		}
	}
}
