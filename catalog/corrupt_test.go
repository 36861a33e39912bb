package catalog

import (
	"errors"
	"fmt"
	"io"
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
