package scorpio

import (
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
	"sync"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/bp"
	"relayout/reader/netcdf"
)

// Kind says how a variable is stored.
type Kind int

const (
	// Darray: written by PIOc_write_darray: 1-D local-array blocks placed
	// by a decomposition (Var.Writes).
	Darray Kind = iota
	// PutVar: written by PIOc_put_var*: uint8 blobs of int64 start[ndims],
	// int64 count[ndims] and the raw values (Var.Blobs; ndims 0: the value).
	PutVar
)

func (k Kind) String() string {
	if k == Darray {
		return "darray"
	}
	return "put_var"
}

// Dim is a netCDF dimension; the record dimension (stored length 0,
// PIO_UNLIMITED) has Len = the number of frames written.
type Dim struct {
	Name   string
	Len    int64
	Record bool
}

// Var is one netCDF variable of the file.
type Var struct {
	Name   string
	NCType int           // netCDF type id (def/nctype)
	Type   catalog.DType // its element type in the file
	Dims   []string      // named dimensions, the record one first if any
	Shape  []int64       // their lengths (the record one: frames)
	Attrs  []catalog.Attr
	Kind   Kind
	Decomp int     // def/decomp (darray), -1 none
	Writes []Write // darray: one per write, in writing order
	Blobs  []Blob  // put_var: one per call, in writing order
	recdim bool
}

// Record reports whether the variable's first dimension is the record one.
func (v *Var) Record() bool { return v.recdim }

// Write is one PIOc_write_darray call: its frame, decomposition, fill value
// and its data blocks, one per decomposition block in the plan's order.
type Write struct {
	Step   int    // ADIOS step holding it
	Frame  int64  // record index; -1 for a variable without the record dim
	Decomp int    // decomposition id
	Fill   []byte // the fill value passed (file type, writer byte order); nil: none
	Blocks []catalog.Block
}

// Blob is one put_var call's block (Read it with ReadBlob).
type Blob struct {
	Step  int
	Block catalog.Block
}

// decomp is a decomposition as listed at Open: its blocks in writer order.
type decomp struct {
	id     int
	dims   []int64
	step   int
	ranks  []int32
	blocks []catalog.Block
	dt     catalog.DType
}

// Dataset is an opened SCORPIO BP dataset.
type Dataset struct {
	Path     string // the .nc.bp directory
	Dims     []Dim
	Attrs    []catalog.Attr // global attributes (/__pio__/global/...)
	FillMode int            // /__pio__/fillmode (256 NC_NOFILL, 0 NC_FILL; -1 absent)
	vars     []*Var
	byName   map[string]*Var
	decomps  map[int]*decomp
	stored   bool // /__pio__/info/decomp_stored
	bp       *bp.Dataset
	bo       binary.ByteOrder

	plans onceMap[*Plan] // decomposition -> its plan (Plan)
}

// onceMap builds the value of each key once, for every caller (safe for
// concurrent use): the plans.
type onceMap[V any] struct {
	mu sync.Mutex
	m  map[int]*onceValue[V]
}

type onceValue[V any] struct {
	once sync.Once
	v    V
	err  error
}

func (o *onceMap[V]) get(k int, build func() (V, error)) (V, error) {
	o.mu.Lock()
	if o.m == nil {
		o.m = map[int]*onceValue[V]{}
	}
	ov, ok := o.m[k]
	if !ok {
		ov = &onceValue[V]{}
		o.m[k] = ov
	}
	o.mu.Unlock()
	ov.once.Do(func() { ov.v, ov.err = build() })
	return ov.v, ov.err
}

// Resolve returns the .nc.bp directory path names: the directory itself, or
// NAME.nc (the symlink to NAME.nc.bp/md.0, dangling or not) whose NAME.nc.bp
// exists; "" when path is neither.
func Resolve(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		if strings.HasSuffix(strings.TrimSuffix(path, "/"), ".bp") && bp.IsBP5(path) {
			return path
		}
		return ""
	}
	if strings.HasSuffix(path, ".bp") {
		return ""
	}
	dir := path + ".bp"
	if st, err := os.Stat(dir); err == nil && st.IsDir() && bp.IsBP5(dir) {
		return dir
	}
	return ""
}

// Is reports whether path is a SCORPIO BP dataset: a BP5 NAME.nc.bp
// directory (or its NAME.nc) whose md.0 names /__pio__/ variables. It reads
// md.0's first MiB at most.
func Is(path string) bool {
	dir := Resolve(path)
	if dir == "" {
		return false
	}
	// Opened as every input file is (fileio.Open): a FIFO or device named
	// md.0 is no SCORPIO dataset, and must not block the detection.
	for _, name := range []string{"md.0", "mmd.0"} {
		f, _, err := fileio.Open(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		b := make([]byte, 1<<20)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if strings.Contains(string(b[:n]), "/__pio__/") {
			return true
		}
	}
	return false
}

const (
	pio       = "/__pio__/"
	pfxVar    = pio + "var/"
	pfxDim    = pio + "dim/"
	pfxDecomp = pio + "decomp/"
	pfxGlobal = pio + "global/"
	pfxFrame  = pio + "track/frame_id/"
	pfxDID    = pio + "track/decomp_id/"
	pfxFill   = pio + "track/fillval_id/"
)

// Open opens a SCORPIO BP dataset (see Is) and models its netCDF content.
// It reads the metadata and the small bookkeeping variables (dimensions,
// frame, decomposition and fill-value tracks), not the decompositions (Plan
// reads them) nor the data.
func Open(path string) (*Dataset, error) {
	dir := Resolve(path)
	if dir == "" {
		return nil, fmt.Errorf("scorpio: %s: not a SCORPIO BP dataset (NAME.nc.bp BP5 directory or NAME.nc beside it): %w", path, catalog.ErrUnsupported)
	}
	b, err := bp.OpenLocal(dir, bp.Config{})
	if err != nil {
		return nil, err
	}
	d := &Dataset{Path: dir, bp: b, byName: map[string]*Var{}, decomps: map[int]*decomp{}, FillMode: -1}
	if err := d.load(context.Background()); err != nil {
		b.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the data files.
func (d *Dataset) Close() error { return d.bp.Close() }

// Vars returns the variables in definition order where known (the order of
// their def attributes), else by name.
func (d *Dataset) Vars() []*Var { return d.vars }

// Var returns the named variable, or nil.
func (d *Dataset) Var(name string) *Var { return d.byName[name] }

// Decomps returns the ids of the decompositions stored, ascending.
func (d *Dataset) Decomps() []int {
	ids := make([]int, 0, len(d.decomps))
	for id := range d.decomps {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// readRaw returns the decoded bytes of a BP block of this dataset (blosc
// decoded; Write.Blocks, Blob.Block, the decompositions' blocks).
func (d *Dataset) readRaw(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	return catalog.ReadBlock(ctx, d.bp, b, dt)
}

func corrupt(what string, args ...any) error {
	return catalog.Corrupt("scorpio", "md.0", -1, what, args...)
}

// load catalogs the BP variables and builds the netCDF model.
func (d *Dataset) load(ctx context.Context) error {
	arrays := map[string][]*catalog.Array{} // per BP variable, by step
	pioSeen := false
	err := d.bp.Scan(ctx, func(a *catalog.Array) error {
		if strings.HasPrefix(a.Var, pio) {
			pioSeen = true
			arrays[a.Var] = append(arrays[a.Var], a)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !pioSeen {
		return fmt.Errorf("scorpio: %s: a BP5 directory without /__pio__/ variables: %w", d.Path, catalog.ErrUnsupported)
	}
	d.bo = binary.LittleEndian
	for _, as := range arrays {
		if as[0].DType.BigEndian {
			d.bo = binary.BigEndian
		}
		break
	}
	attrs := d.bp.RawAttrs()
	attr := map[string]catalog.Attr{}
	for _, a := range attrs {
		attr[a.Name] = a
	}
	if a, ok := attr[pio+"fillmode"]; ok {
		if v, ok := attrInt(a); ok {
			d.FillMode = int(v)
		}
	}
	for _, a := range attrs {
		if leaf, ok := strings.CutPrefix(a.Name, pfxGlobal); ok {
			a.Name = leaf
			d.Attrs = append(d.Attrs, a)
		}
	}
	// Dimensions.
	for name, as := range arrays {
		leaf, ok := strings.CutPrefix(name, pfxDim)
		if !ok {
			continue
		}
		vals, err := d.ints(ctx, as[0])
		if err != nil || len(vals) != 1 || vals[0] < 0 {
			return errors.Join(corrupt("dimension %q: value %v", leaf, vals), err)
		}
		d.Dims = append(d.Dims, Dim{Name: leaf, Len: vals[0], Record: vals[0] == 0})
	}
	slices.SortFunc(d.Dims, func(a, b Dim) int { return strings.Compare(a.Name, b.Name) })
	if as, ok := arrays[pio+"info/decomp_stored"]; ok {
		v, err := d.ints(ctx, as[0])
		if err != nil {
			return err
		}
		d.stored = len(v) == 1 && v[0] != 0
	}
	// Decompositions: one block per writer (I/O group), stored once.
	for name, as := range arrays {
		leaf, ok := strings.CutPrefix(name, pfxDecomp)
		if !ok || strings.Contains(leaf, "/") {
			continue
		}
		id, err := strconv.Atoi(leaf)
		if err != nil {
			return corrupt("decomposition %q: not a number", leaf)
		}
		a := as[0]
		if a.DType.Size != 8 && a.DType.Size != 4 || a.DType.Kind != catalog.Int {
			return corrupt("decomposition %d: map entries of type %s", id, a.DType)
		}
		dl, ok := attrInts(attr[name+"/dimlen"])
		if !ok {
			return corrupt("decomposition %d: no dimlen attribute", id)
		}
		dc := &decomp{id: id, dims: dl, step: int(a.Step), blocks: a.Blocks, dt: a.DType}
		for _, b := range a.Blocks {
			if n := len(dc.ranks); n > 0 && dc.ranks[n-1] >= b.Rank {
				return corrupt("decomposition %d: writer %d stores more than one map block", id, b.Rank)
			}
			dc.ranks = append(dc.ranks, b.Rank)
		}
		d.decomps[id] = dc
	}
	// Variables from their def attributes.
	var names []string
	for _, a := range attrs {
		rest, ok := strings.CutPrefix(a.Name, pfxVar)
		if !ok {
			continue
		}
		v, leaf, ok := strings.Cut(rest, "/def/")
		if ok && leaf == "ncop" && !slices.Contains(names, v) {
			names = append(names, v)
		}
	}
	for _, name := range names {
		v, err := d.defineVar(name, attr, attrs)
		if err != nil {
			return err
		}
		d.vars = append(d.vars, v)
		d.byName[name] = v
	}
	// Frames of each variable, and the record dimension's length.
	frames := int64(0)
	for _, v := range d.vars {
		as := arrays[pfxVar+v.Name]
		var err error
		if v.Kind == Darray {
			err = d.darrayWrites(ctx, v, as, arrays)
		} else {
			err = d.blobs(ctx, v, as)
		}
		if err != nil {
			return err
		}
		frames = max(frames, d.varFrames(v))
	}
	for i := range d.Dims {
		if d.Dims[i].Record {
			d.Dims[i].Len = frames
		}
	}
	for _, v := range d.vars {
		for i, dn := range v.Dims {
			k := slices.IndexFunc(d.Dims, func(x Dim) bool { return x.Name == dn })
			if k < 0 {
				return corrupt("variable %q: dimension %q is not defined (/__pio__/dim/%s)", v.Name, dn, dn)
			}
			v.Shape[i] = d.Dims[k].Len
			if d.Dims[k].Record {
				if i != 0 {
					return corrupt("variable %q: record dimension %q is not its first", v.Name, dn)
				}
				v.recdim = true
			}
		}
	}
	return nil
}

// defineVar models variable name from its attributes.
func (d *Dataset) defineVar(name string, attr map[string]catalog.Attr, all []catalog.Attr) (*Var, error) {
	base := pfxVar + name
	v := &Var{Name: name, Decomp: -1}
	switch op := attrString(attr[base+"/def/ncop"]); op {
	case "darray":
		v.Kind = Darray
	case "put_var":
		v.Kind = PutVar
	default:
		return nil, fmt.Errorf("scorpio: %s: variable %q: operation %q: %w", d.Path, name, op, catalog.ErrUnsupported)
	}
	nt, ok := attrInt(attr[base+"/def/nctype"])
	if !ok {
		return nil, corrupt("variable %q: no def/nctype", name)
	}
	v.NCType = int(nt)
	dt, ok := netcdf.Type(v.NCType).DType() // the same type ids; big-endian as classic files are
	if !ok || v.NCType < 1 {
		return nil, fmt.Errorf("scorpio: %s: variable %q: netCDF type %d: %w", d.Path, name, nt, catalog.ErrUnsupported)
	}
	dt.BigEndian = d.bo == binary.BigEndian && dt.Size > 1
	v.Type = dt
	nd, _ := attrInt(attr[base+"/def/ndims"])
	if a, ok := attr[base+"/def/dims"]; ok {
		v.Dims = a.Strings
	}
	if int64(len(v.Dims)) != nd {
		return nil, corrupt("variable %q: def/ndims %d, def/dims %q", name, nd, v.Dims)
	}
	v.Shape = make([]int64, len(v.Dims))
	if v.Kind == Darray {
		id, err := strconv.Atoi(attrString(attr[base+"/def/decomp"]))
		if err != nil {
			return nil, corrupt("variable %q: def/decomp %q", name, attrString(attr[base+"/def/decomp"]))
		}
		v.Decomp = id
	}
	for _, a := range all {
		if leaf, ok := strings.CutPrefix(a.Name, base+"/"); ok && !strings.Contains(leaf, "/") {
			a.Name = leaf
			v.Attrs = append(v.Attrs, a)
		}
	}
	return v, nil
}

// darrayWrites pairs the data blocks of each step with the step's tracks.
// Each writer (I/O group) writes, per step, one block per write; write i's
// block of the group that stored decomposition block g is its block g.
func (d *Dataset) darrayWrites(ctx context.Context, v *Var, as []*catalog.Array, arrays map[string][]*catalog.Array) error {
	if len(as) > 0 && !d.stored {
		return corrupt("variable %q: the decompositions were not stored (/__pio__/info/decomp_stored is 0 or absent): its values cannot be placed; rerun with SCORPIO's decomposition output on", v.Name)
	}
	track := func(pfx string, step int64) *catalog.Array {
		for _, a := range arrays[pfx+v.Name] {
			if a.Step == step {
				return a
			}
		}
		return nil
	}
	for _, a := range as {
		fa, da := track(pfxFrame, a.Step), track(pfxDID, a.Step)
		if fa == nil || da == nil {
			return corrupt("variable %q step %d: data without %s or %s", v.Name, a.Step, pfxFrame+v.Name, pfxDID+v.Name)
		}
		fids, err := d.ints(ctx, fa)
		if err != nil {
			return err
		}
		dids, err := d.ints(ctx, da)
		if err != nil {
			return err
		}
		if len(fids) != len(dids) || len(fids) == 0 {
			return corrupt("variable %q step %d: %d frame ids, %d decomposition ids", v.Name, a.Step, len(fids), len(dids))
		}
		var fills []byte
		if fv := track(pfxFill, a.Step); fv != nil {
			if fv.DType.Size != v.Type.Size {
				return corrupt("variable %q step %d: fill values of %d bytes for %s", v.Name, a.Step, fv.DType.Size, v.Type)
			}
			if fills, err = d.bytes(ctx, fv); err != nil {
				return err
			}
		}
		nw := len(fids)
		// Group the data blocks by writer, in order.
		perRank := map[int32][]catalog.Block{}
		for _, b := range a.Blocks {
			perRank[b.Rank] = append(perRank[b.Rank], b)
		}
		for r, bs := range perRank {
			if len(bs) != nw {
				return corrupt("variable %q step %d: writer %d wrote %d data blocks for %d writes", v.Name, a.Step, r, len(bs), nw)
			}
		}
		es := int64(v.Type.Size)
		if a.DType.Size != v.Type.Size {
			return corrupt("variable %q: data of %d-byte elements for netCDF type %d", v.Name, a.DType.Size, v.NCType)
		}
		fi := 0
		for i := 0; i < nw; i++ {
			id := int(dids[i])
			w := Write{Step: int(a.Step), Frame: fids[i], Decomp: id}
			if id > 0 {
				if int64(len(fills)) < int64(fi+1)*es {
					return corrupt("variable %q step %d write %d: fill value %d of %d", v.Name, a.Step, i, fi, int64(len(fills))/es)
				}
				w.Fill = fills[int64(fi)*es : int64(fi+1)*es]
				fi++
			} else {
				w.Decomp = -id
			}
			dc, ok := d.decomps[w.Decomp]
			if !ok {
				return corrupt("variable %q step %d write %d (frame %d): decomposition %d does not exist (/__pio__/decomp/%d)", v.Name, a.Step, i, w.Frame, w.Decomp, w.Decomp)
			}
			if len(perRank) != len(dc.ranks) {
				return corrupt("variable %q step %d write %d: %d writers wrote data, %d stored decomposition %d", v.Name, a.Step, i, len(perRank), len(dc.ranks), w.Decomp)
			}
			w.Blocks = make([]catalog.Block, len(dc.ranks))
			for g, r := range dc.ranks {
				bs, ok := perRank[r]
				if !ok {
					return corrupt("variable %q step %d write %d: writer %d stored decomposition %d block %d but wrote no data", v.Name, a.Step, i, r, w.Decomp, g)
				}
				b := bs[i]
				n, m := b.Box.Count[0], dc.blocks[g].Box.Count[0]
				if n != m && !(m == 2 && n < 2) {
					return catalog.Corrupt("scorpio", b.File, b.Offset, "variable %q step %d write %d (frame %d): data block %d (writer %d) holds %d elements, its map block (decomposition %d) %d",
						v.Name, a.Step, i, w.Frame, g, r, n, w.Decomp, m)
				}
				w.Blocks[g] = b
			}
			v.Writes = append(v.Writes, w)
		}
	}
	return nil
}

// blobs lists the put_var blocks of v.
func (d *Dataset) blobs(ctx context.Context, v *Var, as []*catalog.Array) error {
	for _, a := range as {
		if a.DType.Size != 1 {
			return corrupt("put_var variable %q: blocks of %d-byte elements, want uint8", v.Name, a.DType.Size)
		}
		for _, b := range a.Blocks {
			v.Blobs = append(v.Blobs, Blob{Step: int(a.Step), Block: b})
		}
	}
	return nil
}

// varFrames is the number of frames v's writes or blobs reach (0 for a
// variable without the record dimension).
func (d *Dataset) varFrames(v *Var) int64 {
	if len(v.Dims) == 0 || !slices.ContainsFunc(d.Dims, func(x Dim) bool { return x.Record && x.Name == v.Dims[0] }) {
		return 0
	}
	var n int64
	for _, w := range v.Writes {
		n = max(n, w.Frame+1)
	}
	for i := range v.Blobs {
		if s, c, err := d.blobHeader(context.Background(), v, &v.Blobs[i]); err == nil && len(s) > 0 {
			n = max(n, s[0]+c[0])
		}
	}
	return n
}

// blobHeader reads a blob's start and count.
func (d *Dataset) blobHeader(ctx context.Context, v *Var, b *Blob) (start, count []int64, err error) {
	raw, err := d.readRaw(ctx, &b.Block, catalog.DType{Kind: catalog.Uint, Size: 1})
	if err != nil {
		return nil, nil, err
	}
	start, count, _, err = ParseBlob(raw, len(v.Dims), v.Type.Size, d.bo)
	return start, count, err
}

// ReadBlob returns a put_var call's start, count and values (file type,
// writer byte order, row-major over count).
func (d *Dataset) ReadBlob(ctx context.Context, v *Var, b *Blob) (start, count []int64, data []byte, err error) {
	raw, err := d.readRaw(ctx, &b.Block, catalog.DType{Kind: catalog.Uint, Size: 1})
	if err != nil {
		return nil, nil, nil, err
	}
	start, count, data, err = ParseBlob(raw, len(v.Dims), v.Type.Size, d.bo)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("scorpio: variable %q step %d: %w", v.Name, b.Step, catalog.CorruptIn(err, b.Block.File))
	}
	for k := range start {
		if k < len(v.Shape) && (start[k] < 0 || count[k] < 0 || (v.Shape[k] > 0 && start[k]+count[k] > v.Shape[k])) {
			return nil, nil, nil, catalog.Corrupt("scorpio", b.Block.File, b.Block.Offset, "variable %q: put_var start %v count %v outside shape %v", v.Name, start, count, v.Shape)
		}
	}
	return start, count, data, nil
}

// ParseBlob splits a put_var block: int64 start[ndims], int64 count[ndims]
// (writer byte order), then prod(count) values of elemSize bytes (ndims 0:
// the one value). Offsets in errors are within the block.
func ParseBlob(raw []byte, ndims, elemSize int, bo binary.ByteOrder) (start, count []int64, data []byte, err error) {
	if ndims < 0 || ndims > 64 || elemSize <= 0 {
		return nil, nil, nil, catalog.Corrupt("scorpio", "", -1, "put_var block: %d dimensions, %d-byte elements", ndims, elemSize)
	}
	h := 16 * ndims
	if len(raw) < h {
		return nil, nil, nil, catalog.Corrupt("scorpio", "", 0, "put_var block of %d bytes, its start/count header needs %d", len(raw), h)
	}
	start, count = make([]int64, ndims), make([]int64, ndims)
	n := int64(1)
	for k := 0; k < ndims; k++ {
		start[k] = int64(bo.Uint64(raw[8*k:]))
		count[k] = int64(bo.Uint64(raw[8*(ndims+k):]))
		if start[k] < 0 || count[k] < 0 || (count[k] > 0 && n > math.MaxInt64/count[k]) {
			return nil, nil, nil, catalog.Corrupt("scorpio", "", int64(8*k), "put_var block: start %v count %v", start, count)
		}
		n *= count[k]
	}
	data = raw[h:]
	if n > int64(len(data))/int64(elemSize) || int64(len(data)) != n*int64(elemSize) {
		return nil, nil, nil, catalog.Corrupt("scorpio", "", int64(h), "put_var block: %d value bytes for count %v of %d-byte elements", len(data), count, elemSize)
	}
	return start, count, data, nil
}

// Plan returns the scatter plan of decomposition id, built on first use
// (reading the decomposition's map blocks) and shared after. Safe for
// concurrent use.
func (d *Dataset) Plan(ctx context.Context, id int) (*Plan, error) {
	return d.plans.get(id, func() (*Plan, error) { return d.buildPlan(ctx, id) })
}

// MapBlocks reads decomposition id's map blocks as stored.
func (d *Dataset) MapBlocks(ctx context.Context, id int) ([][]int64, error) {
	dc, ok := d.decomps[id]
	if !ok {
		return nil, corrupt("decomposition %d does not exist (/__pio__/decomp/%d)", id, id)
	}
	out := make([][]int64, len(dc.blocks))
	rd := catalog.Reads{Blocks: make([]*catalog.Block, len(dc.blocks)), DTypes: []catalog.DType{dc.dt}}
	for g := range dc.blocks {
		rd.Blocks[g] = &dc.blocks[g]
	}
	// Decoded from the read's own buffer: no copy of the stored map.
	err := d.bp.ReadBlocks(ctx, rd, func(g int, raw []byte) error {
		out[g] = decodeInts(raw, dc.dt, d.bo)
		return nil
	})
	return out, err
}

func (d *Dataset) buildPlan(ctx context.Context, id int) (*Plan, error) {
	blocks, err := d.MapBlocks(ctx, id)
	if err != nil {
		return nil, err
	}
	dc := d.decomps[id]
	where := func(b int, j int64) (string, int64) {
		blk := &dc.blocks[b]
		if len(blk.Codecs) > 0 { // compressed: the block's place
			return blk.File, blk.Offset
		}
		return blk.File, blk.Offset + j*int64(dc.dt.Size)
	}
	return BuildPlan(pfxDecomp+strconv.Itoa(id), id, dc.dims, blocks, where)
}

// ReadWrite places one darray write into dst (Elems of the plan x element
// size bytes, row-major over the variable's non-record dimensions): its
// blocks read with one call (coalesced, the time waiting on storage added
// to *timer when not nil), each scattered from the read's buffer as it
// arrives, holes filled with the write's fill value, else _FillValue,
// else the netCDF default fill of the type.
func (d *Dataset) ReadWrite(ctx context.Context, v *Var, w *Write, dst []byte, timer *int64) error {
	p, err := d.Plan(ctx, w.Decomp)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("variable %q frame %d", v.Name, w.Frame)
	if len(w.Blocks) != len(p.BlockLen) {
		return catalog.Corrupt("scorpio", "", -1, "%s: %d data blocks for the %d blocks of decomposition %d", what, len(w.Blocks), len(p.BlockLen), p.ID)
	}
	rd := catalog.Reads{Blocks: make([]*catalog.Block, len(w.Blocks)), DTypes: []catalog.DType{v.Type}, Timer: timer}
	for g := range w.Blocks {
		rd.Blocks[g] = &w.Blocks[g]
	}
	err = d.bp.ReadBlocks(ctx, rd, func(g int, data []byte) error {
		return p.ScatterBlock(dst, g, data, v.Type.Size, what, w.Blocks)
	})
	if err != nil {
		return err
	}
	p.Fill(dst, d.FillValue(v, w))
	return nil
}

// FillValue is what holes of write w hold: the fill value passed with the
// write, else the variable's _FillValue, else the netCDF default fill of
// its type (writer byte order).
func (d *Dataset) FillValue(v *Var, w *Write) []byte {
	if w != nil && w.Fill != nil {
		return w.Fill
	}
	for _, a := range v.Attrs {
		if a.Name == "_FillValue" {
			if b, ok := attrBytes(a, v.Type, d.bo); ok {
				return b
			}
		}
	}
	fill := netcdf.DefaultFill(netcdf.Type(v.NCType)) // big-endian
	if d.bo == binary.LittleEndian {
		slices.Reverse(fill)
	}
	return fill
}

// ints reads a small integer array (every block, in order).
func (d *Dataset) ints(ctx context.Context, a *catalog.Array) ([]int64, error) {
	raw, err := d.bytes(ctx, a)
	if err != nil {
		return nil, err
	}
	if a.DType.Kind != catalog.Int && a.DType.Kind != catalog.Uint {
		return nil, corrupt("%s: %s values, want integers", a.Var, a.DType)
	}
	return decodeInts(raw, a.DType, d.bo), nil
}

// bytes reads a small array's blocks end to end (at most 64 MiB).
func (d *Dataset) bytes(ctx context.Context, a *catalog.Array) ([]byte, error) {
	var out []byte
	for i := range a.Blocks {
		b, err := d.readRaw(ctx, &a.Blocks[i], a.DType)
		if err != nil {
			return nil, err
		}
		if len(out)+len(b) > 64<<20 {
			return nil, fmt.Errorf("scorpio: %s: more than 64 MiB of bookkeeping values: %w", a.Var, catalog.ErrUnsupported)
		}
		out = append(out, b...)
	}
	return out, nil
}

func decodeInts(raw []byte, dt catalog.DType, bo binary.ByteOrder) []int64 {
	if dt.BigEndian {
		bo = binary.BigEndian
	}
	n := len(raw) / dt.Size
	out := make([]int64, n)
	for i := range out {
		p := raw[i*dt.Size:]
		switch {
		case dt.Size == 8:
			out[i] = int64(bo.Uint64(p))
		case dt.Size == 4 && dt.Kind == catalog.Int:
			out[i] = int64(int32(bo.Uint32(p)))
		case dt.Size == 4:
			out[i] = int64(bo.Uint32(p))
		case dt.Size == 2 && dt.Kind == catalog.Int:
			out[i] = int64(int16(bo.Uint16(p)))
		case dt.Size == 2:
			out[i] = int64(bo.Uint16(p))
		case dt.Kind == catalog.Int:
			out[i] = int64(int8(p[0]))
		default:
			out[i] = int64(p[0])
		}
	}
	return out
}

func attrInt(a catalog.Attr) (int64, bool) {
	switch {
	case len(a.Ints) == 1:
		return a.Ints[0], true
	case len(a.Uints) == 1 && a.Uints[0] <= math.MaxInt64:
		return int64(a.Uints[0]), true
	}
	return 0, false
}

func attrInts(a catalog.Attr) ([]int64, bool) {
	if len(a.Ints) > 0 {
		return a.Ints, true
	}
	if len(a.Uints) > 0 {
		out := make([]int64, len(a.Uints))
		for i, u := range a.Uints {
			out[i] = int64(u)
		}
		return out, true
	}
	return nil, false
}

func attrString(a catalog.Attr) string {
	if len(a.Strings) == 1 {
		return a.Strings[0]
	}
	return ""
}

// attrBytes encodes a numeric attribute's first value as one element of dt.
func attrBytes(a catalog.Attr, dt catalog.DType, bo binary.ByteOrder) ([]byte, bool) {
	var f float64
	var i int64
	switch {
	case len(a.Floats) > 0:
		f, i = a.Floats[0], int64(a.Floats[0])
	case len(a.Ints) > 0:
		f, i = float64(a.Ints[0]), a.Ints[0]
	case len(a.Uints) > 0:
		f, i = float64(a.Uints[0]), int64(a.Uints[0])
	default:
		return nil, false
	}
	b := make([]byte, dt.Size)
	switch {
	case dt.Kind == catalog.Float && dt.Size == 4:
		bo.PutUint32(b, math.Float32bits(float32(f)))
	case dt.Kind == catalog.Float:
		bo.PutUint64(b, math.Float64bits(f))
	case dt.Size == 1:
		b[0] = byte(i)
	case dt.Size == 2:
		bo.PutUint16(b, uint16(i))
	case dt.Size == 4:
		bo.PutUint32(b, uint32(i))
	default:
		bo.PutUint64(b, uint64(i))
	}
	return b, true
}
