package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// TestAutoRanksFirstAndReadsBack: on a BP5 dataset written by the real
// ADIOS2 (bp_gen.py, 32^3 in 8^3 blocks), for 1 and 8 readers and two cost
// models (this kind of machine as calibrated, and the defaults), the layout
// `plan --layout auto` picks has the smallest predicted total over the
// planner's patterns among contiguous and a set of chunk shapes (each asked
// of `plan` as its own layout); `run --layout auto` writes it; and
// scripts/readbench.py --check reads every pattern of the auto outputs through
// h5py equal to the original read through adios2.FileReader (one run, no
// timing asserted).
func TestAutoRanksFirstAndReadsBack(t *testing.T) {
	dir, env := testkit.PeersEnv(t)
	tmp := t.TempDir()
	in := filepath.Join(tmp, "in.bp")
	testkit.PeersPython(t, filepath.Join(dir, "bp_gen.py"), "BP5", in, "32", "8", "--aggregators", "2")
	cm := filepath.Join(tmp, "cm.json")
	if err := os.WriteFile(cm, []byte(`{"schema": "relayout-cost-model/1", "latency_s": 8.3e-05,
 "reader_bytes_per_s": 5.5e+08, "aggregate_bytes_per_s": 1.13e+09, "sieve_bytes": 65536}`), 0o644); err != nil {
		t.Fatal(err)
	}
	total := func(args ...string) (float64, string, []int64) {
		t.Helper()
		var p planJSON
		out := mustRun(t, append([]string{"plan", in, "--var", "fields/Bx", "--json"}, args...)...).stdout
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Variables []struct {
				Layouts []struct {
					Costs []struct {
						After struct{ Seconds float64 }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &raw); err != nil {
			t.Fatal(err)
		}
		var s float64
		for _, c := range raw.Variables[0].Layouts[0].Costs {
			s += c.After.Seconds
		}
		l := p.Variables[0].Layouts[0].Layout
		return s, l.Kind, l.Chunk
	}
	layouts := []string{"original=" + in}
	for _, model := range []string{cm, ""} {
		for _, r := range []string{"1", "8"} {
			common := []string{"--readers", r}
			if model != "" {
				common = append(common, "--cost-model", model)
			}
			auto, kind, chunk := total(append([]string{"--layout", "auto"}, common...)...)
			cands := [][]string{{"--layout", "contiguous"}}
			for _, c := range []string{"8,8,8", "16,16,16", "32,32,16", "4,32,32", "32,4,32", "32,32,4", "16,32,32", "32,16,32"} {
				cands = append(cands, []string{"--layout", "chunked", "--chunk-shape", c})
			}
			for _, c := range cands {
				if s, _, _ := total(append(c, common...)...); s < auto*(1-1e-9) {
					t.Errorf("readers %s, model %q: auto (%s %v) predicted %.6g s in total, %s predicted %.6g s", r, model, kind, chunk, auto, strings.Join(c, " "), s)
				}
			}
			out := filepath.Join(tmp, fmt.Sprintf("auto-%s-%d", r, len(layouts)))
			mustRun(t, append([]string{"run", in, "--var", "fields/Bx", "-o", out, "-q", "--layout", "auto"}, common...)...)
			m := readManifest(t, out)
			d := m.Variables[0].Datasets[0]
			if d.Layout != kind || fmt.Sprint(d.Chunk) != fmt.Sprint(chunk) {
				t.Errorf("readers %s: run wrote %s %v, plan's auto is %s %v", r, d.Layout, d.Chunk, kind, chunk)
			}
			t.Logf("readers %s, model %q: auto = %s %v, predicted %.4g s", r, model, kind, chunk, auto)
			layouts = append(layouts, filepath.Base(out)+"="+out)
		}
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{filepath.Join(root, "scripts", "readbench.py"), "--runs", "1",
		"--readers", "1,2", "--check"}, layouts...)...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "check: every layout equal to original on 7 patterns") {
		t.Fatalf("readbench.py --check: %v\n%s", err, b)
	}
}
