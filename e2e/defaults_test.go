package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// h5Layouts reads, with h5py, the storage of every dataset the manifest of
// out lists: "file:path" -> chunk shape (nil: contiguous) and compression
// filter name ("" when none).
func h5Layouts(t *testing.T, out string) map[string]struct {
	Chunks      []int64
	Compression string
} {
	t.Helper()
	const script = `
import json, os, sys, h5py
out = sys.argv[1]
m = json.load(open(os.path.join(out, "relayout.json")))
res = {}
for v in m["variables"]:
    with h5py.File(os.path.join(out, v["file"]), "r") as f:
        for d in v["datasets"]:
            ds = f[d["path"]]
            res[v["file"] + ":" + d["path"]] = {"Chunks": list(ds.chunks) if ds.chunks else None,
                                                "Compression": ds.compression or ""}
print(json.dumps(res))
`
	b, err := exec.Command(python, "-c", script, out).Output()
	if err != nil {
		t.Fatalf("h5py: %v", err)
	}
	var res map[string]struct {
		Chunks      []int64
		Compression string
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("h5py output %q: %v", b, err)
	}
	return res
}

// TestPlanPreviewsRun: relayout plan (no -o) and relayout run with the same
// flags agree on every array's layout — contiguous or chunked and the
// chunk shape, as h5py reads the written datasets — for the default layout
// (the same for both), the auto layout, an explicit chunking, and
// --compress alone, which writes deflated chunked datasets with the chunk
// shape it printed.
func TestPlanPreviewsRun(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	mustRun(t, "generate", gen, "--shape", "64,64,64", "--chunk-shape", "16,16,16", "--steps", "0,1", "-q")
	type input struct {
		name string
		path func(t *testing.T) string
	}
	for _, in := range []input{
		{"generated", func(*testing.T) string { return gen }},
		{"femm", func(t *testing.T) string { return sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5") }},
	} {
		for i, flags := range [][]string{
			nil,
			{"--compress", "deflate"},
			{"--compress", "deflate:2", "--readers", "1024"},
			{"--layout", "auto", "--readers", "64"},
			{"--layout", "chunked", "--chunks", "3x3x3"},
		} {
			t.Run(fmt.Sprintf("%s/%s", in.name, strings.Join(append([]string{"flags"}, flags...), "_")), func(t *testing.T) {
				path := in.path(t)
				var p planJSON
				r := mustRun(t, append([]string{"plan", path, "--json"}, flags...)...)
				if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
					t.Fatal(err)
				}
				out := filepath.Join(dir, fmt.Sprintf("%s-%d", in.name, i))
				r = mustRun(t, append([]string{"run", path, "-o", out}, flags...)...)
				compress := len(flags) > 0 && flags[0] == "--compress"
				if compress && !strings.Contains(r.stderr, "layout (--compress without --layout): ") {
					t.Errorf("--compress alone does not say which chunks it picked:\n%s", r.stderr)
				}
				m := readManifest(t, out)
				got := h5Layouts(t, out)
				checked, chunked := 0, 0
				for _, v := range m.Variables {
					var plan []struct {
						steps []int64
						kind  string
						chunk []int64
					}
					for _, pv := range p.Variables {
						if pv.Name == v.Name {
							for _, l := range pv.Layouts {
								plan = append(plan, struct {
									steps []int64
									kind  string
									chunk []int64
								}{l.Steps, l.Layout.Kind, l.Layout.Chunk})
							}
						}
					}
					for _, d := range v.Datasets {
						h, ok := got[v.File+":"+d.Path]
						if !ok {
							t.Fatalf("h5py did not read %s:%s", v.File, d.Path)
						}
						found := false
						for _, l := range plan {
							if !slices.Contains(l.steps, d.Step) {
								continue
							}
							found = true
							switch l.kind {
							case "contiguous":
								if h.Chunks != nil {
									t.Errorf("%s step %d: plan says contiguous, h5py reads chunks %v", v.Name, d.Step, h.Chunks)
								}
							case "chunked":
								chunked++
								if !slices.Equal(h.Chunks, l.chunk) {
									t.Errorf("%s step %d: plan says chunked %v, h5py reads chunks %v", v.Name, d.Step, l.chunk, h.Chunks)
								}
								if compress && h.Compression != "gzip" {
									t.Errorf("%s step %d: --compress alone: h5py reads compression %q, want gzip", v.Name, d.Step, h.Compression)
								}
							default:
								t.Errorf("%s step %d: plan layout %q", v.Name, d.Step, l.kind)
							}
							checked++
						}
						if !found {
							t.Errorf("%s step %d: not in the plan", v.Name, d.Step)
						}
					}
				}
				if checked == 0 {
					t.Fatal("no dataset compared")
				}
				if compress && chunked != checked {
					t.Errorf("--compress alone: %d of %d datasets chunked", chunked, checked)
				}
				if len(flags) == 0 && chunked != 0 {
					t.Errorf("the default layout chunked %d datasets; want contiguous (run's and plan's default)", chunked)
				}
				t.Logf("%d datasets: plan and h5py agree (%d chunked)", checked, chunked)
			})
		}
	}
}
