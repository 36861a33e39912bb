package rewriter

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"relayout/catalog"
)

func writeManifest(stage string, m *catalog.Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("rewriter: manifest: %w", err)
	}
	if err := writeFileAtomic(stage, catalog.ManifestName, append(b, '\n')); err != nil {
		return fmt.Errorf("rewriter: manifest: %w", err)
	}
	return nil
}

// Commit moves the files listed in stage's manifest (the variables' files
// and series.h5) into out (same file
// system), then the manifest, so a reader that finds out/relayout.json finds
// every file it names. It refuses to replace any existing file in out: the
// caller removes an old output first. Nothing is moved when a name is taken.
func Commit(stage, out string) error {
	m, err := catalog.ReadManifest(filepath.Join(stage, catalog.ManifestName))
	if err != nil {
		return fmt.Errorf("rewriter: commit: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("rewriter: commit: %w", err)
	}
	if same, err := sameDir(stage, out); err != nil || same {
		return err
	}
	var names []string
	files := make([]string, 0, len(m.Variables)+1)
	for _, v := range m.Variables {
		files = append(files, v.File)
	}
	if m.Series != "" {
		files = append(files, m.Series)
	}
	for _, f := range files {
		if !validFileName(f) {
			return fmt.Errorf("rewriter: commit: %s: file name %q: %w",
				filepath.Join(stage, catalog.ManifestName), f, catalog.ErrCorrupt)
		}
		names = append(names, f)
	}
	for _, n := range append(names, catalog.ManifestName) {
		_, err := os.Lstat(filepath.Join(out, n))
		if err == nil {
			return fmt.Errorf("rewriter: commit: %s already exists; remove it first", filepath.Join(out, n))
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("rewriter: commit: %w", err)
		}
	}
	for _, n := range names {
		if err := os.Rename(filepath.Join(stage, n), filepath.Join(out, n)); err != nil {
			return fmt.Errorf("rewriter: commit: %w", err)
		}
	}
	if err := syncDir(out); err != nil {
		return fmt.Errorf("rewriter: commit: %w", err)
	}
	if err := os.Rename(filepath.Join(stage, catalog.ManifestName), filepath.Join(out, catalog.ManifestName)); err != nil {
		return fmt.Errorf("rewriter: commit: %w", err)
	}
	if err := syncDir(out); err != nil {
		return fmt.Errorf("rewriter: commit: %w", err)
	}
	return nil
}

func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, fmt.Errorf("rewriter: commit: %w", err)
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, fmt.Errorf("rewriter: commit: %w", err)
	}
	return os.SameFile(sa, sb), nil
}
