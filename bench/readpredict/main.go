// Command readpredict sets the read-cost model's predictions beside what
// scripts/readbench.py measured: for every layout of its --json output, the
// planner's PredictRead of the same patterns (region, reader split) with the
// same reader counts, under a cost model (`relayout calibrate`'s file, or the
// defaults), and the predicted against the measured ranking per reader count.
//
// A layout's storage comes from what readbench.py saw: h5py's chunk shape
// (ChunkedStorage), a contiguous dataset (ContiguousStorage), or for the
// original BP dataset its blocks from relayout's catalog (BlocksStorage).
//
//	go run ./bench/readpredict [--cost-model FILE] [--elem 8] READBENCH.json
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/planner"
	"relayout/reader"
)

type benchFile struct {
	Var      string                `json:"var"`
	Shape    []int64               `json:"shape"`
	Patterns map[string][3][]int64 `json:"patterns"` // lower, count, split
	Layouts  []struct {
		Name   string  `json:"name"`
		Path   string  `json:"path"`
		Kind   string  `json:"kind"`
		Chunks []int64 `json:"chunks"`
	} `json:"layouts"`
	Results []struct {
		Pattern string  `json:"pattern"`
		Readers int     `json:"readers"`
		Layout  string  `json:"layout"`
		Seconds float64 `json:"seconds"`
	} `json:"results"`
}

func main() {
	cm := flag.String("cost-model", "", "cost-model file written by relayout calibrate (default: the model's defaults)")
	elem := flag.Int("elem", 8, "element size in bytes")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: readpredict [--cost-model FILE] [--elem 8] READBENCH.json")
		os.Exit(2)
	}
	var bf benchFile
	b, err := os.ReadFile(flag.Arg(0))
	check(err)
	check(json.Unmarshal(b, &bf))
	cp := planner.DefaultCostParams()
	if *cm != "" {
		var f planner.CostDoc
		b, err := os.ReadFile(*cm)
		check(err)
		check(json.Unmarshal(b, &f))
		cp = f.Params()
		check(cp.Check())
	}
	storage := map[string]planner.Storage{}
	for _, l := range bf.Layouts {
		switch {
		case l.Kind == "bp":
			storage[l.Name] = blocks(l.Path, bf.Var, bf.Shape)
		case l.Chunks != nil:
			storage[l.Name] = planner.ChunkedStorage(bf.Shape, l.Chunks)
		default:
			storage[l.Name] = planner.ContiguousStorage(bf.Shape)
		}
	}
	type key struct {
		pattern, layout string
		readers         int
	}
	measured := map[key]float64{}
	var readers []int
	var patterns []string
	for _, r := range bf.Results {
		measured[key{r.Pattern, r.Layout, r.Readers}] = r.Seconds
		if !slices.Contains(readers, r.Readers) {
			readers = append(readers, r.Readers)
		}
		if !slices.Contains(patterns, r.Pattern) {
			patterns = append(patterns, r.Pattern)
		}
	}
	fmt.Printf("# cost model: %.3g s per request, %.3g MB/s per reader, %.3g MB/s aggregate, sieve %d B\n",
		cp.Latency, cp.ReaderBW/1e6, cp.AggBW/1e6, cp.Sieve)
	if cp.Library() {
		fmt.Printf("# library model: sieve buffer %d B, chunk cache %d B, page %d B, %.3g s per call, %.3g MB/s random reads (%.2g at once), copies %.3g MB/s, %.3g s per chunk + %.3g s a MiB of chunk, fresh memory %.3g s a MiB, %.3g cores, CPU share %.2g\n",
			cp.SieveBuf, cp.ChunkCache, cp.Page, cp.CallCost, cp.RandomBW/1e6, max(1, cp.RandomOverlap), cp.CopyBW/1e6, cp.ChunkCost, cp.ChunkByteCost*(1<<20), cp.FreshByteCost*(1<<20), cp.Cores, cp.CPUShare)
	}
	fmt.Printf("%-8s %7s %-16s %10s %10s %7s\n", "pattern", "readers", "layout", "predicted", "measured", "÷")
	type row struct {
		layout          string
		pred, meas      float64
		predRank, mRank int
	}
	var summary []string
	for _, r := range readers {
		var rows []row
		for _, l := range bf.Layouts {
			var pt, mt float64
			for _, pn := range patterns {
				m, ok := measured[key{pn, l.Name, r}]
				if !ok {
					continue
				}
				p := bf.Patterns[pn]
				pat := planner.Pattern{Name: pn, Region: catalog.Box{Lower: p[0], Count: p[1]}, Split: p[2]}
				c := planner.PredictRead(storage[l.Name], *elem, pat, r, cp)
				fmt.Printf("%-8s %7d %-16s %10.4f %10.4f %7.2f\n", pn, r, l.Name, c.Seconds, m, m/c.Seconds)
				pt += c.Seconds
				mt += m
			}
			rows = append(rows, row{layout: l.Name, pred: pt, meas: mt})
		}
		rank := func(get func(row) float64, set func(*row, int)) {
			idx := make([]int, len(rows))
			for i := range idx {
				idx[i] = i
			}
			slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(get(rows[a]), get(rows[b])) })
			for k, i := range idx {
				set(&rows[i], k+1)
			}
		}
		rank(func(x row) float64 { return x.pred }, func(x *row, k int) { x.predRank = k })
		rank(func(x row) float64 { return x.meas }, func(x *row, k int) { x.mRank = k })
		slices.SortStableFunc(rows, func(a, b row) int { return cmp.Compare(a.mRank, b.mRank) })
		best := rows[0].meas
		summary = append(summary, fmt.Sprintf("\n%d readers, sum over %s:", r, strings.Join(patterns, ", ")),
			"| layout | predicted s | predicted rank | measured s | measured rank | ÷ best measured |",
			"|---|---|---|---|---|---|")
		for _, x := range rows {
			summary = append(summary, fmt.Sprintf("| %s | %.4f | %d | %.4f | %d | %.2f |", x.layout, x.pred, x.predRank, x.meas, x.mRank, x.meas/best))
		}
	}
	fmt.Println(strings.Join(summary, "\n"))
}

// blocks is the original dataset's stored blocks, from relayout's catalog.
func blocks(path, v string, shape []int64) planner.Storage {
	ds, err := reader.Open(path, reader.Options{Vars: []string{v}})
	check(err)
	var a *catalog.Array
	check(ds.Scan(context.Background(), func(x *catalog.Array) error {
		if a == nil && x.Var == v && x.Level == 0 {
			a = x
		}
		return nil
	}))
	if a == nil || !slices.Equal(a.Shape, shape) {
		check(fmt.Errorf("%s: no array %s of shape %v", path, v, shape))
	}
	return planner.BlocksStorage(shape, a.Blocks)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "readpredict:", err)
		os.Exit(1)
	}
}
