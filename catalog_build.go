package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"relayout/catalog"
	"relayout/reader"
	"relayout/rewriter"
)

// buildCatalog opens path with its reader and streams every array into a fresh
// catalog database at dbPath.
func buildCatalog(ctx context.Context, path, dbPath string, opts reader.Options) (reader.Dataset, *catalog.Store, error) {
	ds, err := reader.Open(path, opts)
	if err != nil {
		var nm *reader.NoMatchError
		if errors.As(err, &nm) {
			return nil, nil, noMatch(nm)
		}
		return nil, nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o755); err != nil {
		ds.Close()
		return nil, nil, err
	}
	store, err := catalog.CreateStore(dbPath)
	if err != nil {
		ds.Close()
		return nil, nil, err
	}
	err = ds.Scan(ctx, store.Put)
	if err == nil {
		err = checkIncomplete(path, ds.Info(), opts.Strict)
	}
	if err == nil {
		err = store.SetInfo(ds.Info()) // after Scan: the reader fills Skipped while scanning
	}
	if err != nil {
		store.Close()
		ds.Close()
		return nil, nil, err
	}
	return ds, store, nil
}

// checkIncomplete warns on stderr about each part of the input that was
// written but is not indexed (a writer that died): the complete part is
// converted and the rest listed in the manifest's skipped. With --strict
// (strict) such an input is refused instead.
func checkIncomplete(path string, info catalog.DatasetInfo, strict bool) error {
	inc := catalog.IncompleteEntries(info.Skipped)
	if len(inc) == 0 {
		return nil
	}
	if strict {
		return fmt.Errorf("%s: %s (refused with --strict; without it the complete part is converted): %w",
			path, strings.TrimPrefix(inc[0], catalog.IncompletePrefix), catalog.ErrCorrupt)
	}
	for _, s := range inc {
		fmt.Fprintf(os.Stderr, "relayout: warning: %s: %s\n", path, strings.TrimPrefix(s, catalog.IncompletePrefix))
	}
	return nil
}

// verifyPair compares the input catalog with a relayout output directory
// (staged or committed) read back through its own reader.
func verifyPair(ctx context.Context, in *catalog.Store, inSrc catalog.Source, outDir, dbPath string, m *catalog.Manifest, w io.Writer, maxMem int64) (bool, error) {
	outDS, outStore, err := buildCatalog(ctx, outDir, dbPath, reader.Options{})
	if err != nil {
		return false, err
	}
	defer func() {
		outStore.Close()
		outDS.Close()
		os.Remove(dbPath)
	}()
	if m == nil {
		if m, err = catalog.ReadManifest(filepath.Join(outDir, catalog.ManifestName)); err != nil {
			return false, err
		}
	}
	ok, err := rewriter.VerifyBudget(ctx, in, inSrc, outStore, outDS, m, w, maxMem)
	if err != nil {
		return ok, err
	}
	seriesOK, err := rewriter.VerifySeries(outDir, m, w)
	return ok && seriesOK, err
}

// noMatch is the usage error of a --var that selects nothing: the names
// equal to it but for case, else the closest (parents like "B" of "B/x"
// count as names), then the names the input has.
func noMatch(e *reader.NoMatchError) error {
	seen := map[string]bool{}
	var cands []string
	for _, n := range e.Names {
		for p := n; p != ""; {
			if !seen[p] {
				seen[p] = true
				cands = append(cands, p)
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	names := strings.Join(e.Names, ", ")
	if len(e.Names) > 20 {
		names = strings.Join(e.Names[:20], ", ") + fmt.Sprintf(", ... (%d in all)", len(e.Names))
	}
	if len(e.Names) == 0 {
		names = "none"
	}
	s := suggest(e.Pattern, cands, 4)
	for i := range s {
		s[i] = "--var " + s[i]
	}
	return usagef("%s: --var %s matches no variable%s (variables: %s)", verb, e.Pattern, didYouMean(s), names)
}
