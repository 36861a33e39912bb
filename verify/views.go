package verify

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// checkViews checks the ParaView views the manifest lists (m.Views): each
// view file is there, its /VTKHDF attributes say ImageData version 1.0 with
// the manifest's extent, origin, spacing and direction; every array is a
// virtual dataset mapping exactly the whole listed dataset of the listed
// file (which exists, holds that variable's dataset in the manifest, and
// whose shape, padded with 1s to three axes, is the array's); the extent is
// the arrays' shape reversed (VTK's x is the last axis) and the direction
// a permutation. OverlappingAMR views are checked by checkAMRView, particle
// views by checkParticleView. A
// virtual dataset whose file is missing reads as its fill value without an
// error, hence the files' check. One line goes to w.
func checkViews(dir string, m *catalog.Manifest, w io.Writer) (bool, error) {
	if len(m.Views) == 0 {
		return true, nil
	}
	shapes := map[[2]string][]int64{} // file, path -> shape
	datasets := map[[2]string]catalog.ManifestDataset{}
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			shapes[[2]string{v.File, d.Path}] = d.Shape
			datasets[[2]string{v.File, d.Path}] = d
		}
	}
	var bad []string
	arrays := 0
	for _, v := range m.Views {
		b, n, err := checkView(dir, v, shapes, datasets)
		if err != nil {
			return false, err
		}
		bad = append(bad, b...)
		arrays += n
	}
	if len(bad) > 0 {
		_, err := fmt.Fprintf(w, "DIFF views: %s\n", strings.Join(bad, "; "))
		return false, err
	}
	gdf := 0
	for _, v := range m.Views {
		if v.Type == "GDF" {
			gdf++
		}
	}
	yt := ""
	if gdf > 0 {
		yt = fmt.Sprintf(" and %d yt GDF %s", gdf, plural(gdf, "view"))
	}
	pv := len(m.Views) - gdf
	_, err := fmt.Fprintf(w, "OK  views  %d ParaView %s%s, %d arrays (virtual datasets over the variables' datasets)\n", pv, plural(pv, "view"), yt, arrays)
	return true, err
}

func checkView(dir string, v catalog.ManifestView, shapes map[[2]string][]int64, datasets map[[2]string]catalog.ManifestDataset) (bad []string, arrays int, err error) {
	f, err := h5.Open(filepath.Join(dir, filepath.FromSlash(v.File)))
	if errors.Is(err, catalog.ErrNotFound) {
		return []string{v.File + " is missing"}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	defer f.Close()
	if v.Type == "GDF" {
		return checkGDFView(dir, v, f, datasets)
	}
	attrs, err := f.Attrs("/VTKHDF")
	if errors.Is(err, catalog.ErrNotFound) {
		return []string{v.File + ": no /VTKHDF group"}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("verify: %w", err)
	}
	get := func(name string) *catalog.Attr {
		for i := range attrs {
			if attrs[i].Name == name {
				return &attrs[i]
			}
		}
		return nil
	}
	badf := func(format string, args ...any) {
		bad = append(bad, v.File+": "+fmt.Sprintf(format, args...))
	}
	if a := get("Type"); v.Type == "OverlappingAMR" && a != nil && slices.Equal(a.Strings, []string{v.Type}) {
		return checkAMRView(dir, v, f, attrs, datasets)
	}
	if a := get("Type"); v.Type == "UnstructuredGrid" && a != nil && slices.Equal(a.Strings, []string{v.Type}) {
		return checkParticleView(dir, v, f, attrs, datasets)
	}
	if a := get("Type"); a == nil || !slices.Equal(a.Strings, []string{"ImageData"}) || v.Type != "ImageData" {
		badf("Type is not ImageData")
	}
	if a := get("Version"); a == nil || !slices.Equal(a.Ints, []int64{1, 0}) {
		badf("Version is not 1.0")
	}
	if a := get("WholeExtent"); a == nil || !slices.Equal(a.Ints, v.WholeExtent) {
		badf("WholeExtent differs from the manifest's %v", v.WholeExtent)
	}
	for _, want := range []struct {
		name string
		v    []float64
	}{{"Origin", v.Origin}, {"Spacing", v.Spacing}, {"Direction", v.Direction}} {
		if a := get(want.name); a == nil || !slices.Equal(a.Floats, want.v) {
			badf("%s differs from the manifest's %v", want.name, want.v)
		}
	}
	if !permutation(v.Direction) {
		badf("Direction %v is not a permutation of the axes", v.Direction)
	}
	if len(v.WholeExtent) != 6 {
		badf("WholeExtent %v", v.WholeExtent)
		return bad, 0, nil
	}
	for _, a := range v.Arrays {
		arrays++
		where := fmt.Sprintf("%s (%s)", a.Dataset, a.Var)
		for ax := range 3 {
			if len(a.Shape) != 3 || v.WholeExtent[2*ax] != 0 || v.WholeExtent[2*ax+1] != a.Shape[2-ax]-1 {
				badf("%s of shape %v does not span WholeExtent %v (VTK's x is the last axis)", where, a.Shape, v.WholeExtent)
				break
			}
		}
		src, ok := shapes[[2]string{a.File, a.Path}]
		if !ok {
			badf("%s maps %s:%s, which the manifest does not list", where, a.File, a.Path)
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(a.File))); err != nil || !fi.Mode().IsRegular() {
			badf("%s needs %s, which is missing", where, a.File)
			continue
		}
		padded := append(slices.Clone(src), 1, 1, 1)[:3]
		if len(src) > 3 || len(src) == 0 || !slices.Equal(padded, a.Shape) {
			badf("%s has shape %v for %s:%s of shape %v", where, a.Shape, a.File, a.Path, src)
		}
		info, err := f.Dataset(a.Dataset)
		if errors.Is(err, catalog.ErrNotFound) {
			badf("%s is missing", where)
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("verify: %w", err)
		}
		if !slices.Equal(info.Shape, a.Shape) {
			badf("%s has shape %v in the file, %v in the manifest", where, info.Shape, a.Shape)
		}
		maps, err := f.VirtualMappings(a.Dataset)
		if err != nil && !errors.Is(err, catalog.ErrUnsupported) {
			return nil, 0, fmt.Errorf("verify: %w", err)
		}
		if err != nil || len(maps) != 1 || maps[0].File != a.File || maps[0].Dataset != a.Path || !maps[0].Whole ||
			!slices.Equal(maps[0].Box.Count, a.Shape) || slices.ContainsFunc(maps[0].Box.Lower, func(x int64) bool { return x != 0 }) {
			badf("%s does not map the whole %s:%s", where, a.File, a.Path)
		}
	}
	return bad, arrays, nil
}

// permutation reports whether d (row-major 3x3) has one 1 in each row and
// column and zeros elsewhere.
func permutation(d []float64) bool {
	if len(d) != 9 {
		return false
	}
	var rows, cols [3]int
	for i, x := range d {
		switch x {
		case 0:
		case 1:
			rows[i/3]++
			cols[i%3]++
		default:
			return false
		}
	}
	return rows == [3]int{1, 1, 1} && cols == [3]int{1, 1, 1}
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}
