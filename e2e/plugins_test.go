package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// pluginsGen writes ../reader/h5/testdata/plugins_gen.py's input (mode
// "write" or "mystery") with h5py and hdf5plugin, skipping without Debian's
// python3-hdf5plugin (failing under CI=true).
func pluginsGen(t *testing.T, mode, file string) []string {
	t.Helper()
	testkit.NeedPython(t, "Debian python3-h5py python3-hdf5plugin", "h5py", "hdf5plugin")
	gen, _ := filepath.Abs(filepath.Join("..", "reader", "h5", "testdata", "plugins_gen.py"))
	out, err := exec.Command(python, gen, mode, file).CombinedOutput()
	if err != nil {
		t.Fatalf("plugins_gen.py %s: %v\n%s", mode, err, out)
	}
	return strings.Fields(string(out))
}

// relayoutEnv runs relayout with extra environment variables (relayout: none).
func relayoutEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("relayout %v: %v", args, err)
	}
	return r
}

// TestPluginFiltersRunVerify: an HDF5 file h5py wrote with plugin filters
// (lz4, bzip2, zfp reversible, and lzf, which relayout decodes itself) is
// rewritten and verified (exit 0), h5py reads the output equal to the input,
// and the I/O summary and the manifest count the blocks read through the
// HDF5 library. With HDF5_PLUGIN_PATH pointed at an empty directory, or with
// a filter no plugin provides, the run exits 2 naming the filter and
// HDF5_PLUGIN_PATH.
func TestPluginFiltersRunVerify(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "plugins.h5")
	wrote := pluginsGen(t, "write", in)
	t.Logf("filters written: %v", wrote)
	out := filepath.Join(dir, "out")
	r := mustRun(t, "run", in, "-o", out, "-v") // -v: the io: lines
	if !strings.Contains(r.stderr, "through the HDF5 library") {
		t.Errorf("io summary does not show the library reads:\n%s", r.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		IO struct {
			LibraryReadBlocks int64 `json:"library_read_blocks"`
			LibraryReadBytes  int64 `json:"library_read_bytes"`
			ReadCalls         int64 `json:"read_calls"`
		} `json:"io"`
		Variables []struct{ Name string }
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	// 3 plugin filters x 5 datasets (zfp 3), the mixed pipelines, the
	// virtual dataset and its two sources: 139 chunks with Debian 12's
	// plugins (more when the library offers more filters).
	if m.IO.LibraryReadBlocks < 139 || m.IO.LibraryReadBytes <= 0 || m.IO.ReadCalls <= 0 {
		t.Errorf("manifest io: %+v", m.IO)
	}
	if len(m.Variables) < 24 {
		t.Errorf("%d variables written", len(m.Variables))
	}
	mustRun(t, "verify", in, out)
	oracle(t, in, out)

	// No plugin found: refused by name before anything is written.
	empty := filepath.Join(dir, "no-plugins")
	os.Mkdir(empty, 0o755)
	env := []string{"HDF5_PLUGIN_PATH=" + empty}
	out2 := filepath.Join(dir, "out2")
	r = relayoutEnv(t, env, "run", in, "-o", out2)
	for _, s := range []string{"plugins.h5", "bzip2/be_i8", "filter bzip2 (id 307)", "not available", "set HDF5_PLUGIN_PATH", empty} {
		if r.code != 2 || !strings.Contains(r.stderr, s) {
			t.Errorf("empty plugin path: exit %d, stderr does not name %q:\n%s", r.code, s, r.stderr)
		}
	}
	if names := finalNames(t, out2); len(names) > 0 {
		t.Errorf("files under OUT's final names: %v", names)
	}
	// What relayout decodes itself needs no plugin.
	out3 := filepath.Join(dir, "out3")
	relayoutOK := relayoutEnv(t, env, "run", in, "-o", out3, "--var", "lzf", "--var", "native", "-q")
	if relayoutOK.code != 0 {
		t.Fatalf("lzf and deflate without plugins: exit %d\n%s", relayoutOK.code, relayoutOK.stderr)
	}
	if r := relayoutEnv(t, env, "verify", in, out3, "--var", "lzf", "--var", "native"); r.code != 0 {
		t.Fatalf("verify without plugins: exit %d\n%s", r.code, r.stderr)
	}

	// A filter id no plugin provides.
	mystery := filepath.Join(dir, "mystery.h5")
	pluginsGen(t, "mystery", mystery)
	r = relayout(t, "run", mystery, "-o", filepath.Join(dir, "out4"))
	for _, s := range []string{"mystery.h5", "/mystery", "id 40000", "HDF5_PLUGIN_PATH"} {
		if r.code != 2 || !strings.Contains(r.stderr, s) {
			t.Errorf("unknown filter: exit %d, stderr does not name %q:\n%s", r.code, s, r.stderr)
		}
	}
	mustRun(t, "run", mystery, "-o", filepath.Join(dir, "out5"), "--var", "plain", "-q")
}
