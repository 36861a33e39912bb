package e2e

import (
	"context"
	enc "encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader/bp"
)

// scorpioName is the history file every SCORPIO sample holds (NAME.nc, the
// link, beside NAME.nc.bp).
const scorpioName = "f.eam.h1.0001-01-01-00000.nc"

// scorpioReference is the same history file written through PnetCDF: the
// reference for every value (the samples' PROVENANCE).
func scorpioReference(t *testing.T) string {
	return filepath.Join(sharedData(t, "scorpio/pnetcdf-cdf2"), scorpioName)
}

// ncksReads runs NCO's ncks on every output file: it must print the
// variable's values (NCO opens the output as it is).
func ncksReads(t *testing.T, out string) {
	t.Helper()
	ncks := testkit.NeedTool(t, "ncks", "apt-get install nco")
	m := readManifest(t, out)
	if len(m.Variables) == 0 {
		t.Fatalf("no variable in %s", out)
	}
	for _, v := range m.Variables {
		f := filepath.Join(out, v.File)
		b, err := exec.Command(ncks, "-H", "-C", "-v", v.Name, f).CombinedOutput()
		if err != nil || !strings.Contains(string(b), v.Name) {
			t.Errorf("ncks -H -v %s %s: %v\n%s", v.Name, f, err, b)
		}
	}
}

// TestSCORPIOSamples: the three SCORPIO ADIOS samples — 16 I/O tasks with
// the box rearranger, the CONTIG rearranger (a 0-based map with -1 pads
// that adios2pio-nm 2.0.1 misplaces by one element), and Blosc2-compressed
// (ADIOSC) — given as NAME.nc (SCORPIO's link to NAME.nc.bp/md.0) or as
// the NAME.nc.bp directory, run and verify; every variable, its
// dimensions, attributes and values, read through netCDF4-python, xarray,
// ncdump and h5py, equals the same file written through PnetCDF, TS's
// holes holding its _FillValue; NCO reads every file.
func TestSCORPIOSamples(t *testing.T) {
	needNetCDF4(t)
	ref := scorpioReference(t)
	for _, c := range []struct{ set, name string }{
		{"adios-io16", scorpioName},
		{"adios-contig", scorpioName + ".bp"},
		{"adiosc-io16", scorpioName + ".bp"},
	} {
		t.Run(c.set, func(t *testing.T) {
			in := filepath.Join(sharedData(t, "scorpio/"+c.set), c.name)
			out := filepath.Join(t.TempDir(), "ts")
			report := filepath.Join(t.TempDir(), "report.json")
			r := mustRun(t, "run", in, "-o", out, "--report", report)
			if !strings.Contains(r.stderr+r.stdout, "netcdf-scorpio") {
				t.Errorf("run does not say the input is SCORPIO's:\n%s%s", r.stdout, r.stderr)
			}
			mustRun(t, "verify", in, out)
			netcdfCheck(t, out, ref)
			ncksReads(t, out)
			m := readManifest(t, out)
			if len(m.Variables) != 8 {
				t.Errorf("%d variables written, want 8 (area, PS, TS, T, U, lev, time, date_written)", len(m.Variables))
			}
			// Every frame block is read once, whole, by one unit: the
			// report's read bytes are the catalog's stored bytes.
			var rep struct {
				Variables []struct {
					Name    string
					BytesIn int64 `json:"bytes_in"`
					IO      struct {
						ReadBytes int64 `json:"read_bytes"`
					}
				}
			}
			b, err := os.ReadFile(report)
			if err == nil {
				err = json.Unmarshal(b, &rep)
			}
			if err != nil || len(rep.Variables) != 8 {
				t.Fatalf("report: %v, %d variables", err, len(rep.Variables))
			}
			for _, v := range rep.Variables {
				if v.IO.ReadBytes != v.BytesIn || v.BytesIn == 0 {
					t.Errorf("report: %s read %d bytes, stored %d", v.Name, v.IO.ReadBytes, v.BytesIn)
				}
			}
		})
	}
	// --var selects variables by name and glob; one that selects none is
	// refused listing the variables.
	in := filepath.Join(sharedData(t, "scorpio/adios-io16"), scorpioName+".bp")
	out := filepath.Join(t.TempDir(), "sel")
	mustRun(t, "run", in, "-o", out, "-q", "--var", "T", "--var", "P*")
	var names []string
	for _, v := range readManifest(t, out).Variables {
		names = append(names, v.Name)
	}
	if strings.Join(names, " ") != "PS T" {
		t.Errorf("--var T --var 'P*' wrote %v", names)
	}
	if r := relayout(t, "run", in, "-o", filepath.Join(t.TempDir(), "none"), "-q", "--var", "nope"); r.code != 2 || !strings.Contains(r.stderr, "PS, T, TS, U") {
		t.Errorf("--var nope: exit %d\n%s", r.code, r.stderr)
	}
}

// TestPlanPredictsRecordChunks: relayout plan predicts, for every array of
// a netCDF input over its record (unlimited) dimension, the layout run
// writes: chunked, with the chunk of the manifest (a SCORPIO sample and a
// stream of classic files; plan without -o plans as the catalog is built).
func TestPlanPredictsRecordChunks(t *testing.T) {
	for _, in := range []string{
		filepath.Join(sharedData(t, "scorpio/adios-io16"), scorpioName+".bp"),
		filepath.Join(sharedData(t, "netcdf/mpas-o-monthly"), "mpaso.hist.am.timeSeriesStatsMonthly.*.nc"),
	} {
		r := mustRun(t, "plan", "--json", in)
		var doc struct {
			Variables []struct {
				Name    string
				Layouts []struct {
					Layout struct {
						Kind  string
						Chunk []int64
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("plan --json %s: %v", in, err)
		}
		out := filepath.Join(t.TempDir(), "ts")
		mustRun(t, "run", in, "-o", out, "-q", "--no-verify")
		written := map[string]manifestDataset{}
		for _, v := range readManifest(t, out).Variables {
			for _, d := range v.Datasets {
				if d.Var == "" { // the variable's own dataset, not a copy
					written[v.Name] = d
				}
			}
		}
		chunked := 0
		for _, v := range doc.Variables {
			w, ok := written[v.Name]
			if !ok || len(v.Layouts) != 1 {
				continue // text variables plan does not cost
			}
			l := v.Layouts[0].Layout
			if l.Kind != w.Layout || !slices.Equal(l.Chunk, w.Chunk) {
				t.Errorf("%s: %s: plan predicts %s %v, run wrote %s %v", in, v.Name, l.Kind, l.Chunk, w.Layout, w.Chunk)
			}
			if l.Kind == "chunked" {
				chunked++
			}
		}
		if chunked == 0 {
			t.Errorf("%s: no record variable planned chunked", in)
		}
	}
}

// scorpioGen runs the bundled SCORPIO writer (scorpio_gen) on ranks MPI
// ranks in dir with args, writing name there (run in dir: SCORPIO makes
// the link from the bare name).
func scorpioGen(t *testing.T, dir string, ranks int, name string, args ...string) {
	t.Helper()
	_, env := testkit.PeersEnv(t)
	mpirun := testkit.NeedTool(t, "mpirun", "apt-get install openmpi-bin (../shared/peers/debian-packages.txt)")
	cmd := exec.Command(mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(ranks), "scorpio_gen", "-o", name}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scorpio_gen %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}

// TestSCORPIOWritten: history files written at test time by SCORPIO
// itself (scorpio_gen over the real E3SM maps) where the samples do not
// reach: I/O groups of several ranks whose leader merges their blocks
// (8 ranks, 2 and 4 I/O tasks), the subset rearranger, CONTIG with
// Blosc2, and 6 frames; each converts, verifies and equals, through
// netCDF4-python, xarray and ncdump, the same file written through
// PnetCDF by the same writer.
func TestSCORPIOWritten(t *testing.T) {
	needNetCDF4(t)
	dir := t.TempDir()
	scorpioGen(t, dir, 8, "ref.nc", "-t", "pnetcdf", "-n", "6", "-i", "2")
	ref := filepath.Join(dir, "ref.nc")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"box-io2", []string{"-t", "adios", "-i", "2"}},
		{"subset-io4", []string{"-t", "adios", "-i", "4", "-r", "subset"}},
		{"contig-blosc2", []string{"-t", "adiosc", "-r", "contig"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := c.name + ".nc"
			scorpioGen(t, dir, 8, name, append(c.args, "-n", "6")...)
			out := filepath.Join(t.TempDir(), "ts")
			mustRun(t, "run", filepath.Join(dir, name), "-o", out, "-q")
			netcdfCheck(t, out, ref)
		})
	}
}

// TestSCORPIOStream: three SCORPIO history files of one stream (copies of
// the io16 sample whose time values were moved on by 3 and 6 days, named
// by their dates), given as a glob of their NAME.nc.bp directories, as a
// glob of their NAME.nc links, and as their folder, are one time series:
// every record variable holds 9 records in date order, each equal to the
// PnetCDF reference of its file (time moved the same way), fixed ones are
// the first file's, and the files are named VAR_000101_000101.nc as
// ncclimo names them. OUT inside an input's NAME.nc.bp is refused; a file
// of another stream beside them is refused in the folder (exit 2, naming
// both streams); files whose times overlap are refused by name.
func TestSCORPIOStream(t *testing.T) {
	needNetCDF4(t)
	src := sharedData(t, "scorpio/adios-io16")
	dir, refDir := t.TempDir(), t.TempDir()
	var refs []string
	for k, day := range []string{"01", "04", "07"} {
		name := "case.eam.h1.0001-01-" + day + "-00000.nc"
		bpDir := filepath.Join(dir, name+".bp")
		testkit.CopyTree(t, filepath.Join(src, scorpioName+".bp"), bpDir)
		if err := os.Symlink(name+".bp/md.0", filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
		// The time blobs: int64 start, int64 count, float64 value.
		d, err := bp.OpenLocal(bpDir, bp.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var blobs []catalog.Block
		d.Scan(context.Background(), func(a *catalog.Array) error {
			if a.Var == "/__pio__/var/time" {
				blobs = append(blobs, a.Blocks...)
			}
			return nil
		})
		d.Close()
		if len(blobs) != 3 {
			t.Fatalf("%d time blobs", len(blobs))
		}
		for f, b := range blobs {
			patchFile(t, filepath.Join(bpDir, b.File), b.Offset+16, enc.LittleEndian.AppendUint64(nil, math.Float64bits(float64(3*k+f)+0.5)))
		}
		ref := filepath.Join(refDir, fmt.Sprintf("ref%d.nc", k))
		script := fmt.Sprintf("import netCDF4, shutil\nshutil.copy(%q, %q)\nwith netCDF4.Dataset(%q, 'r+') as d:\n    d['time'][:] = d['time'][:] + %d\n", scorpioReference(t), ref, ref, 3*k)
		if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
			t.Fatalf("moving the reference's time: %v\n%s", err, b)
		}
		refs = append(refs, ref)
	}
	for _, in := range []string{filepath.Join(dir, "case.eam.h1.*.nc.bp"), filepath.Join(dir, "case.eam.h1.*.nc"), dir} {
		out := filepath.Join(t.TempDir(), "ts")
		mustRun(t, "run", in, "-o", out, "-q")
		netcdfCheck(t, out, refs...)
		m := readManifest(t, out)
		for _, v := range m.Variables {
			if want := v.Name + "_000101_000101.nc"; v.File != want {
				t.Errorf("%s written to %s, want %s", v.Name, v.File, want)
			}
			if v.Name == "T" && (len(v.Datasets) == 0 || v.Datasets[0].Shape[0] != 9) {
				t.Errorf("T: %+v, want 9 records", v.Datasets)
			}
		}
	}
	// OUT inside the input: a file's NAME.nc.bp folder, given its link or
	// a glob of them.
	first := filepath.Join(dir, "case.eam.h1.0001-01-01-00000.nc")
	for _, in := range []string{first, filepath.Join(dir, "case.eam.h1.*.nc.bp")} {
		r := relayout(t, "run", in, "-o", first+".bp/ts", "-q")
		if r.code != 2 || !strings.Contains(r.stderr, "never writes into its input") {
			t.Errorf("run %s -o inside it: exit %d\n%s", in, r.code, r.stderr)
		}
		if _, err := os.Stat(first + ".bp/ts"); err == nil {
			t.Errorf("run %s wrote into its input", in)
		}
	}
	// Another stream beside them: the folder is refused, naming both.
	other := filepath.Join(dir, "case.elm.h0.0001-01-01-00000.nc.bp")
	testkit.CopyTree(t, filepath.Join(src, scorpioName+".bp"), other)
	r := relayout(t, "run", dir, "-o", filepath.Join(t.TempDir(), "x"), "-q")
	if r.code != 2 || !strings.Contains(r.stderr, "case.eam.h1.*") || !strings.Contains(r.stderr, "case.elm.h0.*") {
		t.Errorf("a folder of two streams: exit %d\n%s", r.code, r.stderr)
	}
	os.RemoveAll(other)
	// Overlapping times: a fourth copy of the first file.
	testkit.CopyTree(t, filepath.Join(dir, "case.eam.h1.0001-01-01-00000.nc.bp"), filepath.Join(dir, "case.eam.h1.0001-01-10-00000.nc.bp"))
	r = relayout(t, "run", filepath.Join(dir, "case.eam.h1.*.nc.bp"), "-o", filepath.Join(t.TempDir(), "y"), "-q")
	if r.code != 2 || !strings.Contains(r.stderr, "overlap") {
		t.Errorf("overlapping files: exit %d\n%s", r.code, r.stderr)
	}
}

// scorpioBlock is where variable name's first BP block is in a SCORPIO
// dataset (read with reader/bp, only to know where to damage it).
func scorpioBlock(t *testing.T, dir, name string, step int64) catalog.Block {
	t.Helper()
	d, err := bp.OpenLocal(dir, bp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var found *catalog.Block
	err = d.Scan(context.Background(), func(a *catalog.Array) error {
		if a.Var == name && a.Step == step && found == nil {
			found = &a.Blocks[0]
		}
		return nil
	})
	if err != nil || found == nil || found.File == "" {
		t.Fatalf("%s in %s: %v (%v)", name, dir, found, err)
	}
	return *found
}

// TestSCORPIODamaged: a decomposition whose map sends an element outside
// the variable, and a write whose decomposition does not exist, end the
// run with exit 2 and a message naming the file (and the entry's offset)
// and the decomposition; nothing is left under a final name in OUT.
func TestSCORPIODamaged(t *testing.T) {
	src := filepath.Join(sharedData(t, "scorpio/adios-io16"), scorpioName+".bp")
	for _, c := range []struct {
		name    string
		damage  func(t *testing.T, dir string)
		mention []string
	}{
		{"map-entry-out-of-range", func(t *testing.T, dir string) {
			b := scorpioBlock(t, dir, "/__pio__/decomp/512", 0)
			patchFile(t, filepath.Join(dir, b.File), b.Offset+5*8, enc.LittleEndian.AppendUint64(nil, 99999))
		}, []string{"data.0", "decomposition 512", "99999"}},
		{"missing-decomposition", func(t *testing.T, dir string) {
			b := scorpioBlock(t, dir, "/__pio__/track/decomp_id/PS", 0)
			patchFile(t, filepath.Join(dir, b.File), b.Offset+4, enc.LittleEndian.AppendUint32(nil, 999))
		}, []string{"PS", "decomposition 999 does not exist"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), scorpioName+".bp")
			testkit.CopyTree(t, src, dir)
			c.damage(t, dir)
			out := filepath.Join(t.TempDir(), "ts")
			r := relayout(t, "run", dir, "-o", out)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s", r.code, r.stderr)
			}
			for _, m := range c.mention {
				if !strings.Contains(r.stderr, m) {
					t.Errorf("the message does not name %q:\n%s", m, r.stderr)
				}
			}
			if names := finalNames(t, out); len(names) > 0 {
				t.Errorf("damaged input left %v in OUT", names)
			}
		})
	}
}

// patchFile writes b at off of file (made writable: CopyTree keeps modes).
func patchFile(t *testing.T, file string, off int64, b []byte) {
	t.Helper()
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}
