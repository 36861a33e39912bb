package limits

import (
	"fmt"
	"runtime"
)

// DefaultMaxMem is the memory budget when --max-mem is unset (<= 0).
const DefaultMaxMem = 1 << 30

// Sizes that do not scale with the budget.
const (
	// MinReadLimit: below it a coalesced read is only when the budget
	// itself is that small.
	MinReadLimit = 64 << 10
	// MaxReadLimit is blockio's own cap on a coalesced run.
	MaxReadLimit = 16 << 20

	// MaxSlabBytes caps a slab well below the memory budget: smaller slabs
	// let the workers assemble one array in parallel while earlier slabs
	// are hashed and written, and keep the peak RSS low. Large enough that
	// per-slab costs (one write call, a scan of the block list) stay
	// negligible.
	MaxSlabBytes = 32 << 20

	// Cache-sized units. A unit is assembled by one core, then hashed and
	// written by others; while it fits the caches those passes do not go
	// back to memory. Measured on the 1 GiB bench input
	// (bench/RESULTS.md, 2026-12-01), 4 MiB tiles ran 1.5x faster than 64
	// MiB row bands and varied far less from run to run on a shared
	// machine, although their digest needs a pass over the written bytes;
	// 4, 8 and 16 MiB tiles ran alike, and 8 MiB ones read the input in 1
	// MiB requests (a Lustre RPC).
	TileTarget = 8 << 20  // tile size aimed at
	TileLimit  = 16 << 20 // bands up to this size stay whole-row units

	// MaxItemBytes caps an item whatever the budget: larger items only
	// lengthen read requests already past the rewriter's minItemRead, and
	// hold more memory. Measured on issue 19's BP4 input (4 variables of
	// 448^3 in 32^3 blocks, one 32-row band of the four is 205 MB, cut by
	// position) at --max-mem 1GiB, --no-verify: items of a quarter of the
	// budget peaked at 672 MB RSS (1,659 reads of 944 KiB), of 64 MiB at
	// 362-380 MB (3,411 reads of 459 KiB) in the same CPU time; 32 MiB ones
	// cut bp_gen.py's BP4 256^3 in 8^3 blocks (a band of 32 rows is ~50
	// MB) below its bands: 7,237 reads of 42 KiB instead of 1,024 of 293
	// KiB.
	MaxItemBytes = 64 << 20

	// VerifyMaxInFlight bounds the arrays verified at once.
	VerifyMaxInFlight = 4
	// VerifyMinShare is the least budget an array in flight gets in the
	// verifier: below it, fewer arrays run at once (a small --max-mem keeps
	// its bands, one array at a time).
	VerifyMinShare = 32 << 20
)

// Limits are the sizes derived from a memory budget and a worker count
// (For). The rewriter's fields bound one pipeline: the ordered pipeline
// keeps up to about 2*Jobs+1 units alive (Jobs being assembled, Jobs+1
// waiting their turn), each charged to the budget before its buffers exist
// with its slab and its largest read.
type Limits struct {
	// MaxMem is the memory budget in bytes (--max-mem, less what the job
	// keeps elsewhere), DefaultMaxMem when none was given.
	MaxMem int64
	// Jobs is the number of workers (--jobs), GOMAXPROCS when none was
	// given: units assembled at once by the rewriter, blocks fetched and
	// compared at once by the verifier.
	Jobs int

	// Share is one live unit's part of the budget, MaxMem/(2*Jobs+2): the
	// 2*Jobs+1 units the ordered pipeline keeps alive, and one more.
	Share int64
	// ReadLimit is the largest coalesced read a unit issues: a quarter of
	// the Share, at least MinReadLimit (unless half the Share is less), at
	// most MaxReadLimit.
	ReadLimit int64
	// UnitTarget is the slab size to aim for: the Share minus the read
	// allowance (ReadLimit), at most MaxSlabBytes (and UnitCap).
	UnitTarget int64
	// UnitLimit is the most bytes one unit may hold when it grows to end on
	// a source block boundary (planner.AlignedSlabs): enough that Jobs+1
	// such units and their reads fit the budget at once (Jobs being
	// assembled, one being hashed and written), MaxMem/(Jobs+1) less the
	// ReadLimit, and never less than UnitTarget. A chunked unit is charged
	// twice (its buffer and the chunks cut from it): half of it there.
	UnitLimit int64
	// JoinLimit is the most bytes a unit may hold when it is made large so
	// that blocks interleaved in the input are read in one pass (the
	// rewriter's joint bands, mergeInterleaved, a whole array before tiles
	// are cut): two such units and their reads fit the budget (one being
	// assembled, one written), MaxMem/2 less the ReadLimit, never less than
	// UnitLimit. Fewer units assembled at once cost less than what the join
	// saves: units whose blocks interleave, left apart, read either each
	// other's bytes or every block alone (64^3 float64 in 4^3 HDF5 chunks
	// scattered in the file, 2 MiB: one unit read in about 8 requests, two
	// units in about 2,070; e2e TestTinyChunksReadOnce).
	JoinLimit int64
	// TileTarget is the size aimed at by the tiles of a large contiguous
	// array (and the units of a chunked one): cache-sized (see the
	// constant TileTarget).
	TileTarget int64
	// TileLimit: row bands up to this size stay whole-row units; larger
	// arrays are cut in tiles (at most UnitCap).
	TileLimit int64
	// ItemLimit caps the buffers of an item of a joint pipeline (the units
	// of interleaved arrays admitted, assembled and written as one): a
	// quarter of the budget, at most MaxItemBytes, never less than
	// UnitTarget.
	ItemLimit int64
	// BandAllowance is what the band buffers of one pipeline's digests may
	// hold: what the budget leaves beside its largest item (ItemLimit) and
	// the coalesced reads of Jobs units (twice: 2*Jobs*ReadLimit), so that
	// an item and its reads still fit beside them (the pipeline's setup also
	// sets aside the largest of its arrays' block reads, the rewriter's
	// bandReserve: Jobs times a block and its decoded copy), and at most an
	// eighth of the budget: a band buffer is resident while the reads
	// charged beside it often are not (with a quarter, peak RSS of --chunks
	// 4x4x4 on issue 19's BP4 input rose by 70 MB to 1,076 MiB for
	// --max-mem 1GiB).
	BandAllowance int64
	// CoordBytes bounds the coordinate variables of one dataset that
	// --netcdf builds in memory (float64, one per index of each
	// dimension): a quarter of the budget, so that a declared shape far
	// larger than its data (a sparse (2^40,) dataset) is refused.
	CoordBytes int64
	// UnitCap caps the size of a work unit (a sharded job's unit size: the
	// journal's granularity, CapUnits); 0: none.
	UnitCap int64

	// VerifySlots is the number of arrays the verifier checks at once:
	// min(Jobs, VerifyMaxInFlight), fewer while a slot's share would fall
	// below VerifyMinShare, at least one.
	VerifySlots int
	// VerifyShare is one verifier slot's part of the budget,
	// MaxMem/VerifySlots: an array's output bands, the one read ahead, its
	// coverage, chunk cache and input blocks (a joint group takes a slot
	// and a share per member).
	VerifyShare int64
	// VerifyJointRows bounds the rows the verifier joins in one group: one
	// row of every member, times four for its buffers and stage, within a
	// tenth of the budget, MaxMem/10.
	VerifyJointRows int64
}

// For is the limits of a memory budget of maxMem bytes (<= 0:
// DefaultMaxMem) and jobs workers (<= 0: GOMAXPROCS), computed once.
func For(maxMem int64, jobs int) Limits {
	if maxMem <= 0 {
		maxMem = DefaultMaxMem
	}
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	l := Limits{MaxMem: maxMem, Jobs: jobs, TileTarget: TileTarget, TileLimit: TileLimit}
	l.Share = max(maxMem/int64(2*jobs+2), 1)
	l.ReadLimit = min(max(l.Share/4, min(MinReadLimit, l.Share/2), 1), MaxReadLimit)
	l.UnitTarget = min(max(l.Share-l.ReadLimit, 1), MaxSlabBytes)
	l.UnitLimit = max(maxMem/int64(jobs+1)-l.ReadLimit, l.UnitTarget)
	l.JoinLimit = max(maxMem/2-l.ReadLimit, l.UnitLimit)
	l.items()
	l.CoordBytes = maxMem / 4

	k := min(jobs, VerifyMaxInFlight)
	for k > 1 && maxMem/int64(k) < VerifyMinShare {
		k--
	}
	l.VerifySlots = max(k, 1)
	l.VerifyShare = maxMem / int64(l.VerifySlots)
	l.VerifyJointRows = maxMem / 10
	return l
}

// items sets ItemLimit and BandAllowance from UnitTarget.
func (l *Limits) items() {
	l.ItemLimit = max(l.UnitTarget, min(l.MaxMem/4, MaxItemBytes))
	l.BandAllowance = max(0, min(l.MaxMem/8, l.MaxMem-l.ItemLimit-2*int64(l.Jobs)*l.ReadLimit))
}

// CapUnits is l with work units of at most n bytes (a sharded job's unit
// size; n <= 0: l): UnitTarget, UnitLimit, JoinLimit and TileLimit capped,
// each still at least the one before it as in For, and ItemLimit and
// BandAllowance following UnitTarget.
func (l Limits) CapUnits(n int64) Limits {
	if n <= 0 {
		return l
	}
	l.UnitCap = n
	l.UnitTarget = min(l.UnitTarget, n)
	l.UnitLimit = max(min(l.UnitLimit, n), l.UnitTarget)
	l.JoinLimit = max(min(l.JoinLimit, n), l.UnitLimit)
	l.TileLimit = min(l.TileLimit, n)
	l.items()
	return l
}

// String is the limits on one line, as relayout run -v prints them (the
// budget: --max-mem less what the job keeps elsewhere).
func (l Limits) String() string {
	s := fmt.Sprintf("limits: budget %s, %d jobs: units of %s (aligned up to %s, joined up to %s), reads up to %s, tiles of %s (bands up to %s), items up to %s, digest bands up to %s",
		size(l.MaxMem), l.Jobs, size(l.UnitTarget), size(l.UnitLimit), size(l.JoinLimit), size(l.ReadLimit),
		size(l.TileTarget), size(l.TileLimit), size(l.ItemLimit), size(l.BandAllowance))
	if l.UnitCap > 0 {
		s += fmt.Sprintf(", work units up to %s", size(l.UnitCap))
	}
	arrays := "arrays"
	if l.VerifySlots == 1 {
		arrays = "array"
	}
	return s + fmt.Sprintf("; verify: %d %s at once, %s each", l.VerifySlots, arrays, size(l.VerifyShare))
}

// size is n bytes in binary units to one decimal ("1.5 MiB"), or bytes.
func size(n int64) string {
	for _, u := range []struct {
		s string
		m int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.m {
			if n%u.m == 0 {
				return fmt.Sprintf("%d %s", n/u.m, u.s)
			}
			return fmt.Sprintf("%.1f %s", float64(n)/float64(u.m), u.s)
		}
	}
	return fmt.Sprintf("%d B", n)
}
