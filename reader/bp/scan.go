package bp

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/blockio"
)

// Config tunes Open.
type Config = blockio.Config

// source is embedded in Dataset so that the block-reading methods of
// blockio.Source are Dataset's own.
type source = blockio.Source

// Dataset is an opened BP3 or BP4 input. It implements reader.Dataset.
type Dataset struct {
	info    catalog.DatasetInfo
	files   *blockio.Files
	*source // block reads: catalog.Source's methods, Close
	bo      binary.ByteOrder
	pfx     string // "bp4" or "bp3"
	bp3     bool
	// version of the writing ADIOS (major*1000+minor), for operator framing.
	version int
	meta    string // metadata file, relative to the root: "md.0" or "NAME.bp"
	// subfile names a block's data file from its file_index.
	subfile func(idx uint32) string
	nfiles  int // number of data subfiles, for writer-rank attribution
	// steps: BP4 md.idx records; BP3 the distinct time indices in order.
	steps4 []stepRec
	steps3 []uint32
	pgs3   []pgEntry // BP3: the whole PG index (all steps)

	entries []entry // sorted by (Var, Step)
	attrs   attrSet
	pmd     *openPMD // nil unless openPMD

	// Scan caches: one parsed BP3 index entry, and per-step writer tables.
	cacheOff  int64
	cacheSets []charSet
	// entryBuf holds the bytes of the index entry read last (entrySets):
	// the next entry is read into it when it fits, rather than into a
	// fresh, cleared buffer per variable. The sets parsed from it copy what
	// outlives the next read (values, strings); the BP3 cache above is
	// replaced whenever another entry is read.
	entryBuf []byte
	// setsBuf and setsArena hold the sets parsed from entryBuf, reused for
	// the next entry (parseEntrySets).
	setsBuf   []charSet
	setsArena dimArena
	pgCache   map[int]*pgTable

	b5 *bp5State // BP5 only (bp5.go)

	// md is md.0 of BP4 and BP5 mapped (blockio.Files.Map) and read in
	// place by Open and Scan, from the first read of either until Scan ends;
	// nil when not mapped yet (mapTried false), or when it cannot be: then
	// it is read.
	md       []byte
	mapTried bool
}

// mdMapped maps md.0 (BP4, BP5) unless tried since the last Scan ended; nil
// when it is empty or cannot be mapped, and for BP3.
func (d *Dataset) mdMapped(ctx context.Context) []byte {
	if !d.mapTried && d.meta == "md.0" && !d.bp3 {
		d.mapTried = true
		if m, err := d.files.Map(ctx, "md.0"); err == nil {
			d.md = m
		}
	}
	return d.md
}

// mdSlice is md.0[off:off+n] from the mapping (ok false: md.0 is not
// mapped), or a corruption error when the range leaves the file.
func (d *Dataset) mdSlice(off, n int64) (b []byte, ok bool, err error) {
	md := d.md
	if md == nil {
		return nil, false, nil
	}
	if off < 0 || n < 0 || off > int64(len(md)) || n > int64(len(md))-off {
		return nil, true, catalog.Corrupt("blockio", "md.0", off, "block of %d bytes past end of file (size %d)", n, len(md))
	}
	return md[off : off+n : off+n], true, nil
}

// dropMapping ends md.0's mapping; the next Open or Scan read maps it again.
func (d *Dataset) dropMapping() {
	d.files.Unmap(d.md)
	d.md, d.mapTried = nil, false
}

// entry is one array found at Open: where its index entry is, not its blocks.
type entry struct {
	Var     string
	Step    int64
	name    string // ADIOS variable name
	typeID  uint8
	dt      catalog.DType
	step    int   // BP4: md.idx record index; BP3: index into steps3
	off     int64 // metadata file offset of the index entry's length field
	length  int   // entry bytes including the length field
	colMaj  bool
	kind    shapeKind
	record  string // openPMD record path ("" none)
	iterKey string // openPMD iteration path ("" none)
	// openPMD particles: the species and its group path ("" none)
	species, speciesGroup string
	skip                  string // why Open lists it in Skipped instead ("" = catalogued)
	err                   error  // why Open refuses the input if this array is selected
	runs                  []wrun // BP5: the writer ranks that wrote it this step
	// constant: an openPMD constant record component (attributes, no
	// variable; constants.go), emitted as this array with its attributes.
	constant *catalog.Array
}

// Info describes the input; Skipped lists what is not catalogued and why.
func (d *Dataset) Info() catalog.DatasetInfo { return d.info }

// Open opens a BP4 or BP5 directory (md.idx, md.0[, mmd.0], data.N) or a BP3 file NAME.bp
// (with or without NAME.bp.dir/ sub-files) and indexes its variables.
func Open(path string, cfg Config) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("bp: %s: %w", path, catalog.ErrNotFound)
		}
		return nil, fmt.Errorf("bp: %w", err)
	}
	if st.IsDir() {
		if IsBP5(path) {
			return openBP5(path, cfg)
		}
		return openBP4(path, cfg)
	}
	return openBP3(path, cfg)
}

// IsBP4 reports whether dir looks like a BP4 directory (md.idx with format
// version byte 4 and md.0).
func IsBP4(dir string) bool {
	h := make([]byte, 64)
	f, _, err := fileio.Open(dir + "/md.idx")
	if notRegular(err) {
		return true // openBP4 names the file that is not a regular file
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.ReadAt(h, 0); err != nil {
		return false
	}
	if _, err := os.Lstat(dir + "/md.0"); err != nil {
		return false // present (even as a symlink loop): openBP4 checks it
	}
	return h[37] == 4 && strings.HasPrefix(string(h), "ADIOS-BP v")
}

// IsBP3 reports whether path is a BP3 file: its last 4 bytes hold an
// endianness byte of 0 or 1 and a BP version of 3 (ADIOS2), or it ends with
// an ADIOS 1.x 28-byte mini-footer whose version word names BP version 3.
func IsBP3(path string) bool {
	f, size, err := fileio.Open(path)
	if notRegular(err) {
		return true // openBP3 names the file that is not a regular file
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if size < 28 {
		return false
	}
	b := make([]byte, 28)
	if _, err := f.ReadAt(b, size-28); err != nil {
		return false
	}
	_, _, err = footerKind(b, size)
	return err == nil
}

// notRegular reports whether err is blockio.Open's refusal of a file that
// exists but is not a regular file (FIFO, device, directory, symlink loop):
// detection claims the input so that Open reports the file by name.
func notRegular(err error) bool {
	return errors.Is(err, catalog.ErrUnsupported) || errors.Is(err, catalog.ErrCorrupt)
}

// addSkipped records an object seen but not catalogued (once per text).
func (d *Dataset) addSkipped(s string) {
	if !slices.Contains(d.info.Skipped, s) {
		d.info.Skipped = append(d.info.Skipped, s)
	}
}

// sortEntries orders arrays by variable then step and refuses duplicates.
func (d *Dataset) sortEntries() error {
	slices.SortStableFunc(d.entries, func(a, b entry) int {
		if c := strings.Compare(a.Var, b.Var); c != 0 {
			return c
		}
		switch {
		case a.Step < b.Step:
			return -1
		case a.Step > b.Step:
			return 1
		}
		return 0
	})
	for i := 1; i < len(d.entries); i++ {
		a, b := d.entries[i-1], d.entries[i]
		if a.Var == b.Var && a.Step == b.Step {
			return fmt.Errorf("%s: %s: variable %q step %d comes from both %q and %q: %w",
				d.pfx, d.info.Path, a.Var, a.Step, a.name, b.name, catalog.ErrUnsupported)
		}
	}
	return nil
}

// Scan emits every selected array with its blocks, ordered by variable then
// step. For each array it reads only that variable's index entry of that
// step (BP4) or of the whole file (BP3, cached while its steps are emitted),
// so memory holds one index entry at a time.
func (d *Dataset) Scan(ctx context.Context, emit func(*catalog.Array) error) error {
	d.pgCache = map[int]*pgTable{}
	defer d.dropScanCaches()
	for i := range d.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := d.entryArray(ctx, &d.entries[i])
		if err != nil {
			return err
		}
		if err := emit(a); err != nil {
			return err
		}
	}
	return nil
}

// dropScanCaches lets the metadata Scan kept for the next array go (up to
// 32 MiB of BP5 writer records, a BP4 or BP3 index entry): the dataset
// stays open for the rewrite, which reads payloads only, and a later Scan
// reads them again.
func (d *Dataset) dropScanCaches() {
	d.cacheOff, d.cacheSets, d.entryBuf = 0, nil, nil
	d.setsBuf, d.setsArena = nil, dimArena{}
	clear(d.pgCache)
	d.b5.dropCaches()
	d.dropMapping()
}

// entryArray is the array of entry e: its blocks from the index, or the
// constant record it stands for (constants.go).
func (d *Dataset) entryArray(ctx context.Context, e *entry) (*catalog.Array, error) {
	if e.constant != nil {
		return d.constantArray(e), nil
	}
	a, err := d.buildArray(ctx, e)
	if err == nil && d.pmd != nil {
		catalog.SetLevelBoxes(a) // an openPMD mesh-refinement level: its patches
	}
	return a, err
}

// entrySets reads and parses the characteristic sets of e's index entry.
func (d *Dataset) entrySets(ctx context.Context, e *entry) ([]charSet, error) {
	if d.bp3 && d.cacheOff == e.off && d.cacheSets != nil {
		return d.cacheSets, nil
	}
	var raw []byte
	var err error
	d.cacheSets = nil // it points into entryBuf and setsBuf, both reused now
	if b, ok, merr := d.mdSlice(e.off, int64(e.length)); ok {
		raw, err = b, merr
	} else if e.length >= 0 && e.length <= cap(d.entryBuf) {
		raw = d.entryBuf[:e.length]
		err = d.files.ReadAtInto(ctx, d.meta, e.off, raw)
	} else {
		raw, err = d.files.ReadAt(ctx, d.meta, e.off, int64(e.length)) // checked against the file size first
		d.entryBuf = raw
	}
	if err != nil {
		return nil, err
	}
	sets, err := d.parseEntrySets(raw, e)
	if err != nil {
		return nil, err
	}
	if d.bp3 {
		// Group by step, keeping each step's blocks in index order.
		slices.SortStableFunc(sets, func(a, b charSet) int { return cmp.Compare(uint64(a.Step), uint64(b.Step)) })
		d.cacheOff, d.cacheSets = e.off, sets
	}
	return sets, nil
}

// parseEntrySets parses the index entry of e from its bytes.
func (d *Dataset) parseEntrySets(raw []byte, e *entry) ([]charSet, error) {
	c := newCursor(raw, e.off, d.bo, d.pfx, d.meta, "variable index")
	h, ec := readEntry(c, d.bp3)
	if c.err != nil {
		return nil, c.err
	}
	name := h.Name
	if d.bp3 {
		name = fullName(h)
	}
	if name != e.name || h.TypeID != e.typeID {
		return nil, catalog.Corrupt(d.pfx, d.meta, e.off, "variable index: entry %q changed since Open", h.Name)
	}
	_, size, _, _ := typeInfo(h.TypeID, false)
	// The sets are counted first (countSets: NSets may be off) and their
	// dimension lists reuse the previous entry's memory: its array is
	// built (buildArray copies what it keeps) and the BP3 cache is replaced
	// below, so nothing refers to them any more. A fresh ~200-byte set per
	// block, cleared, was a fifth of a BP4 catalog's allocations.
	sets := slices.Grow(d.setsBuf[:0], countSets(*ec))
	d.setsArena.rewind()
	for ec.remaining() > 0 {
		s := parseSet(ec, h.TypeID, size, &d.setsArena)
		if ec.err != nil {
			return nil, ec.err
		}
		sets = append(sets, s)
	}
	d.setsBuf = sets
	return sets, nil
}

// stepSets returns the sets of e that belong to its step.
func (d *Dataset) stepSets(e *entry, sets []charSet) []charSet {
	if !d.bp3 {
		return sets
	}
	t := d.steps3[e.step] // sets are sorted by step (entrySets)
	lo := sort.Search(len(sets), func(i int) bool { return sets[i].Step >= t })
	hi := sort.Search(len(sets), func(i int) bool { return sets[i].Step > t })
	return sets[lo:hi]
}

// buildArray lists the blocks of one (variable, step):
//
//	global array   one block per non-empty set: Box = (start, count) in the
//	               writer's dimension order; Order ColMajor for Fortran writers
//	joined array   as global, the joined dimension's start = running sum of the
//	               preceding blocks' counts (set order), extent = total
//	global value   0-d array; the value is inlined from the index
//	local value    1-d array of one element per writer block, inlined
func (d *Dataset) buildArray(ctx context.Context, e *entry) (*catalog.Array, error) {
	md := d.mdMapped(ctx)
	build := d.buildArray4
	if d.b5 != nil {
		build = d.buildArray5 // it lets the step's pages go itself
	}
	var a *catalog.Array
	err := blockio.Guarded("md.0", md, func() (err error) {
		a, err = build(ctx, e)
		return err
	})
	if d.b5 == nil {
		blockio.Forget(md, e.off, int64(e.length)) // built: the array copied what it keeps
	}
	return a, err
}

// buildArray4 is buildArray for BP3 and BP4.
func (d *Dataset) buildArray4(ctx context.Context, e *entry) (*catalog.Array, error) {
	all, err := d.entrySets(ctx, e)
	if err != nil {
		return nil, err
	}
	sets := d.stepSets(e, all)
	a := &catalog.Array{Var: e.Var, Step: e.Step, DType: e.dt, Source: fmt.Sprintf("%s:%s@%d", d.meta, e.name, d.stepLabel(e))}
	d.decorate(e, a)
	pgt := d.writers(ctx, e.step)
	order := catalog.RowMajor
	if e.colMaj {
		order = catalog.ColMajor
	}
	size := int64(e.dt.Size)
	a.Blocks = make([]catalog.Block, 0, len(sets))
	catalog.Populate(a.Blocks)
	switch e.kind {
	case globalValue, localValue:
		if e.kind == globalValue {
			a.Shape, a.Offset = []int64{}, []int64{}
			sets = sets[:min(len(sets), 1)] // every writer holds the same value
		} else {
			a.Shape, a.Offset = []int64{int64(len(sets))}, []int64{0}
		}
		for i := range sets {
			s := &sets[i]
			if len(s.Value) != int(size) {
				return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: value of %d bytes for %s", blockName(e.name, e.Step, i), len(s.Value), e.dt)
			}
			b := catalog.Block{Rank: pgt.rank(s.FileIndex, s.VMDOffset)}.WithInline(slices.Clone(s.Value))
			if e.kind == localValue {
				b.Box = catalog.Box{Lower: []int64{int64(i)}, Count: []int64{1}}
			} else {
				b.Box = catalog.Box{Lower: []int64{}, Count: []int64{}}
			}
			a.Blocks = append(a.Blocks, b)
		}
		return a, nil
	}
	var joined int64 // running start along the joined dimension
	// The blocks' boxes share one allocation, and each data file is named
	// and sized once, not once per block.
	// The blocks' lower corners share one allocation; a count equal to the
	// block before's is that block's (an array's blocks mostly have one shape).
	nlower := 0
	for i := range sets {
		nlower += len(sets[i].Count)
	}
	lowers := make([]int64, 0, nlower)
	catalog.Populate(lowers)
	var count, last []int64
	type dataFile struct {
		name string
		size int64
	}
	var files []dataFile // by file index, size -1 until looked up
	var shape []int64
	for i := range sets {
		s := &sets[i]
		if !s.HasDims || s.kind() != e.kind {
			return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: block is a %s, earlier blocks a %s", blockName(e.name, e.Step, i), s.kind(), e.kind)
		}
		nd := len(s.Count)
		shape = slices.Grow(shape[:0], nd)[:nd]
		count = slices.Grow(count[:0], nd)[:nd]
		lowers = append(lowers, make([]int64, nd)...)
		lower := lowers[len(lowers)-nd : len(lowers) : len(lowers)]
		for k := 0; k < nd; k++ {
			sh, st, ct := s.Shape[k], s.Start[k], s.Count[k]
			if k == s.joinedIndex {
				sh, st = math.MaxInt64/2, uint64(joined)
			}
			if sh > math.MaxInt64/2 || ct > sh || st > sh-ct {
				return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: box start %v count %v outside shape %v", blockName(e.name, e.Step, i), s.Start, s.Count, s.Shape)
			}
			shape[k], lower[k], count[k] = int64(sh), int64(st), int64(ct)
		}
		if s.joinedIndex >= 0 {
			joined += count[s.joinedIndex]
		}
		if i == 0 {
			a.Shape = slices.Clone(shape)
		} else if !joinedEqual(a.Shape, shape, s.joinedIndex) {
			return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: shape %v, block 0 says %v", blockName(e.name, e.Step, i), shape, a.Shape)
		}
		if last == nil || !slices.Equal(count, last) {
			last = slices.Clone(count)
		}
		box := catalog.Box{Lower: lower, Count: last}
		n := box.Elements()
		if n == 0 {
			continue // an empty block holds no data
		}
		if n > math.MaxInt64/size {
			return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: block of %d elements", blockName(e.name, e.Step, i), n)
		}
		if !s.HasPayload || !s.HasFile {
			return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: no payload offset or sub-file index", blockName(e.name, e.Step, i))
		}
		fi := int(s.FileIndex)
		if fi < len(files)+64 { // file indexes are small; a hostile one is named each time
			for len(files) <= fi {
				files = append(files, dataFile{size: -1})
			}
			if files[fi].name == "" {
				files[fi].name = d.subfile(s.FileIndex)
			}
		}
		file := ""
		if fi < len(files) {
			file = files[fi].name
		} else {
			file = d.subfile(s.FileIndex)
		}
		b := catalog.Block{Box: box, File: file, Offset: int64(s.Payload), Length: n * size,
			Order: order, Rank: pgt.rank(s.FileIndex, s.VMDOffset)}
		if s.Payload > math.MaxInt64 {
			return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: payload offset %d", blockName(e.name, e.Step, i), s.Payload)
		}
		if s.Op != nil {
			if err := d.operate(e, i, s, &b); err != nil {
				return nil, err
			}
		}
		fsize := int64(-1)
		if fi < len(files) {
			fsize = files[fi].size
		}
		if fsize < 0 {
			if fsize, err = d.files.Size(ctx, b.File); err != nil {
				return nil, fmt.Errorf("%s: %s: variable %q step %d block %d: %w", d.pfx, d.info.Path, e.name, e.Step, i, err)
			}
			if fi < len(files) {
				files[fi].size = fsize
			}
		}
		if b.Offset > fsize || b.Length > fsize-b.Offset {
			return nil, catalog.Corrupt(d.pfx, d.meta, sets[i].setStart, "%s: payload at offset %d length %d past the end of %s (size %d)", blockName(e.name, e.Step, i), b.Offset, b.Length, b.File, fsize)
		}
		a.Blocks = append(a.Blocks, b)
	}
	if e.kind == joinedArray && len(sets) > 0 {
		a.Shape[sets[0].joinedIndex] = joined
	}
	a.Offset = make([]int64, len(a.Shape))
	return a, nil
}

func joinedEqual(a, b []int64, joined int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if i != joined && a[i] != b[i] {
			return false
		}
	}
	return true
}

// bzip2Batch is ADIOS2's DefaultMaxFileBatchSize: the bzip2 operator
// compresses a block in batches of at most this many bytes.
const bzip2Batch = 2147483648 - 102400

// operate describes an operator (characteristic 11) block. bzip2 and blosc
// are decoded by blockio. bzip2: ADIOS2 >= 2.8 prefixes the bzip2 streams
// with a common operator header (4 bytes), u64 size, u64 batch count and a
// 16-byte record per batch, which the block range skips. blosc: the whole
// operator buffer is the block (its framing, which changed with 2.8, is
// decoded by package blosc). Anything else is refused at Open.
func (d *Dataset) operate(e *entry, i int, s *charSet, b *catalog.Block) error {
	if err := d.checkOp(e.name, e.Step, i, s); err != nil {
		return err
	}
	raw := uint64(b.Length)
	if s.Op.RawSize != raw {
		return catalog.Corrupt(d.pfx, d.meta, s.setStart, "%s: operator %s says %d raw bytes, the block holds %d",
			blockName(e.name, e.Step, i), s.Op.Name, s.Op.RawSize, raw)
	}
	skip := uint64(0)
	if d.version >= 2008 && s.Op.Name == "bzip2" {
		skip = 4 + 16 + 16*(raw/bzip2Batch+1)
	}
	if s.Op.Stored < skip || s.Op.Stored > math.MaxInt64 {
		return catalog.Corrupt(d.pfx, d.meta, s.setStart, "%s: operator %s stored size %d",
			blockName(e.name, e.Step, i), s.Op.Name, s.Op.Stored)
	}
	b.Offset += int64(skip)
	b.Length = int64(s.Op.Stored - skip)
	if s.Op.Name == "blosc" {
		b.Codecs = []catalog.Codec{bloscCodec(d.version >= 2008, 8, d.bo)}
		return nil
	}
	b.Codecs = []catalog.Codec{{Name: "bzip2"}}
	return nil
}

// bloscCodec is the blockio codec of an ADIOS2 blosc operator buffer:
// Params [size_t width of the common operator header (0: none), 1 if the
// writer was big-endian].
func bloscCodec(header bool, word int, bo binary.ByteOrder) catalog.Codec {
	p := []uint32{0, 0}
	if header {
		p[0] = uint32(word)
	}
	if bo == binary.BigEndian {
		p[1] = 1
	}
	return catalog.Codec{Name: "blosc", Params: p}
}

// blockName names a block in messages.
func blockName(name string, step int64, block int) string {
	return fmt.Sprintf("variable %q step %d block %d", name, step, block)
}

// checkOp refuses operators relayout cannot decode.
func (d *Dataset) checkOp(name string, step int64, block int, s *charSet) error {
	if s.Op == nil {
		return nil
	}
	if s.Op.Name != "bzip2" && s.Op.Name != "blosc" {
		return fmt.Errorf("%s: %s: variable %q step %d block %d: operator %q is not supported (relayout decodes bzip2, blosc): %w",
			d.pfx, d.info.Path, name, step, block, s.Op.Name, catalog.ErrUnsupported)
	}
	if !s.Op.HasSizes {
		return catalog.Corrupt(d.pfx, d.meta, s.setStart, "%s: operator %s without size metadata",
			blockName(name, step, block), s.Op.Name)
	}
	if d.bp3 && d.version < 2000 {
		return fmt.Errorf("%s: %s: variable %q step %d block %d: ADIOS 1.x transform %s: %w",
			d.pfx, d.info.Path, name, step, block, s.Op.Name, catalog.ErrUnsupported)
	}
	return nil
}

func (d *Dataset) stepLabel(e *entry) int64 {
	if d.bp3 {
		return int64(d.steps3[e.step])
	}
	return int64(e.step)
}

// classifier decides at Open what one (variable, step) is, one set at a
// time, so Open never holds a variable's blocks.
type classifier struct {
	kind shapeKind
	n    int
	err  error // first refusal; reported only if the variable is selected
}

// classifySet checks one set: all blocks of a step must be of one kind, and
// operators must be ones relayout decodes.
func (d *Dataset) classifySet(c *classifier, name string, step int64, s *charSet) {
	k := s.kind()
	if c.n == 0 {
		c.kind = k
	} else if k != c.kind && c.err == nil {
		c.err = fmt.Errorf("%s: %s: variable %q step %d: block %d is a %s, block 0 a %s: %w",
			d.pfx, d.meta, name, step, c.n, k, c.kind, catalog.ErrUnsupported)
	}
	if err := d.checkOp(name, step, c.n, s); err != nil && c.err == nil {
		c.err = err
	}
	c.n++
}

// reason is why the (variable, step) goes to Skipped, "" when catalogued.
func (c *classifier) reason(typeID uint8) string {
	if c.n == 0 {
		return "no blocks"
	}
	if _, _, desc, ok := typeInfo(typeID, false); !ok {
		return fmt.Sprintf("element type %s is not supported by run", desc)
	}
	if c.kind == localArray {
		return "local array (blocks have no global position) is not supported by run"
	}
	return ""
}

// attrSet accumulates attributes across steps (a later definition wins),
// keeping first-seen order. Set step before reading a step's attributes:
// the definitions that change are kept with their step, so that at gives the
// attributes as they stood at any step (variable-based openPMD rewrites the
// iteration's attributes, e.g. time, every step).
type attrSet struct {
	list  []catalog.Attr
	index map[string]int
	step  int                   // step of the attributes being put
	first []int                 // step at which list[i] was first defined
	hist  map[string][]stepAttr // every version of the names that changed
}

type stepAttr struct {
	step int
	attr catalog.Attr
}

func (s *attrSet) put(a catalog.Attr) {
	if s.index == nil {
		s.index = map[string]int{}
	}
	if i, ok := s.index[a.Name]; ok {
		old := s.list[i]
		if attrEqual(old, a) {
			return // BP4 repeats every attribute in every step
		}
		if s.hist == nil {
			s.hist = map[string][]stepAttr{}
		}
		h := s.hist[a.Name]
		if len(h) == 0 {
			h = append(h, stepAttr{s.first[i], old})
		}
		if h[len(h)-1].step == s.step {
			h = h[:len(h)-1] // redefined within one step: the last wins
		}
		s.hist[a.Name] = append(h, stepAttr{s.step, a})
		s.list[i] = a
		return
	}
	s.index[a.Name] = len(s.list)
	s.list = append(s.list, a)
	s.first = append(s.first, s.step)
}

// at returns the attributes as they stood after step was read: those first
// defined later are left out, changed ones have their value of that step.
func (s *attrSet) at(step int) []catalog.Attr {
	out := make([]catalog.Attr, 0, len(s.list))
	for i, a := range s.list {
		if s.first[i] > step {
			continue
		}
		for _, v := range s.hist[a.Name] {
			if v.step <= step {
				a = v.attr
			}
		}
		out = append(out, a)
	}
	return out
}

// getAt is at(step)'s value of one attribute.
func (s *attrSet) getAt(name string, step int) (catalog.Attr, bool) {
	i, ok := s.index[name]
	if !ok || s.first[i] > step {
		return catalog.Attr{}, false
	}
	a := s.list[i]
	for _, v := range s.hist[name] {
		if v.step <= step {
			a = v.attr
		}
	}
	return a, true
}

func attrEqual(a, b catalog.Attr) bool {
	return a.Name == b.Name && a.Type == b.Type && a.Scalar == b.Scalar && slices.Equal(a.Strings, b.Strings) &&
		slices.Equal(a.Ints, b.Ints) && slices.Equal(a.Uints, b.Uints) &&
		slices.EqualFunc(a.Floats, b.Floats, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

// parseAttrIndex reads an attribute index (u32 count, u64 length, entries)
// into the dataset's attributes.
func (d *Dataset) parseAttrIndex(c *cursor) {
	c.u32()
	c.u64()
	for c.err == nil && c.remaining() > 0 {
		h, ec := readEntry(c, d.bp3)
		if c.err != nil {
			return
		}
		_, size, desc, _ := typeInfo(h.TypeID, false)
		if h.TypeID != typeString && h.TypeID != typeStringArray && size == 0 {
			d.addSkipped(fmt.Sprintf("attribute %s: %s", h.Name, desc))
			continue
		}
		s := parseSet(ec, h.TypeID, size, nil)
		if ec.err != nil {
			c.err = ec.err
			return
		}
		name := h.Name
		if d.bp3 && h.Path != "" && h.Path != "/" {
			name = strings.TrimSuffix(h.Path, "/") + "/" + h.Name
		}
		a, ok := attrValue(name, h.TypeID, &s, d.bo)
		if !ok {
			d.addSkipped(fmt.Sprintf("attribute %s: %s", name, desc))
			continue
		}
		d.attrs.put(a)
	}
}

// finishAttrs splits attributes into dataset attributes and per-variable
// ones ("var/attr" where var is a variable name) for plain BP inputs.
func (d *Dataset) finishAttrs(varNames map[string]bool) {
	if d.pmd != nil {
		d.info.Attrs = d.pmd.rootAttrs(d.attrs.list)
		return
	}
	for _, a := range d.attrs.list {
		if i := strings.LastIndexByte(a.Name, '/'); i > 0 && varNames[a.Name[:i]] {
			continue // carried on the variable's arrays
		}
		d.info.Attrs = append(d.info.Attrs, a)
	}
	slices.SortStableFunc(d.info.Attrs, func(x, y catalog.Attr) int { return strings.Compare(x.Name, y.Name) })
}

// decorate adds attributes to an array: "var/attr" attributes for plain BP,
// record/component/iteration attributes for openPMD.
func (d *Dataset) decorate(e *entry, a *catalog.Array) {
	if d.pmd != nil {
		all := d.attrs.list
		if d.pmd.varBased {
			all = d.attrs.at(e.step)
		}
		a.Attrs, a.StepAttrs = d.pmd.arrayAttrs(all, e)
		a.Species = e.species
		return
	}
	prefix := e.name + "/"
	for _, at := range d.attrs.list {
		if leaf, ok := strings.CutPrefix(at.Name, prefix); ok && !strings.Contains(leaf, "/") {
			at.Name = leaf
			a.Attrs = append(a.Attrs, at)
		}
	}
	slices.SortStableFunc(a.Attrs, func(x, y catalog.Attr) int { return strings.Compare(x.Name, y.Name) })
}
