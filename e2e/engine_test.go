package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// manifestCore is what the one engine must make alike on every path: the
// variables (layouts, chunks, digests, cuboids, files), what was skipped
// and the series file; not the I/O profile, the report, the options, the
// storage decisions' errors or the timestamps.
func manifestCore(t *testing.T, out string) string {
	t.Helper()
	m := readManifestMap(t, out)
	core := map[string]any{}
	for _, k := range []string{"variables", "skipped", "series", "series_files"} {
		core[k] = m[k]
	}
	vars, _ := core["variables"].([]any)
	if len(vars) == 0 {
		t.Fatalf("%s: no variables in the manifest", out)
	}
	for _, v := range vars {
		for _, ds := range v.(map[string]any)["datasets"].([]any) {
			if s, _ := ds.(map[string]any)["sha256"].(string); len(s) != 64 {
				t.Fatalf("%s: %s: a dataset without a digest: %v", out, v.(map[string]any)["name"], ds)
			}
		}
	}
	c, _ := json.MarshalIndent(core, "", " ")
	return string(c)
}

// TestEnginePaths: relayout run, plan -o + rewrite --shard i/N (N = 1
// and 3, the shards run one after another) + commit, and run --resume give
// identical manifests (variables with layouts, chunks, cuboids and
// digests, skipped, series) for the contiguous, chunked (raw: chunks
// pwritten into the file; compressed: part files joined by commit),
// merged (a partly covered variable: cuboid datasets behind a virtual
// dataset) and auto (with a cost model) layouts, on a load-balanced BP5
// input written by ADIOS2 and on a generated openPMD series; every output
// also passes relayout verify against the input.
func TestEnginePaths(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	// Slow readers and a high latency: auto chunks some arrays.
	if err := os.WriteFile(model, []byte(`{"schema": "relayout-cost-model/1", "latency_s": 0.01, "reader_bytes_per_s": 1e8, "aggregate_bytes_per_s": 1e9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := []struct{ name, path string }{
		{"bp5-lb", sharedData(t, "bp5/generated-lb/lb-bp5.bp")},
		{"generated", generated(t, dir, "40,24,20")},
	}
	layouts := []struct {
		name string
		args []string
	}{
		{"contiguous", []string{"--layout", "contiguous"}},
		{"chunked", []string{"--layout", "chunked", "--chunk-shape", "8,8,8"}},
		{"compressed", []string{"--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:1"}},
		{"merged", []string{"--layout", "merged", "--scope", "rank"}},
		{"auto", []string{"--layout", "auto", "--readers", "64", "--cost-model", model}},
	}
	for _, in := range inputs {
		for _, l := range layouts {
			t.Run(in.name+"/"+l.name, func(t *testing.T) {
				d := filepath.Join(dir, in.name+"-"+l.name)
				run := filepath.Join(d, "run")
				mustRun(t, append([]string{"run", in.path, "-o", run, "-q"}, l.args...)...)
				want := manifestCore(t, run)
				for _, n := range []int{1, 3} {
					out := filepath.Join(d, fmt.Sprintf("shards%d", n))
					planArgs := append([]string{"plan", in.path, "-o", out, "-q", "--shards", fmt.Sprint(n)}, l.args...)
					mustRun(t, planArgs...)
					for i := range n {
						mustRun(t, "rewrite", out, "--shard", fmt.Sprintf("%d/%d", i, n), "-q")
					}
					mustRun(t, "commit", out, "-q")
					if got := manifestCore(t, out); got != want {
						t.Fatalf("plan -o + %d shards + commit: manifest differs from run's:\n%s\nrun:\n%s", n, got, want)
					}
					mustRun(t, "verify", in.path, out)
				}
				resume := filepath.Join(d, "resume")
				mustRun(t, append([]string{"run", in.path, "-o", resume, "-q", "--resume"}, l.args...)...)
				if got := manifestCore(t, resume); got != want {
					t.Fatalf("run --resume: manifest differs from run's:\n%s\nrun:\n%s", got, want)
				}
				mustRun(t, "verify", in.path, run)
				if l.name == "merged" && in.name == "bp5-lb" {
					if !containsCuboids(want) {
						t.Fatalf("merged: no cuboids recorded:\n%s", want)
					}
				}
			})
		}
	}
}

// containsCuboids reports whether a manifest core records merged cuboids.
func containsCuboids(core string) bool {
	var m struct {
		Variables []struct {
			Datasets []struct {
				Layout  string
				Cuboids int
			}
		}
	}
	json.Unmarshal([]byte(core), &m)
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			if d.Layout == "merged" && d.Cuboids > 0 {
				return true
			}
		}
	}
	return false
}
