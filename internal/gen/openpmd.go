package gen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"relayout/catalog"
	"relayout/internal/h5"
)

// ValueRule is the element rule of generated meshes, also stored in each file's
// root attribute "value_rule". comp is the component's position in Components.
const ValueRule = "float64(((step*NX + i)*NY + j)*NZ + k)*4 + comp"

// Components are the generated mesh components: record E with x, y, z and the
// scalar record rho.
var Components = []string{"E/x", "E/y", "E/z", "rho"}

// OpenPMDSpec describes a file-based openPMD-style HDF5 series.
type OpenPMDSpec struct {
	Dir   string   // created if missing
	Shape [3]int64 // NX, NY, NZ
	Chunk [3]int64 // stored chunk shape; edge chunks may be partial
	Steps []int64  // iterations; one file data%08d.h5 each
	Seed  uint64   // order in which chunks are written (scattered, as after load balancing)
}

// Value is the element at global index (i, j, k) of component comp at step.
func Value(step int64, comp int, shape [3]int64, i, j, k int64) float64 {
	return float64(((step*shape[0]+i)*shape[1]+j)*shape[2]+k)*4 + float64(comp)
}

// WriteOpenPMD writes the series and returns the file paths.
func WriteOpenPMD(spec OpenPMDSpec) ([]string, error) {
	for d := 0; d < 3; d++ {
		if spec.Shape[d] <= 0 || spec.Chunk[d] <= 0 {
			return nil, fmt.Errorf("gen: shape %v and chunk %v must be positive", spec.Shape, spec.Chunk)
		}
	}
	if err := os.MkdirAll(spec.Dir, 0o755); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x5eed))
	var files []string
	for _, step := range spec.Steps {
		path := filepath.Join(spec.Dir, fmt.Sprintf("data%08d.h5", step))
		if err := writeStep(path, spec, step, rng); err != nil {
			return nil, fmt.Errorf("gen: %s: %w", path, err)
		}
		files = append(files, path)
	}
	return files, nil
}

func writeStep(path string, spec OpenPMDSpec, step int64, rng *rand.Rand) error {
	w, err := h5.Create(path)
	if err != nil {
		return err
	}
	defer w.Close()
	str := func(name, v string) catalog.Attr {
		return catalog.Attr{Name: name, Type: "string", Scalar: true, Strings: []string{v}}
	}
	f64 := func(name string, scalar bool, v ...float64) catalog.Attr {
		return catalog.Attr{Name: name, Type: "float64", Scalar: scalar, Floats: v}
	}
	root := []catalog.Attr{
		str("openPMD", "1.1.0"), {Name: "openPMDextension", Type: "uint64", Scalar: true, Uints: []uint64{0}},
		str("basePath", "/data/%T/"), str("meshesPath", "meshes/"),
		str("iterationEncoding", "fileBased"), str("iterationFormat", "data%08T.h5"),
		str("software", "relayout gen"), str("value_rule", ValueRule),
	}
	if err := w.SetAttrs("/", root); err != nil {
		return err
	}
	it := fmt.Sprintf("/data/%d", step)
	if err := w.SetAttrs(it, []catalog.Attr{f64("time", true, float64(step)*1e-15), f64("dt", true, 1e-15), f64("timeUnitSI", true, 1)}); err != nil {
		return err
	}
	record := func(unitDim ...float64) []catalog.Attr {
		return []catalog.Attr{
			str("geometry", "cartesian"), str("dataOrder", "C"),
			{Name: "axisLabels", Type: "string", Strings: []string{"x", "y", "z"}},
			f64("gridSpacing", false, 1e-6, 1e-6, 1e-6), f64("gridGlobalOffset", false, 0, 0, 0),
			f64("gridUnitSI", true, 1), f64("unitDimension", false, unitDim...), f64("timeOffset", true, 0),
		}
	}
	f64type := catalog.DType{Kind: catalog.Float, Size: 8}
	for comp, name := range Components {
		dpath := it + "/meshes/" + name
		ds, err := w.CreateDataset(dpath, h5.DatasetSpec{DType: f64type, Shape: spec.Shape[:], Chunk: spec.Chunk[:]})
		if err != nil {
			return err
		}
		if err := writeChunksScattered(ds, spec, step, comp, rng); err != nil {
			ds.Close()
			return err
		}
		if err := ds.Close(); err != nil {
			return err
		}
		attrs := []catalog.Attr{f64("unitSI", true, 1), f64("position", false, 0.5, 0.5, 0.5)}
		if name == "rho" { // a scalar record: record and component attributes on the dataset
			attrs = append(attrs, record(-3, 0, 1, 1, 0, 0, 0)...)
		}
		if err := w.SetAttrs(dpath, attrs); err != nil {
			return err
		}
	}
	if err := w.SetAttrs(it+"/meshes/E", record(1, 1, -3, -1, 0, 0, 0)); err != nil {
		return err
	}
	return w.Close()
}

// writeChunksScattered writes every chunk of one component in a random order.
func writeChunksScattered(ds *h5.OutDataset, spec OpenPMDSpec, step int64, comp int, rng *rand.Rand) error {
	var n [3]int64
	for d := range n {
		n[d] = (spec.Shape[d] + spec.Chunk[d] - 1) / spec.Chunk[d]
	}
	order := rng.Perm(int(n[0] * n[1] * n[2]))
	c := spec.Chunk
	buf := make([]byte, c[0]*c[1]*c[2]*8)
	for _, idx := range order {
		var ci [3]int64
		ci[0] = int64(idx) / (n[1] * n[2])
		ci[1] = int64(idx) / n[2] % n[1]
		ci[2] = int64(idx) % n[2]
		off := []int64{ci[0] * c[0], ci[1] * c[1], ci[2] * c[2]}
		clear(buf)
		for a := int64(0); a < c[0] && off[0]+a < spec.Shape[0]; a++ {
			for b := int64(0); b < c[1] && off[1]+b < spec.Shape[1]; b++ {
				for k := int64(0); k < c[2] && off[2]+k < spec.Shape[2]; k++ {
					v := Value(step, comp, spec.Shape, off[0]+a, off[1]+b, off[2]+k)
					binary.LittleEndian.PutUint64(buf[((a*c[1]+b)*c[2]+k)*8:], math.Float64bits(v))
				}
			}
		}
		if err := ds.WriteChunk(off, buf); err != nil {
			return err
		}
	}
	return nil
}
