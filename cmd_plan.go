package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/planner"
	"relayout/reader"
	"relayout/rewriter"
)

// defaultReaders is the --readers default of plan, inspect and run --layout auto.
const defaultReaders = 8

// planFlags are the planning flags shared by plan and inspect.
type planFlags struct {
	layout       string
	chunkShape   string
	chunks       string
	readers      int
	scope        string
	ranksPerNode int
	costModel    string
}

func addPlanFlags(fs *pflag.FlagSet, pf *planFlags) {
	fs.StringVar(&pf.layout, "layout", planner.AutoLayout, "target layout: contiguous, chunked, merged (the cuboids of --scope as write units) or auto (chosen per array by the read-cost model)")
	fs.StringVar(&pf.chunkShape, "chunk-shape", "", "chunk shape for --layout chunked, e.g. 64,64,64")
	fs.StringVar(&pf.chunks, "chunks", "", "chunk decomposition for --layout chunked, e.g. 4x4x4")
	fs.IntVar(&pf.readers, "readers", defaultReaders, fmt.Sprintf("readers of the cost model (1-%d)", planner.MaxReaders))
	fs.StringVar(&pf.scope, "scope", "rank", "merge scope costed as \"merged\" and drawn: rank, node or global")
	fs.IntVar(&pf.ranksPerNode, "ranks-per-node", 0, "writer ranks per node (0: per-node figures omitted; needed by --scope node)")
	fs.StringVar(&pf.costModel, "cost-model", "", "latency and bandwidths of the cost model from this file (written by relayout calibrate; default: built-in figures)")
}

func (pf planFlags) options(cmd string) (planner.PlanOptions, error) {
	var o planner.PlanOptions
	var err error
	o.Layout, o.Readers, o.RanksPerNode = pf.layout, pf.readers, pf.ranksPerNode
	if o.ChunkShape, err = parseDims(pf.chunkShape); err != nil {
		return o, err
	}
	if o.Chunks, err = parseDims(pf.chunks); err != nil {
		return o, err
	}
	if o.Cost, err = loadCostModel(pf.costModel); err != nil {
		return o, err
	}
	if o.Scope, err = planner.ParseScope(pf.scope); err != nil {
		return o, usagef("%s: --scope: %v", cmd, err)
	}
	if _, err := planner.NewPlanner(o); err != nil {
		return o, usagef("%s: %v", cmd, err)
	}
	return o, nil
}

// openCatalog builds the catalog of in at dbPath, or in a temporary directory
// removed by the returned cleanup when dbPath is empty.
func openCatalog(ctx context.Context, in, dbPath string, vars []string, strict bool) (reader.Dataset, *catalog.Store, func(), error) {
	cleanup := func() {}
	if dbPath == "" {
		tmp, err := os.MkdirTemp("", "relayout-plan-")
		if err != nil {
			return nil, nil, nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		dbPath = filepath.Join(tmp, "catalog.db")
	}
	ds, store, err := buildCatalog(ctx, in, dbPath, reader.Options{Vars: vars, Strict: strict})
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return ds, store, func() { store.Close(); ds.Close(); cleanup() }, nil
}

// planDoc is the --json document (schema "relayout-plan/1", see README.md).
type planDoc struct {
	Schema    string                 `json:"schema"`
	Input     planInput              `json:"input"`
	Options   planOptionsDoc         `json:"options"`
	Variables []planner.VariablePlan `json:"variables"`
	Totals    planTotals             `json:"totals"`
	Skipped   []string               `json:"skipped"`
}

type planInput struct {
	Path   string `json:"path"`
	Format string `json:"format"`
}

type planOptionsDoc struct {
	Layout       string   `json:"layout"`
	ChunkShape   []int64  `json:"chunk_shape"`
	Chunks       []int64  `json:"chunks"`
	Readers      int      `json:"readers"`
	Scope        string   `json:"scope"`
	RanksPerNode int      `json:"ranks_per_node"`
	Cost         costDocs `json:"cost_model"`
}

type costDocs struct {
	LatencySeconds  float64 `json:"latency_s"`
	ReaderBandwidth float64 `json:"reader_bytes_per_s"`
	AggBandwidth    float64 `json:"aggregate_bytes_per_s"`
	SieveBytes      int64   `json:"sieve_bytes"`
}

type planTotals struct {
	Variables  int   `json:"variables"`
	Arrays     int   `json:"arrays"`
	Geometries int   `json:"geometries"` // distinct block layouts planned (the rest came from the cache)
	MoveBytes  int64 `json:"move_bytes"`
	ReadBytes  int64 `json:"read_bytes"`
}

func runPlan(ctx context.Context, args []string) (err error) {
	var pf planFlags
	var dbPath string
	var vars []string
	var asJSON, cuboids bool
	var out, compress, unitSize string
	var netcdf bool
	var shards int
	var force, strict bool
	fs := newFlags("plan", "relayout plan IN [flags]",
		"relayout plan diags/ --readers 64 --layout auto --json")
	addPlanFlags(fs, &pf)
	fs.StringArrayVar(&vars, "var", nil, "variable name or glob (repeatable; default all)")
	fs.BoolVar(&strict, "strict", false, "refuse an incomplete input (steps written but not indexed, as a writer that died leaves them) instead of planning its complete steps with a warning")
	fs.StringVar(&dbPath, "catalog", "", "keep the catalog database at this path (default: a temporary file, removed)")
	fs.BoolVar(&asJSON, "json", false, "print the plan as JSON (schema relayout-plan/1, see README.md)")
	fs.BoolVar(&cuboids, "cuboids", false, "list the merged cuboids of --scope per group (JSON only)")
	fs.StringVarP(&out, "out", "o", "", "also prepare OUT for a sharded rewrite: catalog in OUT/.relayout, output files created and allocated (then relayout rewrite OUT --shard I/N, relayout commit OUT)")
	fs.IntVar(&shards, "shards", 1, "with -o: number of shards (processes running relayout rewrite)")
	fs.StringVar(&compress, "compress", "", "with -o: compress chunks: deflate[:level], with shuffle")
	fs.BoolVar(&netcdf, "netcdf", false, "with -o: dimension scales for netCDF-4 and xarray (as relayout run --netcdf)")
	fs.StringVar(&unitSize, "unit-size", "", "with -o: largest work unit (default 16MiB, smaller when shards would not balance)")
	fs.BoolVar(&force, "force", false, "with -o: plan again over an existing job (its progress is lost), or into a non-empty OUT")
	quiet := fs.BoolP("quiet", "q", false, "no notes on stderr (the plan is still printed on stdout)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logw := io.Writer(os.Stderr)
	if *quiet {
		logw = io.Discard
	}
	if fs.NArg() != 1 {
		return usagef("plan: want exactly one input, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	opts, err := pf.options("plan")
	if err != nil {
		return err
	}
	opts.WithCuboids = cuboids
	var spec jobSpec
	if out != "" {
		if dbPath != "" {
			return usagef("plan: -o keeps the catalog in OUT/.relayout/catalog.db; drop --catalog")
		}
		if opts.Layout == planner.Merged && opts.Scope == planner.ScopeNode && pf.ranksPerNode < 1 {
			return usagef("plan: -o --layout merged --scope node needs --ranks-per-node >= 1")
		}
		deflate, err := parseCompress(compress)
		if err != nil {
			return err
		}
		if shards < 1 {
			return usagef("plan: --shards must be at least 1")
		}
		inAbs, err := realPath(fs.Arg(0))
		if err != nil {
			return usagef("plan: %s: %v", fs.Arg(0), err)
		}
		spec = jobSpec{Input: inAbs, Vars: vars, Layout: opts.Layout, ChunkShape: opts.ChunkShape, Chunks: opts.Chunks,
			Deflate: deflate, Shards: shards, NetCDF: netcdf, Strict: strict}
		if opts.Layout == planner.AutoLayout {
			spec.Readers, spec.Cost = opts.Readers, opts.Cost
		}
		if opts.Layout == planner.Merged {
			spec.Scope, spec.RanksPerNode = pf.scope, pf.ranksPerNode
		}
		if unitSize != "" {
			if spec.UnitBytes, err = parseSize(unitSize); err != nil {
				return err
			}
		}
		if err := checkOutput(fs.Arg(0), out, force); err != nil { // again under the lock
			return err
		}
		lock, err := lockOut(out, "plan -o", os.Stderr)
		if err != nil {
			return err
		}
		defer lock.Release()
		if done, err := settleOut(inAbs, out, "", force, logw); done || err != nil {
			return err
		}
		job, err := existingJob(out, spec, force)
		if err != nil {
			return err
		}
		if job != nil && !force {
			fmt.Fprintf(logw, "%s: already prepared for %d shards (%d units); run relayout rewrite %s --shard I/%d, then relayout commit %s (--force plans again)\n",
				out, job.Shards, len(job.Units), out, job.Shards, out)
			return nil
		}
		if err := checkEmpty(out, force); err != nil {
			return err
		}
		os.Remove(filepath.Join(workDir(out), rewriter.JobFile))
		dbPath = filepath.Join(workDir(out), "catalog.db")
	} else if fs.Changed("shards") || compress != "" || unitSize != "" || force || netcdf {
		return usagef("plan: --shards, --compress, --unit-size, --netcdf and --force need -o OUT")
	}
	ds, store, done, err := openCatalog(ctx, fs.Arg(0), dbPath, vars, strict)
	if err != nil {
		return err
	}
	defer done()
	if out != "" {
		defer func() {
			if err == nil {
				_, err = prepareWith(ctx, out, spec, ds, store, logw)
			}
		}()
	}
	summary, err := store.Variables()
	if err != nil {
		return err
	}
	if out == "" && opts.Layout == planner.Chunked { // plan -o: prepareWith notes them
		if err := chunkNotes(ctx, store, opts.ChunkShape, opts.Chunks, logw); err != nil {
			return err
		}
	}
	if out != "" {
		// The file-system decisions (striping, alignment) the output files get.
		outFS, err := fsinfo.Detect(out)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		for _, v := range summary {
			fmt.Fprintf(logw, "storage: %s (%d bytes) on %s: %s\n", v.Name, v.Bytes, outFS.Name,
				rewriter.FileLayout(outFS, v.Bytes, fsinfo.Override{}))
		}
	}
	p, err := planner.NewPlanner(opts)
	if err != nil {
		return usagef("plan: %v", err)
	}
	info := ds.Info()
	cp := opts.CostParams()
	doc := planDoc{
		Schema: "relayout-plan/1",
		Input:  planInput{Path: info.Path, Format: info.Format},
		Options: planOptionsDoc{Layout: opts.Layout, ChunkShape: opts.ChunkShape, Chunks: opts.Chunks,
			Readers: opts.Readers, Scope: opts.Scope.String(), RanksPerNode: opts.RanksPerNode,
			Cost: costDocs{cp.Latency, cp.ReaderBW, cp.AggBW, cp.Sieve}},
		Variables: []planner.VariablePlan{},
		Skipped:   info.Skipped,
	}
	if doc.Skipped == nil {
		doc.Skipped = []string{}
	}
	for _, v := range summary {
		vp := p.Variable(v.Name, v.DType)
		err := store.EachArray(ctx, v.Name, func(a *catalog.Array) error {
			if err := vp.Add(a); err != nil {
				return fmt.Errorf("plan: %w: %w", err, catalog.ErrUnsupported)
			}
			return nil
		})
		if err != nil {
			return err
		}
		plan := vp.Plan()
		doc.Variables = append(doc.Variables, plan)
		doc.Totals.Arrays += plan.Arrays
		doc.Totals.MoveBytes += plan.MoveBytes
		doc.Totals.ReadBytes += plan.ReadBytes
	}
	doc.Totals.Variables = len(doc.Variables)
	doc.Totals.Geometries = doc.Totals.Arrays - p.Hits
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false) // dtypes like "<f8" stay readable
		return enc.Encode(doc)
	}
	printPlan(os.Stdout, doc)
	return nil
}

func printPlan(w io.Writer, doc planDoc) {
	o := doc.Options
	fmt.Fprintf(w, "input:  %s (%s)\nplan:   layout %s, %d readers, merge scope %s", doc.Input.Path, doc.Input.Format, o.Layout, o.Readers, o.Scope)
	if o.RanksPerNode > 0 {
		fmt.Fprintf(w, ", %d ranks per node", o.RanksPerNode)
	}
	fmt.Fprintf(w, "\nmodel:  %.3g s per request, %.3g GiB/s per reader, %.3g GiB/s aggregate\n",
		o.Cost.LatencySeconds, o.Cost.ReaderBandwidth/(1<<30), o.Cost.AggBandwidth/(1<<30))
	for _, v := range doc.Variables {
		fmt.Fprintf(w, "\n%s  %s  %d arrays, %d block layouts, move %s (read %s)\n", v.Name, v.DType, v.Arrays, len(v.Layouts), humanBytes(v.MoveBytes), humanBytes(v.ReadBytes))
		for _, l := range v.Layouts {
			fmt.Fprintf(w, "  %s level %d  shape %s  %d blocks", stepsString(l.Steps), l.Level, dimsOrScalar(l.Shape), l.Blocks)
			if l.Ranks > 0 {
				fmt.Fprintf(w, " from %d ranks (per rank min/mean/max %d/%.3g/%d)", l.Ranks, l.BlocksPerRank.Min, l.BlocksPerRank.Mean, l.BlocksPerRank.Max)
			}
			if l.UnknownRankBlocks > 0 {
				fmt.Fprintf(w, ", %d of unknown rank", l.UnknownRankBlocks)
			}
			fmt.Fprintf(w, "\n    merged cuboids: per rank %d (min/mean/max %d/%.3g/%d)", l.Cuboids.Rank, l.Cuboids.PerRank.Min, l.Cuboids.PerRank.Mean, l.Cuboids.PerRank.Max)
			if l.Cuboids.Node != nil {
				fmt.Fprintf(w, ", per node %d (%d/%.3g/%d)", *l.Cuboids.Node, l.Cuboids.PerNode.Min, l.Cuboids.PerNode.Mean, l.Cuboids.PerNode.Max)
			}
			fmt.Fprintf(w, ", global %d\n", l.Cuboids.Global)
			fmt.Fprintf(w, "    layout: %s — %s\n", l.After.Name, l.Layout.Reason)
			if len(l.Costs) > 0 {
				tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
				fmt.Fprintf(tw, "    pattern\tbefore: %s (%d)\tmerged: %s (%d)\tafter: %s (%d)\t\n",
					l.Before.Name, l.Before.Pieces, l.Merged.Name, l.Merged.Pieces, l.After.Name, l.After.Pieces)
				for _, c := range l.Costs {
					fmt.Fprintf(tw, "    %s", c.Pattern)
					for _, f := range []planner.CostFigures{c.Before, c.Merged, c.After} {
						fmt.Fprintf(tw, "\t%s  %d req  %s ×%.2f", humanSeconds(f.Seconds), f.Requests, humanBytes(f.Bytes), f.Amplification)
					}
					fmt.Fprintln(tw, "\t")
				}
				tw.Flush()
			}
		}
	}
	t := doc.Totals
	fmt.Fprintf(w, "\n%d variables, %d arrays, %d distinct block layouts planned; move %s, read %s\n",
		t.Variables, t.Arrays, t.Geometries, humanBytes(t.MoveBytes), humanBytes(t.ReadBytes))
}

// stepsString prints steps compactly: "step 5", "steps 0,1,2", "steps 0..900 (10)".
func stepsString(s []int64) string {
	switch {
	case len(s) == 1:
		return fmt.Sprintf("step %d", s[0])
	case len(s) <= 6:
		parts := make([]string, len(s))
		for i, v := range s {
			parts[i] = fmt.Sprint(v)
		}
		return "steps " + strings.Join(parts, ",")
	}
	return fmt.Sprintf("steps %d..%d (%d)", s[0], s[len(s)-1], len(s))
}

func dimsOrScalar(v []int64) string {
	if len(v) == 0 {
		return "scalar"
	}
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, "x")
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1fGiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

func humanSeconds(v float64) string {
	switch {
	case v >= 1:
		return fmt.Sprintf("%.3gs", v)
	case v >= 1e-3:
		return fmt.Sprintf("%.3gms", v*1e3)
	}
	return fmt.Sprintf("%.3gµs", v*1e6)
}
