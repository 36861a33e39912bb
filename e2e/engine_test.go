package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
//
// The one-job-path cases (a generated series of two steps, work units of
// 64 KiB for the journaled paths) go further: the default layout, chunked,
// auto with a cost model and --compress alone write the same output on
// every path for the same layout flags — identical manifests (variables,
// skipped, series, input; not io, report, timestamps or the options that
// only say how the work was cut), verified true everywhere, chunked
// datasets exactly when the flags ask, the same values read by h5py, the
// oracle's check of run's output, and a rerun with the other path's
// command is done (the signatures agree). One Spec, built in one place,
// decides them all.
func TestEnginePaths(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.json")
	// Slow readers and a high latency: auto chunks some arrays.
	if err := os.WriteFile(model, []byte(`{"schema": "relayout-cost-model/1", "latency_s": 0.01, "reader_bytes_per_s": 1e8, "aggregate_bytes_per_s": 1e9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file system of tiny latency and slow readers: the auto layout
	// then chunks the one-job-path arrays, 8^3 like their blocks (with the
	// built-in figures it keeps them contiguous), so an engine that
	// dropped the model would show.
	fastModel := filepath.Join(dir, "fast-model.json")
	if err := os.WriteFile(fastModel, []byte(`{"schema": "relayout-cost-model/1", "latency_s": 1e-6, "reader_bytes_per_s": 1e8, "aggregate_bytes_per_s": 1e12, "sieve_bytes": 65536}`), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := filepath.Join(dir, "steps")
	mustRun(t, "generate", steps, "--shape", "48,40,32", "--chunk-shape", "8,8,8", "--steps", "0,1", "-q")
	inputs := []struct{ name, path string }{
		{"bp5-lb", sharedData(t, "bp5/generated-lb/lb-bp5.bp")},
		{"generated", generated(t, dir, "40,24,20")},
	}
	type layout struct {
		name string
		args []string
	}
	layouts := []layout{
		{"contiguous", []string{"--layout", "contiguous"}},
		{"chunked", []string{"--layout", "chunked", "--chunk-shape", "8,8,8"}},
		{"compressed", []string{"--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:1"}},
		{"merged", []string{"--layout", "merged", "--scope", "rank"}},
		{"auto", []string{"--layout", "auto", "--readers", "64", "--cost-model", model}},
	}
	type tcase struct {
		in     struct{ name, path string }
		l      layout
		oneJob bool // the one-job-path checks (and --unit-size 64KiB)
	}
	var cases []tcase
	for _, in := range inputs {
		for _, l := range layouts {
			cases = append(cases, tcase{in, l, false})
		}
	}
	for _, l := range []layout{
		{"default", nil},
		{"chunks", []string{"--layout", "chunked", "--chunks", "2x2x2"}},
		{"auto-model", []string{"--layout", "auto", "--readers", "64", "--cost-model", fastModel}},
		{"compress-alone", []string{"--compress", "deflate:2"}},
	} {
		cases = append(cases, tcase{struct{ name, path string }{"steps", steps}, l, true})
	}
	for _, c := range cases {
		in, l := c.in, c.l
		t.Run(in.name+"/"+l.name, func(t *testing.T) {
			d := filepath.Join(dir, in.name+"-"+l.name)
			var unit []string
			if c.oneJob {
				unit = []string{"--unit-size", "64KiB"}
			}
			run := filepath.Join(d, "run")
			mustRun(t, append([]string{"run", in.path, "-o", run, "-q"}, l.args...)...)
			want := manifestCore(t, run)
			outs := []string{run}
			for _, n := range []int{1, 3} {
				out := filepath.Join(d, fmt.Sprintf("shards%d", n))
				planArgs := append(append([]string{"plan", in.path, "-o", out, "-q", "--shards", fmt.Sprint(n)}, unit...), l.args...)
				mustRun(t, planArgs...)
				for i := range n {
					mustRun(t, "rewrite", out, "--shard", fmt.Sprintf("%d/%d", i, n), "-q")
				}
				mustRun(t, "commit", out, "-q")
				if got := manifestCore(t, out); got != want {
					t.Fatalf("plan -o + %d shards + commit: manifest differs from run's:\n%s\nrun:\n%s", n, got, want)
				}
				if !c.oneJob {
					mustRun(t, "verify", in.path, out)
				}
				outs = append(outs, out)
			}
			resume := filepath.Join(d, "resume")
			mustRun(t, append(append([]string{"run", in.path, "-o", resume, "-q", "--resume"}, unit...), l.args...)...)
			if got := manifestCore(t, resume); got != want {
				t.Fatalf("run --resume: manifest differs from run's:\n%s\nrun:\n%s", got, want)
			}
			outs = append(outs, resume)
			if !c.oneJob {
				mustRun(t, "verify", in.path, run)
			}
			if l.name == "merged" && in.name == "bp5-lb" {
				if !containsCuboids(want) {
					t.Fatalf("merged: no cuboids recorded:\n%s", want)
				}
			}
			if c.oneJob {
				oneJobPath(t, in.path, outs, l.args)
			}
		})
	}
}

// oneJobPath checks the outputs of the same job written by every path
// (outs[0] by run): the whole manifests but for how the work was cut and
// run, verified everywhere, chunked datasets exactly when flags ask, the
// same values read by h5py, the oracle's check of run's output, and a
// rerun with the other path's command done.
func oneJobPath(t *testing.T, in string, outs []string, flags []string) {
	t.Helper()
	var want map[string]any
	for i, out := range outs {
		m := comparableManifest(t, out)
		for _, k := range []string{"options", "version", "verified"} {
			delete(m, k) // how the work was cut and run; verified is true for all (checked below)
		}
		if i == 0 {
			want = m
			continue
		}
		if !reflect.DeepEqual(m, want) {
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(m)
			t.Errorf("%s: manifest differs from run's:\n%s", out, firstDiff(string(a), string(b)))
		}
	}
	for _, out := range outs {
		if m := readManifestMap(t, out); m["verified"] != true {
			t.Errorf("%s: verified %v", out, m["verified"])
		}
	}
	chunked := 0
	for _, v := range readManifest(t, outs[0]).Variables {
		for _, d := range v.Datasets {
			if d.Layout == "chunked" {
				chunked++
			}
		}
	}
	if wantChunked := len(flags) > 0; (chunked > 0) != wantChunked {
		t.Errorf("run wrote %d chunked datasets; want chunks: %v", chunked, wantChunked)
	}
	sums := h5Digests(t, outs)
	for i := 1; i < len(sums); i++ {
		if !reflect.DeepEqual(sums[i], sums[0]) || len(sums[0]) == 0 {
			t.Errorf("%s: h5py reads other values than run's output (%d datasets, run %d)", outs[i], len(sums[i]), len(sums[0]))
		}
	}
	oracle(t, in, outs[0])
	// A rerun of any of them with the other path's command is done: the
	// signatures agree on the output.
	resume := outs[len(outs)-1]
	r := mustRun(t, append([]string{"run", in, "-o", resume}, flags...)...)
	if !strings.Contains(r.stderr, "done") {
		t.Errorf("run on run --resume's output: %s", r.stderr)
	}
	r = mustRun(t, append([]string{"run", in, "-o", outs[0], "--resume"}, flags...)...)
	if !strings.Contains(r.stderr, "done") {
		t.Errorf("run --resume on run's output: %s", r.stderr)
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
