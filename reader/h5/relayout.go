package h5

import (
	"fmt"
	"path/filepath"
	"slices"

	"relayout/catalog"
	"relayout/reader/blockio"
)

// OpenRelayout opens a relayout output directory: each dataset listed in
// dir/relayout.json is read back through the same HDF5 scanning as any input
// and emitted under the manifest's (variable, step, level) and offset.
func OpenRelayout(dir string, cfg Config) (*Dataset, error) {
	m, err := catalog.ReadManifest(filepath.Join(dir, catalog.ManifestName))
	if err != nil {
		return nil, err
	}
	match := cfg.Selects
	d := &Dataset{info: catalog.DatasetInfo{Path: dir, Root: dir, Format: "relayout"}}
	for _, v := range m.Variables {
		if !match(v.Name) {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(v.File)) {
			return nil, catalog.Corrupt("relayout", dir, -1, "variable %q: file %q is not inside the output directory", v.Name, v.File)
		}
		dt, err := catalog.ParseDType(v.DType)
		if err != nil {
			return nil, fmt.Errorf("reader/h5: variable %q: %w", v.Name, catalog.CorruptIn(err, filepath.Join(dir, catalog.ManifestName)))
		}
		for _, ds := range slices.Concat(v.Datasets, v.Constants) {
			d.entries = append(d.entries, entry{
				Var: v.Name, Step: ds.Step, Level: ds.Level,
				file: filepath.ToSlash(filepath.Clean(filepath.FromSlash(v.File))), path: ds.Path,
				offset: slices.Clone(ds.Offset), shape: slices.Clone(ds.Shape), dtype: &dt,
				constant: ds.Layout == catalog.ConstantLayout, species: v.Species,
			})
		}
	}
	for i := range d.entries {
		if d.entries[i].offset == nil {
			d.entries[i].offset = make([]int64, len(d.entries[i].shape))
		}
	}
	if err := sortEntries(d.entries); err != nil {
		return nil, err
	}
	d.source = blockio.NewSource(blockio.NewFiles(dir, cfg.MaxOpenFiles))
	d.lib = newLibrary(dir)
	return d, nil
}
