package verify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// checkParticleView checks a particle view (VTKHDF UnstructuredGrid of N
// VERTEX cells, rewriter/particleviews.go): version 1.0; NumberOfPoints,
// NumberOfCells and NumberOfConnectivityIds are the manifest's N;
// /VTKHDF/Points (N, 3) maps, column by column, the whole 1-D position
// component each "Points/<axis>" array names (a particle variable's
// position/<axis> of N elements that the manifest lists, in a file that is
// there), and nothing else; every other array is PointData mapping the
// whole listed dataset of N elements; Connectivity is 0 .. N-1, Offsets 0
// .. N and Types all VTK_VERTEX (1), read back.
func checkParticleView(dir string, v catalog.ManifestView, f *h5.File, attrs []catalog.Attr,
	datasets map[[2]string]catalog.ManifestDataset) (bad []string, arrays int, err error) {
	badf := func(format string, args ...any) {
		bad = append(bad, v.File+": "+fmt.Sprintf(format, args...))
	}
	n := v.Points
	if i := slices.IndexFunc(attrs, func(a catalog.Attr) bool { return a.Name == "Version" }); i < 0 || !slices.Equal(attrs[i].Ints, []int64{1, 0}) {
		badf("Version is not 1.0")
	}
	if n <= 0 {
		return append(bad, fmt.Sprintf("%s: %d points", v.File, n)), 0, nil
	}
	int64t := catalog.DType{Kind: catalog.Int, Size: 8}
	// read calls fn with successive runs of path's int64 values (at most
	// 1 Mi at a time), from its start.
	read := func(path string, want int64, fn func(lo int64, vals []int64) bool) (string, error) {
		info, err := f.Dataset(path)
		if errors.Is(err, catalog.ErrNotFound) {
			return path + " is missing", nil
		}
		if err != nil {
			return "", fmt.Errorf("verify: %w", err)
		}
		if !slices.Equal(info.Shape, []int64{want}) {
			return fmt.Sprintf("%s has shape %v, want [%d]", path, info.Shape, want), nil
		}
		const run = 1 << 20
		raw := make([]byte, 8*min(want, run))
		vals := make([]int64, min(want, run))
		for lo := int64(0); lo < want; lo += run {
			m := min(run, want-lo)
			if err := f.ReadHyperslab(path, []int64{lo}, []int64{m}, int64t, raw[:8*m]); err != nil {
				return "", fmt.Errorf("verify: %w", err)
			}
			for i := range m {
				vals[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			}
			if !fn(lo, vals[:m]) {
				return fmt.Sprintf("%s differs from the view's rule at elements from %d", path, lo), nil
			}
		}
		return "", nil
	}
	checks := []struct {
		path string
		len  int64
		rule func(i int64) int64
	}{
		{"/VTKHDF/NumberOfPoints", 1, func(int64) int64 { return n }},
		{"/VTKHDF/NumberOfCells", 1, func(int64) int64 { return n }},
		{"/VTKHDF/NumberOfConnectivityIds", 1, func(int64) int64 { return n }},
		{"/VTKHDF/Connectivity", n, func(i int64) int64 { return i }},
		{"/VTKHDF/Offsets", n + 1, func(i int64) int64 { return i }},
		{"/VTKHDF/Types", n, func(int64) int64 { return 1 }},
	}
	for _, c := range checks {
		why, err := read(c.path, c.len, func(lo int64, vals []int64) bool {
			for i, x := range vals {
				if x != c.rule(lo+int64(i)) {
					return false
				}
			}
			return true
		})
		if err != nil {
			return nil, 0, err
		}
		if why != "" {
			badf("%s", why)
		}
	}
	var points []h5.VirtualMapping
	for _, a := range v.Arrays {
		arrays++
		where := fmt.Sprintf("%s (%s)", a.Name, a.Var)
		ds, ok := datasets[[2]string{a.File, a.Path}]
		if !ok || !slices.Equal(ds.Shape, []int64{n}) || !slices.Equal(a.Shape, []int64{n}) || !strings.HasPrefix(a.Var, catalog.ParticlesPrefix) {
			badf("%s maps %s:%s, which the manifest does not list as a particle record of %d elements", where, a.File, a.Path, n)
			continue
		}
		if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(a.File))); err != nil || !fi.Mode().IsRegular() {
			badf("%s needs %s, which is missing", where, a.File)
			continue
		}
		whole := h5.VirtualMapping{File: a.File, Dataset: a.Path, Whole: true,
			Box: catalog.Box{Lower: []int64{0}, Count: []int64{n}}}
		if axis, ok := strings.CutPrefix(a.Name, "Points/"); ok {
			c := strings.Index("xyz", axis)
			if c < 0 || len(axis) != 1 || !strings.HasSuffix(a.Var, "/position/"+axis) || a.Dataset != "/VTKHDF/Points" {
				badf("%s: not a position component in its column of /VTKHDF/Points", where)
				continue
			}
			whole.Box = catalog.Box{Lower: []int64{0, int64(c)}, Count: []int64{n, 1}}
			points = append(points, whole)
			continue
		}
		if a.Dataset != "/VTKHDF/PointData/"+a.Name {
			badf("%s is at %s, not in PointData", where, a.Dataset)
			continue
		}
		if why, err := sameMappings(f, a.Dataset, []int64{n}, []h5.VirtualMapping{whole}); err != nil {
			return nil, 0, err
		} else if why != "" {
			badf("%s: %s", where, why)
		}
	}
	if why, err := sameMappings(f, "/VTKHDF/Points", []int64{n, 3}, points); err != nil {
		return nil, 0, err
	} else if why != "" {
		badf("/VTKHDF/Points: %s", why)
	}
	return bad, arrays, nil
}

// sameMappings says how virtual dataset path differs from shape and
// exactly the mappings want (whole sources at their boxes, in any order).
func sameMappings(f *h5.File, path string, shape []int64, want []h5.VirtualMapping) (string, error) {
	info, err := f.Dataset(path)
	if errors.Is(err, catalog.ErrNotFound) {
		return "missing", nil
	}
	if err != nil {
		return "", fmt.Errorf("verify: %w", err)
	}
	if !slices.Equal(info.Shape, shape) {
		return fmt.Sprintf("shape %v, want %v", info.Shape, shape), nil
	}
	maps, err := f.VirtualMappings(path)
	if err != nil && !errors.Is(err, catalog.ErrUnsupported) {
		return "", fmt.Errorf("verify: %w", err)
	}
	same := func(a, b h5.VirtualMapping) bool {
		return a.File == b.File && a.Dataset == b.Dataset && a.Whole && b.Whole &&
			slices.Equal(a.Box.Lower, b.Box.Lower) && slices.Equal(a.Box.Count, b.Box.Count)
	}
	ok := err == nil && len(maps) == len(want)
	for _, w := range want {
		ok = ok && slices.ContainsFunc(maps, func(m h5.VirtualMapping) bool { return same(m, w) })
	}
	if !ok {
		return fmt.Sprintf("does not map exactly the whole %d listed datasets", len(want)), nil
	}
	return "", nil
}
