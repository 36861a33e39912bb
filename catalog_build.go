package main

import (
	"context"
	"io"
	"os"
	"path/filepath"

	"relayout/catalog"
	"relayout/reader"
	"relayout/rewriter"
)

// buildCatalog opens path with its reader and streams every array into a fresh
// catalog database at dbPath.
func buildCatalog(ctx context.Context, path, dbPath string, opts reader.Options) (reader.Dataset, *catalog.Store, error) {
	ds, err := reader.Open(path, opts)
	if err != nil {
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
		err = store.SetInfo(ds.Info()) // after Scan: the reader fills Skipped while scanning
	}
	if err != nil {
		store.Close()
		ds.Close()
		return nil, nil, err
	}
	return ds, store, nil
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
