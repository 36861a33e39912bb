package rewriter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"relayout/catalog"
	"relayout/internal/h5"
)

// The netCDF time-series structure. A netCDF input (classic history files,
// a stream of them, or netCDF-4) is written as one netCDF-4 file per
// variable, the time series climate analysis reads (what `ncclimo --split`
// makes), which netCDF-C, NCO, xarray, netCDF4-python and h5py open as it
// is:
//
//	/                 the input's global attributes, with a line naming this run
//	                  prepended to history (NCO's convention: newest first)
//	/<var>            the variable over its full record axis: its attributes unchanged,
//	                  _FillValue also its HDF5 fill value, its dimensions' scales attached
//	                  (DIMENSION_LIST); over the record dimension, chunked and unlimited
//	                  along it (see Unlimited dimensions below)
//	/<coord>          the coordinate variable of each dimension of a dataset of the file
//	                  (the input variable named like the dimension, over that dimension
//	                  alone), copied, made the dimension's HDF5 dimension scale
//	/<dim>            a dimension without a coordinate variable: a dimension scale whose
//	                  NAME is netCDF-4's "This is a netCDF dimension but not a netCDF
//	                  variable.", its data never written (it takes no bytes)
//	/<ancillary>      the variables that the variable's and its coordinates' bounds,
//	                  climatology, coordinates and cell_measures attributes name
//	                  (time_bnds, lat, area), copied with their own dimensions
//
// The copies are datasets of the file's manifest entry whose Var names the
// variable they hold: the engine writes them like any array (their units
// read their input blocks), and package verify checks them against the
// input's arrays like the file's own. A name an attribute gives that is no
// numeric variable of the catalog (a text variable, one not selected) is
// left out: the catalog's skipped list already names text variables.

// isNetCDF reports whether format is a netCDF input's (reader/netcdf's
// "netcdf-classic", reader/h5's "netcdf4").
func isNetCDF(format string) bool { return strings.HasPrefix(format, "netcdf") }

// ext is what the output files' names end with: ".h5", or for netCDF
// time series ".nc" after the stream's first and last year and month, as
// ncclimo names them (T_185001_201412.nc), when its files' names give them.
func (fc fileConfig) ext() string {
	switch {
	case !fc.netCDF:
		return ".h5"
	case len(fc.span) == 2:
		return "_" + fc.span[0] + "_" + fc.span[1] + ".nc"
	}
	return ".nc"
}

// netCDFRoot is the root attributes of every netCDF file: the input's
// global attributes, history with a line for this run first.
func netCDFRoot(info catalog.DatasetInfo, version string, now time.Time) []catalog.Attr {
	line := fmt.Sprintf("%s: relayout %s: time series of %s", now.UTC().Format("Mon Jan  2 15:04:05 2006"), version, info.Path)
	root := slices.Clone(info.Attrs)
	for i := range root {
		if root[i].Name == "history" && len(root[i].Strings) == 1 {
			root[i] = strAttr("history", line+"\n"+root[i].Strings[0])
			return root
		}
	}
	return append(root, strAttr("history", line))
}

// ncDimensionOnly is the NAME netCDF-4 gives the dimension scale of a
// dimension without a coordinate variable (netCDF-C hides the dataset).
const ncDimensionOnly = "This is a netCDF dimension but not a netCDF variable."

// ncAncillaryAttrs are the CF attributes naming variables a variable
// needs beside it; cell_measures is "measure: name" pairs.
var ncAncillaryAttrs = []string{"bounds", "climatology", "coordinates", "cell_measures"}

// ncHeaders is every variable's array header, by name, read from the
// catalog once for all files (a netCDF variable has one array): each file
// looks up its coordinates and ancillaries here (131 files of an EAM-like
// stream asked the catalog 8 times each, 0.25 CPU-s of Prepare's 0.42).
type ncHeaders map[string]*catalog.Array

func loadNCHeaders(ctx context.Context, store *catalog.Store, vars []catalog.VarSummary) (ncHeaders, error) {
	h := ncHeaders{}
	for _, v := range vars {
		n := 0
		err := store.EachArrayHeader(ctx, v.Name, func(a *catalog.Array) error {
			h[v.Name], n = a, n+1
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n != 1 {
			delete(h, v.Name) // not a netCDF variable's one array
		}
	}
	return h, nil
}

// members is the arrays (headers) the file of variable name holds: its
// own first, then, in the order found, the coordinate variables of their
// dimensions and the ancillary variables their attributes name.
func (h ncHeaders) members(name string) []*catalog.Array {
	var members []*catalog.Array
	seen := map[string]bool{}
	var add func(v string)
	add = func(v string) {
		a := h[v]
		if seen[v] || a == nil { // nil: no such variable in the catalog (not selected)
			return
		}
		seen[v] = true
		members = append(members, a)
		for _, d := range a.Dims {
			if d != "" && d != a.Var && h.isCoordinate(d) {
				add(d)
			}
		}
		for _, an := range ncAncillaryAttrs {
			for _, ref := range attrNames(a.Attrs, an) {
				add(ref)
			}
		}
	}
	add(name)
	return members
}

// isCoordinate reports whether variable d is the coordinate variable of
// dimension d.
func (h ncHeaders) isCoordinate(d string) bool { return h[d] != nil && isCoordinate(h[d]) }

// isCoordinate reports whether a is a coordinate variable: over one
// dimension, of its own name.
func isCoordinate(a *catalog.Array) bool { return len(a.Dims) == 1 && a.Dims[0] == a.Var }

// attrNames is the variable names attribute name of as gives: its words
// ("lat lon"), or for cell_measures the word after each "measure:".
func attrNames(as []catalog.Attr, name string) []string {
	a := findAttr(as, name)
	if a == nil || len(a.Strings) == 0 {
		return nil
	}
	words := strings.Fields(strings.Join(a.Strings, " "))
	if name != "cell_measures" {
		return words
	}
	var out []string
	for _, w := range words {
		if !strings.HasSuffix(w, ":") {
			out = append(out, w)
		}
	}
	return out
}

// writeNetCDF creates the netCDF structure of variable name's file (see
// above): its datasets, their attributes and dimension scales. It returns
// each dataset's target, by array key.
func writeNetCDF(ctx context.Context, w *h5.Writer, store *catalog.Store, name string, fc fileConfig, opts Options,
	mv *catalog.ManifestVariable, st *varStats) (map[catalog.Key]contigTarget, error) {
	if err := w.SetAttrs("/", fc.root); err != nil {
		return nil, fmt.Errorf("rewriter: %s: %w", name, err)
	}
	members := fc.ncHeaders.members(name)
	if len(members) == 0 {
		return nil, fmt.Errorf("rewriter: %s: no array in the catalog: %w", name, catalog.ErrNotFound)
	}
	contig := map[catalog.Key]contigTarget{}
	paths := map[string]bool{}
	coords := map[string]bool{} // the dimensions whose coordinate variable the file holds
	for i, a := range members {
		path := "/" + strings.Trim(a.Var, "/")
		coords[a.Var] = isCoordinate(a)
		entry, t, _, err := createData(w, store, fc.holes, a, path, opts)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			entry.Var = a.Var
		}
		t.entry = len(mv.Datasets)
		contig[a.Key()] = t
		if err := w.SetAttrs(path, a.Attrs); err != nil {
			return nil, arrayErr(a.Key(), err)
		}
		mv.Datasets = append(mv.Datasets, entry)
		paths[path] = true
		st.arrays++
		st.bytes += a.Bytes()
	}
	// The dimensions, in the order first met: each a scale, attached to
	// every dataset over it.
	var dims []string
	length := map[string]int64{}
	for _, a := range members {
		if len(a.Dims) != len(a.Shape) {
			continue // dimensions without names (a netCDF-4 dataset of plain HDF5)
		}
		for k, d := range a.Dims {
			if d == "" {
				continue
			}
			n, ok := length[d]
			switch {
			case !ok:
				dims, length[d] = append(dims, d), a.Shape[k]
			case n != a.Shape[k]:
				return nil, arrayErr(a.Key(), fmt.Errorf("dimension %s of length %d, %d in %s: %w", d, a.Shape[k], n, members[0].Var, catalog.ErrCorrupt))
			}
		}
	}
	scale := map[string]string{} // dimension -> its NAME
	for _, d := range dims {
		path := "/" + d
		switch {
		case coords[d]: // its coordinate variable is its scale, even where no other dataset is over it
			if err := w.MakeScale(path, d); err != nil {
				return nil, fmt.Errorf("rewriter: %s: dimension %s: %w", name, d, err)
			}
			scale[d] = d
		case paths[path]:
			continue // a variable of the file has the name but is not its coordinate: no scale
		default:
			n := length[d]
			spec := h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Float, Size: 4}, Shape: []int64{n}}
			if n > 0 {
				spec.Chunk = []int64{min(n, 1<<20)} // never written: no chunk allocated
			}
			if slices.Contains(opts.unlimited, d) { // a record dimension without a coordinate variable (MPAS's Time)
				spec.Chunk, spec.Unlimited = []int64{max(1, min(n, 1<<20))}, []bool{true}
			}
			ds, err := w.CreateDataset(path, spec)
			if err == nil {
				err = ds.Close()
			}
			if err != nil {
				return nil, fmt.Errorf("rewriter: %s: dimension %s: %w", name, d, err)
			}
			scale[d] = fmt.Sprintf("%s%10d", ncDimensionOnly, n)
		}
	}
	for _, a := range members {
		if len(a.Dims) != len(a.Shape) {
			continue
		}
		for k, d := range a.Dims {
			if scale[d] == "" || isCoordinate(a) {
				continue // no scale; a coordinate variable is its own
			}
			if err := w.AttachScale("/"+strings.Trim(a.Var, "/"), k, "/"+d, scale[d]); err != nil {
				return nil, arrayErr(a.Key(), err)
			}
		}
	}
	return contig, nil
}

// eachFileArray calls fn with every array (with its blocks) of the file of
// manifest entry mv: its own variable's and, in a netCDF time series, the
// coordinate and ancillary variables copied beside it. copies keeps the
// arrays copied, read from the catalog once for every file that holds
// them (time and lat in each of E3SM's 414 files: 2,500 catalog reads,
// 0.4 CPU-s of Prepare); fn must not modify an array.
func eachFileArray(ctx context.Context, store *catalog.Store, mv *catalog.ManifestVariable, copies map[catalog.Key]*catalog.Array,
	fn func(*catalog.Array) error) error {
	if err := store.EachArray(ctx, mv.Name, fn); err != nil {
		return err
	}
	for i := range mv.Datasets {
		d := &mv.Datasets[i]
		if !mv.IsCopy(d) {
			continue
		}
		k := mv.Key(d)
		a := copies[k]
		if a == nil {
			var err error
			if a, err = store.Array(k); err != nil {
				return err
			}
			copies[k] = a
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	return nil
}

// Unlimited dimensions. A netCDF time series keeps the input's record
// dimension unlimited, as ncclimo's and every netCDF-C writer's do: ncdump
// shows "time = UNLIMITED ; // (N currently)", netCDF4-python and xarray
// report it, and ncrcat appends the next period's records along it. In
// netCDF-4 a dimension is unlimited when its dimension scale's maximum size
// is H5S_UNLIMITED (netCDF-C reads nothing else), and HDF5 gives a dataset
// an unlimited axis only with chunked storage: every array over an
// unlimited dimension (the variable, time, time_bnds, date_written, and
// the dimension-only scale of a record dimension without a coordinate
// variable) is chunked (planner.RecordLayout: its chunks and why) and
// created with that axis unlimited.
