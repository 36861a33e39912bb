package reader

// netCDF classic history files (reader/netcdf) come one file per output
// interval; a run of them is one stream, one dataset whose record dimension
// runs across the files:
//
//	hist/                                            a folder of classic files
//	  mpaso.hist.am.timeSeriesStatsMonthly.0002-01-01.nc   sharing one stream
//	  mpaso.hist.am.timeSeriesStatsMonthly.0002-02-01.nc   prefix (the name less
//	  ...                                                  its date/time part) is
//	                                                       that stream;
//	  mpaso.rst.0001-01-06_00000.nc                  another prefix beside it
//	                                                 makes the folder refused,
//	                                                 listing the streams;
//	'hist/mpaso.hist.*'                              a glob (a path that does not
//	                                                 exist, with * ? [) selects
//	                                                 one stream.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/h5"
	"relayout/reader/netcdf"
	"relayout/reader/scorpio"
)

// Candidate kinds of history files in a folder: a netCDF classic file, a
// netCDF-4 file (HDF5 written by netCDF-C: a stream may mix both, read by
// reader/netcdf with h5.OpenNetCDF4Member describing the netCDF-4 ones), a
// SCORPIO ADIOS dataset (NAME.nc.bp).
const (
	kindNetCDF  = "netCDF classic"
	kindNetCDF4 = "netCDF-4"
	kindSCORPIO = "SCORPIO BP"
)

// openNetCDFStream opens the netCDF files names (relative to root; classic
// and netCDF-4 ones) as the one stream they form; path is what the user
// gave, kind what a damaged member's error calls it.
func openNetCDFStream(path, kind, root string, names []string, sel *selector) (Dataset, error) {
	d, err := netcdf.Open(root, names, netcdf.Config{Match: sel.match}, h5.OpenNetCDF4Member)
	if err != nil {
		return nil, brokenErr(path, kind, err)
	}
	d.SetPath(path)
	return d, nil
}

// isGlob reports whether path holds glob metacharacters.
func isGlob(path string) bool { return strings.ContainsAny(path, "*?[") }

// GlobMatches is what Open reads when path does not exist but is a pattern
// (a stream of history files selected by a glob): the files it matches,
// sorted, each as InputPath gives it (SCORPIO's links as their folders,
// each once); nil when path exists, is no pattern or matches nothing.
func GlobMatches(path string) []string {
	if _, err := os.Lstat(path); err == nil || !isGlob(path) {
		return nil
	}
	m, _ := filepath.Glob(path)
	var out []string
	for _, p := range m {
		if p = InputPath(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// InputPath is what path's input lives in: SCORPIO's NAME.nc, a link to
// NAME.nc.bp/md.0, stands for its NAME.nc.bp folder; any other path for
// itself.
func InputPath(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return path
	}
	if dir := scorpio.Resolve(path); dir != "" && scorpio.Is(path) {
		return dir
	}
	return path
}

// streams groups netCDF file names (relative to one root) by stream
// prefix, in the order of the prefixes.
func streams(names []string) (prefixes []string, groups map[string][]string) {
	groups = map[string][]string{}
	for _, n := range names {
		p := netcdf.StreamPrefix(n)
		if groups[p] == nil {
			prefixes = append(prefixes, p)
		}
		groups[p] = append(groups[p], n)
	}
	slices.Sort(prefixes)
	return prefixes, groups
}

// streamList is "mpaso.hist.am.timeSeriesStatsMonthly.* (12 files), mpaso.rst.* (1 file)".
func streamList(prefixes []string, groups map[string][]string) string {
	var out []string
	for i, p := range prefixes {
		if i == 20 {
			out = append(out, fmt.Sprintf("... (%d in all)", len(prefixes)))
			break
		}
		n := len(groups[p])
		s := "s"
		if n == 1 {
			s = ""
		}
		out = append(out, fmt.Sprintf("%s.* (%d file%s)", p, n, s))
	}
	return strings.Join(out, ", ")
}

// openHistoryFolder opens a folder whose datasets are all netCDF files
// (classic or netCDF-4, but for a lone netCDF-4 file, which reader/h5
// reads), or all SCORPIO datasets, as the one stream they form; ok is false
// when the folder holds anything else (openFolder's other rules apply).
func openHistoryFolder(dir string, cands []candidate, sel *selector) (ds Dataset, err error, ok bool) {
	if len(cands) == 0 {
		return nil, nil, false
	}
	names := make([]string, len(cands))
	scorpios, nc4 := 0, 0
	for i, c := range cands {
		switch c.kind {
		case kindNetCDF:
		case kindNetCDF4:
			nc4++
		case kindSCORPIO:
			scorpios++
		default:
			return nil, nil, false
		}
		names[i] = c.name
	}
	if nc4 == 1 && len(cands) == 1 {
		return nil, nil, false
	}
	if scorpios == len(cands) {
		ds, err := openSCORPIOStream(dir, dir, names, sel)
		return ds, err, true
	}
	if scorpios > 0 {
		return nil, nil, false
	}
	files := "netCDF classic files"
	if nc4 > 0 {
		files = "netCDF files"
	}
	prefixes, groups := streams(names)
	if len(prefixes) > 1 {
		return nil, fmt.Errorf("reader: %s: this folder holds %d streams of %s: %s; select one: pass it as a glob, e.g. '%s', "+
			"or a folder holding only its files (symbolic links to them will do): %w",
			dir, len(prefixes), files, streamList(prefixes, groups), filepath.Join(dir, prefixes[0]+".*"), catalog.ErrUnsupported), true
	}
	kind := "folder of " + files
	ds, err = openNetCDFStream(dir, kind, dir, names, sel)
	return ds, err, true
}

// openGlob opens the history files pattern matches as one stream: netCDF
// classic files, or SCORPIO's ADIOS datasets (NAME.nc.bp, or the NAME.nc
// links beside them: each dataset once).
func openGlob(pattern string, sel *selector) (Dataset, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("reader: %s: not a valid glob pattern (%v): %w", pattern, err, catalog.ErrUnsupported)
	}
	if len(matches) == 0 {
		return nil, fmt.Errorf("reader: %s: no file matches this pattern: %w", pattern, catalog.ErrNotFound)
	}
	if scorpio.Is(matches[0]) {
		return openSCORPIOGlob(pattern, matches, sel)
	}
	nc4 := 0
	for _, m := range matches {
		if _, err := fileio.CheckRegular(m); err != nil {
			return nil, fmt.Errorf("reader: %s: %w", pattern, err)
		}
		if netcdf.IsClassic(m) {
			continue
		}
		if !isHDF5(m) {
			return nil, fmt.Errorf("reader: %s: matches %s, which is not a netCDF classic file nor a netCDF-4 one (a glob selects a stream of netCDF history files): %w",
				pattern, m, catalog.ErrUnsupported)
		}
		nc4++ // a netCDF-4 member, or refused as one (h5.OpenNetCDF4Member: damaged, or not written by netCDF-C)
	}
	root, names, err := relativeToCommon(pattern, matches)
	if err != nil {
		return nil, err
	}
	files := "netCDF classic files"
	if nc4 > 0 {
		files = "netCDF files"
	}
	prefixes, groups := streams(names)
	if len(prefixes) > 1 {
		return nil, fmt.Errorf("reader: %s: matches %d streams of %s: %s; narrow the pattern to one: %w",
			pattern, len(prefixes), files, streamList(prefixes, groups), catalog.ErrUnsupported)
	}
	kind := "stream of " + files
	return openNetCDFStream(pattern, kind, root, names, sel)
}

// relativeToCommon names matches relative to their common folder.
func relativeToCommon(pattern string, matches []string) (root string, names []string, err error) {
	root = filepath.Dir(matches[0])
	for _, m := range matches[1:] {
		for !strings.HasPrefix(m, root+string(filepath.Separator)) && root != "/" && root != "." {
			root = filepath.Dir(root)
		}
	}
	names = make([]string, len(matches))
	for i, m := range matches {
		if names[i], err = filepath.Rel(root, m); err != nil {
			return "", nil, fmt.Errorf("reader: %s: %w", pattern, err)
		}
	}
	return root, names, nil
}

// openSCORPIOGlob opens the SCORPIO datasets a pattern matches as one
// stream ('case.eam.h0.*.nc.bp', or 'case.eam.h0.*.nc' for their links).
func openSCORPIOGlob(pattern string, matches []string, sel *selector) (Dataset, error) {
	var dirs []string
	for _, m := range matches {
		dir := scorpio.Resolve(m)
		if dir == "" || !scorpio.Is(m) {
			return nil, fmt.Errorf("reader: %s: matches %s, which is not a SCORPIO BP dataset as %s is (a glob selects one stream of history files): %w",
				pattern, m, matches[0], catalog.ErrUnsupported)
		}
		if !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	root, names, err := relativeToCommon(pattern, dirs)
	if err != nil {
		return nil, err
	}
	return openSCORPIOStream(pattern, root, names, sel)
}

// openSCORPIOStream opens SCORPIO datasets names (relative to root) as the
// one stream they must form; path is what the user gave.
func openSCORPIOStream(path, root string, names []string, sel *selector) (Dataset, error) {
	trimmed := make([]string, len(names))
	for i, n := range names {
		trimmed[i] = strings.TrimSuffix(n, ".bp") // NAME.nc
	}
	prefixes, groups := streams(trimmed)
	if len(prefixes) > 1 {
		return nil, fmt.Errorf("reader: %s: %d streams of SCORPIO files: %s; select one with a glob, e.g. '%s': %w",
			path, len(prefixes), streamList(prefixes, groups), filepath.Join(root, prefixes[0]+".*.nc.bp"), catalog.ErrUnsupported)
	}
	s, err := scorpio.OpenStream(root, names, scorpio.Config{Match: sel.match})
	if err != nil {
		return nil, brokenErr(path, "stream of SCORPIO BP datasets", err)
	}
	s.SetPath(path)
	return s, nil
}
