package rewriter

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/h5"
)

// SeriesName is the file that joins all per-variable files into one
// openPMD series.
const SeriesName = "series.h5"

// seriesLink is one dataset of a per-variable file as series.h5 sees it.
type seriesLink struct {
	path        string // dataset path, the same in both files
	record      string // record group ("" for a scalar record)
	recordAttrs []catalog.Attr
	step        int64
	stepAttrs   []catalog.Attr
	boxes       string // AMR box table path, or ""
}

// writeSeries writes stage/series.h5: "/" with the series attributes, every
// iteration group /data/<step> with its attributes, every vector record's
// group with its record attributes, and each record component (or scalar
// record), and each AMR box table, as an HDF5 external link to the same
// path in its per-variable file (a name relative to series.h5, so the
// output directory can move). A path already taken by another variable
// (e.g. variables "E" and "E/x") is left out and reported in the returned
// list. Written through a synced temporary file like the others.
func writeSeries(stage string, root []catalog.Attr, files []string, links [][]seriesLink) ([]string, error) {
	tmp := filepath.Join(stage, "."+SeriesName+".tmp")
	w, err := h5.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("rewriter: series: %w", err)
	}
	done := false
	defer func() {
		w.Close()
		if !done {
			os.Remove(tmp)
		}
	}()
	var skipped []string
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
		return nil, fmt.Errorf("rewriter: series: %w", err)
	}
	steps := map[int64]bool{}
	for i, ls := range links {
		for _, l := range ls {
			targets := []string{l.path}
			if l.boxes != "" {
				targets = append(targets, l.boxes)
			}
			if conflicts(l.path) || l.record != "" && taken[l.record] {
				skipped = append(skipped, fmt.Sprintf("%s: %s:%s not linked: the path is taken by another variable", SeriesName, files[i], l.path))
				continue
			}
			if !steps[l.step] {
				if err := w.SetAttrs(stepGroup(l.step), l.stepAttrs); err != nil {
					return nil, fmt.Errorf("rewriter: series: %w", err)
				}
				steps[l.step] = true
			}
			if l.record != "" && !groups[l.record] {
				if err := w.SetAttrs(l.record, l.recordAttrs); err != nil {
					return nil, fmt.Errorf("rewriter: series: %w", err)
				}
			}
			for _, t := range targets {
				if conflicts(t) {
					continue
				}
				if err := w.ExternalLink(t, files[i], t); err != nil {
					return nil, fmt.Errorf("rewriter: series: %w", err)
				}
				taken[t] = true
				for q := filepath.Dir(t); q != "/" && q != "."; q = filepath.Dir(q) {
					groups[q] = true
				}
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("rewriter: series: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return nil, fmt.Errorf("rewriter: series: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(stage, SeriesName)); err != nil {
		return nil, fmt.Errorf("rewriter: series: %w", err)
	}
	done = true
	sort.Strings(skipped)
	return skipped, nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// validFileName reports whether name can be a file directly in OUT.
func validFileName(name string) bool {
	return name != "" && filepath.Base(name) == name && name != "." && name != ".." &&
		name != catalog.ManifestName && !strings.ContainsRune(name, os.PathSeparator)
}
