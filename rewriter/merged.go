package rewriter

import (
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

// writeBox pwrites buf, the row-major bytes of box, into the row-major
// contiguous data of an array of shape at addr: one write per run of
// consecutive bytes (the box's trailing dimensions that span the shape, plus
// the next one, form one run).
func writeBox(f *os.File, addr int64, shape []int64, box catalog.Box, buf []byte, size int, mon *Monitor) error {
	rank := len(shape)
	if rank == 0 {
		t := time.Now()
		_, err := writeAt(f, buf, addr)
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
		if _, err := writeAt(f, buf[pos:pos+run], off); err != nil {
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
