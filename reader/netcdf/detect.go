package netcdf

import (
	"io"
	"path/filepath"
	"strings"

	"relayout/internal/fileio"
)

// IsClassic reports whether path is a regular file that starts like a
// netCDF classic file: "CDF" and version byte 1, 2 or 5. (netCDF-4 files
// are HDF5 files, read by reader/h5.)
func IsClassic(path string) bool {
	f, _, err := fileio.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return false
	}
	return string(b[:3]) == "CDF" && (b[3] == 1 || b[3] == 2 || b[3] == 5)
}

// StreamPrefix is the stream a history file belongs to: its name without
// the extension and the trailing date/time part, the dot-separated fields
// at the end made of digits, '-', '_' and ':' only.
//
//	mpaso.hist.am.timeSeriesStatsMonthly.0002-01-01.nc -> mpaso.hist.am.timeSeriesStatsMonthly
//	case.eam.h0.0001-01.nc                             -> case.eam.h0
//	mpaso.rst.0001-01-06_00000.nc                      -> mpaso.rst
//	output.0001-01-01_00.00.00.nc                      -> output
//	f_case_h0.nc                                       -> f_case_h0
func StreamPrefix(name string) string {
	base := filepath.Base(name)
	for _, ext := range []string{".nc", ".nc3", ".cdf"} {
		if s, ok := strings.CutSuffix(base, ext); ok {
			base = s
			break
		}
	}
	for {
		i := strings.LastIndexByte(base, '.')
		if i <= 0 || !isDateTime(base[i+1:]) {
			return base
		}
		base = base[:i]
	}
}

// DateSpan is the year and month that the names of a stream's first and
// last files give after their stream prefix ("case.eam.h0.0001-01.nc",
// "mpaso.hist.am.timeSeriesStatsMonthly.0002-12-01.nc": "000101",
// "000212"), as ncclimo names its time series; nil when either name has
// no YYYY-MM date there.
func DateSpan(first, last string) []string {
	var span []string
	for _, name := range []string{first, last} {
		base := filepath.Base(name)
		p := StreamPrefix(base)
		date, ok := strings.CutPrefix(base, p+".")
		if !ok || len(date) < 7 || date[4] != '-' || !allDigits(date[:4]) || !allDigits(date[5:7]) {
			return nil
		}
		span = append(span, date[:4]+date[5:7])
	}
	return span
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func isDateTime(s string) bool {
	digit := false
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digit = true
		case r == '-' || r == '_' || r == ':':
		default:
			return false
		}
	}
	return digit
}
