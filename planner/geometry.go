package planner

import (
	"fmt"
	"slices"

	"relayout/catalog"
)

// Geometry of N-dimensional boxes (catalog.Box: Lower corner and Count per
// dimension, upper bound exclusive). Everyone who needs box arithmetic uses
// these helpers instead of ad-hoc index loops. A Box with a zero Count in some
// dimension is empty; a zero-dimensional Box holds one element.

// MaxDims is the largest rank the clustering works on natively; the geometry
// helpers themselves accept any rank.
const MaxDims = 4

// Volume is the number of elements of b (catalog.Box.Elements).
func Volume(b catalog.Box) int64 { return b.Elements() }

// Upper returns the exclusive upper corner of b.
func Upper(b catalog.Box) []int64 {
	u := make([]int64, len(b.Lower))
	for i := range u {
		u[i] = b.Lower[i] + b.Count[i]
	}
	return u
}

// IsEmpty reports whether b holds no element.
func IsEmpty(b catalog.Box) bool {
	for _, c := range b.Count {
		if c <= 0 {
			return true
		}
	}
	return false
}

// Equal reports whether a and b are the same region (same rank, corner, extent).
func Equal(a, b catalog.Box) bool {
	return slices.Equal(a.Lower, b.Lower) && slices.Equal(a.Count, b.Count)
}

// Intersect returns the common region of a and b and whether it is non-empty.
// a and b must have the same rank.
func Intersect(a, b catalog.Box) (catalog.Box, bool) { return a.Intersect(b) }

// Overlaps reports whether a and b share at least one element.
func Overlaps(a, b catalog.Box) bool {
	for i := range a.Lower {
		if max(a.Lower[i], b.Lower[i]) >= min(a.Lower[i]+a.Count[i], b.Lower[i]+b.Count[i]) {
			return false
		}
	}
	return true
}

// Contains reports whether inner lies entirely within outer. An empty inner box
// is contained in any box of the same rank.
func Contains(outer, inner catalog.Box) bool {
	if len(outer.Lower) != len(inner.Lower) {
		return false
	}
	if IsEmpty(inner) {
		return true
	}
	for i := range outer.Lower {
		if inner.Lower[i] < outer.Lower[i] || inner.Lower[i]+inner.Count[i] > outer.Lower[i]+outer.Count[i] {
			return false
		}
	}
	return true
}

// BoundingBox is the smallest box containing every non-empty box of bs. It
// returns false when there is none.
func BoundingBox(bs []catalog.Box) (catalog.Box, bool) {
	var lo, hi []int64
	for _, b := range bs {
		if IsEmpty(b) {
			continue
		}
		if lo == nil {
			lo, hi = slices.Clone(b.Lower), Upper(b)
			continue
		}
		for i := range lo {
			lo[i] = min(lo[i], b.Lower[i])
			hi[i] = max(hi[i], b.Lower[i]+b.Count[i])
		}
	}
	if lo == nil {
		return catalog.Box{}, false
	}
	for i := range hi {
		hi[i] -= lo[i]
	}
	return catalog.Box{Lower: lo, Count: hi}, true
}

// Relative expresses b in the coordinates of origin's box: b.Lower - origin.Lower.
// Used to turn a global sub-box into an offset within a block or a cuboid.
func Relative(b, origin catalog.Box) catalog.Box {
	r := catalog.Box{Lower: make([]int64, len(b.Lower)), Count: slices.Clone(b.Count)}
	for i := range r.Lower {
		r.Lower[i] = b.Lower[i] - origin.Lower[i]
	}
	return r
}

// CoverError returns nil when the non-empty boxes of parts tile cover exactly:
// each lies inside cover, no two overlap, and together they hold every element
// of cover. Otherwise the error names the first problem found (a part outside,
// a volume mismatch, or an overlapping pair by index). Empty parts are ignored.
func CoverError(cover catalog.Box, parts []catalog.Box) error {
	var sum int64
	for i, p := range parts {
		if len(p.Lower) != len(cover.Lower) || len(p.Count) != len(p.Lower) {
			return fmt.Errorf("planner: part %d %v has rank %d, cover %v has %d", i, p, len(p.Lower), cover, len(cover.Lower))
		}
		if IsEmpty(p) {
			continue
		}
		if !Contains(cover, p) {
			return fmt.Errorf("planner: part %d %v is not inside %v", i, p, cover)
		}
		sum += p.Elements()
	}
	if i, j, ok := Disjoint(parts); !ok {
		return fmt.Errorf("planner: parts %d %v and %d %v overlap", i, parts[i], j, parts[j])
	}
	if want := cover.Elements(); sum != want {
		return fmt.Errorf("planner: parts hold %d elements, %v holds %d", sum, cover, want)
	}
	return nil
}

// ExactUnion reports whether the union of the non-empty parts is exactly a box
// (their bounding box, returned) with no overlap.
func ExactUnion(parts []catalog.Box) (catalog.Box, bool) {
	bb, ok := BoundingBox(parts)
	if !ok || CoverError(bb, parts) != nil {
		return catalog.Box{}, false
	}
	return bb, true
}

// Disjoint reports whether no two non-empty boxes of bs overlap; when two do, it
// returns the indices of one overlapping pair (i < j) and false.
//
// It cuts the set recursively at the median lower corner along the axis of
// largest spread (a k-d split, boxes crossing the plane go to both sides) and
// compares pairs only in small cells, so tilings of a domain take
// O(n log n) rather than O(n²). Deterministic.
func Disjoint(bs []catalog.Box) (i, j int, ok bool) {
	ok = true
	eachOverlap(bs, func(x, y int) bool {
		i, j, ok = min(x, y), max(x, y), false
		return false
	})
	return i, j, ok
}

// OverlapPairs lists every pair (i < j) of non-empty boxes of bs that share
// an element, sorted, with the same k-d cut as Disjoint: O(n log n) for
// tilings, plus the pairs themselves.
func OverlapPairs(bs []catalog.Box) [][2]int {
	seen := map[[2]int]bool{}
	var pairs [][2]int
	eachOverlap(bs, func(x, y int) bool {
		p := [2]int{min(x, y), max(x, y)}
		if !seen[p] {
			seen[p] = true
			pairs = append(pairs, p)
		}
		return true
	})
	slices.SortFunc(pairs, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return pairs
}

// eachOverlap calls fn for overlapping pairs of non-empty boxes of bs (a
// pair may come more than once) until fn returns false.
func eachOverlap(bs []catalog.Box, fn func(i, j int) bool) {
	idx := make([]int, 0, len(bs))
	for k, b := range bs {
		if !IsEmpty(b) {
			idx = append(idx, k)
		}
	}
	if len(idx) < 2 || disjointOnGrid(bs, idx) {
		return
	}
	overlapsIn(bs, idx, nil, nil, fn)
}

// overlapsIn visits the overlapping pairs of the boxes bs[idx] clipped to
// the region [lo, hi) (nil = unbounded): only overlaps inside the region
// count. It returns false when fn stopped it.
func overlapsIn(bs []catalog.Box, idx []int, lo, hi []int64, fn func(i, j int) bool) bool {
	const leaf = 16
	if len(idx) > leaf {
		dims := len(bs[idx[0]].Lower)
		// Try axes by decreasing spread of lower corners; split at the median lower
		// corner strictly above the region's start so both sides shrink.
		type cand struct {
			axis   int
			spread int64
		}
		cands := make([]cand, 0, dims)
		for a := 0; a < dims; a++ {
			mn, mx := clippedLower(bs[idx[0]], a, lo), clippedLower(bs[idx[0]], a, lo)
			for _, k := range idx {
				l := clippedLower(bs[k], a, lo)
				mn, mx = min(mn, l), max(mx, l)
			}
			cands = append(cands, cand{a, mx - mn})
		}
		slices.SortStableFunc(cands, func(x, y cand) int { return int(sign(y.spread - x.spread)) })
		for _, c := range cands {
			if c.spread == 0 {
				break
			}
			a := c.axis
			ls := make([]int64, len(idx))
			for n, k := range idx {
				ls[n] = clippedLower(bs[k], a, lo)
			}
			slices.Sort(ls)
			s := ls[len(ls)/2]
			if s == ls[0] {
				// Median equals the minimum: take the next distinct value.
				p, _ := slices.BinarySearch(ls, s+1)
				s = ls[p]
			}
			var left, right []int
			for _, k := range idx {
				if clippedLower(bs[k], a, lo) < s {
					left = append(left, k)
				}
				if bs[k].Lower[a]+bs[k].Count[a] > s {
					right = append(right, k)
				}
			}
			if len(left) == len(idx) || len(right) == len(idx) {
				continue // no progress on this axis
			}
			lhi := cloneOr(hi, dims, 1<<62)
			lhi[a] = min(lhi[a], s)
			if !overlapsIn(bs, left, lo, lhi, fn) {
				return false
			}
			rlo := cloneOr(lo, dims, -1<<62)
			rlo[a] = max(rlo[a], s)
			return overlapsIn(bs, right, rlo, hi, fn)
		}
	}
	for x := 0; x < len(idx); x++ {
		for y := x + 1; y < len(idx); y++ {
			if overlapIn(bs[idx[x]], bs[idx[y]], lo, hi) && !fn(idx[x], idx[y]) {
				return false
			}
		}
	}
	return true
}

// UnionVolume is the number of elements of the union of bs (boxes of one
// rank). It sweeps each axis in turn between the distinct box edges: cheap
// for the few overlapping boxes it is meant for (Disjoint first tells
// whether there are any), O(n^(rank+1)) at worst.
func UnionVolume(bs []catalog.Box) int64 {
	var live []catalog.Box
	for _, b := range bs {
		if !IsEmpty(b) {
			live = append(live, b)
		}
	}
	if len(live) == 0 {
		return 0
	}
	if len(live[0].Lower) == 0 {
		return 1
	}
	return unionVolume(live, 0)
}

func unionVolume(bs []catalog.Box, d int) int64 {
	edges := make([]int64, 0, 2*len(bs))
	for _, b := range bs {
		edges = append(edges, b.Lower[d], b.Lower[d]+b.Count[d])
	}
	slices.Sort(edges)
	edges = slices.Compact(edges)
	var total int64
	active := make([]catalog.Box, 0, len(bs))
	for k := 0; k+1 < len(edges); k++ {
		x := edges[k]
		active = active[:0]
		for _, b := range bs {
			if b.Lower[d] <= x && x < b.Lower[d]+b.Count[d] {
				active = append(active, b)
			}
		}
		if len(active) == 0 {
			continue
		}
		w := edges[k+1] - x
		if d == len(bs[0].Lower)-1 {
			total += w
		} else {
			total += w * unionVolume(slices.Clone(active), d+1)
		}
	}
	return total
}

// clippedLower is b's lower corner on axis a within a region starting at lo.
func clippedLower(b catalog.Box, a int, lo []int64) int64 {
	if lo != nil {
		return max(b.Lower[a], lo[a])
	}
	return b.Lower[a]
}

func cloneOr(v []int64, n int, fill int64) []int64 {
	if v != nil {
		return slices.Clone(v)
	}
	r := make([]int64, n)
	for i := range r {
		r[i] = fill
	}
	return r
}

// overlapIn reports whether a and b overlap inside [lo, hi) (nil = unbounded).
func overlapIn(a, b catalog.Box, lo, hi []int64) bool {
	for i := range a.Lower {
		l := max(a.Lower[i], b.Lower[i])
		h := min(a.Lower[i]+a.Count[i], b.Lower[i]+b.Count[i])
		if lo != nil {
			l = max(l, lo[i])
		}
		if hi != nil {
			h = min(h, hi[i])
		}
		if l >= h {
			return false
		}
	}
	return true
}

func sign(v int64) int64 {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}
