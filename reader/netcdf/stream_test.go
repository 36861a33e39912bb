package netcdf

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// stacked is netCDF4-python's var of files (in that order) concatenated
// along the record axis.
func stacked(t *testing.T, v string, files []string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), v+".bin")
	if b, err := execPython(append([]string{"testdata/nc_oracle.py", "stack", out, v}, files...)...); err != nil {
		t.Fatalf("nc_oracle.py stack: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestNetcdfMPASMonthlyStream: the 12 monthly MPAS-Ocean history files, given
// in a shuffled order, are one stream of 12 records ordered by their
// xtime_startMonthly text; each record variable's values equal netCDF-C's
// of the files stacked in the order of the dates in their names.
func TestNetcdfMPASMonthlyStream(t *testing.T) {
	needPython(t)
	dir := testkit.SharedData(t, "netcdf/mpas-o-monthly")
	names, _ := filepath.Glob(filepath.Join(dir, "mpaso.hist.*.nc"))
	if len(names) != 12 {
		t.Fatalf("%d history files", len(names))
	}
	byDate := slices.Clone(names)
	slices.Sort(byDate)
	rel := make([]string, len(names))
	for i, n := range names {
		rel[i] = filepath.Base(n)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(rel), func(i, j int) { rel[i], rel[j] = rel[j], rel[i] })
	d, err := Open(dir, rel, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i, m := range d.Members() {
		if m != filepath.Base(byDate[i]) {
			t.Fatalf("member %d is %s, want %s", i, m, filepath.Base(byDate[i]))
		}
	}
	if d.members[0].coord != "xtime_startMonthly" || d.members[11].texts[0] != "0002-12-01_00:00:00" {
		t.Errorf("ordered by %s = %q", d.members[0].coord, d.members[11].texts)
	}
	arrays := testkit.ScanAll(t, d)
	if len(arrays) != 4 {
		t.Fatalf("%d arrays, want 2 and the 2 text timestamps", len(arrays))
	}
	for _, a := range arrays {
		if a.DType.Kind == catalog.Char {
			if !slices.Equal(a.Shape, []int64{12, 64}) || len(a.Blocks) != 12 {
				t.Errorf("%s: shape %v, %d blocks", a.Var, a.Shape, len(a.Blocks))
			}
		} else if !slices.Equal(a.Shape, []int64{12, 7153}) || len(a.Blocks) != 12 {
			t.Fatalf("%s: shape %v, %d blocks", a.Var, a.Shape, len(a.Blocks))
		}
		for i, b := range a.Blocks {
			if b.File != filepath.Base(byDate[i]) || b.Box.Lower[0] != int64(i) {
				t.Errorf("%s block %d: %s at record %d", a.Var, i, b.File, b.Box.Lower[0])
			}
		}
		if got := assemble(t, d, a); !bytes.Equal(got, stacked(t, a.Var, byDate)) {
			t.Errorf("%s: values differ from netCDF-C's stacked files", a.Var)
		}
	}
	// The text timestamps are arrays of characters, compared above.
	for _, v := range []string{"xtime_startMonthly", "xtime_endMonthly"} {
		if !slices.ContainsFunc(arrays, func(a *catalog.Array) bool {
			return a.Var == v && a.DType.Kind == catalog.Char && len(a.Shape) == 2 && a.Shape[0] == 12
		}) {
			t.Errorf("no char array %s of 12 records", v)
		}
	}
}

// TestNetcdfStream: generated history files (CDF-2 and CDF-5 members) given in
// any order form one stream ordered by their time variable; fixed
// variables come from the first member; overlapping times, another
// dimension length or another type are refused naming both files.
func TestNetcdfStream(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	if b, err := execPython("testdata/nc_oracle.py", "genstream", dir); err != nil {
		t.Fatalf("genstream: %v\n%s", err, b)
	}
	files := []string{"case.h0.0001-03.nc", "case.h0.0001-01.nc", "case.h0.0001-02.nc"}
	d, err := Open(filepath.Join(dir, "good"), files, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !slices.Equal(d.Members(), []string{"case.h0.0001-01.nc", "case.h0.0001-02.nc", "case.h0.0001-03.nc"}) {
		t.Fatalf("members %v", d.Members())
	}
	var sorted []string
	for _, f := range d.Members() {
		sorted = append(sorted, filepath.Join(dir, "good", f))
	}
	for _, a := range testkit.ScanAll(t, d) {
		switch a.Var {
		case "time", "v":
			if a.Shape[0] != 6 || len(a.Blocks) != 6 {
				t.Errorf("%s: shape %v, %d blocks", a.Var, a.Shape, len(a.Blocks))
			}
			if !bytes.Equal(assemble(t, d, a), stacked(t, a.Var, sorted)) {
				t.Errorf("%s differs from netCDF-C's", a.Var)
			}
		case "w":
			if len(a.Blocks) != 1 || a.Blocks[0].File != "case.h0.0001-01.nc" {
				t.Errorf("w: %+v", a.Blocks)
			}
		}
	}
	// Time, not the names, orders the stream: the first and last files'
	// names swapped.
	swapped := filepath.Join(dir, "swapped")
	os.Mkdir(swapped, 0o755)
	for from, to := range map[string]string{"01": "03", "02": "02", "03": "01"} {
		b, _ := os.ReadFile(filepath.Join(dir, "good", "case.h0.0001-"+from+".nc"))
		os.WriteFile(filepath.Join(swapped, "case.h0.0001-"+to+".nc"), b, 0o644)
	}
	sw, err := Open(swapped, files, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sw.Close()
	if !slices.Equal(sw.Members(), []string{"case.h0.0001-03.nc", "case.h0.0001-02.nc", "case.h0.0001-01.nc"}) {
		t.Errorf("swapped names: members %v, want time order", sw.Members())
	}
	for _, a := range testkit.ScanAll(t, sw) {
		if a.Var == "time" && !bytes.Equal(assemble(t, sw, a), stacked(t, "time", sorted)) {
			t.Error("swapped names: time differs from the unswapped stream's")
		}
	}
	for bad, want := range map[string]string{
		"overlap":   "records overlap in time: case.h0.0001-02.nc ends at time = 4, case.h0.0001-03.nc starts at 3.5",
		"duplicate": "records overlap in time: case.h0.0001-02.nc ends at time = 4, case.h0.0001-03.nc starts at 4",
		"dims":      "dimension n is 3 against 4",
		"type":      "variable v is float(time, n) against double(time, n)",
		"fixed":     "fixed-size variable w differs at element 0",
	} {
		_, err := Open(filepath.Join(dir, bad), files, Config{}, nil)
		if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "case.h0.0001-03.nc") {
			t.Errorf("%s: got %v, want %q naming both files", bad, err, want)
		}
	}
}

func TestNetcdfStreamPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"mpaso.hist.am.timeSeriesStatsMonthly.0002-01-01.nc": "mpaso.hist.am.timeSeriesStatsMonthly",
		"case.eam.h0.0001-01.nc":                             "case.eam.h0",
		"mpaso.rst.0001-01-06_00000.nc":                      "mpaso.rst",
		"output.0001-01-01_00.00.00.nc":                      "output",
		"f_case_h0.nc":                                       "f_case_h0",
		"case.cam.h1.2000-01-01-00000.nc":                    "case.cam.h1",
		"timeSeries.nc":                                      "timeSeries",
	} {
		if got := StreamPrefix(in); got != want {
			t.Errorf("StreamPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNetcdfDateSpan: the year and month of a stream's first and last
// files, as ncclimo names time series, from E3SM's, MPAS's and CESM's
// history file names; none when a name has no date.
func TestNetcdfDateSpan(t *testing.T) {
	for _, c := range []struct {
		first, last string
		want        []string
	}{
		{"v3.LR.historical_0101.eam.h0.1850-01.nc", "v3.LR.historical_0101.eam.h0.2014-12.nc", []string{"185001", "201412"}},
		{"mpaso.hist.am.timeSeriesStatsMonthly.0002-01-01.nc", "mpaso.hist.am.timeSeriesStatsMonthly.0002-12-01.nc", []string{"000201", "000212"}},
		{"b.e21.B1850.f09_g17.cam.h1.0001-01-01-00000.nc", "b.e21.B1850.f09_g17.cam.h1.0001-12-27-00000.nc", []string{"000101", "000112"}},
		{"mpaso.rst.0001-01-06_00000.nc", "mpaso.rst.0001-01-06_00000.nc", []string{"000101", "000101"}},
		{"timeSeries.nc", "timeSeries.nc", nil},
		{"case.eam.h0.1850.nc", "case.eam.h0.1851.nc", nil},
	} {
		if got := DateSpan(c.first, c.last); !slices.Equal(got, c.want) {
			t.Errorf("DateSpan(%s, %s) = %q, want %q", c.first, c.last, got, c.want)
		}
	}
}
