package rewriter

// ParaView views of AMR outputs: one VTKHDF 1.0 OverlappingAMR file per
// step (and hierarchy) whose arrays are HDF5 virtual datasets mapping each
// box of a level to its hyperslab of the level's own dataset, so a view
// copies no data.
//
//	view-amr_<step>.hdf
//	/VTKHDF                          Version [1 0] (int64), Type "OverlappingAMR"
//	                                 (fixed-length string), Origin (float64 x3)
//	/VTKHDF/Level<L>                 Spacing (float64 x3)
//	/VTKHDF/Level<L>/AMRBox          int32 (boxes, 6): x0 x1 y0 y1 z0 z1, cell
//	                                 indices (inclusive) in the level's index space
//	/VTKHDF/Level<L>/CellData/<name> 1-D virtual dataset: box b's cells, in
//	                                 row-major order of the level's dataset, at
//	                                 the sum of the cells of boxes 0..b-1
//
// VTK 9.2's vtkHDFReader (ParaView 5.11) reads a level's arrays as one run
// of values per box, x fastest; an OverlappingAMR has no Direction, so
// VTK's x is the dataset's last axis, y the middle one and z the first:
// the view presents the arrays in their index order (for AMReX and Chombo
// outputs, whose array axes are x, y, z, VTK's x is the physical z).
// Origin and Spacing are given in that order. A 2-D level (n0, n1) is a
// slab as thick as level 0's one cell: VTK's x is n1, y is n0, AMRBox's z
// is [0, R-1] with R the level's refinement ratio to level 0, the z
// spacing the x spacing, and each of its R layers maps the same box of the
// level dataset (amrLayers: what ParaView 5.11 needs to blank). Only
// cell-centred levels (openPMD position 0.5 on every axis, the AMReX and
// Chombo case) are viewed, as CellData, Origin being the levels' common
// gridGlobalOffset.

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// amrArray is one level of a mesh variable as an OverlappingAMR view
// presents it.
type amrArray struct {
	viewArray
	base     string // the variable of the hierarchy: v, or "rho" for an openPMD input's "rho_lvl1"
	units    string // yt's units of the values (gdfUnits), or why they are not known
	unitsWhy string
	level    int
	boxes    []catalog.Box // in the dataset's index space
	table    string        // the box table in the variable's file ("" for a level without one)
	origin   [3]float64    // per VTK axis (x: the dataset's last)
	spacing  [3]float64
	time     float64 // the iteration's time (SI when timeUnitSI is given)
}

// amrGeometry is a's OverlappingAMR geometry (per VTK axis) from its
// openPMD attributes, or why it gets none.
func amrGeometry(a *catalog.Array, ma meshAttrs) (origin, spacing [3]float64, why string) {
	rank := len(a.Shape)
	level, _ := meshLevel(a)
	if rank != 2 && rank != 3 {
		return origin, spacing, fmt.Sprintf("refined level %d of rank %d (OverlappingAMR views are made of 2-D and 3-D levels)", level, rank)
	}
	attrs := append(slices.Clone(ma.record), ma.component...)
	if geo := strs(attrs, "geometry"); len(geo) == 1 && geo[0] != "cartesian" {
		return origin, spacing, fmt.Sprintf("refined level %d of geometry %q", level, geo[0])
	}
	sp, off, pos := floats(attrs, "gridSpacing"), floats(attrs, "gridGlobalOffset"), floats(attrs, "position")
	if o := strs(attrs, "dataOrder"); len(o) == 1 && o[0] == "F" {
		sp, off, pos = slices.Clone(sp), slices.Clone(off), slices.Clone(pos)
		for _, s := range [][]float64{sp, off, pos} {
			slices.Reverse(s)
		}
	}
	if len(sp) != rank || len(off) != rank {
		return origin, spacing, fmt.Sprintf("refined level %d: gridSpacing %v and gridGlobalOffset %v do not describe shape %v", level, sp, off, a.Shape)
	}
	if slices.ContainsFunc(pos, func(p float64) bool { return p != 0.5 }) || len(pos) < rank {
		return origin, spacing, fmt.Sprintf("refined level %d at position %v (OverlappingAMR views are of cell-centred data)", level, pos)
	}
	for v := range rank {
		d := rank - 1 - v
		if !(sp[d] > 0) {
			return origin, spacing, fmt.Sprintf("refined level %d: gridSpacing %v", level, sp)
		}
		origin[v], spacing[v] = off[d], sp[d]
	}
	if rank == 2 {
		// A 2-D level is a slab along VTK's z whose cells are as thick
		// as they are wide (amrLayers gives it its thickness in cells).
		spacing[2] = spacing[0]
	}
	return origin, spacing, ""
}

// addAMRView adds level a of a mesh variable to st's AMR view arrays, or
// says why it gets none (level 0 always has its ImageData view too).
func addAMRView(st *varStats, a *catalog.Array, ma meshAttrs, file, path, table string, spec h5.DatasetSpec) string {
	origin, spacing, why := amrGeometry(a, ma)
	if why != "" {
		return why
	}
	level, base := meshLevel(a)
	units, unitsWhy := gdfUnits(a.Attrs)
	boxes := a.Boxes
	if len(boxes) == 0 {
		if level > 0 {
			return fmt.Sprintf("refined level %d without boxes", level)
		}
		boxes = []catalog.Box{{Lower: make([]int64, len(a.Shape)), Count: slices.Clone(a.Shape)}}
	}
	st.amr = append(st.amr, amrArray{viewArray: viewArray{name: viewName(base), v: a.Var, file: file, path: path, step: a.Step,
		spec: h5.DatasetSpec{DType: spec.DType, Shape: a.Shape, Fill: spec.Fill}}, base: base, units: units, unitsWhy: unitsWhy,
		level: level, boxes: boxes, table: table, origin: origin, spacing: spacing, time: iterationTime(ma)})
	return ""
}

// meshLevel is a's refinement level and the variable of its level 0: its
// Level and Var for levels relayout numbers (AMReX, Chombo, a relayout
// output), and for an openPMD input's mesh-refinement record, kept under
// its own name ("rho_lvl1", "E_lvl1/x"), the level the name declares and
// the name without it ("rho", "E/x"), so that its levels form one
// hierarchy.
func meshLevel(a *catalog.Array) (int, string) {
	if a.Level > 0 {
		return a.Level, a.Var
	}
	level := catalog.MeshLevel(a.Var)
	if level == 0 {
		return 0, a.Var
	}
	rec, comp, vector := strings.Cut(a.Var, "/")
	base := rec[:strings.LastIndex(rec, "_lvl")]
	if vector {
		base += "/" + comp
	}
	return level, base
}

// writeAMRViews writes the OverlappingAMR views of arrays (every level of
// every step's cell-centred meshes) into stage and returns their manifest
// entries in step order, and lines for views_skipped. A variable's levels
// of a step form a hierarchy when it has a refined level and levels 0..L
// all there with one origin; hierarchies of the same step, boxes and
// spacings share a view.
func writeAMRViews(stage string, arrays []amrArray) ([]catalog.ManifestView, []string, error) {
	type hier struct {
		step   int64
		v      string
		levels []amrArray
	}
	var hs []*hier
	byVar := map[string]*hier{}
	for _, a := range arrays {
		k := fmt.Sprint(a.step, "\x00", a.base)
		h := byVar[k]
		if h == nil {
			h = &hier{step: a.step, v: a.base}
			byVar[k] = h
			hs = append(hs, h)
		}
		h.levels = append(h.levels, a)
	}
	var skipped []string
	type group struct {
		step  int64
		hiers []*hier
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, h := range hs {
		sort.Slice(h.levels, func(i, j int) bool { return h.levels[i].level < h.levels[j].level })
		if len(h.levels) == 1 && h.levels[0].level == 0 {
			continue // uniform: its ImageData view
		}
		why := ""
		var key strings.Builder
		fmt.Fprint(&key, h.step, h.levels[0].origin)
		for i, l := range h.levels {
			if l.level != i {
				why = fmt.Sprintf("levels 0 to %d are not all there", h.levels[len(h.levels)-1].level)
			} else if l.origin != h.levels[0].origin {
				why = fmt.Sprintf("level %d's origin %v is not level 0's %v", l.level, l.origin, h.levels[0].origin)
			}
			fmt.Fprint(&key, "|", l.spacing, l.boxes)
		}
		if why != "" {
			line := fmt.Sprintf("%s: no OverlappingAMR view: %s", h.v, why)
			if !slices.Contains(skipped, line) {
				skipped = append(skipped, line)
			}
			continue
		}
		g := byKey[key.String()]
		if g == nil {
			g = &group{step: h.step}
			byKey[key.String()] = g
			groups = append(groups, g)
		}
		g.hiers = append(g.hiers, h)
	}
	sort.SliceStable(groups, func(i, j int) bool { return groups[i].step < groups[j].step })
	var out []catalog.ManifestView
	first := map[int64]bool{}
	for _, g := range groups {
		sort.Slice(g.hiers, func(i, j int) bool { return g.hiers[i].v < g.hiers[j].v })
		name := fmt.Sprintf("view-amr_%d.hdf", g.step)
		if first[g.step] {
			name = fmt.Sprintf("view-amr-%s_%d.hdf", sanitize(g.hiers[0].levels[0].name), g.step)
		}
		first[g.step] = true
		h0 := g.hiers[0]
		mv := catalog.ManifestView{File: name, Step: g.step, Type: "OverlappingAMR", Origin: h0.levels[0].origin[:],
			Arrays: []catalog.ManifestViewArray{}}
		layers, ok := amrLayers(h0.levels)
		if !ok {
			skipped = append(skipped, fmt.Sprintf("%s: coarse cells not blanked under fine ones: 2-D levels whose spacings are not level 0's divided by integers", name))
		}
		for L, l0 := range h0.levels {
			cells := int64(0)
			for _, b := range l0.boxes {
				cells += b.Elements() * layers[L]
			}
			lv := catalog.ManifestViewLevel{Level: L, Spacing: slices.Clone(l0.spacing[:]), Boxes: len(l0.boxes)}
			names := map[string]bool{}
			for _, h := range g.hiers {
				a := h.levels[L]
				n := a.name
				for i := 2; names[n]; i++ {
					n = fmt.Sprintf("%s-%d", a.name, i)
				}
				names[n] = true
				lv.Arrays = append(lv.Arrays, catalog.ManifestViewArray{Name: n, Var: a.v, File: a.file, Path: a.path,
					Dataset: fmt.Sprintf("/VTKHDF/Level%d/CellData/%s", L, n), Shape: []int64{cells}})
			}
			mv.Levels = append(mv.Levels, lv)
		}
		array := func(L, i int) amrArray { return g.hiers[i].levels[L] }
		if err := writeAMRView(stage, mv, g.hiers[0].levels, array); err != nil {
			return nil, nil, err
		}
		out = append(out, mv)
		gv, why, notes, err := writeGDF(stage, mv, g.hiers[0].levels, array, g.hiers[0].levels[0].time)
		if err != nil {
			return nil, nil, err
		}
		if gv != nil {
			out = append(out, *gv)
			skipped = append(skipped, notes...)
		} else {
			skipped = append(skipped, fmt.Sprintf("%s: no yt view (GDF): %s", name, why))
		}
	}
	return out, skipped, nil
}

// amrBoxRows is the AMRBox table of boxes (in a 2-D or 3-D dataset's
// index space): per box x0 x1 y0 y1 z0 z1 with VTK's x the dataset's last
// axis; z0 = 0, z1 = layers-1 for a 2-D dataset (amrLayers).
func amrBoxRows(boxes []catalog.Box, layers int64) []int64 {
	rows := make([]int64, 0, 6*len(boxes))
	for _, b := range boxes {
		rank := len(b.Lower)
		for v := range 3 {
			d := rank - 1 - v
			if d < 0 {
				rows = append(rows, 0, layers-1)
				continue
			}
			rows = append(rows, b.Lower[d], b.Lower[d]+b.Count[d]-1)
		}
	}
	return rows
}

// amrLayers is the thickness in cells, along VTK's z, of each level of a
// 2-D hierarchy (1 for 3-D): its cumulative refinement ratio, so that every
// level is a slab as thick as level 0's one cell and each level's box
// refines its parent's along z too. VTK 9.2 blanks a coarse cell (its
// vtkAMRUtilities coarsens each fine box by the refinement ratio) only
// under a fine box whose every extent is a multiple of the ratio: with
// every level one cell thick, ParaView 5.11 left 2-D hierarchies
// unblanked; a flat z ([0, -1], what VTK's own 2-D AMR uses) the reader
// refuses ("Inconsistent types of vtkUniformGrid": it makes every grid
// 3-D). Each layer of a box is the same 2-D box of the level dataset, one
// more virtual mapping (no copy). ok is false when a 2-D level's spacing
// is not level 0's divided by an integer (the views are then one cell
// thick, unblanked).
func amrLayers(levels []amrArray) (layers []int64, ok bool) {
	ok = true
	for _, l := range levels {
		r := 1.0
		if len(l.spec.Shape) == 2 {
			r = levels[0].spacing[0] / l.spacing[0]
		}
		n := int64(math.Round(r))
		if n < 1 || math.Abs(r-float64(n)) > 1e-9*r {
			ok = false
		}
		layers = append(layers, n)
	}
	if !ok {
		for L := range layers {
			layers[L] = 1
		}
	}
	return layers, ok
}

func writeAMRView(stage string, mv catalog.ManifestView, levels []amrArray, array func(level, i int) amrArray) error {
	return writeViewFile(stage, mv.File, func(w *h5.Writer) error {
		return fillAMRView(w, mv, levels, array)
	})
}

// fillAMRView writes an OverlappingAMR view's attributes, box tables and
// arrays.
func fillAMRView(w *h5.Writer, mv catalog.ManifestView, levels []amrArray, array func(level, i int) amrArray) error {
	attrs := []catalog.Attr{
		{Name: "Version", Type: "int64", Ints: []int64{1, 0}},
		{Name: "Type", Type: h5.NullPadString, Scalar: true, Strings: []string{mv.Type}},
		{Name: "Origin", Type: "float64", Floats: mv.Origin},
	}
	if err := w.SetAttrs("/VTKHDF", attrs); err != nil {
		return err
	}
	layers, _ := amrLayers(levels)
	for L, lv := range mv.Levels {
		group := fmt.Sprintf("/VTKHDF/Level%d", L)
		boxes := levels[L].boxes
		rows := amrBoxRows(boxes, layers[L])
		data := make([]byte, 0, 4*len(rows))
		for _, x := range rows {
			data = binary.LittleEndian.AppendUint32(data, uint32(int32(x)))
		}
		shape := []int64{int64(len(boxes)), 6}
		d, err := w.CreateDataset(group+"/AMRBox", h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Int, Size: 4}, Shape: shape, Chunk: shape})
		if err != nil {
			return err
		}
		err = d.WriteChunk([]int64{0, 0}, data)
		if cerr := d.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = w.SetAttrs(group, []catalog.Attr{{Name: "Spacing", Type: "float64", Floats: lv.Spacing}})
		}
		if err != nil {
			return err
		}
		for i, ma := range lv.Arrays {
			a := array(L, i)
			srcs := make([]h5.VirtualSource, 0, len(boxes))
			off := int64(0)
			for b := range boxes {
				n := boxes[b].Elements()
				for range layers[L] {
					srcs = append(srcs, h5.VirtualSource{File: a.file, Path: a.path, Shape: a.spec.Shape, Sel: &boxes[b],
						Box: catalog.Box{Lower: []int64{off}, Count: []int64{n}}})
					off += n
				}
			}
			spec := h5.DatasetSpec{DType: a.spec.DType, Shape: ma.Shape, Fill: a.spec.Fill}
			if err := w.CreateVirtual(ma.Dataset, spec, srcs); err != nil {
				return err
			}
		}
	}
	return nil
}

// iterationTime is the time attribute of a's iteration times timeUnitSI
// (when given), or 0.
func iterationTime(ma meshAttrs) float64 {
	t := floats(ma.iteration, "time")
	if len(t) != 1 {
		return 0
	}
	if u := floats(ma.iteration, "timeUnitSI"); len(u) == 1 {
		return t[0] * u[0]
	}
	return t[0]
}
