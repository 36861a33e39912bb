package h5

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	ih5 "relayout/internal/h5"
	"relayout/reader/blockio"
)

// Config tunes Open and OpenRelayout.
type Config = blockio.Config

// source is embedded in Dataset so that the block-reading methods of
// blockio.Source are Dataset's own.
type source = blockio.Source

// Dataset is an opened HDF5 input. It implements reader.Dataset.
type Dataset struct {
	info    catalog.DatasetInfo
	entries []entry  // sorted by (Var, Step, Level)
	*source          // native block reads: Prefetch, Placement, Caps (ReadBlocks, IOStats, Close: library.go)
	lib     *library // blocks read through the HDF5 library (plugin filters)
}

// entry is one array found at Open: where it is, not yet its blocks.
type entry struct {
	Var   string
	Step  int64
	Level int
	file  string // relative to the root
	path  string // dataset path in file
	// Attribute groups (openPMD): iteration group and record group.
	stepGroup, record string
	// openPMD particles: the species and its group.
	species, speciesGroup string
	// constant: an openPMD constant record component, a group whose
	// "value" and "shape" attributes stand for the data.
	constant bool
	// netCDF: a variable of a netCDF-4 file (netcdf4.go): dimension names
	// from its scales (dims, read at Open), netCDF-C's hidden attributes
	// dropped.
	netCDF bool
	dims   []string
	unlim  []bool // the axes the dataset is unlimited along (H5S_UNLIMITED)
	// relayout outputs: the manifest's word, checked against the file.
	offset []int64
	shape  []int64
	dtype  *catalog.DType
}

// Info describes the input; Skipped lists every object seen but not catalogued.
func (d *Dataset) Info() catalog.DatasetInfo { return d.info }

// hdf5Files lists the HDF5 files a directory input consists of.
func hdf5Files(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reader/h5: %w", err)
	}
	var names []string
	for _, de := range des {
		ext := strings.ToLower(filepath.Ext(de.Name()))
		if ext != ".h5" && ext != ".hdf5" {
			continue
		}
		// A file of the series that is not a regular file (or a symlink
		// to one) is refused with its name, not left out silently.
		if err := fileio.CheckEntry(dir, de); err != nil {
			return nil, fmt.Errorf("reader/h5: series %s: %w", dir, err)
		}
		names = append(names, de.Name())
	}
	return names, nil // ReadDir sorts by name
}

// Open opens an HDF5 file, or a directory of HDF5 files (*.h5, *.hdf5), and
// finds every array in it (metadata only; blocks are listed by Scan).
func Open(path string, cfg Config) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("reader/h5: %s: %w", path, catalog.ErrNotFound)
		}
		return nil, fmt.Errorf("reader/h5: %w", err)
	}
	root, files := filepath.Dir(path), []string{filepath.Base(path)}
	if st.IsDir() {
		root = path
		if files, err = hdf5Files(path); err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("reader/h5: %s: no *.h5 or *.hdf5 files: %w", path, catalog.ErrUnsupported)
		}
	}
	match := cfg.Selects

	// Pass 1: how each file maps (root attributes only), so that plain files
	// of a multi-file input can be told apart by their file names.
	schemes := make([]scheme, len(files))
	roots := make([][]catalog.Attr, len(files))
	plain := 0
	for i, name := range files {
		hf, err := ih5.Open(filepath.Join(root, name))
		if err != nil {
			return nil, err
		}
		roots[i], err = hf.Attrs("/")
		if err == nil {
			schemes[i], err = schemeFor(name, roots[i])
		}
		hf.Close()
		if err != nil {
			return nil, err
		}
		if schemes[i].kind != openPMDFile {
			plain++
		}
	}

	d := &Dataset{info: catalog.DatasetInfo{Path: path, Root: root, Format: "openpmd-hdf5"}}
	if plain > 0 {
		d.info.Format = "hdf5"
		if !slices.ContainsFunc(schemes, func(s scheme) bool { return s.kind != netCDF4File }) {
			d.info.Format = "netcdf4"
		}
	}
	// Plain files named PREFIX<T>SUFFIX (data_000100.h5, ...) are the
	// iterations of a file-based series: step T, names unprefixed. Other
	// plain files are told apart by their file stems.
	var plainNames []string
	var plainIters []int64
	if plain > 1 {
		for i, name := range files {
			if schemes[i].kind == plainFile {
				plainNames = append(plainNames, name)
			}
		}
		if len(plainNames) == plain {
			plainIters = catalog.SeriesIterations(plainNames)
		}
	}
	firstStep := int64(-1)
	for i, name := range files {
		prefix := ""
		if plain > 1 && schemes[i].kind != openPMDFile && plainIters == nil {
			prefix = strings.TrimSuffix(name, filepath.Ext(name)) + "/"
		}
		found, skipped, err := walkFile(filepath.Join(root, name), name, schemes[i], prefix, match)
		if err != nil {
			return nil, err
		}
		if k := slices.Index(plainNames, name); plainIters != nil && k >= 0 {
			for j := range found {
				found[j].Step = plainIters[k]
			}
		}
		d.entries = append(d.entries, found...)
		d.info.Skipped = append(d.info.Skipped, skipped...)
		// Dataset attributes: the root attributes of the series' first
		// iteration (or of the first file).
		minStep := int64(-1)
		for _, e := range found {
			if minStep < 0 || e.Step < minStep {
				minStep = e.Step
			}
		}
		if d.info.Attrs == nil || (minStep >= 0 && (firstStep < 0 || minStep < firstStep)) {
			d.info.Attrs = roots[i]
			if schemes[i].kind == netCDF4File {
				d.info.Attrs = dropNCHidden(roots[i])
			}
			if minStep >= 0 {
				firstStep = minStep
			}
		}
	}
	if err := sortEntries(d.entries); err != nil {
		return nil, err
	}
	// The dimensions netCDF-4 variables are unlimited along are known here,
	// before any Scan: relayout plan chunks the arrays over them from
	// DatasetInfo.Unlimited as it builds the catalog. netCDF-C makes every
	// variable over an unlimited dimension extendible along it, as its
	// dimension scale.
	for _, e := range d.entries {
		for k, u := range e.unlim {
			if u && k < len(e.dims) && e.dims[k] != "" && !slices.Contains(d.info.Unlimited, e.dims[k]) {
				d.info.Unlimited = append(d.info.Unlimited, e.dims[k])
			}
		}
	}
	d.source = blockio.NewSource(blockio.NewFiles(root, cfg.MaxOpenFiles))
	d.lib = newLibrary(root)
	return d, nil
}

// sortEntries orders arrays by variable, step and level and refuses two
// arrays with the same key (e.g. the same iteration in two files).
func sortEntries(es []entry) error {
	slices.SortStableFunc(es, func(a, b entry) int {
		if c := strings.Compare(a.Var, b.Var); c != 0 {
			return c
		}
		if a.Step != b.Step {
			return cmp.Compare(a.Step, b.Step)
		}
		return a.Level - b.Level
	})
	for i := 1; i < len(es); i++ {
		a, b := es[i-1], es[i]
		if a.Var == b.Var && a.Step == b.Step && a.Level == b.Level {
			err := fmt.Errorf("reader/h5: variable %q step %d level %d is both %s:%s and %s:%s: %w",
				a.Var, a.Step, a.Level, a.file, a.path, b.file, b.path, catalog.ErrUnsupported)
			if a.file != b.file {
				err = &NotOneSeriesError{Var: a.Var, Step: a.Step, Files: [2]string{a.file, b.file}, Err: err}
			}
			return err
		}
	}
	return nil
}

// NotOneSeriesError is returned by Open when two files of a directory hold
// the same array: the files are unrelated datasets, not one series.
type NotOneSeriesError struct {
	Var   string
	Step  int64
	Files [2]string
	Err   error
}

func (e *NotOneSeriesError) Error() string { return e.Err.Error() }
func (e *NotOneSeriesError) Unwrap() error { return e.Err }

// walkFile lists the selected arrays of one file and what it skips.
func walkFile(full, name string, s scheme, prefix string, match func(string) bool) ([]entry, []string, error) {
	hf, err := ih5.Open(full)
	if err != nil {
		return nil, nil, err
	}
	defer hf.Close()
	var found []entry
	var skipped []string
	skip := func(p, reason string) { skipped = append(skipped, fmt.Sprintf("%s:%s: %s", name, p, reason)) }
	err = hf.Walk(func(p string, isDataset bool) error {
		pl := s.locate(p, isDataset)
		v := prefix + pl.Var
		switch pl.kind {
		case outside:
			skip(p, pl.Reason)
		case meshGroup:
			if !match(v) {
				return nil
			}
			attrs, err := hf.Attrs(p)
			if err != nil {
				return err
			}
			if hasAttr(attrs, "value") {
				found = append(found, entry{Var: v, Step: pl.Step, file: name, path: p, stepGroup: pl.StepGroup, record: pl.Record,
					species: pl.Species, speciesGroup: pl.SpeciesGroup, constant: true})
			}
		case variable:
			if !match(v) {
				return nil
			}
			info, err := hf.Dataset(p)
			if err != nil {
				return err
			}
			if !info.Numeric {
				skip(p, fmt.Sprintf("non-numeric dataset (%s)", info.TypeDesc))
				return nil
			}
			// A particle species without particles this iteration is kept:
			// openPMD readers expect its records.
			if (catalog.Box{Count: info.Shape}).Elements() == 0 && pl.Species == "" {
				skip(p, fmt.Sprintf("dataset with zero elements (shape %v)", info.Shape))
				return nil
			}
			if s.kind == netCDF4File {
				reason, err := ncDimensionOnlyReason(hf, p, info.Shape)
				if err != nil {
					return err
				}
				if reason != "" {
					skip(p, reason)
					return nil
				}
			}
			if err := supported(name, info); err != nil {
				return err
			}
			e := entry{Var: v, Step: pl.Step, file: name, path: p, stepGroup: pl.StepGroup, record: pl.Record,
				species: pl.Species, speciesGroup: pl.SpeciesGroup, netCDF: s.kind == netCDF4File}
			if e.netCDF { // its dimensions, read here for DatasetInfo.Unlimited
				if e.dims, err = hf.DimensionNames(p); err != nil {
					return err
				}
				e.unlim = info.Unlimited
			}
			found = append(found, e)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return found, skipped, nil
}

// Codec names for the HDF5 filters blockio decodes, by filter id. 32001 is
// the blosc filter (hdf5-blosc, hdf5plugin.Blosc): every chunk is one
// c-blosc1 chunk whose own header gives typesize, shuffle and compressor
// (cd_values: filter revision, blosc version, typesize, chunk bytes,
// clevel, shuffle, compressor), decoded by blockio/blosc. A dataset with any
// other filter in its pipeline is read through the HDF5 library
// (library.go), when the library has the filter.
//
// 32000 is LZF (h5py's built-in "lzf"): each chunk one raw LZF stream,
// decoded by blockio (lzf.go). Debian's LZF plugin (hdf5-plugin-lzf) does
// not load into a plain HDF5 program (it lacks liblzf), so only h5py could
// read these files through the library.
var codecNames = map[int]string{1: "deflate", 2: "shuffle", 3: "fletcher32", 32000: "lzf", 32001: "hdf5-blosc"}

// supported refuses datasets whose bytes relayout can neither fetch and
// decode itself nor read through the HDF5 library (a filter whose plugin
// HDF5 does not find). This is an error, not a skip: silently dropping data
// is worse.
func supported(file string, info *ih5.DatasetInfo) error {
	switch {
	// Virtual datasets are checked by buildVirtual: only whole source
	// datasets of the same file mapped onto boxes are read.
	case info.External:
		return fmt.Errorf("reader/h5: %s: dataset %s: data in external raw files: %w", file, info.Path, catalog.ErrUnsupported)
	}
	for _, f := range info.Filters {
		if _, ok := codecNames[f.ID]; !ok {
			if err := filterAvailable(file, info.Path, f); err != nil {
				return err
			}
		}
	}
	return nil
}
