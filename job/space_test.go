package job

import (
	"testing"

	"relayout/catalog"
)

// TestContiguousBytes: constant records, the uncovered part of refined
// levels and, unless --fill, of partly covered arrays take no space.
func TestContiguousBytes(t *testing.T) {
	vars := []catalog.VarSummary{
		{Name: "a", Bytes: 1000, ConstantBytes: 100, HoleBytes: 200, UncoveredBytes: 300},
		{Name: "b", Bytes: 1 << 43, UncoveredBytes: 1<<43 - 8192}, // 2^40 float64, one chunk written
	}
	if got, want := contiguousBytes(vars, false), int64(400+8192); got != want {
		t.Errorf("sparse: %d bytes, want %d", got, want)
	}
	if got, want := contiguousBytes(vars, true), int64(700+1<<43); got != want {
		t.Errorf("--fill: %d bytes, want %d", got, want)
	}
}
