package e2e

// Regression tests for hostile and faulty inputs (issue 17): each case is a
// damaged or unusual copy of real data with its exact expected outcome.

import (
	"bytes"
	"context"
	bin "encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"relayout/internal/testkit"
)

// py runs a Debian-Python script (h5py, numpy, netCDF4) and returns its stdout.
func py(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	var errb strings.Builder
	cmd.Stderr = &errb
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s\n%s", err, b, errb.String())
	}
	return string(b)
}

// refused asserts a clean refusal: exit code want, no panic, the message
// naming every string of mention, nothing under OUT's final names.
func refused(t *testing.T, r result, want int, out string, mention ...string) {
	t.Helper()
	if r.code != want {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("panicked:\n%s", r.stderr)
	}
	for _, s := range mention {
		if !strings.Contains(r.stderr, s) {
			t.Errorf("message does not mention %q:\n%s", s, r.stderr)
		}
	}
	if out != "" {
		if names := finalNames(t, out); len(names) > 0 {
			t.Errorf("files under OUT's final names after a failed run: %v", names)
		}
	}
}

// attrBits prints name=hex bits of every float attribute of every object in
// an HDF5 file, read by h5py (the oracle for attribute values).
const attrBits = `
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], 'r')
want = sys.argv[2].split(',')
def show(name, o):
    for k in want:
        if k in o.attrs:
            v = np.atleast_1d(np.asarray(o.attrs[k], dtype=np.float64))
            print(k, ' '.join('%016x' % b for b in v.view(np.uint64)))
show('/', f)
f.visititems(lambda n, o: show(n, o) if isinstance(o, h5py.Dataset) else None)
`

// TestNonFiniteAttributes: NaN and infinities in attributes are legal values;
// they reach the output attributes bit for bit (no panic in the catalog's JSON).
func TestNonFiniteAttributes(t *testing.T) {
	dir := t.TempDir()
	h5 := filepath.Join(dir, "nan.h5")
	py(t, `
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], 'w') as f:
    d = f.create_dataset('rho', data=np.arange(16.0).reshape(4, 4))
    d.attrs['_FillValue'] = np.nan
    d.attrs['valid_max'] = np.inf
    d.attrs['valid_min'] = -np.inf
    d.attrs['payload'] = np.array([0x7ff4000000000001], dtype=np.uint64).view(np.float64)
    d.attrs['negzero'] = -0.0
    f.attrs['time'] = np.array([1, np.nan])
`, h5)
	nc := filepath.Join(dir, "nan.nc")
	py(t, `
import sys, netCDF4, numpy as np
d = netCDF4.Dataset(sys.argv[1], 'w')
d.createDimension('x', 4); d.createDimension('y', 3)
v = d.createVariable('temp', 'f8', ('x', 'y'), fill_value=np.nan)
v[:] = np.arange(12.0).reshape(4, 3)
v.valid_max = np.inf
d.time = np.array([1, np.nan])
d.close()
`, nc)
	for _, c := range []struct{ in, file, attrs, want string }{
		{h5, "rho.h5", "_FillValue,valid_max,valid_min,payload,negzero,time",
			"_FillValue 7ff8000000000000\nnegzero 8000000000000000\npayload 7ff4000000000001\ntime 3ff0000000000000 7ff8000000000000\nvalid_max 7ff0000000000000\nvalid_min fff0000000000000\n"},
		{nc, "temp.nc", "_FillValue,valid_max,time", "_FillValue 7ff8000000000000\ntime 3ff0000000000000 7ff8000000000000\nvalid_max 7ff0000000000000\n"},
	} {
		t.Run(filepath.Base(c.in), func(t *testing.T) {
			out := filepath.Join(dir, "out-"+filepath.Base(c.in))
			mustRun(t, "run", c.in, "-o", out, "-q")
			got := py(t, attrBits, filepath.Join(out, c.file), c.attrs)
			lines := strings.Split(strings.TrimSpace(got), "\n")
			sortStrings(lines)
			if g := strings.Join(lines, "\n") + "\n"; g != c.want {
				t.Errorf("output attributes (h5py):\n%s\nwant:\n%s", g, c.want)
			}
			mustRun(t, "verify", c.in, out)
		})
	}
	t.Run("amrex-nan-cell-size", func(t *testing.T) {
		pf := filepath.Join(dir, "plt")
		testkit.CopyTree(t, sharedData(t, "amrex/pelelmex-2d"), pf)
		hdr := filepath.Join(pf, "Header")
		b, err := os.ReadFile(hdr)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(b), "\n")
		// Line 19 (index 18): level 0's cell size.
		if !strings.HasPrefix(lines[18], "0.00125 ") {
			t.Fatalf("unexpected Header line 19 %q", lines[18])
		}
		lines[18] = "nan 0.00125 "
		if err := os.WriteFile(hdr, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out-amrex")
		mustRun(t, "run", pf, "-o", out, "-q", "--var", "temp")
		got := py(t, attrBits, filepath.Join(out, "temp.h5"), "dx")
		if !strings.Contains(got, "dx 7ff8000000000000 3f547ae147ae147b") {
			t.Errorf("level 0 dx of the output (h5py) is not [NaN, 0.00125]:\n%s", got)
		}
	})
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// relayoutGuarded runs the binary like relayout, but a run that does not end
// within limit is killed and reported as a hang (the guard is a failure
// condition, not a timing assertion).
func relayoutGuarded(t *testing.T, limit time.Duration, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.WaitDelay = time.Second
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("relayout %s: hung (killed after %v)\nstderr:\n%s", strings.Join(args, " "), limit, errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("relayout %v: %v", args, err)
	}
	return r
}

// replace puts a non-regular file (or a symlink to one) in place of p.
func replace(t *testing.T, p, kind string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
	var err error
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(p, 0o644)
	case "dir":
		err = os.Mkdir(p, 0o755)
	case "devzero":
		err = os.Symlink("/dev/zero", p)
	case "symlink-dir":
		err = os.Symlink(t.TempDir(), p)
	case "loop":
		err = os.Symlink(filepath.Base(p), p)
	default:
		t.Fatalf("unknown kind %s", kind)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestNonRegularInputFiles: a FIFO (which used to block in open() forever),
// a directory, a symlink to /dev/zero or to a directory, or a symlink loop in
// place of any input file is refused with exit 2, naming the file and what
// it is; nothing appears under OUT's final names.
func TestNonRegularInputFiles(t *testing.T) {
	type input struct{ src, in, file string }
	inputs := []input{
		{"bp4/heat-2.7.1/heat.bp", "", "data.0"},
		{"bp4/heat-2.7.1/heat.bp", "", "md.0"},
		{"bp4/heat-2.7.1/heat.bp", "", "md.idx"},
		{"bp5/generated-lb/lb-bp5.bp", "", "data.1"},
		{"bp5/generated-lb/lb-bp5.bp", "", "mmd.0"},
		{"bp3/heat-adios2", "heat.bp", "heat.bp.dir/heat.bp.1"},
		{"hdf5/fbpic", "", "data00000100.h5"},
		{"amrex/pelelmex-2d", "", "Header"},
		{"amrex/pelelmex-2d", "", "Level_1/Cell_H"},
		{"amrex/pelelmex-2d", "", "Level_1/Cell_D_00001"},
	}
	what := map[string]string{"fifo": "named pipe (FIFO)", "dir": "is a directory", "devzero": "character device",
		"symlink-dir": "is a directory", "loop": "symlink loop"}
	for _, in := range inputs {
		for _, kind := range []string{"fifo", "dir", "devzero", "symlink-dir", "loop"} {
			if strings.HasPrefix(in.src, "amrex") && kind != "fifo" && in.file != "Level_1/Cell_D_00001" {
				continue // the copy is 15 MB: the other kinds once
			}
			if strings.HasPrefix(in.src, "bp5") && kind != "fifo" && kind != "dir" {
				continue
			}
			t.Run(strings.ReplaceAll(in.src+"/"+in.file, "/", "_")+"-"+kind, func(t *testing.T) {
				dir := t.TempDir()
				root := filepath.Join(dir, "in")
				testkit.CopyTree(t, sharedData(t, in.src), root)
				replace(t, filepath.Join(root, in.file), kind)
				arg := root
				if in.in != "" {
					arg = filepath.Join(root, in.in)
				}
				out := filepath.Join(dir, "out")
				r := relayoutGuarded(t, 2*time.Minute, "run", arg, "-o", out, "-q")
				refused(t, r, 2, out, in.file, what[kind])
			})
		}
	}
	t.Run("input-is-a-fifo", func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "data.h5")
		replace(t, p, "fifo")
		out := filepath.Join(dir, "out")
		r := relayoutGuarded(t, time.Minute, "run", p, "-o", out, "-q")
		refused(t, r, 2, out, "data.h5", "named pipe (FIFO)")
	})
}

// TestOutputInBP3SubfileDir: OUT inside NAME.bp.dir (the input's sub-file
// directory) is refused before anything is written there.
func TestOutputInBP3SubfileDir(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "heat")
	testkit.CopyTree(t, sharedData(t, "bp3/heat-adios2"), root)
	in := filepath.Join(root, "heat.bp")
	for _, out := range []string{filepath.Join(root, "heat.bp.dir", "out"), filepath.Join(root, "heat.bp.dir")} {
		r := relayout(t, "run", in, "-o", out, "-q")
		refused(t, r, 2, "", "heat.bp.dir", "never writes into its input")
	}
	entries, err := os.ReadDir(filepath.Join(root, "heat.bp.dir"))
	if err != nil || len(entries) != 4 {
		t.Errorf("sub-file directory changed: %d entries, %v", len(entries), err)
	}
	// A sibling of the input is a fine OUT.
	mustRun(t, "run", in, "-o", filepath.Join(root, "out"), "-q")
}

// adiosSteps compares, through the adios2 Python module (the reference
// reader), every variable of a BP directory with the output datasets the
// manifest lists, and prints "steps=N" (the steps ADIOS2 sees).
const adiosSteps = `
import sys, json, adios2, h5py, numpy as np
bp, out = sys.argv[1], sys.argv[2]
m = json.load(open(out + '/relayout.json'))
with adios2.FileReader(bp) as f:
    n = f.num_steps()
    for v in m['variables']:
        var = f.inquire_variable(v['name'])
        with h5py.File(out + '/' + v['file'], 'r') as h:
            for d in v['datasets']:
                if var.shape() == []:
                    continue
                a = f.read(var, step_selection=[d['step'], 1])
                b = h[d['path']][()]
                if a.shape != b.shape and a.shape[::-1] == b.shape:
                    a = a.T  # a column-major writer: relayout stores the row-major view
                # Space no block covers reads as 0 through adios2 and as the
                # fill value (NaN for floats) in relayout's output.
                same = (a == b) | ((np.isnan(b) & (a == 0)) if b.dtype.kind == 'f' else False)
                if b.dtype.kind == 'f':
                    same |= np.isnan(a) & np.isnan(b)
                if a.shape != b.shape or not np.all(same):
                    print('differs', v['name'], d['step']); sys.exit(1)
    print('steps=%d' % n)
    print('datasets=' + ','.join(sorted(set(str(d['step']) for v in m['variables'] for d in v['datasets']))))
`

// TestCutIndex: md.idx cut at a record boundary (a simulation that died
// between writing a step and indexing it) converts the indexed steps, warns
// on stderr and lists the rest in the manifest's skipped; --strict refuses.
func TestCutIndex(t *testing.T) {
	for _, c := range []struct {
		src  string
		keep int64 // bytes of md.idx kept: the header and the first step's records
	}{
		{"bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp", 64 + 64},
		{"bp5/generated-lb/lb-bp5.bp", 226},
	} {
		t.Run(strings.Split(c.src, "/")[0], func(t *testing.T) {
			_, env := testkit.PeersEnv(t)
			dir := t.TempDir()
			in := filepath.Join(dir, "in.bp")
			testkit.CopyTree(t, sharedData(t, c.src), in)
			os.Chmod(filepath.Join(in, "md.idx"), 0o644)
			if err := os.Truncate(filepath.Join(in, "md.idx"), c.keep); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			r := relayoutGuarded(t, 2*time.Minute, "run", in, "-o", out, "-q")
			if r.code != 0 {
				t.Fatalf("exit %d\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "2 more step(s) of metadata") || !strings.Contains(r.stderr, "not in md.idx") {
				t.Errorf("no warning naming the left-out steps:\n%s", r.stderr)
			}
			b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), "incomplete input: md.0: 2 more step(s)") {
				t.Errorf("manifest's skipped does not list the left-out steps:\n%s", b)
			}
			cmd := exec.Command(python, "-c", adiosSteps, in, out)
			cmd.Env = env
			got, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("adios2 comparison: %v\n%s", err, got)
			}
			if !strings.Contains(string(got), "steps=1\ndatasets=0\n") {
				t.Errorf("adios2 sees other steps than were converted:\n%s", got)
			}
			out2 := filepath.Join(dir, "out-strict")
			r = relayoutGuarded(t, 2*time.Minute, "run", in, "-o", out2, "-q", "--strict")
			refused(t, r, 2, out2, "--strict", "2 more step(s)")
		})
	}
}

// smallFS mounts a tmpfs of size at dir (root only: skipped otherwise) and
// returns a function that resizes it.
func smallFS(t *testing.T, dir, size string) func(size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipping: cannot mount a small tmpfs (needs root): %v %s", err, b)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return func(size string) {
		if b, err := exec.Command("mount", "-o", "remount,size="+size, dir).CombinedOutput(); err != nil {
			t.Fatalf("remount %s: %v %s", dir, err, b)
		}
	}
}

// TestDiskFull: running out of space is exit 1 (may succeed later) with a
// message naming the directory and the way out, nothing under final names;
// after space is freed, the rerun succeeds.
func TestDiskFull(t *testing.T) {
	in := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	resize := smallFS(t, mnt, "64k")

	// The catalog itself does not fit.
	out := filepath.Join(mnt, "out")
	r := relayout(t, "run", in, "-o", out, "-q")
	refused(t, r, 1, out, "catalog.db", "database or disk is full", "free space in "+mnt, "then rerun with --resume")

	// Contiguous output larger than the free space: refused before writing,
	// with the bytes to free.
	resize("2m")
	os.RemoveAll(out)
	r = relayout(t, "run", in, "-o", out, "-q")
	refused(t, r, 1, out, "not enough space for the output", "free, the output needs about 2491752", "then rerun")
	if !strings.Contains(r.stderr, "free ") || !strings.Contains(r.stderr, " bytes (") {
		t.Errorf("no byte count to free:\n%s", r.stderr)
	}

	// The same, refused up front, for a journaled run.
	out2 := filepath.Join(mnt, "out2")
	r = relayout(t, "run", in, "-o", out2, "-q", "--resume")
	refused(t, r, 1, out2, "not enough space for the output", "then rerun the same command")

	// A journaled chunked run (its size is not known up front) that runs
	// out mid-way names the file system; after a resize the same command
	// finishes the job.
	os.RemoveAll(out2)
	args := []string{"run", in, "-o", out2, "-q", "--resume", "--layout", "chunked", "--chunks", "2x2x2"}
	r = relayout(t, args...)
	refused(t, r, 1, out2, "no space left on device", "free space in "+mnt, "rerun the same command")
	resize("16m")
	mustRun(t, args...)
	mustRun(t, "verify", in, out2)
}

// patchBP4Shape rewrites, in a BP4 md.0, the global shape of every 3-D block
// characteristic whose first dimension is from to to (the u64 triples
// count, shape, start that follow the dimensions characteristic 04 03 48 00).
func patchBP4Shape(t *testing.T, md0 string, from, to uint64) {
	t.Helper()
	b, err := os.ReadFile(md0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte{4, 3, 0x48, 0})
		if j < 0 {
			break
		}
		p := i + j + 4
		if p+24 <= len(b) && bin.LittleEndian.Uint64(b[p+8:]) == from {
			bin.LittleEndian.PutUint64(b[p+8:], to)
			n++
		}
		i = p
	}
	if n == 0 {
		t.Fatalf("%s: no shape %d found", md0, from)
	}
	os.Chmod(md0, 0o644)
	if err := os.WriteFile(md0, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// capped runs the binary under an address-space cap (prlimit --as) and the
// hang guard: memory proportional to a declared shape fails the cap.
func capped(t *testing.T, args ...string) result {
	t.Helper()
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skipf("skipping: prlimit (util-linux) not found: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, prlimit, append([]string{"--as=" + strconv.Itoa(2<<30), "--", binary}, args...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("relayout %s: hung\n%s", strings.Join(args, " "), errb.String())
	}
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestDeclaredShapeHuge: a BP4 md.0 whose global shape says 2^40 (a 1.7 MB
// input declaring petabytes, its 64 blocks in the first 32 rows) is planned
// in bounded memory (the chunked cost model's per-chunk array was as long
// as the shape: out of memory). Its arrays are sparse (planner's
// sparse.go): run and run --resume write and verify them under the
// address-space cap, over their touched chunks alone, into a few MiB; each
// dataset's first 32 rows equal those of the unpatched input's output
// (h5py), a row of the holes reads as the fill value. Asked dense (--fill),
// the petabytes are refused before anything is allocated: exit 1 naming the
// bytes to free (no file system here holds 8 PiB).
func TestDeclaredShapeHuge(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.bp")
	src := sharedData(t, "bp4/generated-lb/lb-bp4.bp")
	testkit.CopyTree(t, src, in)
	patchBP4Shape(t, filepath.Join(in, "md.0"), 32, 1<<40)
	r := capped(t, "plan", in, "--layout", "auto") // the auto layout costs chunked candidates
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s", r.code, r.stderr)
	}
	ref := filepath.Join(dir, "ref")
	mustRun(t, "run", src, "-o", ref, "-q")
	for _, args := range [][]string{{}, {"--resume"}} {
		out := filepath.Join(dir, "out"+strings.Join(args, ""))
		r := capped(t, append([]string{"run", in, "-o", out, "-q"}, args...)...)
		if r.code != 0 {
			t.Fatalf("run %v: exit %d\n%s", args, r.code, r.stderr)
		}
		if n := diskBytes(t, out); n > 16<<20 {
			t.Errorf("run %v: the output takes %d bytes on disk, want < 16 MiB", args, n)
		}
		got := py(t, `
import sys, json, h5py, numpy as np
out, ref = sys.argv[1], sys.argv[2]
m = json.load(open(out + "/relayout.json"))
n = 0
for v in m["variables"]:
    for d in v["datasets"]:
        if len(d["shape"]) != 3:
            continue
        a, b = h5py.File(out + "/" + v["file"])[d["path"]], h5py.File(ref + "/" + v["file"])[d["path"]]
        assert a.shape == (2**40, 32, 32), (d["path"], a.shape)
        assert d.get("digest_of") == "stored chunks", d
        assert np.array_equal(a[0:32], b[:], equal_nan=True), d["path"]
        hole = a[2**39]
        assert np.array_equal(hole, np.full(hole.shape, a.fillvalue, hole.dtype), equal_nan=True), (d["path"], hole[0, 0], a.fillvalue)
        n += 1
print(n)
`, out, ref)
		if strings.TrimSpace(got) != "12" {
			t.Errorf("run %v: %s datasets of 2^40 rows checked, want 12", args, got)
		}
	}
	for _, args := range [][]string{{"--fill"}, {"--fill", "--layout", "chunked", "--chunk-shape", "32,32,32"}} {
		out := filepath.Join(dir, "out-fill")
		r = capped(t, append([]string{"run", in, "-o", out, "-q"}, args...)...)
		refused(t, r, 1, out, "not enough space for the output", "the output needs about")
		os.RemoveAll(out)
	}
}

// diskBytes is the bytes the files under dir take on disk (allocated
// blocks: a file with holes counts what it stores).
func diskBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return err
		}
		n += st.Blocks * 512
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSymlinkPolicy: one policy for every format (README): a symlink that
// resolves to a regular file is followed wherever it points; the output
// equals the one from real files (same dataset digests).
func TestSymlinkPolicy(t *testing.T) {
	for _, c := range []struct{ src, file string }{
		{"hdf5/fbpic", "data00000100.h5"},             // a file of an HDF5 series (was skipped silently)
		{"bp4/heat-2.7.1/heat.bp", "data.0"},          // a BP sub-file
		{"amrex/pelelmex-2d", "Level_1/Cell_D_00001"}, // an AMReX data file (was refused)
		{"bp3/heat-adios2", "heat.bp.dir/heat.bp.2"},  // a BP3 sub-file
		{"chombo/mushy-layer", "plt025000.2d.hdf5"},   // a Chombo series file (was refused)
	} {
		t.Run(strings.ReplaceAll(c.src, "/", "_"), func(t *testing.T) {
			src := sharedData(t, c.src)
			dir := t.TempDir()
			in := filepath.Join(dir, "in")
			testkit.CopyTree(t, src, in)
			if strings.HasPrefix(c.src, "chombo") {
				os.Remove(filepath.Join(in, "chk000100.3d.hdf5")) // a 2-D series
			}
			p := filepath.Join(in, c.file)
			os.Remove(p)
			if err := os.Symlink(filepath.Join(src, c.file), p); err != nil {
				t.Fatal(err)
			}
			arg, ref := in, src
			if strings.HasPrefix(c.src, "bp3") {
				arg, ref = filepath.Join(in, "heat.bp"), filepath.Join(src, "heat.bp")
			}
			if strings.HasPrefix(c.src, "chombo") {
				ref = filepath.Join(dir, "ref")
				testkit.CopyTree(t, src, ref)
				os.Remove(filepath.Join(ref, "chk000100.3d.hdf5"))
			}
			out, want := filepath.Join(dir, "out"), filepath.Join(dir, "want")
			mustRun(t, "run", arg, "-o", out, "-q", "--var", "*")
			mustRun(t, "run", ref, "-o", want, "-q", "--var", "*")
			sameSums(t, c.src, datasetSums(t, out), datasetSums(t, want))
		})
	}
}
