package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInterleavedReadOnce: on ADIOS2 BP4 and BP5 output whose four
// variables are interleaved block by block in each sub-file (bp_gen.py,
// 48^3 in 4^3 blocks), a default (verified) run's rewrite and its verifier
// reads every stored byte (catalog --json's stored_bytes) and at most
// 1.05x the bytes of the data files (the manifest's io section: read_bytes;
// 3.4x before the datasets of one region shared a pipeline), its verifier
// none (verify_read_bytes: every block summed by the tap as the rewrite
// read it), relayout verify on its own reads as much as the rewrite did
// (its io: verify line; as much again before it read a joint group's band
// in one pass), and every value equals ADIOS2's read of the input (h5py on
// the output). The upper bound is on the data files, not stored_bytes:
// BP4 writes a variable header before each block (~110 bytes here, before
// 512-byte blocks of 4^3 float64), which coalesced reads read through, as
// they should (one request instead of one per block); for BP5, whose data
// files hold the blocks alone, the two are equal.
func TestInterleavedReadOnce(t *testing.T) {
	for _, engine := range []string{"BP5", "BP4"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, strings.ToLower(engine))
			bpGen(t, engine, in, 48, 4, 8, 4)
			stored, files := storedBytes(t, in), dataFileBytes(t, in)
			out := filepath.Join(dir, "out")
			mustRun(t, "run", in, "-o", out, "-q")
			io, _ := readManifestMap(t, out)["io"].(map[string]any)
			for _, k := range []string{"read", "verify_read"} {
				read, _ := io[k+"_bytes"].(float64)
				calls, _ := io[k+"_calls"].(float64)
				t.Logf("%s: %s %d bytes in %d calls, %d stored, %d in data files", engine, k, int64(read), int64(calls), stored, files)
				if k == "read" {
					checkReadOnce(t, k+"_bytes", read, stored, files)
				} else if read != 0 || calls != 0 {
					// Every block was read whole by the rewrite and summed
					// then by the verifier's tap: the run reads the input once.
					t.Errorf("verify_read: %d bytes in %d calls, want none (every block tapped during the rewrite)", int64(read), int64(calls))
				}
			}
			// The verifier reads every array whole through HDF5: the
			// logical bytes the rewrite wrote (holes included).
			logical, _ := io["logical_bytes"].(float64)
			if vo, _ := io["verify_output_bytes"].(float64); vo != logical || logical <= 0 {
				t.Errorf("verify_output_bytes %d, want logical_bytes %d", int64(vo), int64(logical))
			}
			peerPython(t, "interleave_check.py", in, out)
			verifyInterleaved(t, in, out, stored, files, int64(logical))
		})
	}
}

// storedBytes is the sum of catalog --json's stored_bytes of in's variables.
func storedBytes(t *testing.T, in string) int64 {
	t.Helper()
	r := mustRun(t, "catalog", in, "--json")
	var cat struct{ Variables []catalogVar }
	if err := json.Unmarshal([]byte(r.stdout), &cat); err != nil {
		t.Fatalf("catalog --json: %v\n%s", err, r.stdout)
	}
	var n int64
	for _, v := range cat.Variables {
		n += v.StoredBytes
	}
	if n <= 0 {
		t.Fatalf("catalog --json: no stored bytes:\n%s", r.stdout)
	}
	return n
}

// dataFileBytes is the size of in's data.N files.
func dataFileBytes(t *testing.T, in string) int64 {
	t.Helper()
	ents, err := os.ReadDir(in)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "data.") {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}

// checkReadOnce fails unless read (bytes) is every stored byte at least
// once (every block is fetched whole) and at most 1.05x the data files
// (each file byte once, not again for another variable's band).
func checkReadOnce(t *testing.T, what string, read float64, stored, files int64) {
	t.Helper()
	if read < float64(stored) || read > 1.05*float64(files) {
		t.Errorf("%s: read %d bytes for %d stored in %d bytes of data files (%.2fx), want %d to 1.05x", what, int64(read), stored, files, read/float64(files), stored)
	}
}

// verifyInterleaved: relayout verify (whose arrays of one step interleave
// in the input: verified as a joint group) passes on the output, and after
// h5py changes one element of fields/id it names that variable, step and
// index alone, the three others of the group still OK. Its io: verify
// line says it read the input once (stored bytes: see checkReadOnce) and
// the output's logical bytes through HDF5.
func verifyInterleaved(t *testing.T, in, out string, stored, files, logical int64) {
	t.Helper()
	r := mustRun(t, "verify", in, out, "-v") // -v: the io: verify line
	if n := len(regexp.MustCompile(`(?m)^OK  `).FindAllString(r.stdout, -1)); n != 7 || !strings.Contains(r.stdout, "\nOK  views  ") {
		t.Fatalf("verify: want 7 OK lines (5 variables, series.h5 and the ParaView views), got:\n%s", r.stdout)
	}
	line := regexp.MustCompile(`(?m)^io: verify read ([0-9.]+) MiB of input in ([0-9]+) calls .*, ([0-9.]+) MiB of output through HDF5 in ([0-9]+) reads`).FindStringSubmatch(r.stdout)
	if line == nil {
		t.Fatalf("verify: no io: verify line:\n%s", r.stdout)
	}
	// The line rounds to 0.1 MiB: allow that much over the bounds.
	mib, _ := strconv.ParseFloat(line[1], 64)
	if lo, hi := float64(stored)/(1<<20)-0.05, 1.05*float64(files)/(1<<20)+0.05; mib < lo || mib > hi {
		t.Errorf("verify: %s: read %.1f MiB of input, want %.2f to %.2f MiB", line[0], mib, lo, hi)
	}
	if outMiB, want := line[3], fmt.Sprintf("%.1f", float64(logical)/(1<<20)); outMiB != want {
		t.Errorf("verify: %s: %s MiB of output through HDF5, want %s", line[0], outMiB, want)
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
