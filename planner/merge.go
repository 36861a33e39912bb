package planner

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"relayout/catalog"
)

// Scope selects which blocks of one array are clustered together.
type Scope int

const (
	ScopeRank   Scope = iota // per writer rank (intra-process merge)
	ScopeNode                // per node: ranks r with the same r / ranksPerNode
	ScopeGlobal              // all blocks of the array (variable, step, level)
)

func (s Scope) String() string {
	switch s {
	case ScopeRank:
		return "rank"
	case ScopeNode:
		return "node"
	case ScopeGlobal:
		return "global"
	}
	return fmt.Sprintf("Scope(%d)", int(s))
}

// ParseScope parses "rank", "node" or "global" (a usage error otherwise).
func ParseScope(s string) (Scope, error) {
	for _, sc := range []Scope{ScopeRank, ScopeNode, ScopeGlobal} {
		if s == sc.String() {
			return sc, nil
		}
	}
	return 0, fmt.Errorf("planner: unknown merge scope %q (want rank, node or global)", s)
}

// Group is one set of blocks clustered together and its cuboids.
type Group struct {
	// Key is the writer rank (ScopeRank), the node rank/ranksPerNode
	// (ScopeNode) or 0 (ScopeGlobal). Blocks of unknown rank (-1) form their own
	// group with key -1 under the rank and node scopes.
	Key     int
	Blocks  []int    // indices into Merge's blocks, ascending
	Cuboids []Cuboid // Piece.Block indexes Merge's blocks, not Group.Blocks

	count int // cuboids of a merge without cuboids (Cuboids nil)
}

// Merge clusters the blocks of one array per scope. Groups come in ascending
// key order; every non-empty block belongs to exactly one group. ranksPerNode
// is used by ScopeNode only and must then be at least 1.
func Merge(blocks []catalog.Block, scope Scope, ranksPerNode int) ([]Group, error) {
	r, err := rankBlocks(blocks)
	if err != nil {
		return nil, err
	}
	return r.merge(scope, ranksPerNode, withPieces)
}

// mergeOut is what a merge builds of each group's cuboids.
type mergeOut int

const (
	countOnly  mergeOut = iota // their number only (Group.count; Cuboids nil)
	boxesOnly                  // Cuboids without their Pieces
	withPieces                 // Cuboids with their Pieces
)

// rankedBlocks are an array's blocks converted once to the rank space of the
// clustering (see clusterer): the merges of every scope of one plan start
// from them, so a million blocks are sorted and searched once, not once per
// scope and group.
type rankedBlocks struct {
	blocks []catalog.Block
	c      clusterer
	ranked bool    // 1 to MaxDims dimensions: clustered in rank space
	all    []piece // rank-space form of every block, in block order
}

func rankBlocks(blocks []catalog.Block) (*rankedBlocks, error) {
	r := &rankedBlocks{blocks: blocks}
	dims, _, err := blockRankOf(blocks, blockBox)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	r.ranked = dims >= 1 && dims <= MaxDims
	if r.ranked {
		r.c.dims = dims
		rankCoordsOf(&r.c, blocks, blockBox)
		r.all = make([]piece, len(blocks))
		catalog.Populate(r.all)
		for i := range blocks {
			if !IsEmpty(blocks[i].Box) {
				r.all[i] = r.c.toPiece(blocks[i].Box, 0)
			}
		}
	}
	return r, nil
}

// merge is Merge over the ranked blocks, building out of each group's
// cuboids: countOnly is what the plan's figures of the scopes it does not
// draw need (no box and no piece list per cuboid), boxesOnly what the
// plan's costs and pictures of its scope need.
func (r *rankedBlocks) merge(scope Scope, ranksPerNode int, out mergeOut) ([]Group, error) {
	cuboids := out != countOnly
	key := func(b *catalog.Block) int { return 0 }
	switch scope {
	case ScopeRank:
		key = func(b *catalog.Block) int { return int(b.Rank) }
	case ScopeNode:
		if ranksPerNode < 1 {
			return nil, fmt.Errorf("planner: ranks per node is %d, want at least 1", ranksPerNode)
		}
		key = func(b *catalog.Block) int {
			if b.Rank < 0 {
				return -1
			}
			return int(b.Rank) / ranksPerNode
		}
	case ScopeGlobal:
	default:
		return nil, fmt.Errorf("planner: unknown merge scope %v", scope)
	}
	// Groups (runs of one key) are clustered independently: by a few
	// workers when there are several large ones, each with its own scratch
	// buffers over the shared, read-only ranked boundaries; every group's
	// result goes to its own slot, so the output does not depend on the
	// schedule.
	idx, spans, err := r.groupsOf(key)
	if err != nil {
		return nil, err
	}
	groups := make([]Group, len(spans))
	one := func(c *clusterer, gi int) {
		members := idx[spans[gi].lo:spans[gi].hi:spans[gi].hi]
		g := Group{Key: spans[gi].key, Blocks: members}
		ok := false
		if r.ranked {
			if cap(c.cur) < len(members) {
				c.cur = make([]piece, 0, len(members))
				catalog.Populate(c.cur)
			}
			c.cur = c.cur[:0]
			for k, i := range members {
				p := r.all[i]
				p.blk = int32(k)
				c.cur = append(c.cur, p)
			}
			if cuboids {
				g.Cuboids, ok = c.cluster(len(members), out == withPieces)
			} else {
				g.count, ok = c.count(len(members))
			}
		}
		if !ok && !cuboids {
			g.count = len(members) // singletons: one cuboid per (non-empty) member
		} else if !ok {
			gboxes := make([]catalog.Box, len(members))
			for k, i := range members {
				gboxes[k] = r.blocks[i].Box
			}
			g.Cuboids = singletons(gboxes)
		}
		for ci := range g.Cuboids {
			for pi := range g.Cuboids[ci].Pieces {
				g.Cuboids[ci].Pieces[pi].Block = members[g.Cuboids[ci].Pieces[pi].Block]
			}
		}
		groups[gi] = g
	}
	workers := min(runtime.GOMAXPROCS(0), len(spans), len(idx)/parallelMergeBlocks)
	if workers < 2 {
		for gi := range spans {
			one(&r.c, gi)
		}
		return groups, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		c := &clusterer{dims: r.c.dims, axis: r.c.axis}
		if w == 0 {
			c = &r.c
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for gi := int(next.Add(1) - 1); gi < len(spans); gi = int(next.Add(1) - 1) {
				one(c, gi)
			}
		}()
	}
	wg.Wait()
	return groups, nil
}

// groupSpan is one group of groupsOf: idx[lo:hi] are its blocks.
type groupSpan struct{ lo, hi, key int }

// groupsOf lists the non-empty blocks group by group (ascending key, then
// index: a deterministic order) as indices into r.blocks, and each group's
// span of them. Blocks that come in key order (the global scope's one key,
// a writer's blocks listed rank by rank) are listed in one pass; others are
// bucketed with one integer sort of (key, index) packed into a uint64, so
// that a million blocks cost a few flat slices either way.
func (r *rankedBlocks) groupsOf(key func(*catalog.Block) int) ([]int, []groupSpan, error) {
	blocks := r.blocks
	idx := make([]int, 0, len(blocks))
	var spans []groupSpan
	for i := range blocks {
		if IsEmpty(blocks[i].Box) {
			continue
		}
		k := key(&blocks[i])
		if k < -1 || k >= 1<<31-1 || i >= 1<<32 {
			return nil, nil, fmt.Errorf("planner: block %d: rank %d out of range", i, blocks[i].Rank)
		}
		if n := len(spans); n == 0 || spans[n-1].key != k {
			if n > 0 && k < spans[n-1].key {
				idx, spans := r.sortedGroups(key) // out of key order
				return idx, spans, nil
			}
			spans = append(spans, groupSpan{lo: len(idx), key: k})
		}
		idx = append(idx, i)
		spans[len(spans)-1].hi = len(idx)
	}
	return idx, spans, nil
}

// sortedGroups is groupsOf for blocks out of key order (their keys already
// checked): (key, index) pairs packed into uint64s and sorted.
func (r *rankedBlocks) sortedGroups(key func(*catalog.Block) int) ([]int, []groupSpan) {
	blocks := r.blocks
	packed := make([]uint64, 0, len(blocks))
	for i := range blocks {
		if !IsEmpty(blocks[i].Box) {
			packed = append(packed, uint64(key(&blocks[i])+1)<<32|uint64(i))
		}
	}
	slices.Sort(packed)
	idx := make([]int, len(packed))
	var spans []groupSpan
	for n, p := range packed {
		idx[n] = int(uint32(p))
		if k := int(p>>32) - 1; len(spans) == 0 || spans[len(spans)-1].key != k {
			spans = append(spans, groupSpan{lo: n, key: k})
		}
		spans[len(spans)-1].hi = n + 1
	}
	return idx, spans
}

// parallelMergeBlocks is the number of blocks per merge worker below which
// a merge's groups are clustered one after the other.
const parallelMergeBlocks = 8192

// cuboidCount is the number of cuboids of g (Cuboids, or the count of a
// merge without cuboids).
func (g *Group) cuboidCount() int {
	if g.Cuboids != nil {
		return len(g.Cuboids)
	}
	return g.count
}
