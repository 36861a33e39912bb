package rewriter

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"relayout/catalog"
	"relayout/internal/h5"
	"relayout/planner"
)

// The merged layout (planner.Merged): the cuboids that planner.Merge finds
// per scope (rank, node or global) are the write units. Each cuboid is
// assembled once from its block pieces (the work plan's sources, read in
// file order) and written as one unit:
//
//   - an array its blocks cover entirely is the usual contiguous dataset;
//     a cuboid's rows are pwritten at their offsets, coalesced into one
//     write per run of whole rows (a cuboid spanning the trailing
//     dimensions is one write);
//   - a partially covered array (an AMR level, a variable written for part
//     of its domain) stores only its cuboids: one contiguous dataset per
//     cuboid, /data/<step>/cuboids/<record path>/<i>, and at the array's
//     usual path an HDF5 virtual dataset mapping each cuboid dataset onto
//     its box, with the array's fill value elsewhere. h5py and every HDF5
//     1.10+ tool read it as the whole array; holes take no space.
//
// The manifest records layout "merged" and the cuboid count. A cuboid
// larger than the slab budget is written in row-major pieces of it.

// MergeOptions configures the merged layout.
type MergeOptions struct {
	Scope        planner.Scope
	RanksPerNode int                // node scope: ranks per node (>= 1)
	Plans        *planner.WorkPlans // work-plan cache; Run makes one when nil
}

// withMerge readies the merged layout's work-plan cache.
func (o Options) withMerge() Options {
	if o.Merge.Plans == nil {
		o.Merge.Plans = planner.NewWorkPlans()
	}
	return o
}

// mergedTarget is a merged array to fill in phase 2.
type mergedTarget struct {
	plan  *planner.WorkPlan
	full  bool
	addr  int64   // full: the contiguous dataset's data
	addrs []int64 // partial: each unit's cuboid dataset
}

// cuboidsGroup is the group holding the cuboid datasets of a partially
// covered merged array.
func cuboidsGroup(step int64, level int, v string) string {
	return fmt.Sprintf("%s/cuboids/%s", stepGroup(step), strings.Join(levelParts(level, v), "/"))
}

// createMerged is phase 1 of a merged array: it plans the cuboids (loading
// the array's blocks) and creates the contiguous dataset, or the cuboid
// datasets and the virtual dataset at path.
func createMerged(w *h5.Writer, store *catalog.Store, hdr *catalog.Array, path string, spec h5.DatasetSpec,
	opts Options) (*mergedTarget, error) {
	a, err := store.Array(hdr.Key())
	if err != nil {
		return nil, err
	}
	if err := checkArray(a); err != nil {
		return nil, err
	}
	a = disjointBlocks(a) // cuboids (and a virtual dataset's sources) must not overlap
	if opts.Merge.Plans == nil {
		opts = opts.withMerge()
	}
	plan, err := opts.Merge.Plans.Merged(a, opts.Merge.Scope, opts.Merge.RanksPerNode)
	if err != nil {
		return nil, err
	}
	t := &mergedTarget{plan: plan, full: planner.FullyCovered(a), addr: -1}
	if t.full {
		d, err := w.CreateDataset(path, spec)
		if err != nil {
			return nil, err
		}
		t.addr = d.Address()
		return t, d.Close()
	}
	group := cuboidsGroup(a.Step, a.Level, a.Var)
	srcs := make([]h5.VirtualSource, len(plan.Units))
	t.addrs = make([]int64, len(plan.Units))
	for i, u := range plan.Units {
		cp := fmt.Sprintf("%s/%d", group, i)
		d, err := w.CreateDataset(cp, h5.DatasetSpec{DType: spec.DType, Shape: u.Box.Count, Fill: spec.Fill})
		if err != nil {
			return nil, err
		}
		t.addrs[i] = d.Address()
		if err := d.Close(); err != nil {
			return nil, err
		}
		srcs[i] = h5.VirtualSource{Path: cp, Box: u.Box}
	}
	if len(srcs) == 0 { // nothing stored: an unallocated dataset reads as fill
		d, err := w.CreateDataset(path, spec)
		if err != nil {
			return nil, err
		}
		return t, d.Close()
	}
	return t, w.CreateVirtual(path, spec, srcs)
}

// mergedJob is one write of phase 2: a unit, or a row-major piece of it.
type mergedJob struct {
	unit int
	box  catalog.Box // in the array's index space
}

// writeMerged is phase 2 of a merged array (a with its blocks): every unit
// of the work plan assembled from its sources and pwritten; then the
// array's row-major digest from a read-only pass.
func writeMerged(ctx context.Context, f *os.File, src catalog.Source, a *catalog.Array, t *mergedTarget,
	opts Options) (string, error) {
	a = disjointBlocks(a) // as createMerged planned it
	size := a.DType.Size
	var jobs []mergedJob
	for ui, u := range t.plan.Units {
		parts, _, err := units(u.Box.Count, planner.Layout{Kind: planner.Contiguous}, size, opts.budget())
		if err != nil {
			return "", err
		}
		for _, p := range parts {
			for d := range p.Lower {
				p.Lower[d] += u.Box.Lower[d]
			}
			jobs = append(jobs, mergedJob{unit: ui, box: p})
		}
	}
	env := opts.env()
	if env.readLimit > 0 {
		ctx = catalog.WithReadLimit(ctx, env.readLimit)
	}
	_, batch := src.(catalog.BatchSource)
	reads := make([][]*catalog.Block, len(jobs))
	keep := make([]int64, len(jobs))
	transient := make([]int64, len(jobs))
	readsOf := func(i int) []*catalog.Block {
		j := jobs[i]
		var rs []*catalog.Block
		for _, s := range t.plan.Units[j.unit].Sources { // in file order
			b := &a.Blocks[s.Block]
			if overlaps(b.Box, j.box) {
				rs = append(rs, trimBlock(b, j.box, size))
			}
		}
		return rs
	}
	var admit func(context.Context, int) error
	var release func(int)
	if env.mem != nil {
		admit = func(ctx context.Context, i int) error {
			reads[i] = readsOf(i)
			keep[i] = jobs[i].box.Elements() * int64(size)
			transient[i] = readNeed(reads[i], a.DType, max(env.readLimit, 1), batch)
			return env.mem.acquire(ctx, keep[i]+transient[i])
		}
		release = func(i int) {
			env.mem.release(keep[i])
			keep[i] = 0
		}
	}
	fill := leFill(a)
	mon := env.mon
	err := orderedAdmit(ctx, opts.jobs(), len(jobs), admit, release, func(ctx context.Context, i int) ([]byte, error) {
		if reads[i] == nil {
			reads[i] = readsOf(i)
		}
		buf, err := assembleReads(ctx, mon, src, a, jobs[i].box, reads[i], fill, true) // disjointBlocks
		reads[i] = nil
		if env.mem != nil {
			env.mem.release(transient[i])
			transient[i] = 0
		}
		return buf, err
	}, func(i int, buf []byte) error {
		j := jobs[i]
		var err error
		if t.full {
			err = writeBox(f, t.addr, a.Shape, j.box, buf, size, mon)
		} else {
			u := t.plan.Units[j.unit].Box
			rel := catalog.Box{Lower: make([]int64, len(u.Lower)), Count: j.box.Count}
			for d := range rel.Lower {
				rel.Lower[d] = j.box.Lower[d] - u.Lower[d]
			}
			err = writeBox(f, t.addrs[j.unit], u.Count, rel, buf, size, mon)
		}
		if err == nil && mon != nil {
			mon.done.Add(int64(len(buf)))
		}
		return err
	})
	if err != nil || opts.NoDigest {
		return "", err
	}
	hashUnits, _, err := units(a.Shape, planner.Layout{Kind: planner.Contiguous}, size, opts.budget())
	if err != nil {
		return "", err
	}
	env.keep = 0
	return streamArrayEnv[struct{}](ctx, env, src, a, hashUnits, opts.jobs(), nil, nil)
}

// writeBox pwrites buf, the row-major bytes of box, into the row-major
// contiguous data of an array of shape at addr: one write per run of
// consecutive bytes (the box's trailing dimensions that span the shape, plus
// the next one, form one run).
func writeBox(f *os.File, addr int64, shape []int64, box catalog.Box, buf []byte, size int, mon *Monitor) error {
	rank := len(shape)
	if rank == 0 {
		t := time.Now()
		_, err := f.WriteAt(buf, addr)
		if mon != nil {
			mon.wrote(len(buf), t)
		}
		return err
	}
	// k: first dimension of the run; dims after k span the shape.
	k := rank - 1
	for k > 0 && box.Count[k] == shape[k] {
		k--
	}
	strides := rowMajorStrides(shape)
	run := product(box.Count[k:]) * int64(size)
	if run == 0 {
		return nil
	}
	idx := make([]int64, k) // index within box along dims < k
	var pos int64
	for {
		off := addr
		for d := range k {
			off += (box.Lower[d] + idx[d]) * strides[d] * int64(size)
		}
		for d := k; d < rank; d++ {
			off += box.Lower[d] * strides[d] * int64(size)
		}
		t := time.Now()
		if _, err := f.WriteAt(buf[pos:pos+run], off); err != nil {
			return err
		}
		if mon != nil {
			mon.wrote(int(run), t)
		}
		pos += run
		d := k - 1
		for ; d >= 0; d-- {
			if idx[d]++; idx[d] < box.Count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return nil
		}
	}
}
