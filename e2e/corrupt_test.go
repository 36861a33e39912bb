package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// TestBrokenBPDetected: a real BP4/BP5 dataset whose md.idx is damaged
// (zeroed header, cut inside the header) or whose md.0 is cut short is
// still recognised by its files and refused as that format's damage:
// exit 2, the message naming the format, the file and the offset (not "not
// a recognised format"), nothing under OUT's final names. ADIOS2's bpls
// refuses each damaged copy too (the independent reader: the input really
// is broken).
func TestBrokenBPDetected(t *testing.T) {
	_, env := testkit.PeersEnv(t)
	zeroHeader := func(t *testing.T, ds string) {
		f, err := os.OpenFile(filepath.Join(ds, "md.idx"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt(make([]byte, 64), 0); err != nil {
			t.Fatal(err)
		}
	}
	cut := func(file string, size int64) func(*testing.T, string) {
		return func(t *testing.T, ds string) {
			if err := os.Truncate(filepath.Join(ds, file), size); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name, src string
		damage    func(*testing.T, string)
		mention   []string
	}{
		{"bp5-zeroed-header", "bp5/quokka-2d/plt00758.bp", zeroHeader,
			[]string{"this is a BP5 dataset but its md.idx is broken", "bp5: md.idx: offset 37: header: BP format version byte 0"}},
		{"bp5-cut-header", "bp5/quokka-2d/plt00758.bp", cut("md.idx", 30),
			[]string{"this is a BP5 dataset but its md.idx is broken", "bp5: md.idx: offset 0: header: 30-byte file"}},
		{"bp4-zeroed-header", "bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp", zeroHeader,
			[]string{"this is a BP4 dataset but its md.idx is broken", "bp4: md.idx: offset 37: header: BP format version byte 0"}},
		{"bp4-cut-md0", "bp4/heat-2.7.1/heat.bp", cut("md.0", 1000),
			[]string{"this is a BP4 dataset but its md.idx is broken", "bp4: md.idx: offset 128: index record", "outside md.0 (size 1000)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in.bp")
			testkit.CopyTree(t, sharedData(t, c.src), in)
			c.damage(t, in)
			bpls := exec.Command("bpls", in)
			bpls.Env = env
			if out, err := bpls.CombinedOutput(); err == nil {
				t.Fatalf("bpls reads the damaged copy:\n%s", out)
			}
			out := filepath.Join(dir, "out")
			r := relayout(t, "run", in, "-o", out, "-q")
			refused(t, r, 2, out, append([]string{in}, c.mention...)...)
			if strings.Contains(r.stderr, "not a recognised format") || strings.Contains(r.stderr, "no dataset") {
				t.Errorf("refused as an unknown format:\n%s", r.stderr)
			}
		})
	}
}
