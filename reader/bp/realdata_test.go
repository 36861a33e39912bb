package bp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"relayout/catalog"
)

type varWant struct {
	dtype  string
	shape  []int64
	steps  []int64
	blocks int // per array
}

// summary maps var -> what the catalog says, asserting one dtype/shape/block
// count across steps.
func summary(t *testing.T, arrays []*catalog.Array) map[string]varWant {
	t.Helper()
	out := map[string]varWant{}
	for _, a := range arrays {
		w, ok := out[a.Var]
		if !ok {
			w = varWant{dtype: a.DType.NumPy(), shape: a.Shape, blocks: len(a.Blocks)}
		} else if w.dtype != a.DType.NumPy() || !slices.Equal(w.shape, a.Shape) || w.blocks != len(a.Blocks) {
			t.Errorf("%s@%d: %s %v %d blocks, step %d had %s %v %d", a.Var, a.Step, a.DType, a.Shape, len(a.Blocks), w.steps[0], w.dtype, w.shape, w.blocks)
		}
		w.steps = append(w.steps, a.Step)
		out[a.Var] = w
	}
	return out
}

func steps(n int64) []int64 {
	var s []int64
	for i := int64(0); i < n; i++ {
		s = append(s, i)
	}
	return s
}

func checkSummary(t *testing.T, got map[string]varWant, want map[string]varWant) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("variable %s missing", name)
			continue
		}
		if g.dtype != w.dtype || !slices.Equal(g.shape, w.shape) || !slices.Equal(g.steps, w.steps) || g.blocks != w.blocks {
			t.Errorf("%s: %s %v steps %v %d blocks, want %s %v steps %v %d blocks", name, g.dtype, g.shape, g.steps, g.blocks, w.dtype, w.shape, w.steps, w.blocks)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d variables, want %d", len(got), len(want))
	}
}

func TestGeneratedLB(t *testing.T) {
	dir := dataDir(t, "bp4/generated-lb")
	d := open(t, filepath.Join(dir, "lb-bp4.bp"))
	if d.Info().Format != "bp4" {
		t.Errorf("format %q", d.Info().Format)
	}
	checkGeneratedLB(t, d, dir)
}

// checkGeneratedLB checks a generated-lb set (BP4 or BP5): variables,
// shapes, block counts, values against value_rule and writer ranks against
// block-owners.txt.
func checkGeneratedLB(t *testing.T, d *Dataset, dir string) {
	arrays := scanAll(t, d)
	s3 := []int64{32, 32, 32}
	checkSummary(t, summary(t, arrays), map[string]varWant{
		"fields/Bx":  {"<f8", s3, steps(3), 64},
		"fields/rho": {"<f4", s3, steps(3), 64},
		"fields/id":  {"<i4", s3, steps(3), 64},
		"fine/Ez":    {"<f8", s3, steps(3), 8},
		"time":       {"<f8", []int64{}, steps(3), 1},
	})
	rule := attr(d.Info().Attrs, "value_rule")
	if rule == nil || !strings.Contains(rule.Strings[0], "((step*N+i)*N+j)*N+k") {
		t.Fatalf("value_rule attribute: %+v", rule)
	}
	if n := attr(d.Info().Attrs, "N"); n == nil || n.Ints[0] != 32 {
		t.Errorf("N attribute: %+v", n)
	}
	// Owners of each 8^3 block from the writer's block-owners.txt.
	owners := map[[3]int64]int{}
	f, err := os.Open(filepath.Join(dir, "block-owners.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var i, j, k int64
		var r int
		if _, err := fmt.Sscanf(sc.Text(), "block %d %d %d owner %d", &i, &j, &k, &r); err == nil {
			owners[[3]int64{8 * i, 8 * j, 8 * k}] = r
		}
	}
	if len(owners) != 64 {
		t.Fatalf("%d owners in block-owners.txt", len(owners))
	}
	const N = 32
	for _, a := range arrays {
		s := float64(a.Step)
		if a.Var == "time" {
			v, _ := values(t, d, a)
			if v[0] != 0.5*s {
				t.Errorf("time@%d = %v", a.Step, v[0])
			}
			continue
		}
		for _, b := range a.Blocks {
			if want := owners[[3]int64(b.Box.Lower)]; int(b.Rank) != want {
				t.Errorf("%s@%d block %v: rank %d, block-owners.txt says %d", a.Var, a.Step, b.Box.Lower, b.Rank, want)
			}
		}
		v, seen := values(t, d, a)
		bad := 0
		for i := 0; i < N; i++ {
			for j := 0; j < N; j++ {
				for k := 0; k < N; k++ {
					x := (i*N+j)*N + k
					lin := float64(x)
					var want float64
					switch a.Var {
					case "fields/Bx":
						want = (s*N+float64(i))*N*N + float64(j*N+k)
					case "fine/Ez":
						want = -((s*N+float64(i))*N*N + float64(j*N+k))
					case "fields/rho":
						want = float64(float32(lin*0.25 + s))
					case "fields/id":
						want = lin + s*N*N*N
					}
					if !seen[x] {
						if a.Var != "fine/Ez" {
							t.Fatalf("%s@%d: element %d not covered", a.Var, a.Step, x)
						}
						continue
					}
					if v[x] != want && bad < 5 {
						bad++
						t.Errorf("%s@%d [%d,%d,%d] = %v, value_rule says %v", a.Var, a.Step, i, j, k, v[x], want)
					}
				}
			}
		}
		if a.Var == "fine/Ez" {
			// Covered exactly where the block centre is within 0.35*N of the domain centre.
			for _, b := range a.Blocks {
				c := 0.0
				for _, l := range b.Box.Lower {
					c += (float64(l) + 4 - 16) * (float64(l) + 4 - 16)
				}
				if c > (0.35*N)*(0.35*N) {
					t.Errorf("fine/Ez block %v outside the covered sphere", b.Box.Lower)
				}
			}
		}
	}
}

// crossCheck compares two inputs array by array, element by element.
func crossCheck(t *testing.T, a, b *Dataset) {
	t.Helper()
	aa, bb := scanAll(t, a), scanAll(t, b)
	if len(aa) != len(bb) {
		t.Fatalf("%d arrays vs %d", len(aa), len(bb))
	}
	for i := range aa {
		x, y := aa[i], bb[i]
		if x.Var != y.Var || x.Step != y.Step || x.DType != y.DType || !slices.Equal(x.Shape, y.Shape) {
			t.Fatalf("%s@%d %s %v vs %s@%d %s %v", x.Var, x.Step, x.DType, x.Shape, y.Var, y.Step, y.DType, y.Shape)
		}
		vx, sx := values(t, a, x)
		vy, sy := values(t, b, y)
		if !slices.Equal(vx, vy) || !slices.Equal(sx, sy) {
			t.Errorf("%s@%d: values differ", x.Var, x.Step)
		}
	}
}

func TestMultiblockBP3vsBP4(t *testing.T) {
	d3 := open(t, filepath.Join(dataDir(t, "bp3/multiblock-2.5.0"), "BP3Multiblock2D4x2.bp"))
	d4 := open(t, filepath.Join(dataDir(t, "bp4/multiblock-2.5.0"), "BP4Multiblock2D4x2.bp"))
	if d3.Info().Format != "bp3" || d4.Info().Format != "bp4" {
		t.Errorf("formats %q %q", d3.Info().Format, d4.Info().Format)
	}
	want := map[string]varWant{}
	for _, v := range []string{"|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8"} {
		name := map[byte]string{'i': "i", 'u': "u", 'f': "r"}[v[1]] + strconv.Itoa(8*int(v[2]-'0'))
		want[name] = varWant{v, []int64{4, 8}, steps(3), 8}
	}
	checkSummary(t, summary(t, scanAll(t, d4)), want)
	checkSummary(t, summary(t, scanAll(t, d3)), want)
	crossCheck(t, d3, d4)
}

// bplsDump runs ADIOS 1.x bpls -d on a whole file, one value per line, and
// returns var -> printed index (step first, "0,1,2") -> value. Floats are
// printed with %.17g, integers in bpls's default format. bpls 1.13 crashes
// on some ADIOS2-written types after printing the others; what it printed
// before is kept, and callers compare only variables printed completely.
func bplsDump(t *testing.T, bpls, file string) map[string]map[string]float64 {
	t.Helper()
	all := map[string]map[string]float64{}
	for _, float := range []bool{false, true} {
		args := []string{"-d", file, "-n", "1"}
		if float {
			args = append(args, "-f", "%.17g")
		}
		out, err := exec.Command(bpls, args...).Output()
		if err != nil && len(out) == 0 {
			t.Fatalf("bpls %v: %v", args, err)
		}
		cur := ""
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if !strings.HasPrefix(f[0], "(") {
				// "  double   T   3*{8, 12}": the name precedes the dimensions.
				cur = ""
				for i := 1; i < len(f); i++ {
					if strings.Contains(f[i], "*{") || strings.HasPrefix(f[i], "{") {
						isFloat := strings.Contains(line, "double") || strings.Contains(line, "real")
						if isFloat == float && !strings.Contains(line, "complex") {
							cur = f[i-1]
						}
						break
					}
				}
				continue
			}
			if cur == "" {
				continue
			}
			idx, val, _ := strings.Cut(line, ")")
			x, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
			if err != nil {
				continue // a line cut short by the crash
			}
			if all[cur] == nil {
				all[cur] = map[string]float64{}
			}
			all[cur][strings.ReplaceAll(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(idx), "(")), " ", "")] = x
		}
	}
	return all
}

// TestBP3AgainstBpls compares every element of the BP3 sets with ADIOS 1.x
// bpls -d. bpls shows column-major writers' dimensions reversed.
func TestBP3AgainstBpls(t *testing.T) {
	bpls := needBpls(t)
	for _, tc := range []struct {
		p       string
		minVars int
	}{{"bp3/heat-adios2/heat.bp", 2}, {"bp3/multiblock-2.5.0/BP3Multiblock2D4x2.bp", 6}} {
		t.Run(filepath.Base(tc.p), func(t *testing.T) {
			path := filepath.Join(dataDir(t, filepath.Dir(tc.p)), filepath.Base(tc.p))
			d := open(t, path)
			oracle := bplsDump(t, bpls, path)
			arrays := scanAll(t, d)
			total := map[string]int64{}
			for _, a := range arrays {
				total[a.Var] += a.Elements()
			}
			compared := map[string]bool{}
			for _, a := range arrays {
				o := oracle[a.Var]
				if int64(len(o)) != total[a.Var] {
					continue // not (completely) printed by bpls
				}
				compared[a.Var] = true
				v, seen := values(t, d, a)
				colMaj := len(a.Blocks) > 0 && a.Blocks[0].Order == catalog.ColMajor
				idx := make([]int64, len(a.Shape))
				for x := range v {
					if !seen[x] {
						t.Fatalf("%s@%d: element %d not covered", a.Var, a.Step, x)
					}
					key := []string{strconv.FormatInt(a.Step, 10)}
					for k := range idx {
						kk := k
						if colMaj {
							kk = len(idx) - 1 - k
						}
						key = append(key, strconv.FormatInt(idx[kk], 10))
					}
					want, ok := o[strings.Join(key, ",")]
					if !ok || v[x] != want {
						t.Fatalf("%s@%d %v = %v, bpls says %v (printed: %v)", a.Var, a.Step, idx, v[x], want, ok)
					}
					for k := len(idx) - 1; k >= 0; k-- {
						idx[k]++
						if idx[k] < a.Shape[k] {
							break
						}
						idx[k] = 0
					}
				}
			}
			if len(compared) < tc.minVars {
				t.Fatalf("bpls printed only %d variables completely (%v), want >= %d", len(compared), compared, tc.minVars)
			}
			t.Logf("compared with bpls: %d variables", len(compared))
		})
	}
}

func TestHeatBP3ColumnMajor(t *testing.T) {
	d := open(t, filepath.Join(dataDir(t, "bp3/heat-adios2"), "heat.bp"))
	arrays := scanAll(t, d)
	checkSummary(t, summary(t, arrays), map[string]varWant{
		"T":  {"<f8", []int64{12, 8}, steps(3), 4},
		"dT": {"<f8", []int64{12, 8}, steps(3), 4},
	})
	for _, a := range arrays {
		for i, b := range a.Blocks {
			if b.Order != catalog.ColMajor || int(b.Rank) != i || !strings.HasPrefix(b.File, "heat.bp.dir/heat.bp.") {
				t.Errorf("%s@%d block %d: order %v rank %d file %s", a.Var, a.Step, i, b.Order, b.Rank, b.File)
			}
		}
	}
}

func TestCompressed(t *testing.T) {
	dir := dataDir(t, "bp4/compressed-2.7.1")
	bz := open(t, filepath.Join(dir, "compressed_bzip2_271.bp"))
	plain := open(t, filepath.Join(dir, "notcompressed_271.bp"))
	ab, ap := scanAll(t, bz), scanAll(t, plain)
	if len(ab) != 1 || len(ap) != 1 || len(ab[0].Blocks) != 1 {
		t.Fatalf("%d and %d arrays", len(ab), len(ap))
	}
	if c := ab[0].Blocks[0].Codecs; len(c) != 1 || c[0].Name != "bzip2" {
		t.Fatalf("codecs %v", c)
	}
	// The two files were written by the same adios2_iotest run with different
	// sizes (100x200 compressed, 10x20 plain); compare the common region.
	vb, sb := values(t, bz, ab[0])
	vp, sp := values(t, plain, ap[0])
	if !slices.Equal(ab[0].Shape, []int64{100, 200}) || !slices.Equal(ap[0].Shape, []int64{10, 20}) {
		t.Fatalf("shapes %v %v", ab[0].Shape, ap[0].Shape)
	}
	for i := 0; i < 10; i++ {
		for j := 0; j < 20; j++ {
			if !sb[i*200+j] || !sp[i*20+j] || vb[i*200+j] != vp[i*20+j] {
				t.Fatalf("[%d,%d]: bzip2 %v, uncompressed %v", i, j, vb[i*200+j], vp[i*20+j])
			}
		}
	}
	if !slices.Contains(sb, true) || slices.Contains(sb, false) {
		t.Error("bzip2 array not fully covered")
	}
	// A damaged stream is reported, not decoded into garbage.
	b := ab[0].Blocks[0]
	b.Length -= 10
	if _, err := catalog.ReadBlock(t.Context(), bz, &b, ab[0].DType); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("truncated bzip2 block: %v", err)
	}
}

func TestArchive(t *testing.T) {
	dir := dataDir(t, "bp4/archive")
	// 2.10 writes its minor version as ':'; its PG offsets after step 1 are
	// wrong, so ranks come from the PG chain in data.0.
	d := open(t, filepath.Join(dir, "Common.2.10.bp4.bp"))
	if d.version != 2010 {
		t.Errorf("version %d, want 2010", d.version)
	}
	arrays := scanAll(t, d)
	s10 := steps(10)
	checkSummary(t, summary(t, arrays), map[string]varWant{
		"i8": {"|i1", []int64{40}, s10, 4}, "i16": {"<i2", []int64{40}, s10, 4}, "i32": {"<i4", []int64{40}, s10, 4},
		"i64": {"<i8", []int64{40}, s10, 4}, "r32": {"<f4", []int64{40}, s10, 4}, "r64": {"<f8", []int64{40}, s10, 4},
		"r64_2d": {"<f8", []int64{40, 2}, s10, 4}, "r64_2d_rev": {"<f8", []int64{2, 40}, s10, 4},
		"time": {"<i8", []int64{4}, s10, 4}, "scalar_r64": {"<f8", []int64{}, s10, 1},
	})
	for _, a := range arrays {
		if a.Var == "scalar_r64" {
			continue
		}
		for i, b := range a.Blocks {
			if int(b.Rank) != i {
				t.Errorf("%s@%d block %d: rank %d", a.Var, a.Step, i, b.Rank)
			}
		}
	}
	sk := strings.Join(d.Info().Skipped, "\n")
	for _, v := range []string{"c32: element type complex64", "c64: element type complex128"} {
		if !strings.Contains(sk, v) {
			t.Errorf("Skipped %q lacks %q", sk, v)
		}
	}
	// Attributes (strings, arrays, numbers) from the 2.5 attribute writer.
	a := open(t, filepath.Join(dir, "Attribute.2.5.bp4.bp"))
	aa := scanAll(t, a)
	checkSummary(t, summary(t, aa), map[string]varWant{"bpFloats": {"<f4", []int64{40}, steps(1), 4}})
	if len(a.Info().Attrs) == 0 {
		t.Error("no attributes")
	}
	for _, at := range a.Info().Attrs {
		if len(at.Strings)+len(at.Floats)+len(at.Ints)+len(at.Uints) == 0 {
			t.Errorf("attribute %s has no value", at.Name)
		}
	}
}

func TestHeat271(t *testing.T) {
	d := open(t, filepath.Join(dataDir(t, "bp4/heat-2.7.1"), "heat.bp"))
	arrays := scanAll(t, d)
	checkSummary(t, summary(t, arrays), map[string]varWant{"T": {"<f8", []int64{20, 20}, steps(4), 4}})
	for _, a := range arrays {
		v, seen := values(t, d, a)
		if slices.Contains(seen, false) {
			t.Errorf("T@%d not fully covered", a.Step)
		}
		_ = v
	}
}

func TestPIConGPUOpenPMD(t *testing.T) {
	d := open(t, filepath.Join(dataDir(t, "bp4/picongpu-lwfa"), "pic_n2.bp"))
	info := d.Info()
	if info.Format != "openpmd-bp4" {
		t.Errorf("format %q", info.Format)
	}
	arrays := scanAll(t, d)
	s := []int64{550}
	f3 := []int64{32, 64, 56}
	n, p := []int64{35915}, []int64{2}
	checkSummary(t, summary(t, arrays), map[string]varWant{
		"B/x": {"<f4", f3, s, 2}, "B/y": {"<f4", f3, s, 2}, "B/z": {"<f4", f3, s, 2},
		"E/x": {"<f4", f3, s, 2}, "E/y": {"<f4", f3, s, 2}, "E/z": {"<f4", f3, s, 2},
		"e_chargeDensity": {"<f4", f3, s, 2}, "e_energyDensity": {"<f4", f3, s, 2},
		"e_particleMomentumComponent": {"<f4", f3, s, 2},
		"picongpu_idProvider/nextId":  {"<u8", []int64{1, 2, 1}, s, 2},
		"picongpu_idProvider/startId": {"<u8", []int64{1, 2, 1}, s, 2},
		// bpls -l: species "e" of 35915 particles written by two ranks,
		// two particle patches; charge and mass constant records.
		"particles/e/momentum/x": {"<f4", n, s, 2}, "particles/e/momentum/y": {"<f4", n, s, 2}, "particles/e/momentum/z": {"<f4", n, s, 2},
		"particles/e/position/x": {"<f4", n, s, 2}, "particles/e/position/y": {"<f4", n, s, 2}, "particles/e/position/z": {"<f4", n, s, 2},
		"particles/e/positionOffset/x": {"<i4", n, s, 2}, "particles/e/positionOffset/y": {"<i4", n, s, 2}, "particles/e/positionOffset/z": {"<i4", n, s, 2},
		"particles/e/weighting": {"<f4", n, s, 2},
		// their shape attribute is 0 (bpls -a)
		"particles/e/charge": {"<f8", []int64{0}, s, 0}, "particles/e/mass": {"<f8", []int64{0}, s, 0},
		"particles/e/particlePatches/numParticles": {"<u8", p, s, 2}, "particles/e/particlePatches/numParticlesOffset": {"<u8", p, s, 2},
		"particles/e/particlePatches/offset/x": {"<u8", p, s, 2}, "particles/e/particlePatches/offset/y": {"<u8", p, s, 2}, "particles/e/particlePatches/offset/z": {"<u8", p, s, 2},
		"particles/e/particlePatches/extent/x": {"<u8", p, s, 2}, "particles/e/particlePatches/extent/y": {"<u8", p, s, 2}, "particles/e/particlePatches/extent/z": {"<u8", p, s, 2},
	})
	if slices.ContainsFunc(info.Skipped, func(s string) bool { return strings.Contains(s, "particles") }) {
		t.Errorf("particles listed in Skipped: %v", info.Skipped)
	}
	for _, a := range arrays {
		if !strings.HasPrefix(a.Var, "particles/") {
			continue
		}
		if a.Species != "e" {
			t.Errorf("%s: species %q", a.Var, a.Species)
		}
		// species attribute (on /data/550/particles/e), record attribute
		switch a.Var {
		case "particles/e/momentum/x":
			if c := attr(a.Attrs, "particleInterpolation"); c == nil || !c.Species {
				t.Errorf("%s: species attribute particleInterpolation %+v", a.Var, c)
			}
			if m := attr(a.Attrs, "macroWeighted"); m == nil || !m.Record || m.Type != "uint32" {
				t.Errorf("%s: record attribute macroWeighted %+v", a.Var, m)
			}
		case "particles/e/particlePatches/numParticles", "particles/e/particlePatches/numParticlesOffset":
			// bpls -l: numParticles 519 / 35396 (min / max), offsets 0 / 519:
			// patch p's particles start at numParticlesOffset[p].
			want := map[string][]float64{"particles/e/particlePatches/numParticles": {519, 35396},
				"particles/e/particlePatches/numParticlesOffset": {0, 519}}[a.Var]
			if v, _ := values(t, d, a); !slices.Equal(v, want) {
				t.Errorf("%s = %v, bpls says %v", a.Var, v, want)
			}
		case "particles/e/charge":
			if !a.Constant {
				t.Errorf("%s: not constant", a.Var)
			}
		}
	}
	if a := attr(info.Attrs, "openPMD"); a == nil || a.Strings[0] != "1.1.0" {
		t.Errorf("root openPMD attribute: %+v", a)
	}
	for _, a := range arrays {
		if a.Var != "E/x" {
			continue
		}
		// Component attribute, record attribute, iteration attribute.
		if p := attr(a.Attrs, "position"); p == nil || !slices.Equal(p.Floats, []float64{0.5, 0, 0}) {
			t.Errorf("E/x position: %+v", p)
		}
		if u := attr(a.Attrs, "unitDimension"); u == nil || !slices.Equal(u.Floats, []float64{1, 1, -3, -1, 0, 0, 0}) {
			t.Errorf("E unitDimension: %+v", u)
		}
		if dt := attr(a.StepAttrs, "dt"); dt == nil || dt.Floats[0] != 1 {
			t.Errorf("iteration dt: %+v", dt)
		}
		// Two writers split the domain; every element is covered once.
		_, seen := values(t, d, a)
		if slices.Contains(seen, false) {
			t.Error("E/x not fully covered")
		}
		if a.Blocks[0].Rank != 0 || a.Blocks[1].Rank != 1 {
			t.Errorf("ranks %d %d", a.Blocks[0].Rank, a.Blocks[1].Rank)
		}
	}
	// The selection applies to mapped names.
	sel, err := Open(filepath.Join(dataDir(t, "bp4/picongpu-lwfa"), "pic_n2.bp"), Config{Match: func(n string) bool { return strings.HasPrefix(n, "E/") }})
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	if got := scanAll(t, sel); len(got) != 3 {
		t.Errorf("selection E/*: %d arrays", len(got))
	}
}

// TestCorruptInputs truncates and overwrites metadata of real sets: every
// case must end in an error wrapping ErrCorrupt (or open fine), never panic.
func TestCorruptInputs(t *testing.T) {
	src := filepath.Join(dataDir(t, "bp4/generated-lb"), "lb-bp4.bp")
	dir := t.TempDir()
	for _, n := range []string{"md.idx", "md.0", "data.0", "data.1", "data.2"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	md, _ := os.ReadFile(filepath.Join(src, "md.0"))
	// A variable index entry length that runs past its section.
	bad := bytes.Clone(md)
	bad[254] = 0xff
	os.WriteFile(filepath.Join(dir, "md.0"), bad, 0o644)
	_, err := Open(dir, Config{})
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "bp4: md.0: offset 332: variable index") {
		t.Errorf("bad entry length: %v", err)
	}
	// md.0 truncated in the middle of step 2.
	os.WriteFile(filepath.Join(dir, "md.0"), md[:30000], 0o644)
	if _, err := Open(dir, Config{}); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "md.idx: offset 128: index record") {
		t.Errorf("truncated md.0: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "md.0"), md, 0o644)
	// A data file shorter than the blocks it should hold.
	os.Truncate(filepath.Join(dir, "data.2"), 1000)
	d, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Scan(t.Context(), func(*catalog.Array) error { return nil }); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "past the end of data.2") {
		t.Errorf("short data file: %v", err)
	}
}

// countSets finds the number of an entry's sets by their lengths (what
// parseEntrySets allocates at once), whatever the entry declares: on
// ADIOS2's merged BP4 index (generated-lb: 72 declared for 64 sets) as
// many as are parsed; a set cut short ends the count.
func TestCountSets(t *testing.T) {
	d := open(t, filepath.Join(dataDir(t, "bp4/generated-lb"), "lb-bp4.bp"))
	ctx := context.Background()
	off := 0
	for i := range d.entries {
		e := &d.entries[i]
		if e.length < 0 {
			continue
		}
		sets, err := d.entrySets(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := d.files.ReadAt(ctx, d.meta, e.off, int64(e.length))
		if err != nil {
			t.Fatal(err)
		}
		h, ec := readEntry(newCursor(raw, e.off, d.bo, d.pfx, d.meta, "variable index"), d.bp3)
		if int(h.NSets) != len(sets) {
			off++
		}
		if n := countSets(*ec); n != len(sets) {
			t.Errorf("%s step %d: counted %d sets, parsed %d (declared %d)", e.Var, e.Step, n, len(sets), h.NSets)
		}
	}
	if off == 0 {
		t.Error("no entry whose declared count differs from its sets: the case is not tested")
	}
	// Two sets of 3 and 0 bytes, then one that claims 9 bytes with 2 left.
	b := []byte{1, 3, 0, 0, 0, 7, 7, 7, 0, 0, 0, 0, 0, 2, 9, 0, 0, 0, 1, 2}
	if n := countSets(*newCursor(b, 0, binary.LittleEndian, "bp4", "md.0", "test")); n != 2 {
		t.Errorf("counted %d sets, want 2", n)
	}
}
