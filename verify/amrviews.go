package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"relayout/catalog"
	"relayout/internal/h5"
)

// checkAMRView checks an OverlappingAMR view (rewriter/amrviews.go): its
// /VTKHDF attributes say OverlappingAMR 1.0 with the manifest's Origin;
// every level L the manifest lists is the group Level<L> with the
// manifest's Spacing and an AMRBox table of the listed number of boxes;
// every array maps the level-L dataset of its variable's file (which
// exists and the manifest lists), box by box in AMRBox's order, each box's
// hyperslab of that dataset onto the next run of the 1-D array, and the
// AMRBox rows are the dataset's box table (x the last axis; the table's
// corners less the dataset's offset).
func checkAMRView(dir string, v catalog.ManifestView, f *h5.File, attrs []catalog.Attr,
	datasets map[[2]string]catalog.ManifestDataset) (bad []string, arrays int, err error) {
	badf := func(format string, args ...any) {
		bad = append(bad, v.File+": "+fmt.Sprintf(format, args...))
	}
	get := func(as []catalog.Attr, name string) *catalog.Attr {
		for i := range as {
			if as[i].Name == name {
				return &as[i]
			}
		}
		return nil
	}
	if a := get(attrs, "Version"); a == nil || !slices.Equal(a.Ints, []int64{1, 0}) {
		badf("Version is not 1.0")
	}
	if a := get(attrs, "Origin"); a == nil || !slices.Equal(a.Floats, v.Origin) || len(v.Origin) != 3 {
		badf("Origin differs from the manifest's %v", v.Origin)
	}
	if len(v.Levels) < 2 {
		badf("%d levels", len(v.Levels))
	}
	int64t := catalog.DType{Kind: catalog.Int, Size: 8}
	for L, lv := range v.Levels {
		group := fmt.Sprintf("/VTKHDF/Level%d", L)
		if lv.Level != L {
			badf("level %d listed as level %d", L, lv.Level)
			continue
		}
		la, err := f.Attrs(group)
		if errors.Is(err, catalog.ErrNotFound) {
			badf("%s is missing", group)
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("verify: %w", err)
		}
		if a := get(la, "Spacing"); a == nil || !slices.Equal(a.Floats, lv.Spacing) {
			badf("%s Spacing differs from the manifest's %v", group, lv.Spacing)
		}
		info, err := f.Dataset(group + "/AMRBox")
		if err != nil || !slices.Equal(info.Shape, []int64{int64(lv.Boxes), 6}) {
			badf("%s/AMRBox is not %d boxes", group, lv.Boxes)
			continue
		}
		raw := make([]byte, 8*6*lv.Boxes)
		if err := f.ReadHyperslab(group+"/AMRBox", []int64{0, 0}, info.Shape, int64t, raw); err != nil {
			return nil, 0, fmt.Errorf("verify: %w", err)
		}
		rows := make([]int64, 6*lv.Boxes)
		for i := range rows {
			rows[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		for _, a := range lv.Arrays {
			arrays++
			where := fmt.Sprintf("%s (%s level %d)", a.Dataset, a.Var, L)
			ds, ok := datasets[[2]string{a.File, a.Path}]
			rank := len(ds.Shape)
			if !ok || datasetLevel(ds, a.Var) != L || ds.Step != v.Step || (rank != 2 && rank != 3) {
				badf("%s maps %s:%s, which the manifest does not list as a 2-D or 3-D level %d of step %d", where, a.File, a.Path, L, v.Step)
				continue
			}
			// The boxes in the dataset's index space (VTK's x its last
			// axis); a 2-D level is a slab of its refinement ratio to
			// level 0 in cells along z (z [0, layers-1]; one cell when
			// the ratio is not an integer), each layer a mapping of the
			// box.
			layers := int64(1)
			if r := v.Levels[0].Spacing[0] / lv.Spacing[0]; rank == 2 && math.Abs(r-math.Round(r)) <= 1e-9*r && r >= 1 {
				layers = int64(math.Round(r))
			}
			boxes := make([]catalog.Box, lv.Boxes)
			cells := int64(0)
			flat := true
			for b := range boxes {
				boxes[b] = catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
				for x := range 3 {
					lo, hi := rows[6*b+2*x], rows[6*b+2*x+1]
					if d := rank - 1 - x; d >= 0 {
						boxes[b].Lower[d], boxes[b].Count[d] = lo, hi-lo+1
					} else {
						flat = flat && lo == 0 && hi == layers-1
					}
				}
				cells += boxes[b].Elements() * layers
			}
			if !flat {
				badf("%s/AMRBox of a 2-D level has z other than [0, %d]", group, layers-1)
			}
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(a.File))); err != nil || !fi.Mode().IsRegular() {
				badf("%s needs %s, which is missing", where, a.File)
				continue
			}
			want, err := boxTable(filepath.Join(dir, filepath.FromSlash(a.File)), ds)
			if err != nil {
				return nil, 0, err
			}
			if want == nil && L > 0 {
				badf("%s: %s:%s has no box table", where, a.File, a.Path)
			}
			if want == nil {
				want = []catalog.Box{{Lower: make([]int64, rank), Count: ds.Shape}}
			}
			if !boxesEqual(want, boxes) {
				badf("%s: %s/AMRBox is not the box table of %s:%s", where, group, a.File, a.Path)
			}
			if !slices.Equal(a.Shape, []int64{cells}) {
				badf("%s has shape %v for %d cells", where, a.Shape, cells)
			}
			info, err := f.Dataset(a.Dataset)
			if errors.Is(err, catalog.ErrNotFound) {
				badf("%s is missing", where)
				continue
			}
			if err != nil {
				return nil, 0, fmt.Errorf("verify: %w", err)
			}
			if !slices.Equal(info.Shape, []int64{cells}) {
				badf("%s has shape %v in the file, %d cells in AMRBox", where, info.Shape, cells)
			}
			maps, err := f.VirtualMappings(a.Dataset)
			if err != nil && !errors.Is(err, catalog.ErrUnsupported) {
				return nil, 0, fmt.Errorf("verify: %w", err)
			}
			ok = err == nil && int64(len(maps)) == int64(len(boxes))*layers
			off := int64(0)
			for i := 0; ok && i < len(maps); i++ {
				b := i / int(layers)
				m := maps[i]
				n := boxes[b].Elements()
				sel := m.Sel
				if sel == nil && m.Whole {
					sel = &catalog.Box{Lower: make([]int64, rank), Count: ds.Shape}
				}
				ok = m.File == a.File && m.Dataset == a.Path && sel != nil && boxesEqual([]catalog.Box{*sel}, boxes[b:b+1]) &&
					slices.Equal(m.Box.Lower, []int64{off}) && slices.Equal(m.Box.Count, []int64{n})
				off += n
			}
			if !ok {
				badf("%s does not map the boxes of %s:%s in AMRBox's order", where, a.File, a.Path)
			}
		}
	}
	return bad, arrays, nil
}

// boxTable reads ds's box table ([box][0] lower, [box][1] upper corner,
// inclusive, in the level's global index space) from file as boxes of the
// dataset's index space; nil when it has none.
func boxTable(file string, ds catalog.ManifestDataset) ([]catalog.Box, error) {
	if ds.Boxes == "" {
		return nil, nil
	}
	f, err := h5.Open(file)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	info, err := f.Dataset(ds.Boxes)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	rank := int64(len(ds.Shape))
	if len(info.Shape) != 3 || info.Shape[1] != 2 || info.Shape[2] != rank {
		return nil, catalog.Corrupt("relayout", file, -1, "box table %s of shape %v", ds.Boxes, info.Shape)
	}
	raw := make([]byte, 8*info.Shape[0]*2*rank)
	if err := f.ReadHyperslab(ds.Boxes, []int64{0, 0, 0}, info.Shape, catalog.DType{Kind: catalog.Int, Size: 8}, raw); err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	out := make([]catalog.Box, info.Shape[0])
	for b := range out {
		out[b] = catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
		for d := range rank {
			lo := int64(binary.LittleEndian.Uint64(raw[8*((int64(b)*2)*rank+d):]))
			hi := int64(binary.LittleEndian.Uint64(raw[8*((int64(b)*2+1)*rank+d):]))
			off := int64(0)
			if int(d) < len(ds.Offset) {
				off = ds.Offset[d]
			}
			out[b].Lower[d], out[b].Count[d] = lo-off, hi-lo+1
		}
	}
	return out, nil
}

func boxesEqual(a, b []catalog.Box) bool {
	return slices.EqualFunc(a, b, func(x, y catalog.Box) bool {
		return slices.Equal(x.Lower, y.Lower) && slices.Equal(x.Count, y.Count)
	})
}

// datasetLevel is the refinement level of variable v's dataset ds: its
// manifest level, or for an openPMD input's mesh-refinement record, which
// keeps its name ("rho_lvl1") at manifest level 0, the level the name
// declares.
func datasetLevel(ds catalog.ManifestDataset, v string) int {
	if ds.Level > 0 {
		return ds.Level
	}
	return catalog.MeshLevel(v)
}
