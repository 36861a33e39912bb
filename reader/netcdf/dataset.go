package netcdf

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
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

// FormatName is the DatasetInfo.Format of a classic file or stream.
const FormatName = "netcdf-classic"

// Dataset is one classic file, or a stream of history files whose record
// dimension runs across them. It implements reader.Dataset.
type Dataset struct {
	info    catalog.DatasetInfo
	members []*member // in time order
	vars    []string  // selected numeric variables, sorted
	zeroed  map[string]bool
	records int64 // records over all members
	*source
}

// member is one file of the dataset.
type member struct {
	name string // relative to the root, slash-separated
	size int64
	hdr  *Header
	vars map[string]int // variable name -> index in hdr.Vars
	rec0 int64          // global index of its first record
	// The record coordinate's values, one per record (numeric or text);
	// nil when the file has none.
	nums  []float64
	texts []string
	coord string // the record coordinate variable, "" when none
	// partial is the element the file's end cuts (hdr.Tail): its bytes in
	// the file followed by zeros, as netCDF-C reads it; nil when the file
	// ends between elements.
	partial []byte
	// nc4 is set for a netCDF-4 member (netcdf4.go): hdr is its netCDF
	// model, without offsets; its bytes are its HDF5 chunks.
	nc4 *netcdf4
}

// OpenFile opens one classic file; blocks name it relative to its folder.
func OpenFile(p string, cfg Config) (*Dataset, error) {
	d, err := Open(filepath.Dir(p), []string{filepath.Base(p)}, cfg, nil)
	if err != nil {
		return nil, err
	}
	d.info.Path = p
	return d, nil
}

// Open opens the classic files named (relative to root) as one dataset: a
// single file, or a stream of history files ordered by their record
// coordinate (stream.go). Members that are netCDF-4 files are described by
// open4 (netcdf4.go; nil: refused as not classic). Every header is read and
// checked here, and the few bytes of record coordinates the ordering needs;
// Scan does no I/O.
func Open(root string, files []string, cfg Config, open4 NetCDF4Opener) (*Dataset, error) {
	if len(files) == 0 {
		return nil, fmt.Errorf("netcdf: %s: no file given: %w", root, catalog.ErrNotFound)
	}
	var ms []*member
	defer func() {
		for _, m := range ms {
			if m.nc4 != nil {
				m.nc4.f.Close() // needed here only: its blocks are read through blockio
			}
		}
	}()
	for _, f := range files {
		m, err := openMember(root, filepath.ToSlash(f), open4, cfg.Match)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	if err := orderStream(ms); err != nil {
		return nil, err
	}
	if err := sameFixed(root, ms); err != nil {
		return nil, err
	}
	d := &Dataset{
		info:    catalog.DatasetInfo{Path: root, Root: root, Format: FormatName},
		members: ms,
		zeroed:  map[string]bool{},
	}
	for _, m := range ms {
		m.rec0 = d.records
		d.records += m.hdr.NumRecs
	}
	first := ms[0]
	for i := range first.hdr.Attrs {
		d.info.Attrs = append(d.info.Attrs, first.hdr.Attrs[i].CatalogAttr())
	}
	d.info.Span = DateSpan(first.name, ms[len(ms)-1].name)
	if h := first.hdr; h.RecDim >= 0 {
		d.info.Unlimited = []string{h.Dims[h.RecDim].Name} // the dimension the members are joined along
	}
	for i := range first.hdr.Vars {
		v := &first.hdr.Vars[i]
		if !cfg.Selects(v.Name) {
			continue
		}
		d.vars = append(d.vars, v.Name)
	}
	slices.Sort(d.vars)
	for k, m := range ms {
		t := m.hdr.Tail
		if t == nil {
			continue
		}
		v := &m.hdr.Vars[t.Var]
		if !v.Record && k > 0 || !cfg.Selects(v.Name) {
			continue // fixed variables come from the first member
		}
		es := v.Type.Size()
		in := t.InFile / es
		where := "its data"
		if t.Record >= 0 {
			where = fmt.Sprintf("the file's record %d", t.Record)
		}
		d.info.Skipped = append(d.info.Skipped, fmt.Sprintf(
			"%s: variable %s (%s): elements %d to %d of %s (bytes %d to %d) lie past the end of the file (%d bytes): read as zeros, as netCDF-C does (a writer with NC_NOFILL left them unwritten)",
			m.name, v.Name, m.hdr.Format(), in, t.Slab/es-1, where, t.Start+t.InFile, t.Start+t.Slab-1, m.size))
		d.zeroed[v.Name] = true
	}
	for _, name := range d.vars {
		dt, fill := d.arrayType(name)
		for _, m := range ms {
			if m.nc4 == nil || !m.hdr.Vars[m.vars[name]].Record && m != first {
				continue // fixed variables come from the first member
			}
			if err := netcdf4Holes(first, m, name, dt, fill); err != nil {
				return nil, err
			}
		}
	}
	d.source = blockio.NewSource(blockio.NewFiles(root, cfg.MaxOpenFiles))
	return d, nil
}

// hdf5Magic starts an HDF5 file (a netCDF-4 file's superblock is at 0).
const hdf5Magic = "\x89HDF\r\n\x1a\n"

// openMember reads one file's header and its record coordinate: a classic
// file's, or a netCDF-4 file's as open4 describes it (match selects the
// variables whose blocks it lists).
func openMember(root, name string, open4 NetCDF4Opener, match func(string) bool) (*member, error) {
	f, size, err := fileio.Open(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil {
		return nil, fmt.Errorf("netcdf: %w", err)
	}
	defer f.Close()
	var magic [8]byte
	if n, _ := f.ReadAt(magic[:], 0); n == len(magic) && string(magic[:]) == hdf5Magic && open4 != nil {
		nf, err := open4(root, name, match)
		if err != nil {
			return nil, err
		}
		m, err := netcdf4Member(name, size, nf)
		if err == nil {
			err = m.readCoord(nil)
		}
		if err != nil {
			nf.Close()
			return nil, err
		}
		return m, nil
	}
	h, err := ParseHeader(f, size, name)
	if err != nil {
		return nil, err
	}
	m := &member{name: name, size: size, hdr: h, vars: make(map[string]int, len(h.Vars))}
	for i := range h.Vars {
		m.vars[h.Vars[i].Name] = i
	}
	if t := h.Tail; t != nil {
		es := h.Vars[t.Var].Type.Size()
		if k := t.InFile % es; k != 0 {
			m.partial = make([]byte, es)
			if _, err := f.ReadAt(m.partial[:k], t.Start+t.InFile-k); err != nil {
				return nil, fmt.Errorf("netcdf: %s: offset %d: %w", name, t.Start+t.InFile-k, err)
			}
		}
	}
	if err := m.readCoord(f); err != nil {
		return nil, err
	}
	return m, nil
}

// Info describes the input; Skipped lists the never-written tails read as
// zeros.
func (d *Dataset) Info() catalog.DatasetInfo { return d.info }

// Members lists the files in time order, relative to the root.
func (d *Dataset) Members() []string {
	out := make([]string, len(d.members))
	for i, m := range d.members {
		out[i] = m.name
	}
	return out
}

// Scan emits one array per selected variable, by name.
func (d *Dataset) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	for _, name := range d.vars {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := emit(d.array(name)); err != nil {
			return err
		}
	}
	return nil
}

// arrayType is the element type of variable name's array, and its fill
// value in that type: big-endian when a member is a classic file (only
// netCDF-4 blocks then take a byteswap stage: a classic file's slabs,
// inline tails included, stay as stored), else in the byte order the first
// member stores the variable in; zeros where a classic member's end cuts
// the variable (holes read as netCDF-C reads them).
func (d *Dataset) arrayType(name string) (catalog.DType, []byte) {
	first := d.members[0]
	v := &first.hdr.Vars[first.vars[name]]
	dt, _ := v.Type.DType()
	fill := v.fill()
	classic := slices.ContainsFunc(d.members, func(m *member) bool { return m.nc4 == nil })
	if !classic && dt.Size > 1 && !first.nc4.vars[name].DType.BigEndian {
		dt.BigEndian = false
		slices.Reverse(fill)
	}
	if d.zeroed[name] {
		fill = make([]byte, dt.Size)
	}
	return dt, fill
}

func (d *Dataset) array(name string) *catalog.Array {
	first := d.members[0]
	v := &first.hdr.Vars[first.vars[name]]
	dt, fill := d.arrayType(name)
	a := &catalog.Array{
		Var: name, DType: dt,
		Shape:  slices.Clone(v.Shape),
		Offset: make([]int64, len(v.Shape)),
		Fill:   fill,
		Source: fmt.Sprintf("%s (%s):%s", first.name, first.format(), name),
	}
	for i := range v.Attrs {
		a.Attrs = append(a.Attrs, v.Attrs[i].CatalogAttr())
	}
	if len(v.DimIDs) > 0 {
		a.Dims = make([]string, len(v.DimIDs))
		for k, id := range v.DimIDs {
			a.Dims[k] = first.hdr.Dims[id].Name
		}
	}
	if !v.Record {
		if first.nc4 != nil {
			a.Blocks = first.netcdf4Blocks(name, dt, nil)
			return a
		}
		a.Blocks = slabBlocks(first, v, -1, v.Begin, nil)
		return a
	}
	a.Shape[0] = d.records
	if len(d.members) > 1 {
		a.Source = fmt.Sprintf("%s ... %s (%d files, %s):%s", first.name, d.members[len(d.members)-1].name, len(d.members), d.formats(), name)
	}
	for _, m := range d.members {
		if m.nc4 != nil {
			a.Blocks = m.netcdf4Blocks(name, dt, a.Blocks)
			continue
		}
		mv := &m.hdr.Vars[m.vars[name]]
		for r := int64(0); r < m.hdr.NumRecs; r++ {
			a.Blocks = slabBlocks(m, mv, r, mv.Begin+r*m.hdr.RecSize, a.Blocks)
		}
	}
	return a
}

// slabBlocks appends the blocks of one slab at off: variable v's whole data
// (rec < 0) or its record rec of member m. A slab the file holds whole is
// one block; one cut by the end of the file is split into at most rank
// row-major boxes covering its elements in the file, the rest left as holes.
func slabBlocks(m *member, v *Var, rec, off int64, out []catalog.Block) []catalog.Block {
	es := v.Type.Size()
	shape := v.Shape
	if v.Record {
		shape = shape[1:]
	}
	mk := func(lower, count []int64, start int64) catalog.Block {
		if v.Record {
			lower = append([]int64{m.rec0 + rec}, lower...)
			count = append([]int64{1}, count...)
		}
		n := catalog.Box{Count: count}.Elements()
		return catalog.Block{
			Box:    catalog.Box{Lower: lower, Count: count},
			File:   m.name,
			Offset: off + start*es,
			Length: n * es,
			Order:  catalog.RowMajor,
			Rank:   -1,
		}
	}
	t := m.hdr.Tail
	if t == nil || &m.hdr.Vars[t.Var] != v || t.Record != rec {
		return append(out, mk(make([]int64, len(shape)), slices.Clone(shape), 0))
	}
	n := t.InFile / es
	for _, p := range prefixBoxes(shape, n) {
		out = append(out, mk(p.Lower, p.Count, p.start))
	}
	if m.partial != nil {
		// The element cut by the end of the file: its bytes in the file,
		// then zeros, held inline.
		idx := make([]int64, len(shape))
		for k, rest := len(shape)-1, n; k >= 0; k-- {
			idx[k], rest = rest%shape[k], rest/shape[k]
		}
		ones := make([]int64, len(shape))
		for k := range ones {
			ones[k] = 1
		}
		b := mk(idx, ones, n).WithInline(slices.Clone(m.partial))
		b.File = ""
		out = append(out, b)
	}
	return out
}

type prefixBox struct {
	catalog.Box
	start int64 // row-major index of Lower
}

// prefixBoxes covers the first n elements (row-major) of shape with at most
// len(shape) boxes: whole rows along axis 0, then along axis 1 within the
// next row, and so on (a staircase).
func prefixBoxes(shape []int64, n int64) []prefixBox {
	var out []prefixBox
	if len(shape) == 0 {
		if n > 0 {
			out = append(out, prefixBox{Box: catalog.Box{Lower: []int64{}, Count: []int64{}}})
		}
		return out
	}
	lower := make([]int64, len(shape))
	start := int64(0)
	for k := range shape {
		stride := catalog.Box{Count: shape[k+1:]}.Elements()
		q := n / stride
		if q > 0 {
			count := make([]int64, len(shape))
			for i := range count {
				switch {
				case i < k:
					count[i] = 1
				case i == k:
					count[i] = q
				default:
					count[i] = shape[i]
				}
			}
			out = append(out, prefixBox{Box: catalog.Box{Lower: slices.Clone(lower), Count: count}, start: start})
		}
		lower[k] += q
		start += q * stride
		n -= q * stride
		if n == 0 {
			break
		}
	}
	return out
}

// formats names the members' formats: "CDF-2", "CDF-2 and netCDF-4".
func (d *Dataset) formats() string {
	var fs []string
	for _, m := range d.members {
		if f := m.format(); !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	slices.Sort(fs)
	return strings.Join(fs, " and ")
}

// SetPath sets DatasetInfo.Path, the input as the user gave it (a folder, a
// glob pattern).
func (d *Dataset) SetPath(p string) { d.info.Path = p }
