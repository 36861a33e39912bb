package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestInterleavedReadOnce: on ADIOS2 BP4 and BP5 output whose four
// variables are interleaved block by block in each sub-file (bp_gen.py,
// 48^3 in 4^3 blocks), relayout reads at most 1.05x the stored bytes (the
// manifest's io section; it read 3.4x before the datasets of one region
// shared a pipeline), and every value equals ADIOS2's read of the input
// (h5py on the output).
func TestInterleavedReadOnce(t *testing.T) {
	for _, engine := range []string{"BP5", "BP4"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, strings.ToLower(engine))
			bpGen(t, engine, in, 48, 4, 8, 4)
			var stored int64
			ents, err := os.ReadDir(in)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "data.") {
					fi, err := e.Info()
					if err != nil {
						t.Fatal(err)
					}
					stored += fi.Size()
				}
			}
			out := filepath.Join(dir, "out")
			mustRun(t, "run", in, "-o", out, "-q", "--no-verify")
			io, _ := readManifestMap(t, out)["io"].(map[string]any)
			read, _ := io["read_bytes"].(float64)
			calls, _ := io["read_calls"].(float64)
			t.Logf("%s: read %d bytes in %d calls, %d stored in data files", engine, int64(read), int64(calls), stored)
			if read <= 0 || read > 1.05*float64(stored) {
				t.Errorf("read %d bytes for %d stored (%.2fx), want at most 1.05x", int64(read), stored, read/float64(stored))
			}
			peerPython(t, "interleave_check.py", in, out)
			verifyInterleaved(t, in, out)
		})
	}
}

// verifyInterleaved: relayout verify (whose arrays of one step interleave
// in the input: verified as a joint group) passes on the output, and after
// h5py changes one element of fields/id it names that variable, step and
// index alone, the three others of the group still OK.
func verifyInterleaved(t *testing.T, in, out string) {
	t.Helper()
	r := mustRun(t, "verify", in, out)
	if n := len(regexp.MustCompile(`(?m)^OK  `).FindAllString(r.stdout, -1)); n != 6 {
		t.Fatalf("verify: want 6 OK lines (5 variables and series.h5), got:\n%s", r.stdout)
	}
	var file, path string
	for _, v := range readManifest(t, out).Variables {
		if v.Name == "fields/id" {
			file, path = filepath.Join(out, v.File), v.Datasets[0].Path
		}
	}
	script := fmt.Sprintf("import h5py\nf = h5py.File(%q, 'r+')\nd = f[%q]\nd[7, 8, 9] = d[7, 8, 9] + 1\nf.close()\n", file, path)
	if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("h5py edit: %v\n%s", err, b)
	}
	r = relayout(t, "verify", in, out)
	// fields/id = i*N*N + j*N + k at step 0, N = 48.
	diff := regexp.MustCompile(`(?m)^DIFF .*$`).FindAllString(r.stdout, -1)
	if want := "DIFF fields/id step 0 level 0 at [7,8,9]: in=16521 out=16522"; r.code != 1 || len(diff) != 1 || diff[0] != want {
		t.Fatalf("verify after edit: exit %d, DIFF lines %q, want exit 1 and %q\n%s", r.code, diff, want, r.stderr)
	}
	for _, v := range []string{"fields/Bx", "fields/rho", "fine/Ez"} {
		if !strings.Contains(r.stdout, "OK  "+v+"  ") {
			t.Errorf("verify after edit: no OK line for %s:\n%s", v, r.stdout)
		}
	}
}
