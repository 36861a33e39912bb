package netcdf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParseHeader parses E3SM's F-case h0 header (CDF-5, 414
// variables, 98 KiB) when ../shared/data is present, else a tiny file.
// Bytes are the header's.
func BenchmarkParseHeader(b *testing.B) {
	data := tiny(5)
	name := "tiny.nc"
	if p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", "netcdf", "e3sm-io-f-cdf5", "f_case_h0.nc")); err == nil {
		if full, err := os.ReadFile(p); err == nil {
			data, name = full, filepath.Base(p)
		}
	}
	h, err := ParseHeader(bytes.NewReader(data), int64(len(data)), name)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(h.HeaderEnd)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseHeader(bytes.NewReader(data), int64(len(data)), name); err != nil {
			b.Fatal(err)
		}
	}
}
