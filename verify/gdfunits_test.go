package verify

import "testing"

// TestParseYTUnits: the unit strings of GDF views read back as a scale and
// the powers of openPMD's SI base units (L, M, T, I, theta, N, J); others
// are refused.
func TestParseYTUnits(t *testing.T) {
	for _, c := range []struct {
		s     string
		scale float64
		dim   [7]float64
		ok    bool
	}{
		{"dimensionless", 1, [7]float64{}, true},
		{"2.5", 2.5, [7]float64{}, true},
		{"kg*m/(A*s**3)", 1, [7]float64{1, 1, -3, -1}, true},
		{"0.001*A*s/m**3", 0.001, [7]float64{-3, 0, 1, 1}, true},
		{"1/s", 1, [7]float64{0, 0, -1}, true},
		{"m**0.5*K*mol*cd", 1, [7]float64{0.5, 0, 0, 0, 1, 1, 1}, true},
		{"V/m", 0, [7]float64{}, false},
		{"kg*m**x", 0, [7]float64{}, false},
		{"1/2.5", 0, [7]float64{}, false},
	} {
		scale, dim, ok := parseYTUnits(c.s)
		if ok != c.ok || (ok && (scale != c.scale || dim != c.dim)) {
			t.Errorf("parseYTUnits(%q) = %v, %v, %v; want %v, %v, %v", c.s, scale, dim, ok, c.scale, c.dim, c.ok)
		}
	}
}
