package catalog

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func TestCorruptError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{Corrupt("bp5", "md.idx", 36, "endianness byte %d", 7), "bp5: md.idx: offset 36: endianness byte 7: corrupt input"},
		{Corrupt("amrex", "Level_0/Cell_H", -1, "line 3: %q is not a box", "x"), `amrex: Level_0/Cell_H: line 3: "x" is not a box: corrupt input`},
		{Corrupt("hdf5", "a.h5", 0, "100%% of it"), "hdf5: a.h5: offset 0: 100% of it: corrupt input"},
		{Corrupt("", "journal", -7, "no record"), "journal: no record: corrupt input"},
		{Corrupt("bp4", "", 64, "index"), "bp4: offset 64: index: corrupt input"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
		wrapped := fmt.Errorf("reader: dir: %w", c.err)
		if !errors.Is(c.err, ErrCorrupt) || !errors.Is(wrapped, ErrCorrupt) {
			t.Errorf("%v: not ErrCorrupt", c.err)
		}
		if errors.Is(c.err, ErrUnsupported) || errors.Is(c.err, io.EOF) {
			t.Errorf("%v: Is another sentinel", c.err)
		}
		var ce *CorruptError
		if !errors.As(wrapped, &ce) || ce != c.err {
			t.Errorf("errors.As(%v) = %v", wrapped, ce)
		}
		if errors.Unwrap(c.err) != ErrCorrupt {
			t.Errorf("Unwrap(%v) = %v", c.err, errors.Unwrap(c.err))
		}
	}
	var ce *CorruptError
	if errors.As(fmt.Errorf("x: %w", ErrCorrupt), &ce) {
		t.Error("errors.As found a CorruptError in a bare ErrCorrupt")
	}
	in := fmt.Errorf("object /x: %w", Corrupt("hdf5", "", 96, "B-tree node: bad signature"))
	if got, want := CorruptIn(in, "a.h5").Error(), "object /x: hdf5: a.h5: offset 96: B-tree node: bad signature: corrupt input"; got != want {
		t.Errorf("CorruptIn: %q, want %q", got, want)
	}
	if got := CorruptIn(Corrupt("hdf5", "b.h5", 1, "x"), "a.h5").Error(); got != "hdf5: b.h5: offset 1: x: corrupt input" {
		t.Errorf("CorruptIn renamed a named file: %q", got)
	}
	if err := CorruptIn(io.EOF, "a.h5"); err != io.EOF {
		t.Errorf("CorruptIn(io.EOF) = %v", err)
	}
	if e := Corrupt("bp4", "md.0", -1, "x").(*CorruptError); e.Offset != -1 {
		t.Errorf("offset %d, want -1", e.Offset)
	}
}

// TestStoreValueCorrupt: a damaged value in a catalog database (a dtype,
// a JSON column, an attribute's float) is one CorruptError naming the
// catalog file, found by errors.As through what the store wraps around it.
func TestStoreValueCorrupt(t *testing.T) {
	for _, c := range []struct{ column, value, what string }{
		{"dtype", "<x", `dtype "<x"`},
		{"shape", "[1,", `bad JSON "[1,"`},
		{"attrs", `[{"name":"a","floats":["NaN:0xzz"]}]`, "bad JSON"},
	} {
		path := filepath.Join(t.TempDir(), "catalog.db")
		s, err := CreateStore(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(sampleArray(0)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.Exec(`UPDATE arrays SET `+c.column+` = ?`, c.value); err != nil {
			t.Fatal(err)
		}
		_, err = s.Array(Key{"B/x", 0, 0})
		s.Close()
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.File != path || !strings.Contains(ce.What, c.what) {
			t.Errorf("%s = %q: %v (%+v); want a CorruptError of %s naming %q", c.column, c.value, err, ce, path, c.what)
		}
	}
	if _, err := ParseFloatToken("1.5x"); !errors.Is(err, ErrCorrupt) {
		t.Errorf("bad float: %v", err)
	}
}

// TestConstantArrayCorrupt: a damaged constant record is a CorruptError
// without a file, which its reader names with CorruptIn.
func TestConstantArrayCorrupt(t *testing.T) {
	_, err := ConstantArray([]Attr{{Name: "value", Type: "float64", Floats: []float64{1}}, {Name: "shape", Type: "int64", Ints: []int64{-1}}})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.File != "" {
		t.Fatalf("negative shape: %v", err)
	}
	named := fmt.Errorf("reader/h5: constant record component /E: %w", CorruptIn(err, "a.h5"))
	if !errors.As(named, &ce) || ce.File != "a.h5" || !strings.Contains(named.Error(), "a.h5: constant record shape [-1]") {
		t.Errorf("named: %v", named)
	}
}
