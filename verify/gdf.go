package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// checkGDFView checks a yt GDF view (rewriter/gdf.go): /grid_level counts
// the manifest's boxes per level, in level order; each level's grids
// (/grid_left_index, /grid_dimensions) are the box table of each of its
// arrays' level dataset, in order; and every grid's field of every array is
// a virtual dataset mapping exactly that box of that dataset (of a file that
// is there and that the manifest lists).
func checkGDFView(dir string, v catalog.ManifestView, f *h5.File, datasets map[[2]string]catalog.ManifestDataset) (bad []string, arrays int, err error) {
	badf := func(format string, args ...any) {
		bad = append(bad, v.File+": "+fmt.Sprintf(format, args...))
	}
	read := func(path string) ([]int64, []int64, error) {
		info, err := f.Dataset(path)
		if err != nil {
			return nil, nil, err
		}
		n := int64(1)
		for _, x := range info.Shape {
			n *= x
		}
		raw := make([]byte, 8*n)
		if err := f.ReadHyperslab(path, make([]int64, len(info.Shape)), info.Shape, catalog.DType{Kind: catalog.Int, Size: 8}, raw); err != nil {
			return nil, nil, err
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
		return out, info.Shape, nil
	}
	levels, _, err1 := read("/grid_level")
	lower, ls, err2 := read("/grid_left_index")
	count, cs, err3 := read("/grid_dimensions")
	if err := errors.Join(err1, err2, err3); err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return []string{v.File + ": not a GDF file (grid_level, grid_left_index, grid_dimensions)"}, 0, nil
		}
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	ng := int64(len(levels))
	if !slices.Equal(ls, []int64{ng, 3}) || !slices.Equal(cs, []int64{ng, 3}) {
		return []string{fmt.Sprintf("%s: grid_left_index %v and grid_dimensions %v for %d grids", v.File, ls, cs, ng)}, 0, nil
	}
	g := 0
	for L, lv := range v.Levels {
		first := g
		for g < len(levels) && levels[g] == int64(L) {
			g++
		}
		if g-first != lv.Boxes {
			badf("level %d has %d grids, the manifest says %d boxes", L, g-first, lv.Boxes)
			continue
		}
		for _, a := range lv.Arrays {
			arrays++
			ds, ok := datasets[[2]string{a.File, a.Path}]
			rank := len(ds.Shape)
			if !ok || datasetLevel(ds, a.Var) != L || ds.Step != v.Step || (rank != 2 && rank != 3) {
				badf("%s maps %s:%s, which the manifest does not list as a 2-D or 3-D level %d of step %d", a.Name, a.File, a.Path, L, v.Step)
				continue
			}
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(a.File))); err != nil || !fi.Mode().IsRegular() {
				badf("%s needs %s, which is missing", a.Name, a.File)
				continue
			}
			want, err := boxTable(filepath.Join(dir, filepath.FromSlash(a.File)), ds)
			if err != nil {
				return nil, 0, err
			}
			if want == nil {
				want = []catalog.Box{{Lower: make([]int64, rank), Count: ds.Shape}}
			}
			var boxes []catalog.Box
			for i := first; i < g; i++ {
				boxes = append(boxes, catalog.Box{Lower: slices.Clone(lower[3*i : 3*i+rank]), Count: slices.Clone(count[3*i : 3*i+rank])})
			}
			if !boxesEqual(want, boxes) {
				badf("level %d's grids are not the box table of %s:%s", L, a.File, a.Path)
				continue
			}
			for i := first; i < g; i++ {
				path := fmt.Sprintf("/data/grid_%010d/%s", i, a.Name)
				maps, err := f.VirtualMappings(path)
				if errors.Is(err, catalog.ErrNotFound) {
					badf("%s is missing", path)
					break
				}
				if err != nil && !errors.Is(err, catalog.ErrUnsupported) {
					return nil, 0, fmt.Errorf("verify: %w", err)
				}
				b := boxes[i-first]
				sel := (*catalog.Box)(nil)
				if err == nil && len(maps) == 1 {
					sel = maps[0].Sel
					if sel == nil && maps[0].Whole {
						sel = &catalog.Box{Lower: make([]int64, rank), Count: ds.Shape}
					}
				}
				if sel == nil || maps[0].File != a.File || maps[0].Dataset != a.Path || !boxesEqual([]catalog.Box{*sel}, []catalog.Box{b}) {
					badf("%s does not map box %v of %s:%s", path, b, a.File, a.Path)
					break
				}
			}
		}
	}
	if g != len(levels) {
		badf("%d grids, the manifest's levels have %d", len(levels), g)
	}
	if len(v.Levels) > 0 {
		for _, a := range v.Levels[0].Arrays {
			why, err := checkGDFUnits(dir, f, a)
			if err != nil {
				return nil, 0, err
			}
			if why != "" {
				badf("%s", why)
			}
		}
	}
	return bad, arrays, nil
}

// checkGDFUnits checks array a's /field_types/<name> field_units: the
// manifest's units, and, when it names units, the unitSI and unitDimension
// of the level-0 dataset it maps as read back from the output (the string
// parsed here, not made again as the writer makes it).
func checkGDFUnits(dir string, f *h5.File, a catalog.ManifestViewArray) (string, error) {
	attrs, err := f.Attrs("/field_types/" + a.Name)
	if errors.Is(err, catalog.ErrNotFound) {
		return fmt.Sprintf("/field_types/%s is missing", a.Name), nil
	}
	if err != nil {
		return "", fmt.Errorf("verify: %w", err)
	}
	units := ""
	for _, at := range attrs {
		if at.Name == "field_units" && len(at.Strings) == 1 {
			units = at.Strings[0]
		}
	}
	if a.Units == nil {
		return "", nil // a manifest older than units
	}
	if units != *a.Units {
		return fmt.Sprintf("/field_types/%s field_units %q, the manifest says %q", a.Name, units, *a.Units), nil
	}
	if units == "" {
		return "", nil
	}
	scale, dim, ok := parseYTUnits(units)
	if !ok {
		return fmt.Sprintf("/field_types/%s field_units %q is not a product of SI base units", a.Name, units), nil
	}
	df, err := h5.Open(filepath.Join(dir, filepath.FromSlash(a.File)))
	if err != nil {
		return "", fmt.Errorf("verify: %w", err)
	}
	defer df.Close()
	find := func(as []catalog.Attr, name string) []float64 {
		for _, at := range as {
			if at.Name != name {
				continue
			}
			out := slices.Clone(at.Floats)
			for _, x := range at.Ints {
				out = append(out, float64(x))
			}
			return out
		}
		return nil
	}
	dattrs, err := df.Attrs(a.Path)
	if err != nil {
		return "", fmt.Errorf("verify: %w", err)
	}
	wantDim := find(dattrs, "unitDimension")
	if wantDim == nil { // a vector record's: on its group
		rattrs, err := df.Attrs(a.Path[:strings.LastIndex(a.Path, "/")])
		if err != nil {
			return "", fmt.Errorf("verify: %w", err)
		}
		wantDim = find(rattrs, "unitDimension")
	}
	wantSI := find(dattrs, "unitSI")
	if len(wantSI) != 1 || !slices.Equal(wantDim, dim[:]) || wantSI[0] != scale {
		return fmt.Sprintf("/field_types/%s field_units %q: %s:%s has unitSI %v, unitDimension %v", a.Name, units, a.File, a.Path, wantSI, wantDim), nil
	}
	return "", nil
}

// parseYTUnits reads a unit string of the form a GDF view writes ("0.001*A*s/m**3",
// "kg*m/(A*s**3)", "dimensionless"): its scale and the powers of openPMD's
// SI base units (L, M, T, I, theta, N, J).
func parseYTUnits(s string) (scale float64, dim [7]float64, ok bool) {
	scale = 1
	if s == "dimensionless" {
		return scale, dim, true
	}
	base := map[string]int{"m": 0, "kg": 1, "s": 2, "A": 3, "K": 4, "mol": 5, "cd": 6}
	num, den, _ := strings.Cut(strings.ReplaceAll(s, "**", "^"), "/")
	den = strings.TrimSuffix(strings.TrimPrefix(den, "("), ")")
	for sign, part := range map[float64]string{1: num, -1: den} {
		if part == "" {
			continue
		}
		for _, t := range strings.Split(part, "*") {
			name, pow, hasPow := strings.Cut(t, "^")
			p := 1.0
			if hasPow {
				var err error
				if p, err = strconv.ParseFloat(pow, 64); err != nil {
					return 0, dim, false
				}
			}
			i, known := base[name]
			switch {
			case known:
				dim[i] += sign * p
			case sign == 1 && !hasPow:
				x, err := strconv.ParseFloat(name, 64)
				if err != nil {
					return 0, dim, false
				}
				scale *= x
			default:
				return 0, dim, false
			}
		}
	}
	return scale, dim, true
}
