package reader

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/amrex"
	"relayout/reader/bp"
	"relayout/reader/chombo"
	"relayout/reader/h5"
	"relayout/reader/netcdf"
	"relayout/reader/scorpio"
)

// Options selects what Open catalogues.
type Options struct {
	// Vars are variable names or path.Match globs; empty means all. A pattern
	// also selects the variables below a matching name: "B" and "B/*" both
	// select "B/x", "*" selects everything.
	Vars []string
	// Strict refuses an incomplete input (the Skipped entries of
	// catalog.Incomplete) instead of converting what is complete; the
	// catalog build checks it after Scan.
	Strict bool
}

// Dataset is an opened input.
type Dataset interface {
	Info() catalog.DatasetInfo
	// Scan streams the selected arrays, each with its blocks, ordered by
	// variable name, then step and level. An array emitted is the
	// callee's: the reader does not touch it again (the catalog keeps
	// block lists as they are, catalog.Store.Put).
	Scan(ctx context.Context, emit func(*catalog.Array) error) error
	catalog.Source
	Close() error
}

// Resident prepares what ds keeps in memory to read its blocks beyond the
// catalog's block lists, and returns about its bytes: the decomposition
// plans of a SCORPIO stream (built now, each once, and used by the reads);
// 0 for the formats that keep nothing such. An in-memory job charges it to
// --max-mem before it cuts the budget of its data buffers, as it charges
// the block lists it keeps.
func Resident(ctx context.Context, ds Dataset) (int64, error) {
	if r, ok := ds.(interface {
		Resident(context.Context) (int64, error)
	}); ok {
		return r.Resident(ctx)
	}
	return 0, nil
}

// Open detects the format of path and opens it. A missing path wraps
// catalog.ErrNotFound; an unknown format wraps catalog.ErrUnsupported; a
// pattern in opts.Vars that selects nothing wraps catalog.ErrNotFound.
func Open(path string, opts Options) (Dataset, error) {
	sel, err := newSelector(opts.Vars)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && isGlob(path) {
			// No such file, but a pattern: the netCDF history files it
			// matches, as one stream (netcdf.go).
			ds, err := openGlob(path, sel)
			if err != nil {
				return nil, err
			}
			return checkUnused(path, ds, sel)
		}
		if errors.Is(err, os.ErrNotExist) && scorpio.Is(path) {
			// NAME.nc, SCORPIO's link to NAME.nc.bp/md.0, dangling
			// where the model wrote it under another path.
			ds, err := openSCORPIO(path, sel)
			if err != nil {
				return nil, err
			}
			return checkUnused(path, ds, sel)
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reader: %s: %w", path, catalog.ErrNotFound)
		}
		return nil, fmt.Errorf("reader: %w", err)
	}
	if !st.IsDir() {
		// A FIFO, device or symlink loop given as the input is refused by
		// name before any detection opens it.
		if _, err := fileio.CheckRegular(path); err != nil {
			return nil, fmt.Errorf("reader: %w", err)
		}
	}
	ds, err := openAs(path, st, sel, true)
	if err != nil {
		return nil, err
	}
	return checkUnused(path, ds, sel)
}

// checkUnused refuses a selection pattern that matched nothing.
func checkUnused(path string, ds Dataset, sel *selector) (Dataset, error) {
	if unused := sel.unused(); len(unused) > 0 {
		ds.Close()
		return nil, &NoMatchError{Path: path, Pattern: unused[0], Names: sel.all()}
	}
	return ds, nil
}

// openAs opens path in the format its content shows. A directory that is
// none of them is tried as a folder (folder.go): a file-based series, or the
// one dataset it holds when folder is true.
func openAs(path string, st os.FileInfo, sel *selector, folder bool) (Dataset, error) {
	// Each format's reader takes the selection as a match function and
	// returns a type that satisfies Dataset; add new formats as cases here
	// and in kindOf.
	cfg := h5.Config{Match: sel.match}
	h5dir := st.IsDir() && dirHasHDF5(path) && !dirHasBP(path) // HDF5 beside BP: a folder of several
	switch {
	case st.IsDir() && fileExists(filepath.Join(path, catalog.ManifestName)):
		return nilIfErr(h5.OpenRelayout(path, cfg))
	case scorpio.Is(path): // NAME.nc.bp, or NAME.nc beside it (a link to its md.0)
		return openSCORPIO(path, sel)
	case st.IsDir() && amrex.Detect(path):
		return broken(path, "AMReX plotfile")(nilIfErr(amrex.Open(path, amrex.Config{Match: sel.match})))
	case (h5dir || !st.IsDir() && isHDF5(path)) && chombo.Detect(path):
		return broken(path, "Chombo HDF5 file")(nilIfErr(chombo.Open(path, chombo.Config{Match: sel.match})))
	case h5dir:
		ds, err := nilIfErr(h5.Open(path, cfg))
		if nos := (*h5.NotOneSeriesError)(nil); errors.As(err, &nos) {
			return nil, severalHDF5(path, nos)
		}
		return broken(path, "folder of HDF5 files")(ds, err)
	case !st.IsDir() && isHDF5(path):
		return broken(path, "HDF5 file")(nilIfErr(h5.Open(path, cfg)))
	case st.IsDir() && bp.IsBP4(path):
		return broken(path, "BP4 dataset")(nilIfErr(bp.Open(path, bp.Config{Match: sel.match})))
	case st.IsDir() && bp.IsBP5(path): // header text may be damaged: detected by structure
		return broken(path, "BP5 dataset")(nilIfErr(bp.Open(path, bp.Config{Match: sel.match})))
	case !st.IsDir() && strings.HasSuffix(path, ".bp") && bp.IsBP3(path):
		return broken(path, "BP3 file")(nilIfErr(bp.Open(path, bp.Config{Match: sel.match})))
	case !st.IsDir() && netcdf.IsClassic(path):
		return broken(path, "netCDF classic file")(nilIfErr(netcdf.OpenFile(path, netcdf.Config{Match: sel.match})))
	case !st.IsDir() && isHDF5Name(path):
		// Named like HDF5 but without its signature: a damaged superblock.
		return broken(path, "file named like HDF5")(nilIfErr(h5.Open(path, cfg)))
	case bp.Shape(path) != "":
		// Its index is too damaged to tell the format by content: its files
		// do, and the format's own checks say what is broken.
		kind, noun := bp.Shape(path), " dataset"
		if kind == "BP3" {
			noun = " file"
		}
		return broken(path, kind+noun)(nilIfErr(bp.OpenShaped(path, kind, bp.Config{Match: sel.match})))
	case st.IsDir() && amrex.HasShape(path):
		return broken(path, "AMReX plotfile")(nilIfErr(amrex.Open(path, amrex.Config{Match: sel.match})))
	case st.IsDir():
		return openFolder(path, sel, folder)
	}
	return nil, notRecognised(path)
}

// openSCORPIO opens SCORPIO's ADIOS output (a BP5 NAME.nc.bp, or NAME.nc)
// as a stream of one dataset.
func openSCORPIO(path string, sel *selector) (Dataset, error) {
	s, err := scorpio.OpenStream(filepath.Dir(path), []string{filepath.Base(path)}, scorpio.Config{Match: sel.match})
	if err != nil {
		return nil, brokenErr(path, "SCORPIO BP dataset", err)
	}
	s.SetPath(path)
	return s, nil
}

// broken says which format path is when its reader refuses it as damaged:
// "this is a BP5 dataset but its md.idx is broken: bp5: md.idx: offset 36:
// ...". The CorruptError stays in the chain (errors.As finds its file and
// offset); other errors pass as they are, but for a missing file of a BP
// dataset.
func broken(path, kind string) func(Dataset, error) (Dataset, error) {
	return func(ds Dataset, err error) (Dataset, error) {
		if err == nil {
			return ds, nil
		}
		return nil, brokenErr(path, kind, err)
	}
}

func brokenErr(path, kind string, err error) error {
	article := "a"
	if strings.IndexByte("AEHIOU", kind[0]) >= 0 {
		article = "an" // an AMReX plotfile, an HDF5 file
	}
	ce := (*catalog.CorruptError)(nil)
	if !errors.As(err, &ce) {
		if errors.Is(err, catalog.ErrNotFound) && strings.HasPrefix(kind, "BP") {
			return fmt.Errorf("reader: %s: this is %s %s but a file of it is missing: %w", path, article, kind, err)
		}
		return err
	}
	what := "it is"
	if ce.File != "" && filepath.Base(ce.File) != filepath.Base(path) {
		what = "its " + ce.File + " is"
	}
	return fmt.Errorf("reader: %s: this is %s %s but %s broken: %w", path, article, kind, what, err)
}

// Every format reader is a Dataset, whose catalog.Source says what it can
// do as data (Caps), not through optional interfaces.
var (
	_ Dataset = (*h5.Dataset)(nil)
	_ Dataset = (*bp.Dataset)(nil)
	_ Dataset = (*bp.Series)(nil)
	_ Dataset = (*amrex.Dataset)(nil)
	_ Dataset = (*chombo.Dataset)(nil)
	_ Dataset = (*netcdf.Dataset)(nil)
	_ Dataset = (*scorpio.Stream)(nil)
)

// nilIfErr converts a format reader's concrete result to a Dataset that is
// a true nil interface on error.
func nilIfErr[T Dataset](ds T, err error) (Dataset, error) {
	if err != nil {
		return nil, err
	}
	return ds, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// hdf5Magic is the HDF5 superblock signature. It sits at offset 0 or, after a
// user block, at 512, 1024, 2048, ... (powers of two).
var hdf5Magic = []byte("\x89HDF\r\n\x1a\n")

func isHDF5(path string) bool {
	f, _, err := fileio.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, len(hdf5Magic))
	for off := int64(0); ; off = max(512, 2*off) {
		if _, err := f.ReadAt(buf, off); err != nil {
			return false // EOF before any signature
		}
		if bytes.Equal(buf, hdf5Magic) {
			return true
		}
		if off >= 1<<40 {
			return false
		}
	}
}

// isHDF5Name reports whether path has an HDF5 file name extension.
func isHDF5Name(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".h5", ".hdf5", ".he5":
		return true
	}
	return false
}

// dirHasBP reports whether a directory holds BP datasets (BP4/BP5
// directories, BP3 files).
func dirHasBP(dir string) bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, de := range des {
		full := filepath.Join(dir, de.Name())
		if st, err := os.Stat(full); err == nil && (st.IsDir() && (bp.IsBP4(full) || bp.IsBP5(full)) ||
			st.Mode().IsRegular() && strings.HasSuffix(de.Name(), ".bp") && bp.IsBP3(full)) {
			return true
		}
	}
	return false
}

// dirHasHDF5 reports whether a directory holds *.h5 / *.hdf5 files that are
// HDF5 (the first such file decides; a bad one later is reported by h5.Open).
func dirHasHDF5(dir string) bool {
	des, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, de := range des {
		ext := strings.ToLower(filepath.Ext(de.Name()))
		if ext != ".h5" && ext != ".hdf5" {
			continue
		}
		if fileio.CheckEntry(dir, de) != nil {
			return true // not a regular file: h5.Open refuses it by name
		}
		return isHDF5(filepath.Join(dir, de.Name()))
	}
	return false
}
