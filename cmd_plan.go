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
	"relayout/job"
	"relayout/planner"
	"relayout/reader"
)

// defaultReaders is the --readers default of plan, inspect and run --layout auto.
const defaultReaders = job.DefaultReaders

// planFlags are the planning flags shared by plan and inspect: the layout
// flags of run (the same defaults, so that plan previews what run writes)
// and the readers and merge scope of the cost figures.
type planFlags struct {
	layoutFlags
}

func addPlanFlags(fs *pflag.FlagSet, pf *planFlags) {
	fs.StringVar(&pf.layout, "layout", string(job.DefaultLayout), "target layout: contiguous, chunked, merged (the cuboids of --scope as write units) or auto (chosen per array by the read-cost model); the same default as relayout run")
	fs.StringVar(&pf.chunkShape, "chunk-shape", "", "chunk shape for --layout chunked, e.g. 64,64,64")
	fs.StringVar(&pf.chunks, "chunks", "", "chunk decomposition for --layout chunked, e.g. 4x4x4")
	fs.IntVar(&pf.readers, "readers", defaultReaders, fmt.Sprintf("readers of the cost model (1-%d)", planner.MaxReaders))
	fs.StringVar(&pf.scope, "scope", "rank", "merge scope costed as \"merged\" and drawn: rank, node or global")
	fs.IntVar(&pf.rpn, "ranks-per-node", 0, "writer ranks per node (0: per-node figures omitted; needed by --scope node)")
	fs.StringVar(&pf.costModel, "cost-model", "", "latency and bandwidths of the cost model from this file (written by relayout calibrate; default: built-in figures)")
}

// options are the planner's options of inspect's flags.
func (pf planFlags) options(cmd string) (planner.PlanOptions, error) {
	var o planner.PlanOptions
	var err error
	o.Layout, o.Readers, o.RanksPerNode = pf.layout, pf.readers, pf.rpn
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
	return openCatalogEach(ctx, in, dbPath, vars, strict, nil, nil)
}

// openCatalogEach is openCatalog that hands each array to each as it is
// stored (job.BuildCatalogEach). With each, a temporary catalog stores no
// block lists: the caller plans the arrays as they come, and nothing reads
// the lists back before the file is removed.
func openCatalogEach(ctx context.Context, in, dbPath string, vars []string, strict bool, each func(*catalog.Array) error, opened func(catalog.DatasetInfo)) (reader.Dataset, *catalog.Store, func(), error) {
	cleanup := func() {}
	summary := dbPath == "" && each != nil
	if dbPath == "" {
		tmp, err := os.MkdirTemp("", "relayout-plan-")
		if err != nil {
			return nil, nil, nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		dbPath = filepath.Join(tmp, "catalog.db")
	}
	ds, store, err := job.BuildCatalogEach(ctx, in, dbPath, reader.Options{Vars: vars, Strict: strict}, 0, summary, each, opened)
	if err != nil {
		cleanup()
		return nil, nil, nil, err
	}
	return ds, store, func() { store.Close(); ds.Close(); cleanup() }, nil
}

// planDoc is the --json document (schema "relayout-plan/1", see docs/layouts.md).
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
	Layout       string          `json:"layout"`
	ChunkShape   []int64         `json:"chunk_shape"`
	Chunks       []int64         `json:"chunks"`
	ChunkAuto    bool            `json:"chunk_auto,omitempty"` // chunked, the chunk shape chosen per array (--compress alone)
	Readers      int             `json:"readers"`
	Scope        string          `json:"scope"`
	RanksPerNode int             `json:"ranks_per_node"`
	Cost         planner.CostDoc `json:"cost_model"`
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
	var asJSON, cuboids bool
	var out, unitSize string
	var shards int
	var force bool
	var cpuProfile string
	fs := newFlags("plan", "relayout plan IN [flags]",
		"relayout plan diags/ --readers 64 --layout auto --json")
	addPlanFlags(fs, &pf)
	fs.StringArrayVar(&pf.vars, "var", nil, "variable name or glob (repeatable; default all)")
	fs.BoolVar(&pf.strict, "strict", false, "refuse an incomplete input (steps written but not indexed, as a writer that died leaves them) instead of planning its complete steps with a warning")
	fs.StringVar(&dbPath, "catalog", "", "keep the catalog database at this path (default: a temporary file, removed)")
	fs.BoolVar(&asJSON, "json", false, "print the plan as JSON (schema relayout-plan/1, see docs/layouts.md)")
	fs.BoolVar(&cuboids, "cuboids", false, "list the merged cuboids of --scope per group (JSON only)")
	fs.StringVarP(&out, "out", "o", "", "also prepare OUT for a sharded rewrite: catalog in OUT/.relayout, output files created and allocated (then relayout rewrite OUT --shard I/N, relayout commit OUT)")
	fs.IntVar(&shards, "shards", 1, "with -o: number of shards (processes running relayout rewrite)")
	fs.StringVar(&pf.compress, "compress", "", "compress chunks: deflate[:level], with shuffle; alone (no --layout): chunked with the chunk shape relayout run would pick, shown per array")
	fs.BoolVar(&pf.fill, "fill", false, "partly covered arrays dense when contiguous (as relayout run --fill), not chunked with the holes unallocated")
	fs.StringVar(&pf.digest, "digest", catalog.SHA256.String(), "with -o: digest of every unit in the journals and of every dataset in the manifest: sha256, blake3, xxh64 or none (as relayout run --digest)")
	fs.BoolVar(&pf.netcdf, "netcdf", false, "with -o: dimension scales for netCDF-4 and xarray (as relayout run --netcdf)")
	fs.BoolVar(&pf.noViews, "no-views", false, "with -o: make no ParaView views (as relayout run --no-views)")
	fs.StringVar(&unitSize, "unit-size", "", "with -o: largest work unit (default 16MiB, smaller when shards would not balance)")
	fs.BoolVar(&force, "force", false, "with -o: plan again over an existing job (its progress is lost), or into a non-empty OUT")
	quiet := fs.BoolP("quiet", "q", false, "no notes on stderr (the plan is still printed on stdout)")
	fs.StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile to this file (for developers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile("plan", cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	logw := io.Writer(os.Stderr)
	if *quiet {
		logw = io.Discard
	}
	if fs.NArg() != 1 {
		return usagef("plan: want exactly one input, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	in := fs.Arg(0)
	spec, err := pf.spec(fs, "plan", in, false)
	if err != nil {
		return err
	}
	cost := spec.Cost // the cost figures' model, whatever the layout
	if out != "" {
		if dbPath != "" {
			return usagef("plan: -o keeps the catalog in OUT/.relayout/catalog.db; drop --catalog")
		}
		if shards < 1 {
			return usagef("plan: --shards must be at least 1")
		}
		spec.Shards = shards
		if unitSize != "" {
			if spec.UnitBytes, err = parseSize(unitSize); err != nil {
				return err
			}
		}
	} else if fs.Changed("shards") || unitSize != "" || force || pf.netcdf || pf.noViews {
		return usagef("plan: --shards, --unit-size, --netcdf, --no-views and --force need -o OUT")
	}
	if err := spec.Validate("plan"); err != nil {
		return err
	}
	// What run writes with these flags (spec.PlanOptions), costed for
	// plan's readers and scope.
	opts := spec.PlanOptions()
	opts.Readers, opts.Cost, opts.RanksPerNode, opts.WithCuboids = pf.readers, cost, pf.rpn, cuboids
	if spec.Layout == job.Auto || spec.ChunkAuto {
		opts.Cost = spec.Cost
	}
	if opts.Scope, err = planner.ParseScope(pf.scope); err != nil {
		return usagef("plan: --scope: %v", err)
	}
	if _, err := planner.NewPlanner(opts); err != nil {
		return usagef("plan: %v", err)
	}
	show := func(ds reader.Dataset, store *catalog.Store) error {
		return showPlan(ctx, ds, store, opts, asJSON)
	}
	if out != "" {
		env := job.Env{Log: logw, Force: force, Version: version, Verb: "plan", OnCatalog: show}
		_, err := job.Prepare(ctx, out, spec, env)
		return err
	}
	// The arrays are planned as the catalog is built (the plan of the
	// catalog, without reading its block lists back), once the input is
	// open: its unlimited dimensions chunk the arrays over them.
	var pc *planCollector
	opened := func(info catalog.DatasetInfo) {
		o := opts
		o.Unlimited = info.Unlimited
		pc, err = newPlanCollector(o)
	}
	add := func(a *catalog.Array) error {
		if pc == nil {
			return err // the collector could not be made
		}
		return pc.add(a)
	}
	ds, store, done, openErr := openCatalogEach(ctx, in, dbPath, spec.Vars, spec.Strict, add, opened)
	if openErr != nil {
		return openErr
	}
	if pc == nil {
		done()
		return err
	}
	defer done()
	if spec.Layout == job.Chunked { // plan -o: the job notes them
		if err := job.ChunkNotes(ctx, "plan", store, spec.ChunkShape, spec.Chunks, logw); err != nil {
			return err
		}
	}
	if pc.err != nil {
		return pc.err
	}
	summary, err := store.Variables()
	if err != nil {
		return err
	}
	return pc.print(ds, summary, asJSON)
}

// showPlan prints the plan of the catalog under opts (JSON or text) on
// stdout.
func showPlan(ctx context.Context, ds reader.Dataset, store *catalog.Store, opts planner.PlanOptions, asJSON bool) error {
	opts.Unlimited = ds.Info().Unlimited // arrays over them are chunked, as run writes them
	pc, err := newPlanCollector(opts)
	if err != nil {
		return err
	}
	summary, err := store.Variables()
	if err != nil {
		return err
	}
	for _, v := range summary {
		if err := store.EachArray(ctx, v.Name, pc.add); err != nil {
			return err
		}
		if pc.err != nil {
			return pc.err
		}
	}
	return pc.print(ds, summary, asJSON)
}

// planCollector plans arrays as they come (each variable's in catalog
// order: step, then level), from the store (showPlan) or while the catalog
// is built (relayout plan without -o: no block list is read back). The
// first planning error is kept in err and ends the planning; the caller
// reports it where showPlan would.
type planCollector struct {
	opts planner.PlanOptions
	p    *planner.Planner
	vars map[string]*planner.VariablePlanner
	err  error
}

func newPlanCollector(opts planner.PlanOptions) (*planCollector, error) {
	p, err := planner.NewPlanner(opts)
	if err != nil {
		return nil, usagef("plan: %v", err)
	}
	return &planCollector{opts: opts, p: p, vars: map[string]*planner.VariablePlanner{}}, nil
}

func (pc *planCollector) add(a *catalog.Array) error {
	if pc.err != nil {
		return nil
	}
	vp := pc.vars[a.Var]
	if vp == nil {
		vp = pc.p.Variable(a.Var, a.DType)
		pc.vars[a.Var] = vp
	}
	if err := vp.Add(a); err != nil {
		pc.err = fmt.Errorf("plan: %w: %w", err, catalog.ErrUnsupported)
	}
	return nil
}

// print prints the plan of the variables of summary (the catalog's, in its
// order) on stdout.
func (pc *planCollector) print(ds reader.Dataset, summary []catalog.VarSummary, asJSON bool) error {
	opts := pc.opts
	info := ds.Info()
	cp := opts.CostParams()
	doc := planDoc{
		Schema: "relayout-plan/1",
		Input:  planInput{Path: info.Path, Format: info.Format},
		Options: planOptionsDoc{Layout: opts.Layout, ChunkShape: opts.ChunkShape, Chunks: opts.Chunks, ChunkAuto: opts.AutoChunks,
			Readers: opts.Readers, Scope: opts.Scope.String(), RanksPerNode: opts.RanksPerNode,
			Cost: cp.Doc()},
		Variables: []planner.VariablePlan{},
		Skipped:   info.Skipped,
	}
	if doc.Skipped == nil {
		doc.Skipped = []string{}
	}
	for _, v := range summary {
		vp := pc.vars[v.Name]
		if vp == nil {
			vp = pc.p.Variable(v.Name, v.DType) // no arrays: as EachArray over none
		}
		plan := vp.Plan()
		doc.Variables = append(doc.Variables, plan)
		doc.Totals.Arrays += plan.Arrays
		doc.Totals.MoveBytes += plan.MoveBytes
		doc.Totals.ReadBytes += plan.ReadBytes
	}
	doc.Totals.Variables = len(doc.Variables)
	doc.Totals.Geometries = doc.Totals.Arrays - pc.p.Hits
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
	layout := o.Layout
	if o.ChunkAuto {
		layout += " (the chunk shape chosen per array: --compress without --layout)"
	}
	fmt.Fprintf(w, "input:  %s (%s)\nplan:   layout %s, %d readers, merge scope %s", doc.Input.Path, doc.Input.Format, layout, o.Readers, o.Scope)
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
			if r := l.Layout.Ranking; len(r) > 0 {
				parts := make([]string, len(r))
				for i, c := range r {
					parts[i] = fmt.Sprintf("%s %.3g s", c.Name, c.Seconds)
				}
				fmt.Fprintf(w, "    auto ranking (%d readers, predicted): %s\n", o.Readers, strings.Join(parts, ", "))
			}
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

func dimsOrScalar(v []int64) string { return job.Dims(v) }

func humanBytes(n int64) string { return job.HumanBytes(n) }

func humanSeconds(v float64) string {
	switch {
	case v >= 1:
		return fmt.Sprintf("%.3gs", v)
	case v >= 1e-3:
		return fmt.Sprintf("%.3gms", v*1e3)
	}
	return fmt.Sprintf("%.3gµs", v*1e6)
}
