package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under ../testdata/golden")

// planJSON is the part of `relayout plan --json` (schema relayout-plan/1)
// the property checks read; the golden files hold the whole document.
type planJSON struct {
	Schema    string
	Variables []struct {
		Name    string
		Arrays  int
		Layouts []struct {
			Steps         []int64
			Level         int
			Shape         []int64
			Blocks, Ranks int
			BlocksPerRank struct {
				Min  int
				Mean float64
				Max  int
			} `json:"blocks_per_rank"`
			Cuboids struct {
				Rank, Global int
				Node         *int
			}
			Groups []struct {
				Key     int
				Blocks  int
				Cuboids []struct{ Lower, Count []int64 }
			}
			Layout struct {
				Kind  string
				Chunk []int64
			}
			Costs []struct{ Pattern string }
		}
	}
	Totals struct{ Arrays, Geometries int }
}

// TestPlanGolden compares `relayout plan --json` on the real datasets with
// the golden files (go test ./e2e -run TestPlanGolden -update rewrites them).
func TestPlanGolden(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		args       []string
	}{
		{"femm", "hdf5/openpmd-femm/example-femm-3d.h5", []string{"--layout", "auto", "--readers", "8"}},
		{"fbpic", "hdf5/fbpic", []string{"--layout", "auto", "--readers", "64", "--var", "E/z", "--var", "rho"}},
		{"bp4-generated-lb", "bp4/generated-lb/lb-bp4.bp", []string{"--layout", "auto", "--readers", "8", "--ranks-per-node", "2", "--cuboids"}},
		{"bp5-generated-lb", "bp5/generated-lb/lb-bp5.bp", []string{"--layout", "auto", "--readers", "8", "--ranks-per-node", "2", "--cuboids"}},
		{"bp4-multiblock", "bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp", []string{"--layout", "auto", "--readers", "4", "--var", "r64", "--var", "i8"}},
		{"amrex-pelelmex-3d", "amrex/pelelmex-3d", []string{"--layout", "auto", "--readers", "16", "--var", "temp", "--scope", "global"}},
		{"femm-chunked", "hdf5/openpmd-femm/example-femm-3d.h5", []string{"--layout", "chunked", "--chunks", "2x2x2", "--var", "B/x", "--readers", "27"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := sharedData(t, tc.data)
			r := mustRun(t, append([]string{"plan", in, "--json"}, tc.args...)...)
			// Readers report the input path as given or made absolute: the
			// golden files name it relative to the data folder.
			abs, err := filepath.Abs(in)
			if err != nil {
				t.Fatal(err)
			}
			r.stdout = strings.NewReplacer(`"path": "`+abs+`"`, `"path": "DATA/`+tc.data+`"`,
				`"path": "`+in+`"`, `"path": "DATA/`+tc.data+`"`).Replace(r.stdout)
			golden := filepath.Join("..", "testdata", "golden", "plan-"+tc.name+".json")
			if *update {
				if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if r.stdout != string(want) {
				t.Errorf("plan --json differs from %s (rerun with -update if the change is intended):\n%s", golden, firstDiff(string(want), r.stdout))
			}
			var p planJSON
			if err := json.Unmarshal([]byte(r.stdout), &p); err != nil || p.Schema != "relayout-plan/1" || len(p.Variables) == 0 {
				t.Fatalf("plan JSON: %v schema %q, %d variables", err, p.Schema, len(p.Variables))
			}
			for _, v := range p.Variables {
				for _, l := range v.Layouts {
					if l.Cuboids.Rank > l.Blocks || l.Cuboids.Global > l.Cuboids.Rank || (l.Cuboids.Node != nil && *l.Cuboids.Node > l.Cuboids.Rank) {
						t.Errorf("%s steps %v: cuboids %+v for %d blocks: merging made more pieces", v.Name, l.Steps, l.Cuboids, l.Blocks)
					}
				}
			}
		})
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n  want %s\n  got  %s", i+1, a, b)
		}
	}
	return "(trailing difference)"
}

// owners reads block-owners.txt: "block I J K owner RANK" per line.
func owners(t *testing.T, path string) map[[3]int64]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := map[[3]int64]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var b [3]int64
		var r int
		if _, err := fmt.Sscanf(sc.Text(), "block %d %d %d owner %d", &b[0], &b[1], &b[2], &r); err != nil {
			t.Fatalf("%s: %q: %v", path, sc.Text(), err)
		}
		m[b] = r
	}
	return m
}

// TestPlanGeneratedLB checks the plan of bp4/generated-lb against figures
// computed here from block-owners.txt (written by the generator, not by
// relayout): blocks per rank, and for every rank that its cuboids tile
// exactly its own blocks, no fewer than its face-connected components and no
// more than its blocks.
func TestPlanGeneratedLB(t *testing.T) {
	for _, f := range []string{"bp4", "bp5"} {
		t.Run(f, func(t *testing.T) { checkPlanGeneratedLB(t, f) })
	}
}

func checkPlanGeneratedLB(t *testing.T, format string) {
	dir := sharedData(t, format+"/generated-lb")
	own := owners(t, filepath.Join(dir, "block-owners.txt"))
	if len(own) != 64 {
		t.Fatalf("block-owners.txt lists %d blocks, want 64", len(own))
	}
	r := mustRun(t, "plan", filepath.Join(dir, "lb-"+format+".bp"), "--json", "--cuboids", "--readers", "8")
	var p planJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	// fine/Ez: the blocks whose centre lies within 0.35*N of the domain centre.
	const n = 32
	inner := map[[3]int64]int{}
	for b, rank := range own {
		var d2 float64
		for _, i := range b {
			c := float64(8*i+4) - n/2
			d2 += c * c
		}
		if d2 <= (0.35*n)*(0.35*n) {
			inner[b] = rank
		}
	}
	checked := 0
	for _, v := range p.Variables {
		want := own
		switch v.Name {
		case "fine/Ez":
			want = inner
		case "time":
			continue
		}
		if v.Arrays != 3 || len(v.Layouts) != 1 || !slices.Equal(v.Layouts[0].Steps, []int64{0, 1, 2}) {
			t.Errorf("%s: %d arrays in %d layouts, want 3 steps sharing one (the layout repeats)", v.Name, v.Arrays, len(v.Layouts))
			continue
		}
		l := v.Layouts[0]
		perRank := map[int][][3]int64{}
		for b, rank := range want {
			perRank[rank] = append(perRank[rank], b)
		}
		mn, mx := len(want), 0
		for _, bs := range perRank {
			mn, mx = min(mn, len(bs)), max(mx, len(bs))
		}
		mean := float64(len(want)) / float64(len(perRank))
		if l.Blocks != len(want) || l.Ranks != len(perRank) || l.BlocksPerRank.Min != mn || l.BlocksPerRank.Max != mx ||
			fmt.Sprintf("%.4f", l.BlocksPerRank.Mean) != fmt.Sprintf("%.4f", mean) {
			t.Errorf("%s: %d blocks, %d ranks, per rank %+v; block-owners.txt says %d, %d, %d/%.4f/%d",
				v.Name, l.Blocks, l.Ranks, l.BlocksPerRank, len(want), len(perRank), mn, mean, mx)
		}
		total := 0
		for _, g := range l.Groups {
			bs := perRank[g.Key]
			if g.Blocks != len(bs) {
				t.Errorf("%s rank %d: %d blocks, block-owners.txt says %d", v.Name, g.Key, g.Blocks, len(bs))
			}
			comps := components(bs)
			if len(g.Cuboids) > len(bs) || len(g.Cuboids) < comps {
				t.Errorf("%s rank %d: %d cuboids for %d blocks in %d connected pieces", v.Name, g.Key, len(g.Cuboids), len(bs), comps)
			}
			// Exact tiling, in 8^3 block cells: every cuboid is block-aligned
			// (the blocks form a grid), covers only this rank's blocks, and
			// each block once.
			seen := map[[3]int64]bool{}
			for _, c := range g.Cuboids {
				for d := range 3 {
					if c.Lower[d]%8 != 0 || c.Count[d]%8 != 0 {
						t.Fatalf("%s rank %d: cuboid %v not aligned to the 8^3 blocks", v.Name, g.Key, c)
					}
				}
				for i := c.Lower[0] / 8; i < (c.Lower[0]+c.Count[0])/8; i++ {
					for j := c.Lower[1] / 8; j < (c.Lower[1]+c.Count[1])/8; j++ {
						for k := c.Lower[2] / 8; k < (c.Lower[2]+c.Count[2])/8; k++ {
							b := [3]int64{i, j, k}
							if rank, ok := want[b]; !ok || rank != g.Key || seen[b] {
								t.Errorf("%s rank %d: cuboid %v covers block %v (owner %d, present %v, twice %v)", v.Name, g.Key, c, b, rank, ok, seen[b])
							}
							seen[b] = true
						}
					}
				}
			}
			if len(seen) != len(bs) {
				t.Errorf("%s rank %d: cuboids cover %d of %d blocks", v.Name, g.Key, len(seen), len(bs))
			}
			total += len(g.Cuboids)
		}
		if total != l.Cuboids.Rank || len(l.Groups) != len(perRank) {
			t.Errorf("%s: %d groups with %d cuboids, plan says %d", v.Name, len(l.Groups), total, l.Cuboids.Rank)
		}
		t.Logf("%s: %d blocks over %d ranks -> %d cuboids per rank scope, %d global", v.Name, l.Blocks, l.Ranks, l.Cuboids.Rank, l.Cuboids.Global)
		checked++
	}
	if checked != 4 {
		t.Errorf("checked %d variables, want 4 (fields/Bx, fields/id, fields/rho, fine/Ez)", checked)
	}
}

// components counts the face-connected components of a set of grid cells.
func components(cells [][3]int64) int {
	in := map[[3]int64]bool{}
	for _, c := range cells {
		in[c] = true
	}
	seen := map[[3]int64]bool{}
	n := 0
	for _, c := range cells {
		if seen[c] {
			continue
		}
		n++
		stack := [][3]int64{c}
		seen[c] = true
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for d := range 3 {
				for _, s := range []int64{-1, 1} {
					y := x
					y[d] += s
					if in[y] && !seen[y] {
						seen[y] = true
						stack = append(stack, y)
					}
				}
			}
		}
	}
	return n
}

// TestRunAutoFollowsPlan checks that `run --layout auto` writes the layouts
// `plan --layout auto` predicts for the same readers, and that the output
// verifies (run verifies before committing).
func TestRunAutoFollowsPlan(t *testing.T) {
	in := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	for _, readers := range []string{"1", "1024"} {
		var p planJSON
		if err := json.Unmarshal([]byte(mustRun(t, "plan", in, "--json", "--layout", "auto", "--readers", readers).stdout), &p); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "run", in, "-o", out, "--layout", "auto", "--readers", readers, "-q")
		m := readManifest(t, out)
		for i, v := range m.Variables {
			for _, d := range v.Datasets {
				l := p.Variables[i].Layouts[0].Layout
				if p.Variables[i].Name != v.Name || d.Layout != l.Kind || !slices.Equal(d.Chunk, l.Chunk) {
					t.Errorf("readers %s: %s written %s %v, plan says %s %s %v", readers, v.Name, d.Layout, d.Chunk, p.Variables[i].Name, l.Kind, l.Chunk)
				}
			}
		}
		checkH5dumpLayout(t, out, m)
	}
}

// TestInspectSVG draws a slice of every readable dataset and checks that the
// SVG is well-formed XML (encoding/xml) and that rsvg-convert (librsvg, a real
// renderer) turns it into a PNG when it is installed.
func TestInspectSVG(t *testing.T) {
	for _, tc := range []struct {
		data string
		args []string
	}{
		{"bp4/generated-lb/lb-bp4.bp", []string{"--var", "fields/Bx", "--axis", "z", "--slice", "12"}},
		{"bp4/generated-lb/lb-bp4.bp", []string{"--var", "fine/Ez", "--axis", "x", "--readers", "64", "--scope", "global"}},
		{"bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp", []string{"--var", "r64", "--step", "2"}},
		{"hdf5/openpmd-femm/example-femm-3d.h5", nil},
		{"hdf5/fbpic", []string{"--var", "rho", "--step", "100", "--axis", "y"}},
		{"amrex/pelelmex-3d", []string{"--var", "temp", "--level", "2", "--ranks-per-node", "2", "--scope", "node"}},
	} {
		t.Run(strings.ReplaceAll(tc.data, "/", "_")+strings.Join(tc.args, "_"), func(t *testing.T) {
			in := sharedData(t, tc.data)
			svg := filepath.Join(t.TempDir(), "pic.svg")
			mustRun(t, append([]string{"inspect", in, "--svg", svg}, tc.args...)...)
			b, err := os.ReadFile(svg)
			if err != nil {
				t.Fatal(err)
			}
			dec := xml.NewDecoder(bytes.NewReader(b))
			blocks := 0
			for {
				tok, err := dec.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("not well-formed XML: %v", err)
				}
				if cd, ok := tok.(xml.CharData); ok && bytes.HasPrefix(cd, []byte("block ")) {
					blocks++
				}
			}
			if blocks == 0 {
				t.Error("the picture shows no block")
			}
			if _, err := exec.LookPath("rsvg-convert"); err != nil {
				t.Logf("rsvg-convert not installed (Debian librsvg2-bin): rendering not checked")
				return
			}
			png := strings.TrimSuffix(svg, ".svg") + ".png"
			if out, err := exec.Command("rsvg-convert", "-o", png, svg).CombinedOutput(); err != nil {
				t.Fatalf("rsvg-convert: %v\n%s", err, out)
			}
			if st, err := os.Stat(png); err != nil || st.Size() < 1000 {
				t.Errorf("PNG: %v", err)
			}
		})
	}
	// Usage errors exit 2.
	in := sharedData(t, "bp4/generated-lb/lb-bp4.bp")
	for _, args := range [][]string{
		{"--var", "fields/Bx", "--slice", "32"},
		{"--var", "fields/Bx", "--axis", "w"},
		{"--var", "fields/Bx", "--step", "7"},
		{"--readers", "0"},
		{"--layout", "chunked"},
	} {
		if r := relayout(t, append([]string{"inspect", in, "--svg", filepath.Join(t.TempDir(), "x.svg")}, args...)...); r.code != 2 {
			t.Errorf("inspect %v: exit %d, want 2\n%s", args, r.code, r.stderr)
		}
	}
}
