package netcdf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"relayout/catalog"
)

// cdf builds classic headers by hand, for inputs no library writes.
type cdf struct {
	b       []byte
	version byte
}

func newCDF(version byte) *cdf { return &cdf{b: []byte{'C', 'D', 'F', version}, version: version} }

func (c *cdf) u32(v uint32) *cdf { c.b = binary.BigEndian.AppendUint32(c.b, v); return c }

// n appends a count/length/dimid/vsize/numrecs: 8 bytes in CDF-5.
func (c *cdf) n(v uint64) *cdf {
	if c.version == 5 {
		c.b = binary.BigEndian.AppendUint64(c.b, v)
		return c
	}
	return c.u32(uint32(v))
}

func (c *cdf) begin(v uint64) *cdf {
	if c.version == 1 {
		return c.u32(uint32(v))
	}
	c.b = binary.BigEndian.AppendUint64(c.b, v)
	return c
}

func (c *cdf) name(s string) *cdf {
	c.n(uint64(len(s)))
	c.b = append(c.b, s...)
	for len(c.b)%4 != 0 {
		c.b = append(c.b, 0)
	}
	return c
}

func (c *cdf) absent() *cdf { return c.u32(0).n(0) }

func (c *cdf) pad(to int) *cdf {
	for len(c.b) < to {
		c.b = append(c.b, 0)
	}
	return c
}

// tiny is a small valid file: dims t (record, 2 records) and x = 3; a
// global text attribute; fixed int a(x) and record shorts r(t, x) and
// double s(t): values a = 1,2,3; r = 10r+i; s = r+0.5.
func tiny(version byte) []byte {
	const begin = 512
	c := newCDF(version).n(2)
	c.u32(0x0A).n(2).name("t").n(0).name("x").n(3)
	c.u32(0x0C).n(1).name("title").u32(uint32(Char)).n(4)
	c.b = append(c.b, "tiny"...)
	c.u32(0x0B).n(3)
	c.name("a").n(1).n(1).absent().u32(uint32(Int)).n(12).begin(begin)
	c.name("r").n(2).n(0).n(1).absent().u32(uint32(Short)).n(8).begin(begin + 12)
	c.name("s").n(1).n(0).u32(0x0C).n(1).name("units").u32(uint32(Char)).n(1)
	c.b = append(c.b, 'd', 0, 0, 0)
	c.u32(uint32(Double)).n(8).begin(begin + 12 + 8)
	c.pad(begin)
	c.b = binary.BigEndian.AppendUint32(c.b, 1)
	c.b = binary.BigEndian.AppendUint32(c.b, 2)
	c.b = binary.BigEndian.AppendUint32(c.b, 3)
	for r := 0; r < 2; r++ {
		for i := 0; i < 3; i++ {
			c.b = binary.BigEndian.AppendUint16(c.b, uint16(10*r+i))
		}
		c.b = append(c.b, 0, 0) // padding to 4
		c.b = binary.BigEndian.AppendUint64(c.b, math.Float64bits(float64(r)+0.5))
	}
	return c.b
}

// beginAt is the header offset of variable i's begin field in b.
func beginAt(b []byte, i int) int64 {
	h, err := ParseHeader(bytes.NewReader(b), int64(len(b)), "good.nc")
	if err != nil {
		panic(err)
	}
	return h.Vars[i].BeginAt
}

func TestNetcdfTiny(t *testing.T) {
	for _, v := range []byte{1, 2, 5} {
		b := tiny(v)
		h, err := ParseHeader(bytes.NewReader(b), int64(len(b)), "tiny.nc")
		if err != nil {
			t.Fatalf("CDF-%d: %v", v, err)
		}
		if h.NumRecs != 2 || h.RecSize != 16 || len(h.Vars) != 3 || h.Vars[1].Begin != 524 || h.Tail != nil {
			t.Fatalf("CDF-%d: %+v", v, h)
		}
	}
}

// TestNetcdfHostile: damaged and malicious headers are refused with a
// CorruptError naming the file and the offset of the bad field, without
// panicking or allocating what the header claims.
func TestNetcdfHostile(t *testing.T) {
	good := tiny(5)
	cases := []struct {
		name string
		b    []byte
		at   string // "offset N" expected in the message
		what string
	}{
		{"truncated header", good[:100], "offset ", "truncated header"},
		{"not CDF", []byte("HDF\x01\x00\x00\x00\x00"), "offset 0", "magic"},
		{"version 3", []byte("CDF\x03\x00\x00\x00\x00"), "offset 3", "version byte 3"},
		{"2^60 dimensions", newCDF(5).n(0).u32(0x0A).n(1 << 60).b, "offset 16", "dimension list count 1152921504606846976"},
		{"2^60 variables", newCDF(5).n(0).absent().absent().u32(0x0B).n(1 << 60).pad(4096).b, "offset 40", "variable list count"},
		{"2^60 attribute values", newCDF(5).n(0).absent().u32(0x0C).n(1).name("a").u32(uint32(Double)).n(1 << 60).pad(4096).b, "offset 52", "value count"},
		{"name of 2^40 bytes", newCDF(2).n(0).u32(0x0A).n(1).n(1 << 30).pad(64).b, "offset 16", "name length"},
		{"dimension id out of range", newCDF(2).n(0).u32(0x0A).n(1).name("x").n(3).absent().
			u32(0x0B).n(1).name("v").n(1).n(7).absent().u32(uint32(Int)).n(12).begin(64).pad(100).b, "offset 56", "dimension id 7 of 1"},
		{"rank 2^40", newCDF(5).n(0).absent().absent().u32(0x0B).n(1).name("v").n(1 << 40).pad(4096).b, "offset 60", "rank"},
		{"overflowing shape", newCDF(5).n(0).u32(0x0A).n(3).name("x").n(1 << 31).name("y").n(1 << 31).name("z").n(1 << 31).absent().
			u32(0x0B).n(1).name("v").n(3).n(0).n(1).n(2).absent().u32(uint32(Double)).n(0).begin(400).pad(512).b, "offset 120", "overflows"},
		{"type 7 in CDF-2", newCDF(2).n(0).absent().u32(0x0C).n(1).name("a").u32(7).n(1).pad(64).b, "offset 32", "CDF-5 only"},
		{"unknown list tag", newCDF(1).n(0).u32(0x0D).n(1).pad(64).b, "offset 8", "tag 0xd"},
		{"record dimension not first", newCDF(1).n(1).u32(0x0A).n(2).name("x").n(2).name("t").n(0).absent().
			u32(0x0B).n(1).name("v").n(2).n(0).n(1).absent().u32(uint32(Int)).n(8).begin(128).pad(200).b, "offset 72", "not the first"},
		{"two record dimensions", newCDF(1).n(0).u32(0x0A).n(2).name("t").n(0).name("u").n(0).pad(64).b, "offset 36", "second record"},
		{"begin inside the header", newCDF(1).n(0).u32(0x0A).n(1).name("x").n(2).absent().
			u32(0x0B).n(1).name("v").n(1).n(0).absent().u32(uint32(Int)).n(8).begin(8).pad(200).b, "offset 76", "inside the header"},
		{"begin past the end of a non-last variable", func() []byte {
			b := append([]byte(nil), good...)
			h, err := ParseHeader(bytes.NewReader(b), int64(len(b)), "good.nc")
			if err != nil {
				panic(err)
			}
			binary.BigEndian.PutUint64(b[h.Vars[0].BeginAt:], 1<<40)
			return b
		}(), fmt.Sprintf("offset %d", beginAt(good, 0)), "variable a: data at 1099511627776"},
		{"numrecs beyond the file", func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint64(b[4:], 5)
			return b
		}(), "offset 4", "numrecs 5 claims records"},
		{"numrecs 2^62", func() []byte {
			b := append([]byte(nil), good...)
			binary.BigEndian.PutUint64(b[4:], 1<<62)
			return b
		}(), "offset 4", "numrecs"},
		{"numrecs one beyond the file, one record variable", func() []byte {
			c := newCDF(2).n(3).u32(0x0A).n(2).name("t").n(0).name("x").n(3).absent()
			c.u32(0x0B).n(1).name("r").n(2).n(0).n(1).absent().u32(uint32(Short)).n(8).begin(128).pad(128)
			return append(c.b, make([]byte, 2*6)...) // records 0 and 1 of 6 bytes (unpadded)
		}(), "offset 4", "variable r: record 2 (numrecs 3 claims records the file does not hold) at 140-146"},
		{"cut inside a non-last variable", good[:512+12+4], "offset 4", "variable r: record 1 (numrecs 2 claims records the file does not hold) at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			h, err := ParseHeader(bytes.NewReader(c.b), int64(len(c.b)), "bad.nc")
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("no error: %+v", h)
			}
			t.Log(err)
			if !errors.Is(err, catalog.ErrCorrupt) {
				t.Errorf("%v does not wrap ErrCorrupt", err)
			}
			for _, m := range []string{"bad.nc", c.at, c.what} {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q does not mention %q", err, m)
				}
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
				t.Errorf("allocated %d bytes for a %d-byte input", grew, len(c.b))
			}
		})
	}
}

// TestNetcdfFIFO: a FIFO given as the input is refused by name, without
// blocking on it.
func TestNetcdfFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hist.nc")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	_, err := OpenFile(p, Config{})
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "hist.nc") || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("got %v", err)
	}
	_ = os.Remove(p)
}
