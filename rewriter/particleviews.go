package rewriter

// ParaView views of particles: one VTKHDF 1.0 UnstructuredGrid file per
// step and species, view-particles-<species>_<step>.hdf, whose particles
// are VERTEX cells:
//
//	/VTKHDF                      Version [1 0] (int64), Type "UnstructuredGrid"
//	                             (fixed-length string)
//	/VTKHDF/NumberOfPoints       int64 [N]; NumberOfCells, NumberOfConnectivityIds likewise
//	/VTKHDF/Points               (N, 3) virtual dataset: column c maps the whole 1-D
//	                             position/<x|y|z> of its file; a missing axis (2-D) reads
//	                             as the fill value 0
//	/VTKHDF/Connectivity         int64 (N): 0 .. N-1, chunked, shuffle + deflate
//	/VTKHDF/Offsets              int64 (N+1): 0 .. N, likewise
//	/VTKHDF/Types                uint8 (N): VTK_VERTEX (1) as the fill value of a chunked
//	                             dataset no chunk of which is written (no storage)
//	/VTKHDF/PointData/<name>     virtual dataset of the whole 1-D record component
//	                             (momentum/x is momentum_x)
//
// ParaView 5.11 (VTK 9.2's vtkHDFReader) reads UnstructuredGrid, not yet
// PolyData, and needs the cell arrays; Connectivity and Offsets count the
// particles and cannot be virtual (nothing stored holds 0 .. N-1), so they
// are the view's one copy: 16 bytes a particle before compression, a few
// per cent after. A species' step of more than particleViewMax particles
// gets no view (views_skipped says so). A particle's position is position
// + positionOffset (openPMD); a view cannot add, so it is made only when
// positionOffset is absent or constant 0 on every axis (WarpX, FBPIC; not
// PIConGPU, whose positionOffset is the particle's cell). Positions are
// shown as stored: times their unitSI they are SI, like the mesh views'
// gridSpacing times gridUnitSI.

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// particleViewMax bounds the particles of one species and step in a view:
// its Connectivity and Offsets are 256 MiB before compression there
// (measured: 0.9 MB compressed, 1.8 s to write on a loaded 2-core machine;
// the time grows with N and is spent before the rewrite starts).
const particleViewMax = 1 << 24

// particleIDChunk is the chunk of Connectivity and Offsets (8 MiB raw).
const particleIDChunk = 1 << 20

// particleArray is one record component of a species and step.
type particleArray struct {
	species  string
	rel      string // "position/x", "weighting"
	v        string
	file     string
	path     string
	step     int64
	spec     h5.DatasetSpec // type, shape and fill
	constant bool
	zero     bool // a constant of value 0
}

// addParticleView adds particle record component a (written at path of
// file with spec) to st's particle views.
func addParticleView(st *varStats, a *catalog.Array, file, path string, spec h5.DatasetSpec) {
	pa := particleArray{species: a.Species, rel: strings.TrimPrefix(a.Var, catalog.ParticlesPrefix+a.Species+"/"), v: a.Var,
		file: file, path: path, step: a.Step, spec: h5.DatasetSpec{DType: spec.DType, Shape: a.Shape, Fill: spec.Fill},
		constant: a.Constant}
	if a.Constant {
		v := constantAttrs(a)[0]
		pa.spec.DType = a.DType
		pa.zero = slices.Equal(v.Floats, []float64{0}) || slices.Equal(v.Ints, []int64{0}) || slices.Equal(v.Uints, []uint64{0})
	}
	st.particles = append(st.particles, pa)
}

// writeParticleViews writes the particle views of arrays (every particle
// record component of every step) into stage and returns their manifest
// entries, in step and species order, and lines for views_skipped.
func writeParticleViews(stage string, arrays []particleArray) ([]catalog.ManifestView, []string, error) {
	type group struct {
		step    int64
		species string
		arrays  []particleArray
	}
	byKey := map[string]*group{}
	var groups []*group
	for _, a := range arrays {
		k := fmt.Sprint(a.step, "\x00", a.species)
		g := byKey[k]
		if g == nil {
			g = &group{step: a.step, species: a.species}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.arrays = append(g.arrays, a)
	}
	sort.Slice(groups, func(i, j int) bool {
		if groups[i].step != groups[j].step {
			return groups[i].step < groups[j].step
		}
		return groups[i].species < groups[j].species
	})
	var out []catalog.ManifestView
	var skipped []string
	note := func(line string) {
		if !slices.Contains(skipped, line) {
			skipped = append(skipped, line)
		}
	}
	files := map[string]bool{}
	for _, g := range groups {
		sort.Slice(g.arrays, func(i, j int) bool { return g.arrays[i].rel < g.arrays[j].rel })
		mv, why, left := particleView(g.step, g.species, g.arrays)
		if why != "" {
			note(fmt.Sprintf("particles/%s: no particle view: %s", g.species, why))
			continue
		}
		// Species whose names sanitize alike ("a/b", "a_b") get files of
		// their own.
		for i := 2; files[mv.File]; i++ {
			mv.File = fmt.Sprintf("view-particles-%s-%d_%d.hdf", sanitize(g.species), i, g.step)
		}
		files[mv.File] = true
		if len(left) > 0 {
			note(fmt.Sprintf("particles/%s: not in its particle view: %s", g.species, strings.Join(left, ", ")))
		}
		if err := writeViewFile(stage, mv.File, func(w *h5.Writer) error { return fillParticleView(w, mv, g.arrays) }); err != nil {
			return nil, nil, err
		}
		out = append(out, mv)
	}
	return out, skipped, nil
}

// particleView is the view of one species' step (arrays sorted by rel),
// or why it gets none; left says which records are not in it and why.
func particleView(step int64, species string, arrays []particleArray) (mv catalog.ManifestView, why string, left []string) {
	pos := map[string]*particleArray{}
	n := int64(-1)
	var dt catalog.DType
	for i := range arrays {
		a := &arrays[i]
		axis, ok := strings.CutPrefix(a.rel, "position/")
		if !ok {
			continue
		}
		if axis != "x" && axis != "y" && axis != "z" {
			return mv, fmt.Sprintf("position component %q (views take x, y, z)", axis), nil
		}
		if len(a.spec.Shape) != 1 || (n >= 0 && a.spec.Shape[0] != n) {
			return mv, fmt.Sprintf("position components of shapes that differ or are not 1-D (%s: %v)", a.rel, a.spec.Shape), nil
		}
		n = a.spec.Shape[0]
		if a.constant && !a.zero {
			return mv, fmt.Sprintf("%s is a constant other than 0 (a view's missing axis reads as 0)", a.rel), nil
		}
		if !a.constant {
			if dt.Size != 0 && a.spec.DType != dt || a.spec.DType.Kind != catalog.Float {
				return mv, fmt.Sprintf("position components of types %v and %v (a view's Points have one floating-point type)", dt, a.spec.DType), nil
			}
			dt = a.spec.DType
		}
		pos[axis] = a
	}
	switch {
	case len(pos) == 0:
		return mv, "no position record", nil
	case dt.Size == 0:
		return mv, "every position component is constant", nil
	case n == 0:
		return mv, "steps without particles", nil
	case n > particleViewMax:
		return mv, fmt.Sprintf("steps of more than %d particles (a view's Connectivity and Offsets are 16 bytes a particle before compression: the one copy a view makes)", particleViewMax), nil
	}
	for _, a := range arrays {
		axis, ok := strings.CutPrefix(a.rel, "positionOffset/")
		if ok && pos[axis] != nil && !(a.constant && a.zero) {
			return mv, fmt.Sprintf("%s is not constant 0 (a particle is at position + positionOffset, a sum a view cannot present)", a.rel), nil
		}
	}
	mv = catalog.ManifestView{File: fmt.Sprintf("view-particles-%s_%d.hdf", sanitize(species), step), Step: step,
		Type: "UnstructuredGrid", Points: n, Arrays: []catalog.ManifestViewArray{}}
	for _, axis := range []string{"x", "y", "z"} {
		if a := pos[axis]; a != nil && !a.constant {
			mv.Arrays = append(mv.Arrays, catalog.ManifestViewArray{Name: "Points/" + axis, Var: a.v, File: a.file, Path: a.path,
				Dataset: "/VTKHDF/Points", Shape: []int64{n}})
		}
	}
	names := map[string]bool{}
	for _, a := range arrays {
		rec, _, _ := strings.Cut(a.rel, "/")
		switch {
		case rec == "position" || rec == "positionOffset":
		case rec == "particlePatches":
			if !slices.Contains(left, "particlePatches (per patch, not per particle)") {
				left = append(left, "particlePatches (per patch, not per particle)")
			}
		case a.constant:
			left = append(left, a.rel+" (constant: its value attribute)")
		case len(a.spec.Shape) != 1 || a.spec.Shape[0] != n:
			left = append(left, fmt.Sprintf("%s (shape %v, not the %d particles)", a.rel, a.spec.Shape, n))
		default:
			name := viewName(a.rel)
			for i := 2; names[name]; i++ {
				name = fmt.Sprintf("%s-%d", viewName(a.rel), i)
			}
			names[name] = true
			mv.Arrays = append(mv.Arrays, catalog.ManifestViewArray{Name: name, Var: a.v, File: a.file, Path: a.path,
				Dataset: "/VTKHDF/PointData/" + name, Shape: []int64{n}})
		}
	}
	return mv, "", left
}

// fillParticleView writes view mv of a species' step (its arrays).
func fillParticleView(w *h5.Writer, mv catalog.ManifestView, arrays []particleArray) error {
	n := mv.Points
	if err := w.SetAttrs("/VTKHDF", []catalog.Attr{
		{Name: "Version", Type: "int64", Ints: []int64{1, 0}},
		{Name: "Type", Type: h5.NullPadString, Scalar: true, Strings: []string{mv.Type}},
	}); err != nil {
		return err
	}
	for _, name := range []string{"NumberOfPoints", "NumberOfCells", "NumberOfConnectivityIds"} {
		if err := writeInt64s(w, "/VTKHDF/"+name, []int64{1}, []int64{n}); err != nil {
			return err
		}
	}
	byVar := map[string]particleArray{}
	for _, a := range arrays {
		byVar[a.v] = a
	}
	var points []h5.VirtualSource
	var dt catalog.DType
	for _, ma := range mv.Arrays {
		a := byVar[ma.Var]
		src := h5.VirtualSource{File: a.file, Path: a.path, Shape: []int64{n}}
		if axis, ok := strings.CutPrefix(ma.Name, "Points/"); ok {
			src.Box = catalog.Box{Lower: []int64{0, int64(strings.Index("xyz", axis))}, Count: []int64{n, 1}}
			points, dt = append(points, src), a.spec.DType
			continue
		}
		src.Box = catalog.Box{Lower: []int64{0}, Count: []int64{n}}
		spec := h5.DatasetSpec{DType: a.spec.DType, Shape: []int64{n}, Fill: a.spec.Fill}
		if err := w.CreateVirtual(ma.Dataset, spec, []h5.VirtualSource{src}); err != nil {
			return err
		}
	}
	// A missing axis reads as 0: the fill value, whatever the components'.
	if err := w.CreateVirtual("/VTKHDF/Points", h5.DatasetSpec{DType: dt, Shape: []int64{n, 3}, Fill: make([]byte, dt.Size)}, points); err != nil {
		return err
	}
	if err := writeIota(w, "/VTKHDF/Connectivity", n); err != nil {
		return err
	}
	if err := writeIota(w, "/VTKHDF/Offsets", n+1); err != nil {
		return err
	}
	chunk := min(n, particleIDChunk)
	d, err := w.CreateDataset("/VTKHDF/Types", h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Uint, Size: 1}, Shape: []int64{n},
		Chunk: []int64{chunk}, Fill: []byte{1}}) // VTK_VERTEX, never written
	if err != nil {
		return err
	}
	return d.Close()
}

// writeIota writes the int64 dataset 0 .. n-1 at path, chunked, shuffled
// and deflated (it compresses to a few per cent).
func writeIota(w *h5.Writer, path string, n int64) error {
	chunk := min(n, particleIDChunk)
	d, err := w.CreateDataset(path, h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Int, Size: 8}, Shape: []int64{n},
		Chunk: []int64{chunk}, Deflate: 1, Shuffle: true})
	if err != nil {
		return err
	}
	buf := make([]byte, 8*chunk)
	for lo := int64(0); lo < n && err == nil; lo += chunk {
		m := min(chunk, n-lo)
		for i := range m {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(lo+i))
		}
		// A partial last chunk is stored whole: its tail is never read.
		clear(buf[8*m:])
		var enc []byte
		if enc, err = encodeChunk(buf, 8, 1); err == nil {
			err = d.WriteChunk([]int64{lo}, enc)
		}
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
