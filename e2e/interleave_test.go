package e2e

import (
	"os"
	"path/filepath"
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
		})
	}
}
