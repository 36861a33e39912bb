package h5

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/chunkindex"
	"relayout/internal/fileio"
	ih5 "relayout/internal/h5"
)

// maxMetaFiles bounds the HDF5 files Scan keeps open for metadata; arrays are
// emitted by variable, so a file-based series revisits each file per variable.
const maxMetaFiles = 4

// metaFiles is a tiny LRU of HDF5 files open for metadata, with their sizes.
type metaFiles struct {
	root  string
	files []*metaFile // most recently used last
}

type metaFile struct {
	name string
	hf   *ih5.File
	size int64
}

func (m *metaFiles) get(name string) (*metaFile, error) {
	for i, f := range m.files {
		if f.name == name {
			m.files = append(append(m.files[:i:i], m.files[i+1:]...), f)
			return f, nil
		}
	}
	if len(m.files) >= maxMetaFiles {
		m.files[0].hf.Close()
		m.files = m.files[1:]
	}
	full := filepath.Join(m.root, name)
	hf, err := ih5.Open(full)
	if err != nil {
		return nil, err
	}
	size, err := fileio.CheckRegular(full)
	if err != nil {
		hf.Close()
		return nil, fmt.Errorf("reader/h5: %w", err)
	}
	f := &metaFile{name: name, hf: hf, size: size}
	m.files = append(m.files, f)
	return f, nil
}

func (m *metaFiles) close() {
	for _, f := range m.files {
		f.hf.Close()
	}
	m.files = nil
}

// HDF5 1.10 crashes on some damaged attribute messages: every attribute
// read through internal/h5 is checked natively first.
func init() { ih5.CheckAttributes = chunkindex.CheckAttributes }

// Scan emits every selected array with its blocks, ordered by variable name,
// then step and level. Only one array's blocks are held at a time.
func (d *Dataset) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	mf := &metaFiles{root: d.info.Root}
	defer mf.close()
	for _, e := range d.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := mf.get(e.file)
		if err != nil {
			return err
		}
		var a *catalog.Array
		if e.constant {
			a, err = buildConstant(f.hf, e.file, e.path)
		} else {
			a, err = buildArray(f.hf, e.file, f.size, e.path)
		}
		if err != nil {
			return err
		}
		if err := d.finish(f.hf, e, a); err != nil {
			return err
		}
		if d.info.Format == "openpmd-hdf5" || d.info.Format == "relayout" {
			catalog.SetLevelBoxes(a) // a refined level (openPMD's, or relayout's read back): its chunks
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	return nil
}

// finish names the array and adds its attributes.
func (d *Dataset) finish(hf *ih5.File, e entry, a *catalog.Array) error {
	a.Var, a.Step, a.Level = e.Var, e.Step, e.Level
	if e.shape != nil && !slices.Equal(e.shape, a.Shape) {
		return catalog.Corrupt("hdf5", e.file, -1, "dataset %s: shape %v, manifest says %v", e.path, a.Shape, e.shape)
	}
	if e.dtype != nil && *e.dtype != a.DType {
		return catalog.Corrupt("hdf5", e.file, -1, "dataset %s: type %s, manifest says %s", e.path, a.DType, *e.dtype)
	}
	if e.offset != nil {
		if len(e.offset) != len(a.Shape) {
			return catalog.Corrupt("hdf5", e.file, -1, "dataset %s: manifest offset %v for shape %v", e.path, e.offset, a.Shape)
		}
		a.Offset = e.offset
	}
	attrs, err := hf.Attrs(e.path)
	if err != nil {
		return err
	}
	if e.constant { // value and shape are the array itself
		attrs = slices.DeleteFunc(attrs, func(a catalog.Attr) bool { return a.Name == "value" || a.Name == "shape" })
	}
	if e.record != "" {
		rec, err := hf.Attrs(e.record)
		if err != nil {
			return err
		}
		for i := range rec {
			rec[i].Record = true
		}
		attrs = mergeAttrs(rec, attrs)
	}
	if e.speciesGroup != "" {
		sp, err := hf.Attrs(e.speciesGroup)
		if err != nil {
			return err
		}
		for i := range sp {
			sp[i].Species = true
		}
		attrs = mergeAttrs(sp, attrs)
	}
	if e.netCDF { // netCDF-C's hidden attributes, the scales' among them
		a.Attrs = dropNCHidden(attrs)
		a.Dims = slices.Clone(e.dims) // read at Open, with the unlimited dimensions
	} else {
		a.Attrs = dropScaleAttrs(attrs)
	}
	if d.info.Format == "relayout" {
		if err := relayoutBoxes(hf, e, a); err != nil {
			return err
		}
	}
	a.Species = e.species
	if e.stepGroup != "" {
		if a.StepAttrs, err = hf.Attrs(e.stepGroup); err != nil {
			return err
		}
	}
	return nil
}

// dropScaleAttrs removes the HDF5 dimension-scale bookkeeping of a dataset
// that is itself a dimension scale (CLASS = "DIMENSION_SCALE" and its NAME;
// netCDF-4 writes one per dimension): copied onto an output dataset they
// would make it a scale, to which the writer's own scales cannot be attached.
func dropScaleAttrs(as []catalog.Attr) []catalog.Attr {
	isScale := slices.ContainsFunc(as, func(a catalog.Attr) bool {
		return a.Name == "CLASS" && len(a.Strings) == 1 && a.Strings[0] == "DIMENSION_SCALE"
	})
	if !isScale {
		return as
	}
	return slices.DeleteFunc(slices.Clone(as), func(a catalog.Attr) bool { return a.Name == "CLASS" || a.Name == "NAME" })
}

// mergeAttrs returns base overlaid with over (over wins), sorted by name.
func mergeAttrs(base, over []catalog.Attr) []catalog.Attr {
	out := slices.Clone(over)
	for _, b := range base {
		if !slices.ContainsFunc(over, func(o catalog.Attr) bool { return o.Name == b.Name }) {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(x, y catalog.Attr) int { return strings.Compare(x.Name, y.Name) })
	return out
}

// buildArray lists the blocks of the dataset at path in hf (file name is
// relative to the root, size its length in bytes). Var, Step and attributes
// are left to the caller.
//
//	chunked     one block per allocated chunk: Box = chunk ∩ shape, Stored = chunk
//	            shape (edge chunks are stored whole), codecs = filters not masked,
//	            or hdf5-library (read through HDF5) when a filter is not native
//	contiguous  one block at the data address (none when never written: fill)
//	compact     one block with the bytes inline (read through HDF5; tiny)
func buildArray(hf *ih5.File, file string, size int64, path string) (*catalog.Array, error) {
	info, err := hf.Dataset(path)
	if err != nil {
		return nil, err
	}
	if !info.Numeric {
		return nil, fmt.Errorf("reader/h5: %s: dataset %s: element type %s: %w", file, path, info.TypeDesc, catalog.ErrUnsupported)
	}
	if err := supported(file, info); err != nil {
		return nil, err
	}
	rank := len(info.Shape)
	a := &catalog.Array{
		DType:  info.DType,
		Shape:  slices.Clone(info.Shape),
		Offset: make([]int64, rank),
		Fill:   info.Fill,
		Source: file + ":" + path,
	}
	elemBytes := a.Bytes()
	checkExtent := func(what string, off, n int64) error {
		if off < 0 || n < 0 || off > size || n > size-off {
			return catalog.Corrupt("hdf5", file, off, "dataset %s: %s of %d bytes past end of file (size %d)", path, what, n, size)
		}
		return nil
	}
	switch info.Layout {
	case "contiguous":
		if info.Address < 0 {
			return a, nil // never written: all fill value
		}
		if err := checkExtent("data", info.Address, elemBytes); err != nil {
			return nil, err
		}
		a.Blocks = []catalog.Block{{
			Box:    catalog.Box{Lower: make([]int64, rank), Count: slices.Clone(info.Shape)},
			File:   file,
			Offset: info.Address,
			Length: elemBytes,
			Rank:   -1,
		}}
	case "compact":
		raw, err := hf.ReadRaw(path)
		if err != nil {
			return nil, err
		}
		if int64(len(raw)) != elemBytes {
			return nil, catalog.Corrupt("hdf5", file, -1, "dataset %s: compact data %d bytes, want %d", path, len(raw), elemBytes)
		}
		a.Blocks = []catalog.Block{catalog.Block{
			Box:  catalog.Box{Lower: make([]int64, rank), Count: slices.Clone(info.Shape)},
			Rank: -1,
		}.WithInline(raw)}
	case "chunked":
		if len(info.Chunk) != rank {
			return nil, catalog.Corrupt("hdf5", file, -1, "dataset %s: chunk rank %d for shape %v", path, len(info.Chunk), info.Shape)
		}
		chunkBytes := (&catalog.Array{DType: info.DType, Shape: info.Chunk}).Bytes()
		chunks, err := listChunks(hf, path, info.ObjAddr)
		if err != nil {
			return nil, err
		}
		// Blocks share what is the same for every chunk (stored shape,
		// codecs of one filter mask; read-only), take their lower corners
		// from one backing array, and a count equal to the chunk before's
		// is that chunk's: a dataset of many tiny chunks costs a few
		// allocations, not several per chunk, and the catalog keeps the
		// list as it is.
		chunk := catalog.Block{File: file, Rank: -1}.WithStored(slices.Clone(info.Chunk), nil)
		codecsByMask := map[uint32][]catalog.Codec{}
		var library []catalog.Codec // every chunk read through HDF5
		if !nativeFilters(info) {
			library = libraryCodecs(path)
		}
		lowers := make([]int64, rank*len(chunks))
		catalog.Populate(lowers)
		count, last := make([]int64, rank), []int64(nil)
		a.Blocks = make([]catalog.Block, 0, len(chunks))
		catalog.Populate(a.Blocks)
		for _, c := range chunks {
			if len(c.Offset) != rank {
				return nil, catalog.Corrupt("hdf5", file, -1, "dataset %s: chunk offset %v", path, c.Offset)
			}
			lower := lowers[:rank:rank]
			copy(lower, c.Offset)
			outside := false
			for i := range count {
				count[i] = min(c.Offset[i]+info.Chunk[i], info.Shape[i]) - c.Offset[i]
				outside = outside || count[i] <= 0 || c.Offset[i] < 0
			}
			if outside {
				continue // a chunk left outside a shrunk extent
			}
			lowers = lowers[rank:]
			if last == nil || !slices.Equal(count, last) {
				last = slices.Clone(count)
			}
			box := catalog.Box{Lower: lower, Count: last}
			codecs, ok := codecsByMask[c.FilterMask]
			if library != nil {
				codecs, ok = library, true
			}
			if !ok {
				for i, f := range info.Filters {
					if i < 32 && c.FilterMask&(1<<i) != 0 {
						continue // this filter was skipped for this chunk
					}
					codecs = append(codecs, catalog.Codec{Name: codecNames[f.ID], Params: slices.Clone(f.Params)})
				}
				codecsByMask[c.FilterMask] = codecs
			}
			if c.Address < 0 || c.Size < 0 || c.Address > size || c.Size > size-c.Address {
				return nil, checkExtent("chunk "+box.String(), c.Address, c.Size)
			}
			if len(codecs) == 0 && c.Size != chunkBytes {
				return nil, catalog.Corrupt("hdf5", file, c.Address, "dataset %s: unfiltered chunk %v is %d bytes, want %d", path, box, c.Size, chunkBytes)
			}
			b := chunk
			b.Box, b.Offset, b.Length, b.Codecs = box, c.Address, c.Size, codecs
			a.Blocks = append(a.Blocks, b)
		}
	case "virtual":
		return buildVirtual(hf, file, size, path, a)
	default:
		return nil, fmt.Errorf("reader/h5: %s: dataset %s: layout %q: %w", file, path, info.Layout, catalog.ErrUnsupported)
	}
	return a, nil
}

// listChunks lists the allocated chunks of a chunked dataset. It parses the
// chunk index natively (linear in the number of chunks; the library's
// H5Dget_chunk_info is quadratic) and falls back to the library for index
// layouts the parser does not know or cannot read; the parser's error is
// reported when the library fails too.
func listChunks(hf *ih5.File, path string, objAddr uint64) ([]ih5.Chunk, error) {
	f, size, err := fileio.Open(hf.Path())
	if err != nil {
		return nil, fmt.Errorf("reader/h5: %w", err)
	}
	defer f.Close()
	var chunks []ih5.Chunk
	nerr := chunkindex.List(f, size, objAddr, func(c chunkindex.Chunk) error {
		chunks = append(chunks, ih5.Chunk{Offset: c.Offset, FilterMask: c.FilterMask, Address: c.Address, Size: c.Size})
		return nil
	})
	if nerr != nil {
		chunks = chunks[:0]
		if lerr := hf.Chunks(path, func(c ih5.Chunk) error { chunks = append(chunks, c); return nil }); lerr != nil {
			return nil, fmt.Errorf("reader/h5: dataset %s: chunk index: %w", path, catalog.CorruptIn(nerr, hf.Path()))
		}
	}
	return chunks, nil
}

// buildConstant makes the array of an openPMD constant record component:
// the group at path holds "value" (one element of the record's type) and
// "shape" (the extent, uint64 per dimension) instead of a dataset.
func buildConstant(hf *ih5.File, file, path string) (*catalog.Array, error) {
	attrs, err := hf.Attrs(path)
	if err != nil {
		return nil, err
	}
	a, err := catalog.ConstantArray(attrs)
	if err != nil {
		return nil, fmt.Errorf("reader/h5: constant record component %s: %w", path, catalog.CorruptIn(err, file))
	}
	a.Source = file + ":" + path
	return a, nil
}

// relayoutBoxes reads back the box table of an AMR level that relayout
// wrote (the dataset's "boxes" attribute names an int64 [box][2][rank]
// dataset of lower and upper corners, inclusive, in the level's global index
// space) as a.Boxes, relative to a.Offset, and drops the attribute (the
// writer names its own table). A table that does not fit the array is
// corrupt.
func relayoutBoxes(hf *ih5.File, e entry, a *catalog.Array) error {
	i := slices.IndexFunc(a.Attrs, func(at catalog.Attr) bool { return at.Name == "boxes" })
	if i < 0 || len(a.Attrs[i].Strings) != 1 || !strings.Contains(a.Attrs[i].Strings[0], "/relayout_boxes/") {
		return nil
	}
	path := a.Attrs[i].Strings[0]
	a.Attrs = slices.Delete(slices.Clone(a.Attrs), i, i+1)
	bad := func(what string) error {
		return fmt.Errorf("reader/h5: %w", catalog.Corrupt("hdf5", e.file, -1, "box table %s of %s: %s", path, e.path, what))
	}
	info, err := hf.Dataset(path)
	if err != nil {
		return err
	}
	rank := int64(len(a.Shape))
	if !info.Numeric || info.DType.Kind != catalog.Int || info.DType.Size != 8 || len(info.Shape) != 3 || info.Shape[1] != 2 || info.Shape[2] != rank {
		return bad(fmt.Sprintf("%s of shape %v, want int64 [box][2][%d]", info.TypeDesc, info.Shape, rank))
	}
	if info.Shape[0] > (1<<30)/(2*max(rank, 1)) {
		return bad(fmt.Sprintf("%d boxes", info.Shape[0]))
	}
	raw, err := hf.ReadRaw(path)
	if err != nil {
		return err
	}
	if int64(len(raw)) != info.Shape[0]*2*rank*8 {
		return bad(fmt.Sprintf("%d bytes", len(raw)))
	}
	bo := binary.ByteOrder(binary.LittleEndian)
	if info.DType.BigEndian {
		bo = binary.BigEndian
	}
	at := func(k int64) int64 { return int64(bo.Uint64(raw[8*k:])) }
	a.Boxes = make([]catalog.Box, info.Shape[0])
	for b := range info.Shape[0] {
		box := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
		for d := range rank {
			lo, hi := at((b*2)*rank+d)-a.Offset[d], at((b*2+1)*rank+d)-a.Offset[d]
			if lo < 0 || hi < lo || hi >= a.Shape[d] {
				return bad(fmt.Sprintf("box %d outside the array of shape %v at %v", b, a.Shape, a.Offset))
			}
			box.Lower[d], box.Count[d] = lo, hi-lo+1
		}
		a.Boxes[b] = box
	}
	return nil
}
