package rewriter

// ParaView views: one VTKHDF 1.0 ImageData file per step (and grid) whose
// arrays are HDF5 virtual datasets over the variables' own datasets, so a
// view costs kilobytes and copies no data.
//
//	view_<step>.hdf
//	/VTKHDF                    Version [1 0] (int64), Type "ImageData" (fixed-length
//	                           string), WholeExtent [0 nx-1 0 ny-1 0 nz-1] (int64),
//	                           Origin, Spacing, Direction (float64; Direction row-major)
//	/VTKHDF/PointData/<name>   virtual dataset of the whole /data/<step>/<meshes>/<record>
//	                           [/<component>] of <file>.h5 (a name relative to the view):
//	                           shape (n0, n1, n2) = the array's own shape for 3-D,
//	                           (n0, n1, 1) for 2-D, (n0, 1, 1) for 1-D
//
// What ParaView 5.11 (Debian 12; VTK 9.2's vtkHDFReader) reads, measured:
//   - The reader reads every array with the counts of the point extent:
//     CellData arrays of an ImageData fail (H5Dread of n+1 elements an
//     axis). Cell-centred data (openPMD position 0.5: AMReX, Chombo, most
//     codes) is therefore PointData at the cell centres: Origin is
//     gridGlobalOffset + position * gridSpacing, and a view shows the data
//     half a cell inside the domain's faces.
//   - Direction is required (the reader fails without it) and honoured by
//     the pipeline (probes and slices; the data information's bounds ignore
//     it). VTK's index axis 0 (x, fastest) is our row-major array's last
//     axis: the dataset's shape is the array's own, and Direction maps VTK
//     index axis v to the physical axis of array axis rank-1-v.
//   - A flat last VTK axis (extent [0 0] in z) corrupts the reader's memory
//     (glibc aborts), a rank-2 dataset too: a 2-D array (n0, n1) is the
//     3-D slab (n0, n1, 1), so its flat axis is VTK's x, the array's axes
//     VTK's y and z.
//
// Arrays share a view when they are of the same step, shape and grid
// (origin, spacing, axes); a staggered component (position other than its
// siblings') gets a view of its own, view-<name>_<step>.hdf, named after its
// first array. Physical axes come from axisLabels ("x", "y", "z"; reversed
// with gridSpacing and the rest for dataOrder "F"); labels that are not
// distinct x, y, z put the array's last axis on x, the one before on y,
// then z.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/internal/h5"
)

// viewArray is one mesh dataset as a view presents it.
type viewArray struct {
	name string // array name in the view ("E_x" for variable E/x)
	v    string // variable
	file string // the variable's file, relative to the view
	path string // its dataset
	step int64
	spec h5.DatasetSpec // the dataset's type, shape and fill value
	grid viewGrid
}

// viewGrid is the ImageData geometry of a dataset: per VTK index axis
// (x, y, z) its physical axis, origin and spacing.
type viewGrid struct {
	shape   []int64 // the view dataset's shape (the array's, padded to 3-D with 1s)
	axis    [3]int  // physical axis (0 x, 1 y, 2 z) of VTK index axis v
	origin  [3]float64
	spacing [3]float64
}

func (g viewGrid) key() string {
	return fmt.Sprint(g.shape, g.axis, g.origin, g.spacing)
}

// wholeExtent is the ImageData's point extent.
func (g viewGrid) wholeExtent() []int64 {
	e := make([]int64, 6)
	for v := range 3 {
		e[2*v+1] = g.shape[2-v] - 1
	}
	return e
}

// direction is VTK's row-major 3x3 matrix taking index axis v to physical
// axis g.axis[v] (column v is the unit vector of that axis).
func (g viewGrid) direction() []float64 {
	d := make([]float64, 9)
	for v := range 3 {
		d[3*g.axis[v]+v] = 1
	}
	return d
}

// meshView is array a's view geometry from its openPMD attributes, or the
// reason it gets no ImageData view.
func meshView(a *catalog.Array, ma meshAttrs) (viewGrid, string) {
	var g viewGrid
	rank := len(a.Shape)
	if rank < 1 || rank > 3 {
		return g, fmt.Sprintf("rank %d (ImageData views are 1-3 dimensional)", rank)
	}
	attrs := append(slices.Clone(ma.record), ma.component...)
	if geo := strs(attrs, "geometry"); len(geo) == 1 && geo[0] != "cartesian" {
		return g, fmt.Sprintf("geometry %q (ImageData views are cartesian)", geo[0])
	}
	labels := slices.Clone(strs(attrs, "axisLabels"))
	spacing, offset, pos := floats(attrs, "gridSpacing"), floats(attrs, "gridGlobalOffset"), floats(attrs, "position")
	if o := strs(attrs, "dataOrder"); len(o) == 1 && o[0] == "F" {
		for _, s := range [][]float64{spacing, offset, pos} {
			slices.Reverse(s)
		}
		slices.Reverse(labels)
	}
	if len(spacing) != rank || len(offset) != rank {
		return g, fmt.Sprintf("gridSpacing %v and gridGlobalOffset %v do not describe shape %v", spacing, offset, a.Shape)
	}
	if len(pos) != rank {
		// Some writers give every mesh three entries (Quokka's 2-D meshes:
		// 0.5, 0.5, 0.5): one value for every axis is unambiguous.
		p := 0.0
		if len(pos) > 0 && !slices.ContainsFunc(pos, func(x float64) bool { return x != pos[0] }) {
			p = pos[0]
		}
		pos = make([]float64, rank)
		for d := range pos {
			pos[d] = p
		}
	}
	// Physical axis of each array axis: by label when they are distinct
	// x, y, z; else the last axis on x, the one before on y, then z.
	phys := make([]int, rank)
	seen := map[int]bool{}
	byLabel := len(labels) == rank
	for d := range rank {
		p := -1
		if byLabel {
			p = strings.Index("xyz", strings.ToLower(labels[d]))
			if len(labels[d]) != 1 || p < 0 || seen[p] {
				byLabel = false
			}
			seen[p] = true
		}
		phys[d] = p
	}
	if !byLabel {
		for d := range rank {
			phys[d] = rank - 1 - d
		}
	}
	used := map[int]bool{}
	for _, p := range phys {
		used[p] = true
	}
	// VTK index axis v is array axis rank-1-v for a 3-D array; a 2-D or
	// 1-D array is padded with flat axes (1s) after its own, which are
	// VTK's first: shape (n0, n1, 1) puts n1 on VTK y and n0 on z.
	g.shape = append(slices.Clone(a.Shape), 1, 1)[:3]
	free := []int{}
	for p := range 3 {
		if !used[p] {
			free = append(free, p)
		}
	}
	for v := range 3 {
		d := 2 - v // the padded array axis of VTK axis v
		if d < rank {
			g.axis[v] = phys[d]
			if spacing[d] <= 0 || math.IsNaN(spacing[d]) || math.IsInf(spacing[d], 0) {
				return g, fmt.Sprintf("gridSpacing %v", spacing)
			}
			g.spacing[v] = spacing[d]
			g.origin[phys[d]] = offset[d] + pos[d]*spacing[d]
		} else {
			g.axis[v], free = free[0], free[1:]
			g.spacing[v] = 1
		}
	}
	return g, ""
}

// addView adds array a (written at path of file with spec) to st's views,
// or says why it gets none.
func addView(st *varStats, a *catalog.Array, ma meshAttrs, file, path, table, species string, spec h5.DatasetSpec) {
	if species != "" {
		addParticleView(st, a, file, path, spec)
		return
	}
	amrWhy := ""
	level, _ := meshLevel(a)
	if species == "" && !a.Constant && len(a.Shape) > 0 && a.Elements() > 0 {
		// Every level of a mesh for the OverlappingAMR views; level 0
		// also gets its ImageData view.
		if amrWhy = addAMRView(st, a, ma, file, path, table, spec); amrWhy == "" && level > 0 {
			return
		}
	}
	why := ""
	switch {
	case a.Constant:
		why = "a constant record component (no data to view)"
	case level > 0:
		why = amrWhy
	case len(a.Shape) == 0:
		return // a rank-0 value, not a mesh
	case a.Elements() == 0:
		why = "an empty array"
	}
	var g viewGrid
	if why == "" {
		g, why = meshView(a, ma)
	}
	if why != "" {
		line := fmt.Sprintf("%s: %s", a.Var, why) // once a variable, whatever its steps
		if !slices.Contains(st.noView, line) {
			st.noView = append(st.noView, line)
		}
		return
	}
	st.views = append(st.views, viewArray{name: viewName(a.Var), v: a.Var, file: file, path: path, step: a.Step,
		spec: h5.DatasetSpec{DType: spec.DType, Shape: a.Shape, Fill: spec.Fill}, grid: g})
}

// viewName is the array name of variable v in a view: "/" (not allowed in
// an HDF5 name) becomes "_".
func viewName(v string) string {
	return strings.ReplaceAll(strings.Trim(v, "/"), "/", "_")
}

// writeViews writes the views of arrays (every step's mesh arrays that
// have an ImageData geometry) into stage, each through a synced temporary
// file, and returns their manifest entries in step order.
func writeViews(stage string, arrays []viewArray) ([]catalog.ManifestView, error) {
	type group struct {
		step   int64
		grid   viewGrid
		arrays []viewArray
	}
	var groups []*group
	byKey := map[string]*group{}
	sort.SliceStable(arrays, func(i, j int) bool {
		if arrays[i].step != arrays[j].step {
			return arrays[i].step < arrays[j].step
		}
		return arrays[i].v < arrays[j].v
	})
	for _, a := range arrays {
		k := fmt.Sprint(a.step, a.grid.key())
		g := byKey[k]
		if g == nil {
			g = &group{step: a.step, grid: a.grid}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.arrays = append(g.arrays, a)
	}
	var out []catalog.ManifestView
	first := map[int64]bool{}
	for _, g := range groups {
		name := fmt.Sprintf("view_%d.hdf", g.step)
		if first[g.step] {
			// A second grid in the step: named after its first array,
			// the step last so that ParaView groups the files by it.
			name = fmt.Sprintf("view-%s_%d.hdf", sanitize(g.arrays[0].name), g.step)
		}
		first[g.step] = true
		mv := catalog.ManifestView{File: name, Step: g.step, Type: "ImageData",
			WholeExtent: g.grid.wholeExtent(), Origin: g.grid.origin[:], Spacing: g.grid.spacing[:],
			Direction: g.grid.direction(), Arrays: []catalog.ManifestViewArray{}}
		names := map[string]bool{}
		for _, a := range g.arrays {
			n := a.name
			for i := 2; names[n]; i++ {
				n = fmt.Sprintf("%s-%d", a.name, i)
			}
			names[n] = true
			mv.Arrays = append(mv.Arrays, catalog.ManifestViewArray{Name: n, Var: a.v, File: a.file,
				Path: a.path, Dataset: viewData + "/" + n, Shape: g.grid.shape})
		}
		if err := writeView(stage, mv, g.arrays); err != nil {
			return nil, err
		}
		out = append(out, mv)
	}
	return out, nil
}

// isView reports whether n is the name of a view file (variables' files
// end in .h5 or .nc).
func isView(n string) bool {
	return strings.HasPrefix(n, "view") && (strings.HasSuffix(n, ".hdf") || strings.HasSuffix(n, ".gdf"))
}

// viewData is the group of a view's arrays.
const viewData = "/VTKHDF/PointData"

// sanitize keeps a name to [A-Za-z0-9._-].
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return r
		}
		return '_'
	}, s)
}

func writeView(stage string, mv catalog.ManifestView, arrays []viewArray) error {
	return writeViewFile(stage, mv.File, func(w *h5.Writer) error {
		return fillView(w, mv, arrays)
	})
}

// fillView writes an ImageData view's attributes and arrays.
func fillView(w *h5.Writer, mv catalog.ManifestView, arrays []viewArray) error {
	attrs := []catalog.Attr{
		{Name: "Version", Type: "int64", Ints: []int64{1, 0}},
		{Name: "Type", Type: h5.NullPadString, Scalar: true, Strings: []string{mv.Type}},
		{Name: "WholeExtent", Type: "int64", Ints: mv.WholeExtent},
		{Name: "Origin", Type: "float64", Floats: mv.Origin},
		{Name: "Spacing", Type: "float64", Floats: mv.Spacing},
		{Name: "Direction", Type: "float64", Floats: mv.Direction},
	}
	if err := w.SetAttrs("/VTKHDF", attrs); err != nil {
		return err
	}
	for i, a := range arrays {
		ma := mv.Arrays[i]
		whole := catalog.Box{Lower: make([]int64, 3), Count: ma.Shape}
		src := h5.VirtualSource{File: a.file, Path: a.path, Box: whole}
		if len(a.spec.Shape) != 3 {
			src.Shape = a.spec.Shape
		}
		spec := h5.DatasetSpec{DType: a.spec.DType, Shape: ma.Shape, Fill: a.spec.Fill}
		if err := w.CreateVirtual(ma.Dataset, spec, []h5.VirtualSource{src}); err != nil {
			return err
		}
	}
	return nil
}

// writeViewFile writes view file name in stage: fill writes its content
// into a temporary file beside it, which is then closed, synced and
// renamed to name; on any error it is removed and nothing has the name.
func writeViewFile(stage, name string, fill func(w *h5.Writer) error) error {
	tmp := filepath.Join(stage, "."+name+".tmp")
	w, err := h5.Create(tmp)
	if err != nil {
		return fmt.Errorf("rewriter: view %s: %w", name, err)
	}
	err = fill(w)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fileio.SyncFile(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(stage, name))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rewriter: view %s: %w", name, err)
	}
	return nil
}
