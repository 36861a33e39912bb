package scorpio

import (
	"context"
	"fmt"
	"slices"

	"relayout/catalog"
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

// Info describes the dataset for the catalog.
func (d *Dataset) Info() catalog.DatasetInfo {
	return catalog.DatasetInfo{Path: d.Path, Root: d.Path, Format: FormatName, Attrs: slices.Clone(d.Attrs), Skipped: slices.Clone(d.skipped)}
}

// Scan emits one array per selected variable, by name.
func (d *Dataset) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	vars := slices.Clone(d.vars)
	slices.SortFunc(vars, func(a, b *Var) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	for _, v := range vars {
		if d.match != nil && !d.match(v.Name) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := d.array(ctx, v)
		if err != nil {
			return err
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	return nil
}

// array is v's catalog array (see above).
func (d *Dataset) array(ctx context.Context, v *Var) (*catalog.Array, error) {
	dt := v.Type
	a := &catalog.Array{
		Var: v.Name, DType: dt,
		Shape:  slices.Clone(v.Shape),
		Offset: make([]int64, len(v.Shape)),
		Dims:   slices.Clone(v.Dims),
		Attrs:  slices.Clone(v.Attrs),
		Fill:   d.FillValue(v, nil),
		Source: fmt.Sprintf("%s (SCORPIO %s):%s", d.Path, v.Kind, v.Name),
	}
	if len(a.Dims) == 0 {
		a.Dims = nil
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
			b := catalog.Block{Box: box, Rank: -1, Order: catalog.RowMajor,
				Codecs: []catalog.Codec{{Name: DarrayCodec, Dataset: v.Name, Params: []uint32{uint32(i)}}}}
			if len(w.Blocks) > 0 {
				b.File, b.Offset = w.Blocks[0].File, w.Blocks[0].Offset
			}
			for g := range w.Blocks {
				b.Length += w.Blocks[g].Length
			}
			a.Blocks = append(a.Blocks, b)
		}
	case PutVar:
		for i := range v.Blobs {
			bl := &v.Blobs[i]
			start, count, err := d.blobHeader(ctx, v, bl)
			if err != nil {
				return nil, err
			}
			box := catalog.Box{Lower: start, Count: count}
			if !insideShape(box, v.Shape) {
				return nil, catalog.Corrupt("scorpio", bl.Block.File, bl.Block.Offset, "variable %q: put_var start %v count %v outside shape %v", v.Name, start, count, v.Shape)
			}
			if box.Elements() == 0 {
				continue
			}
			a.Blocks = append(a.Blocks, catalog.Block{Box: box, Rank: -1, Order: catalog.RowMajor,
				File: bl.Block.File, Offset: bl.Block.Offset, Length: bl.Block.Length,
				Codecs: []catalog.Codec{{Name: BlobCodec, Dataset: v.Name, Params: []uint32{uint32(i)}}}})
		}
	}
	return a, nil
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

// ReadBlock returns the decoded bytes of a block Scan emitted: a darray
// write placed over its box, or a put_var call's values.
func (d *Dataset) ReadBlock(ctx context.Context, b *catalog.Block, dt catalog.DType) ([]byte, error) {
	if len(b.Codecs) != 1 || len(b.Codecs[0].Params) != 1 {
		return nil, fmt.Errorf("scorpio: %s: a block that is no SCORPIO write (codecs %v): %w", d.Path, b.Codecs, catalog.ErrCorrupt)
	}
	c := b.Codecs[0]
	v := d.byName[c.Dataset]
	i := int(c.Params[0])
	switch {
	case v == nil:
		return nil, fmt.Errorf("scorpio: %s: no variable %q: %w", d.Path, c.Dataset, catalog.ErrCorrupt)
	case c.Name == DarrayCodec && i < len(v.Writes):
		w := &v.Writes[i]
		p, err := d.Plan(ctx, w.Decomp)
		if err != nil {
			return nil, err
		}
		if n := b.Box.Elements(); n != p.Elems {
			return nil, corrupt("variable %q write %d: decomposition %d places %d elements, the variable's %v has %d", v.Name, i, w.Decomp, p.Elems, b.Box.Count, n)
		}
		dst := make([]byte, p.Elems*int64(v.Type.Size))
		return dst, d.ReadWrite(ctx, v, w, dst, nil)
	case c.Name == BlobCodec && i < len(v.Blobs):
		_, count, data, err := d.ReadBlob(ctx, v, &v.Blobs[i])
		if err != nil {
			return nil, err
		}
		if !slices.Equal(count, b.Box.Count) {
			return nil, catalog.Corrupt("scorpio", b.File, b.Offset, "variable %q: put_var count %v, catalogued %v", v.Name, count, b.Box.Count)
		}
		return slices.Clone(data), nil
	}
	return nil, fmt.Errorf("scorpio: %s: variable %q: %s block %d of %d writes, %d put_var calls: %w", d.Path, v.Name, c.Name, i, len(v.Writes), len(v.Blobs), catalog.ErrCorrupt)
}

// ReadBlocks implements catalog.BatchSource: each block read on its own
// (a darray write gathers its I/O groups' blocks itself).
func (d *Dataset) ReadBlocks(ctx context.Context, blocks []*catalog.Block, dt catalog.DType, fn func(i int, data []byte) error) error {
	for i, b := range blocks {
		data, err := d.ReadBlock(ctx, b, dt)
		if err != nil {
			return err
		}
		if err := fn(i, data); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlocksMixed implements catalog.MixedBatchSource like ReadBlocks.
func (d *Dataset) ReadBlocksMixed(ctx context.Context, blocks []*catalog.Block, dts []catalog.DType, fn func(i int, data []byte) error) error {
	for i, b := range blocks {
		data, err := d.ReadBlock(ctx, b, dts[i])
		if err != nil {
			return err
		}
		if err := fn(i, data); err != nil {
			return err
		}
	}
	return nil
}

// ReadBlockInto implements catalog.IOSource for blocks without codecs, which
// a SCORPIO dataset has none of.
func (d *Dataset) ReadBlockInto(ctx context.Context, b *catalog.Block, dst []byte) error {
	return fmt.Errorf("scorpio: %s: every block has a codec: %w", d.Path, catalog.ErrCorrupt)
}

// IOStats counts the reads of the BP files.
func (d *Dataset) IOStats() catalog.IOCounters { return d.bp.IOStats() }
