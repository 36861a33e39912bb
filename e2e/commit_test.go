package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// readManifestMap is OUT's manifest as a JSON object.
func readManifestMap(t *testing.T, out string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// comparableManifest is OUT's manifest without what differs from run to
// run of the same job: the I/O profile and the report (times).
func comparableManifest(t *testing.T, out string) map[string]any {
	t.Helper()
	m := readManifestMap(t, out)
	delete(m, "io")
	delete(m, "report")
	delete(m, "started") // when this run began and finished, like io
	delete(m, "finished")
	return m
}

// h5Digests reads every dataset of every .h5 file in each dir with h5py
// (one process for all dirs) and returns, per dir, "file:path" -> sha256 of
// its values as row-major little-endian bytes.
func h5Digests(t *testing.T, dirs []string) []map[string]string {
	t.Helper()
	const script = `
import hashlib, json, os, sys
import h5py
res = []
for d in sys.argv[1:]:
    r = {}
    for fn in sorted(os.listdir(d)):
        if not fn.endswith(".h5"):
            continue
        with h5py.File(os.path.join(d, fn), "r") as f:
            def visit(name, o):
                if isinstance(o, h5py.Dataset) and o.dtype.kind in "iuf":
                    a = o[()]
                    r[fn + ":" + name] = hashlib.sha256(a.astype(a.dtype.newbyteorder("<")).tobytes()).hexdigest()
            f.visititems(visit)
    res.append(r)
print(json.dumps(res))
`
	cmd := exec.Command(python, append([]string{"-c", script}, dirs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("h5py: %v\n%s", err, stderr.String())
	}
	var res []map[string]string
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// killed runs relayout with env, expecting it to die of SIGKILL.
func killed(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("relayout %v with %v: %v, not killed\n%s", args, env, err, stderr.String())
	}
}

// TestCommitCrashLoop kills run and run --resume with SIGKILL just before
// every rename of their commit (RELAYOUT_TEST_KILL_AT=rename:N, N from the
// first rename to after the last) and at random instants, reruns the same
// command, and expects the uninterrupted output every time: the same
// manifest (minus I/O profile and report), the same values read by h5py,
// and relayout verify.
func TestCommitCrashLoop(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "32,32,32")
	plain := func(out string) []string { return []string{"run", in, "-o", out, "-q", "--jobs", "2"} }
	resume := func(out string) []string {
		return []string{"run", in, "-o", out, "-q", "--jobs", "2", "--resume", "--unit-size", "64KiB"}
	}
	type variant struct {
		name string
		args func(string) []string
	}
	variants := []variant{{"run", plain}, {"run --resume", resume}}
	var dirs []string
	var refs []map[string]any
	for i, v := range variants {
		ref := filepath.Join(dir, fmt.Sprintf("ref%d", i))
		mustRun(t, v.args(ref)...)
		refs = append(refs, comparableManifest(t, ref))
		dirs = append(dirs, ref)
	}
	oracle(t, in, dirs[0])
	renames := len(refs[0]["variables"].([]any)) + 2 // the variables' files, series.h5, the manifest
	type outcome struct {
		variant int
		out     string
		what    string
	}
	var outs []outcome
	for vi, v := range variants {
		for n := 0; n <= renames; n++ {
			out := filepath.Join(dir, fmt.Sprintf("v%d-rename%d", vi, n))
			killed(t, []string{fmt.Sprintf("RELAYOUT_TEST_KILL_AT=rename:%d", n)}, v.args(out)...)
			if n > 0 && n < renames {
				if _, err := os.Stat(filepath.Join(out, "relayout.json")); err == nil {
					t.Fatalf("%s killed before rename %d: manifest already in OUT", v.name, n)
				}
			}
			r := relayout(t, v.args(out)...)
			if r.code != 0 {
				t.Fatalf("%s killed before rename %d, rerun: exit %d\n%s", v.name, n, r.code, r.stderr)
			}
			outs = append(outs, outcome{vi, out, fmt.Sprintf("%s killed before rename %d of %d", v.name, n, renames)})
		}
	}
	// Random instants of the plain run (TestCrashResume does run --resume).
	start := time.Now()
	mustRun(t, plain(filepath.Join(dir, "timing"))...)
	full := time.Since(start)
	const randomKills = 4
	for i := range randomKills {
		out := filepath.Join(dir, fmt.Sprintf("random%d", i))
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(full)+1))
		cmd := exec.Command(binary, plain(out)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		timer := time.AfterFunc(time.Duration(n.Int64()), func() { cmd.Process.Signal(syscall.SIGKILL) })
		cmd.Wait()
		timer.Stop()
		if r := relayout(t, plain(out)...); r.code != 0 {
			t.Fatalf("run killed after %v, rerun: exit %d\n%s", time.Duration(n.Int64()), r.code, r.stderr)
		}
		outs = append(outs, outcome{0, out, fmt.Sprintf("run killed after %v", time.Duration(n.Int64()))})
	}
	for _, o := range outs {
		if got := comparableManifest(t, o.out); !reflect.DeepEqual(got, refs[o.variant]) {
			t.Fatalf("%s: manifest differs from the uninterrupted run's\ngot  %v\nwant %v", o.what, got, refs[o.variant])
		}
		mustRun(t, "verify", in, o.out)
		dirs = append(dirs, o.out)
	}
	digests := h5Digests(t, dirs)
	for i, o := range outs {
		if got, want := digests[len(variants)+i], digests[o.variant]; !reflect.DeepEqual(got, want) || len(want) == 0 {
			t.Fatalf("%s: h5py reads other values than in the uninterrupted run (%d datasets, want %d)", o.what, len(got), len(want))
		}
	}
	t.Logf("%d of %d killed runs (every rename of run and run --resume's commit, %d random instants in [0, %v]) rerun to the uninterrupted output (manifest, h5py values, verify)",
		len(outs), len(outs), randomKills, full)
}

// TestRerunFinishedOutput: a rerun of the same command on a finished OUT
// is done (exit 0) for run and run --resume alike; other options or a
// changed input file are refused (exit 2) naming the difference; --force
// replaces the output.
func TestRerunFinishedOutput(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "32,32,32")
	out := filepath.Join(dir, "out")
	mustRun(t, "run", in, "-o", out, "-q")
	for _, extra := range [][]string{nil, {"--resume"}} {
		r := mustRun(t, append([]string{"run", in, "-o", out}, extra...)...)
		if !strings.Contains(r.stderr, "done") {
			t.Fatalf("run %v on a finished OUT: %s", extra, r.stderr)
		}
	}
	r := relayout(t, "run", in, "-o", out, "--layout", "chunked", "--chunks", "2x2x2")
	if r.code != 2 || !strings.Contains(r.stderr, `layout was "contiguous", now "chunked"`) {
		t.Fatalf("other options on a finished OUT: exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(in, "*.h5"))
	if len(files) == 0 {
		t.Fatalf("no input files in %s", in)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(files[0], later, later); err != nil {
		t.Fatal(err)
	}
	r = relayout(t, "run", in, "-o", out, "--resume")
	if r.code != 2 || !strings.Contains(r.stderr, filepath.Base(files[0])+": modified") {
		t.Fatalf("changed input on a finished OUT: exit %d\n%s", r.code, r.stderr)
	}
	for _, extra := range [][]string{{"--layout", "chunked", "--chunks", "2x2x2"}, {"--resume"}} {
		mustRun(t, append([]string{"run", in, "-o", out, "-q", "--force"}, extra...)...)
		mustRun(t, "verify", in, out)
		if r := mustRun(t, append([]string{"run", in, "-o", out}, extra...)...); !strings.Contains(r.stderr, "done") {
			t.Fatalf("rerun after --force %v: %s", extra, r.stderr)
		}
	}
	m := readManifest(t, out)
	if m.Variables[0].Datasets[0].Layout != "contiguous" {
		t.Fatalf("--force --resume did not replace the chunked output: %+v", m.Variables[0].Datasets[0])
	}
	oracle(t, in, out)
}

// TestShardedCommitRollForward: relayout commit killed between two of its
// renames is finished by the next relayout commit (and a rewrite of a
// shard meanwhile does no harm).
func TestShardedCommitRollForward(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "32,32,32")
	ref := filepath.Join(dir, "ref")
	mustRun(t, "run", in, "-o", ref, "-q", "--layout", "chunked", "--chunks", "2x2x2")
	out := filepath.Join(dir, "out")
	mustRun(t, "plan", in, "-o", out, "--shards", "2", "--layout", "chunked", "--chunks", "2x2x2")
	mustRun(t, "rewrite", out, "--shard", "0/2", "-q")
	mustRun(t, "rewrite", out, "--shard", "1/2", "-q")
	killed(t, []string{"RELAYOUT_TEST_KILL_AT=rename:2"}, "commit", out, "-q")
	if _, err := os.Stat(filepath.Join(out, "relayout.json")); err == nil {
		t.Fatal("manifest in OUT after a commit killed before its third rename")
	}
	if len(finalEntries(out)) != 2 {
		t.Fatalf("OUT holds %v after two renames", finalEntries(out))
	}
	mustRun(t, "rewrite", out, "--shard", "1/2", "-q")
	r := mustRun(t, "commit", out)
	if !strings.Contains(r.stderr, "finished the commit") {
		t.Fatalf("commit after a killed commit: %s", r.stderr)
	}
	sameSums(t, "commit rolled forward", datasetSums(t, out), datasetSums(t, ref))
	mustRun(t, "verify", in, out)
	if r := mustRun(t, "commit", out); !strings.Contains(r.stderr, "done") {
		t.Fatalf("commit on a committed OUT: %s", r.stderr)
	}
}

// TestJournaledIO: a journaled job's manifest has the io section its
// units' journal records can give ("from": "journal"), the same figures
// as relayout run's counters of the same input where both know them, and
// none of those it cannot know. On ADIOS2's BP4 and BP5 output
// (generated-lb: 4 variables of 32^3 in 8^3 blocks, fine/Ez partly
// covered), contiguous and chunked, journaled by run --resume (with
// --digest none too: the records count blocks without unit digests) and
// by plan -o, rewrite of 2 shards, commit:
//   - logical_bytes and write_bytes equal run's exactly: the same arrays,
//     encoded the same way (deterministic deflate), written once; the
//     journal counts each unit's bytes, run each pwrite's;
//   - read_bytes equals the sum of catalog --json's stored_bytes (each
//     array here is one unit, so no block counts twice), and run's
//     read_bytes lies between it and 1.05x the data files: run counts the
//     gaps its coalesced reads read through (BP4's block headers, 5% of
//     these 4 KiB blocks), the journal counts the blocks' stored bytes;
//   - wall_seconds, read_calls and the stage seconds are absent.
func TestJournaledIO(t *testing.T) {
	for _, in := range []string{"bp4/generated-lb/lb-bp4.bp", "bp5/generated-lb/lb-bp5.bp"} {
		in := sharedData(t, in)
		stored, files := storedBytes(t, in), dataFileBytes(t, in)
		for _, layout := range [][]string{nil, {"--layout", "chunked", "--chunk-shape", "8,16,16"}} {
			dir := t.TempDir()
			ref := filepath.Join(dir, "run")
			mustRun(t, append([]string{"run", in, "-o", ref, "-q"}, layout...)...)
			want, _ := readManifestMap(t, ref)["io"].(map[string]any)
			if r := want["read_bytes"].(float64); r < float64(stored) || r > 1.05*float64(files) {
				t.Errorf("%s %q: run read %d bytes, want %d (stored) to 1.05x %d (data files)", in, layout, int64(r), stored, files)
			}
			jobs := map[string][][]string{
				"resume":             {append([]string{"run", in, "-o", "OUT", "-q", "--resume"}, layout...)},
				"resume digest none": {append([]string{"run", in, "-o", "OUT", "-q", "--resume", "--digest", "none"}, layout...)},
				"plan rewrite commit": {
					append([]string{"plan", in, "-o", "OUT", "--shards", "2", "-q"}, layout...),
					{"rewrite", "OUT", "--shard", "0/2", "-q"}, {"rewrite", "OUT", "--shard", "1/2", "-q"}, {"commit", "OUT", "-q"},
				},
			}
			for name, cmds := range jobs {
				out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
				for _, c := range cmds {
					args := make([]string, len(c))
					for i, a := range c {
						if args[i] = a; a == "OUT" {
							args[i] = out
						}
					}
					mustRun(t, args...)
				}
				got, _ := readManifestMap(t, out)["io"].(map[string]any)
				t.Logf("%s %q %s: io %v (run: %v)", in, layout, name, got, want)
				if got["from"] != "journal" {
					t.Errorf("%s %q %s: io.from %v, want journal", in, layout, name, got["from"])
				}
				for _, k := range []string{"logical_bytes", "write_bytes"} {
					if got[k] != want[k] || got[k] == nil {
						t.Errorf("%s %q %s: io.%s %v, run's %v", in, layout, name, k, got[k], want[k])
					}
				}
				if got["read_bytes"] != float64(stored) {
					t.Errorf("%s %q %s: io.read_bytes %v, want %d (catalog stored_bytes)", in, layout, name, got["read_bytes"], stored)
				}
				for _, k := range []string{"wall_seconds", "read_calls", "write_calls", "fetch_seconds", "peak_mem"} {
					if v, ok := got[k]; ok {
						t.Errorf("%s %q %s: io.%s %v, want it left out (the journal cannot know it)", in, layout, name, k, v)
					}
				}
			}
		}
	}
}
