package chombo

// A Chombo AMR file (../shared/specs/chombo-hdf5.md):
//
//	/                          attrs num_levels, num_components, component_<c>, iteration, time
//	/Chombo_global             attrs SpaceDim, testReal
//	/level_<n>                 attrs dx, ref_ratio (to the next finer level), time, prob_domain
//	    boxes                  compound {lo_i, lo_j[, lo_k], hi_i, hi_j[, hi_k]} int32, inclusive
//	    Processors             int per box (writing rank)
//	    data:offsets=0         int64, nboxes+1 prefix sums in elements
//	    data:datatype=0        1-D reals; box b = [offsets[b], offsets[b+1]):
//	                           component-major, each component over the box grown by
//	                           outputGhost in Fortran order (i fastest)
//	    data_attributes        attrs comps, objectType, ghost, outputGhost
//	    <var>:datatype=0       checkpoints: one such triple per variable
//	    <var>:offsets=0
//	    <var>_attributes

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	ih5 "relayout/internal/h5"
	"relayout/reader/blockio"
)

// Config tunes Open.
type Config = blockio.Config

// source is embedded in Dataset so that the block-reading methods of
// blockio.Source are Dataset's own.
type source = blockio.Source

// Dataset is an opened Chombo file, or a directory of them (one step each).
// It implements reader.Dataset.
type Dataset struct {
	info    catalog.DatasetInfo
	entries []entry // sorted by (Var, Step, Level)
	*source         // block reads: catalog.Source's methods, Close
}

// entry is one component of one data set on one level.
type entry struct {
	Var   string
	Step  int64
	Level int
	comp  int
	lv    *levelData
}

// levelData is one "<name>:datatype=0" data set of one level: everything Scan
// needs to list the blocks of any of its components without I/O.
type levelData struct {
	file    string // relative to the root
	dataset string
	dtype   catalog.DType
	addr    int64 // file offset of element 0
	offset  []int64
	shape   []int64
	boxes   []catalog.Box // valid boxes, relative to offset
	stored  [][]int64     // per box: extent including ghosts
	npts    []int64       // per box: stored points per component
	start   []int64       // per box: element offset of component 0
	ghost   []int64       // nil without ghosts
	ranks   []int
	attrs   []catalog.Attr
}

// Detect reports whether path is a Chombo HDF5 file (it has /Chombo_global),
// or a directory whose first *.h5/*.hdf5 file is one.
func Detect(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return isChombo(path)
	}
	names, err := hdf5Files(path)
	return err == nil && len(names) > 0 && isChombo(filepath.Join(path, names[0]))
}

func isChombo(path string) bool {
	hf, err := ih5.Open(path)
	if err != nil {
		return false
	}
	defer hf.Close()
	_, err = hf.Attrs("/Chombo_global")
	return err == nil
}

func hdf5Files(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("chombo: %w", err)
	}
	var names []string
	for _, de := range des {
		ext := strings.ToLower(filepath.Ext(de.Name()))
		if ext != ".h5" && ext != ".hdf5" {
			continue
		}
		// Regular files and symlinks to them (wherever they point); any
		// other entry with an HDF5 name is refused, not left out.
		if err := fileio.CheckEntry(dir, de); err != nil {
			return nil, fmt.Errorf("chombo: series %s: %w", dir, err)
		}
		names = append(names, de.Name())
	}
	return names, nil
}

// Open catalogues a Chombo file or a directory of Chombo files. All metadata
// (boxes, offsets, attributes) is read and checked here; Scan does no I/O.
func Open(path string, cfg Config) (*Dataset, error) {
	match := cfg.Selects
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("chombo: %s: %w", path, catalog.ErrNotFound)
		}
		return nil, fmt.Errorf("chombo: %w", err)
	}
	root, files := filepath.Dir(path), []string{filepath.Base(path)}
	if st.IsDir() {
		root = path
		if files, err = hdf5Files(path); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("chombo: %s: no *.h5 or *.hdf5 files: %w", path, catalog.ErrUnsupported)
		}
	}
	d := &Dataset{info: catalog.DatasetInfo{Path: path, Root: root, Format: "chombo"}}
	steps := map[int64]string{}
	dims := map[int]string{}
	for _, name := range files {
		es, step, attrs, skipped, dim, err := openFile(root, name, match)
		if err != nil {
			return nil, err
		}
		for od, prev := range dims {
			if od != dim {
				return nil, fmt.Errorf("chombo: %s: %d-dimensional, %s is %d-dimensional (a directory is one time series): %w", name, dim, prev, od, catalog.ErrUnsupported)
			}
		}
		dims[dim] = name
		if prev, ok := steps[step]; ok {
			return nil, fmt.Errorf("chombo: %s: step %d is also the step of %s: %w", name, step, prev, catalog.ErrUnsupported)
		}
		steps[step] = name
		if d.info.Attrs == nil {
			d.info.Attrs = attrs
		}
		d.entries = append(d.entries, es...)
		d.info.Skipped = append(d.info.Skipped, skipped...)
	}
	slices.SortStableFunc(d.entries, func(a, b entry) int {
		if c := strings.Compare(a.Var, b.Var); c != 0 {
			return c
		}
		if a.Step != b.Step {
			return cmp.Compare(a.Step, b.Step)
		}
		return a.Level - b.Level
	})
	d.source = blockio.NewSource(blockio.NewFiles(root, cfg.MaxOpenFiles))
	return d, nil
}

// fileReader reads one Chombo file's metadata.
type fileReader struct {
	hf   *ih5.File
	name string // relative to the root
	size int64
	dim  int
}

func (r *fileReader) errf(obj, format string, args ...any) error {
	return catalog.Corrupt("chombo", r.name, -1, "%s: %s", obj, fmt.Sprintf(format, args...))
}

func openFile(root, name string, match func(string) bool) (es []entry, step int64, rootAttrs []catalog.Attr, skipped []string, dim int, err error) {
	full := filepath.Join(root, name)
	size, err := fileio.CheckRegular(full)
	if err != nil {
		return nil, 0, nil, nil, 0, fmt.Errorf("chombo: %w", err)
	}
	hf, err := ih5.Open(full)
	if err != nil {
		return nil, 0, nil, nil, 0, err
	}
	defer hf.Close()
	r := &fileReader{hf: hf, name: name, size: size}
	rootAttrs, err = hf.Attrs("/")
	if err != nil {
		return nil, 0, nil, nil, 0, err
	}
	global, err := hf.Attrs("/Chombo_global")
	if err != nil {
		return nil, 0, nil, nil, 0, err
	}
	sd, ok := intAttr(global, "SpaceDim")
	if !ok || sd < 1 || sd > 3 {
		return nil, 0, nil, nil, 0, r.errf("/Chombo_global", "SpaceDim %d missing or not 1-3", sd)
	}
	r.dim = int(sd)
	nl, ok := intAttr(rootAttrs, "num_levels")
	if !ok || nl < 1 || nl > 64 {
		return nil, 0, nil, nil, 0, r.errf("/", "num_levels %d missing or not 1-64", nl)
	}
	nc, _ := intAttr(rootAttrs, "num_components")
	if nc < 0 || nc > 1<<16 {
		return nil, 0, nil, nil, 0, r.errf("/", "num_components %d", nc)
	}
	comps := make([]string, nc)
	for c := range comps {
		s, ok := strAttr(rootAttrs, fmt.Sprintf("component_%d", c))
		if !ok || s == "" {
			return nil, 0, nil, nil, 0, r.errf("/", "attribute component_%d missing (num_components is %d)", c, nc)
		}
		comps[c] = s
	}
	if it, ok := intAttr(rootAttrs, "iteration"); ok {
		step = it
	} else if n, ok := firstNumber(name); ok {
		step = n
	}
	time, _ := floatAttr(rootAttrs, "time")

	// The data sets on each level: "<name>:datatype=0" datasets.
	sets := map[int][]string{}
	err = hf.Walk(func(p string, isDataset bool) error {
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		if !isDataset || len(parts) != 2 || !strings.HasPrefix(parts[0], "level_") {
			return nil
		}
		l, err := strconv.Atoi(strings.TrimPrefix(parts[0], "level_"))
		if err != nil || l < 0 {
			return nil
		}
		switch {
		case strings.HasSuffix(parts[1], ":datatype=0"):
			if l >= int(nl) {
				skipped = append(skipped, fmt.Sprintf("%s:%s: level beyond num_levels %d", name, p, nl))
				return nil
			}
			sets[l] = append(sets[l], strings.TrimSuffix(parts[1], ":datatype=0"))
		case strings.Contains(parts[1], ":datatype="), strings.HasPrefix(parts[1], "particles:"):
			skipped = append(skipped, fmt.Sprintf("%s:%s: not FArrayBox cell data", name, p))
		}
		return nil
	})
	if err != nil {
		return nil, 0, nil, nil, 0, err
	}

	var ratios []int64
	seen := map[[2]any]string{}
	for l := 0; l < int(nl); l++ {
		grp := fmt.Sprintf("/level_%d", l)
		la, err := hf.Attrs(grp)
		if err != nil {
			if errors.Is(err, catalog.ErrNotFound) {
				return nil, 0, nil, nil, 0, catalog.Corrupt("chombo", name, -1, "%s: num_levels is %d but the group is missing", grp, nl)
			}
			return nil, 0, nil, nil, 0, err
		}
		rr, ok := intAttr(la, "ref_ratio")
		if !ok {
			rr = 1
		}
		ratios = append(ratios, rr)
		coarser := int64(1)
		if l > 0 {
			coarser = ratios[l-1]
		}
		if len(sets[l]) == 0 {
			skipped = append(skipped, fmt.Sprintf("%s:%s: no data:datatype=0 dataset", name, grp))
			continue
		}
		geo, err := r.geometry(grp, l)
		if err != nil {
			return nil, 0, nil, nil, 0, err
		}
		attrs := levelAttrs(la, r.dim, coarser, time)
		for _, set := range sets[l] {
			var names []string
			lv, names, reason, err := r.dataSet(grp, set, geo, comps)
			if err != nil {
				return nil, 0, nil, nil, 0, err
			}
			if reason != "" {
				skipped = append(skipped, fmt.Sprintf("%s:%s/%s:datatype=0: %s", name, grp, set, reason))
				continue
			}
			lv.attrs = attrs
			for c, v := range names {
				if !match(v) {
					continue
				}
				key := [2]any{v, l}
				if prev, ok := seen[key]; ok {
					return nil, 0, nil, nil, 0, fmt.Errorf("chombo: %s: %s: variable %q is both in %s and %s: %w", name, grp, v, prev, set, catalog.ErrUnsupported)
				}
				seen[key] = set
				es = append(es, entry{Var: v, Step: step, Level: l, comp: c, lv: lv})
			}
		}
	}
	return es, step, rootAttrs, skipped, r.dim, nil
}

// geometry is what all data sets of a level share.
type geometry struct {
	domain [2][]int64 // prob_domain lo, hi (inclusive)
	lo, hi [][]int64  // per box, inclusive
	ranks  []int
	offset []int64
	shape  []int64
	relBox []catalog.Box
}

var axes = []string{"i", "j", "k"}

// fitsInt64 reports whether the product of shape fits an int64.
func fitsInt64(shape []int64) bool {
	n := int64(1)
	for _, v := range shape {
		if v <= 0 || n > math.MaxInt64/v {
			return false
		}
		n *= v
	}
	return true
}

// compoundBox maps a compound row {lo_i, lo_j, ..., hi_i, ...} by member name.
func (r *fileReader) compoundBox(obj string, names []string, row []int64) (lo, hi []int64, err error) {
	lo, hi = make([]int64, r.dim), make([]int64, r.dim)
	for k := 0; k < r.dim; k++ {
		li := slices.Index(names, "lo_"+axes[k])
		hi_ := slices.Index(names, "hi_"+axes[k])
		if li < 0 || hi_ < 0 {
			return nil, nil, r.errf(obj, "box members %v lack lo_%s/hi_%s", names, axes[k], axes[k])
		}
		lo[k], hi[k] = row[li], row[hi_]
		if hi[k] < lo[k] || lo[k] < math.MinInt32 || hi[k] > math.MaxInt32 {
			return nil, nil, r.errf(obj, "box lo %v hi %v is empty or out of range", lo, hi)
		}
	}
	return lo, hi, nil
}

func (r *fileReader) geometry(grp string, l int) (*geometry, error) {
	g := &geometry{}
	names, rows, err := r.hf.IntCompound(grp, "prob_domain")
	if err != nil {
		return nil, err
	}
	if len(rows) != 1 {
		return nil, r.errf(grp, "prob_domain has %d values", len(rows))
	}
	if g.domain[0], g.domain[1], err = r.compoundBox(grp+" prob_domain", names, rows[0]); err != nil {
		return nil, err
	}
	bname := grp + "/boxes"
	names, rows, err = r.hf.IntCompound(bname, "")
	if err != nil {
		return nil, err
	}
	for b, row := range rows {
		lo, hi, err := r.compoundBox(fmt.Sprintf("%s[%d]", bname, b), names, row)
		if err != nil {
			return nil, err
		}
		for k := 0; k < r.dim; k++ {
			if lo[k] < g.domain[0][k] || hi[k] > g.domain[1][k] {
				return nil, r.errf(bname, "box %d lo %v hi %v outside the level %d domain lo %v hi %v", b, lo, hi, l, g.domain[0], g.domain[1])
			}
		}
		g.lo, g.hi = append(g.lo, lo), append(g.hi, hi)
	}
	// Every level's array covers its level's prob_domain, the level-0
	// domain refined by the cumulative ratio (the openPMD mesh-refinement
	// extension: sparse where the level has no box).
	g.offset, g.shape = slices.Clone(g.domain[0]), make([]int64, r.dim)
	for k := range g.shape {
		g.shape[k] = g.domain[1][k] - g.domain[0][k] + 1
	}
	if !fitsInt64(g.shape) {
		return nil, r.errf(grp, "prob_domain lo %v hi %v: %v cells overflow", g.domain[0], g.domain[1], g.shape)
	}
	for b := range g.lo {
		rel := catalog.Box{Lower: make([]int64, r.dim), Count: make([]int64, r.dim)}
		for k := 0; k < r.dim; k++ {
			rel.Lower[k], rel.Count[k] = g.lo[b][k]-g.offset[k], g.hi[b][k]-g.lo[b][k]+1
		}
		g.relBox = append(g.relBox, rel)
	}
	g.ranks = make([]int, len(rows))
	for i := range g.ranks {
		g.ranks[i] = -1
	}
	pname := grp + "/Processors"
	if info, err := r.hf.Dataset(pname); err == nil && info.Numeric && info.DType.Kind != catalog.Float &&
		len(info.Shape) == 1 && info.Shape[0] == int64(len(rows)) {
		raw, err := r.hf.ReadRaw(pname)
		if err != nil {
			return nil, err
		}
		for i, v := range decodeInts(raw, info.DType) {
			if v >= 0 && v <= math.MaxInt32 {
				g.ranks[i] = int(v)
			}
		}
	}
	return g, nil
}

// dataSet reads "<set>:datatype=0" with its offsets and attributes. reason is
// set (and lv nil) for data that is not cell data relayout can catalogue.
func (r *fileReader) dataSet(grp, set string, g *geometry, rootComps []string) (lv *levelData, names []string, reason string, err error) {
	dname := grp + "/" + set + ":datatype=0"
	aname := grp + "/" + set + "_attributes"
	attrs, err := r.hf.Attrs(aname)
	if err != nil && !errors.Is(err, catalog.ErrNotFound) {
		return nil, nil, "", err
	}
	if ot, ok := strAttr(attrs, "objectType"); ok && ot != "FArrayBox" {
		return nil, nil, fmt.Sprintf("objectType %q, not FArrayBox cell data", ot), nil
	}
	ghost := make([]int64, r.dim)
	if gn, rows, err := r.hf.IntCompound(aname, "outputGhost"); err == nil && len(rows) == 1 {
		for k := 0; k < r.dim; k++ {
			i := slices.Index(gn, "intvect"+axes[k])
			if i < 0 || rows[0][i] < 0 || rows[0][i] > 1<<20 {
				return nil, nil, "", r.errf(aname, "outputGhost %v %v", gn, rows[0])
			}
			ghost[k] = rows[0][i]
		}
	} else if err != nil && !errors.Is(err, catalog.ErrNotFound) {
		return nil, nil, "", err
	}
	info, err := r.hf.Dataset(dname)
	if err != nil {
		return nil, nil, "", err
	}
	if !info.Numeric || info.DType.Kind != catalog.Float || len(info.Shape) != 1 {
		return nil, nil, "", fmt.Errorf("chombo: %s: %s: %s of shape %v, want 1-D floats: %w", r.name, dname, info.TypeDesc, info.Shape, catalog.ErrUnsupported)
	}
	if info.Layout != "contiguous" || len(info.Filters) > 0 || info.External || info.Address < 0 {
		return nil, nil, "", fmt.Errorf("chombo: %s: %s: %s layout with %d filters (relayout reads contiguous, unfiltered Chombo data): %w",
			r.name, dname, info.Layout, len(info.Filters), catalog.ErrUnsupported)
	}
	es := int64(info.DType.Size)
	n := info.Shape[0]
	if n < 0 || n > (r.size-info.Address)/es {
		return nil, nil, "", r.errf(dname, "%d elements at offset %d past the end of the file (%d bytes)", n, info.Address, r.size)
	}

	ncomp, ok := intAttr(attrs, "comps")
	if !ok {
		ncomp = int64(len(rootComps))
	}
	if ncomp < 1 || ncomp > 1<<16 {
		return nil, nil, "", r.errf(aname, "comps %d", ncomp)
	}
	switch {
	case set == "data":
		if int(ncomp) != len(rootComps) {
			return nil, nil, "", r.errf(aname, "comps %d, the root names %d components", ncomp, len(rootComps))
		}
		names = rootComps
	case ncomp == 1:
		names = []string{set}
	default:
		// Checkpoints store vector fields as one set ("Darcy velocity") whose
		// components the root names "xDarcy velocity", "yDarcy velocity", ...
		for c := 0; c < int(ncomp); c++ {
			v := fmt.Sprintf("%s_%d", set, c)
			if c < 3 && slices.Contains(rootComps, "xyz"[c:c+1]+set) {
				v = "xyz"[c:c+1] + set
			}
			names = append(names, v)
		}
	}

	nb := len(g.lo)
	lv = &levelData{file: r.name, dataset: dname, dtype: info.DType, addr: info.Address,
		offset: g.offset, shape: g.shape, boxes: g.relBox, ranks: g.ranks}
	if slices.ContainsFunc(ghost, func(x int64) bool { return x != 0 }) {
		lv.ghost = ghost
	}
	// Element counts per box: the offsets dataset, or the prefix sums it
	// should hold when a writer left it out.
	want := make([]int64, nb+1)
	for b := 0; b < nb; b++ {
		stored := make([]int64, r.dim)
		npts := int64(1)
		for k := range stored {
			stored[k] = g.hi[b][k] - g.lo[b][k] + 1 + 2*ghost[k]
			if npts > 0 && stored[k] > math.MaxInt64/npts {
				npts = -1 // overflow, refused below
				break
			}
			npts *= stored[k]
		}
		if npts <= 0 || npts > n {
			return nil, nil, "", r.errf(dname, "box %d of %v points does not fit in %d elements", b, stored, n)
		}
		lv.stored = append(lv.stored, stored)
		lv.npts = append(lv.npts, npts)
		want[b+1] = want[b] + npts*ncomp
		if want[b+1] > n {
			return nil, nil, "", r.errf(dname, "boxes 0-%d need %d elements, the dataset has %d", b, want[b+1], n)
		}
	}
	oname := grp + "/" + set + ":offsets=0"
	offs := want
	if oi, err := r.hf.Dataset(oname); err == nil {
		if !oi.Numeric || oi.DType.Kind == catalog.Float || len(oi.Shape) != 1 || oi.Shape[0] != int64(nb+1) {
			return nil, nil, "", r.errf(oname, "%s of shape %v, want %d integers", oi.TypeDesc, oi.Shape, nb+1)
		}
		raw, err := r.hf.ReadRaw(oname)
		if err != nil {
			return nil, nil, "", err
		}
		offs = decodeInts(raw, oi.DType)
	} else if !errors.Is(err, catalog.ErrNotFound) {
		return nil, nil, "", err
	}
	for b := 0; b < nb; b++ {
		if offs[b] < 0 || offs[b+1]-offs[b] != want[b+1]-want[b] || offs[b+1] > n {
			return nil, nil, "", r.errf(oname, "box %d spans elements [%d, %d), want %d elements (%d components × %v) within %d",
				b, offs[b], offs[b+1], want[b+1]-want[b], ncomp, lv.stored[b], n)
		}
	}
	lv.start = offs[:nb]
	return lv, names, "", nil
}

func decodeInts(raw []byte, dt catalog.DType) []int64 {
	var bo binary.ByteOrder = binary.LittleEndian
	if dt.BigEndian {
		bo = binary.BigEndian
	}
	out := make([]int64, len(raw)/dt.Size)
	for i := range out {
		b := raw[i*dt.Size:]
		switch dt.Size {
		case 1:
			out[i] = int64(int8(b[0]))
		case 2:
			out[i] = int64(int16(bo.Uint16(b)))
		case 4:
			out[i] = int64(int32(bo.Uint32(b)))
		case 8:
			out[i] = int64(bo.Uint64(b))
		}
		if dt.Kind == catalog.Uint {
			switch dt.Size {
			case 1:
				out[i] = int64(b[0])
			case 2:
				out[i] = int64(bo.Uint16(b))
			case 4:
				out[i] = int64(bo.Uint32(b))
			}
		}
	}
	return out
}

// levelAttrs are the attributes of every array of a level.
func levelAttrs(la []catalog.Attr, dim int, coarser int64, time float64) []catalog.Attr {
	out := []catalog.Attr{{Name: "ref_ratio", Type: "int64", Scalar: true, Ints: []int64{coarser}}}
	if dx, ok := floatAttr(la, "dx"); ok {
		v := make([]float64, dim)
		for k := range v {
			v[k] = dx
		}
		out = append(out, catalog.Attr{Name: "dx", Type: "float64", Floats: v})
	}
	if dt, ok := floatAttr(la, "dt"); ok {
		out = append(out, catalog.Attr{Name: "dt", Type: "float64", Scalar: true, Floats: []float64{dt}})
	}
	if t, ok := floatAttr(la, "time"); ok {
		time = t
	}
	out = append(out, catalog.Attr{Name: "time", Type: "float64", Scalar: true, Floats: []float64{time}})
	slices.SortFunc(out, func(a, b catalog.Attr) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func findAttr(as []catalog.Attr, name string) *catalog.Attr {
	for i := range as {
		if as[i].Name == name {
			return &as[i]
		}
	}
	return nil
}

func intAttr(as []catalog.Attr, name string) (int64, bool) {
	a := findAttr(as, name)
	switch {
	case a == nil:
		return 0, false
	case len(a.Ints) == 1:
		return a.Ints[0], true
	case len(a.Uints) == 1 && a.Uints[0] <= math.MaxInt64:
		return int64(a.Uints[0]), true
	}
	return 0, false
}

func floatAttr(as []catalog.Attr, name string) (float64, bool) {
	a := findAttr(as, name)
	if a == nil || len(a.Floats) != 1 {
		return 0, false
	}
	return a.Floats[0], true
}

func strAttr(as []catalog.Attr, name string) (string, bool) {
	a := findAttr(as, name)
	if a == nil || len(a.Strings) != 1 {
		return "", false
	}
	return a.Strings[0], true
}

// firstNumber is the first run of digits in a file name: plt025000.2d.hdf5 →
// 25000.
func firstNumber(name string) (int64, bool) {
	i := strings.IndexAny(name, "0123456789")
	if i < 0 {
		return 0, false
	}
	j := i
	for j < len(name) && name[j] >= '0' && name[j] <= '9' {
		j++
	}
	n, err := strconv.ParseInt(name[i:j], 10, 64)
	return n, err == nil
}

// Info describes the input; Skipped lists data that is not cell data.
func (d *Dataset) Info() catalog.DatasetInfo { return d.info }

// Scan emits one array per (variable, step, level), ordered by variable name,
// then step and level, each with one block per box.
func (d *Dataset) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	for _, e := range d.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(e.array()); err != nil {
			return err
		}
	}
	return nil
}

func nanFill(dt catalog.DType) []byte {
	b := make([]byte, dt.Size)
	var bo binary.ByteOrder = binary.LittleEndian
	if dt.BigEndian {
		bo = binary.BigEndian
	}
	if dt.Size == 4 {
		bo.PutUint32(b, math.Float32bits(float32(math.NaN())))
	} else {
		bo.PutUint64(b, math.Float64bits(math.NaN()))
	}
	return b
}

func (e entry) array() *catalog.Array {
	lv := e.lv
	es := int64(lv.dtype.Size)
	a := &catalog.Array{
		Var: e.Var, Step: e.Step, Level: e.Level, DType: lv.dtype,
		Shape: slices.Clone(lv.shape), Offset: slices.Clone(lv.offset),
		Fill:   nanFill(lv.dtype),
		Attrs:  slices.Clone(lv.attrs),
		Source: fmt.Sprintf("%s:%s[%d]", lv.file, lv.dataset, e.comp),
		Boxes:  make([]catalog.Box, len(lv.boxes)),
		Blocks: make([]catalog.Block, len(lv.boxes)),
	}
	for b, bx := range lv.boxes {
		a.Boxes[b] = catalog.Box{Lower: slices.Clone(bx.Lower), Count: slices.Clone(bx.Count)}
		blk := catalog.Block{
			Box:    catalog.Box{Lower: slices.Clone(bx.Lower), Count: slices.Clone(bx.Count)},
			File:   lv.file,
			Offset: lv.addr + (lv.start[b]+int64(e.comp)*lv.npts[b])*es,
			Length: lv.npts[b] * es,
			Order:  catalog.ColMajor,
			Rank:   int32(lv.ranks[b]),
		}
		if lv.ghost != nil {
			blk = blk.WithStored(slices.Clone(lv.stored[b]), slices.Clone(lv.ghost))
		}
		a.Blocks[b] = blk
	}
	return a
}
