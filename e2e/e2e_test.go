package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"relayout/internal/testkit"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "relayout-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "relayout")
	build := exec.Command("go", "build", "-o", binary, "..")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building relayout:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const python = "/usr/bin/python3"

// sharedData returns ../shared/data/<rel>, skipping when the real data is
// absent, except under CI where its absence is a failure.
func sharedData(t *testing.T, rel string) string {
	return testkit.SharedData(t, rel)
}

type result struct {
	code           int
	stdout, stderr string
}

func relayout(t *testing.T, args ...string) result {
	t.Helper()
	return relayoutEnv(t, nil, args...)
}

func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := relayout(t, args...)
	if r.code != 0 {
		t.Fatalf("relayout %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// oracle compares every output element with the input, both read by h5py.
func oracle(t *testing.T, in, out string) {
	t.Helper()
	cmd := exec.Command(python, "oracle.py", in, out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("oracle (h5py) found differences or failed: %v\n%s", err, b)
	}
	t.Logf("oracle:\n%s", b)
}

type manifest struct {
	Input     struct{ Path, Format string }
	Variables []struct {
		Name, DType, File string
		Datasets          []manifestDataset
		Constants         []manifestDataset
		Species           string // particle record components
	}
	Series  string
	Skipped []string
}

type manifestDataset struct {
	Step         int64
	Level        int
	Path, Layout string
	Shape, Chunk []int64
	SHA256       string
	Compression  string
	Var          string // a copy of another variable (netCDF time series)
}

func readManifest(t *testing.T, out string) manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkH5dumpLayout asserts that h5dump -p -H reports the manifest's layout and
// chunk shape for every dataset.
func checkH5dumpLayout(t *testing.T, out string, m manifest) {
	t.Helper()
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			b, err := exec.Command("h5dump", "-p", "-H", "-d", d.Path, filepath.Join(out, v.File)).CombinedOutput()
			if err != nil {
				t.Fatalf("h5dump %s %s: %v\n%s", v.File, d.Path, err, b)
			}
			s := string(b)
			switch d.Layout {
			case "contiguous":
				if !strings.Contains(s, "CONTIGUOUS") {
					t.Errorf("%s %s: h5dump shows no CONTIGUOUS layout:\n%s", v.File, d.Path, s)
				}
			case "chunked":
				if d.Compression != "" {
					// Shuffle only where elements are wider than a byte.
					if !strings.Contains(s, "DEFLATE { LEVEL 6 }") || strings.Contains(d.Compression, "shuffle") != strings.Contains(s, "SHUFFLE") {
						t.Errorf("%s %s: h5dump does not show the manifest's filters %q:\n%s", v.File, d.Path, d.Compression, s)
					}
				}
				dims := make([]string, len(d.Chunk))
				for i, c := range d.Chunk {
					dims[i] = fmt.Sprint(c)
				}
				want := regexp.MustCompile(`CHUNKED \( ` + strings.Join(dims, ", ") + ` \)`)
				if !want.MatchString(s) {
					t.Errorf("%s %s: h5dump does not show CHUNKED ( %s ):\n%s", v.File, d.Path, strings.Join(dims, ", "), s)
				}
			default:
				t.Errorf("%s %s: unknown layout %q", v.File, d.Path, d.Layout)
			}
		}
	}
}

func TestRunVerifyRealData(t *testing.T) {
	cases := []struct {
		name, input string
		chunked     []string // flags for the chunked run
		vars        int      // variables expected in the manifest
	}{
		// femm: B (3 and 2 components) and the constant record components
		// of E (and B/t), written as constant records.
		{"femm-3d", "hdf5/openpmd-femm/example-femm-3d.h5", []string{"--chunks", "2x2x2"}, 6},
		{"femm-thetaMode", "hdf5/openpmd-femm/example-femm-thetaMode.h5", []string{"--chunk-shape", "1,16,16"}, 6},
		{"fbpic", "hdf5/fbpic", []string{"--chunks", "1x2x4"}, 21}, // 10 meshes, 11 particle components
		{"adios2-types", "hdf5/adios2-hdf5-engine-types_np.h5", []string{"--chunk-shape", "4"}, 2},
	}
	for _, c := range cases {
		for _, layout := range []string{"contiguous", "chunked", "chunked+deflate"} {
			t.Run(c.name+"/"+layout, func(t *testing.T) {
				in := sharedData(t, c.input)
				out := filepath.Join(t.TempDir(), "out")
				args := []string{"run", in, "-o", out, "--layout", strings.TrimSuffix(layout, "+deflate"), "-q"}
				if layout != "contiguous" {
					args = append(args, c.chunked...)
				}
				if layout == "chunked+deflate" {
					args = append(args, "--compress", "deflate:6")
				}
				mustRun(t, args...)
				m := readManifest(t, out)
				if len(m.Variables) != c.vars {
					t.Errorf("%d variables in manifest, want %d", len(m.Variables), c.vars)
				}
				mustRun(t, "verify", in, out)
				oracle(t, in, out)
				checkH5dumpLayout(t, out, m)
				// Nothing is left under temporary names.
				entries, _ := os.ReadDir(out)
				for _, e := range entries {
					if strings.HasSuffix(e.Name(), ".tmp") {
						t.Errorf("temporary file %s left in OUT", e.Name())
					}
				}
			})
		}
	}
}

// TestVerifyDetectsDifference changes one element of an output file with h5py
// and expects verify to exit 1 naming the index.
func TestVerifyDetectsDifference(t *testing.T) {
	in := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", in, "-o", out, "-q")
	m := readManifest(t, out)
	v := m.Variables[0]
	script := fmt.Sprintf("import h5py\nf = h5py.File(%q, 'r+')\nd = f[%q]\nd[3, 4, 5] = d[3, 4, 5] + 1.0\nf.close()\n",
		filepath.Join(out, v.File), v.Datasets[0].Path)
	if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("h5py edit: %v\n%s", err, b)
	}
	for _, mem := range []string{"1GiB", "64KiB"} { // 64 KiB: slabs of a few hundred elements
		r := relayout(t, "verify", "--max-mem", mem, in, out)
		if r.code != 1 {
			t.Fatalf("verify --max-mem %s after edit: exit %d, want 1\n%s\n%s", mem, r.code, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout+r.stderr, "3,4,5") {
			t.Errorf("verify --max-mem %s output does not name index [3,4,5]:\n%s\n%s", mem, r.stdout, r.stderr)
		}
	}
}

// TestVerifyCompressedChunkRows: a deflated output whose chunk rows (16
// rows of 16 chunks) are deeper than verify's bands, with the budget that
// lets verify cache the chunk rows (512 KiB: joint groups of two, bands of
// 4 rows, Bx's 128 KiB row and rho's 64 KiB fit with the bands in three
// quarters of the share) and
// with one that does not (128 KiB: bands of a row, each chunk decoded again
// per band), verifies OK, and an element
// changed with h5py in the second chunk row, inside a chunk, is named by
// its index with its input and output values.
func TestVerifyCompressedChunkRows(t *testing.T) {
	in := sharedData(t, "bp4/generated-lb/lb-bp4.bp")
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", in, "-o", out, "-q", "--layout", "chunked", "--chunk-shape", "16,8,8", "--compress", "deflate:1", "--no-verify")
	mems := []string{"512KiB", "128KiB"}
	for _, mem := range mems {
		r := relayout(t, "verify", "--max-mem", mem, in, out)
		if r.code != 0 || !strings.Contains(r.stdout, "OK  fields/Bx  3 steps") {
			t.Fatalf("verify --max-mem %s: exit %d, want 0 and fields/Bx OK\n%s\n%s", mem, r.code, r.stdout, r.stderr)
		}
	}
	m := readManifest(t, out)
	var file, path string
	for _, v := range m.Variables {
		if v.Name == "fields/Bx" {
			file, path = filepath.Join(out, v.File), v.Datasets[0].Path
		}
	}
	if file == "" {
		t.Fatalf("no fields/Bx in the manifest")
	}
	script := fmt.Sprintf("import h5py\nf = h5py.File(%q, 'r+')\nd = f[%q]\nassert d.chunks == (16, 8, 8) and d.compression == 'gzip', (d.chunks, d.compression)\n"+
		"d[21, 13, 30] = d[21, 13, 30] + 1.0\nf.close()\n", file, path)
	if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("h5py edit: %v\n%s", err, b)
	}
	// fields/Bx at step 0 is ((0*32+i)*32+j)*32+k: 21*1024+13*32+30 = 21950.
	want := "fields/Bx step 0 level 0 at [21,13,30]: in=21950 out=21951"
	for _, mem := range mems {
		r := relayout(t, "verify", "--max-mem", mem, in, out)
		if r.code != 1 || !strings.Contains(r.stdout, want) {
			t.Errorf("verify --max-mem %s after edit: exit %d, want 1 and %q\n%s\n%s", mem, r.code, want, r.stdout, r.stderr)
		}
	}
}

// TestDigestNone: run --digest none records no sha256, yet the verify step
// (before commit, and relayout verify after) still compares every element:
// an edited element is found by its index.
func TestDigestNone(t *testing.T) {
	in := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	out := filepath.Join(t.TempDir(), "out")
	r := mustRun(t, "run", in, "-o", out, "--digest", "none", "--progress", "none")
	if !strings.Contains(r.stdout+r.stderr, "no digest (--digest none)") {
		t.Errorf("run --digest none does not say the digest is not recorded:\n%s\n%s", r.stdout, r.stderr)
	}
	m := readManifest(t, out)
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			if d.SHA256 != "" {
				t.Errorf("%s %s: sha256 %q with --digest none", v.Name, d.Path, d.SHA256)
			}
		}
	}
	oracle(t, in, out)
	v := m.Variables[0]
	script := fmt.Sprintf("import h5py\nf = h5py.File(%q, 'r+')\nd = f[%q]\nd[1, 2, 3] = d[1, 2, 3] + 1.0\nf.close()\n",
		filepath.Join(out, v.File), v.Datasets[0].Path)
	if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("h5py edit: %v\n%s", err, b)
	}
	if r := relayout(t, "verify", in, out); r.code != 1 || !strings.Contains(r.stdout, "1,2,3") {
		t.Errorf("verify after edit: exit %d, want 1 naming [1,2,3]\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"--digest", "md5"}} {
		o := filepath.Join(t.TempDir(), "o")
		if r := relayout(t, append([]string{"run", in, "-o", o}, args...)...); r.code != 2 || !strings.Contains(r.stderr, "--digest") {
			t.Errorf("run %v: exit %d, want 2 naming --digest\n%s", args, r.code, r.stderr)
		}
	}
	// run --resume --digest none: journals without unit sha256, which
	// commit does not demand; the same manifest as run's (no sha256), every
	// element verified, and a rerun is done.
	o := filepath.Join(t.TempDir(), "resume")
	r = mustRun(t, "run", in, "-o", o, "--digest", "none", "--resume", "--unit-size", "64KiB", "--progress", "none")
	if !strings.Contains(r.stderr, "--digest none") || !strings.Contains(r.stdout+r.stderr, "no digest (--digest none)") {
		t.Errorf("run --resume --digest none: no word of the missing digests:\n%s\n%s", r.stdout, r.stderr)
	}
	rm := readManifest(t, o)
	if len(rm.Variables) != len(m.Variables) {
		t.Fatalf("run --resume --digest none: %d variables, run %d", len(rm.Variables), len(m.Variables))
	}
	for i, v := range rm.Variables {
		if len(v.Datasets) != len(m.Variables[i].Datasets) {
			t.Errorf("%s: %d datasets, run %d", v.Name, len(v.Datasets), len(m.Variables[i].Datasets))
		}
		for _, d := range v.Datasets {
			if d.SHA256 != "" {
				t.Errorf("run --resume --digest none: %s %s: sha256 %q", v.Name, d.Path, d.SHA256)
			}
		}
	}
	if v := readManifestMap(t, o)["verified"]; v != true {
		t.Errorf("run --resume --digest none: verified %v", v)
	}
	oracle(t, in, o)
	if r := mustRun(t, "run", in, "-o", o, "--digest", "none", "--resume"); !strings.Contains(r.stderr, "done") {
		t.Errorf("rerun of run --resume --digest none: %s", r.stderr)
	}
}

// finalNames lists what a failed run left under OUT's final names.
func finalNames(t *testing.T, out string) []string {
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if e.Name() != ".relayout" {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestBadInput(t *testing.T) {
	femm := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	dir := t.TempDir()
	whole, err := os.ReadFile(femm)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.h5")
	if err := os.WriteFile(truncated, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	notHDF5 := filepath.Join(dir, "notes.h5")
	if err := os.WriteFile(notHDF5, []byte("these are my lab notes, not HDF5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A filter (id 40000) no HDF5 plugin provides; relayout decodes LZF
	// itself and reads other plugin filters through the library.
	unknown := filepath.Join(dir, "unknown-filter.h5")
	script := fmt.Sprintf(`import h5py
from h5py import h5p, h5z, h5t, h5s, h5d
with h5py.File(%q, 'w') as f:
    dcpl = h5p.create(h5p.DATASET_CREATE)
    dcpl.set_chunk((16,))
    dcpl.set_filter(40000, h5z.FLAG_OPTIONAL, ())
    d = h5d.create(f.id, b'rho', h5t.IEEE_F64LE, h5s.create_simple((64,)), dcpl)
    d.write_direct_chunk((0,), b'x' * 50, filter_mask=0)
`, unknown)
	if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("h5py filter 40000: %v\n%s", err, b)
	}
	inDir := filepath.Join(dir, "series")
	if err := os.MkdirAll(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inDir, "data00000001.h5"), whole, 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, in, out string
		mention       []string // the message must name these
	}{
		{"truncated", truncated, filepath.Join(dir, "o1"), []string{"truncated.h5"}},
		{"not-hdf5", notHDF5, filepath.Join(dir, "o2"), []string{"notes.h5"}},
		{"unsupported-filter", unknown, filepath.Join(dir, "o3"), []string{"unknown-filter.h5", "rho", "40000", "HDF5_PLUGIN_PATH"}},
		{"missing", filepath.Join(dir, "nope.h5"), filepath.Join(dir, "o4"), []string{"nope.h5"}},
		{"output-inside-input", inDir, filepath.Join(inDir, "out"), []string{"inside the input"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := relayout(t, "run", c.in, "-o", c.out)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "panic") || strings.Contains(r.stderr, "goroutine ") {
				t.Fatalf("panicked:\n%s", r.stderr)
			}
			for _, s := range c.mention {
				if !strings.Contains(strings.ToLower(r.stderr), strings.ToLower(s)) {
					t.Errorf("message does not mention %q:\n%s", s, r.stderr)
				}
			}
			if names := finalNames(t, c.out); len(names) > 0 {
				t.Errorf("files under OUT's final names after a failed run: %v", names)
			}
		})
	}
	// The input directory is untouched by the refused run.
	entries, _ := os.ReadDir(inDir)
	if len(entries) != 1 {
		t.Errorf("input directory changed: %d entries", len(entries))
	}
}

func TestNonEmptyOutputNeedsForce(t *testing.T) {
	in := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "keep.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := relayout(t, "run", in, "-o", out, "-q"); r.code != 2 || !strings.Contains(r.stderr, "--force") {
		t.Fatalf("non-empty OUT: exit %d\n%s", r.code, r.stderr)
	}
	mustRun(t, "run", in, "-o", out, "-q", "--force")
	if _, err := os.Stat(filepath.Join(out, "keep.txt")); err != nil {
		t.Errorf("--force removed an unrelated file: %v", err)
	}
}

func TestUsageAndHelp(t *testing.T) {
	for _, cmd := range []string{"run", "catalog", "verify", "generate"} {
		r := relayout(t, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Example:") || !strings.Contains(r.stdout, "Exit codes") {
			t.Errorf("%s --help: exit %d\n%s", cmd, r.code, r.stdout)
		}
	}
	if r := relayout(t, "run"); r.code != 2 {
		t.Errorf("run without input: exit %d, want 2", r.code)
	}
	if r := relayout(t, "frobnicate"); r.code != 2 {
		t.Errorf("unknown command: exit %d, want 2", r.code)
	}
	// A decomposition whose rank does not fit an array fails before anything is written.
	in := sharedData(t, "hdf5/adios2-hdf5-engine-types_np.h5")
	out := filepath.Join(t.TempDir(), "out")
	r := relayout(t, "run", in, "-o", out, "--layout", "chunked", "--chunks", "2x2")
	if r.code != 2 || !strings.Contains(r.stderr, "varR64") {
		t.Errorf("rank-mismatched --chunks: exit %d, want 2 naming varR64\n%s", r.code, r.stderr)
	}
	if stage, _ := os.ReadDir(filepath.Join(out, ".relayout", "stage")); len(stage) > 0 || len(finalNames(t, out)) > 0 {
		t.Errorf("files written before the plan was checked: stage %v, final %v", stage, finalNames(t, out))
	}
}

// TestGeneratedSeries runs the demo's path at a smaller size and checks values
// against the generator's rule independently with h5py.
func TestGeneratedSeries(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "sample"), filepath.Join(dir, "out")
	mustRun(t, "generate", in, "--shape", "20,12,9", "--chunk", "8,5,4", "--steps", "0,7")
	r := mustRun(t, "catalog", in, "--json")
	var cat struct {
		Format    string
		Variables []struct {
			Name   string
			Steps  []int64
			Blocks int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &cat); err != nil {
		t.Fatalf("catalog --json: %v\n%s", err, r.stdout)
	}
	if cat.Format != "openpmd-hdf5" || len(cat.Variables) != 4 {
		t.Fatalf("catalog: %+v", cat)
	}
	for _, v := range cat.Variables {
		if v.Blocks != 2*3*3*3 || len(v.Steps) != 2 { // ceil(20/8)*ceil(12/5)*ceil(9/4) chunks per step
			t.Errorf("%s: %d blocks over steps %v, want 54 over 2", v.Name, v.Blocks, v.Steps)
		}
	}
	mustRun(t, "run", in, "-o", out, "--layout", "chunked", "--chunk-shape", "7,7,7", "-q")
	oracle(t, in, out)
	// The rule, evaluated by numpy, against the output.
	check := fmt.Sprintf(`
import h5py, numpy as np, json, os
out = %q
m = json.load(open(os.path.join(out, "relayout.json")))
comps = ["E/x", "E/y", "E/z", "rho"]
for v in m["variables"]:
    with h5py.File(os.path.join(out, v["file"]), "r") as f:
        for d in v["datasets"]:
            s = d["step"]; NX, NY, NZ = d["shape"]
            i, j, k = np.meshgrid(np.arange(NX), np.arange(NY), np.arange(NZ), indexing="ij")
            want = (((s*NX + i)*NY + j)*NZ + k).astype(np.float64)*4 + comps.index(v["name"])
            assert np.array_equal(f[d["path"]][()], want), (v["name"], s)
print("rule ok")
`, out)
	if b, err := exec.Command(python, "-c", check).CombinedOutput(); err != nil {
		t.Fatalf("value rule: %v\n%s", err, b)
	}
}

// TestInterrupt sends SIGINT to a running job: exit 130, nothing under OUT's
// final names.
func TestInterrupt(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "sample"), filepath.Join(dir, "out")
	mustRun(t, "generate", in, "--shape", "160,160,160", "--chunk", "16,16,16", "--steps", "0,1,2")
	cmd := exec.Command(binary, "run", in, "-o", out, "-q", "--jobs", "1")
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the job is rewriting (the stage holds a temporary file).
	deadline := time.Now().Add(20 * time.Second)
	for {
		tmp, _ := filepath.Glob(filepath.Join(out, ".relayout", "stage", ".*.tmp"))
		if len(tmp) > 0 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("run never started writing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130\n%s", code, errb.String())
	}
	// The message says what OUT/.relayout holds and how to go on.
	if msg := errb.String(); !strings.Contains(msg, "nothing was committed to "+out) || !strings.Contains(msg, "--resume") ||
		!strings.Contains(msg, "or delete "+filepath.Join(out, ".relayout")) {
		t.Errorf("the interrupted message does not say how to continue:\n%s", msg)
	}
	if names := finalNames(t, out); len(names) > 0 {
		t.Errorf("files under OUT's final names after an interrupted run: %v", names)
	}
	// No temporary file is left behind either (the rewriter removes its
	// .<file>.tmp when a variable fails or is cancelled).
	filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".tmp") {
			t.Errorf("temporary file left after an interrupted run: %s", p)
		}
		return nil
	})
}

// TestVerifyChecksumAndExact: an output of small blocks (bp4/generated-lb:
// under 2 KiB on average) verifies by positional checksum (the
// "compare:" line says so) and with --exact element by element (no such
// line), with the same OK lines; an element changed with h5py is found by
// both, at the same index with the same values.
func TestVerifyChecksumAndExact(t *testing.T) {
	in := sharedData(t, "bp4/generated-lb/lb-bp4.bp")
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", in, "-o", out, "-q")
	okLines := func(s string) (ok []string) {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "OK ") || strings.HasPrefix(l, "DIFF ") {
				ok = append(ok, l)
			}
		}
		return ok
	}
	quick := mustRun(t, "verify", in, out)
	exact := mustRun(t, "verify", "--exact", in, out)
	if !strings.Contains(quick.stdout, "compare: ") || strings.Contains(exact.stdout, "compare: ") {
		t.Fatalf("verify says no checksum, or --exact says one:\n%s\n--exact:\n%s", quick.stdout, exact.stdout)
	}
	if q, e := okLines(quick.stdout), okLines(exact.stdout); len(q) < 5 || strings.Join(q, "\n") != strings.Join(e, "\n") {
		t.Fatalf("OK lines differ:\n%s\n--exact:\n%s", quick.stdout, exact.stdout)
	}
	m := readManifest(t, out)
	var file, path string
	for _, v := range m.Variables {
		if v.Name == "fields/rho" {
			file, path = v.File, v.Datasets[1].Path
		}
	}
	script := fmt.Sprintf("import h5py\nf = h5py.File(%q, 'r+')\nd = f[%q]\nd[7, 9, 30] = d[7, 9, 30] + 0.5\nf.close()\n",
		filepath.Join(out, file), path)
	if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("h5py edit: %v\n%s", err, b)
	}
	var diffs []string
	for _, args := range [][]string{{"verify", in, out}, {"verify", "--exact", in, out}} {
		r := relayout(t, args...)
		d := ""
		for _, l := range okLines(r.stdout) {
			if strings.HasPrefix(l, "DIFF ") {
				d = l
			}
		}
		if r.code != 1 || !strings.Contains(d, "fields/rho step 1 level 0 at [7,9,30]: in=") {
			t.Fatalf("%v after the edit: exit %d, DIFF %q\n%s\n%s", args, r.code, d, r.stdout, r.stderr)
		}
		diffs = append(diffs, d)
	}
	if diffs[0] != diffs[1] {
		t.Errorf("the checksum path reports %q, --exact %q", diffs[0], diffs[1])
	}
}
