package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestTinyChunksReadOnce: an input of many tiny chunks in scattered order,
// rewritten with a budget that cuts each array into several units, is read
// about once (not once per unit through coalesced gaps) in far fewer
// requests than it has chunks; verification still compares every element.
func TestTinyChunksReadOnce(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	// 64^3 float64 in 4^3 chunks: 4 variables of 2 MiB in 4096 chunks of 512 bytes.
	mustRun(t, "generate", in, "--shape", "64,64,64", "--chunk", "4,4,4", "--steps", "0")
	// 8 MiB budget: slabs of about 1 MiB, so two or more units per array.
	mustRun(t, "run", in, "-o", out, "--max-mem", "8MiB", "-q")
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		IO struct {
			LogicalBytes int64 `json:"logical_bytes"`
			ReadBytes    int64 `json:"read_bytes"`
			ReadCalls    int64 `json:"read_calls"`
		} `json:"io"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	const chunks = 4 * 16 * 16 * 16
	io := m.IO
	if io.LogicalBytes != 4*64*64*64*8 {
		t.Fatalf("io: %+v", io)
	}
	// Gap bytes between chunks (HDF5's B-tree nodes sit among them) add some
	// 15%; reading each unit's chunks through the others' would double it.
	if io.ReadBytes > io.LogicalBytes*5/4 {
		t.Errorf("read %d bytes for %d logical bytes: scattered chunks read more than once", io.ReadBytes, io.LogicalBytes)
	}
	if io.ReadCalls > chunks/50 {
		t.Errorf("%d read calls for %d chunks: neighbouring chunks not coalesced", io.ReadCalls, chunks)
	}
	t.Logf("io: %+v", io)
}
