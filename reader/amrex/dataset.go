package amrex

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/blockio"
)

// Config tunes Open.
type Config = blockio.Config

// source is embedded in Dataset so that the block-reading methods of
// blockio.Source are Dataset's own.
type source = blockio.Source

// Dataset is an opened plotfile, or a directory of plotfiles (one step each).
// It implements reader.Dataset.
type Dataset struct {
	info    catalog.DatasetInfo
	plots   []*plotfile // sorted by step
	vars    []string    // selected variables, sorted
	*source             // block reads: catalog.Source's methods, Close
}

type plotfile struct {
	dir    string // relative to the root, slash-separated; "" for a single plotfile
	step   int64
	hdr    *Header
	comp   map[string]int // variable name -> component
	levels []*level
}

// level is one AMR level of one plotfile, everything Scan needs without I/O.
type level struct {
	cellH  string // Cell_H path relative to the root, for messages
	dtype  catalog.DType
	ghost  []int64 // nil when the FABs hold no ghost cells
	offset []int64 // global index of the array's first element
	shape  []int64
	ratio  []int64 // per axis, to the next coarser level (nil on level 0)
	npts   []int64 // per box: stored points per component
	boxes  []catalog.Box
	fabs   []fab
}

type fab struct {
	file   string // relative to the root
	data   int64  // byte offset of component 0
	stored []int64
	rank   int
}

// maxText bounds the size of a Header or Cell_H read into memory.
const maxText = 1 << 30

// Detect reports whether path is a plotfile directory or a directory holding
// plotfiles.
func Detect(path string) bool {
	if isPlotfile(path) {
		return true
	}
	des, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, de := range des {
		if de.IsDir() && isPlotfile(filepath.Join(path, de.Name())) {
			return true
		}
	}
	return false
}

// HasShape reports whether dir has a plotfile's shape whatever its Header
// holds: an entry named Header beside a Level_0 directory. Open takes such a
// directory as one plotfile, so that a damaged Header is reported as such
// rather than as an unknown format.
func HasShape(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, "Header")); err != nil {
		return false
	}
	st, err := os.Stat(filepath.Join(dir, "Level_0"))
	return err == nil && st.IsDir()
}

// IsPlotfile reports whether dir is one plotfile (not a directory of them).
func IsPlotfile(dir string) bool { return isPlotfile(dir) }

// isPlotfile reports whether dir holds a Header that starts like a plotfile's
// (a version line, then the number of variables). Parse errors are Open's to
// report.
func isPlotfile(dir string) bool {
	f, _, err := fileio.Open(filepath.Join(dir, "Header"))
	if errors.Is(err, catalog.ErrUnsupported) || errors.Is(err, catalog.ErrCorrupt) {
		return true // a Header that is not a regular file: Open says so
	}
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := io.ReadFull(f, buf)
	lines := strings.SplitN(string(buf[:n]), "\n", 3)
	if len(lines) < 3 || strings.TrimSpace(lines[0]) == "" || strings.ContainsAny(strings.TrimSpace(lines[0]), " \t") {
		return false
	}
	_, err = strconv.Atoi(strings.TrimSpace(lines[1]))
	return err == nil
}

// Open catalogues a plotfile or a directory of plotfiles: every header, box
// and FAB header is read and checked here; Scan does no I/O.
func Open(root string, cfg Config) (*Dataset, error) {
	match := cfg.Selects
	st, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("amrex: %s: %w", root, catalog.ErrNotFound)
		}
		return nil, fmt.Errorf("amrex: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("amrex: %s: a plotfile is a directory: %w", root, catalog.ErrUnsupported)
	}
	files := blockio.NewFiles(root, cfg.MaxOpenFiles)
	o := &opener{root: root, files: files, sized: map[string]int64{}}
	d := &Dataset{info: catalog.DatasetInfo{Path: root, Root: root, Format: "amrex"}, source: blockio.NewSource(files)}
	ok := false
	defer func() {
		if !ok {
			files.Close()
		}
	}()

	var dirs []string
	if isPlotfile(root) || HasShape(root) {
		dirs = []string{""}
	} else {
		des, err := os.ReadDir(root)
		if err != nil {
			return nil, fmt.Errorf("amrex: %w", err)
		}
		for _, de := range des {
			switch {
			case de.IsDir() && isPlotfile(filepath.Join(root, de.Name())):
				dirs = append(dirs, de.Name())
			case de.IsDir():
				d.info.Skipped = append(d.info.Skipped, de.Name()+": directory without a plotfile Header")
			}
		}
	}
	selected := map[string]bool{}
	for _, dir := range dirs {
		p, skipped, err := o.plotfile(dir)
		if err != nil {
			return nil, err
		}
		d.info.Skipped = append(d.info.Skipped, skipped...)
		if len(d.plots) > 0 && p.hdr.Dim != d.plots[0].hdr.Dim {
			return nil, fmt.Errorf("amrex: %s: %d-dimensional, %s is %d-dimensional: %w",
				path.Join(dir, "Header"), p.hdr.Dim, path.Join(d.plots[0].dir, "Header"), d.plots[0].hdr.Dim, catalog.ErrUnsupported)
		}
		for _, v := range p.hdr.Vars {
			if match(v) {
				selected[v] = true
			}
		}
		d.plots = append(d.plots, p)
	}
	if err := assignSteps(d.plots); err != nil {
		return nil, err
	}
	d.vars = make([]string, 0, len(selected))
	for v := range selected {
		d.vars = append(d.vars, v)
	}
	slices.Sort(d.vars)
	d.info.Attrs = datasetAttrs(d.plots[0].hdr)
	o.rankFiles(d.plots)
	ok = true
	return d, nil
}

// assignSteps orders the plotfiles by step: the level-0 step of each Header,
// or, when those repeat, the number ending the directory name (plt00100).
func assignSteps(ps []*plotfile) error {
	steps := map[int64]bool{}
	for _, p := range ps {
		p.step = p.hdr.LevelSteps[0]
		steps[p.step] = true
	}
	if len(steps) < len(ps) {
		steps = map[int64]bool{}
		for _, p := range ps {
			n, err := trailingNumber(p.dir)
			if err != nil || steps[n] {
				return fmt.Errorf("amrex: %s: plotfiles with the same step %d and no distinct step number in their names: %w",
					path.Join(p.dir, "Header"), p.step, catalog.ErrUnsupported)
			}
			p.step = n
			steps[n] = true
		}
	}
	slices.SortFunc(ps, func(a, b *plotfile) int { return cmp.Compare(a.step, b.step) })
	return nil
}

func trailingNumber(name string) (int64, error) {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	return strconv.ParseInt(name[i:], 10, 64)
}

func datasetAttrs(h *Header) []catalog.Attr {
	return []catalog.Attr{
		{Name: "coord_sys", Type: "int64", Scalar: true, Ints: []int64{h.CoordSys}},
		{Name: "dim", Type: "int64", Scalar: true, Ints: []int64{int64(h.Dim)}},
		{Name: "finest_level", Type: "int64", Scalar: true, Ints: []int64{int64(h.Finest)}},
		{Name: "prob_hi", Type: "float64", Floats: h.ProbHi},
		{Name: "prob_lo", Type: "float64", Floats: h.ProbLo},
		{Name: "variables", Type: "string", Strings: h.Vars},
		{Name: "version", Type: "string", Scalar: true, Strings: []string{h.Version}},
	}
}

// opener reads metadata below the root, refusing paths that leave it.
type opener struct {
	root  string // as given
	files *blockio.Files
	sized map[string]int64 // data files checked so far, with their sizes
	how   []*level         // levels written one file per rank (how = 0)
}

// inside checks that rel (slash-separated, relative to the root) stays below
// the root by name: metadata may not name ".." or absolute paths. Symlinks
// below the root are followed wherever they point when they resolve to a
// regular file (the one symlink policy, README; blockio.Open refuses the
// rest). what names the metadata the path came from.
func (o *opener) inside(rel, what string) error {
	file, at, _ := strings.Cut(what, ": ") // "Header: line 7: level 1"
	if at != "" {
		at += ": "
	}
	if rel == "" || path.IsAbs(rel) || filepath.IsAbs(rel) {
		return catalog.Corrupt("amrex", file, -1, "%spath %q is not relative to the dataset directory", at, rel)
	}
	clean := path.Clean(rel)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return catalog.Corrupt("amrex", file, -1, "%spath %q leaves the dataset directory", at, rel)
	}
	return nil
}

func (o *opener) readText(rel, what string) ([]byte, error) {
	if err := o.inside(rel, what); err != nil {
		return nil, err
	}
	size, err := o.files.Size(context.Background(), rel)
	if errors.Is(err, catalog.ErrNotFound) {
		return nil, fmt.Errorf("amrex: %s: %s: %w", what, path.Clean(rel), catalog.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("amrex: %s: %w", what, err)
	}
	if size > maxText {
		return nil, fmt.Errorf("amrex: %s: %d bytes, more than the %d a header may have: %w", rel, size, maxText, catalog.ErrUnsupported)
	}
	return o.files.ReadAt(context.Background(), rel, 0, size)
}

// plotfile reads one plotfile's Header and levels.
func (o *opener) plotfile(dir string) (*plotfile, []string, error) {
	hname := path.Join(dir, "Header")
	b, err := o.readText(hname, "plotfile")
	if err != nil {
		return nil, nil, err
	}
	h, err := ParseHeader(hname, b)
	if err != nil {
		return nil, nil, err
	}
	p := &plotfile{dir: dir, hdr: h, comp: map[string]int{}}
	for i, v := range h.Vars {
		p.comp[v] = i
	}
	var skipped []string
	if h.TrailingLine > 0 {
		skipped = append(skipped, fmt.Sprintf("%s: line %d: text after the block of level %d (the finest level) ignored", hname, h.TrailingLine, h.Finest))
	}
	levelDirs := map[string]bool{}
	for l := range h.Levels {
		lv, err := o.level(p, l)
		if err != nil {
			return nil, nil, err
		}
		p.levels = append(p.levels, lv)
		levelDirs[strings.SplitN(path.Clean(h.Levels[l].Prefix), "/", 2)[0]] = true
	}
	des, err := os.ReadDir(filepath.Join(o.root, filepath.FromSlash(dir)))
	if err != nil {
		return nil, nil, fmt.Errorf("amrex: %w", err)
	}
	for _, de := range des {
		if !de.IsDir() || levelDirs[de.Name()] {
			continue
		}
		sub := path.Join(dir, de.Name())
		if _, err := os.Stat(filepath.Join(o.root, filepath.FromSlash(sub), "Header")); err == nil {
			skipped = append(skipped, sub+": particle container (particles are not supported)")
		} else {
			skipped = append(skipped, sub+": directory not referenced by the Header")
		}
	}
	return p, skipped, nil
}

// level reads Level_<l>/Cell_H and the FAB headers it points to.
func (o *opener) level(p *plotfile, l int) (*level, error) {
	h := p.hdr
	hl := h.Levels[l]
	hname := path.Join(p.dir, "Header")
	where := fmt.Sprintf("%s: line %d: level %d", hname, hl.Line, l)
	prefix := path.Join(p.dir, hl.Prefix)
	cname := prefix + "_H"
	b, err := o.readText(cname, where)
	if err != nil {
		return nil, err
	}
	c, err := ParseCellH(cname, b, h.Dim)
	if err != nil {
		return nil, err
	}
	if c.NComp != len(h.Vars) {
		return nil, catalog.Corrupt("amrex", cname, -1, "%d components, %s names %d variables", c.NComp, hname, len(h.Vars))
	}
	if len(c.Boxes) != hl.NGrids {
		return nil, catalog.Corrupt("amrex", cname, -1, "%d boxes, %s says level %d has %d", len(c.Boxes), hname, l, hl.NGrids)
	}
	lv := &level{cellH: cname}
	if slices.ContainsFunc(c.NGhost, func(g int64) bool { return g != 0 }) {
		lv.ghost = c.NGhost
	}

	// Every level's array spans its level's domain, the level-0 domain
	// refined by the cumulative ratio (the openPMD mesh-refinement
	// extension: a refined level covers the previous level's extent and is
	// sparse where no box is); every box must lie in it.
	dom := h.Domains[l]
	d := h.Dim
	if l > 0 {
		// The domain must be the coarser one refined: by the Header's
		// ratio along x (the only component it records), by a whole
		// ratio along the others (AMReX allows anisotropic ones).
		prev := h.Domains[l-1]
		lv.ratio = make([]int64, d)
		for k := 0; k < d; k++ {
			ext, pext := dom.Hi[k]-dom.Lo[k]+1, prev.Hi[k]-prev.Lo[k]+1
			r := ext / max(pext, 1)
			if pext < 1 || r < 1 || ext != r*pext || dom.Lo[k] != prev.Lo[k]*r || (k == 0 && r != h.RefRatio[l-1]) {
				return nil, catalog.Corrupt("amrex", hname, -1, "level %d domain %v is not level %d's %v refined by the ratio %d",
					l, dom, l-1, prev, h.RefRatio[l-1])
			}
			lv.ratio[k] = r
		}
	}
	for i, bx := range c.Boxes {
		if !slices.Equal(bx.Type, c.Boxes[0].Type) {
			return nil, catalog.Corrupt("amrex", cname, -1, "line %d: box %v has another index type than box 0", c.BoxLine[i], bx)
		}
		for k := 0; k < d; k++ {
			if bx.Lo[k] < dom.Lo[k] || bx.Hi[k] > dom.Hi[k]+bx.Type[k] {
				return nil, catalog.Corrupt("amrex", cname, -1, "line %d: box %v outside the level %d domain %v", c.BoxLine[i], bx, l, dom)
			}
		}
	}
	bbLo, bbHi := slices.Clone(dom.Lo), slices.Clone(dom.Hi)
	if len(c.Boxes) > 0 {
		for k := 0; k < d; k++ {
			bbHi[k] += c.Boxes[0].Type[k]
		}
	}
	lv.offset = bbLo
	lv.shape = make([]int64, d)
	for k := range lv.shape {
		lv.shape[k] = bbHi[k] - bbLo[k] + 1
	}
	if _, ok := product(lv.shape); !ok {
		return nil, catalog.Corrupt("amrex", cname, -1, "level %d extent %v overflows", l, lv.shape)
	}

	levelDir := path.Dir(prefix)
	for i, bx := range c.Boxes {
		fd := c.Fabs[i]
		at := fmt.Sprintf("%s: line %d", cname, fd.Line)
		if strings.ContainsAny(fd.File, `/\`) {
			return nil, catalog.Corrupt("amrex", cname, -1, "line %d: FabOnDisk file %q is not a file name in the level directory", fd.Line, fd.File)
		}
		file := path.Join(levelDir, fd.File)
		size, err := o.dataFile(file, at)
		if err != nil {
			return nil, err
		}
		if fd.Offset >= size {
			return nil, catalog.Corrupt("amrex", cname, -1, "line %d: FabOnDisk offset %d past the end of %s (%d bytes)", fd.Line, fd.Offset, file, size)
		}
		stored := make([]int64, d)
		for k := range stored {
			stored[k] = bx.Hi[k] - bx.Lo[k] + 1 + 2*c.NGhost[k]
		}
		npts, ok := product(stored)
		if !ok {
			return nil, catalog.Corrupt("amrex", cname, -1, "line %d: box %v extent overflows", fd.Line, bx)
		}
		var dt catalog.DType
		data := fd.Offset
		if c.Version == 1 {
			fh, err := o.fabHeader(file, fd.Offset, size, d)
			if err != nil {
				return nil, err
			}
			want := box{Lo: make([]int64, d), Hi: make([]int64, d), Type: bx.Type}
			for k := 0; k < d; k++ {
				want.Lo[k], want.Hi[k] = bx.Lo[k]-c.NGhost[k], bx.Hi[k]+c.NGhost[k]
			}
			if !slices.Equal(fh.Box.Lo, want.Lo) || !slices.Equal(fh.Box.Hi, want.Hi) || !slices.Equal(fh.Box.Type, want.Type) || fh.NComp != c.NComp {
				return nil, catalog.Corrupt("amrex", file, fd.Offset, "FAB box %v with %d components, %s says %v grown by %v with %d", fh.Box, fh.NComp, at, bx, c.NGhost, c.NComp)
			}
			dt, data = fh.Real.DType, fd.Offset+fh.Len
		} else {
			dt = c.Real.DType
		}
		if i == 0 {
			lv.dtype = dt
		} else if dt != lv.dtype {
			return nil, fmt.Errorf("amrex: %s: offset %d: element type %s, other boxes of the level are %s: %w", file, fd.Offset, dt, lv.dtype, catalog.ErrUnsupported)
		}
		total, ok := mul(npts, int64(c.NComp)*int64(dt.Size))
		if !ok || total > size-data {
			return nil, catalog.Corrupt("amrex", file, fd.Offset, "FAB of %d points × %d components of %d bytes past the end of %s (%d bytes; %s)", npts, c.NComp, dt.Size, file, size, at)
		}
		lv.npts = append(lv.npts, npts)
		lv.fabs = append(lv.fabs, fab{file: file, data: data, stored: stored, rank: -1})
		rel := catalog.Box{Lower: make([]int64, d), Count: bx.count()}
		for k := range rel.Lower {
			rel.Lower[k] = bx.Lo[k] - lv.offset[k]
		}
		lv.boxes = append(lv.boxes, rel)
	}
	if c.How == 0 {
		o.how = append(o.how, lv)
	}
	return lv, nil
}

// rankFiles sets block ranks from Cell_D file numbers where those are ranks:
// files written one per rank (how = 0), or NFiles output with fewer files
// than AMReX's default cap of 256 (then files = ranks, unless the user lowered
// vismf.nfiles below the rank count, which relayout cannot tell).
func (o *opener) rankFiles(ps []*plotfile) {
	maxNum := int64(-1)
	nums := map[string]int64{}
	for _, p := range ps {
		for _, lv := range p.levels {
			for _, f := range lv.fabs {
				n, err := trailingNumber(f.file)
				if err != nil {
					n = math.MaxInt64
				}
				nums[f.file] = n
				maxNum = max(maxNum, n)
			}
		}
	}
	perRank := map[*level]bool{}
	for _, lv := range o.how {
		perRank[lv] = true
	}
	for _, p := range ps {
		for _, lv := range p.levels {
			if !perRank[lv] && maxNum >= 255 {
				continue
			}
			for i := range lv.fabs {
				if n := nums[lv.fabs[i].file]; n <= math.MaxInt32 {
					lv.fabs[i].rank = int(n)
				}
			}
		}
	}
}

// dataFile checks a Cell_D file once and returns its size.
func (o *opener) dataFile(file, at string) (int64, error) {
	if size, ok := o.sized[file]; ok {
		return size, nil
	}
	if err := o.inside(file, at); err != nil {
		return 0, err
	}
	size, err := o.files.Size(context.Background(), file)
	if err != nil {
		if errors.Is(err, catalog.ErrNotFound) {
			return 0, fmt.Errorf("amrex: %s: data file %s: %w", at, file, catalog.ErrNotFound)
		}
		return 0, fmt.Errorf("amrex: %s: data file %s: %w", at, file, err)
	}
	o.sized[file] = size
	return size, nil
}

func (o *opener) fabHeader(file string, off, size int64, d int) (FabHeader, error) {
	n := min(int64(maxFabHeader), size-off)
	b, err := o.files.ReadAt(context.Background(), file, off, n)
	if err != nil {
		return FabHeader{}, err
	}
	return ParseFabHeader(file, off, b, d)
}

// product multiplies non-negative extents, reporting overflow.
func product(v []int64) (int64, bool) {
	n := int64(1)
	for _, x := range v {
		var ok bool
		if n, ok = mul(n, x); !ok {
			return 0, false
		}
	}
	return n, true
}

func mul(a, b int64) (int64, bool) {
	if a < 0 || b < 0 || (a > 0 && b > math.MaxInt64/a) {
		return 0, false
	}
	return a * b, true
}

// Info describes the input; Skipped lists particle containers and other
// directories not catalogued.
func (d *Dataset) Info() catalog.DatasetInfo { return d.info }

// Scan emits one array per (variable, step, level), ordered by variable name,
// then step and level, each with one block per box.
func (d *Dataset) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	for _, v := range d.vars {
		for _, p := range d.plots {
			c, ok := p.comp[v]
			if !ok {
				continue
			}
			for l, lv := range p.levels {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := emit(p.array(v, c, l, lv)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// NaN fill values in both byte orders.
func nanFill(dt catalog.DType) []byte {
	b := make([]byte, dt.Size)
	if dt.Size == 4 {
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(math.NaN())))
		if dt.BigEndian {
			binary.BigEndian.PutUint32(b, math.Float32bits(float32(math.NaN())))
		}
		return b
	}
	binary.LittleEndian.PutUint64(b, math.Float64bits(math.NaN()))
	if dt.BigEndian {
		binary.BigEndian.PutUint64(b, math.Float64bits(math.NaN()))
	}
	return b
}

func (p *plotfile) array(v string, c, l int, lv *level) *catalog.Array {
	h := p.hdr
	es := int64(lv.dtype.Size)
	a := &catalog.Array{
		Var: v, Step: p.step, Level: l, DType: lv.dtype,
		Shape: slices.Clone(lv.shape), Offset: slices.Clone(lv.offset),
		Fill:   nanFill(lv.dtype),
		Source: lv.cellH + ":" + v,
		Boxes:  make([]catalog.Box, len(lv.boxes)),
		Blocks: make([]catalog.Block, len(lv.fabs)),
	}
	ratio := catalog.Attr{Name: "ref_ratio", Type: "int64", Scalar: true, Ints: []int64{1}}
	if l > 0 {
		ratio.Ints = []int64{h.RefRatio[l-1]}
		if slices.ContainsFunc(lv.ratio, func(r int64) bool { return r != h.RefRatio[l-1] }) {
			ratio.Scalar, ratio.Ints = false, slices.Clone(lv.ratio) // anisotropic: one per axis
		}
	}
	a.Attrs = []catalog.Attr{
		{Name: "dx", Type: "float64", Floats: slices.Clone(h.CellSize[l])},
		{Name: "level_step", Type: "int64", Scalar: true, Ints: []int64{h.Levels[l].Step}},
		{Name: "prob_hi", Type: "float64", Floats: slices.Clone(h.ProbHi)},
		{Name: "prob_lo", Type: "float64", Floats: slices.Clone(h.ProbLo)},
		ratio,
		{Name: "time", Type: "float64", Scalar: true, Floats: []float64{h.Levels[l].Time}},
	}
	for i, f := range lv.fabs {
		bx := lv.boxes[i]
		a.Boxes[i] = catalog.Box{Lower: slices.Clone(bx.Lower), Count: slices.Clone(bx.Count)}
		blk := catalog.Block{
			Box:    catalog.Box{Lower: slices.Clone(bx.Lower), Count: slices.Clone(bx.Count)},
			File:   f.file,
			Offset: f.data + int64(c)*lv.npts[i]*es,
			Length: lv.npts[i] * es,
			Order:  catalog.ColMajor,
			Rank:   int32(f.rank),
		}
		if lv.ghost != nil {
			blk = blk.WithStored(slices.Clone(f.stored), slices.Clone(lv.ghost))
		}
		a.Blocks[i] = blk
	}
	return a
}
