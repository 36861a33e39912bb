package bp

import (
	"cmp"
	"context"
	"slices"
	"sort"
)

// Writer ranks. A block's characteristics name its sub-file and the offset of
// its record there, not its writer; the process-group (PG) index of the step
// names each writer's rank and the offset of its PG, but not the sub-file.
// The block belongs to the PG with the largest offset <= the block's offset
// among the PGs in the block's sub-file. Which PGs share a sub-file:
//
//	one sub-file per writer      rank order position i -> sub-file i
//	single-file BP3              every PG is in NAME.bp
//	otherwise (aggregation)      ADIOS2's MPIAggregator split: P writers in S
//	                             groups of consecutive ranks, the first P mod S
//	                             groups one larger (group g -> sub-file g)
//
// The grouping is then checked against the data: BP4 PGs start with "[PGI"
// and a u64 length, and the PGs of one group follow each other, so the
// offsets are re-derived by walking that chain (ADIOS2 2.10 records wrong PG
// offsets for ranks > 0 after the first step); BP3 PGs are checked for their
// column-major byte. When the check fails the step's blocks get Rank -1
// (unknown) rather than a guess.

type pgRef struct {
	off  uint64
	rank int32
}

type pgTable struct {
	single bool // one group for every file index
	groups map[uint32][]pgRef
}

// rank returns the writer of the block whose record starts at off in the
// sub-file with index file, or -1.
func (t *pgTable) rank(file uint32, off uint64) int32 {
	if t == nil {
		return -1
	}
	if t.single {
		file = 0
	}
	g := t.groups[file]
	i := sort.Search(len(g), func(i int) bool { return g[i].off > off }) - 1
	if i < 0 {
		return -1
	}
	return g[i].rank
}

const maxPGCache = 256

// writers returns the writer table of a step, nil when unknown.
func (d *Dataset) writers(ctx context.Context, step int) *pgTable {
	if t, ok := d.pgCache[step]; ok {
		return t
	}
	if len(d.pgCache) >= maxPGCache {
		clear(d.pgCache)
	}
	t := d.buildWriters(ctx, step)
	d.pgCache[step] = t
	return t
}

func (d *Dataset) stepPGs(ctx context.Context, step int) []pgEntry {
	if d.bp3 {
		var out []pgEntry
		for _, p := range d.pgs3 {
			if p.Step == d.steps3[step] {
				out = append(out, p)
			}
		}
		return out
	}
	r := d.steps4[step]
	raw, err := d.files.ReadAt(ctx, d.meta, int64(r.pg), int64(r.vars-r.pg))
	if err != nil {
		return nil
	}
	c := newCursor(raw, int64(r.pg), d.bo, d.pfx, d.meta, "process group index")
	return parsePGIndex(c, len(raw)-16)
}

func (d *Dataset) buildWriters(ctx context.Context, step int) *pgTable {
	pgs := d.stepPGs(ctx, step)
	if len(pgs) == 0 {
		return nil
	}
	slices.SortStableFunc(pgs, func(a, b pgEntry) int { return int(int64(a.Rank) - int64(b.Rank)) })
	t := &pgTable{groups: map[uint32][]pgRef{}}
	n, s := len(pgs), d.nfiles
	switch {
	case d.bp3 && s == 0:
		t.single = true
		for _, p := range pgs {
			t.groups[0] = append(t.groups[0], pgRef{p.Offset, int32(p.Rank)})
		}
		slices.SortFunc(t.groups[0], func(a, b pgRef) int { return cmp.Compare(a.off, b.off) })
	case s <= 0:
		return nil
	default:
		q, r := n/s, n%s
		for i, p := range pgs {
			g := i / (q + 1)
			if i >= r*(q+1) {
				if q == 0 {
					return nil
				}
				g = r + (i-r*(q+1))/q
			}
			t.groups[uint32(g)] = append(t.groups[uint32(g)], pgRef{p.Offset, int32(p.Rank)})
		}
	}
	for f, g := range t.groups {
		file := d.subfile(f)
		if t.single {
			file = d.meta
		}
		if !d.checkPGs(ctx, file, g) {
			return nil
		}
	}
	return t
}

// checkPGs verifies (BP3) or re-derives (BP4) the PG offsets of one group.
func (d *Dataset) checkPGs(ctx context.Context, file string, g []pgRef) bool {
	if !d.bp3 {
		p := g[0].off
		for k := range g {
			h, err := d.files.ReadAt(ctx, file, int64(p), 12)
			if err != nil || string(h[:4]) != "[PGI" {
				return false
			}
			g[k].off = p
			n := d.bo.Uint64(h[4:])
			if n > 1<<62 {
				return false
			}
			p += 4 + n
		}
		return true
	}
	for k := range g {
		if k > 0 && g[k].off <= g[k-1].off {
			return false
		}
		h, err := d.files.ReadAt(ctx, file, int64(g[k].off), 9)
		if err != nil || (h[8] != 'y' && h[8] != 'n') {
			return false
		}
	}
	return true
}
