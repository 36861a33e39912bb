package verify

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// maxConstantHash bounds the logical size of a constant record whose
// digest is recomputed (the writer records none above 4 GiB).
const maxConstantHash = 4 << 30

// constant checks a constant record: the value and shape attributes at
// the manifest's path, and the digest of the value repeated over the shape.
func (r *run) constant(ctx context.Context, a *catalog.Array, ref outRef, f *h5.File) error {
	k := a.Key()
	dt := a.DType.LittleEndian()
	attrs, err := f.Attrs(ref.d.Path)
	if errors.Is(err, catalog.ErrNotFound) {
		return difff("%s: constant record %s missing from %s", where(k), ref.d.Path, ref.v.File)
	}
	if err != nil {
		return fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	var value, shape *catalog.Attr
	for i := range attrs {
		switch attrs[i].Name {
		case "value":
			value = &attrs[i]
		case "shape":
			shape = &attrs[i]
		}
	}
	if value == nil || shape == nil {
		return difff("%s: %s:%s has no value and shape attributes", where(k), ref.v.File, ref.d.Path)
	}
	if value.Type != dt.AttrType() {
		return difff("%s: constant value of type %s, want %s", where(k), value.Type, dt.AttrType())
	}
	got, ok := catalog.AttrBytes(*value, dt)
	if !ok || len(got) != dt.Size {
		return difff("%s: constant value %+v is not one %s", where(k), *value, dt)
	}
	want, anyNaN := expectedFill(a)
	if anyNaN && !isNaN(got) || !anyNaN && !bytes.Equal(got, want) {
		return difff("%s: constant value in=%s out=%s", where(k), formatElem(want, dt), formatElem(got, dt))
	}
	var dims []int64
	for _, u := range shape.Uints {
		dims = append(dims, int64(u))
	}
	dims = append(dims, shape.Ints...)
	if !equalInts(dims, a.Shape) {
		return difff("%s: constant shape in=%v out=%v", where(k), a.Shape, dims)
	}
	n := a.Bytes()
	if h := r.digestKind.New(); h != nil && (ref.d.Sum(r.digestKind) != "" || r.opts.FillDigests && n <= maxConstantHash) {
		if n > maxConstantHash {
			return difff("%s: the manifest records a %v of a constant of %d bytes", where(k), r.digestKind, n)
		}
		rep := bytes.Repeat(got, max(1, (64<<10)/len(got)))
		for left := n; left > 0; {
			if err := ctx.Err(); err != nil {
				return err
			}
			c := min(left, int64(len(rep)))
			h.Write(rep[:c])
			left -= c
		}
		if err := r.digest(k, ref, h); err != nil {
			return err
		}
	}
	r.stats.constants.Add(1)
	r.progress(a.Var, n)
	return nil
}

// boxTable checks an AMR level's box table (the manifest's boxes path):
// int64 [nboxes][2][rank], lower and upper (inclusive) corners in the
// level's global index space, the input's boxes in any order.
func (r *run) boxTable(a *catalog.Array, ref outRef, f *h5.File) error {
	k := a.Key()
	if len(a.Boxes) == 0 {
		return nil
	}
	if ref.d.Boxes == "" {
		return difff("%s: the input level has %d boxes, the manifest names no box table", where(k), len(a.Boxes))
	}
	rank := len(a.Shape)
	i64 := catalog.DType{Kind: catalog.Int, Size: 8}
	info, err := f.Dataset(ref.d.Boxes)
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return difff("%s: box table %s missing from %s", where(k), ref.d.Boxes, ref.v.File)
		}
		return fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	if want := []int64{int64(len(a.Boxes)), 2, int64(rank)}; !slices.Equal(info.Shape, want) {
		return difff("%s: box table %s of shape %v, want %v", where(k), ref.d.Boxes, info.Shape, want)
	}
	buf := make([]byte, len(a.Boxes)*2*rank*8)
	if err := f.ReadHyperslab(ref.d.Boxes, []int64{0, 0, 0}, info.Shape, i64, buf); err != nil {
		return fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	var got, want [][]int64
	for i := range a.Boxes {
		row := make([]int64, 2*rank)
		for j := range row {
			row[j] = int64(binary.LittleEndian.Uint64(buf[(i*2*rank+j)*8:]))
		}
		got = append(got, row)
		b := a.Boxes[i]
		if len(b.Lower) != rank || len(b.Count) != rank || len(a.Offset) != rank {
			return fmt.Errorf("verify: input %s: box %v in an array of rank %d: %w", where(k), b, rank, catalog.ErrCorrupt)
		}
		w := make([]int64, 2*rank)
		for d := range rank {
			w[d] = a.Offset[d] + b.Lower[d]
			w[rank+d] = a.Offset[d] + b.Lower[d] + b.Count[d] - 1
		}
		want = append(want, w)
	}
	r.stats.boxTables.Add(1)
	slices.SortFunc(got, slices.Compare)
	slices.SortFunc(want, slices.Compare)
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			return difff("%s: box table %s: box %v (lower, upper) not among the input's; input has %v", where(k), ref.d.Boxes, got[i], want[i])
		}
	}
	return nil
}

// gridOffset checks that a refined AMR level is placed where its box
// table says in physical space too: the openPMD gridGlobalOffset of level
// L (on the component, or its record group) is level 0's plus the level's
// index offset times its gridSpacing, dimension by dimension (relative
// tolerance 1e-9). Levels without these attributes are not checked.
func (r *run) gridOffset(a *catalog.Array, ref outRef, f *h5.File) error {
	if len(a.Boxes) == 0 || a.Level == 0 {
		return nil
	}
	k := a.Key()
	base, ok := r.out[catalog.Key{Var: k.Var, Step: k.Step, Level: 0}]
	if !ok || base.v.File != ref.v.File {
		return nil
	}
	grid := func(path string) (offset, spacing []float64, err error) {
		for p := path; p != "/" && p != "."; p = filepath.ToSlash(filepath.Dir(p)) {
			attrs, err := f.Attrs(p)
			if err != nil {
				return nil, nil, fmt.Errorf("verify: output %s: %w", where(k), err)
			}
			for _, at := range attrs {
				switch at.Name {
				case "gridGlobalOffset":
					offset = at.Floats
				case "gridSpacing":
					spacing = at.Floats
				}
			}
			if offset != nil {
				return offset, spacing, nil
			}
		}
		return nil, nil, nil
	}
	g, h, err := grid(ref.d.Path)
	if err != nil {
		return err
	}
	g0, _, err := grid(base.d.Path)
	if err != nil || g == nil || g0 == nil {
		return err
	}
	rank := len(a.Shape)
	if len(g) != rank || len(h) != rank || len(g0) != rank || len(a.Offset) != rank {
		return difff("%s: gridGlobalOffset %v, gridSpacing %v, level 0's gridGlobalOffset %v for a level of rank %d", where(k), g, h, g0, rank)
	}
	for d := range rank {
		want := g0[d] + float64(a.Offset[d])*h[d]
		if diff := math.Abs(g[d] - want); diff > 1e-9*max(1, math.Abs(want)) {
			return difff("%s: gridGlobalOffset %v, want %v (level 0's %v + offset %v * gridSpacing %v)", where(k), g, want, g0, a.Offset, h)
		}
	}
	r.stats.gridOffsets.Add(1)
	return nil
}

// checkSeries checks series.h5 of dir against the manifest: every file it
// reads through exists beside it (a virtual dataset whose source file is
// missing reads as fill without an error), and every manifest dataset it
// presents as a virtual dataset maps the whole same-path dataset of the
// variable's file. One line goes to w.
func checkSeries(dir string, m *catalog.Manifest, w io.Writer) (bool, error) {
	if m.Series == "" {
		return true, nil
	}
	var bad []string
	for _, name := range m.SeriesFiles {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || !fi.Mode().IsRegular() {
			bad = append(bad, fmt.Sprintf("%s needs %s, which is missing", m.Series, name))
		}
	}
	if len(bad) > 0 {
		_, err := fmt.Fprintf(w, "DIFF %s: %s\n", m.Series, strings.Join(bad, "; "))
		return false, err
	}
	sf, err := h5.Open(filepath.Join(dir, filepath.FromSlash(m.Series)))
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			_, err := fmt.Fprintf(w, "DIFF %s: missing\n", m.Series)
			return false, err
		}
		return false, fmt.Errorf("verify: %w", err)
	}
	defer sf.Close()
	mapped := 0
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			maps, err := sf.VirtualMappings(d.Path)
			if errors.Is(err, catalog.ErrUnsupported) || errors.Is(err, catalog.ErrNotFound) {
				continue // an external link (a value, an empty array) or left out
			}
			if err != nil {
				return false, fmt.Errorf("verify: %w", err)
			}
			if len(maps) != 1 || maps[0].File != v.File || maps[0].Dataset != d.Path || !maps[0].Whole {
				bad = append(bad, fmt.Sprintf("%s:%s does not map the whole %s:%s", m.Series, d.Path, v.File, d.Path))
				continue
			}
			mapped++
		}
	}
	if len(bad) > 0 {
		_, err := fmt.Fprintf(w, "DIFF %s: %s\n", m.Series, strings.Join(bad, "; "))
		return false, err
	}
	_, err = fmt.Fprintf(w, "OK  %s  %d files, %d virtual datasets\n", m.Series, len(m.SeriesFiles), mapped)
	return true, err
}
