package verify

import (
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/reader"
)

// Real inputs rewritten by the built binary in two layouts each verify OK,
// with progress reaching the total.
func TestRealData(t *testing.T) {
	cases := []struct {
		name, data string
		layouts    [][]string
		paths      string // the paths of verify each must take (stats counters > 0)
	}{
		{"bp4-lb", "bp4/generated-lb", [][]string{{"--layout", "contiguous"}, {"--layout", "merged"}, {"--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:1"}}, "holes ordered"},
		{"bp5-lb", "bp5/generated-lb", [][]string{{"--layout", "chunked", "--chunk-shape", "5,7,32"}}, "trimmed holes ordered"},
		{"amrex-2d", "amrex/pelelmex-2d", [][]string{{"--layout", "contiguous"}, {"--layout", "merged"}}, "col-major holes box-tables grid-offsets"},
		{"openpmd-femm", "hdf5/openpmd-femm/example-femm-3d.h5", [][]string{{"--layout", "contiguous"}, {"--layout", "chunked", "--chunks", "2x2x2"}}, "trimmed partial constants"},
		{"openpmd-thetamode", "hdf5/openpmd-femm/example-femm-thetaMode.h5", [][]string{{"--layout", "auto", "--compress", "deflate:1"}}, "partial constants"},
		{"fbpic", "hdf5/fbpic", [][]string{{"--layout", "contiguous"}, {"--layout", "merged"}}, "trimmed constants"},
		{"picongpu", "bp4/picongpu-lwfa", [][]string{{"--layout", "contiguous"}, {"--layout", "chunked", "--chunks", "2x2x2"}}, "trimmed constants"},
		{"chombo", "chombo/mushy-layer/chk000100.3d.hdf5", [][]string{{"--layout", "contiguous"}}, "cached col-major box-tables"},
		{"chombo-2d", "chombo/mushy-layer/plt000100.2d.hdf5", [][]string{{"--layout", "merged"}}, "col-major holes box-tables grid-offsets"},
		{"bp4-blosc", "bp4/compressed-2.7.1/compressed_blosc_271.bp", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp4-bzip2", "bp4/compressed-2.7.1/compressed_bzip2_271.bp", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp4-heat", "bp4/heat-2.7.1", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp4-multiblock", "bp4/multiblock-2.5.0", [][]string{{"--layout", "merged"}}, ""},
		{"bp3-multiblock", "bp3/multiblock-2.5.0", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp3-heat", "bp3/heat-adios2", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp5-quokka", "bp5/quokka-2d", [][]string{{"--layout", "contiguous"}}, ""},
		{"amrex-3d", "amrex/pelelmex-3d", [][]string{{"--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:1"}}, "col-major box-tables grid-offsets"},
		{"hdf5-types", "hdf5/adios2-hdf5-engine-types_np.h5", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp5-i386", "bp5/archive/Common.i386.bp5.bp", [][]string{{"--layout", "contiguous"}}, ""},
		{"bp5-archive", "bp5/archive/Common.s390x.bp5.bp", [][]string{{"--layout", "contiguous"}}, "big-endian"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := shared(t, c.data)
			ds, store := input(t, in)
			for _, flags := range c.layouts {
				out := rewrite(t, in, flags...)
				for _, exact := range []bool{false, true} {
					realCheck(t, ds, store, out, flags, exact, c.paths)
				}
			}
		})
	}
}

// realCheck verifies out (written with flags) against the input: by the
// checksum path (at any block size), which must have taken every array
// with elements, or
// exactly, through paths (stats counters > 0).
func realCheck(t *testing.T, ds reader.Dataset, store *catalog.Store, out string, flags []string, exact bool, paths string) {
	t.Helper()
	// A budget small enough for the exact path's cuts (blocks read by
	// rows, kept across bands); the checksum path at the default, where
	// the arrays of every input take it.
	budget := int64(1 << 20)
	if !exact {
		budget = 0
		defer func(old int64) { quickBlock = old }(quickBlock)
		quickBlock = 1 << 40 // whatever the blocks' size
	}
	var st *stats
	statsHook = func(s *stats) { st = s }
	defer func() { statsHook = nil }()
	var done, total int64
	calls := 0
	ok, log := check(t, ds, store, out, Options{MaxMem: budget, Jobs: 2, Exact: exact, Progress: func(p Progress) {
		d, tot := p.Done, p.Total
		if p.Variable == "" {
			t.Error("progress without a variable")
		}
		if d < done {
			t.Errorf("progress went back: %d after %d", d, done)
		}
		done, total = d, tot
		calls++
	}})
	if !ok {
		t.Fatalf("%v: verify failed:\n%s", flags, log)
	}
	if strings.Contains(log, "DIFF") || !strings.Contains(log, "OK ") {
		t.Fatalf("%v: log:\n%s", flags, log)
	}
	if done != total || total == 0 || calls < 1 || exact && calls < 2 { // at 1 MiB, bands of a few rows
		t.Errorf("%v: progress %d of %d in %d calls", flags, done, total, calls)
	}
	if !exact {
		paths = "checksummed"
		if n := st.counter("rechecked"); n > 0 {
			t.Errorf("%v: %d arrays compared again exactly: %s", flags, n, st)
		}
	} else if n := st.counter("checksummed"); n > 0 {
		t.Errorf("%v: Exact, yet %d arrays checksummed: %s", flags, n, st)
	}
	for _, p := range strings.Fields(paths) {
		if st.counter(p) == 0 {
			t.Errorf("%v exact %v: verify took no %s path: %s", flags, exact, p, st)
		}
	}
	t.Logf("%v exact %v: %d bytes verified in %d progress calls; %s", flags, exact, total, calls, st)
}
