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

// TestOneJobPath: relayout run, run --resume, and plan -o + rewrite --shard
// i/N + commit (N = 1 and 3) write the same output for the same layout
// flags — identical manifests (variables with their layouts, chunks and
// digests, skipped, series, input; not io, report, timestamps or the
// options that only say how the work was cut) and the same values read by
// h5py — for the default layout, chunked, auto with a cost model and
// --compress alone. One Spec, built in one place, decides them all.
func TestOneJobPath(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "48,40,32", "--chunk-shape", "16,16,16", "--steps", "0,1", "-q")
	model := filepath.Join(dir, "model.json")
	// A file system of tiny latency and slow readers: the auto layout
	// then chunks these arrays (with the built-in figures it keeps them
	// contiguous), so an engine that dropped the model would show.
	if err := os.WriteFile(model, []byte(`{"schema": "relayout-cost-model/1", "latency_s": 1e-6, "reader_bytes_per_s": 1e8, "aggregate_bytes_per_s": 1e12, "sieve_bytes": 65536}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for vi, flags := range [][]string{
		nil,
		{"--layout", "chunked", "--chunks", "2x2x2"},
		{"--layout", "auto", "--readers", "64", "--cost-model", model},
		{"--compress", "deflate:2"},
	} {
		t.Run(strings.Join(append([]string{"flags"}, flags...), "_"), func(t *testing.T) {
			out := func(name string) string { return filepath.Join(dir, fmt.Sprintf("v%d-%s", vi, name)) }
			mustRun(t, append([]string{"run", in, "-o", out("run"), "-q"}, flags...)...)
			mustRun(t, append([]string{"run", in, "-o", out("resume"), "-q", "--resume", "--unit-size", "64KiB"}, flags...)...)
			for _, n := range []int{1, 3} {
				o := out(fmt.Sprintf("shards%d", n))
				mustRun(t, append([]string{"plan", in, "-o", o, "-q", "--shards", fmt.Sprint(n), "--unit-size", "64KiB"}, flags...)...)
				for s := range n {
					mustRun(t, "rewrite", o, "--shard", fmt.Sprintf("%d/%d", s, n), "-q")
				}
				mustRun(t, "commit", o, "-q")
			}
			names := []string{"run", "resume", "shards1", "shards3"}
			var dirs []string
			var want map[string]any
			for i, name := range names {
				dirs = append(dirs, out(name))
				m := comparableManifest(t, out(name))
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
					t.Errorf("%s: manifest differs from run's:\n%s", name, firstDiff(string(a), string(b)))
				}
			}
			for _, name := range names {
				if m := readManifestMap(t, out(name)); m["verified"] != true {
					t.Errorf("%s: verified %v", name, m["verified"])
				}
			}
			chunked := 0
			for _, v := range readManifest(t, out("run")).Variables {
				for _, d := range v.Datasets {
					if d.Layout == "chunked" {
						chunked++
					}
				}
			}
			if wantChunked := len(flags) > 0; (chunked > 0) != wantChunked {
				t.Errorf("run wrote %d chunked datasets; want chunks: %v", chunked, wantChunked)
			}
			sums := h5Digests(t, dirs)
			for i := 1; i < len(sums); i++ {
				if !reflect.DeepEqual(sums[i], sums[0]) || len(sums[0]) == 0 {
					t.Errorf("%s: h5py reads other values than run's output (%d datasets, run %d)", names[i], len(sums[i]), len(sums[0]))
				}
			}
			oracle(t, in, out("run"))
			// A rerun of any of them with the other path's command is done:
			// the signatures agree on the output.
			r := mustRun(t, append([]string{"run", in, "-o", out("resume")}, flags...)...)
			if !strings.Contains(r.stderr, "done") {
				t.Errorf("run on run --resume's output: %s", r.stderr)
			}
			r = mustRun(t, append([]string{"run", in, "-o", out("run"), "--resume"}, flags...)...)
			if !strings.Contains(r.stderr, "done") {
				t.Errorf("run --resume on run's output: %s", r.stderr)
			}
		})
	}
}
