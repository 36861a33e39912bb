package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"relayout/catalog"
	"relayout/job"
	"relayout/reader"
)

func runCatalog(ctx context.Context, args []string) error {
	var dbPath string
	var vars []string
	var asJSON, strict bool
	var cpuProfile string
	fs := newFlags("catalog", "relayout catalog IN [flags]",
		"relayout catalog diags/ --catalog diags.db && sqlite3 diags.db 'SELECT var, count(*) FROM blocks JOIN arrays ON id = array_id GROUP BY var'")
	fs.StringVar(&dbPath, "catalog", "", "keep the catalog database at this path (default: a temporary file, removed)")
	fs.StringArrayVar(&vars, "var", nil, "variable name or glob (repeatable; default all)")
	fs.BoolVar(&asJSON, "json", false, "print the summary as JSON")
	fs.BoolVar(&strict, "strict", false, "refuse an incomplete input (steps written but not indexed) instead of listing what is left out")
	fs.BoolP("quiet", "q", false, "accepted on every verb; catalog prints its listing (stdout) and errors only")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile to this file (for developers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile("catalog", cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	if fs.NArg() != 1 {
		return usagef("catalog: want exactly one input, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	in := fs.Arg(0)
	onlySummary := dbPath == "" // a temporary catalog, only summarised: no block lists stored
	if dbPath == "" {
		tmp, err := os.MkdirTemp("", "relayout-catalog-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dbPath = filepath.Join(tmp, "catalog.db")
	}
	ds, store, err := job.BuildCatalogEach(ctx, in, dbPath, reader.Options{Vars: vars, Strict: strict}, 0, onlySummary, nil, nil)
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	summary, err := store.Variables()
	if err != nil {
		return err
	}
	info := ds.Info()
	if asJSON {
		return printCatalogJSON(info, summary)
	}
	fmt.Printf("input:  %s\nformat: %s\n\n", info.Path, info.Format)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variable\tdtype\tsteps\tlevels\tblocks\tbytes\tstored\tfiles\t")
	var blocks int
	var bytes, stored int64
	for _, v := range summary {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", v.Name, v.DType.Name(), len(v.Steps), v.Levels, v.Blocks, v.Bytes, v.StoredBytes, v.Files)
		blocks += v.Blocks
		bytes += v.Bytes
		stored += v.StoredBytes
	}
	tw.Flush()
	fmt.Printf("\n%d variables, %d blocks, %d bytes (%d stored)\n", len(summary), blocks, bytes, stored)
	if len(info.Skipped) > 0 {
		fmt.Printf("\nskipped (%d):\n  %s\n", len(info.Skipped), strings.Join(info.Skipped, "\n  "))
	}
	return nil
}

func printCatalogJSON(info catalog.DatasetInfo, summary []catalog.VarSummary) error {
	type jsonVar struct {
		Name        string  `json:"name"`
		DType       string  `json:"dtype"`
		Steps       []int64 `json:"steps"`
		Levels      int     `json:"levels"`
		Arrays      int     `json:"arrays"`
		Blocks      int     `json:"blocks"`
		Bytes       int64   `json:"bytes"`
		StoredBytes int64   `json:"stored_bytes"`
		Files       int     `json:"files"`
	}
	// input is the object of plan --json and the manifest; format is kept
	// at the top level too for scripts written against older versions.
	out := struct {
		Input     planInput `json:"input"`
		Format    string    `json:"format"`
		Variables []jsonVar `json:"variables"`
		Skipped   []string  `json:"skipped"`
	}{Input: planInput{Path: info.Path, Format: info.Format}, Format: info.Format, Skipped: info.Skipped, Variables: []jsonVar{}}
	if out.Skipped == nil {
		out.Skipped = []string{}
	}
	for _, v := range summary {
		out.Variables = append(out.Variables, jsonVar{v.Name, v.DType.NumPy(), v.Steps, v.Levels, v.Arrays, v.Blocks, v.Bytes, v.StoredBytes, v.Files})
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // dtypes like "<f8" stay readable
	return enc.Encode(out)
}
