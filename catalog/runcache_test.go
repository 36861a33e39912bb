package catalog

import (
	"bytes"
	"slices"
	"testing"
)

// TestRunCache: Missing lists exactly the gaps between cached pieces,
// Slice gives a piece's bytes in place or gathers them across pieces, and
// refuses a range with a missing byte.
func TestRunCache(t *testing.T) {
	c := NewRunCache()
	c.Add("f", 10, []byte("abcde")) // [10, 15)
	c.Add("f", 20, []byte("vwxyz")) // [20, 25)
	c.Add("f", 15, []byte("FGHIJ")) // [15, 20)
	c.Add("g", 0, []byte("elsewhere"))
	if got := c.Missing("f", 0, 30); !slices.Equal(got, [][2]int64{{0, 10}, {25, 30}}) {
		t.Errorf("Missing(f, 0, 30) = %v", got)
	}
	if got := c.Missing("f", 12, 22); len(got) != 0 {
		t.Errorf("Missing(f, 12, 22) = %v, want none", got)
	}
	if got := c.Missing("h", 3, 5); !slices.Equal(got, [][2]int64{{3, 5}}) {
		t.Errorf("Missing(h, 3, 5) = %v", got)
	}
	if b, ok := c.Slice("f", 11, 3); !ok || string(b) != "bcd" {
		t.Errorf("Slice(f, 11, 3) = %q, %v", b, ok)
	}
	if b, ok := c.Slice("f", 13, 9); !ok || !bytes.Equal(b, []byte("deFGHIJvw")) {
		t.Errorf("Slice(f, 13, 9) = %q, %v", b, ok)
	}
	if _, ok := c.Slice("f", 22, 5); ok {
		t.Error("Slice(f, 22, 5) past the cached bytes: ok")
	}
	if c.Bytes() != 24 {
		t.Errorf("Bytes = %d, want 24", c.Bytes())
	}
	c.Close()
	if got := c.Missing("f", 10, 12); !slices.Equal(got, [][2]int64{{10, 12}}) || c.Bytes() != 0 {
		t.Errorf("after Close: Missing = %v, Bytes = %d", got, c.Bytes())
	}
}
