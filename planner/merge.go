package planner

import (
	"fmt"
	"slices"

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
}

// Merge clusters the blocks of one array per scope. Groups come in ascending
// key order; every non-empty block belongs to exactly one group. ranksPerNode
// is used by ScopeNode only and must then be at least 1.
func Merge(blocks []catalog.Block, scope Scope, ranksPerNode int) ([]Group, error) {
	key := func(b *catalog.Block) int { return 0 }
	switch scope {
	case ScopeRank:
		key = func(b *catalog.Block) int { return b.Rank }
	case ScopeNode:
		if ranksPerNode < 1 {
			return nil, fmt.Errorf("planner: ranks per node is %d, want at least 1", ranksPerNode)
		}
		key = func(b *catalog.Block) int {
			if b.Rank < 0 {
				return -1
			}
			return b.Rank / ranksPerNode
		}
	case ScopeGlobal:
	default:
		return nil, fmt.Errorf("planner: unknown merge scope %v", scope)
	}
	// Bucket block indices by key with one integer sort of (key, index) packed
	// into a uint64, so that the order is deterministic (ascending key, then
	// index) and a million blocks cost a few flat slices.
	packed := make([]uint64, 0, len(blocks))
	for i := range blocks {
		if IsEmpty(blocks[i].Box) {
			continue
		}
		k := key(&blocks[i])
		if k < -1 || k >= 1<<31-1 || i >= 1<<32 {
			return nil, fmt.Errorf("planner: block %d: rank %d out of range", i, blocks[i].Rank)
		}
		packed = append(packed, uint64(k+1)<<32|uint64(i))
	}
	slices.Sort(packed)
	idx := make([]int, len(packed))
	keys := make([]int, len(packed)) // keys[n]: key of block idx[n]
	for n, p := range packed {
		idx[n], keys[n] = int(uint32(p)), int(p>>32)-1
	}
	packed = nil
	// Boundaries are ranked once for all blocks: every group's clustering then
	// starts from ready pieces (and a million blocks are sorted once, not per
	// group).
	boxes := make([]catalog.Box, len(blocks))
	for i := range blocks {
		boxes[i] = blocks[i].Box
	}
	dims, _, err := blockRank(boxes)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	var c clusterer
	ranked := dims >= 1 && dims <= MaxDims
	var all []piece // rank-space form of every block, in block order
	if ranked {
		c.dims = dims
		c.rankCoords(boxes)
		all = make([]piece, len(blocks))
		for i := range boxes {
			if !IsEmpty(boxes[i]) {
				all[i] = c.toPiece(boxes[i], 0)
			}
		}
	}
	var groups []Group
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && keys[hi] == keys[lo] {
			hi++
		}
		members := idx[lo:hi:hi]
		var cs []Cuboid
		ok := false
		if ranked {
			c.cur = c.cur[:0]
			for k, i := range members {
				p := all[i]
				p.blk = int32(k)
				c.cur = append(c.cur, p)
			}
			cs, ok = c.cluster(len(members))
		}
		if !ok {
			gboxes := make([]catalog.Box, len(members))
			for k, i := range members {
				gboxes[k] = boxes[i]
			}
			cs = singletons(gboxes)
		}
		for ci := range cs {
			for pi := range cs[ci].Pieces {
				cs[ci].Pieces[pi].Block = members[cs[ci].Pieces[pi].Block]
			}
		}
		groups = append(groups, Group{Key: keys[lo], Blocks: members, Cuboids: cs})
		lo = hi
	}
	return groups, nil
}
