package rewriter

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/internal/h5"
	"relayout/internal/membudget"
	"relayout/planner"
)

// maxChunkBytes is HDF5's limit on the size of one chunk.
const maxChunkBytes = 1<<32 - 1

type varStats struct {
	arrays int
	bytes  int64
	links  []seriesLink // what series.h5 links to in this file
	views  []viewArray  // the file's mesh datasets that ParaView views present
	amr    []amrArray   // its mesh levels that OverlappingAMR views present
	// noView: why some of the file's datasets get no view (one line each).
	noView []string
	// particles: the file's particle record components, for the particle
	// views.
	particles []particleArray
}

// fileConfig is what every output file shares.
type fileConfig struct {
	root   []catalog.Attr // attributes of "/"
	format string         // the input's format (DatasetInfo.Format)
	// netCDF: the files are netCDF time series (netcdf.go), not openPMD
	// series: the input is netCDF. ncHeaders: every variable's header.
	netCDF    bool
	ncHeaders ncHeaders
	span      []string // the stream's first and last dates (DatasetInfo.Span)
	meshes    string   // the meshes group of every iteration (meshesGroup)
	// particles is the particles group of every iteration (particlesGroup);
	// hasParticles: particles are written. bothGroups: the root has a
	// particlesPath (particles written, or kept from an openPMD input), so
	// every iteration gets both the meshes and the particles group.
	particles    string
	hasParticles bool
	bothGroups   bool
	holes        *holeLayouts // the job's, shared with checkPlan
}

func newFileConfig(info catalog.DatasetInfo, vars []catalog.VarSummary, opts Options) fileConfig {
	if isNetCDF(info.Format) {
		return fileConfig{root: netCDFRoot(info, opts.Version, time.Now()), format: info.Format, netCDF: true, span: info.Span}
	}
	fc := fileConfig{root: seriesRoot(info, opts.Version, time.Now()), format: info.Format,
		meshes: meshesGroup(info)}
	fc.particles = particlesGroup(info, fc.meshes)
	fc.hasParticles = hasParticles(info, vars)
	if fc.bothGroups = fc.hasParticles || len(strs(fc.root, "particlesPath")) == 1; fc.bothGroups {
		fc.root = withParticlesPath(fc.root, fc.particles)
	}
	return fc
}

// contigTarget is a contiguous dataset whose bytes are written with pwrite
// after the HDF5 structure is closed.
type contigTarget struct {
	addr     int64
	elemSize int           // bytes of an element of the array
	entry    int           // index into ManifestVariable.Datasets
	merged   *mergedTarget // merged layout (merged.go), else nil
	chunks   *chunkTarget  // raw chunks allocated at creation (chunkwrite.go), else nil
}

// writeStructure creates every dataset of variable name and its attributes
// (prepareVariable's phase 1). It returns each dataset's target, by array key.
func writeStructure(ctx context.Context, w *h5.Writer, store *catalog.Store, src catalog.Source, name string,
	fc fileConfig, opts Options, mv *catalog.ManifestVariable, st *varStats) (map[catalog.Key]contigTarget, error) {
	if fc.netCDF {
		return writeNetCDF(ctx, w, store, name, fc, opts, mv, st)
	}
	if err := w.SetAttrs("/", fc.root); err != nil {
		return nil, fmt.Errorf("rewriter: %s: %w", name, err)
	}
	contig := map[catalog.Key]contigTarget{}
	stepDone := map[int64]bool{}
	scalarRecord := len(meshParts(name)) == 1
	// Headers only: contiguous arrays need their blocks in phase 2 alone, so
	// blocks are loaded here just for the chunked ones.
	err := store.EachArrayHeader(ctx, name, func(a *catalog.Array) error {
		path := datasetPath(fc.meshes, a.Step, a.Level, a.Var, len(a.Shape))
		rec := recordPath(fc.meshes, a.Step, a.Level, a.Var, len(a.Shape))
		species := ""
		if a.Species != "" {
			path, rec, species = particlePaths(fc.particles, a)
			mv.Species = a.Species
		}
		var entry catalog.ManifestDataset
		var spec h5.DatasetSpec
		if a.Constant {
			// An openPMD constant record component: a group whose value
			// and shape attributes (set below) stand for the data.
			entry = catalog.ManifestDataset{Step: a.Step, Level: a.Level, Path: path,
				Shape: nonNil(a.Shape), Offset: nonNil(a.Offset), Layout: catalog.ConstantLayout}
			entry.SetSum(opts.Digest, constantDigest(a, opts.Digest))
		} else {
			var t contigTarget
			var err error
			if entry, t, spec, err = createData(w, store, fc.holes, a, path, opts); err != nil {
				return err
			}
			t.entry = len(mv.Datasets)
			contig[a.Key()] = t
		}
		var ma meshAttrs
		if species != "" {
			ma = particleAttrs(a, rec == "")
		} else {
			ma = openPMDAttrs(a, fc.format, scalarRecord || len(a.Shape) == 0)
		}
		if a.Constant {
			ma.component = append(ma.component, constantAttrs(a)...)
		}
		err := w.SetAttrs(path, ma.component)
		if err == nil && rec != "" {
			err = w.SetAttrs(rec, ma.record)
		}
		if err == nil && species != "" {
			err = w.SetAttrs(species, ma.species)
		}
		if err == nil && len(a.Boxes) > 0 {
			entry.Boxes, err = writeBoxes(w, path, a)
		}
		if err == nil && !stepDone[a.Step] {
			err = w.SetAttrs(stepGroup(a.Step), ma.iteration)
			stepDone[a.Step] = true
			// Both groups, possibly empty, so that openPMD-api finds
			// meshesPath and particlesPath in every iteration.
			for _, g := range []string{fc.meshes, fc.particles} {
				if err == nil && fc.bothGroups {
					err = w.SetAttrs(stepGroup(a.Step)+"/"+g, nil)
				}
			}
		}
		if err == nil && opts.NetCDF && species == "" {
			err = writeCoordinates(w, path, a, ma, opts)
		}
		if err != nil {
			return arrayErr(a.Key(), err)
		}
		l := seriesLink{path: path, record: rec, recordAttrs: ma.record, species: species, speciesAttrs: ma.species,
			step: a.Step, stepAttrs: ma.iteration, boxes: entry.Boxes, attrs: ma.component, constant: a.Constant}
		if !a.Constant && len(a.Shape) > 0 && a.Elements() > 0 {
			l.spec = &h5.DatasetSpec{DType: spec.DType, Shape: a.Shape, Fill: spec.Fill}
		} else if !a.Constant && species != "" && len(a.Shape) > 0 {
			// No particles this iteration: an empty dataset of its own
			// in series.h5 (openPMD-api does not follow external links).
			l.empty = &h5.DatasetSpec{DType: spec.DType, Shape: a.Shape, Fill: spec.Fill}
		}
		if entry.Boxes != "" {
			l.attrs = setAttr(slices.Clone(l.attrs), boxesAttr(entry.Boxes))
		}
		st.links = append(st.links, l)
		if !opts.NoViews {
			addView(st, a, ma, mv.File, path, entry.Boxes, species, spec)
		}
		if a.Constant {
			mv.Constants = append(mv.Constants, entry)
		} else {
			mv.Datasets = append(mv.Datasets, entry)
		}
		st.arrays++
		st.bytes += a.Bytes()
		return nil
	})
	return contig, err
}

// createData creates the dataset of array a (its blocks not needed: loaded
// here when the layout needs them) at path in its layout, and returns its
// manifest entry, where its units go (entry left to the caller) and its
// HDF5 spec. Every output structure creates its data through it.
func createData(w *h5.Writer, store *catalog.Store, holes *holeLayouts, a *catalog.Array, path string, opts Options) (catalog.ManifestDataset, contigTarget, h5.DatasetSpec, error) {
	var entry catalog.ManifestDataset
	var t contigTarget
	layout, err := arrayLayout(a, opts, holes)
	if err != nil {
		return entry, t, h5.DatasetSpec{}, err
	}
	// Holes read back as the fill value in every layout (leFill).
	spec := h5.DatasetSpec{DType: a.DType.LittleEndian(), Shape: a.Shape, Chunk: layout.Chunk, Fill: leFill(a)}
	if layout.Kind == planner.Chunked {
		spec.Unlimited = planner.UnlimitedAxes(a, opts.unlimited) // recordLayout chunked them
	}
	if layout.Kind == planner.Chunked && opts.Deflate > 0 {
		spec.Deflate, spec.Shuffle = opts.Deflate, a.DType.Size > 1
	}
	var d *h5.OutDataset
	var mt *mergedTarget
	if layout.Kind == planner.Chunked {
		// With its blocks: raw chunks of a covered array are
		// allocated now, to be pwritten.
		full, err := store.Array(a.Key())
		if err == nil {
			err = checkArray(full)
		}
		if err != nil {
			return entry, t, spec, arrayErr(a.Key(), err)
		}
		spec.Allocate = canAllocateChunks(full, opts)
	}
	if layout.Kind == planner.Merged {
		mt, err = createMerged(w, store, a, path, spec, opts)
	} else {
		d, err = w.CreateDataset(path, spec)
	}
	if err != nil {
		return entry, t, spec, arrayErr(a.Key(), err)
	}
	entry = catalog.ManifestDataset{
		Step: a.Step, Level: a.Level, Path: path,
		Shape: nonNil(a.Shape), Offset: nonNil(a.Offset), Layout: layout.Kind, Chunk: layout.Chunk,
		Compression: compression(spec), Note: layout.Note,
	}
	if layout.Sparse {
		entry.DigestOf = catalog.DigestStoredChunks
	}
	switch {
	case mt != nil:
		entry.Cuboids = len(mt.plan.Units)
		t = contigTarget{addr: mt.addr, merged: mt}
	case spec.Allocate:
		t = contigTarget{chunks: &chunkTarget{layout: layout, objAddr: d.ObjAddr()}}
	case layout.Kind == planner.Chunked:
		t = contigTarget{addr: -1} // encoded chunks come later, from the shards' part files
	default:
		t = contigTarget{addr: d.Address()}
	}
	if d != nil {
		if err := d.Close(); err != nil {
			return entry, t, spec, arrayErr(a.Key(), err)
		}
	}
	t.elemSize = a.DType.Size
	return entry, t, spec, nil
}

// chunkGrid is the number of chunks along each dimension.
func chunkGrid(shape, chunk []int64) []int64 {
	g := make([]int64, len(shape))
	for d := range shape {
		g[d] = (shape[d] + chunk[d] - 1) / chunk[d]
	}
	return g
}

// chunkIndex is the row-major index of the chunk starting at off.
func chunkIndex(off, chunk, grid []int64) int64 {
	var i int64
	for d := range off {
		i = i*grid[d] + off[d]/chunk[d]
	}
	return i
}

// touchedChunks is the set of chunks that some block overlaps, or nil when
// the blocks cover the whole array (every chunk is then written).
func touchedChunks(a *catalog.Array, chunk []int64) map[int64]struct{} {
	if planner.FullyCovered(a) {
		return nil
	}
	boxes := make([]catalog.Box, len(a.Blocks))
	for i := range a.Blocks {
		boxes[i] = a.Blocks[i].Box
	}
	return planner.TouchedChunks(a.Shape, chunk, boxes)
}

// writeBoxes writes a's AMR box list (at boxesPath) as int64
// [nboxes][2][rank]: lower and upper (inclusive) corners in the level's
// global index space (a.Offset added), the convention of AMReX and Chombo.
func writeBoxes(w *h5.Writer, path string, a *catalog.Array) (string, error) {
	rank := int64(len(a.Shape))
	n := int64(len(a.Boxes))
	data := make([]byte, 0, n*2*rank*8)
	for _, b := range a.Boxes {
		if int64(len(b.Lower)) != rank || int64(len(b.Count)) != rank {
			return "", fmt.Errorf("box %v in array of rank %d: %w", b, rank, catalog.ErrCorrupt)
		}
		for d := range rank {
			data = binary.LittleEndian.AppendUint64(data, uint64(a.Offset[d]+b.Lower[d]))
		}
		for d := range rank {
			data = binary.LittleEndian.AppendUint64(data, uint64(a.Offset[d]+b.Lower[d]+b.Count[d]-1))
		}
	}
	bpath := boxesPath(a.Step, a.Level, a.Var)
	shape := []int64{n, 2, rank}
	d, err := w.CreateDataset(bpath, h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Int, Size: 8}, Shape: shape, Chunk: shape})
	if err != nil {
		return "", err
	}
	err = d.WriteChunk([]int64{0, 0, 0}, data)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.SetAttrs(bpath, []catalog.Attr{{Name: "description", Type: "string", Scalar: true, Strings: []string{
			fmt.Sprintf("boxes of level %d: [box][0] lower and [box][1] upper (inclusive) corner in the level's global index space", a.Level)}}})
	}
	if err == nil {
		err = w.SetAttrs(path, []catalog.Attr{boxesAttr(bpath)})
	}
	return bpath, err
}

// boxesAttr names a level dataset's box table.
func boxesAttr(bpath string) catalog.Attr {
	return catalog.Attr{Name: "boxes", Type: "string", Scalar: true, Strings: []string{bpath}}
}

// writePiece caps one pwrite of data. On the virtual machines measured
// (Linux 6.18, ext4, 2026-12-05), buffered writes of 1 MiB or more a call
// cost 2-6x the system time of 256-512 KiB ones for the same bytes: 1.5 GB
// written from a 64 MiB buffer, caches dropped, took 0.56-1.58 s of system
// time in 6.75 MiB writes, 0.95-1.30 s in 2 MiB ones, 0.74-1.05 s in 1 MiB
// ones and 0.20-0.42 s in 256 KiB ones, nearly all of it copying into the
// page cache (copy_folio_from_iter_atomic). An openPMD series' contiguous
// units went out 6.75 MiB a call: split, its run --no-verify took 0.91x
// the time, 0.66x the system time (bench/RESULTS.md, session 18).
const writePiece = 256 << 10

// writeAt writes b at off in pieces of at most writePiece bytes and returns
// the bytes written. The run's counters (Monitor.wrote) count it as one
// write, as they count one pwritev of writeChunkFrom's chunk.
func writeAt(f *os.File, b []byte, off int64) (int, error) {
	n := 0
	for n < len(b) {
		m, err := f.WriteAt(b[n:min(len(b), n+writePiece)], off+int64(n))
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// startWriteback asks the kernel to start writing the range to disk now
// (sync_file_range SYNC_FILE_RANGE_WRITE: it does not wait for the disk), so
// that the disk writes while later units are read and the one fsync at the
// end finds little left to do. Where the call is not supported nothing
// changes: the fsync still makes the file durable.
func startWriteback(f *os.File, off, n int64) {
	unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// earlySyncBytes is how much an early sync (earlySync) lets be written
// between two fdatasyncs of the file being written. On this project's
// machine (a virtio disk over the host's page cache, 2026-12-05) an fsync
// makes the host write out what it holds: BP4 448^3's 719 MB fields/Bx,
// synced once after its rewrite, waited 0.64 s with no write going on
// while 121 MB stayed dirty. Synced every 128 MiB on the way, the run
// --no-verify took 0.91x the time (n = 6; 64 MiB 0.89x, 256 MiB 0.95x;
// the openPMD series 0.92x, 351,537 small blocks 0.99x). With
// verification the final sync runs beside the verifier and early ones
// only slow the rewrite (1.17x): Options.SyncEarly is off there.
const earlySyncBytes = 128 << 20

// earlySync fdatasyncs an in-memory job's files in the background while
// they are written (Options.SyncEarly), one at a time, once every
// earlySyncBytes: what the disk holds when the rewrite ends is then
// nearly all of it, and the commit's fsync (syncStage) finds little to
// do. The durability of the output is still the commit's fsync; a failed
// early sync fails the run (wait), since the error is reported once and a
// later fsync might not see it.
type earlySync struct {
	pending atomic.Int64 // bytes written since the last sync began
	busy    atomic.Bool
	syncs   sync.WaitGroup
	mu      sync.Mutex
	err     error
}

// wrote counts n bytes written to f, and starts an fdatasync of f when
// earlySyncBytes have been written since the last began and none is
// running. A nil earlySync does nothing.
func (s *earlySync) wrote(f *os.File, n int64) {
	if s == nil || s.pending.Add(n) < earlySyncBytes || !s.busy.CompareAndSwap(false, true) {
		return
	}
	s.pending.Store(0)
	// The engine may close f before the sync returns: the sync has a
	// descriptor of its own.
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		s.fail(fmt.Errorf("rewriter: %s: %w", f.Name(), err))
		s.busy.Store(false)
		return
	}
	s.syncs.Go(func() {
		if err := unix.Fdatasync(fd); err != nil {
			s.fail(fmt.Errorf("rewriter: %s: fdatasync: %w", f.Name(), err))
		}
		unix.Close(fd)
		s.busy.Store(false)
	})
}

func (s *earlySync) fail(err error) {
	s.mu.Lock()
	s.err = cmp.Or(s.err, err)
	s.mu.Unlock()
}

// wait waits for the sync running and returns the first error of any.
func (s *earlySync) wait() error {
	if s == nil {
		return nil
	}
	s.syncs.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// readbackHash is the digest of parts of a file read back in order, on a
// goroutine of its own, through one buffer charged to the memory budget.
// What a part is belongs to read: a byte range (readBytes) or rows of a
// chunked array (hashChunkRows).
type readbackHash struct {
	ranges chan [2]int64
	done   chan struct{}
	sum    string
	err    error
	mem    *memBudget
	buf    []byte
	once   sync.Once
	quit   atomic.Bool // abort: stop reading
}

// readbackBytes caps the buffer through which a contiguous array's digest
// is read back from its file (the page cache): each pread's bytes are
// still in the CPU's caches when they are hashed, and the buffer costs
// little memory beside the pipeline's. Measured on issue 19's BP4 input
// (three 448^3 arrays read back at --max-mem 1GiB --no-verify): 1 MiB
// buffers instead of 16 MiB ones (Limits.ReadLimit) peaked at 284-301 MB RSS
// instead of 334-338 MB, with 74-81k minor faults instead of 86-89k, in
// the same CPU time. Contiguous tiles are always read back so
// (digestSite): with 51 MB bands of fields/Bx and 26 MB ones of
// fields/id beside fine/Ez's, peak RSS was 20-50 MB higher, CPU the same.
const readbackBytes = 1 << 20

func startReadbackHash(ctx context.Context, f *os.File, mem *memBudget, bufBytes int64, digest catalog.Digest,
	read func(h hash.Hash, buf []byte, a, b int64) error) (*readbackHash, error) {
	r := &readbackHash{ranges: make(chan [2]int64, 1024), done: make(chan struct{}), mem: mem}
	if mem != nil {
		if err := mem.acquire(ctx, bufBytes); err != nil {
			return nil, err
		}
	}
	buf, err := membudget.Map(bufBytes)
	if err != nil {
		if mem != nil {
			mem.release(bufBytes)
		}
		return nil, err
	}
	r.buf = buf
	go func() {
		defer close(r.done)
		h := digest.New()
		for rg := range r.ranges {
			if r.err == nil && !r.quit.Load() {
				r.err = read(h, buf, rg[0], rg[1])
			}
		}
		if r.err == nil {
			r.sum = hex.EncodeToString(h.Sum(nil))
		}
	}()
	return r, nil
}

// readBytes hashes n bytes of f at off, read through buf.
func readBytes(f *os.File) func(h hash.Hash, buf []byte, off, n int64) error {
	return func(h hash.Hash, buf []byte, off, n int64) error {
		for end := off + n; off < end; {
			k := min(int64(len(buf)), end-off)
			if _, err := f.ReadAt(buf[:k], off); err != nil {
				return fmt.Errorf("%s: reading back %d bytes at %d for the digest: %w", f.Name(), k, off, err)
			}
			h.Write(buf[:k])
			off += k
		}
		return nil
	}
}

// add hashes the part (a, b) after those added before.
func (r *readbackHash) add(a, b int64) { r.ranges <- [2]int64{a, b} }

// abort ends the hashing early (the array failed); its digest is void.
func (r *readbackHash) abort() {
	r.quit.Store(true)
	r.stop()
}

// stop waits for the ranges added so far and returns their digest; later
// calls return the same.
func (r *readbackHash) stop() (string, error) {
	r.once.Do(func() {
		close(r.ranges)
		<-r.done
		membudget.Unmap(r.buf)
		if r.mem != nil {
			r.mem.release(int64(cap(r.buf)))
		}
	})
	return r.sum, r.err
}

func nonNil(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// arrayLayout plans the output layout of a: the one place that decides it
// (checkPlan up front, writeStructure as each array is written). A refined
// AMR level is chunked whatever was asked (planner.LevelLayout), and a
// partly covered array that would be contiguous is chunked with its holes
// unallocated unless opts.Fill (planner.HoleLayout, which needs the blocks:
// loaded from holes' store when a is a header, once per array), their
// Note going to the log and the manifest. A layout that does not fit the
// array (wrong rank, chunks over HDF5's limit) wraps catalog.ErrUnsupported.
func arrayLayout(a *catalog.Array, opts Options, holes *holeLayouts) (planner.Layout, error) {
	layout, err := requestedLayout(a, opts)
	if err != nil {
		return layout, err
	}
	return coveredLayout(a, layout, opts, holes)
}

// requestedLayout is the layout asked for a (by opts.LayoutFor, else the
// options), for its refinement level: what arrayLayout decides without a's
// blocks.
func requestedLayout(a *catalog.Array, opts Options) (planner.Layout, error) {
	var layout planner.Layout
	var err error
	if opts.LayoutFor != nil {
		if layout, err = opts.LayoutFor(a); err == nil {
			layout, err = planner.ChooseLayout(a.Shape, layout.Kind, layout.Chunk, nil)
		}
	} else {
		shape, grid := planner.ArrayChunks(a, opts.ChunkShape, opts.Chunks)
		layout, err = planner.ChooseLayout(a.Shape, opts.Layout, shape, grid)
	}
	if err != nil {
		return layout, arrayErr(a.Key(), fmt.Errorf("%v: %w", err, catalog.ErrUnsupported))
	}
	return planner.LevelLayout(a, layout), nil
}

// coveredLayout is arrayLayout's rest, from the requested layout: a partly
// covered array's (its blocks loaded from holes' store when a is a header),
// a netCDF array's over an unlimited dimension (recordLayout), and the
// check of its chunk size. Safe for concurrent use (opts.LayoutFor is not
// called).
func coveredLayout(a *catalog.Array, layout planner.Layout, opts Options, holes *holeLayouts) (planner.Layout, error) {
	layout, err := holeLayout(a, layout, opts, holes)
	if err != nil {
		return layout, arrayErr(a.Key(), err)
	}
	layout = planner.RecordLayout(a, layout, opts.unlimited)
	if layout.Kind == planner.Chunked {
		if b := product(layout.Chunk) * int64(a.DType.Size); b > maxChunkBytes {
			return layout, arrayErr(a.Key(), fmt.Errorf("chunk %v of %v is %d bytes, HDF5 allows %d: %w",
				layout.Chunk, a.DType, b, int64(maxChunkBytes), catalog.ErrUnsupported))
		}
	}
	return layout, nil
}

// checkPlan plans every array before anything is written, so that a layout
// that does not fit one array fails the run up front rather than half-way.
// (Blocks are checked by checkArray as each array is written.) Arrays are
// planned opts.Jobs at once (finding a partly covered array grids its
// blocks: 351,537 blocks of four arrays took 0.1 s on one core); each
// distinct layout note (a refined level's, a partly covered array's) is
// logged once per variable, in catalog order, and the error returned is
// that of the first array in that order.
func checkPlan(ctx context.Context, holes *holeLayouts, vars []catalog.VarSummary, opts Options) error {
	store := holes.store
	type planned struct {
		v   int
		a   *catalog.Array
		l   planner.Layout
		err error
	}
	var arrays []planned
	for vi, v := range vars {
		err := store.EachArrayHeader(ctx, v.Name, func(a *catalog.Array) error {
			if !a.Constant { // no data, no layout
				arrays = append(arrays, planned{v: vi, a: a})
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	for i := range arrays { // LayoutFor logs: in order
		p := &arrays[i]
		p.l, p.err = requestedLayout(p.a, opts)
	}
	var eg errgroup.Group
	eg.SetLimit(max(opts.Jobs, 1))
	for i := range arrays {
		if p := &arrays[i]; p.err == nil {
			eg.Go(func() error {
				p.l, p.err = coveredLayout(p.a, p.l, opts, holes)
				return nil
			})
		}
	}
	eg.Wait()
	logged := map[string]bool{} // of one variable
	for i, p := range arrays {
		if p.err != nil {
			return p.err
		}
		if i > 0 && arrays[i-1].v != p.v {
			clear(logged)
		}
		if p.l.Note != "" && opts.Progress != nil && !logged[p.l.Note] {
			logged[p.l.Note] = true
			fmt.Fprintf(opts.Progress, "layout: %s: %s\n", vars[p.v].Name, p.l.Note)
		}
	}
	return nil
}

// writeCoordinates (--netcdf) gives each dimension of the dataset at path a
// coordinate variable (coordinates): a 1-D float64 dataset in the iteration
// group /data/<step> (an ancestor of every dataset of the step, where
// netCDF-4 looks for dimensions; outside the meshes group, where openPMD
// readers look for records), made an HDF5 dimension scale and attached.
// Dimensions of length 0 get none. The coordinates are built in memory, so
// together they must fit the memory budget: a declared shape far larger
// than its data (a sparse (2^40,) dataset) is refused with the way out.
func writeCoordinates(w *h5.Writer, path string, a *catalog.Array, ma meshAttrs, opts Options) error {
	var elems int64
	for _, n := range a.Shape {
		elems += n
	}
	if limit := opts.Limits.CoordBytes; elems > limit/8 {
		return fmt.Errorf("--netcdf: the coordinates of shape %v take %s, more than a quarter of --max-mem %s: raise --max-mem or leave out --netcdf: %w",
			a.Shape, fsinfo.Size(elems*8), fsinfo.Size(opts.Limits.MaxMem), catalog.ErrUnsupported)
	}
	// A dimension must not share its name with a variable of the file
	// (xarray refuses a component "x" over a dimension "x").
	reserved := map[string]bool{}
	for _, p := range strings.Split(strings.Trim(path, "/"), "/") {
		reserved[p] = true
	}
	for d, c := range coordinates(a, ma, reserved) {
		if len(c.values) == 0 {
			continue
		}
		cpath := stepGroup(a.Step) + "/" + c.name
		shape := []int64{int64(len(c.values))}
		cd, err := w.CreateDataset(cpath, h5.DatasetSpec{DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: shape, Chunk: shape})
		if err != nil {
			return err
		}
		err = cd.WriteChunk([]int64{0}, float64LE(c.values))
		if cerr := cd.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = w.AttachScale(path, d, cpath, c.name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// manifestStorage records a file's layout decision.
func manifestStorage(dec fsinfo.Decision) *catalog.ManifestStorage {
	return &catalog.ManifestStorage{
		FS: string(dec.FS.Kind), FSName: dec.FS.Name, StripeCount: dec.StripeCount, StripeSize: dec.StripeSize,
		Alignment: dec.Alignment, AlignThreshold: dec.AlignThreshold,
	}
}
