package reader

// Folders that are not themselves a dataset (see openAs for those):
//
//	diags/diag1/                      a file-based series: two or more BP
//	  openpmd_000000.bp/  (BP4|BP5)   datasets (directories, or BP3 files)
//	  openpmd_000100.bp/              whose names differ only in one run of
//	  openpmd_000200.bp/              digits, PREFIX<T>SUFFIX: one dataset,
//	                                  iteration T (openPMD: from its paths)
//	picongpu-lwfa/                    a folder holding exactly one dataset
//	  PROVENANCE.txt                  (anything else in it is ignored) is
//	  pic_n2.bp/          (BP4)       that dataset; one level down only, so
//	                                  diags/ holding diag1/ (a series) works
//	archive/                          several unrelated datasets: refused,
//	  Attribute.2.5.bp4.bp/           listing them
//	  Common.2.10.bp4.bp/
//
// A path that is no dataset but lies inside one (md.idx, data.0, md.0 of a
// BP4/BP5 directory, a NAME.bp.dir sub-file, an AMReX plotfile's Header,
// Level_0/, Level_0/Cell_D_00000) is refused naming the dataset to pass.

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/reader/amrex"
	"relayout/reader/bp"
	"relayout/reader/h5"
	"relayout/reader/netcdf"
	"relayout/reader/scorpio"
)

// formatsRead is what the "not recognised" message lists.
const formatsRead = "relayout reads ADIOS2 BP3 files (NAME.bp), BP4 and BP5 directories, " +
	"HDF5 files (plain, openPMD, ADIOS2 HDF5 engine, Chombo), AMReX plotfiles, netCDF classic files " +
	"(CDF-1/2/5; a folder or glob of history files is one stream), relayout outputs, " +
	"and folders of these (a file-based series, or a folder holding one dataset)"

func notRecognised(path string) error {
	if msg := partOf(path); msg != "" {
		return fmt.Errorf("reader: %s: %s: %w", path, msg, catalog.ErrUnsupported)
	}
	return fmt.Errorf("reader: %s: not a recognised format (%s): %w", path, formatsRead, catalog.ErrUnsupported)
}

// candidate is one dataset found in a folder.
type candidate struct {
	name, kind string
	members    []bp.SeriesMember // a BP series folder (kind "BP series")
	err        error             // why that series cannot be opened
}

// kindOf names the format path is in, "" when it is none (openAs's cases).
func kindOf(path string, st os.FileInfo) string {
	switch {
	case st.IsDir() && fileExists(filepath.Join(path, catalog.ManifestName)):
		return "relayout output"
	case st.IsDir() && amrex.IsPlotfile(path):
		return "AMReX plotfile"
	case st.IsDir() && amrex.Detect(path):
		return "AMReX plotfiles"
	case st.IsDir() && dirHasHDF5(path) && !dirHasBP(path):
		return "HDF5 files"
	case !st.IsDir() && isHDF5(path) && (strings.EqualFold(filepath.Ext(path), ".nc") || h5.IsNetCDF4(path)):
		// A member of a stream of history files, or a file alone; one
		// named .nc that the library cannot open (damaged) is refused
		// as a member, by name, not taken for another dataset.
		return kindNetCDF4
	case !st.IsDir() && isHDF5(path):
		return "HDF5"
	case st.IsDir() && bp.IsBP4(path):
		return "BP4"
	case st.IsDir() && scorpio.Is(path):
		return kindSCORPIO
	case st.IsDir() && bp.IsBP5(path):
		return "BP5"
	case !st.IsDir() && strings.HasSuffix(path, ".bp") && bp.IsBP3(path):
		return "BP3"
	case !st.IsDir() && netcdf.IsClassic(path):
		return kindNetCDF
	}
	return ""
}

// stray is an entry of a folder that is no dataset, with what it is.
type stray struct{ name, what string }

// datasetsIn lists the datasets directly in dir (by name order) and the
// other entries; with deep, sub-folders that are a BP series count too.
func datasetsIn(dir string, deep bool) ([]candidate, []stray, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("reader: %w", err)
	}
	var out []candidate
	var others []stray
	for _, de := range des {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		full := filepath.Join(dir, de.Name())
		st, err := os.Stat(full) // follows symbolic links
		switch {
		case err != nil:
			others = append(others, stray{de.Name(), "cannot be read (" + err.Error() + ")"})
			continue
		case !st.IsDir() && !st.Mode().IsRegular():
			// FIFOs, devices and sockets are never opened (a FIFO blocks).
			others = append(others, stray{de.Name(), "is " + special(st.Mode())})
			continue
		}
		if k := kindOf(full, st); k != "" {
			out = append(out, candidate{name: de.Name(), kind: k})
			continue
		}
		what := "is not a dataset relayout reads"
		if st.IsDir() {
			what = "is a folder that is no dataset (a BP4/BP5 directory needs md.idx and md.0: an iteration cut short?)"
		}
		if k := bp.Shape(full); k != "" {
			// A BP dataset by its files whose index is damaged: say how.
			if ds, err := bp.OpenShaped(full, k, bp.Config{}); err != nil {
				what = "is a damaged " + k + " dataset (" + err.Error() + ")"
			} else {
				ds.Close()
			}
		}
		others = append(others, stray{de.Name(), what})
		if deep && st.IsDir() {
			sub, subOthers, err := datasetsIn(full, false)
			if err == nil {
				if m := seriesOf(sub); m != nil {
					others = others[:len(others)-1]
					out = append(out, candidate{name: de.Name(), kind: fmt.Sprintf("%s series of %d iterations", sub[0].kind, len(m)),
						members: m, err: checkStrays(full, m, subOthers)})
				}
			}
		}
	}
	return out, others, nil
}

// special names a file type that is neither regular nor a directory.
func special(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file (" + m.Type().String() + ")"
}

// checkStrays refuses a series beside an entry named like its iterations
// that is not one (an iteration cut short, a FIFO, a broken link): that
// iteration would otherwise go missing without a word.
func checkStrays(dir string, members []bp.SeriesMember, others []stray) error {
	pre, _, suf, _ := catalog.SplitIteration(members[0].Name)
	for _, o := range others {
		if p, _, s, ok := catalog.SplitIteration(o.name); ok && p == pre && s == suf {
			return fmt.Errorf("reader: %s: named like the iterations of the series %s (%s%%T%s) but %s: repair or remove it: %w",
				filepath.Join(dir, o.name), dir, pre, suf, o.what, catalog.ErrUnsupported)
		}
	}
	return nil
}

// seriesOf returns the members when cands are two or more BP datasets named
// PREFIX<T>SUFFIX with one prefix and suffix and distinct T, else nil.
func seriesOf(cands []candidate) []bp.SeriesMember {
	names := make([]string, len(cands))
	for i, c := range cands {
		if c.kind != "BP3" && c.kind != "BP4" && c.kind != "BP5" {
			return nil
		}
		names[i] = c.name
	}
	its := catalog.SeriesIterations(names)
	if its == nil {
		return nil
	}
	out := make([]bp.SeriesMember, len(cands))
	for i, c := range cands {
		out[i] = bp.SeriesMember{Name: c.name, Iteration: its[i]}
	}
	slices.SortFunc(out, func(a, b bp.SeriesMember) int { return cmp.Compare(a.Iteration, b.Iteration) })
	return out
}

// openFolder opens a directory that is no dataset itself: a series, or (when
// one is true) the single dataset it holds.
func openFolder(dir string, sel *selector, one bool) (Dataset, error) {
	cands, others, err := datasetsIn(dir, one)
	if err != nil {
		return nil, err
	}
	if m := seriesOf(cands); m != nil {
		if err := checkStrays(dir, m, others); err != nil {
			return nil, err
		}
		return nilIfErr(bp.OpenSeries(dir, m, bp.Config{Match: sel.match}))
	}
	if ds, err, ok := openHistoryFolder(dir, cands, sel); ok {
		return ds, err
	}
	if !one {
		return nil, notRecognised(dir)
	}
	switch len(cands) {
	case 0:
		if msg := partOf(dir); msg != "" {
			return nil, notRecognised(dir)
		}
		hint := ""
		if subs := foldersWithDatasets(dir, 10); len(subs) > 0 {
			hint = "; its sub-folders holding datasets: " + strings.Join(subs, ", ")
		}
		return nil, fmt.Errorf("reader: %s: no dataset in this folder (%s)%s: %w", dir, formatsRead, hint, catalog.ErrUnsupported)
	case 1:
		c := cands[0]
		full := filepath.Join(dir, c.name)
		if c.members != nil {
			if c.err != nil {
				return nil, c.err
			}
			return nilIfErr(bp.OpenSeries(full, c.members, bp.Config{Match: sel.match}))
		}
		st, err := os.Stat(full)
		if err != nil {
			return nil, fmt.Errorf("reader: %w", err)
		}
		return openAs(full, st, sel, false)
	}
	list := describe(cands)
	if len(list) > 20 {
		list = append(list[:20], fmt.Sprintf("... (%d in all)", len(list)))
	}
	return nil, fmt.Errorf("reader: %s: this folder holds %d unrelated datasets, pass one of them: %s: %w",
		dir, len(cands), strings.Join(list, ", "), catalog.ErrUnsupported)
}

// severalHDF5 refuses a directory of HDF5 files that are not one series.
func severalHDF5(dir string, why *h5.NotOneSeriesError) error {
	des, _ := os.ReadDir(dir)
	var list []string
	for _, de := range des {
		if ext := strings.ToLower(filepath.Ext(de.Name())); ext == ".h5" || ext == ".hdf5" {
			list = append(list, de.Name())
		}
	}
	if len(list) > 20 {
		list = append(list[:20], fmt.Sprintf("... (%d in all)", len(list)))
	}
	return fmt.Errorf("reader: %s: this folder holds HDF5 files that are not one series (%s step %d is in both %s and %s), pass one of them: %s: %w",
		dir, why.Var, why.Step, why.Files[0], why.Files[1], strings.Join(list, ", "), catalog.ErrUnsupported)
}

// describe lists cands for a message, "name (kind)" each, with the BP
// datasets of one name pattern shown once as PREFIX%TSUFFIX: a series that
// shares its folder with other datasets.
func describe(cands []candidate) []string {
	type group struct {
		kind string
		n    int
	}
	groups := map[string]*group{}
	key := func(c candidate) string {
		switch c.kind {
		case kindNetCDF, kindNetCDF4:
			return netcdf.StreamPrefix(c.name) + ".*"
		case kindSCORPIO:
			return netcdf.StreamPrefix(strings.TrimSuffix(c.name, ".bp")) + ".*.nc.bp"
		}
		if c.kind != "BP3" && c.kind != "BP4" && c.kind != "BP5" {
			return ""
		}
		if pre, _, suf, ok := catalog.SplitIteration(c.name); ok {
			return pre + "%T" + suf
		}
		return ""
	}
	for _, c := range cands {
		if k := key(c); k != "" {
			if g := groups[k]; g != nil {
				g.n++
			} else {
				groups[k] = &group{c.kind, 1}
			}
		}
	}
	var out []string
	for _, c := range cands {
		k := key(c)
		g := groups[k]
		switch {
		case k == "" || g.n == 1:
			out = append(out, fmt.Sprintf("%s (%s)", c.name, c.kind))
		case g.n > 1 && (g.kind == kindNetCDF || g.kind == kindNetCDF4 || g.kind == kindSCORPIO):
			out = append(out, fmt.Sprintf("%s (a stream of %d %s files)", k, g.n, g.kind))
			g.n = 0 // listed
		case g.n > 1:
			out = append(out, fmt.Sprintf("%s (%s series of %d iterations)", k, g.kind, g.n))
			g.n = 0 // listed
		}
	}
	return out
}

// foldersWithDatasets names up to max sub-folders of dir that hold datasets.
func foldersWithDatasets(dir string, max int) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		full := filepath.Join(dir, de.Name())
		if st, err := os.Stat(full); err != nil || !st.IsDir() || strings.HasPrefix(de.Name(), ".") {
			continue
		}
		if c, _, err := datasetsIn(full, false); err == nil && len(c) > 0 {
			if len(out) == max {
				return append(out, "...")
			}
			out = append(out, de.Name()+"/")
		}
	}
	return out
}

// partOf says which dataset path lies inside ("" none): its directory, or
// its directory's directory for an AMReX level's files.
func partOf(path string) string {
	p := filepath.Clean(path)
	for up := 0; up < 2; up++ {
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		shown := parent
		if shown == "." || shown == ".." || strings.HasSuffix(shown, string(filepath.Separator)+"..") {
			if abs, err := filepath.Abs(parent); err == nil {
				shown = abs
			}
		}
		switch {
		case bp.IsBP4(parent):
			return fmt.Sprintf("this is part of the BP4 dataset %s: pass that directory", shown)
		case bp.IsBP5(parent):
			return fmt.Sprintf("this is part of the BP5 dataset %s: pass that directory", shown)
		case strings.HasSuffix(parent, ".bp.dir") && bp.IsBP3(strings.TrimSuffix(parent, ".dir")):
			return fmt.Sprintf("this is part of the BP3 dataset %s (a sub-file of it): pass that file", strings.TrimSuffix(shown, ".dir"))
		case amrex.IsPlotfile(parent):
			return fmt.Sprintf("this is part of the AMReX plotfile %s: pass that directory", shown)
		}
		p = parent
	}
	return ""
}
