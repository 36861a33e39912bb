package rewriter

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/internal/h5"
)

// seriesName is the file that joins all per-variable files into one
// openPMD series.
const seriesName = "series.h5"

// seriesLink is one dataset of a per-variable file as series.h5 sees it.
type seriesLink struct {
	path        string // dataset path, the same in both files
	record      string // record group ("" for a scalar record)
	recordAttrs []catalog.Attr
	// species: a particle species group ("" none) and its attributes.
	species      string
	speciesAttrs []catalog.Attr
	step         int64
	stepAttrs    []catalog.Attr
	boxes        string         // AMR box table path, or ""
	attrs        []catalog.Attr // the dataset's own attributes
	// constant: a constant record component, repeated in series.h5 as
	// its group with attrs.
	constant bool
	// spec is the dataset's type, shape and fill value when series.h5
	// presents it as a virtual dataset; nil (rank-0 values, empty arrays)
	// for an external link.
	spec *h5.DatasetSpec
	// empty: a particle component without elements, written into
	// series.h5 as an empty dataset of this type and shape.
	empty *h5.DatasetSpec
}

// writeSeries writes stage/series.h5: "/" with the series attributes, every
// iteration group /data/<step> with its attributes, every vector record's
// group with its record attributes, and each record component (or scalar
// record) as an HDF5 virtual dataset (VDS) with the component's attributes,
// mapping the whole dataset of the same path in its per-variable file (a
// name relative to series.h5, so the output directory can move).
// openPMD-api reads virtual datasets but does not follow external links
// (0.16 on HDF5 1.10: a linked component shows a record without
// components); h5py, yt and every HDF5 1.10 tool read both. What openPMD
// readers never look at — AMR box tables, rank-0 values, empty arrays (a
// VDS needs a non-empty shape) — is an external link to the same path.
// A VDS whose source file is missing reads as the fill value without an
// error: the manifest lists the files series.h5 needs (SeriesFiles) and
// verify checks them. A path already taken by another variable (e.g.
// variables "E" and "E/x") is left out and reported in the returned list.
// Written through a synced temporary file like the others.
//
// It returns what was left out and the files series.h5 reads through.
func writeSeries(stage string, root []catalog.Attr, files []string, links [][]seriesLink) (skipped, used []string, err error) {
	tmp := filepath.Join(stage, "."+seriesName+".tmp")
	w, err := h5.Create(tmp)
	if err != nil {
		return nil, nil, fmt.Errorf("rewriter: series: %w", err)
	}
	done := false
	defer func() {
		w.Close()
		if !done {
			os.Remove(tmp)
		}
	}()
	usedFile := make([]bool, len(files))
	taken := map[string]bool{} // link paths
	groups := map[string]bool{}
	conflicts := func(p string) bool {
		if taken[p] || groups[p] {
			return true
		}
		for q := p; q != "/" && q != "."; q = filepath.Dir(q) {
			if taken[q] && q != p {
				return true
			}
		}
		return false
	}
	if err := w.SetAttrs("/", root); err != nil {
		return nil, nil, fmt.Errorf("rewriter: series: %w", err)
	}
	steps := map[int64]bool{}
	for i, ls := range links {
		for _, l := range ls {
			targets := []string{l.path}
			if l.boxes != "" {
				targets = append(targets, l.boxes)
			}
			if conflicts(l.path) || l.record != "" && taken[l.record] {
				skipped = append(skipped, fmt.Sprintf("%s: %s:%s not linked: the path is taken by another variable", seriesName, files[i], l.path))
				continue
			}
			if !steps[l.step] {
				if err := w.SetAttrs(stepGroup(l.step), l.stepAttrs); err != nil {
					return nil, nil, fmt.Errorf("rewriter: series: %w", err)
				}
				// Both the meshes and the particles group when particles are
				// written, so that openPMD-api finds both in every iteration.
				if ps := strs(root, "particlesPath"); len(ps) == 1 {
					for _, g := range []string{strs(root, "meshesPath")[0], ps[0]} {
						if err := w.SetAttrs(stepGroup(l.step)+"/"+strings.Trim(g, "/"), nil); err != nil {
							return nil, nil, fmt.Errorf("rewriter: series: %w", err)
						}
					}
				}
				steps[l.step] = true
			}
			if l.species != "" && !groups[l.species] {
				if err := w.SetAttrs(l.species, l.speciesAttrs); err != nil {
					return nil, nil, fmt.Errorf("rewriter: series: %w", err)
				}
			}
			if l.record != "" && !groups[l.record] {
				if err := w.SetAttrs(l.record, l.recordAttrs); err != nil {
					return nil, nil, fmt.Errorf("rewriter: series: %w", err)
				}
			}
			for _, t := range targets {
				if conflicts(t) {
					continue
				}
				var err error
				if t == l.path && l.constant {
					err = w.SetAttrs(t, l.attrs)
				} else if t == l.path && l.empty != nil {
					var d *h5.OutDataset
					if d, err = w.CreateDataset(t, *l.empty); err == nil {
						err = d.Close()
					}
					if err == nil {
						err = w.SetAttrs(t, l.attrs)
					}
				} else if t == l.path && l.spec != nil {
					whole := catalog.Box{Lower: make([]int64, len(l.spec.Shape)), Count: l.spec.Shape}
					err = w.CreateVirtual(t, *l.spec, []h5.VirtualSource{{File: files[i], Path: t, Box: whole}})
					if err == nil {
						err = w.SetAttrs(t, l.attrs)
					}
				} else {
					err = w.ExternalLink(t, files[i], t)
				}
				if err != nil {
					return nil, nil, fmt.Errorf("rewriter: series: %w", err)
				}
				taken[t] = true
				usedFile[i] = true
				for q := filepath.Dir(t); q != "/" && q != "."; q = filepath.Dir(q) {
					groups[q] = true
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, nil, fmt.Errorf("rewriter: series: %w", err)
	}
	if err := fileio.SyncFile(tmp); err != nil {
		return nil, nil, fmt.Errorf("rewriter: series: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(stage, seriesName)); err != nil {
		return nil, nil, fmt.Errorf("rewriter: series: %w", err)
	}
	done = true
	sort.Strings(skipped)
	for i, u := range usedFile {
		if u {
			used = append(used, files[i])
		}
	}
	return skipped, used, nil
}
