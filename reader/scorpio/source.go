package scorpio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/reader/netcdf"
)

// The catalog of a SCORPIO dataset (what relayout rewrites): every netCDF
// variable one array, named by the variable, with its dimensions' names
// (catalog.Array.Dims), its attributes and netCDF's fill value, of format
// FormatName, so that the rewriter writes it as netCDF time series like a
// classic history file's. Its blocks are not the BP blocks but what they
// stand for:
//
//	darray, frame f   one block [f, 0...] + [1, dims...] (a variable without
//	                  the record dimension: its whole shape), codec
//	                  DarrayCodec {Dataset: variable, Params: [write]}: the
//	                  write's data blocks of every I/O group read, placed
//	                  by the decomposition's plan, holes filled (ReadWrite);
//	                  Length: the data blocks' stored bytes. A frame
//	                  written twice keeps its last write (SCORPIO's order).
//	put_var call      one block [start] + [count], codec BlobCodec
//	                  {Dataset: variable, Params: [blob]}: its values.
//
// Frames no write reaches are holes (the fill value). ReadBlock decodes
// these codecs, and only these: the dataset's source is its own.

// FormatName is the catalog format of a SCORPIO dataset; it starts with
// "netcdf", which gives it the netCDF time-series output.
const FormatName = "netcdf-scorpio"

// Codec names of the blocks Scan emits.
const (
	DarrayCodec = "scorpio-darray"
	BlobCodec   = "scorpio-put-var"
)

// Config selects what Scan catalogues: Match (nil: everything) is given
// each variable's name.
type Config struct {
	Match func(name string) bool
}

// Stream is what relayout reads of SCORPIO output: the datasets of one
// history stream (a glob such as 'case.eam.h0.*.nc.bp', a folder of them,
// or one dataset), ordered by their record coordinate, as one netCDF
// dataset whose record dimension runs across them (a reader.Dataset).
type Stream struct {
	info     catalog.DatasetInfo
	members  []*member       // in time order
	selected map[string]bool // Config.Match of each variable, asked once at open
}

// member is one dataset of a stream.
type member struct {
	name  string // the NAME.nc.bp directory, relative to the stream's root
	d     *Dataset
	rec0  int64     // the stream's record index of its first frame
	times []float64 // its record coordinate's values, nil when it has none
}

// OpenStream opens the SCORPIO datasets names (NAME.nc.bp directories or
// NAME.nc links, relative to root) as one stream: every dataset must define
// the same variables (names, types, dimensions, the fixed dimensions'
// lengths), and their records, ordered by the record coordinate (the
// variable named like the record dimension) where there is one, else by
// name, must not overlap in time.
func OpenStream(root string, names []string, cfg Config) (*Stream, error) {
	s := &Stream{selected: map[string]bool{}}
	for _, n := range names {
		d, err := Open(filepath.Join(root, n))
		if err != nil {
			s.Close()
			return nil, err
		}
		rel, err := filepath.Rel(root, d.Path)
		if err != nil {
			rel = d.Path
		}
		m := &member{name: rel, d: d}
		s.members = append(s.members, m)
		if m.times, err = recordTimes(d); err != nil {
			s.Close()
			return nil, err
		}
	}
	if err := s.order(); err != nil {
		s.Close()
		return nil, err
	}
	first, last := s.members[0], s.members[len(s.members)-1]
	for _, v := range first.d.vars {
		s.selected[v.Name] = cfg.Match == nil || cfg.Match(v.Name)
	}
	s.info = catalog.DatasetInfo{Path: root, Root: root, Format: FormatName, Attrs: slices.Clone(first.d.Attrs),
		Span: netcdf.DateSpan(strings.TrimSuffix(first.name, ".bp"), strings.TrimSuffix(last.name, ".bp"))}
	for _, dim := range first.d.Dims {
		if dim.Record {
			s.info.Unlimited = append(s.info.Unlimited, dim.Name) // the dimension the members are joined along
		}
	}
	// Writes superseded by a later write of the same frame are not read:
	// said, not dropped in silence.
	for _, m := range s.members {
		for _, v := range m.d.vars {
			if !s.selected[v.Name] {
				continue
			}
			s.info.Skipped = append(s.info.Skipped, superseded(m.name, v)...)
		}
	}
	return s, nil
}

// superseded names the frames of v (of member name) written more than once:
// the last write is read, the earlier ones are not.
func superseded(name string, v *Var) []string {
	n := map[int64]int{}
	for _, w := range v.Writes {
		n[w.Frame]++
	}
	var out []string
	for _, f := range slices.Sorted(maps.Keys(n)) {
		if n[f] > 1 {
			out = append(out, fmt.Sprintf("%s: %s frame %d written %d times: the earlier writes superseded by the last (SCORPIO's order)", name, v.Name, f, n[f]))
		}
	}
	return out
}

// recordTimes is the values of d's record coordinate (the put_var variable
// named like its record dimension), by frame; nil when it has none.
func recordTimes(d *Dataset) ([]float64, error) {
	var rec *Dim
	for i := range d.Dims {
		if d.Dims[i].Record {
			rec = &d.Dims[i]
		}
	}
	if rec == nil {
		return nil, nil
	}
	v := d.Var(rec.Name)
	if v == nil || v.Kind != PutVar || len(v.Dims) != 1 || v.Type.Kind != catalog.Float && v.Type.Kind != catalog.Int && v.Type.Kind != catalog.Uint {
		return nil, nil
	}
	times := make([]float64, rec.Len)
	seen := make([]bool, rec.Len)
	for i := range v.Blobs {
		start, count, data, err := d.ReadBlob(context.Background(), v, &v.Blobs[i])
		if err != nil {
			return nil, err
		}
		for k := int64(0); k < count[0]; k++ {
			times[start[0]+k] = number(v.Type, data[k*int64(v.Type.Size):], d.bo)
			seen[start[0]+k] = true
		}
	}
	if slices.Contains(seen, false) {
		return nil, nil // frames without a time: the names' order stands
	}
	return times, nil
}

// number is the value of one element of type dt.
func number(dt catalog.DType, b []byte, bo binary.ByteOrder) float64 {
	switch {
	case dt.Kind == catalog.Float && dt.Size == 4:
		return float64(math.Float32frombits(bo.Uint32(b)))
	case dt.Kind == catalog.Float:
		return math.Float64frombits(bo.Uint64(b))
	case dt.Kind == catalog.Int:
		return float64(decodeInts(b[:dt.Size], dt, bo)[0])
	}
	return float64(uint64(decodeInts(b[:dt.Size], dt, bo)[0]))
}

// order sorts the members by name, then by their first time, checks that
// they define the same variables and that their records do not overlap,
// and numbers their records.
func (s *Stream) order() error {
	slices.SortFunc(s.members, func(a, b *member) int { return strings.Compare(a.name, b.name) })
	first := s.members[0]
	for _, m := range s.members[1:] {
		if err := sameVars(first, m); err != nil {
			return err
		}
	}
	timed := !slices.ContainsFunc(s.members, func(m *member) bool { return m.times == nil })
	if timed {
		slices.SortStableFunc(s.members, func(a, b *member) int {
			switch {
			case len(a.times) == 0 || len(b.times) == 0:
				return len(b.times) - len(a.times) // files without records last
			case a.times[0] < b.times[0]:
				return -1
			case a.times[0] > b.times[0]:
				return 1
			}
			return 0
		})
	}
	var rec int64
	var prev *member
	for _, m := range s.members {
		m.rec0 = rec
		rec += m.d.records()
		if !timed || len(m.times) == 0 {
			continue
		}
		for k := 1; k < len(m.times); k++ {
			if m.times[k] <= m.times[k-1] {
				return fmt.Errorf("scorpio: %s: its record coordinate is not increasing (%g after %g): %w", m.name, m.times[k], m.times[k-1], catalog.ErrUnsupported)
			}
		}
		if prev != nil && prev.times[len(prev.times)-1] >= m.times[0] {
			return fmt.Errorf("scorpio: %s and %s are not one stream of history files: their records overlap in time (%g ends the first, %g starts the second): %w",
				prev.name, m.name, prev.times[len(prev.times)-1], m.times[0], catalog.ErrUnsupported)
		}
		prev = m
	}
	return nil
}

// sameVars refuses members that do not define the same variables.
func sameVars(a, b *member) error {
	diff := func(what string, args ...any) error {
		return fmt.Errorf("scorpio: %s and %s are not one stream of history files: %s: %w", a.name, b.name, fmt.Sprintf(what, args...), catalog.ErrUnsupported)
	}
	if len(a.d.vars) != len(b.d.vars) {
		return diff("%d variables against %d", len(a.d.vars), len(b.d.vars))
	}
	for _, v := range a.d.vars {
		w := b.d.Var(v.Name)
		switch {
		case w == nil:
			return diff("variable %s only in the first", v.Name)
		case w.Type != v.Type || w.NCType != v.NCType:
			return diff("variable %s of type %d against %d", v.Name, v.NCType, w.NCType)
		case !slices.Equal(w.Dims, v.Dims):
			return diff("variable %s over %v against %v", v.Name, v.Dims, w.Dims)
		case v.Record() != w.Record():
			return diff("variable %s a record variable in one only", v.Name)
		}
		fixed := v.Shape
		if v.Record() {
			fixed = fixed[1:]
		}
		if !slices.Equal(fixed, w.Shape[len(w.Shape)-len(fixed):]) {
			return diff("variable %s of shape %v against %v", v.Name, v.Shape, w.Shape)
		}
	}
	return nil
}

// records is the length of d's record dimension (0: none).
func (d *Dataset) records() int64 {
	for _, dim := range d.Dims {
		if dim.Record {
			return dim.Len
		}
	}
	return 0
}

// Info describes the stream for the catalog.
func (s *Stream) Info() catalog.DatasetInfo { return s.info }

// SetPath sets DatasetInfo.Path, the input as the user gave it.
func (s *Stream) SetPath(p string) { s.info.Path = p }

// Members lists the datasets in time order, relative to the root.
func (s *Stream) Members() []string {
	out := make([]string, len(s.members))
	for i, m := range s.members {
		out[i] = m.name
	}
	return out
}

// Close closes every member's files.
func (s *Stream) Close() error {
	var err error
	for _, m := range s.members {
		err = errors.Join(err, m.d.Close())
	}
	return err
}

// Scan emits one array per selected variable, by name.
func (s *Stream) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	vars := slices.Clone(s.members[0].d.vars)
	slices.SortFunc(vars, func(a, b *Var) int { return strings.Compare(a.Name, b.Name) })
	for _, v := range vars {
		if !s.selected[v.Name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := s.array(ctx, v)
		if err != nil {
			return err
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	return nil
}

// array is v's catalog array over the stream (see above; v is the first
// member's).
func (s *Stream) array(ctx context.Context, v *Var) (*catalog.Array, error) {
	first := s.members[0]
	a := &catalog.Array{
		Var: v.Name, DType: v.Type,
		Shape:  slices.Clone(v.Shape),
		Offset: make([]int64, len(v.Shape)),
		Dims:   slices.Clone(v.Dims),
		Attrs:  slices.Clone(v.Attrs),
		Fill:   first.d.FillValue(v, nil),
		Source: fmt.Sprintf("%s (SCORPIO %s):%s", first.name, v.Kind, v.Name),
	}
	if len(a.Dims) == 0 {
		a.Dims = nil
	}
	members := s.members[:1] // a fixed variable is the first member's
	if v.Record() {
		members = s.members
		last := s.members[len(s.members)-1]
		a.Shape[0] = last.rec0 + last.d.records()
		if len(s.members) > 1 {
			a.Source = fmt.Sprintf("%s ... %s (%d SCORPIO files):%s", first.name, last.name, len(s.members), v.Name)
		}
	}
	for mi, m := range members {
		var err error
		if a.Blocks, err = m.blocks(ctx, mi, m.d.Var(v.Name), a.Blocks); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// blocks appends the blocks of member mi's variable v (see above).
func (m *member) blocks(ctx context.Context, mi int, v *Var, out []catalog.Block) ([]catalog.Block, error) {
	mk := func(box catalog.Box, codec string, i int, file string, off int64) catalog.Block {
		if v.Record() {
			box.Lower[0] += m.rec0
		}
		return catalog.Block{Box: box, Rank: -1, Order: catalog.RowMajor, File: filepath.Join(m.name, file), Offset: off,
			Codecs: []catalog.Codec{{Name: codec, Dataset: v.Name, Params: []uint32{uint32(mi), uint32(i)}}}}
	}
	switch v.Kind {
	case Darray:
		last := map[int64]int{} // frame -> its last write
		var frames []int64
		for i, w := range v.Writes {
			if _, ok := last[w.Frame]; !ok {
				frames = append(frames, w.Frame)
			}
			last[w.Frame] = i
		}
		slices.Sort(frames)
		for _, f := range frames {
			i := last[f]
			w := &v.Writes[i]
			box := catalog.Box{Lower: make([]int64, len(v.Shape)), Count: slices.Clone(v.Shape)}
			if v.Record() {
				if f < 0 || f >= v.Shape[0] {
					return nil, corrupt("variable %q write %d: frame %d of %d", v.Name, i, f, v.Shape[0])
				}
				box.Lower[0], box.Count[0] = f, 1
			} else if f != -1 {
				return nil, corrupt("variable %q write %d: frame %d for a variable without the record dimension", v.Name, i, f)
			}
			var file string
			var off int64
			if len(w.Blocks) > 0 {
				file, off = w.Blocks[0].File, w.Blocks[0].Offset
			}
			b := mk(box, DarrayCodec, i, file, off)
			for g := range w.Blocks {
				b.Length += w.Blocks[g].Length
			}
			out = append(out, b)
		}
	case PutVar:
		for i := range v.Blobs {
			bl := &v.Blobs[i]
			start, count, _, err := m.d.ReadBlob(ctx, v, bl)
			if err != nil {
				return nil, err
			}
			box := catalog.Box{Lower: start, Count: count}
			if !insideShape(box, v.Shape) {
				return nil, catalog.Corrupt("scorpio", filepath.Join(m.name, bl.Block.File), bl.Block.Offset, "variable %q: put_var start %v count %v outside shape %v", v.Name, start, count, v.Shape)
			}
			if box.Elements() == 0 {
				continue
			}
			b := mk(box, BlobCodec, i, bl.Block.File, bl.Block.Offset)
			b.Length = bl.Block.Length
			out = append(out, b)
		}
	}
	return out, nil
}

func insideShape(b catalog.Box, shape []int64) bool {
	if len(b.Lower) != len(shape) || len(b.Count) != len(shape) {
		return false
	}
	for k := range shape {
		if b.Lower[k] < 0 || b.Count[k] < 0 || b.Lower[k]+b.Count[k] > shape[k] {
			return false
		}
	}
	return true
}

// ReadBlocks implements catalog.Source: each block read on its own (a
// darray write gathers its I/O groups' blocks itself, and scatters them
// straight into the block's destination when it has one).
func (s *Stream) ReadBlocks(ctx context.Context, r catalog.Reads, fn func(i int, data []byte) error) error {
	return catalog.ReadEach(ctx, r, func(b *catalog.Block, dt catalog.DType, dst []byte) ([]byte, error) {
		return s.readBlock(ctx, b, dt, dst, r.Timer)
	}, fn)
}

// readBlock returns the decoded bytes of a block Scan emitted, into dst
// when it is not nil: a darray write placed over its box, or a put_var
// call's values.
func (s *Stream) readBlock(ctx context.Context, b *catalog.Block, dt catalog.DType, dst []byte, timer *int64) ([]byte, error) {
	m, v, i, err := s.blockOf(b)
	if err != nil {
		return nil, err
	}
	d := m.d
	switch b.Codecs[0].Name {
	case DarrayCodec:
		w := &v.Writes[i]
		p, err := d.Plan(ctx, w.Decomp)
		if err != nil {
			return nil, err
		}
		if n := b.Box.Elements(); n != p.Elems {
			return nil, corrupt("variable %q write %d: decomposition %d places %d elements, the variable's %v has %d", v.Name, i, w.Decomp, p.Elems, b.Box.Count, n)
		}
		size := p.Elems * int64(v.Type.Size)
		if dst == nil {
			dst = make([]byte, size)
		} else if int64(len(dst)) != size {
			return nil, corrupt("variable %q write %d: %d bytes placed, %d wanted", v.Name, i, size, len(dst))
		}
		return dst, d.ReadWrite(ctx, v, w, dst, timer)
	default: // BlobCodec
		_, count, data, err := d.ReadBlob(ctx, v, &v.Blobs[i])
		if err != nil {
			return nil, err
		}
		if !slices.Equal(count, b.Box.Count) {
			return nil, catalog.Corrupt("scorpio", b.File, b.Offset, "variable %q: put_var count %v, catalogued %v", v.Name, count, b.Box.Count)
		}
		return data, nil
	}
}

// blockOf resolves a block Scan emitted: its member, its variable and the
// index of its write (DarrayCodec) or put_var call (BlobCodec).
func (s *Stream) blockOf(b *catalog.Block) (*member, *Var, int, error) {
	bad := func(what string, args ...any) error {
		return fmt.Errorf("scorpio: %s: %s: %w", s.info.Path, fmt.Sprintf(what, args...), catalog.ErrCorrupt)
	}
	if len(b.Codecs) != 1 || len(b.Codecs[0].Params) != 2 || int(b.Codecs[0].Params[0]) >= len(s.members) {
		return nil, nil, 0, bad("a block that is no SCORPIO write of this stream (codecs %v)", b.Codecs)
	}
	c := b.Codecs[0]
	m := s.members[c.Params[0]]
	v, i := m.d.byName[c.Dataset], int(c.Params[1])
	switch {
	case v == nil:
		return nil, nil, 0, bad("%s: no variable %q", m.name, c.Dataset)
	case c.Name == DarrayCodec && i < len(v.Writes), c.Name == BlobCodec && i < len(v.Blobs):
		return m, v, i, nil
	}
	return nil, nil, 0, bad("%s: variable %q: %s block %d of %d writes, %d put_var calls", m.name, v.Name, c.Name, i, len(v.Writes), len(v.Blobs))
}

// Placement implements catalog.Source: a darray block's data blocks
// of every I/O group and their decomposition's map blocks, as stored, read
// through the member's BP source, and the write's fill value; nil for a
// put_var block.
func (s *Stream) Placement(ctx context.Context, b *catalog.Block, dt catalog.DType) (*catalog.Placement, error) {
	if len(b.Codecs) != 1 || b.Codecs[0].Name != DarrayCodec {
		return nil, nil
	}
	m, v, i, err := s.blockOf(b)
	if err != nil {
		return nil, err
	}
	d, w := m.d, &v.Writes[i]
	dc, ok := d.decomps[w.Decomp]
	if !ok {
		return nil, corrupt("decomposition %d does not exist (/__pio__/decomp/%d)", w.Decomp, w.Decomp)
	}
	pl := &catalog.Placement{Source: d.bp, Parts: make([]*catalog.Block, len(w.Blocks)), Maps: make([]*catalog.Block, len(dc.blocks)),
		MapType: dc.dt, Fill: d.FillValue(v, w), Map: fmt.Sprintf("%s%s%d", m.name, pfxDecomp, w.Decomp)}
	for g := range w.Blocks {
		pl.Parts[g] = &w.Blocks[g]
	}
	for g := range dc.blocks {
		pl.Maps[g] = &dc.blocks[g]
	}
	return pl, nil
}

// Resident builds the plans of the decompositions the selected variables'
// writes use (each once: Plan keeps them, and the reads use them) and
// returns about the bytes they hold: what the stream keeps in memory to
// read its blocks beyond the block lists of the catalog, which a job
// charges to --max-mem before it cuts its budget (reader.Resident). The
// plans are built up to GOMAXPROCS at once.
func (s *Stream) Resident(ctx context.Context) (int64, error) {
	type use struct {
		d  *Dataset
		id int
	}
	var uses []use
	seen := map[use]bool{}
	for _, v := range s.members[0].d.vars {
		if !s.selected[v.Name] || v.Kind != Darray {
			continue
		}
		members := s.members[:1] // a fixed variable is the first member's
		if v.Record() {
			members = s.members
		}
		for _, m := range members {
			mv := m.d.Var(v.Name)
			if mv == nil {
				continue
			}
			for _, w := range mv.Writes {
				if u := (use{m.d, w.Decomp}); !seen[u] {
					seen[u] = true
					uses = append(uses, u)
				}
			}
		}
	}
	var total atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, u := range uses {
		g.Go(func() error {
			p, err := u.d.Plan(gctx, u.id)
			if err != nil {
				return err
			}
			total.Add(p.Bytes())
			return nil
		})
	}
	err := g.Wait()
	return total.Load(), err
}

// Prefetch implements catalog.Source: the data blocks of the darray
// writes among blocks, announced through their member's BP source.
func (s *Stream) Prefetch(ctx context.Context, blocks []*catalog.Block) {
	for _, b := range blocks {
		if len(b.Codecs) != 1 || b.Codecs[0].Name != DarrayCodec {
			continue
		}
		m, v, i, err := s.blockOf(b)
		if err != nil {
			continue // the read that follows reports it
		}
		w := &v.Writes[i]
		data := make([]*catalog.Block, len(w.Blocks))
		for g := range w.Blocks {
			data[g] = &w.Blocks[g]
		}
		m.d.bp.Prefetch(ctx, data)
	}
}

// Caps implements catalog.Source: blocks are read one at a time (each
// gathers its own I/O groups' blocks), and darray blocks are placed
// through the decompositions' maps (Placement).
func (s *Stream) Caps() catalog.Caps { return catalog.Caps{Places: true} }

// IOStats implements catalog.Source: the reads of the members' BP files.
func (s *Stream) IOStats() catalog.IOCounters {
	var c catalog.IOCounters
	for _, m := range s.members {
		mc := m.d.bp.IOStats()
		c.ReadCalls += mc.ReadCalls
		c.ReadBytes += mc.ReadBytes
	}
	return c
}
