package h5

import (
	"fmt"
	"slices"
	"strings"

	"relayout/catalog"
	ih5 "relayout/internal/h5"
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
