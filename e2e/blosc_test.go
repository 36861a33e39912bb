package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// peerPython runs /usr/bin/python3 in the peers' environment
// (testkit.PeersPython), skipping when the peers are absent and failing
// under CI=true.
func peerPython(t *testing.T, args ...string) {
	t.Helper()
	testkit.PeersPython(t, args...)
}

// TestBloscRunVerify: `run` and `verify` of a BP5 dataset ADIOS2 2.12 wrote
// with the Blosc operator (every compressor and shuffle mode) exit 0; a ZFP
// variable is refused with exit 2 naming the operator, and --var leaves it
// out.
func TestBloscRunVerify(t *testing.T) {
	gen, _ := filepath.Abs(filepath.Join("..", "reader", "bp", "testdata", "blosc_gen.py"))
	dir := t.TempDir()
	in := filepath.Join(dir, "blosc.bp")
	peerPython(t, gen, "write", "BP5", in)
	out := filepath.Join(dir, "out")
	mustRun(t, "run", in, "-o", out, "-q")
	if m := readManifest(t, out); len(m.Variables) < 20 {
		t.Fatalf("%d variables written", len(m.Variables))
	}
	mustRun(t, "verify", in, out)

	// A damaged chunk header (its cbytes) fails the run naming the
	// variable, step, file and the block's offset.
	var off int64 = -1
	for _, l := range strings.Split(mustRun(t, "inspect", in, "--var", "c/zstd/shuffle").stdout, "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[0] == "0" && f[3] == "data.0" {
			off, _ = strconv.ParseInt(f[4], 10, 64)
		}
	}
	if off < 0 {
		t.Fatal("inspect listed no block 0")
	}
	data, err := os.ReadFile(filepath.Join(in, "data.0"))
	if err != nil {
		t.Fatal(err)
	}
	data[off+4+8+3+8+12] ^= 0x40 // past the operator header, DataHeader: the chunk's cbytes
	os.WriteFile(filepath.Join(in, "data.0"), data, 0o644)
	r := relayout(t, "run", in, "-o", filepath.Join(dir, "bad"))
	for _, s := range []string{"c/zstd/shuffle", "step 0", "data.0", strconv.FormatInt(off, 10), "blosc", "corrupt"} {
		if r.code != 2 || !strings.Contains(r.stderr, s) {
			t.Errorf("damaged chunk: exit %d, stderr does not name %s:\n%s", r.code, s, r.stderr)
		}
	}

	zfp := filepath.Join(dir, "zfp.bp")
	peerPython(t, gen, "zfp", "BP5", zfp)
	out2 := filepath.Join(dir, "out2")
	r = relayout(t, "run", zfp, "-o", out2)
	if r.code != 2 || !strings.Contains(r.stderr, `operator "zfp"`) {
		t.Fatalf("zfp input: exit %d, want 2 naming zfp\n%s", r.code, r.stderr)
	}
	if names := finalNames(t, out2); len(names) > 0 {
		t.Errorf("files under OUT's final names: %v", names)
	}
	out3 := filepath.Join(dir, "out3")
	mustRun(t, "run", zfp, "-o", out3, "--var", "b", "-q")
	mustRun(t, "verify", zfp, out3, "--var", "b")
}
