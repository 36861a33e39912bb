package reader

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// TestSeriesOf: which BP datasets of a folder form a series.
func TestSeriesOf(t *testing.T) {
	bp4 := func(names ...string) []candidate {
		var out []candidate
		for _, n := range names {
			out = append(out, candidate{name: n, kind: "BP4"})
		}
		return out
	}
	if m := seriesOf(bp4("s_000200.bp", "s_000010.bp")); len(m) != 2 || m[0].Iteration != 10 || m[1].Name != "s_000200.bp" {
		t.Errorf("series: %v", m)
	}
	for _, c := range [][]candidate{
		bp4("s_000200.bp"), // one dataset is not a series
		bp4("Attribute.2.5.bp4.bp", "Common.2.10.bp4.bp"), // prefixes differ
		bp4("s_10.bp", "s_010.bp"),                        // one iteration twice
		append(bp4("s_1.bp"), candidate{name: "s_2.bp", kind: "HDF5"}),
	} {
		if m := seriesOf(c); m != nil {
			t.Errorf("%v: series %v, want none", c, m)
		}
	}
}

// TestFolderMessages: folders and paths inside datasets, on the real data.
func TestFolderMessages(t *testing.T) {
	data := testkit.SharedData(t, "")
	pic := filepath.Join(data, "bp4/picongpu-lwfa")
	ds, err := Open(pic, Options{Vars: []string{"E"}})
	if err != nil {
		t.Fatalf("folder holding one dataset: %v", err)
	}
	if info := ds.Info(); info.Path != filepath.Join(pic, "pic_n2.bp") || info.Format != "openpmd-bp4" {
		t.Errorf("folder holding one dataset: path %s format %s", info.Path, info.Format)
	}
	if v := vars(t, ds); !slices.Equal(v, []string{"E/x", "E/y", "E/z"}) {
		t.Errorf("folder holding one dataset: variables %v", v)
	}
	ds.Close()

	bp := filepath.Join(pic, "pic_n2.bp")
	amr := filepath.Join(data, "amrex/pelelmex-3d")
	heat := filepath.Join(data, "bp3/heat-adios2/heat.bp")
	for _, c := range []struct{ path, want string }{
		{filepath.Join(data, "bp4/archive"), "this folder holds 2 unrelated datasets, pass one of them: Attribute.2.5.bp4.bp (BP4), Common.2.10.bp4.bp (BP4)"},
		{filepath.Join(bp, "md.idx"), "this is part of the BP4 dataset " + bp + ": pass that directory"},
		{filepath.Join(bp, "data.0"), "this is part of the BP4 dataset " + bp + ": pass that directory"},
		{filepath.Join(data, "bp5/quokka-2d/plt00020.bp/mmd.0"), ""}, // checked below: whatever the dataset, BP5
		{filepath.Join(amr, "Level_0"), "this is part of the AMReX plotfile " + amr + ": pass that directory"},
		{filepath.Join(amr, "Header"), "this is part of the AMReX plotfile " + amr + ": pass that directory"},
		{filepath.Join(amr, "Level_0", "Cell_D_00000"), "this is part of the AMReX plotfile " + amr + ": pass that directory"},
		{heat + ".dir/heat.bp.0", "this is part of the BP3 dataset " + heat + " (a sub-file of it): pass that file"},
		{filepath.Join(data, "bp4"), "no dataset in this folder (" + formatsRead + "); its sub-folders holding datasets: archive/, compressed-2.7.1/, generated-lb/, heat-2.7.1/, multiblock-2.5.0/, picongpu-lwfa/"},
		{filepath.Join(data, "bp4/archive/PROVENANCE.txt"), "not a recognised format (" + formatsRead + ")"},
	} {
		if c.want == "" {
			continue
		}
		_, err := Open(c.path, Options{})
		if want := "reader: " + c.path + ": " + c.want + ": unsupported"; !errors.Is(err, catalog.ErrUnsupported) || err.Error() != want {
			t.Errorf("%s:\n got %v\nwant %s", c.path, err, want)
		}
	}
	// HDF5 files that are no series (the same array in two files).
	femm := filepath.Join(data, "hdf5/openpmd-femm")
	_, err = Open(femm, Options{})
	if want := "reader: " + femm + ": this folder holds HDF5 files that are not one series (B/z step 1 is in both example-femm-3d.h5 and example-femm-thetaMode.h5), pass one of them: example-femm-3d.h5, example-femm-thetaMode.h5: unsupported"; err == nil || err.Error() != want || !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("HDF5 files of two datasets:\n got %v\nwant %s", err, want)
	}
	// HDF5 beside BP is a folder of several datasets, not an HDF5 series.
	mixed := t.TempDir()
	for _, l := range []string{"bp4/picongpu-lwfa/pic_n2.bp", "hdf5/openpmd-femm/example-femm-3d.h5"} {
		if err := os.Symlink(filepath.Join(data, l), filepath.Join(mixed, filepath.Base(l))); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Open(mixed, Options{})
	if want := "reader: " + mixed + ": this folder holds 2 unrelated datasets, pass one of them: example-femm-3d.h5 (HDF5), pic_n2.bp (BP4): unsupported"; err == nil || err.Error() != want {
		t.Errorf("mixed folder:\n got %v\nwant %s", err, want)
	}
	// A FIFO in a folder is not opened (that would block).
	if err := syscall.Mkfifo(filepath.Join(mixed, "pipe.h5"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A series beside another dataset is listed once, by its name pattern.
	for _, l := range []string{"openpmd_000010.bp", "openpmd_000020.bp", "openpmd_000030.bp", "checkpoint.bp"} {
		if err := os.Symlink(bp, filepath.Join(mixed, l)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Open(mixed, Options{})
	if want := "reader: " + mixed + ": this folder holds 6 unrelated datasets, pass one of them: checkpoint.bp (BP4), example-femm-3d.h5 (HDF5), openpmd_%T.bp (BP4 series of 3 iterations), pic_n2.bp (BP4): unsupported"; err == nil || err.Error() != want {
		t.Errorf("series beside other datasets:\n got %v\nwant %s", err, want)
	}
	// An entry named like a series' iterations that is none is refused by
	// name: that iteration would go missing.
	ser := t.TempDir()
	for _, l := range []string{"s_000010.bp", "s_000020.bp"} {
		if err := os.Symlink(bp, filepath.Join(ser, l)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		make func(string) error
		what string
	}{
		{func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a FIFO (named pipe)"},
		{func(p string) error { return os.Mkdir(p, 0o755) }, "is a folder that is no dataset (a BP4/BP5 directory needs md.idx and md.0: an iteration cut short?)"},
		{func(p string) error { return os.Symlink("/dev/zero", p) }, "is a device"},
		{func(p string) error { // md.idx with a zeroed header beside md.0
			os.Mkdir(p, 0o755)
			os.WriteFile(filepath.Join(p, "md.0"), make([]byte, 100), 0o644)
			return os.WriteFile(filepath.Join(p, "md.idx"), make([]byte, 128), 0o644)
		}, "is a damaged BP4 dataset (bp4: md.idx: offset 37: header: BP format version byte 0: corrupt input)"},
		{func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) }, "is not a dataset relayout reads"},
	} {
		p := filepath.Join(ser, "s_000030.bp")
		if err := c.make(p); err != nil {
			t.Fatal(err)
		}
		_, err := Open(ser, Options{})
		if want := "reader: " + p + ": named like the iterations of the series " + ser + " (s_%T.bp) but " + c.what + ": repair or remove it: unsupported"; err == nil || err.Error() != want {
			t.Errorf("stray:\n got %v\nwant %s", err, want)
		}
		os.RemoveAll(p)
	}
	// A BP5 directory's files name it too.
	des, _ := os.ReadDir(filepath.Join(data, "bp5/quokka-2d"))
	for _, de := range des {
		if d := filepath.Join(data, "bp5/quokka-2d", de.Name()); de.IsDir() {
			_, err := Open(filepath.Join(d, "md.idx"), Options{})
			if want := "this is part of the BP5 dataset " + d + ": pass that directory"; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("BP5 md.idx: %v, want %q", err, want)
			}
			break
		}
	}
}

// meshIDs are openpmd_gen.py's component ids (its value rule).
var meshIDs = map[string]float64{"E/x": 0, "E/y": 1, "E/z": 2, "B/x": 3, "B/y": 4, "B/z": 5, "rho": 6, "j/x": 7, "j/y": 8}

// TestOpenPMDEncodingsBP reads series written by openPMD-api in the
// file-based encoding (a folder of BP directories) and the variable-based
// encoding (one ADIOS2 step per iteration), checking every element against
// the generator's value rule and the iteration attributes per iteration.
func TestOpenPMDEncodingsBP(t *testing.T) {
	iters := []int64{5, 40, 300} // not the step indices
	shape := []int64{12, 10, 8}
	for i, c := range []struct{ backend, encoding string }{
		{"bp4", "file"}, {"bp5", "file"}, {"bp4", "variable"}, {"bp5", "variable"}, {"bp5", "group"},
	} {
		t.Run(c.backend+"-"+c.encoding, func(t *testing.T) {
			dir := t.TempDir()
			testkit.OpenPMDGen(t, "write", dir, "--backend", c.backend, "--encoding", c.encoding, "--shape", "12,10,8",
				"--iterations", "5,40,300", "--particles", "20", "--seed", strconv.Itoa(11+i))
			ds, err := Open(dir, Options{}) // the folder: a series, or the one dataset in it
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			if f := ds.Info().Format; f != "openpmd-"+c.backend {
				t.Errorf("format %s", f)
			}
			steps := map[string][]int64{}
			n, np, constants := 0, 0, 0
			for _, a := range testkit.ScanAll(t, ds) {
				steps[a.Var] = append(steps[a.Var], a.Step)
				s := slices.Index(iters, a.Step)
				if s < 0 {
					t.Fatalf("%s: step %d, want one of %v", a.Var, a.Step, iters)
				}
				if tm := attrFloat(a.StepAttrs, "time"); tm != 1e-15*float64(a.Step) {
					t.Errorf("%s@%d: time %v, want %v", a.Var, a.Step, tm, 1e-15*float64(a.Step))
				}
				if slices.ContainsFunc(a.StepAttrs, func(x catalog.Attr) bool { return x.Name == "snapshot" }) {
					t.Errorf("%s@%d: snapshot among the iteration attributes", a.Var, a.Step)
				}
				if a.Species != "" {
					np += checkParticleRule(t, ds, a, s, 20)
					continue
				}
				if !slices.Equal(a.Shape, shape) {
					t.Fatalf("%s@%d: shape %v", a.Var, a.Step, a.Shape)
				}
				if a.Constant { // openpmd_gen's constant records: j/z = 7.25 + s, phi = -1.5 - s
					want := map[string]float64{"j/z": 7.25 + float64(s), "phi": -1.5 - float64(s)}[a.Var]
					if v := testkit.Floats(a.Fill, a.DType); len(a.Blocks) != 0 || len(v) != 1 || v[0] != want {
						t.Errorf("%s@%d: constant %v with %d blocks, want %v", a.Var, a.Step, v, len(a.Blocks), want)
					}
					constants++
					continue
				}
				n += checkRule(t, ds, a, meshIDs[a.Var], s)
			}
			if constants != 2*len(iters) {
				t.Errorf("%d constant record components, want j/z and phi at %d iterations", constants, len(iters))
			}
			for v := range meshIDs {
				if !slices.Equal(steps[v], iters) {
					t.Errorf("%s: steps %v, want %v", v, steps[v], iters)
				}
			}
			if want := 9 * 3 * 12 * 10 * 8; n != want {
				t.Errorf("%d elements checked, want %d", n, want)
			}
			// position, momentum (x, y, z), weighting, id: 20 particles, 3 iterations
			if want := 8 * 3 * 20; np != want {
				t.Errorf("%d particle elements checked, want %d", np, want)
			}
			for _, v := range []string{"particles/electrons/position/x", "particles/electrons/positionOffset/z",
				"particles/electrons/charge", "particles/electrons/mass", "particles/electrons/id"} {
				if !slices.Equal(steps[v], iters) {
					t.Errorf("%s: steps %v, want %v", v, steps[v], iters)
				}
			}
		})
	}
}

// checkParticleRule checks a particle record component of species
// "electrons" (n particles) at iteration index s against openpmd_gen.py's
// value rule (global particle index p, c = 0, 1, 2 for x, y, z):
// position/c = p*0.001 + 10*c + 100*s, momentum/c = (p + 0.5*s)*(c + 1),
// weighting = 1 + p%7, id = p; constant positionOffset/c 0, charge -1,
// mass 1. It returns the elements of blocks checked.
func checkParticleRule(t *testing.T, ds Dataset, a *catalog.Array, s int, n int64) int {
	t.Helper()
	rel := strings.TrimPrefix(a.Var, "particles/electrons/")
	if a.Species != "electrons" || !slices.Equal(a.Shape, []int64{n}) {
		t.Errorf("%s@%d: species %q shape %v", a.Var, a.Step, a.Species, a.Shape)
		return 0
	}
	rec, comp, _ := strings.Cut(rel, "/")
	c := float64(strings.Index("xyz", comp))
	if a.Constant {
		want := map[string]float64{"positionOffset": 0, "charge": -1, "mass": 1}[rec]
		if v := testkit.Floats(a.Fill, a.DType); len(v) != 1 || v[0] != want || len(a.Blocks) != 0 {
			t.Errorf("%s@%d: constant %v (%d blocks), want %v", a.Var, a.Step, v, len(a.Blocks), want)
		}
		return 0
	}
	got := 0
	for bi := range a.Blocks {
		b := &a.Blocks[bi]
		raw, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
		if err != nil {
			t.Fatal(err)
		}
		vals := testkit.Floats(raw, a.DType)
		if a.DType.Kind == catalog.Uint && a.DType.Size == 8 && !a.DType.BigEndian { // id: uint64
			for i := range vals {
				vals[i] = float64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		for e, v := range vals {
			p := float64(b.Box.Lower[0] + int64(e))
			want := map[string]float64{"position": p*0.001 + 10*c + 100*float64(s), "momentum": (p + 0.5*float64(s)) * (c + 1),
				"weighting": 1 + float64(int64(p)%7), "id": p}[rec]
			if v != want {
				t.Errorf("%s@%d [%v]: %v, want %v", a.Var, a.Step, p, v, want)
				return got
			}
			got++
		}
	}
	if int64(got) != n {
		t.Errorf("%s@%d: blocks hold %d elements, want %d", a.Var, a.Step, got, n)
	}
	return got
}

func attrFloat(attrs []catalog.Attr, name string) float64 {
	for _, a := range attrs {
		if a.Name == name && len(a.Floats) > 0 {
			return a.Floats[0]
		}
	}
	return -1
}

// checkRule compares every element of a's blocks with
// 1048576*c + 131072*s + lin (+0.5 for float64) and returns how many.
func checkRule(t *testing.T, ds Dataset, a *catalog.Array, c float64, s int) int {
	t.Helper()
	n, bad := 0, 0
	for bi := range a.Blocks {
		b := &a.Blocks[bi]
		raw, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
		if err != nil {
			t.Fatal(err)
		}
		vals := testkit.Floats(raw, a.DType)
		cnt := b.Box.Count
		for e, v := range vals {
			k, j, i := int64(e)%cnt[2], int64(e)/cnt[2]%cnt[1], int64(e)/(cnt[2]*cnt[1])
			gi, gj, gk := b.Box.Lower[0]+i, b.Box.Lower[1]+j, b.Box.Lower[2]+k
			want := 1048576*c + 131072*float64(s) + float64((gi*a.Shape[1]+gj)*a.Shape[2]+gk)
			if a.DType.Size == 8 {
				want += 0.5
			}
			if v != want && bad < 5 {
				bad++
				t.Errorf("%s@%d [%d %d %d]: %v, want %v", a.Var, a.Step, gi, gj, gk, v, want)
			}
			n++
		}
	}
	if int64(n) != a.Elements() {
		t.Errorf("%s@%d: blocks hold %d elements, array %d", a.Var, a.Step, n, a.Elements())
	}
	return n
}

// snapshotVarScript writes variable-based openPMD whose iteration index is a
// /data/snapshot variable (older openPMD-api writers; 0.16 writes an
// attribute) through ADIOS2 itself: rho = lin + 1000*it at iterations 7, 70,
// 700.
const snapshotVarScript = `
import sys, numpy as np, adios2.bindings as ab
out, engine = sys.argv[1], sys.argv[2]
adios = ab.ADIOS()
io = adios.DeclareIO("w")
io.SetEngine(engine)
for k, v in [("/openPMD", "1.1.0"), ("/basePath", "/data/%T/"), ("/meshesPath", "meshes/"),
             ("/iterationEncoding", "variableBased"), ("/iterationFormat", "/data")]:
    io.DefineAttribute(k, v)
io.DefineAttribute("/data/dt", np.array([1.0]))
snap = io.DefineVariable("/data/snapshot", np.zeros(1, "u8"))
rho = io.DefineVariable("/data/meshes/rho", np.zeros(1), [4, 6], [0, 0], [4, 6], False)
w = io.Open(out, ab.Mode.Write)
for it in (7, 70, 700):
    w.BeginStep()
    w.Put(snap, np.array([it], "u8"), ab.Mode.Sync)
    w.Put(rho, (np.arange(24.0) + 1000 * it).reshape(4, 6), ab.Mode.Sync)
    w.EndStep()
w.Close()
`

func TestOpenPMDSnapshotVariable(t *testing.T) {
	for _, engine := range []string{"BP4", "BP5"} {
		t.Run(engine, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sv.bp")
			testkit.PeersPython(t, "-c", snapshotVarScript, path, engine)
			ds, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			var steps []int64
			for _, a := range testkit.ScanAll(t, ds) {
				if a.Var != "rho" {
					t.Fatalf("variable %s", a.Var)
				}
				steps = append(steps, a.Step)
				for bi := range a.Blocks {
					raw, err := catalog.ReadBlock(context.Background(), ds, &a.Blocks[bi], a.DType)
					if err != nil {
						t.Fatal(err)
					}
					for i, v := range testkit.Floats(raw, a.DType) {
						if want := float64(i) + 1000*float64(a.Step); v != want {
							t.Fatalf("rho@%d[%d] = %v, want %v", a.Step, i, v, want)
						}
					}
				}
			}
			if !slices.Equal(steps, []int64{7, 70, 700}) {
				t.Errorf("steps %v, want the snapshots 7, 70, 700", steps)
			}
			if sk := ds.Info().Skipped; len(sk) > 0 {
				t.Errorf("skipped %v (the snapshot is the iteration index, not a variable)", sk)
			}
		})
	}
}

// plainSeriesScript writes plain (not openPMD) ADIOS2 datasets of one step
// each, run_<it>.bp for it in 1, 2, 30, with T = arange(12) + it over 3
// writer blocks.
const plainSeriesScript = `
import sys, os, numpy as np, adios2.bindings as ab
d, engine = sys.argv[1], sys.argv[2]
adios = ab.ADIOS()
for it in (1, 2, 30):
    io = adios.DeclareIO("w%d" % it)
    io.SetEngine(engine)
    v = io.DefineVariable("T", np.zeros(1), [12], [0], [4], False)
    w = io.Open(os.path.join(d, "run_%04d.bp" % it), ab.Mode.Write)
    w.BeginStep()
    for b in range(3):
        v.SetSelection([[4 * b], [4]])
        w.Put(v, np.arange(4.0) + 4 * b + it, ab.Mode.Sync)
    w.EndStep()
    w.Close()
`

// TestPlainBPSeries: a folder of plain BP datasets named PREFIX<T>SUFFIX is
// one series whose steps are T (BP3 files, whose blocks live beside them,
// and BP4/BP5 directories).
func TestPlainBPSeries(t *testing.T) {
	for _, engine := range []string{"BP3", "BP4", "BP5"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			testkit.PeersPython(t, "-c", plainSeriesScript, dir, engine)
			ds, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			if f := ds.Info().Format; f != strings.ToLower(engine) {
				t.Errorf("format %s", f)
			}
			var steps []int64
			for _, a := range testkit.ScanAll(t, ds) {
				steps = append(steps, a.Step)
				n := 0
				for bi := range a.Blocks {
					b := &a.Blocks[bi]
					raw, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
					if err != nil {
						t.Fatal(err)
					}
					for i, v := range testkit.Floats(raw, a.DType) {
						if want := float64(b.Box.Lower[0]+int64(i)) + float64(a.Step); v != want {
							t.Fatalf("T@%d[%d] = %v, want %v", a.Step, b.Box.Lower[0]+int64(i), v, want)
						}
						n++
					}
				}
				if a.Var != "T" || n != 12 {
					t.Errorf("%s@%d: %d elements", a.Var, a.Step, n)
				}
			}
			if !slices.Equal(steps, []int64{1, 2, 30}) {
				t.Errorf("steps %v, want 1, 2, 30 from the names", steps)
			}
		})
	}
}

// movingWindowScript writes a variable-based series with openPMD-api whose
// record attribute gridGlobalOffset changes every iteration (a moving
// window), then prints what openPMD-api reads back per iteration.
const movingWindowScript = `
import sys, json, numpy as np, openpmd_api as io
path, engine = sys.argv[1], sys.argv[2]
s = io.Series(path, io.Access.create, '{"adios2": {"engine": {"type": "%s"}}}' % engine)
s.set_iteration_encoding(io.Iteration_Encoding.variable_based)
for it in (3, 9, 27):
    i = s.write_iterations()[it]
    i.time, i.dt = 0.5 * it, 0.5
    rho = i.meshes["rho"]
    rho.grid_global_offset, rho.grid_spacing, rho.axis_labels = [1.0 * it, -2.0], [1.0, 1.0], ["x", "y"]
    c = rho[io.Mesh_Record_Component.SCALAR]
    c.reset_dataset(io.Dataset(np.dtype("float64"), [4, 5]))
    c.store_chunk(np.arange(20.0).reshape(4, 5) + it)
    i.close()
s.close()
out = {}
for i in io.Series(path, io.Access.read_linear).read_iterations():
    out[i.iteration_index] = {"time": i.time, "offset": list(i.meshes["rho"].grid_global_offset)}
    i.close()
print(json.dumps(out))
`

// TestOpenPMDVariableAttributes: in variable-based encoding the iteration
// and record attributes of each array are those of its own step, as
// openPMD-api reads them.
func TestOpenPMDVariableAttributes(t *testing.T) {
	_, env := testkit.PeersEnv(t)
	for _, engine := range []string{"bp4", "bp5"} {
		t.Run(engine, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "mw.bp")
			cmd := exec.Command(testkit.Python, "-c", movingWindowScript, path, engine)
			cmd.Env = env
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("openPMD-api: %v", err)
			}
			var want map[string]struct {
				Time   float64
				Offset []float64
			}
			if err := json.Unmarshal(b[bytes.LastIndexByte(b[:len(b)-1], '\n')+1:], &want); err != nil || len(want) != 3 {
				t.Fatalf("openPMD-api read-back %q: %v", b, err)
			}
			ds, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			arrays := testkit.ScanAll(t, ds)
			if len(arrays) != 3 {
				t.Fatalf("%d arrays, want 3", len(arrays))
			}
			for _, a := range arrays {
				w, ok := want[strconv.FormatInt(a.Step, 10)]
				if !ok {
					t.Fatalf("%s@%d: openPMD-api has no iteration %d", a.Var, a.Step, a.Step)
				}
				var off []float64
				for _, at := range a.Attrs {
					if at.Name == "gridGlobalOffset" {
						off = at.Floats
					}
				}
				if tm := attrFloat(a.StepAttrs, "time"); tm != w.Time || !slices.Equal(off, w.Offset) {
					t.Errorf("%s@%d: time %v gridGlobalOffset %v, openPMD-api %v %v", a.Var, a.Step, tm, off, w.Time, w.Offset)
				}
			}
		})
	}
}
