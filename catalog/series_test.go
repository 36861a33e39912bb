package catalog

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestSplitIteration(t *testing.T) {
	for _, c := range []struct {
		name, pre, suf string
		it             int64
		ok             bool
	}{
		{"openpmd_000100.bp", "openpmd_", ".bp", 100, true},
		{"data00000200.h5", "data", ".h5", 200, true},
		{"Attribute.2.5.bp4.bp", "Attribute.2.5.bp", ".bp", 4, true},
		{"plt00010", "plt", "", 10, true},
		{"heat.bp", "", "", 0, false},
	} {
		pre, it, suf, ok := SplitIteration(c.name)
		if ok != c.ok || ok && (pre != c.pre || it != c.it || suf != c.suf) {
			t.Errorf("%s: %q %d %q %v, want %q %d %q %v", c.name, pre, it, suf, ok, c.pre, c.it, c.suf, c.ok)
		}
	}
	for _, c := range []struct {
		names []string
		want  []int64
	}{
		{[]string{"s_000200.bp", "s_000010.bp"}, []int64{200, 10}},
		{[]string{"s_000200.bp"}, nil},                                // one is not a series
		{[]string{"Attribute.2.5.bp4.bp", "Common.2.10.bp4.bp"}, nil}, // prefixes differ
		{[]string{"s_10.bp", "s_010.bp"}, nil},                        // one iteration twice
		{[]string{"a_1.h5", "a_2.hdf5"}, nil},                         // suffixes differ
	} {
		got := SeriesIterations(c.names)
		if len(got) != len(c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%v: %v, want %v", c.names, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: %v, want %v", c.names, got, c.want)
			}
		}
	}
}

// FuzzSplitIteration: any name cuts into PREFIX, digits, SUFFIX that join
// back to the name, the digits being the last run before the extension.
func FuzzSplitIteration(f *testing.F) {
	for _, s := range []string{"openpmd_000100.bp", "data00000200.h5", "Attribute.2.5.bp4.bp", "plt00010", "heat.bp", "99999999999999999999.bp", ".5", "a1.b2.c3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if len(name) > 4096 {
			return
		}
		pre, it, suf, ok := SplitIteration(name)
		if !ok {
			return
		}
		digits := strings.TrimSuffix(strings.TrimPrefix(name, pre), suf)
		if pre+digits+suf != name || digits == "" || strings.Trim(digits, "0123456789") != "" {
			t.Fatalf("%q: %q %q %q", name, pre, digits, suf)
		}
		if n, err := strconv.ParseInt(digits, 10, 64); err != nil || n != it {
			t.Fatalf("%q: iteration %d from %q", name, it, digits)
		}
		if strings.ContainsAny(strings.TrimSuffix(suf, filepath.Ext(name)), "0123456789") {
			t.Fatalf("%q: digits left in suffix %q", name, suf)
		}
	})
}
