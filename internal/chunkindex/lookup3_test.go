package chunkindex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

// The test vectors of lookup3.c's driver (hashlittle).
func TestLookup3(t *testing.T) {
	for _, tc := range []struct {
		s    string
		init uint32
		want uint32
	}{
		{"", 0, 0xdeadbeef},
		{"", 0xdeadbeef, 0xbd5b7dde},
		{"Four score and seven years ago", 0, 0x17770551},
		{"Four score and seven years ago", 1, 0xcd628161},
	} {
		if got := lookup3([]byte(tc.s), tc.init); got != tc.want {
			t.Errorf("lookup3(%q, %#x) = %#08x, want %#08x", tc.s, tc.init, got, tc.want)
		}
	}
}

// A flipped byte in a v2 B-tree header or node, or in a version 2 object
// header, fails its checksum.
func TestChecksums(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genSmall, dir)
	p := filepath.Join(dir, "small-latest.h5")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	addr := objAddr(t, p, "/bt2")
	list := func(b []byte) error {
		return List(bytes.NewReader(b), int64(len(b)), addr, func(Chunk) error { return nil })
	}
	if err := list(data); err != nil {
		t.Fatal(err)
	}
	for _, sig := range []string{"BTHD", "BTLF", "OHDR"} {
		at := bytes.Index(data, []byte(sig))
		if at < 0 {
			t.Fatalf("no %s in small-latest.h5", sig)
		}
		found := false
		// Flip a byte in the structure (after its signature, version and
		// type) wherever the walk reads it: the checksum must catch it.
		for off := at + 6; off < at+40 && off < len(data); off++ {
			b := bytes.Clone(data)
			b[off] ^= 0x40
			err := list(b)
			if err != nil && strings.Contains(err.Error(), "checksum") {
				found = true
				if !errors.Is(err, catalog.ErrCorrupt) {
					t.Errorf("%s: %v without ErrCorrupt", sig, err)
				}
				break
			}
		}
		if !found && sig != "OHDR" { // the first OHDR may be another object's
			t.Errorf("%s: no flipped byte failed a checksum", sig)
		}
	}
}
