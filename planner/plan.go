package planner

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"relayout/catalog"
)

// The plan of a variable: what `relayout plan` prints and `relayout inspect`
// draws. For each array (variable, step, level) it summarises the source
// blocks, merges them per rank, node and globally, chooses the target layout
// and predicts the read cost of the standard patterns before (the blocks as
// written), merged (the cuboids of the chosen scope as stored pieces) and
// after (the chosen layout).
//
// Arrays whose geometry repeats (same shape, element size, block boxes, ranks
// and whole-read flags: the usual case from one step to the next, and across
// the variables of one output) are planned once: the planner caches the
// result by a fingerprint of that geometry (the E3SM Omega lesson: reuse
// decompositions instead of recomputing them), and a variable's plan lists
// one entry per distinct geometry with the steps that share it.

// PlanOptions selects the layout, the readers and the merge scope.
type PlanOptions struct {
	Layout       string  // Contiguous, Chunked or AutoLayout
	ChunkShape   []int64 // Chunked: explicit chunk shape, or nil
	Chunks       []int64 // Chunked: decomposition, or nil
	Readers      int     // readers of the cost model, 1..MaxReaders
	Scope        Scope   // the cuboids costed as "merged" and drawn by SVG
	RanksPerNode int     // 0: per-node figures omitted (required for ScopeNode)
	WithCuboids  bool    // include the cuboid boxes of Scope in the plan
	// WithPieces: the cuboids of ArrayPlan.MergeGroups list the block
	// pieces they hold (inspect's block list); without it they are boxes.
	WithPieces bool
	// Cost is the cost model's parameters (`relayout calibrate`); nil means
	// DefaultCostParams.
	Cost *CostParams
	// AutoChunks, with Layout Chunked and neither ChunkShape nor Chunks:
	// each array's chunk shape is AutoChunk's (--compress without --layout).
	AutoChunks bool
	// Fill keeps partly covered arrays dense when contiguous (--fill):
	// without it HoleLayout chunks them so that holes cost no bytes.
	Fill bool
	// Unlimited: the input's unlimited dimensions (netCDF's record
	// dimension, catalog.DatasetInfo.Unlimited): arrays over them are
	// chunked (RecordLayout), as run writes them.
	Unlimited []string
	// Series: the array is a time series along dimension 0 (IsSeries):
	// the reads weighed are SeriesPatterns, not the seed paper's. Set per
	// array by whoever chooses its layout (chooseFor, relayout run's).
	Series bool
}

// IsSeries reports whether a is a climate variable over its record axis:
// a netCDF array (its dimensions named) of at least two dimensions, the
// first of which runs across the history files (time). Its reads are
// SeriesPatterns.
func IsSeries(a *catalog.Array) bool { return a.Dims != nil && len(a.Shape) >= 2 }

// patterns is the reads an array of shape is weighed against: nil (the
// callee's defaults, StandardPatterns or ReadPatterns) unless Series.
func (o PlanOptions) patterns(shape []int64) []Pattern {
	if o.Series {
		return SeriesPatterns(shape)
	}
	return nil
}

// CostParams returns the cost parameters of o: o.Cost, or the defaults.
func (o PlanOptions) CostParams() CostParams {
	if o.Cost != nil {
		return *o.Cost
	}
	return DefaultCostParams()
}

// AutoLayout is the layout kind that lets the cost model choose per array.
const AutoLayout = "auto"

// MaxReaders bounds PlanOptions.Readers (the seed paper's range).
const MaxReaders = 1024

// Stats summarises a count over groups (ranks or nodes).
type Stats struct {
	Min  int     `json:"min"`
	Mean float64 `json:"mean"`
	Max  int     `json:"max"`
}

// CuboidCounts are the merged cuboids of an array under each scope.
type CuboidCounts struct {
	Rank    int    `json:"rank"`     // total over rank groups
	PerRank Stats  `json:"per_rank"` // per rank group
	Node    *int   `json:"node"`     // total over node groups; null without ranks per node
	PerNode *Stats `json:"per_node"` // per node group; null without ranks per node
	Global  int    `json:"global"`   // all blocks of the array clustered together
}

// GroupPlan is one merge group of the plan's scope with its cuboids
// (PlanOptions.WithCuboids only). Boxes are relative to the array.
type GroupPlan struct {
	Key     int           `json:"key"` // rank, node, or 0 (global); -1: unknown rank
	Blocks  int           `json:"blocks"`
	Cuboids []catalog.Box `json:"cuboids"`
}

// ChosenLayout is the target layout of an array and why.
type ChosenLayout struct {
	Kind   string  `json:"kind"`
	Chunk  []int64 `json:"chunk,omitempty"`
	Reason string  `json:"reason"`
	// Ranking is every layout auto weighed, fastest predicted first
	// (AutoRanking), when auto chose the layout; printed by `relayout plan`,
	// not part of the JSON plan (whose digests are pinned).
	Ranking []RankedLayout `json:"-"`
}

// RankedLayout is one candidate of auto with its predicted total.
type RankedLayout struct {
	Name    string  // the stored layout, e.g. "chunked 32x32x32"
	Seconds float64 // summed over auto's patterns for the plan's readers
}

// StorageInfo names a stored layout and counts its pieces.
type StorageInfo struct {
	Name   string `json:"name"`
	Pieces int64  `json:"pieces"`
}

// CostFigures are the predicted figures of one pattern on one storage.
type CostFigures struct {
	Requests      int64   `json:"requests"`
	Bytes         int64   `json:"bytes"`
	Amplification float64 `json:"amplification"`
	MaxSharing    int     `json:"max_sharing"`
	Seconds       float64 `json:"seconds"`
}

// PatternCost compares one read pattern before, merged and after.
type PatternCost struct {
	Pattern     string      `json:"pattern"`
	Active      int         `json:"active_readers"`
	UsefulBytes int64       `json:"useful_bytes"`
	Before      CostFigures `json:"before"`
	Merged      CostFigures `json:"merged"`
	After       CostFigures `json:"after"`
}

// ArrayPlan is the plan of one array geometry; Steps lists the steps of the
// variable that share it.
type ArrayPlan struct {
	Steps             []int64       `json:"steps"`
	Level             int           `json:"level"`
	Shape             []int64       `json:"shape"`
	Offset            []int64       `json:"offset"`
	Fingerprint       string        `json:"fingerprint"`
	Blocks            int           `json:"blocks"`
	Ranks             int           `json:"ranks"`               // distinct known writer ranks
	UnknownRankBlocks int           `json:"unknown_rank_blocks"` // blocks with rank -1
	BlocksPerRank     Stats         `json:"blocks_per_rank"`     // over rank groups (unknown ranks: one group)
	Cuboids           CuboidCounts  `json:"cuboids"`
	Groups            []GroupPlan   `json:"groups,omitempty"`
	Layout            ChosenLayout  `json:"layout"`
	Before            StorageInfo   `json:"before"`
	Merged            StorageInfo   `json:"merged"`
	After             StorageInfo   `json:"after"`
	Costs             []PatternCost `json:"costs"`
	// Summed over Steps: the valid elements' bytes every step moves, and the
	// stored bytes read from the source (smaller when compressed).
	MoveBytes int64 `json:"move_bytes"`
	ReadBytes int64 `json:"read_bytes"`

	// MergeGroups are the merge groups of the plan's scope (for pictures);
	// their cuboids' Pieces are set with PlanOptions.WithPieces (may be nil
	// without), Piece.Block indexing the array's blocks.
	MergeGroups []Group `json:"-"`
}

// VariablePlan is the plan of one variable.
type VariablePlan struct {
	Name      string      `json:"name"`
	DType     string      `json:"dtype"`
	Arrays    int         `json:"arrays"`
	Layouts   []ArrayPlan `json:"layouts"`
	MoveBytes int64       `json:"move_bytes"`
	ReadBytes int64       `json:"read_bytes"`
}

// Planner plans arrays with a cache of geometries. Not safe for concurrent use.
type Planner struct {
	opts  PlanOptions
	cache map[string]*ArrayPlan
	// merges caches the merges of the scopes by the blocks' boxes and ranks
	// alone (MergeKey): arrays of different element types written with the
	// same decomposition, the usual case across the variables of one
	// output, are clustered once.
	merges map[string]*scopeMerges
	// Hits counts arrays served from the cache.
	Hits int
}

// NewPlanner checks opts (errors are usage errors: the user's flags).
func NewPlanner(opts PlanOptions) (*Planner, error) {
	switch opts.Layout {
	case Contiguous, Chunked, Merged, AutoLayout:
	default:
		return nil, fmt.Errorf("planner: unknown layout %q (want contiguous, chunked, merged or auto)", opts.Layout)
	}
	if opts.AutoChunks && (opts.Layout != Chunked || opts.ChunkShape != nil || opts.Chunks != nil) {
		return nil, fmt.Errorf("planner: automatic chunks need the chunked layout without a chunk shape or decomposition")
	}
	if opts.Layout == Chunked && !opts.AutoChunks && (opts.ChunkShape == nil) == (opts.Chunks == nil) {
		return nil, fmt.Errorf("planner: chunked layout needs exactly one of a chunk shape or a decomposition")
	}
	if opts.Layout != Chunked && (opts.ChunkShape != nil || opts.Chunks != nil) {
		return nil, fmt.Errorf("planner: a chunk shape or decomposition needs the chunked layout")
	}
	if opts.Cost != nil {
		if err := opts.Cost.Check(); err != nil {
			return nil, err
		}
	}
	if opts.Readers < 1 || opts.Readers > MaxReaders {
		return nil, fmt.Errorf("planner: %d readers, want 1 to %d", opts.Readers, MaxReaders)
	}
	if opts.RanksPerNode < 0 || (opts.Scope == ScopeNode && opts.RanksPerNode < 1) {
		return nil, fmt.Errorf("planner: the node scope needs ranks per node >= 1")
	}
	return &Planner{opts: opts, cache: map[string]*ArrayPlan{}, merges: map[string]*scopeMerges{}}, nil
}

// Fingerprint identifies the geometry of a that planning depends on: element
// size, shape, offset and each block's box, rank and whole-read flag, in
// order. 16 hex digits of a SHA-256.
func Fingerprint(a *catalog.Array) string {
	h := sha256.New()
	var buf []byte
	put := func(vs ...int64) {
		for _, v := range vs {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		}
	}
	put(int64(a.DType.Size), int64(len(a.Shape)))
	put(a.Shape...)
	put(int64(len(a.Offset)))
	put(a.Offset...)
	put(int64(len(a.Blocks)))
	for i := range a.Blocks {
		b := &a.Blocks[i]
		whole := int64(0)
		if len(b.Codecs) > 0 || b.Stored() != nil {
			whole = 1
		}
		put(int64(b.Rank), whole)
		put(b.Box.Lower...)
		put(b.Box.Count...)
		if len(buf) > 4096 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	if a.Constant {
		buf = append(buf, "constant"...) // nothing to lay out, unlike an empty array
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// PlanArray plans one array (Steps = [a.Step], MoveBytes and ReadBytes of
// this array alone). The result shares no memory with the cache.
func (p *Planner) PlanArray(a *catalog.Array) (ArrayPlan, error) {
	fp := Fingerprint(a)
	c, ok := p.cache[fp]
	if ok {
		p.Hits++
	} else {
		plan, err := planGeometry(a, p.opts, p.merges)
		if err != nil {
			return ArrayPlan{}, err
		}
		plan.Fingerprint = fp
		c = &plan
		p.cache[fp] = c
	}
	out := *c
	out.Steps = []int64{a.Step}
	out.Level = a.Level
	for i := range a.Blocks {
		b := &a.Blocks[i]
		out.MoveBytes += b.Box.Elements() * int64(a.DType.Size)
		out.ReadBytes += b.Length
	}
	return out, nil
}

// VariablePlanner accumulates the arrays of one variable.
type VariablePlanner struct {
	p     *Planner
	plan  VariablePlan
	index map[string]int // fingerprint/level -> index in plan.Layouts
}

// Variable starts the plan of a variable.
func (p *Planner) Variable(name string, dtype catalog.DType) *VariablePlanner {
	return &VariablePlanner{p: p, plan: VariablePlan{Name: name, DType: dtype.NumPy(), Layouts: []ArrayPlan{}},
		index: map[string]int{}}
}

// Add plans one array of the variable (in any order; entries appear in the
// order their geometry is first seen).
func (v *VariablePlanner) Add(a *catalog.Array) error {
	ap, err := v.p.PlanArray(a)
	if err != nil {
		return fmt.Errorf("planner: %s step %d level %d: %w", a.Var, a.Step, a.Level, err)
	}
	v.plan.Arrays++
	v.plan.MoveBytes += ap.MoveBytes
	v.plan.ReadBytes += ap.ReadBytes
	key := fmt.Sprintf("%s/%d", ap.Fingerprint, ap.Level)
	if i, ok := v.index[key]; ok {
		e := &v.plan.Layouts[i]
		e.Steps = append(e.Steps, a.Step)
		e.MoveBytes += ap.MoveBytes
		e.ReadBytes += ap.ReadBytes
		return nil
	}
	v.index[key] = len(v.plan.Layouts)
	v.plan.Layouts = append(v.plan.Layouts, ap)
	return nil
}

// Plan returns the variable's plan.
func (v *VariablePlanner) Plan() VariablePlan { return v.plan }

// countRanks returns the distinct known writer ranks of blocks and the
// number of blocks of unknown rank (-1), with a bitmap when the ranks are
// not much larger than the number of blocks (a map otherwise).
func countRanks(blocks []catalog.Block) (distinct, unknown int) {
	top := -1
	for i := range blocks {
		top = max(top, int(blocks[i].Rank))
	}
	if top < 4*len(blocks)+1024 {
		seen := make([]bool, top+1)
		for i := range blocks {
			if r := blocks[i].Rank; r < 0 {
				unknown++
			} else if !seen[r] {
				seen[r] = true
				distinct++
			}
		}
		return distinct, unknown
	}
	ranks := map[int32]bool{}
	for i := range blocks {
		if r := blocks[i].Rank; r < 0 {
			unknown++
		} else {
			ranks[r] = true
		}
	}
	return len(ranks), unknown
}

// MergeKey identifies what merging the blocks of a depends on: each block's
// box and rank, in order (not the element type, shape or codecs, which
// Fingerprint adds). 16 hex digits of an XXH64: the key only lives in one
// plan's memory, and SHA-256 was 4% of a plan's CPU (b192).
func MergeKey(a *catalog.Array) string {
	h := catalog.XXH64.New()
	buf := make([]byte, 0, 8192)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(a.Blocks)))
	for i := range a.Blocks {
		b := &a.Blocks[i]
		buf = binary.LittleEndian.AppendUint64(buf, uint64(b.Rank))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(b.Box.Lower)))
		for _, v := range b.Box.Lower {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(b.Box.Count)))
		for _, v := range b.Box.Count {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(v))
		}
		if len(buf) > 4096 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil))
}

// scopeMerges are the merge groups of one block geometry under the three
// scopes (byNode nil without ranks per node); only the plan's scope has its
// cuboids built.
type scopeMerges struct {
	byRank, global, byNode []Group
	// globalDone delivers the global merge's error when it runs beside the
	// plan (waitGlobal); global is not to be read before.
	globalDone <-chan error
	globalErr  error
	// shaped holds what a plan derives from the blocks' boxes and the
	// array's shape, not from its element type, for the last shape planned
	// (nil: none yet): fields/id after fields/Bx, 262,144 blocks, took
	// 0.1 s to build them again.
	shaped *shapedGeometry
}

// shapedGeometry is what planGeometry derives from an array's shape and
// its blocks' boxes and ranks alone; read-only once built.
type shapedGeometry struct {
	shape   []int64
	cuboids []catalog.Box // of the plan's scope, in group order
	full    bool          // FullyCovered
	merged  Storage       // the cuboids as pieces
	before  Storage       // BlocksStorage of blocks none of which is whole
	plain   bool          // before is set: no block was whole
}

// shapedFor returns the shapedGeometry of a, whose blocks m merged, from
// the last one built when a has its shape, else building it; chosen are
// the groups of the plan's scope.
func (m *scopeMerges) shapedFor(a *catalog.Array, chosen []Group, scope Scope) *shapedGeometry {
	if g := m.shaped; g != nil && slices.Equal(g.shape, a.Shape) {
		return g
	}
	g := &shapedGeometry{shape: slices.Clone(a.Shape), full: FullyCovered(a)}
	n := 0
	for _, gr := range chosen {
		n += len(gr.Cuboids)
	}
	if n > 0 {
		g.cuboids = make([]catalog.Box, 0, n)
	}
	for _, gr := range chosen {
		for _, c := range gr.Cuboids {
			g.cuboids = append(g.cuboids, c.Box)
		}
	}
	g.merged = PiecesStorage("cuboids ("+scope.String()+" scope)", a.Shape, g.cuboids, false)
	m.shaped = g
	return g
}

// beforeStorage is BlocksStorage of a, kept in g when no block of a is
// read only whole (whole blocks are not part of the merge key).
func (g *shapedGeometry) beforeStorage(a *catalog.Array) Storage {
	for i := range a.Blocks {
		if b := &a.Blocks[i]; len(b.Codecs) > 0 || b.Stored() != nil {
			return BlocksStorage(a.Shape, a.Blocks)
		}
	}
	if !g.plain {
		g.before, g.plain = BlocksStorage(a.Shape, a.Blocks), true
	}
	return g.before
}

// mergeScopes merges the blocks under every scope the plan reports.
func mergeScopes(blocks []catalog.Block, opts PlanOptions) (*scopeMerges, error) {
	// The blocks are ranked once for the three scopes; only the scope the
	// plan costs and draws gets its cuboids built, the others are counted.
	rb, err := rankBlocks(blocks)
	if err != nil {
		return nil, err
	}
	out := func(s Scope) mergeOut {
		switch {
		case s != opts.Scope:
			return countOnly
		case opts.WithPieces:
			return withPieces
		}
		return boxesOnly
	}
	var m scopeMerges
	if opts.Scope == ScopeGlobal {
		if m.global, err = rb.merge(ScopeGlobal, 0, out(ScopeGlobal)); err != nil {
			return nil, err
		}
	}
	if m.byRank, err = rb.merge(ScopeRank, 0, out(ScopeRank)); err != nil {
		return nil, err
	}
	if opts.RanksPerNode > 0 {
		if m.byNode, err = rb.merge(ScopeNode, opts.RanksPerNode, out(ScopeNode)); err != nil {
			return nil, err
		}
	}
	if opts.Scope != ScopeGlobal {
		// Only counted: on a clusterer of its own over the same ranked
		// blocks, beside what the plan derives from the merges of its scope
		// (the cuboid list, coverage, the storages), which would otherwise
		// leave a core idle (fields/Bx of 351,537 blocks: 18 ms beside
		// 41). waitGlobal joins it.
		g := &rankedBlocks{blocks: rb.blocks, ranked: rb.ranked, all: rb.all, c: clusterer{dims: rb.c.dims, axis: rb.c.axis}}
		done := make(chan error, 1)
		m.globalDone = done
		go func() {
			var err error
			m.global, err = g.merge(ScopeGlobal, 0, countOnly)
			done <- err
		}()
	}
	return &m, nil
}

// waitGlobal returns once the global scope's merge is done (mergeScopes),
// with its error.
func (m *scopeMerges) waitGlobal() error {
	if m.globalDone != nil {
		m.globalErr, m.globalDone = <-m.globalDone, nil
	}
	return m.globalErr
}

// planGeometry does the work behind the cache; merges (nil: none) caches
// the merges by MergeKey.
func planGeometry(a *catalog.Array, opts PlanOptions, merges map[string]*scopeMerges) (ArrayPlan, error) {
	var m *scopeMerges
	key := ""
	if merges != nil {
		key = MergeKey(a)
		m = merges[key]
	}
	if m == nil {
		var err error
		if m, err = mergeScopes(a.Blocks, opts); err != nil {
			return ArrayPlan{}, err
		}
		if merges != nil {
			merges[key] = m
		}
	}
	plan, err := planMerged(a, opts, m)
	if gerr := m.waitGlobal(); err == nil {
		err = gerr
	}
	plan.Cuboids.Global = totalCuboids(m.global)
	return plan, err
}

// planMerged is planGeometry once the blocks are merged (m), but for the
// global scope's count, which may still be running when the plan's scope is
// another (mergeScopes): not read here then.
func planMerged(a *catalog.Array, opts PlanOptions, m *scopeMerges) (ArrayPlan, error) {
	plan := ArrayPlan{Shape: nonNilDims(a.Shape), Offset: nonNilDims(a.Offset), Blocks: len(a.Blocks)}
	plan.Ranks, plan.UnknownRankBlocks = countRanks(a.Blocks)
	byRank, byNode := m.byRank, m.byNode
	plan.BlocksPerRank, plan.Cuboids.PerRank = groupStats(byRank)
	plan.Cuboids.Rank = totalCuboids(byRank)
	if opts.RanksPerNode > 0 {
		n := totalCuboids(byNode)
		_, s := groupStats(byNode)
		plan.Cuboids.Node, plan.Cuboids.PerNode = &n, &s
	}
	if a.Constant {
		// An openPMD constant record component: written as its value and
		// shape attributes, nothing to move or lay out.
		plan.Layout = ChosenLayout{Kind: catalog.ConstantLayout, Reason: "openPMD constant record component: value and shape attributes, no data"}
		none := StorageInfo{Name: "constant record", Pieces: 0}
		plan.Before, plan.Merged, plan.After = none, none, none
		plan.Costs = []PatternCost{}
		return plan, nil
	}
	chosen := byRank
	switch opts.Scope {
	case ScopeNode:
		chosen = byNode
	case ScopeGlobal:
		chosen = m.global // merged before the others for this scope
	}
	plan.MergeGroups = chosen
	if opts.WithCuboids {
		for _, g := range chosen {
			gp := GroupPlan{Key: g.Key, Blocks: len(g.Blocks), Cuboids: make([]catalog.Box, 0, len(g.Cuboids))}
			for _, c := range g.Cuboids {
				gp.Cuboids = append(gp.Cuboids, c.Box)
			}
			plan.Groups = append(plan.Groups, gp)
		}
	}
	sg := m.shapedFor(a, chosen, opts.Scope)
	cuboids := sg.cuboids

	layout, reason, rank, err := chooseFor(a, opts, sg.full)
	if err != nil {
		return plan, err
	}
	plan.Layout = ChosenLayout{Kind: layout.Kind, Chunk: layout.Chunk, Reason: reason}
	for _, c := range rank {
		plan.Layout.Ranking = append(plan.Layout.Ranking, RankedLayout{c.Storage.Name, c.Seconds})
	}

	shape := a.Shape
	before := sg.beforeStorage(a)
	merged := sg.merged
	after := ContiguousStorage(shape)
	if layout.Kind == Chunked {
		after = ChunkedStorage(shape, layout.Chunk)
		if !sg.full {
			after = SparseChunkedStorage(shape, layout.Chunk, blockBoxes(a))
		}
	}
	if layout.Kind == Merged {
		after = MergedStorage(shape, cuboids, sg.full)
	}
	plan.Before = StorageInfo{before.Name, before.Pieces()}
	plan.Merged = StorageInfo{merged.Name, merged.Pieces()}
	plan.After = StorageInfo{after.Name, after.Pieces()}
	plan.Costs = []PatternCost{}
	if len(shape) == 0 || isEmpty(shape) {
		return plan, nil // nothing a reader could lay out better
	}
	cp := opts.CostParams()
	pats := StandardPatterns(shape)
	if IsSeries(a) {
		pats = SeriesPatterns(shape)
	}
	// Patterns reading the same region with the same reader grid (whole
	// and 2x1x1) cost the same: predicted once. The predictions are
	// independent: spread over workers for many pieces, each into its slot.
	same := make([]int, len(pats))
	var tasks []int // pattern*3 + storage (before, merged, after)
	for i, pat := range pats {
		if same[i] = samePattern(pats[:i], pat, opts.Readers); same[i] < 0 {
			tasks = append(tasks, 3*i, 3*i+1, 3*i+2)
		}
	}
	costs := make([]Cost, 3*len(pats))
	storages := [3]Storage{before, merged, after}
	predict := func(t int) {
		costs[t] = PredictRead(storages[t%3], a.DType.Size, pats[t/3], opts.Readers, cp)
	}
	parallel(len(tasks), len(a.Blocks)+len(cuboids) >= parallelCostPieces, func(k int) { predict(tasks[k]) })
	for i, pat := range pats {
		if j := same[i]; j >= 0 {
			pc := plan.Costs[j]
			pc.Pattern = pat.Name
			plan.Costs = append(plan.Costs, pc)
			continue
		}
		b := costs[3*i]
		plan.Costs = append(plan.Costs, PatternCost{
			Pattern: pat.Name, Active: b.Active, UsefulBytes: b.UsefulBytes,
			Before: figures(b), Merged: figures(costs[3*i+1]), After: figures(costs[3*i+2]),
		})
	}
	return plan, nil
}

// parallelCostPieces is the number of stored pieces (blocks and cuboids)
// from which an array's cost predictions run on several workers.
const parallelCostPieces = 16384

// parallel calls fn(0..n-1), on GOMAXPROCS workers when wide, else in order.
func parallel(n int, wide bool, fn func(int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if !wide || workers < 2 {
		for k := range n {
			fn(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				fn(k)
			}
		}()
	}
	wg.Wait()
}

// samePattern is the index of a pattern of earlier that reads the region of
// p with the same reader grid for n readers, or -1.
func samePattern(earlier []Pattern, p Pattern, n int) int {
	g := ReaderGrid(p.Region, p.Split, n)
	for j, q := range earlier {
		if Equal(q.Region, p.Region) && slices.Equal(ReaderGrid(q.Region, q.Split, n), g) {
			return j
		}
	}
	return -1
}

// LayoutFor is the target layout of one array under opts, with the reason:
// Auto's when opts.Layout is AutoLayout (its chunks aligned to the array's
// block grain, catalog.Array.BlockGrain), the request otherwise. `relayout
// run` calls it per array so that it writes what `relayout plan` predicts.
func LayoutFor(shape []int64, elemSize int, grain []int64, opts PlanOptions) (Layout, string, error) {
	l, why, _, err := layoutFor(shape, elemSize, grain, opts)
	return l, why, err
}

// layoutFor is LayoutFor with the ranking auto chose from (AutoRanking;
// nil for the other layouts): relayout plan prints the ranking beside the
// choice, from the one weighing of the candidates.
func layoutFor(shape []int64, elemSize int, grain []int64, opts PlanOptions) (Layout, string, []AutoCandidate, error) {
	if opts.Layout == AutoLayout {
		readers := max(opts.Readers, 1)
		rank := AutoRanking(shape, elemSize, grain, readers, opts.patterns(shape), opts.CostParams())
		l, why := autoPick(rank, readers)
		return l, why, rank, nil
	}
	if opts.Layout == Chunked && opts.AutoChunks && opts.ChunkShape == nil && opts.Chunks == nil {
		l, why := AutoChunk(shape, elemSize, grain, opts.Readers, opts.CostParams())
		return l, why, nil, nil
	}
	l, err := ChooseLayout(shape, opts.Layout, opts.ChunkShape, opts.Chunks)
	if err != nil {
		return l, "", nil, err
	}
	why := "requested"
	switch {
	case l.Kind == Contiguous && opts.Layout == Chunked:
		why = "scalar or empty array: always contiguous"
	case opts.Chunks != nil:
		why = "requested: decomposition " + dimsString(opts.Chunks)
	case opts.ChunkShape != nil:
		why = "requested: chunk shape " + dimsString(opts.ChunkShape) + " (clipped to the shape)"
	}
	return l, why, nil, nil
}

// chooseFor is LayoutFor for array a: its ArrayChunks request, a refined
// AMR level chunked by LevelLayout whatever the layout asked, and a partly
// covered array chunked by HoleLayout instead of contiguous (unless Fill).
// The ranking is auto's (layoutFor) where auto's choice stands, else nil.
func chooseFor(a *catalog.Array, opts PlanOptions, full bool) (Layout, string, []AutoCandidate, error) {
	opts.ChunkShape, opts.Chunks = ArrayChunks(a, opts.ChunkShape, opts.Chunks)
	opts.Series = IsSeries(a)
	l, why, rank, err := layoutFor(a.Shape, a.DType.Size, a.BlockGrain(), opts)
	if err != nil {
		return l, why, nil, err
	}
	if ll := LevelLayout(a, l); ll.Note != "" {
		return ll, ll.Note, nil, nil
	}
	if !opts.Fill {
		if hl := holeLayout(a, l, full); hl.Note != "" {
			l, why, rank = hl, hl.Note, nil
		} else if l.Kind == Chunked && !full && a.Bytes() >= SparseMinBytes && !a.Constant {
			if sl := sparseChunked(a, l); sl.Sparse {
				l, why, rank = sl, sl.Note, nil
			}
		}
	}
	if rl := RecordLayout(a, l, opts.Unlimited); rl.Kind != l.Kind {
		return rl, "over the unlimited dimension: chunked, a record slab a chunk (HDF5 extends only chunked datasets)", nil, nil
	}
	return l, why, rank, nil
}

// ArrayChunks is the --chunk-shape and --chunks request as it applies to
// array a: unchanged for meshes, ParticleChunks for a 1-D particle record
// component. plan, run and the up-front chunk notes all use it.
func ArrayChunks(a *catalog.Array, shape, grid []int64) ([]int64, []int64) {
	if a.Species != "" && len(a.Shape) == 1 {
		return ParticleChunks(shape), ParticleChunks(grid)
	}
	return shape, grid
}

// ParticleChunks is a --chunks decomposition or --chunk-shape asked for
// meshes as it applies to a 1-D openPMD particle record component
// (catalog.Array.Species): its product (2x2x2: 8 chunks along the particle
// index; 64,64,64: chunks of 262144 particles), so that one option serves
// both. A 1-element request is kept.
func ParticleChunks(c []int64) []int64 {
	if len(c) <= 1 {
		return c
	}
	n := int64(1)
	for _, v := range c {
		n *= v
	}
	return []int64{n}
}

func figures(c Cost) CostFigures {
	return CostFigures{Requests: c.Requests, Bytes: c.Bytes, Amplification: round6(c.Amplification()),
		MaxSharing: c.MaxSharing, Seconds: round6sig(c.Seconds)}
}

// groupStats returns the blocks and cuboids per group.
func groupStats(gs []Group) (blocks, cuboids Stats) {
	if len(gs) == 0 {
		return
	}
	blocks.Min, cuboids.Min = len(gs[0].Blocks), gs[0].cuboidCount()
	var nb, nc int
	for i := range gs {
		g := &gs[i]
		blocks.Min, blocks.Max = min(blocks.Min, len(g.Blocks)), max(blocks.Max, len(g.Blocks))
		cuboids.Min, cuboids.Max = min(cuboids.Min, g.cuboidCount()), max(cuboids.Max, g.cuboidCount())
		nb += len(g.Blocks)
		nc += g.cuboidCount()
	}
	blocks.Mean = round6(float64(nb) / float64(len(gs)))
	cuboids.Mean = round6(float64(nc) / float64(len(gs)))
	return
}

func totalCuboids(gs []Group) int {
	n := 0
	for i := range gs {
		n += gs[i].cuboidCount()
	}
	return n
}

func nonNilDims(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return slices.Clone(v)
}

// round6 rounds to 6 decimals, round6sig to 6 significant digits: stable,
// readable JSON (golden files) without losing anything the model resolves.
func round6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 6, 64), 64)
	return r
}

func round6sig(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}
