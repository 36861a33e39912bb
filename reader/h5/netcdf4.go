package h5

import (
	"fmt"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	ih5 "relayout/internal/h5"
	"relayout/reader/netcdf"
)

// netCDF-4 files are HDF5 files written by netCDF-C with conventions of
// their own (the netCDF User's Guide, "NetCDF-4 Format"):
//
//	/                       _NCProperties "version=2,netcdf=4.9.0,hdf5=1.10.8" (netCDF-C >= 4.4.1)
//	/<dim>                  a dimension without a coordinate variable: a dimension scale
//	                        whose NAME is "This is a netCDF dimension but not a netCDF
//	                        variable.<length>", no data written (its chunks read as fill)
//	/<coord>                a coordinate variable: a 1-D dimension scale named like its
//	                        dimension (NAME = the name)
//	/<var>                  DIMENSION_LIST: references to the scales of its dimensions;
//	                        _Netcdf4Coordinates / _Netcdf4Dimid: netCDF-C's dimension ids;
//	                        _FillValue as an attribute and as the HDF5 fill value
//
// A netCDF reader sees neither the dimension-only scales nor the attributes
// netCDF-C keeps for itself: relayout does the same, so that a variable's
// attributes are its netCDF attributes, and it names each dimension after
// its scale (catalog.Array.Dims).

// ncPropertiesAttr is the root attribute that marks a file written by
// netCDF-C 4.4.1 or later.
const ncPropertiesAttr = "_NCProperties"

// ncDimensionOnly starts the NAME of a dimension scale that netCDF-C
// writes for a dimension that has no coordinate variable.
const ncDimensionOnly = "This is a netCDF dimension but not a netCDF variable"

// ncHidden are the attributes netCDF-C stores but does not show as netCDF
// attributes (HDF5 dimension-scale bookkeeping included).
var ncHidden = []string{ncPropertiesAttr, "_Netcdf4Coordinates", "_Netcdf4Dimid", "_nc3_strict",
	"_NCEA", "CLASS", "NAME", "DIMENSION_LIST", "REFERENCE_LIST"}

// dropNCHidden returns as without netCDF-C's hidden attributes.
func dropNCHidden(as []catalog.Attr) []catalog.Attr {
	return slices.DeleteFunc(slices.Clone(as), func(a catalog.Attr) bool { return slices.Contains(ncHidden, a.Name) })
}

// ncDimensionOnlyReason says why the dataset at p of a netCDF-4 file is not
// a variable, or "" when it is one.
func ncDimensionOnlyReason(hf *ih5.File, p string, shape []int64) (string, error) {
	attrs, err := hf.Attrs(p)
	if err != nil {
		return "", err
	}
	name, _ := attrString(attrs, "NAME")
	if !strings.HasPrefix(name, ncDimensionOnly) {
		return "", nil
	}
	return fmt.Sprintf("netCDF dimension of length %v without a coordinate variable: a dimension, not data", shape), nil
}

// IsNetCDF4 reports whether path is an HDF5 file written by netCDF-C (its
// root has _NCProperties): a member of a stream of history files.
func IsNetCDF4(path string) bool {
	if _, err := fileio.CheckRegular(path); err != nil {
		return false
	}
	hf, err := ih5.Open(path)
	if err != nil {
		return false
	}
	defer hf.Close()
	attrs, err := hf.Attrs("/")
	return err == nil && hasAttr(attrs, ncPropertiesAttr)
}

// OpenNetCDF4Member describes the netCDF-4 file name (relative to root) as
// a member of a stream of history files (netcdf.NetCDF4Opener): every
// dataset of its root group with its dimension names, unlimited axes and
// netCDF attributes, and the blocks of the variables match selects,
// catalogued as buildArray catalogs any HDF5 dataset (chunks with their
// filters, a contiguous extent, compact bytes). The file stays open for
// Read until Close.
func OpenNetCDF4Member(root, name string, match func(string) bool) (*netcdf.NetCDF4File, error) {
	full := filepath.Join(root, filepath.FromSlash(name))
	size, err := fileio.CheckRegular(full)
	if err != nil {
		return nil, fmt.Errorf("reader/h5: %w", err)
	}
	hf, err := ih5.Open(full)
	if err != nil {
		return nil, err
	}
	var closed bool
	out := &netcdf.NetCDF4File{
		Read: func(v string, lower, count []int64, dst []byte) error {
			if closed {
				if hf, err = ih5.Open(full); err != nil {
					return err
				}
				closed = false
			}
			info, err := hf.Dataset("/" + v)
			if err != nil {
				return err
			}
			return hf.ReadHyperslab("/"+v, lower, count, info.DType, dst)
		},
		Close: func() error {
			if closed {
				return nil
			}
			closed = true
			return hf.Close()
		},
	}
	fail := func(err error) (*netcdf.NetCDF4File, error) {
		out.Close()
		return nil, err
	}
	attrs, err := hf.Attrs("/")
	if err != nil {
		return fail(err)
	}
	if !hasAttr(attrs, ncPropertiesAttr) {
		return fail(fmt.Errorf("reader/h5: %s: an HDF5 file without %s, not written by netCDF-C: not a member of a stream of netCDF history files: %w",
			name, ncPropertiesAttr, catalog.ErrUnsupported))
	}
	out.Attrs = dropNCHidden(attrs)
	err = hf.Walk(func(p string, isDataset bool) error {
		rel := strings.TrimPrefix(p, "/")
		if !isDataset || strings.Contains(rel, "/") {
			if out.Groups == "" {
				out.Groups = p
				if isDataset {
					out.Groups = pathpkg.Dir(p)
				}
			}
			return nil
		}
		info, err := hf.Dataset(p)
		if err != nil {
			return err
		}
		v := netcdf.NetCDF4Var{Name: rel, DType: info.DType, Numeric: info.Numeric, TypeDesc: info.TypeDesc,
			Shape: info.Shape, Unlimited: info.Unlimited}
		reason, err := ncDimensionOnlyReason(hf, p, info.Shape)
		if err != nil {
			return err
		}
		v.DimOnly = reason != ""
		if v.Dims, err = hf.DimensionNames(p); err != nil {
			return err
		}
		if v.Dims == nil {
			v.Dims = make([]string, len(info.Shape)) // no scales: refused as not netCDF
		}
		a, err := hf.Attrs(p)
		if err != nil {
			return err
		}
		v.Attrs = dropNCHidden(a)
		if !v.DimOnly && info.Numeric && (match == nil || match(rel)) {
			if err := supported(name, info); err != nil {
				return err
			}
			arr, err := buildArray(hf, name, size, p)
			if err != nil {
				return err
			}
			v.Blocks = arr.Blocks
		}
		out.Vars = append(out.Vars, v)
		return nil
	})
	if err != nil {
		return fail(err)
	}
	return out, nil
}
