package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// bpGen writes a BP4 or BP5 dataset with ../shared/peers/bp_gen.py under
// mpirun (ranks writer ranks, aggregators sub-files): n^3 arrays in b^3
// blocks after a load-balancing shuffle, the variables interleaved block by
// block in the sub-files, fine/Ez partly covered. It skips (fails under
// CI) without the peers or mpirun.
func bpGen(t *testing.T, engine, out string, n, b, ranks, aggregators int) {
	t.Helper()
	dir, env := testkit.PeersEnv(t)
	mpirun := testkit.NeedTool(t, "mpirun", "Debian openmpi-bin")
	cmd := exec.Command(mpirun, "-np", strconv.Itoa(ranks), "--oversubscribe", "--mca", "btl", "self,vader",
		"--mca", "btl_vader_single_copy_mechanism", "none",
		python, filepath.Join(dir, "bp_gen.py"), engine, out, strconv.Itoa(n), strconv.Itoa(b), "--aggregators", strconv.Itoa(aggregators))
	cmd.Env = append(env, "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bp_gen.py %s: %v\n%s", engine, err, b)
	}
}

// holesCheck is holes.py's report.
type holesCheck struct {
	Blocks       int
	CoveredBytes int64 `json:"covered_bytes"`
	Holes        int64
	Chunks       []int64
	FillValue    string `json:"fillvalue"`
	FileBytes    int64  `json:"file_bytes"`
	Problems     []string
}

// TestHolesCostNothing: a partly covered array (bp_gen.py's fine/Ez, real
// ADIOS2 BP4) asked contiguous is written chunked with only the chunks its
// blocks touch (file <= 5/4 of the covered bytes + metadata), its values equal the
// adios2 Python reader's block by block (h5py), holes read NaN (h5py, and
// openPMD-api and yt through series.h5 read what h5py reads); --fill writes
// it dense and contiguous,
// holes NaN too; run --resume writes what run writes.
func TestHolesCostNothing(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bp4")
	bpGen(t, "BP4", in, 48, 8, 4, 2)
	const n, elem = 48, 8
	for _, c := range []struct {
		name   string
		args   []string
		layout string
		note   bool // the partly covered note (auto may choose chunks itself)
	}{
		{"default", nil, "chunked", true},
		{"fill", []string{"--fill"}, "contiguous", false},
		{"resume", []string{"--resume"}, "chunked", true},
		{"auto", []string{"--layout", "auto", "--readers", "1"}, "chunked", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			r := mustRun(t, append([]string{"run", in, "-o", out, "--progress", "none"}, c.args...)...)
			ez := holesDataset(t, out, "fine/Ez")
			if bx := holesDataset(t, out, "fields/Bx"); c.name != "auto" && bx.Layout != "contiguous" {
				t.Errorf("fields/Bx (fully covered): layout %s, want contiguous", bx.Layout)
			}
			note := strings.Contains(ez.Note, "partly covered")
			logged := strings.Contains(r.stderr, "layout: fine/Ez: partly covered")
			if ez.Layout != c.layout || note != logged || c.note && !note || c.name == "fill" && note {
				t.Errorf("fine/Ez: layout %s, note %q, logged %v; want %s, note %v", ez.Layout, ez.Note, logged, c.layout, c.note)
			}
			_, env := testkit.PeersEnv(t)
			cmd := exec.Command(python, "holes.py", in, "fine/Ez", filepath.Join(out, ez.File), ez.Path,
				filepath.Join(out, "series.h5"), "fine", "Ez")
			cmd.Env = env
			b, err := cmd.CombinedOutput()
			var hc holesCheck
			if jerr := json.Unmarshal(b, &hc); jerr != nil {
				t.Fatalf("holes.py: %v %v\n%s", err, jerr, b)
			}
			if err != nil || len(hc.Problems) > 0 {
				t.Fatalf("holes.py (adios2 vs h5py vs openPMD-api): %v %q", err, hc.Problems)
			}
			if hc.Holes == 0 || hc.CoveredBytes == 0 || hc.FillValue != "nan" {
				t.Fatalf("fine/Ez: %+v: want holes, covered bytes and a NaN fill value", hc)
			}
			dense := int64(n * n * n * elem)
			switch ez.Layout {
			case "chunked":
				// Only what exists (chunks of under 64 KiB may store up to
				// 1/4 more: planner.HoleSmallWaste), and the file's metadata.
				if limit := hc.CoveredBytes*5/4 + 32<<10; hc.Chunks == nil || hc.FileBytes > limit {
					t.Errorf("fine/Ez chunked: %d bytes for %d covered (chunks %v), want at most %d",
						hc.FileBytes, hc.CoveredBytes, hc.Chunks, limit)
				}
			case "contiguous":
				if hc.Chunks != nil || hc.FileBytes < dense {
					t.Errorf("fine/Ez contiguous: %d bytes (chunks %v), want the dense %d", hc.FileBytes, hc.Chunks, dense)
				}
			}
			t.Logf("%s: fine/Ez %s %v: %d bytes in the file for %d covered (%d blocks, %d holes)",
				c.name, ez.Layout, hc.Chunks, hc.FileBytes, hc.CoveredBytes, hc.Blocks, hc.Holes)
		})
	}
	// run and run --resume write the same array.
	if a, b := holesDataset(t, filepath.Join(dir, "default"), "fine/Ez"), holesDataset(t, filepath.Join(dir, "resume"), "fine/Ez"); a.SHA256 != b.SHA256 ||
		a.Layout != b.Layout || a.Note != b.Note {
		t.Errorf("run and run --resume differ: %+v vs %+v", a, b)
	}
	// plan previews the layout run writes, and --fill the dense one.
	if r := mustRun(t, "plan", in, "--var", "fine/Ez"); !strings.Contains(r.stdout, "partly covered") {
		t.Errorf("plan: no partly covered note:\n%s", r.stdout)
	}
	if r := mustRun(t, "plan", in, "--var", "fine/Ez", "--fill"); strings.Contains(r.stdout, "partly covered") {
		t.Errorf("plan --fill: partly covered note:\n%s", r.stdout)
	}
}

// holesDataset is the manifest entry of step 0 of variable v in out, with
// the file it is in.
func holesDataset(t *testing.T, out, v string) struct {
	File, Path, Layout, Note, SHA256 string
} {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Variables []struct {
			Name, File string
			Datasets   []struct{ Path, Layout, Note, SHA256 string }
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, mv := range m.Variables {
		if mv.Name == v && len(mv.Datasets) > 0 {
			d := mv.Datasets[0]
			return struct{ File, Path, Layout, Note, SHA256 string }{mv.File, d.Path, d.Layout, d.Note, d.SHA256}
		}
	}
	t.Fatalf("%s: no variable %s in the manifest", out, v)
	return struct{ File, Path, Layout, Note, SHA256 string }{}
}
