package reader

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader/netcdf"
)

// TestNetcdfOpen: a classic file opens as one file; a folder of classic
// files is one stream when their names share one stream prefix, else it
// is refused listing the streams with a hint; a glob selects one stream.
func TestNetcdfOpen(t *testing.T) {
	monthly := testkit.SharedData(t, "netcdf/mpas-o-monthly")

	ds, err := Open(filepath.Join(monthly, "mpaso.rst.0001-01-06_00000.nc"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info := ds.Info(); info.Format != netcdf.FormatName || info.Root != monthly {
		t.Errorf("info %+v", info)
	}
	ds.Close()

	_, err = Open(monthly, Options{})
	for _, m := range []string{"2 streams of netCDF classic files", "mpaso.hist.am.timeSeriesStatsMonthly.* (12 files)",
		"mpaso.rst.* (1 file)", "select one: pass it as a glob"} {
		if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), m) {
			t.Errorf("folder of two streams: %v does not say %q", err, m)
		}
	}

	pattern := filepath.Join(monthly, "mpaso.hist.*")
	ds, err = Open(pattern, Options{Vars: []string{"timeMonthly_avg_ssh"}})
	if err != nil {
		t.Fatal(err)
	}
	arrays := testkit.ScanAll(t, ds)
	if len(arrays) != 1 || arrays[0].Shape[0] != 12 || ds.Info().Path != pattern {
		t.Errorf("glob: %d arrays, info %+v", len(arrays), ds.Info())
	}
	ds.Close()

	_, err = Open(filepath.Join(monthly, "mpaso.*"), Options{})
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "matches 2 streams") {
		t.Errorf("glob of two streams: %v", err)
	}
	_, err = Open(filepath.Join(monthly, "nothing.*.nc"), Options{})
	if !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("glob matching nothing: %v", err)
	}
	_, err = Open(filepath.Join(monthly, "*"), Options{})
	if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "PROVENANCE.txt, which is not a netCDF classic file") {
		t.Errorf("glob matching a text file: %v", err)
	}

	// A folder holding one classic file (and its PROVENANCE.txt) is that file.
	ds, err = Open(testkit.SharedData(t, "netcdf/mpas-mesh-0rec"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(testkit.ScanAll(t, ds)) == 0 {
		t.Error("mesh: no arrays")
	}
	ds.Close()
}

// TestNetcdfFIFO: a FIFO given as the input, or matched by a glob, is
// refused by name without blocking.
func TestNetcdfFIFO(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "case.h0.0001-01.nc")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip(err)
	}
	for _, in := range []string{p, filepath.Join(dir, "case.h0.*")} {
		_, err := Open(in, Options{})
		if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("%s: %v", in, err)
		}
	}
}
