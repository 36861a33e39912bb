package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestCalibrate measures a temporary directory, checks the figures are
// positive and sane and the scratch file is gone, and feeds the file to
// plan and run --layout auto through --cost-model.
func TestCalibrate(t *testing.T) {
	dir := t.TempDir()
	scratch := filepath.Join(dir, "fs")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(dir, "cm.json")
	mustRun(t, "calibrate", scratch, "--size", "8MiB", "--samples", "32", "-o", model)
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch left in %s: %v", scratch, left)
	}
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Schema    string
		Latency   float64 `json:"latency_s"`
		Reader    float64 `json:"reader_bytes_per_s"`
		Aggregate float64 `json:"aggregate_bytes_per_s"`
		// the library read model (issue 19)
		SieveBuf   int64   `json:"sieve_buffer_bytes"`
		ChunkCache int64   `json:"chunk_cache_bytes"`
		Page       int64   `json:"page_bytes"`
		Call       float64 `json:"call_s"`
		Random     float64 `json:"random_bytes_per_s"`
		Cores      float64 `json:"cores"`
		// what a chunk costs a new reader process, measured through HDF5
		Chunk     float64 `json:"chunk_s"`
		ChunkByte float64 `json:"chunk_byte_s"`
		Measured  struct {
			Chunks struct {
				ReadS map[string]float64 `json:"read_s"`
				Runs  int                `json:"runs"`
			}
		}
	}
	if err := json.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Schema != "relayout-cost-model/1" || cm.Latency <= 0 || cm.Latency > 1 || cm.Reader < 1e6 || cm.Reader > 1e12 || cm.Aggregate < cm.Reader {
		t.Errorf("cost model %+v", cm)
	}
	if cm.SieveBuf != 64<<10 || cm.ChunkCache != 1<<20 || cm.Page < 512 || cm.Call <= 0 || cm.Call > 1e-3 || cm.Random <= 0 || cm.Random > cm.Reader || cm.Cores < 1 {
		t.Errorf("library model %+v", cm)
	}
	// Every probe dataset was read (by a process of its own), and the
	// fitted cost is what those reads say: four chunk sizes against
	// contiguous, a chunk at least the library's idle-core work.
	if r := cm.Measured.Chunks.ReadS; len(r) != 5 || r["/contiguous"] <= 0 || r["/chunks-8"] <= 0 || r["/chunks-48"] <= 0 || cm.Measured.Chunks.Runs != 3 {
		t.Errorf("chunk probes %+v", cm.Measured.Chunks)
	}
	if cm.Chunk < 3.3e-6 || cm.Chunk > 0.1 || cm.ChunkByte < 0 || cm.ChunkByte > 1e-6 {
		t.Errorf("chunk cost %g s + %g s a byte", cm.Chunk, cm.ChunkByte)
	}
	in := filepath.Join(dir, "sample")
	mustRun(t, "generate", in, "--shape", "16,16,16", "--chunk", "8,8,8", "--steps", "0")
	var p struct {
		Options struct {
			Cost struct {
				Latency float64 `json:"latency_s"`
				Reader  float64 `json:"reader_bytes_per_s"`
				Call    float64 `json:"call_s"`
			} `json:"cost_model"`
		}
	}
	if err := json.Unmarshal([]byte(mustRun(t, "plan", in, "--json", "--cost-model", model).stdout), &p); err != nil {
		t.Fatal(err)
	}
	if p.Options.Cost.Latency != cm.Latency || p.Options.Cost.Reader != cm.Reader || p.Options.Cost.Call != cm.Call {
		t.Errorf("plan uses %+v, file says %+v", p.Options.Cost, cm)
	}
	mustRun(t, "run", in, "-o", filepath.Join(dir, "out"), "--layout", "auto", "--cost-model", model, "-q")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema": "relayout-cost-model/1", "latency_s": 0, "reader_bytes_per_s": 1, "aggregate_bytes_per_s": 1}`), 0o644)
	if r := relayout(t, "plan", in, "--cost-model", bad); r.code != 2 {
		t.Errorf("bad cost model: exit %d\n%s", r.code, r.stderr)
	}
	if r := relayout(t, "calibrate", filepath.Join(dir, "missing")); r.code != 2 {
		t.Errorf("missing directory: exit %d", r.code)
	}
}
