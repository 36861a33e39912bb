package netcdf

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseHeader is seeded from the headers of the real files when
// ../shared/data is present, and from tiny generated files otherwise. Run
// with go test -fuzz FuzzParseHeader -fuzztime 30s -fuzzminimizetime 2s
// ./reader/netcdf (the default minutes-long minimization of a 50 KiB header
// shows as "0/sec" for as long).
//
// The input is a header b followed by pad zero bytes (the data region, so
// that the layout checks pass without megabytes of input). Memory cap:
// inputs above maxFuzzInput are ignored, and everything ParseHeader keeps
// must be bounded by the input's bytes (a count is checked against the
// bytes left before any slice is made); the body checks that bound, and
// that every extent it accepts lies inside the file but for the one Tail.
const maxFuzzInput = 1 << 20

// maxSeed bounds a seed's header bytes (f_case_h0's CDF-5 header is 98 KiB).
const maxSeed = 128 << 10

// zeroPadded reads b and then zeros up to size.
type zeroPadded struct {
	b    []byte
	size int64
}

func (z zeroPadded) ReadAt(p []byte, off int64) (int, error) {
	if off >= z.size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(z.b)) {
		n = copy(p, z.b[off:])
	}
	if m := int(min(int64(len(p)), z.size-off)); n < m {
		clear(p[n:m])
		n = m
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func seedReal(f *testing.F) {
	root, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", "netcdf"))
	if err != nil {
		return
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.nc*"))
	for _, p := range files {
		fh, err := os.Open(p)
		if err != nil {
			continue
		}
		var r io.Reader = fh
		if strings.HasSuffix(p, ".gz") {
			z, err := gzip.NewReader(fh)
			if err != nil {
				fh.Close()
				continue
			}
			r = z
		}
		b, _ := io.ReadAll(io.LimitReader(r, maxSeed))
		fh.Close()
		h, err := ParseHeader(zeroPadded{b, 1 << 40}, 1<<40, p)
		if err != nil || h.HeaderEnd > int64(len(b)) {
			continue
		}
		// The header, and the data region as zeros up to the end the
		// header implies (the real size is unknown after a cut).
		end := int64(0)
		for i := range h.Vars {
			v := &h.Vars[i]
			e := v.Begin + v.Slab
			if v.Record {
				e += max(h.NumRecs-1, 0) * h.RecSize
			}
			end = max(end, e)
		}
		if end-h.HeaderEnd < 1<<32 {
			f.Add(b[:h.HeaderEnd], uint32(end-h.HeaderEnd))
		}
	}
}

func FuzzParseHeader(f *testing.F) {
	seedReal(f)
	for _, v := range []byte{1, 2, 5} {
		b := tiny(v)
		f.Add(b, uint32(0))
		f.Add(b[:200], uint32(len(b)-200))
	}
	f.Fuzz(func(t *testing.T, b []byte, pad uint32) {
		if len(b) > maxFuzzInput {
			return
		}
		size := int64(len(b)) + int64(pad)
		h, err := ParseHeader(zeroPadded{b, size}, size, "fuzz.nc")
		if err != nil {
			return
		}
		n := len(h.Dims) + len(h.Attrs) + len(h.Vars)
		for i := range h.Vars {
			n += len(h.Vars[i].Attrs) + len(h.Vars[i].DimIDs)
		}
		if n > len(b) {
			t.Fatalf("%d header items from %d bytes", n, len(b))
		}
		for i := range h.Vars {
			v := &h.Vars[i]
			if v.Slab <= 0 || v.Slab%v.Type.Size() != 0 || v.Begin < h.HeaderEnd {
				t.Fatalf("variable %s: slab %d begin %d", v.Name, v.Slab, v.Begin)
			}
			recs := int64(1)
			if v.Record {
				recs = h.NumRecs
			}
			for _, r := range []int64{0, recs - 2, recs - 1} { // not every record: numrecs may be ~size
				if r < 0 {
					continue
				}
				start := v.Begin + r*h.RecSize
				cut := h.Tail != nil && h.Tail.Var == i && (h.Tail.Record == r || !v.Record)
				if start+v.Slab > size && !cut {
					t.Fatalf("variable %s record %d at %d-%d past the end (%d)", v.Name, r, start, start+v.Slab, size)
				}
				if cut && (start != h.Tail.Start || h.Tail.InFile != size-start || h.Tail.InFile >= v.Slab) {
					t.Fatalf("tail %+v of %s at %d", *h.Tail, v.Name, start)
				}
			}
		}
		// The dataset built on it reads back without panicking.
		m := &member{name: "fuzz.nc", size: size, hdr: h, vars: map[string]int{}}
		for i := range h.Vars {
			m.vars[h.Vars[i].Name] = i
			v := &h.Vars[i]
			rec := int64(-1)
			if v.Record {
				rec = h.NumRecs - 1
			}
			if v.Type != Char && (!v.Record || h.NumRecs > 0) {
				blocks := slabBlocks(m, v, rec, v.Begin+max(rec, 0)*h.RecSize, nil)
				for _, bl := range blocks {
					if bl.Offset+bl.Length > size && bl.Inline() == nil {
						t.Fatalf("block %+v past the end (%d)", bl, size)
					}
				}
			}
			for j := range h.Vars[i].Attrs {
				h.Vars[i].Attrs[j].CatalogAttr()
			}
		}
	})
}
