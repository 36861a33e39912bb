package scorpio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

const sample = "f.eam.h1.0001-01-01-00000.nc"

// samples are the SCORPIO ADIOS sets (PROVENANCE.txt of each): box
// rearranger 1-based maps, CONTIG 0-based maps, Blosc2-compressed.
var samples = []string{"adios-io16", "adios-contig", "adiosc-io16"}

func openSample(t *testing.T, set string, viaLink bool) *Dataset {
	t.Helper()
	dir := testkit.SharedData(t, "scorpio/"+set)
	p := filepath.Join(dir, sample+".bp")
	if viaLink {
		p = filepath.Join(dir, sample)
	}
	d, err := Open(p)
	if err != nil {
		t.Fatalf("%s: %v", set, err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// assemble returns a variable's values as written, frame after frame
// (row-major; record variables frame-major), as float64, through the plans.
func assemble(t *testing.T, d *Dataset, v *Var) []float64 {
	t.Helper()
	ctx := context.Background()
	per := int64(1)
	for i, n := range v.Shape {
		if i == 0 && v.Record() {
			continue
		}
		per *= n
	}
	frames := int64(1)
	if v.Record() {
		frames = v.Shape[0]
	}
	out := make([]byte, frames*per*int64(v.Type.Size))
	if v.Kind == Darray {
		seen := make([]bool, frames)
		for i := range v.Writes {
			w := &v.Writes[i]
			f := max(w.Frame, 0)
			if f >= frames || seen[f] {
				t.Fatalf("%s: write %d frame %d of %d (again: %v)", v.Name, i, w.Frame, frames, seen[min(f, frames-1)])
			}
			seen[f] = true
			if err := d.ReadWrite(ctx, v, w, out[f*per*int64(v.Type.Size):(f+1)*per*int64(v.Type.Size)], nil); err != nil {
				t.Fatalf("%s frame %d: %v", v.Name, f, err)
			}
		}
		if slices.Contains(seen, false) {
			t.Fatalf("%s: frames written %v", v.Name, seen)
		}
	} else {
		for i := range v.Blobs {
			start, count, data, err := d.ReadBlob(ctx, v, &v.Blobs[i])
			if err != nil {
				t.Fatal(err)
			}
			// place a box (start, count) row-major into the full shape
			placeBox(out, v.Shape, start, count, data, v.Type.Size)
		}
	}
	return toFloats(out, v.Type)
}

func placeBox(out []byte, shape, start, count []int64, data []byte, es int) {
	if len(shape) == 0 {
		copy(out, data)
		return
	}
	idx := make([]int64, len(count))
	n := int64(len(data) / es)
	for k := int64(0); k < n; k++ {
		dst := int64(0)
		for i := range shape {
			dst = dst*shape[i] + start[i] + idx[i]
		}
		copy(out[dst*int64(es):(dst+1)*int64(es)], data[k*int64(es):(k+1)*int64(es)])
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < count[i] {
				break
			}
			idx[i] = 0
		}
	}
}

func toFloats(raw []byte, dt catalog.DType) []float64 {
	out := make([]float64, len(raw)/dt.Size)
	for i := range out {
		p := raw[i*dt.Size:]
		switch {
		case dt.Kind == catalog.Float && dt.Size == 4:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		case dt.Kind == catalog.Float:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(p))
		case dt.Size == 1:
			out[i] = float64(p[0])
		case dt.Size == 4:
			out[i] = float64(int32(binary.LittleEndian.Uint32(p)))
		default:
			out[i] = float64(int64(binary.LittleEndian.Uint64(p)))
		}
	}
	return out
}

func attrOf(v *Var, name string) (catalog.Attr, bool) {
	i := slices.IndexFunc(v.Attrs, func(a catalog.Attr) bool { return a.Name == name })
	if i < 0 {
		return catalog.Attr{}, false
	}
	return v.Attrs[i], true
}

// TestRealSamplesValueRule: every value of every variable of the three
// SCORPIO sets equals scorpio_gen's value rule (PROVENANCE.txt):
// v = 100000*f + g + k/8, TS holes (g % 7 == 3) = 1e36f, lev[i] = 10(i+1),
// time[f] = f + 0.5, date_written[f] = "%02d/01/01".
func TestRealSamplesValueRule(t *testing.T) {
	for _, set := range samples {
		t.Run(set, func(t *testing.T) {
			d := openSample(t, set, set == "adios-io16")
			dims := map[string]int64{}
			for _, dm := range d.Dims {
				dims[dm.Name] = dm.Len
			}
			if fmt.Sprint(dims) != "map[chars:8 lev:72 ncol:866 time:3]" || d.FillMode != 256 {
				t.Fatalf("dims %v fillmode %d", dims, d.FillMode)
			}
			var names []string
			for _, v := range d.Vars() {
				names = append(names, fmt.Sprintf("%s:%s:%d:%v", v.Name, v.Kind, v.NCType, v.Dims))
			}
			slices.Sort(names)
			want := "[PS:darray:6:[time ncol] T:darray:5:[time lev ncol] TS:darray:5:[time ncol] U:darray:6:[time lev ncol] area:darray:6:[ncol] date_written:put_var:2:[time chars] lev:put_var:6:[lev] time:put_var:6:[time]]"
			if fmt.Sprint(names) != want {
				t.Fatalf("vars %v\nwant %s", names, want)
			}
			if len(d.Decomps()) != 4 {
				t.Fatalf("decompositions %v", d.Decomps())
			}
			for _, v := range d.Vars() {
				got := assemble(t, d, v)
				switch v.Name {
				case "lev":
					for i, x := range got {
						if x != float64(10*(i+1)) {
							t.Fatalf("lev[%d] = %v", i, x)
						}
					}
				case "time":
					if !slices.Equal(got, []float64{0.5, 1.5, 2.5}) {
						t.Fatalf("time %v", got)
					}
				case "date_written":
					var s []byte
					for _, x := range got {
						s = append(s, byte(x))
					}
					if string(s) != "01/01/0102/01/0103/01/01" {
						t.Fatalf("date_written %q", s)
					}
				default:
					ka, ok := attrOf(v, "rule_k")
					if !ok {
						t.Fatalf("%s: no rule_k", v.Name)
					}
					k := float64(ka.Ints[0])
					_, holes := attrOf(v, "rule_holes")
					per := int64(len(got))
					if v.Record() {
						per /= v.Shape[0]
					}
					for i, x := range got {
						f, g := int64(i)/per, int64(i)%per
						w := 100000*float64(f) + float64(g) + k/8
						if v.Type.Size == 4 {
							w = float64(float32(w))
						}
						if holes && g%7 == 3 {
							w = float64(float32(1e36))
						}
						if x != w {
							t.Fatalf("%s: element %d (frame %d, g %d) = %v, want %v", v.Name, i, f, g, x, w)
						}
					}
				}
			}
		})
	}
}

// TestRealSamplesVsNetCDF4: the values equal netCDF4-python's reading of
// the PnetCDF-written reference of the same run (an independent reader of
// an independently written file).
func TestRealSamplesVsNetCDF4(t *testing.T) {
	ref := filepath.Join(testkit.SharedData(t, "scorpio/pnetcdf-cdf2"), sample)
	testkit.NeedPython(t, "Debian python3-netcdf4, python3-numpy", "netCDF4", "numpy")
	out := t.TempDir()
	script := `
import sys, numpy as np, netCDF4
ds = netCDF4.Dataset(sys.argv[1]); ds.set_auto_maskandscale(False)
for n, v in ds.variables.items():
    a = np.asarray(v[:])
    if a.dtype.kind == 'S':
        a = a.view(np.uint8)
    open(sys.argv[2] + '/' + n + '.bin', 'wb').write(np.ascontiguousarray(a.astype(a.dtype.newbyteorder('<'))).tobytes())
`
	if b, err := exec.Command(testkit.Python, "-c", script, ref, out).CombinedOutput(); err != nil {
		t.Fatalf("netCDF4 dump: %v\n%s", err, b)
	}
	for _, set := range samples {
		t.Run(set, func(t *testing.T) {
			d := openSample(t, set, false)
			for _, v := range d.Vars() {
				raw, err := os.ReadFile(filepath.Join(out, v.Name+".bin"))
				if err != nil {
					t.Fatal(err)
				}
				want := toFloats(raw, v.Type)
				got := assemble(t, d, v)
				if len(got) != len(want) {
					t.Fatalf("%s: %d values, netCDF4 %d", v.Name, len(got), len(want))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("%s: element %d = %v, netCDF4 reads %v", v.Name, i, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestRealPlans: the plans of the io16 and contig sets have the layout
// PROVENANCE states (bases, pads, holes, coverage).
func TestRealPlans(t *testing.T) {
	for _, c := range []struct {
		set  string
		base int
	}{{"adios-io16", 1}, {"adios-contig", 0}, {"adiosc-io16", 1}} {
		d := openSample(t, c.set, false)
		for _, id := range d.Decomps() {
			p, err := d.Plan(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if p.Base != c.base || len(p.BlockLen) != 16 {
				t.Fatalf("%s decomposition %d: base %d, %d blocks", c.set, id, p.Base, len(p.BlockLen))
			}
			var holes int64
			for _, h := range p.Holes {
				holes += h.Len
			}
			want := map[int][3]int64{512: {866, 670, 0}, 513: {742, 794, 124}, 514: {62352, 11376, 0}, 515: {62352, 11376, 0}}[id]
			if [3]int64{p.Covered, p.Pads, holes} != want {
				t.Fatalf("%s decomposition %d: covered %d pads %d holes %d, want %v", c.set, id, p.Covered, p.Pads, holes, want)
			}
		}
	}
	var ce *catalog.CorruptError
	_ = errors.As(nil, &ce)
}

// TestSuperseded: a frame written more than once is said (the last write
// is the one Scan catalogs, the earlier ones are listed as skipped); the
// samples write every frame once.
func TestSuperseded(t *testing.T) {
	v := &Var{Name: "T", Writes: []Write{{Frame: 0}, {Frame: 1}, {Frame: 1}, {Frame: 2}, {Frame: 1}}}
	got := superseded("h.nc.bp", v)
	if len(got) != 1 || got[0] != "h.nc.bp: T frame 1 written 3 times: the earlier writes superseded by the last (SCORPIO's order)" {
		t.Errorf("superseded: %q", got)
	}
	dir := testkit.SharedData(t, "scorpio/adios-io16")
	s, err := OpenStream(dir, []string{sample + ".bp"}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if sk := s.Info().Skipped; len(sk) != 0 {
		t.Errorf("the io16 sample: skipped %q", sk)
	}
}

// TestFillValues: a write's fill value, else _FillValue, else netCDF's
// default fill of the type (NC_FILL_DOUBLE, NC_FILL_CHAR), in the writer's
// byte order.
func TestFillValues(t *testing.T) {
	d := openSample(t, "adios-io16", false)
	le := binary.LittleEndian
	for _, c := range []struct {
		name string
		want []byte
	}{
		{"U", le.AppendUint64(nil, math.Float64bits(9.9692099683868690e+36))}, // no _FillValue, no fill passed
		{"TS", le.AppendUint32(nil, math.Float32bits(1e36))},                  // the fill passed with each write
		{"date_written", []byte{0}},
	} {
		v := d.Var(c.name)
		var w *Write
		if len(v.Writes) > 0 {
			w = &v.Writes[0]
		}
		if got := d.FillValue(v, w); !slices.Equal(got, c.want) {
			t.Errorf("%s: fill %x, want %x", c.name, got, c.want)
		}
	}
}
