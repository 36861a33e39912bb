package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"text/tabwriter"

	"relayout/catalog"
	"relayout/planner"
)

func runInspect(ctx context.Context, args []string) error {
	var pf planFlags
	var svgPath, varName, axisName, dbPath string
	var step, slice int64
	var level int
	fs := newFlags("inspect", "relayout inspect IN [--svg FILE] [--var V] [--step S] [--level L] [--axis z --slice K] [flags]",
		"relayout inspect diags/ --svg Bx.svg --var fields/Bx --axis z --slice 16 --readers 64")
	fs.StringVar(&svgPath, "svg", "", "write a picture of a 2-D slice: blocks by writer rank (ranges of ranks beyond 20), merged cuboids, predicted read cost per pattern with a key of the pattern names (default: list the blocks)")
	fs.StringVar(&varName, "var", "", "variable (default: the first with an array of at least one dimension)")
	fs.Int64Var(&step, "step", -1, "step (default: the variable's first)")
	fs.IntVar(&level, "level", 0, "AMR level")
	fs.StringVar(&axisName, "axis", "z", "axis held fixed for the slice of a 3-D array: x, y, z or its number")
	fs.Int64Var(&slice, "slice", -1, "index along --axis in the array's global index space (default: the middle)")
	fs.StringVar(&dbPath, "catalog", "", "keep the catalog database at this path (default: a temporary file, removed)")
	addPlanFlags(fs, &pf)
	quiet := fs.BoolP("quiet", "q", false, "do not print the one-line summary after writing --svg")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("inspect: want exactly one input, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	opts, err := pf.options("inspect")
	if err != nil {
		return err
	}
	var vars []string
	if varName != "" {
		vars = []string{varName}
	}
	ds, store, done, err := openCatalog(ctx, fs.Arg(0), dbPath, vars, false)
	if err != nil {
		return err
	}
	defer done()
	a, err := pickArray(ctx, store, varName, step, level)
	if err != nil {
		return err
	}
	opts.WithPieces = svgPath == "" // listBlocks names each block's cuboid
	p, err := planner.NewPlanner(opts)
	if err != nil {
		return usagef("inspect: %v", err)
	}
	plan, err := p.PlanArray(a)
	if err != nil {
		return fmt.Errorf("inspect: %w: %w", err, catalog.ErrUnsupported)
	}
	title := fmt.Sprintf("%s step %d", a.Var, a.Step)
	if a.Level > 0 {
		title += fmt.Sprintf(" level %d", a.Level)
	}
	if svgPath == "" {
		return listBlocks(title, a, plan)
	}
	dims := len(a.Shape)
	axis := 0
	if dims >= 3 {
		if axis, err = parseAxis(axisName, dims); err != nil {
			return err
		}
		if !fs.Changed("slice") {
			slice = offsetAt(a, axis) + a.Shape[axis]/2
		}
	}
	title += " — " + ds.Info().Path
	svg, err := planner.RenderSVG(planner.Picture{Title: title, Array: a, Plan: plan,
		Readers: opts.Readers, Scope: opts.Scope, Axis: axis, Slice: slice})
	if err != nil {
		return usagef("inspect: %v", err)
	}
	if err := os.WriteFile(svgPath, svg, 0o644); err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	if *quiet {
		return nil
	}
	fmt.Printf("%s: %d blocks, %d merged cuboids (%s scope), layout %s; wrote %s\n",
		title, plan.Blocks, len(flatten(plan.MergeGroups)), opts.Scope, plan.After.Name, svgPath)
	return nil
}

// pickArray loads the array to inspect: varName (or the first variable with
// a non-scalar array), at step (or its first) and level.
func pickArray(ctx context.Context, store *catalog.Store, varName string, step int64, level int) (*catalog.Array, error) {
	summary, err := store.Variables()
	if err != nil {
		return nil, err
	}
	var v *catalog.VarSummary
	for i := range summary {
		switch {
		case varName != "" && summary[i].Name == varName:
			v = &summary[i]
		case varName == "" && v == nil:
			// Prefer a variable with a dimension: a picture of a scalar says little.
			if a, err := firstArray(ctx, store, summary[i].Name); err == nil && len(a.Shape) > 0 {
				v = &summary[i]
			}
		}
	}
	if v == nil && len(summary) > 0 {
		v = &summary[0] // a glob or a parent name selected these, or all are scalars
	}
	if v == nil {
		return nil, fmt.Errorf("inspect: no variable: %w", catalog.ErrNotFound)
	}
	if step < 0 {
		step = v.Steps[0]
	}
	a, err := store.Array(catalog.Key{Var: v.Name, Step: step, Level: level})
	if err != nil {
		return nil, fmt.Errorf("inspect: %s step %d level %d (steps %v, %d levels): %w", v.Name, step, level, v.Steps, v.Levels, err)
	}
	return a, nil
}

func firstArray(ctx context.Context, store *catalog.Store, name string) (*catalog.Array, error) {
	var first *catalog.Array
	err := store.EachArrayHeader(ctx, name, func(a *catalog.Array) error {
		if first == nil {
			first = a
		}
		return nil
	})
	if err == nil && first == nil {
		err = catalog.ErrNotFound
	}
	return first, err
}

func parseAxis(s string, dims int) (int, error) {
	for d := 0; d < dims; d++ {
		if s == planner.AxisName(d, dims) {
			return d, nil
		}
	}
	if d, err := strconv.Atoi(s); err == nil && d >= 0 && d < dims {
		return d, nil
	}
	return 0, usagef("inspect: --axis %q: want x, y, z or 0..%d for a %d-D array", s, dims-1, dims)
}

func offsetAt(a *catalog.Array, d int) int64 {
	if d < len(a.Offset) {
		return a.Offset[d]
	}
	return 0
}

func flatten(gs []planner.Group) []planner.Cuboid {
	var out []planner.Cuboid
	for _, g := range gs {
		out = append(out, g.Cuboids...)
	}
	return out
}

// listBlocks prints the array's blocks and which merged cuboid holds each.
func listBlocks(title string, a *catalog.Array, plan planner.ArrayPlan) error {
	fmt.Printf("%s: shape %s, %d blocks, %d merged cuboids, layout %s\n\n", title, dimsOrScalar(a.Shape), plan.Blocks, len(flatten(plan.MergeGroups)), plan.After.Name)
	cuboidOf := map[int]int{}
	for i, c := range flatten(plan.MergeGroups) {
		for _, p := range c.Pieces {
			cuboidOf[p.Block] = i
		}
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "block\tbox\trank\tfile\toffset\tlength\tcuboid\t")
	for i := range a.Blocks {
		b := &a.Blocks[i]
		c := "-"
		if n, ok := cuboidOf[i]; ok {
			c = fmt.Sprint(n)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%d\t%s\t\n", i, b.Box, b.Rank, b.File, b.Offset, b.Length, c)
	}
	return tw.Flush()
}
