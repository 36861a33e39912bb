package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// outTree is a digest of every file of OUT outside OUT/.relayout, by name
// and content: what a refused or interrupted append must leave unchanged.
func outTree(t *testing.T, out string) string {
	t.Helper()
	h := sha256.New()
	var names []string
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".relayout" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s\x00", strings.TrimPrefix(n, out))
		io.Copy(h, f)
		f.Close()
	}
	return hex.EncodeToString(h.Sum(nil))
}

// copyKeep copies the files names of from into dir, keeping their
// modification times (as the writer left them).
func copyKeep(t *testing.T, from, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(from, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(dir, n), st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

type appendManifest struct {
	Variables []struct {
		Name     string
		Species  string
		Datasets []struct {
			Step int64
			Path string
		}
		Constants []struct {
			Step int64
		}
	}
	Appends []struct {
		Inputs   []string
		Datasets []struct {
			Var  string
			Step int64
		}
	}
}

func readAppendManifest(t *testing.T, out string) appendManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m appendManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// datasetDigests lists every dataset of OUT's manifest (variable, path,
// shape, sha256), sorted.
func datasetDigests(t *testing.T, out string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Variables []struct {
			Name                string
			Datasets, Constants []struct {
				Path   string
				Shape  []int64
				SHA256 string
			}
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var l []string
	for _, v := range m.Variables {
		for _, d := range append(v.Datasets, v.Constants...) {
			l = append(l, fmt.Sprintf("%s %s %v %s", v.Name, d.Path, d.Shape, d.SHA256))
		}
	}
	slices.Sort(l)
	return l
}

func iterFile(it int) string { return fmt.Sprintf("openpmd_%06d.h5", it) }

// TestAppendOpenPMDIterations: a file-based openPMD series written by
// openPMD-api with 3 iterations is converted; the series gains 2 iterations
// and run --append adds them: openPMD-api and h5py read all 5 iterations of
// OUT equal to the input's, the manifest lists 5 steps of every mesh and
// records the append, relayout verify passes. An append killed once its
// stage is verified, just before the commit, leaves OUT byte for byte as it
// was (and verifying against the old input). A changed old iteration, or a
// removed one, is refused naming it, with OUT unchanged.
func TestAppendOpenPMDIterations(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	testkit.OpenPMDGen(t, "write", gen, "--backend", "h5", "--encoding", "file",
		"--shape", "24,20,16", "--particles", "300", "--seed", "5", "--iterations", "0,100,200,300,400,500")
	in, in3, out := filepath.Join(dir, "in"), filepath.Join(dir, "in3"), filepath.Join(dir, "out")
	copyKeep(t, gen, in, iterFile(0), iterFile(100), iterFile(200))
	copyKeep(t, gen, in3, iterFile(0), iterFile(100), iterFile(200)) // the old input, for verify
	mustRun(t, "run", in, "-o", out, "-q")
	before := outTree(t, out)

	// A SIGKILL after the stage is written and verified, before the
	// commit record: OUT is the old output.
	copyKeep(t, gen, in, iterFile(300), iterFile(400))
	killed(t, []string{"RELAYOUT_TEST_KILL_AT=commit"}, "run", in, "-o", out, "--append", "-q")
	if got := outTree(t, out); got != before {
		t.Fatalf("an append killed before its commit changed OUT")
	}
	mustRun(t, "verify", in3, out, "-q")

	// The append itself.
	r := mustRun(t, "run", in, "-o", out, "--append")
	if !strings.Contains(r.stderr, "appended: ") {
		t.Errorf("run --append does not say what it appended:\n%s", r.stderr)
	}
	mustRun(t, "verify", in, out, "-q")
	// openPMD-api (series.h5 and every variable's file) and h5py: every
	// element of the 5 iterations equals the input series'.
	checkOpenPMD(t, filepath.Join(in, "openpmd_%06T.h5"), out)
	m := readAppendManifest(t, out)
	for _, v := range m.Variables {
		if v.Species != "" {
			continue
		}
		var steps []int64
		for _, d := range v.Datasets {
			steps = append(steps, d.Step)
		}
		for _, d := range v.Constants {
			steps = append(steps, d.Step)
		}
		slices.Sort(steps)
		if !slices.Equal(steps, []int64{0, 100, 200, 300, 400}) {
			t.Errorf("%s: manifest steps %v, want 0..400", v.Name, steps)
		}
	}
	if len(m.Appends) != 1 || !slices.Equal(m.Appends[0].Inputs, []string{iterFile(300), iterFile(400)}) || len(m.Appends[0].Datasets) == 0 {
		t.Errorf("manifest appends %+v, want one of inputs %s, %s", m.Appends, iterFile(300), iterFile(400))
	} else {
		for _, d := range m.Appends[0].Datasets {
			if d.Step != 300 && d.Step != 400 {
				t.Errorf("manifest appends: %s step %d was not added by the append", d.Var, d.Step)
			}
		}
	}
	// Again with nothing new: done, nothing changes.
	in5 := filepath.Join(dir, "in5") // the input OUT now holds, for verify
	copyKeep(t, in, in5, iterFile(0), iterFile(100), iterFile(200), iterFile(300), iterFile(400))
	// The same datasets with the same digests as a fresh run on the 5
	// iterations.
	fresh := filepath.Join(dir, "fresh")
	mustRun(t, "run", in5, "-o", fresh, "-q")
	if got, want := datasetDigests(t, out), datasetDigests(t, fresh); !slices.Equal(got, want) {
		t.Errorf("the appended output's datasets and digests differ from a fresh run's:\n%v\n%v", got, want)
	}
	after := outTree(t, out)
	mustRun(t, "run", in, "-o", out, "--append", "-q")
	if outTree(t, out) != after {
		t.Errorf("an append with nothing new changed OUT")
	}

	// An old iteration rewritten with other values, with a new iteration
	// beside it: refused naming the array, OUT unchanged.
	testkit.PeersPython(t, "-c", `import h5py, sys
f = h5py.File(sys.argv[1], "r+"); d = f["/data/100/fields/E/x"]; d[1, 2, 3] = d[1, 2, 3] + 1.0; f.close()`, filepath.Join(in, iterFile(100)))
	copyKeep(t, gen, in, iterFile(500))
	r = relayout(t, "run", in, "-o", out, "--append", "-q")
	if r.code == 0 || !strings.Contains(r.stderr, "E/x step 100") || !strings.Contains(r.stderr, iterFile(100)) {
		t.Errorf("an append over a changed iteration: exit %d, want a refusal naming E/x step 100 and %s:\n%s", r.code, iterFile(100), r.stderr)
	}
	if outTree(t, out) != after {
		t.Errorf("a refused append changed OUT")
	}
	if _, err := os.Stat(filepath.Join(out, ".relayout", "stage")); err == nil {
		t.Errorf("a refused append left its stage in %s", filepath.Join(out, ".relayout"))
	}
	mustRun(t, "verify", in5, out, "-q")

	// The changed iteration alone (nothing new): refused naming its file.
	os.Remove(filepath.Join(in, iterFile(500)))
	r = relayout(t, "run", in, "-o", out, "--append", "-q")
	if r.code == 0 || !strings.Contains(r.stderr, iterFile(100)) {
		t.Errorf("an append with a changed iteration and nothing new: exit %d, want a refusal naming %s:\n%s", r.code, iterFile(100), r.stderr)
	}

	// An iteration removed: refused naming its file.
	copyKeep(t, gen, in, iterFile(100), iterFile(500))
	os.Remove(filepath.Join(in, iterFile(200)))
	r = relayout(t, "run", in, "-o", out, "--append", "-q")
	if r.code == 0 || !strings.Contains(r.stderr, iterFile(200)+" is gone") {
		t.Errorf("an append with an iteration removed: exit %d, want a refusal naming %s:\n%s", r.code, iterFile(200), r.stderr)
	}
	if outTree(t, out) != after {
		t.Errorf("a refused append changed OUT")
	}
	mustRun(t, "verify", in5, out, "-q")
}

// TestAppendBPSteps: a BP4 and a BP5 dataset written by the real ADIOS2
// writer (bp_append.py) with 3 steps are converted; the writer reopens each
// in append mode and adds 2 steps, and run --append adds them: h5py reads
// all 5 steps of OUT equal to the writer's values, relayout verify passes,
// the manifest records the append. The dataset rewritten with other values
// (a file rewritten), or with fewer steps (a step removed), is refused
// naming the array, OUT unchanged.
func TestAppendBPSteps(t *testing.T) {
	for _, engine := range []string{"BP4", "BP5"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "d.bp"), filepath.Join(dir, "out")
			testkit.PeersPython(t, "bp_append.py", "write", in, engine, "0", "3")
			mustRun(t, "run", in, "-o", out, "-q")
			testkit.PeersPython(t, "bp_append.py", "append", in, engine, "3", "2")
			mustRun(t, "run", in, "-o", out, "--append", "-q")
			mustRun(t, "verify", in, out, "-q")
			t.Log(testkit.PeersPython(t, "bp_append.py", "check", out, "0", "1", "2", "3", "4"))
			m := readAppendManifest(t, out)
			if len(m.Appends) != 1 || len(m.Appends[0].Datasets) != 4 {
				t.Errorf("manifest appends %+v, want one of 4 datasets (T and P at steps 3 and 4)", m.Appends)
			}
			after := outTree(t, out)

			// Rewritten with other values and a sixth step.
			testkit.PeersPython(t, "bp_append.py", "write", in, engine, "0", "6", "7")
			r := relayout(t, "run", in, "-o", out, "--append", "-q")
			if r.code == 0 || !strings.Contains(r.stderr, "step 0") || !strings.Contains(r.stderr, "other values") {
				t.Errorf("an append over a rewritten dataset: exit %d, want a refusal naming step 0:\n%s", r.code, r.stderr)
			}
			if outTree(t, out) != after {
				t.Errorf("a refused append changed OUT")
			}
			// Rewritten with fewer steps.
			testkit.PeersPython(t, "bp_append.py", "write", in, engine, "0", "2")
			r = relayout(t, "run", in, "-o", out, "--append", "-q")
			if r.code == 0 || !strings.Contains(r.stderr, "no longer in the input") {
				t.Errorf("an append over a dataset with fewer steps: exit %d, want a refusal naming the step removed:\n%s", r.code, r.stderr)
			}
			if outTree(t, out) != after {
				t.Errorf("a refused append changed OUT")
			}
		})
	}
}

// TestAppendNetCDFStream: a stream of MPAS-Ocean monthly history files
// (CDF-2, one record each) is converted to time series over 3 months; 2
// more months arrive and run --append extends every time series' record
// dimension: the files named by their record range are replaced (the old
// ones removed after the new manifest), relayout verify passes against
// the 5 months, the manifest records each dataset extended from 3 records.
// A month already converted replaced by another is refused naming the
// variable, OUT unchanged.
func TestAppendNetCDFStream(t *testing.T) {
	src := sharedData(t, "netcdf/mpas-o-monthly")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	month := func(m int) string { return fmt.Sprintf("mpaso.hist.am.timeSeriesStatsMonthly.0002-%02d-01.nc", m) }
	copyKeep(t, src, in, month(1), month(2), month(3))
	glob := filepath.Join(in, "mpaso.hist.*.nc")
	mustRun(t, "run", glob, "-o", out, "-q")
	copyKeep(t, src, in, month(4), month(5))
	mustRun(t, "run", glob, "-o", out, "--append", "-q")
	mustRun(t, "verify", glob, out, "-q")
	names := finalNames(t, out)
	for _, n := range names {
		if strings.HasSuffix(n, "_000203.nc") {
			t.Errorf("the time series file of 3 records %s is left beside its extension", n)
		}
	}
	var m struct {
		Variables []struct {
			Name, File string
			Datasets   []struct{ Shape []int64 }
		}
		Appends []struct {
			Datasets []struct {
				Var          string
				ExtendedFrom []int64 `json:"extended_from"`
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Variables {
		if !strings.HasSuffix(v.File, "_000201_000205.nc") || len(v.Datasets) == 0 || v.Datasets[0].Shape[0] != 5 {
			t.Errorf("%s: %s %+v, want 5 records in a file named for 0002-01..0002-05", v.Name, v.File, v.Datasets)
		}
	}
	if len(m.Appends) != 1 || len(m.Appends[0].Datasets) != len(m.Variables) {
		t.Errorf("manifest appends %+v, want one extending each of the %d variables", m.Appends, len(m.Variables))
	} else {
		for _, d := range m.Appends[0].Datasets {
			if len(d.ExtendedFrom) == 0 || d.ExtendedFrom[0] != 3 {
				t.Errorf("manifest appends: %s extended from %v, want 3 records", d.Var, d.ExtendedFrom)
			}
		}
	}
	fresh := filepath.Join(dir, "fresh")
	mustRun(t, "run", glob, "-o", fresh, "-q")
	if got, want := datasetDigests(t, out), datasetDigests(t, fresh); !slices.Equal(got, want) {
		t.Errorf("the appended time series differ from a fresh run's:\n%v\n%v", got, want)
	}
	if got, want := finalNames(t, out), finalNames(t, fresh); !slices.Equal(got, want) {
		t.Errorf("the appended output holds %v, a fresh run %v", got, want)
	}
	after := outTree(t, out)
	// A value of month 2 changed (a byte of the last record's arrays,
	// 30,000 bytes before the end: inside a float64 array, the records'
	// times are at their end), month 6 added: refused.
	p2 := filepath.Join(in, month(2))
	b, err = os.ReadFile(p2)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-30000] ^= 1
	if err := os.WriteFile(p2, b, 0o644); err != nil {
		t.Fatal(err)
	}
	copyKeep(t, src, in, month(6))
	r := relayout(t, "run", glob, "-o", out, "--append", "-q")
	if r.code == 0 || !strings.Contains(r.stderr, "other values") || !strings.Contains(r.stderr, month(2)) {
		t.Errorf("an append over a replaced month: exit %d, want a refusal naming the array and %s:\n%s", r.code, month(2), r.stderr)
	}
	if outTree(t, out) != after {
		t.Errorf("a refused append changed OUT")
	}
}

// appendCrashLoop kills run --append with SIGKILL just before each rename
// n of kills (RELAYOUT_TEST_KILL_AT=rename:N; N equal to the number of
// renames: after the manifest's, before the old files are removed) on a
// copy of the finished output base: at every instant OUT verifies against
// the input its manifest describes (old while the old manifest is in place,
// new after), and rerunning the append finishes it: the same manifest
// datasets as an uninterrupted append, verified against the grown input.
func appendCrashLoop(t *testing.T, base, oldIn, in string, renames int, kills []int, want string) {
	t.Helper()
	for _, n := range kills {
		out := filepath.Join(t.TempDir(), "out")
		if b, err := exec.Command("cp", "-a", base, out).CombinedOutput(); err != nil {
			t.Fatalf("cp -a: %v\n%s", err, b)
		}
		killed(t, []string{fmt.Sprintf("RELAYOUT_TEST_KILL_AT=rename:%d", n)}, "run", in, "-o", out, "--append", "-q")
		if n < renames {
			// The old manifest: the old output, extended files beside.
			mustRun(t, "verify", oldIn, out, "-q")
		} else {
			mustRun(t, "verify", in, out, "-q")
		}
		mustRun(t, "run", in, "-o", out, "--append", "-q")
		mustRun(t, "verify", in, out, "-q")
		if got := strings.Join(finalNames(t, out), " "); got != want {
			t.Errorf("kill before rename %d: OUT holds %s after the rerun, an uninterrupted append %s", n, got, want)
		}
	}
}

// TestAppendCrashLoop: run --append of a netCDF stream (a time series file
// per variable replaced by one of a wider record range) and of an openPMD
// series (files replaced by their extended copies), killed before each
// rename of its commit (some, for openPMD's many views) and after the last.
func TestAppendCrashLoop(t *testing.T) {
	t.Run("netcdf", func(t *testing.T) {
		src := sharedData(t, "netcdf/mpas-o-monthly")
		dir := t.TempDir()
		month := func(m int) string { return fmt.Sprintf("mpaso.hist.am.timeSeriesStatsMonthly.0002-%02d-01.nc", m) }
		old, in := filepath.Join(dir, "old"), filepath.Join(dir, "in")
		copyKeep(t, src, old, month(1), month(2), month(3))
		copyKeep(t, src, in, month(1), month(2), month(3))
		glob, oldGlob := filepath.Join(in, "mpaso.hist.*.nc"), filepath.Join(old, "mpaso.hist.*.nc")
		base := filepath.Join(dir, "base")
		mustRun(t, "run", glob, "-o", base, "-q")
		copyKeep(t, src, in, month(4), month(5))
		ref := filepath.Join(dir, "ref")
		exec.Command("cp", "-a", base, ref).Run()
		mustRun(t, "run", glob, "-o", ref, "--append", "-q")
		names := finalNames(t, ref)
		var kills []int
		for n := 0; n <= len(names); n++ { // the files and the manifest, then after
			kills = append(kills, n)
		}
		appendCrashLoop(t, base, oldGlob, glob, len(names), kills, strings.Join(names, " "))
	})
	t.Run("openpmd", func(t *testing.T) {
		dir := t.TempDir()
		gen := filepath.Join(dir, "gen")
		testkit.OpenPMDGen(t, "write", gen, "--backend", "h5", "--encoding", "file",
			"--shape", "16,12,8", "--particles", "50", "--seed", "3", "--iterations", "0,100,200")
		old, in, base := filepath.Join(dir, "old"), filepath.Join(dir, "in"), filepath.Join(dir, "base")
		copyKeep(t, gen, old, iterFile(0), iterFile(100))
		copyKeep(t, gen, in, iterFile(0), iterFile(100))
		mustRun(t, "run", in, "-o", base, "-q")
		copyKeep(t, gen, in, iterFile(200))
		ref := filepath.Join(dir, "ref")
		exec.Command("cp", "-a", base, ref).Run()
		mustRun(t, "run", in, "-o", ref, "--append", "-q")
		names := finalNames(t, ref)
		n := len(names)
		appendCrashLoop(t, base, old, in, n, []int{0, 1, n / 2, n - 1, n}, strings.Join(names, " "))
	})
}
