package reader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader/netcdf"
)

// TestCorruptErrors: damaged copies of real inputs, one per reader, end in
// a *catalog.CorruptError (unwrapping to ErrCorrupt) that names the
// format, the damaged file and the offset, behind the detector's "this is a
// <format> but its <file> is broken". The formats that recognise a dataset
// by content (a BP5 md.idx header, an AMReX Header) are damaged there, so
// the dataset is recognised by its shape.
func TestCorruptErrors(t *testing.T) {
	type damage func(t *testing.T, root string)
	truncate := func(rel string, size int64) damage {
		return func(t *testing.T, root string) {
			if err := os.Truncate(filepath.Join(root, rel), size); err != nil {
				t.Fatal(err)
			}
		}
	}
	patch := func(rel string, off int64, b byte) damage {
		return func(t *testing.T, root string) {
			f, err := os.OpenFile(filepath.Join(root, rel), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteAt([]byte{b}, off); err != nil {
				t.Fatal(err)
			}
		}
	}
	levels := func(rel string) damage { // one level more than the file holds (h5py)
		return func(t *testing.T, root string) {
			runPython(t, "import sys, h5py, numpy as np; f = h5py.File(sys.argv[1], 'r+'); f.attrs['num_levels'] = np.int32(f.attrs['num_levels'] + 1)", filepath.Join(root, rel))
		}
	}
	netcdfDimID := func(rel string, id byte) damage { // the first variable's first dimension id (CDF-2)
		return func(t *testing.T, root string) {
			f, err := os.Open(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			st, _ := f.Stat()
			h, err := netcdf.ParseHeader(f, st.Size(), rel)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			v := h.Vars[0]
			patch(rel, v.Offset+4+int64(len(v.Name)+3)/4*4+4+3, id)(t, root)
		}
	}
	for _, c := range []struct {
		name, data, open string // open: path opened, relative to the copy
		damage           damage
		format, file     string
		offset           int64 // -1: unknown
		says             string
	}{
		{"bp4 md.0 truncated", "bp4/heat-2.7.1", "heat.bp", truncate("heat.bp/md.0", 1000),
			"bp4", "md.idx", 128, "this is a BP4 dataset but its md.idx is broken"},
		{"bp4 md.idx header", "bp4/multiblock-2.5.0", "BP4Multiblock2D4x2.bp", patch("BP4Multiblock2D4x2.bp/md.idx", 37, 0),
			"bp4", "md.idx", 37, "this is a BP4 dataset but its md.idx is broken"},
		{"bp4 data.2 truncated", "bp4/multiblock-2.5.0", "BP4Multiblock2D4x2.bp", truncate("BP4Multiblock2D4x2.bp/data.2", 1000),
			"bp4", "md.0", -2, "past the end of data.2"},
		{"bp5 md.idx endianness", "bp5/quokka-2d", "plt00758.bp", patch("plt00758.bp/md.idx", 36, 7),
			"bp5", "md.idx", 36, "this is a BP5 dataset but its md.idx is broken"},
		{"bp5 md.idx truncated", "bp5/quokka-2d", "plt00758.bp", truncate("plt00758.bp/md.idx", 30),
			"bp5", "md.idx", 0, "this is a BP5 dataset but its md.idx is broken"},
		{"bp5 md.0 truncated", "bp5/quokka-2d", "plt00758.bp", truncate("plt00758.bp/md.0", 30000),
			"bp5", "md.idx", -2, "this is a BP5 dataset but its md.idx is broken"},
		{"bp3 footer", "bp3/heat-adios2", "heat.bp", truncate("heat.bp", 3000),
			"bp3", "heat.bp", 2972, "this is a BP3 file but it is broken"},
		{"amrex Cell_D truncated", "amrex/pelelmex-2d", ".", truncate("Level_0/Cell_D_00087", 100000),
			"amrex", "Level_0/Cell_D_00087", -2, "this is an AMReX plotfile but its Level_0/Cell_D_00087 is broken"},
		{"amrex Header", "amrex/pelelmex-2d", ".", truncate("Header", 40),
			"amrex", "Header", -1, "this is an AMReX plotfile but its Header is broken"},
		{"hdf5 truncated", "hdf5/openpmd-femm", "example-femm-thetaMode.h5", truncate("example-femm-thetaMode.h5", 60000),
			"hdf5", "example-femm-thetaMode.h5", 60000, "this is an HDF5 file but it is broken"},
		{"chombo levels", "chombo/mushy-layer", "plt000100.2d.hdf5", levels("plt000100.2d.hdf5"),
			"chombo", "plt000100.2d.hdf5", -1, "this is a Chombo HDF5 file but it is broken"},
		{"hdf5 signature", "hdf5/openpmd-femm", "example-femm-thetaMode.h5", patch("example-femm-thetaMode.h5", 1, 'X'),
			"hdf5", "example-femm-thetaMode.h5", 0, "this is a file named like HDF5 but it is broken"},
		{"netcdf header truncated", "netcdf/mpas-o-timeseries", "timeSeries.nc", truncate("timeSeries.nc", 1000),
			"netcdf", "timeSeries.nc", -2, "this is a netCDF classic file but it is broken: netcdf: timeSeries.nc: offset"},
		{"netcdf records cut", "netcdf/mpas-o-timeseries", "timeSeries.nc", truncate("timeSeries.nc", 300000),
			"netcdf", "timeSeries.nc", 4, "variable timeMonthly_avg_ssh: record 2 (numrecs 3 claims records the file does not hold) at 282580-339804"},
		{"netcdf dimension id", "netcdf/mpas-o-monthly", "mpaso.rst.0001-01-06_00000.nc", netcdfDimID("mpaso.rst.0001-01-06_00000.nc", 9),
			"netcdf", "mpaso.rst.0001-01-06_00000.nc", -2, "dimension id 9 of 3"},
		{"netcdf stream member truncated", "netcdf/mpas-o-monthly", "mpaso.hist.*", truncate("mpaso.hist.am.timeSeriesStatsMonthly.0002-05-01.nc", 2000),
			"netcdf", "mpaso.hist.am.timeSeriesStatsMonthly.0002-05-01.nc", -2,
			"this is a stream of netCDF classic files but its mpaso.hist.am.timeSeriesStatsMonthly.0002-05-01.nc is broken"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "in")
			testkit.CopyTree(t, testkit.SharedData(t, c.data), root)
			c.damage(t, root)
			err := openScan(filepath.Join(root, c.open))
			ce := (*catalog.CorruptError)(nil)
			if !errors.As(err, &ce) || !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("error %v is not a CorruptError", err)
			}
			if ce.Format != c.format || filepath.ToSlash(ce.File) != c.file && !strings.HasSuffix(ce.File, "/"+c.file) {
				t.Errorf("format %q file %q, want %q %q: %v", ce.Format, ce.File, c.format, c.file, err)
			}
			// -2: an offset whose value depends on the writer's layout.
			if c.offset == -2 && ce.Offset < 0 || c.offset != -2 && ce.Offset != c.offset {
				t.Errorf("offset %d, want %d: %v", ce.Offset, c.offset, err)
			}
			if !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), ce.File) {
				t.Errorf("message does not say %q and name %s: %v", c.says, ce.File, err)
			}
		})
	}
}

// openScan opens path, scans it and reads every block.
func openScan(path string) error {
	ds, err := Open(path, Options{})
	if err != nil {
		return err
	}
	defer ds.Close()
	ctx := context.Background()
	return ds.Scan(ctx, func(a *catalog.Array) error {
		for i := range a.Blocks {
			if _, err := catalog.ReadBlock(ctx, ds, &a.Blocks[i], a.DType); err != nil {
				return err
			}
		}
		return nil
	})
}
