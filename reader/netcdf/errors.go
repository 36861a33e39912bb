package netcdf

import "relayout/catalog"

// format is the CorruptError format of this reader.
const format = "netcdf"

func corruptAt(file string, off int64, what string, args ...any) error {
	return catalog.Corrupt(format, file, off, what, args...)
}
