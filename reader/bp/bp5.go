package bp

// BP5 directory (ADIOS2 >= 2.8; the default engine since 2.9):
//
//	NAME.bp/md.idx  [64-byte header][record]...
//	                header: 0 "ADIOS-BP v2.9.2 Index Table" | 32 major, minor,
//	                patch as characters | 36 endianness (0 LE, 1 BE) | 37 BP
//	                version (5) | 38 BP5 minor (2) | 39 writer active | 40 'y'
//	                column-major, 'n' row-major | 41 flatten steps | 42 u32 id
//	                record: u8 type | u64 body length | body
//	                'w' u64 W writers | u64 aggregators | u64 sub-files |
//	                    W x u64 sub-file of writer r
//	                's' u64 md.0 offset | u64 md.0 size | u64 F flushes |
//	                    W x (F x (u64 pos, u64 size), u64 final pos)
//	NAME.bp/mmd.0   [u64 ID length | u64 description length | ID | description]...
//	                FFS format descriptions (ffs.go)
//	NAME.bp/md.0    per step, at the md.idx offset (no file header):
//	                u64 step size - 8 | W x u64 metadata block size |
//	                W x u64 attribute block size | metadata blocks of writers
//	                0..W-1 | attribute blocks of writers 0..W-1
//	                (each block an FFS record, ffs.go)
//	NAME.bp/data.N  payloads; writer r's step data is one logical stream:
//	                its first F pieces at (pos_i, size_i), the rest at the
//	                final pos, in data.<sub-file of r>
//
// Metadata block (struct "MetaData" of the writer's current format):
//
//	BitFieldCount integer | BitField integer[BitFieldCount] |
//	DataBlockSize integer | one field per variable, in definition order;
//	bit i of BitField set <=> the i-th variable field was written this step
//	(unwritten fields hold stale bytes). Field names:
//	  BP<s>_<elem size>_<type>_<name>   arrays (s = G global, J joined,
//	                                    L local); value: struct MetaArray
//	                                    [Op][MM<n>] (below)
//	  BP<s>-<n>-<base64 expression>-<elem size>_<type>_<name>  derived
//	  BP<s>_<name>                      values (s = g global, l local):
//	                                    the value inline, its type from the
//	                                    FFS type and size ("integer" 4 ->
//	                                    int32, "float" 8 -> float64, "string")
//	  MetaArray: Dims | BlockCount | DBCount integer; Shape integer[Dims]
//	  (NULL for local; JoinedDim in the joined dimension); Count, Offset
//	  integer[DBCount] (Offset NULL for local and joined); DataBlockLocation
//	  integer[BlockCount] (logical offset in the writer's step stream);
//	  Op: DataBlockSize integer[BlockCount] (stored size); MM<n>: MinMax
//	  char[2n][BlockCount] (min then max per block)
//
// Attribute block (struct "GenericAttributes"): PrimAttrCount, PrimAttrs
// PrimAttr[PrimAttrCount] {name string, TotalElementSize integer, Values
// char[TotalElementSize]}, StrAttrCount, StrAttrs StrAttr[StrAttrCount]
// {name string, ElementCount integer, Values string[ElementCount]}. The name's
// first character is '0' + ADIOS type (+18 for arrays); the name follows.
//
// Corrections to ../shared/specs/adios2-bp5.md found on the real sets:
//   - §4.5 value fields: every global/local value (not only strings) is named
//     BP<s>_<name>, without element size and type (BPg_time "float" 8);
//   - §4.5 attributes: the structs are named PrimAttr and StrAttr and the name
//     field is "name" (lower case);
//   - §4.5 on 32-bit writers (i386, ADIOS2 2.10) the MetaArray integers stay
//     8 bytes but its pointers are 4 (a 44-byte struct, not 64): every field
//     is read with the size and offset the format gives;
//   - §4.5 MinMax is typed char[2n][BlockCount], so MM8 carries 16 bytes a
//     block; operator-compressed blocks carry no operator name in metadata:
//     the payload's first byte (common operator header) names it;
//   - §3 the first u64 of a step in md.0 is MetadataSize - 8 as stated, and
//     all md.idx, mmd.0 and md.0 numbers are in the writer's byte order
//     (s390x: big-endian record lengths too).
//
// Memory: Open streams md.idx record by record (keeping ~40 bytes a step and
// the writer maps) and md.0 writer block by writer block; it keeps, per
// (variable, step), the runs of writer ranks that wrote it. Scan re-reads the
// writer blocks of one (variable, step) at a time through a small byte-bounded
// cache, so at most one step's metadata is held, and of those writers their
// block tables (counts, offsets, locations) until the block list is built.

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/blockio"
)

// bp5Hdr is what the md.idx header says.
type bp5Hdr struct {
	bo       binary.ByteOrder
	active   bool
	colMajor bool
	damaged  bool // header text overwritten: detected by structure
}

// bp5Header checks a 64-byte md.idx header. The text (bytes 0-35) is only
// informative: the archive sets have it overwritten, so BP5 is recognised by
// the binary fields and the first record, which must be a writer map.
func bp5Header(h []byte, first []byte) (bp5Hdr, error) {
	var hd bp5Hdr
	if len(h) < 64 {
		return hd, catalog.Corrupt("bp5", "md.idx", 0, "header of %d bytes, want 64", len(h))
	}
	if h[37] == 0 || h[37] > 9 {
		return hd, catalog.Corrupt("bp5", "md.idx", 37, "header: BP format version byte %d", h[37])
	}
	if h[37] != 5 {
		return hd, fmt.Errorf("bp5: md.idx: header at offset 37: BP format version %d, want 5: %w", h[37], catalog.ErrUnsupported)
	}
	if h[38] != 2 {
		return hd, fmt.Errorf("bp5: md.idx: header at offset 38: BP5 minor version %d, want 2: %w", h[38], catalog.ErrUnsupported)
	}
	hd.damaged = !strings.HasPrefix(string(h), "ADIOS-BP v") || !strings.Contains(string(h[:32]), "Index Table")
	switch h[36] {
	case 0:
		hd.bo = binary.LittleEndian
	case 1:
		hd.bo = binary.BigEndian
	default:
		return hd, catalog.Corrupt("bp5", "md.idx", 36, "header: endianness byte %d", h[36])
	}
	switch h[40] {
	case 'y':
		hd.colMajor = true
	case 'n', 0:
	default:
		return hd, catalog.Corrupt("bp5", "md.idx", 40, "header: array order byte %d", h[40])
	}
	hd.active = h[39] == 1
	// The first record must be a writer map of a plausible length.
	if len(first) >= 17 {
		n, w := hd.bo.Uint64(first[1:]), hd.bo.Uint64(first[9:])
		if first[0] != 'w' || w == 0 || w > 1<<32 || n != 24+8*w {
			return hd, catalog.Corrupt("bp5", "md.idx", 64, "header: first record is not a writer map")
		}
	} else if !hd.active {
		return hd, catalog.Corrupt("bp5", "md.idx", 64, "header: no writer map")
	}
	return hd, nil
}

// IsBP5 reports whether dir is a BP5 directory: md.idx whose header has BP
// version 5 (text intact or not) and starts with a writer map, md.0, mmd.0.
func IsBP5(dir string) bool {
	b := make([]byte, 64+17)
	f, _, err := fileio.Open(filepath.Join(dir, "md.idx"))
	if notRegular(err) {
		return true // openBP5 names the file that is not a regular file
	}
	if err != nil {
		return false
	}
	defer f.Close()
	n, _ := f.ReadAt(b, 0)
	if n < 64 {
		return false
	}
	for _, p := range []string{"md.0", "mmd.0"} {
		if _, err := os.Lstat(filepath.Join(dir, p)); err != nil {
			return false // present (even as a symlink loop): openBP5 checks it
		}
	}
	_, err = bp5Header(b[:64], b[64:n])
	return err == nil
}

// bp5WriterMap is one 'w' record.
type bp5WriterMap struct {
	writers int
	subfile []uint32 // per writer rank
}

// bp5Step is one 's' record: where its metadata is; the per-writer data
// positions stay in md.idx (at body+24) and are re-read by Scan.
type bp5Step struct {
	body          int64 // md.idx offset of the record body
	mdPos, mdSize uint64
	flushes       uint64
	wmap          int
}

// bp5Index reads md.idx records through read (a window over the file).
type bp5Index struct {
	read func(off, n int64) ([]byte, error)
	size int64
	hdr  bp5Hdr
}

// walk visits every record. A trailing partial record is accepted only
// while the writer is active. mdSize bounds the steps' md.0 ranges.
func (x *bp5Index) walk(mdSize int64, wmap func(bp5WriterMap) error, step func(bp5Step) error) error {
	cur := -1
	writers := 0
	for off := int64(64); off < x.size; {
		if x.size-off < 9 {
			if x.hdr.active {
				return nil
			}
			return catalog.Corrupt("bp5", "md.idx", off, "record: %d trailing bytes", x.size-off)
		}
		h, err := x.read(off, 9)
		if err != nil {
			return err
		}
		typ, n := h[0], x.hdr.bo.Uint64(h[1:])
		body := off + 9
		if n > uint64(x.size-body) {
			if x.hdr.active {
				return nil
			}
			return catalog.Corrupt("bp5", "md.idx", off, "record: body of %d bytes, %d left", n, x.size-body)
		}
		switch typ {
		case 'w':
			if n < 24 {
				return catalog.Corrupt("bp5", "md.idx", off, "record: writer map of %d bytes", n)
			}
			b, err := x.read(body, 24)
			if err != nil {
				return err
			}
			w := x.hdr.bo.Uint64(b)
			nsub := x.hdr.bo.Uint64(b[16:])
			if w == 0 || w > (n-24)/8 || n != 24+8*w {
				return catalog.Corrupt("bp5", "md.idx", off, "record: writer map for %d writers in %d bytes", w, n)
			}
			b, err = x.read(body+24, int64(8*w))
			if err != nil {
				return err
			}
			m := bp5WriterMap{writers: int(w), subfile: make([]uint32, w)}
			for r := range m.subfile {
				s := x.hdr.bo.Uint64(b[8*r:])
				if s >= max(nsub, 1) || s > math.MaxUint32 {
					return catalog.Corrupt("bp5", "md.idx", off, "record: writer %d in sub-file %d of %d", r, s, nsub)
				}
				m.subfile[r] = uint32(s)
			}
			cur++
			writers = int(w)
			if err := wmap(m); err != nil {
				return err
			}
		case 's':
			if cur < 0 {
				return catalog.Corrupt("bp5", "md.idx", off, "record: step before any writer map")
			}
			if n < 24 {
				return catalog.Corrupt("bp5", "md.idx", off, "record: step record of %d bytes", n)
			}
			b, err := x.read(body, 24)
			if err != nil {
				return err
			}
			s := bp5Step{body: body, mdPos: x.hdr.bo.Uint64(b), mdSize: x.hdr.bo.Uint64(b[8:]), flushes: x.hdr.bo.Uint64(b[16:]), wmap: cur}
			per := (n - 24) / 8 / uint64(writers)
			if s.flushes > per || n != 24+8*uint64(writers)*(2*s.flushes+1) {
				return catalog.Corrupt("bp5", "md.idx", off, "record: step record of %d bytes for %d writers and %d flushes", n, writers, s.flushes)
			}
			if s.mdPos > uint64(mdSize) || s.mdSize > uint64(mdSize)-s.mdPos || s.mdSize < 8+16*uint64(writers) {
				if x.hdr.active && s.mdPos+s.mdSize > uint64(mdSize) {
					return nil // md.0 not yet written
				}
				return catalog.Corrupt("bp5", "md.idx", off, "record: md.0 range %d+%d (md.0 has %d bytes, %d writers)", s.mdPos, s.mdSize, mdSize, writers)
			}
			if err := step(s); err != nil {
				return err
			}
		default:
			// Unknown record types are skipped by length.
		}
		off = body + int64(n)
	}
	return nil
}

// bp5State is the BP5 part of a Dataset.
type bp5State struct {
	hdr     bp5Hdr
	formats *ffsFormats
	wmaps   []bp5WriterMap
	steps   []bp5Step
	idxSize int64
	// Scan caches, bounded: writer blocks by md.0 offset and step tables.
	blocks     map[int64][]byte
	blockBytes int
	blockLimit int    // bp5BlockCache (a test's smaller)
	scratch    []byte // the writer block last read and not kept
	stepInfo   map[int]*bp5StepInfo
	tables     []uint64 // the arena of buildArray5's writer tables
	local      bool     // catalog local arrays (OpenLocal)
}

// dropCaches lets the Scan caches go (nothing on a BP3/BP4 dataset: b nil).
func (b *bp5State) dropCaches() {
	if b != nil {
		b.blocks, b.blockBytes, b.stepInfo, b.scratch, b.tables = nil, 0, nil, nil, nil
	}
}

// reserve returns arena with room for n more elements: when it must grow,
// into a fresh allocation mapped in one call (catalog.Populate) holding
// what it held. Slices of the old arena stay valid (they keep their memory).
func reserve(arena []uint64, n int) []uint64 {
	if n <= cap(arena)-len(arena) {
		return arena
	}
	grown := make([]uint64, len(arena), max(2*cap(arena), len(arena)+n))
	catalog.Populate(grown)
	copy(grown, arena)
	return grown
}

// bp5StepInfo is where each writer's metadata and data are for one step.
type bp5StepInfo struct {
	mdOff, mdLen []uint64 // metadata block of writer r in md.0
	atOff, atLen []uint64 // attribute block
	final        []uint64 // final data position of writer r
	flush        []uint64 // F x (pos, size) per writer, flattened
	nflush       int
}

const (
	bp5BlockCache = 32 << 20
	bp5StepCache  = 64
)

func openBP5(dir string, cfg Config) (*Dataset, error) {
	return openBP5With(dir, cfg, false)
}

// OpenLocal opens a BP5 directory as Open does, but catalogs its 1-D local
// arrays as well, for readers of layouts built on them (reader/scorpio):
// each (variable, step) is a 1-D array whose blocks lie end to end in
// writer-rank order, as a joined array's do (Block.Rank is the writer; Box
// the running element offset and count; Shape the total). A local array
// of more than one dimension is refused (ErrUnsupported) when scanned.
func OpenLocal(dir string, cfg Config) (*Dataset, error) {
	if !IsBP5(dir) {
		return nil, fmt.Errorf("bp5: %s: not a BP5 directory: %w", dir, catalog.ErrUnsupported)
	}
	return openBP5With(dir, cfg, true)
}

// RawAttrs returns every attribute as written, names unsplit ("var/attr"
// stays whole), each with its last value, in first-definition order.
func (d *Dataset) RawAttrs() []catalog.Attr { return slices.Clone(d.attrs.list) }

func openBP5With(dir string, cfg Config, local bool) (*Dataset, error) {
	files := blockio.NewFiles(dir, cfg.MaxOpenFiles)
	d := &Dataset{
		info:    catalog.DatasetInfo{Path: dir, Root: dir, Format: "bp5"},
		files:   files,
		source:  blockio.NewSource(files),
		pfx:     "bp5",
		meta:    "md.0",
		subfile: func(i uint32) string { return fmt.Sprintf("data.%d", i) },
		b5:      &bp5State{blockLimit: bp5BlockCache, local: local},
	}
	fail := func(err error) (*Dataset, error) { files.Close(); return nil, err }
	ctx := context.Background()
	idxSize, err := files.Size(ctx, "md.idx")
	if err != nil {
		return fail(notFoundErr("md.idx", err))
	}
	head, err := files.ReadAt(ctx, "md.idx", 0, min(idxSize, 64+17))
	if err != nil {
		return fail(err)
	}
	if len(head) < 64 {
		return fail(catalog.Corrupt("bp5", "md.idx", 0, "header: %d-byte file", len(head)))
	}
	hdr, err := bp5Header(head[:64], head[64:])
	if err != nil {
		return fail(err)
	}
	d.b5.hdr, d.bo, d.b5.idxSize = hdr, hdr.bo, idxSize
	if hdr.damaged {
		d.addSkipped("md.idx header damaged; detected by structure")
	}
	mmdSize, err := files.Size(ctx, "mmd.0")
	if err != nil {
		return fail(err)
	}
	if mmdSize > 1<<30 {
		return fail(fmt.Errorf("bp5: mmd.0: %d bytes of format descriptions: %w", mmdSize, catalog.ErrUnsupported))
	}
	mmd, err := files.ReadAt(ctx, "mmd.0", 0, mmdSize)
	if err != nil {
		return fail(err)
	}
	if d.b5.formats, err = parseMMD(mmd, hdr.bo); err != nil {
		return fail(err)
	}
	mdSize, err := files.Size(ctx, "md.0")
	if err != nil {
		return fail(err)
	}
	d.nfiles = countSubfiles(dir, "data.")
	x := d.bp5Index(ctx)
	varNames := map[string]bool{}
	var raw []entry
	md := d.mdMapped(ctx) // kept for Scan, which reads it again
	err = blockio.Guarded("md.0", md, func() error {
		return x.walk(mdSize, func(m bp5WriterMap) error {
			d.b5.wmaps = append(d.b5.wmaps, m)
			return nil
		}, func(s bp5Step) error {
			d.b5.steps = append(d.b5.steps, s)
			es, err := d.indexStep5(ctx, len(d.b5.steps)-1, varNames)
			raw = append(raw, es...)
			return err
		})
	})
	d.b5.scratch = nil // a dataset opened for its payloads only is never scanned
	if err != nil {
		return fail(err)
	}
	if msg, err := d.unindexed5(ctx, mdSize); err != nil {
		return fail(err)
	} else if msg != "" {
		d.addSkipped(msg)
	}
	if err := d.finishOpen(raw, varNames, cfg); err != nil {
		return fail(err)
	}
	return d, nil
}

// unindexed5 describes the step metadata md.0 holds after the last step
// md.idx indexes ("" when none; see unindexed4). A BP5 step's metadata
// starts with the u64 size of the rest of it.
func (d *Dataset) unindexed5(ctx context.Context, mdSize int64) (string, error) {
	pos := int64(0)
	if n := len(d.b5.steps); n > 0 {
		pos = int64(d.b5.steps[n-1].mdPos + d.b5.steps[n-1].mdSize)
	}
	if pos >= mdSize {
		return "", nil
	}
	start, steps := pos, 0
	for pos <= mdSize-8 {
		b, err := d.files.ReadAt(ctx, "md.0", pos, 8)
		if err != nil {
			return "", err
		}
		n := d.bo.Uint64(b)
		if n > uint64(mdSize-pos-8) {
			break
		}
		steps, pos = steps+1, pos+8+int64(n)
	}
	return unindexedMessage(len(d.b5.steps), start, steps, mdSize-pos), nil
}

func notFoundErr(file string, err error) error {
	return fmt.Errorf("bp5: %s: %w", file, notFound(err))
}

// bp5Index returns a windowed md.idx reader (1 MiB windows).
func (d *Dataset) bp5Index(ctx context.Context) *bp5Index {
	var win []byte
	var winOff int64
	read := func(off, n int64) ([]byte, error) {
		if off >= winOff && off+n <= winOff+int64(len(win)) {
			return win[off-winOff : off-winOff+n], nil
		}
		size := min(max(n, 1<<20), d.b5.idxSize-off)
		b, err := d.files.ReadAt(ctx, "md.idx", off, size)
		if err != nil {
			return nil, err
		}
		win, winOff = b, off
		return b[:n], nil
	}
	return &bp5Index{read: read, size: d.b5.idxSize, hdr: d.b5.hdr}
}

// stepTable reads the step's writer tables (md.0 sizes, md.idx data
// positions), cached for Scan.
func (d *Dataset) stepTable(ctx context.Context, step int) (*bp5StepInfo, error) {
	if t, ok := d.b5.stepInfo[step]; ok {
		return t, nil
	}
	s := d.b5.steps[step]
	w := d.b5.wmaps[s.wmap].writers
	bo := d.bo
	b, err := d.files.ReadAt(ctx, "md.0", int64(s.mdPos), int64(8+16*w))
	if err != nil {
		return nil, err
	}
	t := &bp5StepInfo{mdOff: make([]uint64, w), mdLen: make([]uint64, w), atOff: make([]uint64, w), atLen: make([]uint64, w)}
	if got := bo.Uint64(b); got != s.mdSize-8 {
		return nil, catalog.Corrupt("bp5", "md.0", int64(s.mdPos), "step %d: size %d, md.idx says %d", step, got, s.mdSize-8)
	}
	pos, end := s.mdPos+8+16*uint64(w), s.mdPos+s.mdSize
	for r := 0; r < 2*w; r++ {
		n := bo.Uint64(b[8+8*r:])
		if n > end-pos {
			return nil, catalog.Corrupt("bp5", "md.0", int64(s.mdPos), "step %d: block %d of %d bytes past the step's end", step, r, n)
		}
		if r < w {
			t.mdOff[r], t.mdLen[r] = pos, n
		} else {
			t.atOff[r-w], t.atLen[r-w] = pos, n
		}
		pos += n
	}
	// Data positions: W x (F x (pos, size), final pos) after 24 bytes.
	t.nflush = int(s.flushes)
	per := 2*t.nflush + 1
	raw, err := d.files.ReadAt(ctx, "md.idx", s.body+24, int64(8*w*per))
	if err != nil {
		return nil, err
	}
	t.final, t.flush = parseDataPos(raw, bo, w, t.nflush)
	if d.b5.stepInfo == nil || len(d.b5.stepInfo) >= bp5StepCache {
		d.b5.stepInfo = map[int]*bp5StepInfo{}
	}
	d.b5.stepInfo[step] = t
	return t, nil
}

// parseDataPos splits a step record's W x (F x (pos, size), final pos)
// (raw holds exactly 8*W*(2F+1) bytes) into flush pieces and final positions.
func parseDataPos(raw []byte, bo binary.ByteOrder, w, nflush int) (final, flush []uint64) {
	per := 2*nflush + 1
	final = make([]uint64, w)
	flush = make([]uint64, 0, 2*nflush*w)
	for r := 0; r < w; r++ {
		for k := 0; k < 2*nflush; k++ {
			flush = append(flush, bo.Uint64(raw[8*(r*per+k):]))
		}
		final[r] = bo.Uint64(raw[8*(r*per+per-1):])
	}
	return final, flush
}

// dataOffset translates writer r's logical data offset loc (and length n)
// to its offset in the sub-file: flushed pieces first, then the final
// position. A block never spans two pieces.
func (t *bp5StepInfo) dataOffset(r int, loc, n uint64) (uint64, bool) {
	var acc uint64
	for k := 0; k < t.nflush; k++ {
		pos, size := t.flush[2*(r*t.nflush+k)], t.flush[2*(r*t.nflush+k)+1]
		if loc < acc+size {
			if n > acc+size-loc || pos > math.MaxUint64-(loc-acc) {
				return 0, false
			}
			return pos + (loc - acc), true
		}
		if size > math.MaxUint64-acc {
			return 0, false
		}
		acc += size
	}
	if loc-acc > math.MaxUint64-t.final[r] {
		return 0, false
	}
	return t.final[r] + (loc - acc), true
}

// writerBlock returns one writer's metadata or attribute block of md.0: a
// slice of its mapping when mapped (mdMapped; read it under
// blockio.Guarded), else read. With keep it keeps a block read for the
// rest of the Scan while the blocks kept fit in its limit
// (bp5BlockCache), and it evicts none for another: the
// arrays of a step each read every writer's block in turn, a cycle over
// more than fits, where dropping kept blocks to keep the newest kept none
// that the next array asked for (833,480 blocks from 8 writers of 7 MB:
// every block read again for each of the 4 arrays, 280 MB read into fresh
// memory). Blocks not kept are read into one buffer that the next such
// read reuses: the callers keep nothing of a block once they have decoded
// it (values and names are copied out).
func (d *Dataset) writerBlock(ctx context.Context, off, n uint64, keep bool) ([]byte, error) {
	if b, ok, err := d.mdSlice(int64(off), int64(n)); ok {
		return b, err
	}
	if b, ok := d.b5.blocks[int64(off)]; ok && len(b) == int(n) {
		return b, nil
	}
	if keep && d.b5.blockBytes+int(n) <= d.b5.blockLimit {
		b, err := d.files.ReadAt(ctx, "md.0", int64(off), int64(n))
		if err != nil {
			return nil, err
		}
		if d.b5.blocks == nil {
			d.b5.blocks = map[int64][]byte{}
		}
		d.b5.blocks[int64(off)] = b
		d.b5.blockBytes += int(n)
		return b, nil
	}
	if n <= uint64(cap(d.b5.scratch)) {
		b := d.b5.scratch[:n]
		return b, d.files.ReadAtInto(ctx, "md.0", int64(off), b)
	}
	b, err := d.files.ReadAt(ctx, "md.0", int64(off), int64(n)) // checked against the file size first
	if err != nil {
		return nil, err
	}
	d.b5.scratch = b
	return b, nil
}

// bp5Var is one variable field of a metadata format.
type bp5Var struct {
	fi                                                             int // field index in the top format
	ctl                                                            int // bit in BitField
	name                                                           string
	shape                                                          byte // 'g' 'G' 'J' 'l' 'L' 'U'
	typeID                                                         int  // ADIOS DataType
	elem                                                           int
	op, mm                                                         bool
	unsupp                                                         string // why its blocks cannot be located ("" ok)
	arr                                                            *ffsFormat
	aDims, aBlocks, aDB, aShape, aCount, aOffset, aLoc, aSize, aMM int
}

// bp5Layout is the BP5 reading of one metadata format.
type bp5Layout struct {
	bitCount, bitField int
	vars               []bp5Var
	byName             map[string]int
}

// ADIOS2 DataType ids (ADIOSTypes.h), as BP5 names them.
const (
	dtString = 14
	dtStruct = 16
)

// bp5TypeInfo maps an ADIOS2 DataType to the catalog type.
// bp5LongDouble is BP5's type id of long double (longdouble.go).
const bp5LongDouble = 11

func bp5TypeInfo(id int, big bool) (catalog.DType, string, bool) {
	mk := func(k catalog.Kind, n int) (catalog.DType, string, bool) {
		d := catalog.DType{Kind: k, Size: n, BigEndian: big && n > 1}
		return d, d.Name(), true
	}
	switch id {
	case 1:
		return mk(catalog.Int, 1)
	case 2:
		return mk(catalog.Int, 2)
	case 3:
		return mk(catalog.Int, 4)
	case 4:
		return mk(catalog.Int, 8)
	case 5, 15: // uint8, char
		return mk(catalog.Uint, 1)
	case 6:
		return mk(catalog.Uint, 2)
	case 7:
		return mk(catalog.Uint, 4)
	case 8:
		return mk(catalog.Uint, 8)
	case 9:
		return mk(catalog.Float, 4)
	case 10:
		return mk(catalog.Float, 8)
	case bp5LongDouble:
		return catalog.DType{}, "long double", false
	case 12:
		return catalog.DType{}, "complex64", false
	case 13:
		return catalog.DType{}, "complex128", false
	case dtString:
		return catalog.DType{}, "string", false
	case dtStruct:
		return catalog.DType{}, "struct", false
	}
	return catalog.DType{}, fmt.Sprintf("type id %d", id), false
}

// ffsScalarType is the ADIOS2 type of a value field from its FFS type.
func ffsScalarType(typ string, size int) int {
	switch typ {
	case "integer":
		switch size {
		case 1:
			return 1
		case 2:
			return 2
		case 4:
			return 3
		case 8:
			return 4
		}
	case "unsigned integer":
		switch size {
		case 1:
			return 5
		case 2:
			return 6
		case 4:
			return 7
		case 8:
			return 8
		}
	case "float", "double":
		switch size {
		case 4:
			return 9
		case 8:
			return 10
		case 16:
			return 11
		}
	case "complex4":
		return 12
	case "complex8":
		return 13
	case "string":
		return dtString
	case "char":
		return 15
	}
	return 0
}

// layout5 derives (once per format) how to read BP5 variables from it.
func layout5(f *ffsFormat) (*bp5Layout, error) {
	if f.bp5 != nil {
		return f.bp5, nil
	}
	l := &bp5Layout{bitCount: -1, bitField: -1, byName: map[string]int{}}
	for i := range f.fields {
		fd := &f.fields[i]
		switch {
		case fd.name == "BitFieldCount":
			l.bitCount = i
			continue
		case fd.name == "BitField":
			l.bitField = i
			continue
		case fd.name == "DataBlockSize":
			continue
		}
		v, err := parseVarField(f, i)
		if err != nil {
			return nil, err
		}
		v.ctl = len(l.vars)
		if _, dup := l.byName[v.name]; !dup {
			l.byName[v.name] = len(l.vars)
		}
		l.vars = append(l.vars, v)
	}
	if l.bitCount < 0 || l.bitField < 0 {
		return nil, catalog.Corrupt("bp5", "mmd.0", -1, "format %q: no BitFieldCount/BitField: not a BP5 metadata format", f.name)
	}
	if fd := &f.fields[l.bitField]; !fd.dynamic || fd.dims[0].ctl != l.bitCount {
		return nil, catalog.Corrupt("bp5", "mmd.0", -1, "format %q: BitField is not an array sized by BitFieldCount", f.name)
	}
	f.bp5 = l
	return l, nil
}

// parseVarField decodes one variable field name and type (see the layout).
func parseVarField(f *ffsFormat, i int) (bp5Var, error) {
	fd := &f.fields[i]
	v := bp5Var{fi: i, ctl: -1}
	n := fd.name
	if len(n) < 5 || !strings.HasPrefix(n, "BP") {
		return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: not a BP5 variable field", f.name, fd.name)
	}
	v.shape = n[2]
	rest := n[4:]
	switch n[3] {
	case '_':
	case '-': // derived: -<len>-<base64 expression>-
		ln, after, ok := strings.Cut(rest, "-")
		k, err := strconv.Atoi(ln)
		if !ok || err != nil || k < 0 || k+1 > len(after) || after[k] != '-' {
			return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: derived-variable expression", f.name, fd.name)
		}
		if _, err := base64.StdEncoding.DecodeString(after[:k]); err != nil {
			return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: derived-variable expression: %v", f.name, fd.name, err)
		}
		rest = after[k+1:]
	default:
		return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: not a BP5 variable field", f.name, fd.name)
	}
	switch v.shape {
	case 'G', 'J', 'L':
		es, r1, ok1 := strings.Cut(rest, "_")
		ts, r2, ok2 := strings.Cut(r1, "_")
		e, err1 := strconv.Atoi(es)
		t, err2 := strconv.Atoi(ts)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || e < 0 || e > 1<<20 {
			return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: array name without element size and type", f.name, fd.name)
		}
		v.elem, v.typeID, v.name = e, t, r2
		if t == dtStruct {
			_, v.name, _ = strings.Cut(r2, "_") // struct format ID in hex
			v.unsupp = "struct variable"
		}
		if fd.sub == nil || !strings.HasPrefix(fd.base, "MetaArray") {
			// ADIOS2 before 2.8 wrote arrays as separate fields ("V1").
			v.unsupp = fmt.Sprintf("BP5 V1 array layout (field type %q)", fd.typ)
			return v, nil
		}
		suffix := strings.TrimPrefix(fd.base, "MetaArray")
		v.op = strings.HasPrefix(suffix, "Op")
		v.mm = strings.Contains(suffix, "MM")
		a := fd.sub
		v.arr = a
		idx := func(name string, want bool) int {
			k, ok := a.byName[name]
			if !ok {
				k = -1
			}
			if want && k < 0 && v.unsupp == "" {
				v.unsupp = fmt.Sprintf("struct %s without field %s", a.name, name)
			}
			return k
		}
		v.aDims, v.aBlocks, v.aDB = idx("Dims", true), idx("BlockCount", true), idx("DBCount", true)
		v.aShape, v.aCount, v.aOffset, v.aLoc = idx("Shape", true), idx("Count", true), idx("Offsets", false), idx("DataBlockLocation", true)
		if v.aOffset < 0 {
			v.aOffset = idx("Offset", true)
		}
		v.aSize, v.aMM = idx("DataBlockSize", v.op), idx("MinMax", v.mm)
		if v.unsupp != "" {
			return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: %s", f.name, fd.name, v.unsupp)
		}
		for _, k := range []int{v.aDims, v.aBlocks, v.aDB} {
			if a.fields[k].dynamic || a.fields[k].sub != nil || a.fields[k].base == "string" {
				return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: %s.%s is not an integer", f.name, fd.name, a.name, a.fields[k].name)
			}
		}
		for _, k := range []int{v.aShape, v.aCount, v.aOffset, v.aLoc, v.aSize} {
			if k >= 0 && (!a.fields[k].dynamic || a.fields[k].sub != nil || a.fields[k].base == "string") {
				return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: %s.%s is not an integer array", f.name, fd.name, a.name, a.fields[k].name)
			}
		}
	case 'g', 'l':
		v.name = rest
		v.elem = fd.size
		v.typeID = ffsScalarType(fd.base, fd.size)
		if fd.dynamic || fd.pointer || len(fd.dims) > 0 {
			v.unsupp = fmt.Sprintf("value field of type %q", fd.typ)
		}
		if fd.sub != nil && v.typeID == 0 {
			v.typeID = dtStruct
		}
	default:
		v.name = rest
		v.unsupp = fmt.Sprintf("shape %q", v.shape)
	}
	if v.name == "" {
		return v, catalog.Corrupt("bp5", "mmd.0", -1, "format %q field %q: empty variable name", f.name, fd.name)
	}
	return v, nil
}

func (v *bp5Var) kind() shapeKind {
	switch v.shape {
	case 'g':
		return globalValue
	case 'l':
		return localValue
	case 'J':
		return joinedArray
	case 'L':
		return localArray
	}
	return globalArray
}

// written reports whether bit ctl of the record's BitField is set.
func (l *bp5Layout) written(v ffsView, ctl int) bool {
	words := v.uints(l.bitField)
	w := ctl / 64
	return w < len(words) && words[w]&(1<<(ctl%64)) != 0
}

// bitWords returns the BitField words (for walking every variable).
func (l *bp5Layout) bitWords(v ffsView) []uint64 { return v.uints(l.bitField) }

// wrun is a run of consecutive writer ranks [lo, hi].
type wrun struct{ lo, hi int32 }

func addRank(runs []wrun, r int) []wrun {
	if n := len(runs); n > 0 && runs[n-1].hi == int32(r)-1 {
		runs[n-1].hi++
		return runs
	}
	return append(runs, wrun{int32(r), int32(r)})
}

// indexStep5 reads one step's metadata, writer block by writer block, and
// returns one entry per variable written in it; attributes go to d.attrs.
func (d *Dataset) indexStep5(ctx context.Context, step int, varNames map[string]bool) ([]entry, error) {
	t, err := d.stepTable(ctx, step)
	if err != nil {
		return nil, err
	}
	delete(d.b5.stepInfo, step) // Open reads each step once
	byName := map[string]int{}
	var out []entry
	for r := range t.mdOff {
		if t.mdLen[r] == 0 {
			continue
		}
		blk, err := d.writerBlock(ctx, t.mdOff[r], t.mdLen[r], false)
		if err != nil {
			return nil, err
		}
		if err := d.indexWriter5(blk, int64(t.mdOff[r]), step, r, byName, &out); err != nil {
			return nil, err
		}
	}
	d.attrs.step = step
	for r := range t.atOff {
		if t.atLen[r] == 0 {
			continue
		}
		blk, err := d.writerBlock(ctx, t.atOff[r], t.atLen[r], false)
		if err != nil {
			return nil, err
		}
		if err := d.parseAttrs5(blk, int64(t.atOff[r])); err != nil {
			return nil, err
		}
	}
	for i := range out {
		varNames[out[i].name] = true
	}
	s := d.b5.steps[step]
	blockio.Forget(d.md, int64(s.mdPos), int64(s.mdSize))
	return out, nil
}

// indexWriter5 classifies the variables of one writer's metadata block.
func (d *Dataset) indexWriter5(blk []byte, off int64, step, rank int, byName map[string]int, out *[]entry) error {
	v, err := d.b5.formats.decodeRecord(blk, "md.0", off)
	if err != nil {
		return err
	}
	l, err := layout5(v.f)
	if err != nil {
		return err
	}
	words := l.bitWords(v)
	if v.b.err != nil {
		return v.b.err
	}
	for w, word := range words {
		for bit := 0; word != 0 && bit < 64; bit++ {
			if word&(1<<bit) == 0 {
				continue
			}
			word &^= 1 << bit
			ctl := 64*w + bit
			if ctl >= len(l.vars) {
				return catalog.Corrupt("bp5", "md.0", off, "metadata record (step %d, writer %d): bit %d set for %d variables", step, rank, ctl, len(l.vars))
			}
			fv := &l.vars[ctl]
			i, ok := byName[fv.name]
			if !ok {
				i = len(*out)
				byName[fv.name] = i
				*out = append(*out, d.newEntry5(fv, step))
			}
			e := &(*out)[i]
			if e.kind != fv.kind() && e.err == nil {
				e.err = fmt.Errorf("bp5: md.0: variable %q step %d: writer %d writes a %s, an earlier writer a %s: %w", fv.name, step, rank, fv.kind(), e.kind, catalog.ErrUnsupported)
			}
			e.runs = addRank(e.runs, rank)
		}
	}
	return nil
}

func (d *Dataset) newEntry5(fv *bp5Var, step int) entry {
	e := entry{name: fv.name, typeID: uint8(min(fv.typeID, 255)), step: step, colMaj: d.b5.hdr.colMajor, kind: fv.kind()}
	dt, desc, ok := bp5TypeInfo(fv.typeID, d.bo == binary.BigEndian)
	e.dt = dt
	switch {
	case fv.unsupp != "":
		e.err = fmt.Errorf("bp5: %s: variable %q: %s: %w", d.info.Path, fv.name, fv.unsupp, catalog.ErrUnsupported)
	case !ok:
		e.skip = fmt.Sprintf("element type %s is not supported by run", desc)
	case fv.kind() == localArray && !d.b5.local:
		e.skip = "local array (blocks have no global position) is not supported by run"
	case fv.elem != dt.Size:
		e.err = catalog.Corrupt("bp5", "mmd.0", -1, "variable %q: element size %d for %s", fv.name, fv.elem, desc)
	}
	return e
}

// operator type codes of the ADIOS2 common operator header.
var opNames = map[uint8]string{0: "blosc", 1: "bzip2", 2: "libpressio", 3: "mgard", 4: "png", 5: "sirius",
	6: "sz", 7: "zfp", 8: "mgardplus", 9: "bigwhoop", 10: "mgard-complex", 11: "sz3", 41: "mdr", 42: "prodm",
	45: "caesar", 51: "callback", 52: "callback", 53: "plugin", 127: "null"}

// buildArray5 lists the blocks of one (variable, step) from the metadata
// blocks of the writers that wrote it (see buildArray for the conventions).
func (d *Dataset) buildArray5(ctx context.Context, e *entry) (*catalog.Array, error) {
	t, err := d.stepTable(ctx, e.step)
	if err != nil {
		return nil, err
	}
	w := len(t.mdOff)
	a := &catalog.Array{Var: e.Var, Step: e.Step, DType: e.dt, Source: fmt.Sprintf("md.0:%s@%d", e.name, e.step)}
	d.decorate(e, a)
	order := catalog.RowMajor
	if e.colMaj {
		order = catalog.ColMajor
	}
	size := int64(e.dt.Size)
	switch e.kind {
	case globalValue:
		a.Shape, a.Offset = []int64{}, []int64{}
	case localValue:
		a.Shape, a.Offset = []int64{int64(w)}, []int64{0}
	}
	joinedDim := -1
	nblock := 0
	// The writers' records are decoded once, in a first pass that keeps
	// each writer's block tables (a fraction of the blocks they describe)
	// and counts the blocks, so that the list is allocated once: growing it
	// writer by writer copied (and cleared) it about twice over, and
	// counting in a pass of its own decoded every record twice, reading
	// md.0 again when a step's metadata passed the block cache.
	var tables []writer5
	total := 0
	// The tables' integers go to one arena kept for the Scan's next array:
	// allocated afresh for each array, their pages were faulted in one at
	// a time (m1's 833,481 blocks: a tenth of the catalog's CPU).
	arena := d.b5.tables[:0]
	defer func() { d.b5.tables = arena[:0] }()
	take := func(m ffsView, i int) []uint64 {
		k := len(arena)
		arena = m.appendUints(arena, i)
		if len(arena) == k {
			return nil // NULL, as uints
		}
		return arena[k:len(arena):len(arena)]
	}
	for _, run := range e.runs {
		for r := int(run.lo); r <= int(run.hi); r++ {
			if r >= w || t.mdLen[r] == 0 {
				return nil, catalog.Corrupt("bp5", "md.0", -1, "variable %q step %d: writer %d has no metadata now", e.name, e.Step, r)
			}
			mdOff := int64(t.mdOff[r])
			blk, err := d.writerBlock(ctx, t.mdOff[r], t.mdLen[r], true)
			if err != nil {
				return nil, err
			}
			v, err := d.b5.formats.decodeRecord(blk, "md.0", mdOff)
			if err != nil {
				return nil, err
			}
			l, err := layout5(v.f)
			if err != nil {
				return nil, err
			}
			vi, ok := l.byName[e.name]
			if !ok || !l.written(v, l.vars[vi].ctl) {
				return nil, catalog.Corrupt("bp5", "md.0", mdOff, "variable %q step %d: writer %d no longer writes it", e.name, e.Step, r)
			}
			fv := &l.vars[vi]
			if e.kind == globalValue || e.kind == localValue {
				if nblock > 0 && e.kind == globalValue {
					continue // every writer holds the same value
				}
				fd := &v.f.fields[fv.fi]
				val := v.b.bytesAt(fd.off, uint64(fd.size))
				if v.b.err != nil {
					return nil, v.b.err
				}
				if len(val) != int(size) {
					return nil, catalog.Corrupt("bp5", "md.0", mdOff, "%s: value of %d bytes for %s", writerBlock(e.name, e.Step, r, 0), len(val), e.dt)
				}
				b := catalog.Block{Rank: int32(r), Box: catalog.Box{Lower: []int64{}, Count: []int64{}}}.WithInline(slices.Clone(val))
				if e.kind == localValue {
					b.Box = catalog.Box{Lower: []int64{int64(r)}, Count: []int64{1}}
				}
				a.Blocks = append(a.Blocks, b)
				nblock++
				continue
			}
			m, ok := v.inner(fv.fi)
			if !ok {
				return nil, v.b.err
			}
			dims, nb, db := m.int(fv.aDims), m.int(fv.aBlocks), m.int(fv.aDB)
			if dims <= maxDims && nb <= uint64(len(blk)) {
				arena = reserve(arena, int(dims+(2*dims+2)*nb))
			}
			wt := writer5{rank: r, mdOff: mdOff, op: fv.op, ptr: v.f.ptr,
				shp: take(m, fv.aShape), cnt: take(m, fv.aCount), offs: take(m, fv.aOffset), locs: take(m, fv.aLoc)}
			if fv.aSize >= 0 {
				wt.sizes = take(m, fv.aSize)
			}
			if fv.aMM >= 0 {
				if _, n, es := m.array(fv.aMM); m.b.err == nil && n*uint64(es) != nb*2*uint64(fv.elem) && n != 0 {
					return nil, catalog.Corrupt("bp5", "md.0", mdOff, "%s: min/max of %d bytes for %d blocks of %d-byte elements", writerBlock(e.name, e.Step, r, 0), n*uint64(es), nb, fv.elem)
				}
			}
			if v.b.err != nil {
				return nil, v.b.err
			}
			if dims == 0 || dims > maxDims || nb > uint64(len(blk)) || db != dims*nb || uint64(len(wt.cnt)) != db || uint64(len(wt.locs)) != nb ||
				(wt.sizes != nil && uint64(len(wt.sizes)) != nb) || (fv.op && wt.sizes == nil && nb > 0) {
				return nil, catalog.Corrupt("bp5", "md.0", mdOff, "%s: %d dimensions, %d blocks, %d counts, %d locations", writerBlock(e.name, e.Step, r, 0), dims, nb, len(wt.cnt), len(wt.locs))
			}
			if e.kind == globalArray && (uint64(len(wt.shp)) != dims || uint64(len(wt.offs)) != db) {
				return nil, catalog.Corrupt("bp5", "md.0", mdOff, "%s: global array without shape or offsets", writerBlock(e.name, e.Step, r, 0))
			}
			if e.kind == localArray {
				// OpenLocal: the blocks of a 1-D local array lie end to end.
				if dims != 1 {
					return nil, fmt.Errorf("bp5: %s: variable %q step %d: local array of %d dimensions: %w", d.info.Path, e.name, e.Step, dims, catalog.ErrUnsupported)
				}
				wt.shp, joinedDim = []uint64{joinedDim64}, 0
			}
			if e.kind == joinedArray {
				if uint64(len(wt.shp)) != dims {
					return nil, catalog.Corrupt("bp5", "md.0", mdOff, "%s: joined array without shape", writerBlock(e.name, e.Step, r, 0))
				}
				jd := slices.Index(wt.shp, joinedDim64)
				if jd < 0 || (joinedDim >= 0 && jd != joinedDim) {
					return nil, catalog.Corrupt("bp5", "md.0", mdOff, "%s: joined dimension %d in shape %v", writerBlock(e.name, e.Step, r, 0), jd, wt.shp)
				}
				joinedDim = jd
			}
			wt.nd, wt.nb = int(dims), int(nb)
			tables = append(tables, wt)
			total += int(nb) // each bounded by its record's length
		}
	}
	if total > 0 {
		a.Blocks = make([]catalog.Block, 0, total)
		catalog.Populate(a.Blocks)
	}
	s := d.b5.steps[e.step]
	blockio.Forget(d.md, int64(s.mdPos), int64(s.mdSize)) // the tables hold what the rest needs
	var joined int64
	for i := range tables {
		if err := d.writerBlocks5(ctx, e, t, &tables[i], a, order, joinedDim, &joined); err != nil {
			return nil, err
		}
	}
	if a.Shape == nil {
		return nil, catalog.Corrupt("bp5", "md.0", -1, "variable %q step %d: no blocks", e.name, e.Step)
	}
	if joinedDim >= 0 {
		a.Shape[joinedDim] = joined
	}
	if a.Offset == nil {
		a.Offset = make([]int64, len(a.Shape))
	}
	return a, nil
}

const joinedDim64 = uint64(joinedDim)

// writer5 is one writer's block table of an array variable at one step, as
// its metadata record states it (checked for consistency, not yet against
// the shape and the data files).
type writer5 struct {
	rank                        int
	mdOff                       int64 // its metadata record in md.0
	op                          bool  // operator-compressed blocks
	ptr                         int   // the writer's pointer size
	nd, nb                      int   // dimensions, blocks
	shp, cnt, offs, locs, sizes []uint64
}

// writerBlocks5 appends the blocks of table wt to a (the second pass of
// buildArray5): boxes checked against the shape, payloads against the data
// file. joined sums the blocks along the joined dimension joinedDim.
func (d *Dataset) writerBlocks5(ctx context.Context, e *entry, t *bp5StepInfo, wt *writer5, a *catalog.Array, order catalog.Order, joinedDim int, joined *int64) error {
	r, nd, size := wt.rank, wt.nd, int64(e.dt.Size)
	shp, cnt, offs, locs, sizes := wt.shp, wt.cnt, wt.offs, wt.locs, wt.sizes
	// The lower corners of this writer's blocks share one allocation, a
	// count equal to the block before's is that block's (an array's blocks
	// mostly have one shape: the catalog then keeps the list as it is), and
	// its data file is named and sized once.
	lowers := make([]int64, nd*wt.nb)
	catalog.Populate(lowers)
	count, last := make([]int64, nd), []int64(nil)
	if n := len(a.Blocks); n > 0 {
		last = a.Blocks[n-1].Box.Count
	}
	shape := make([]int64, nd)
	file, fsize := "", int64(-1)
	for b := 0; b < wt.nb; b++ {
		lower := lowers[nd*b : nd*(b+1) : nd*(b+1)]
		for k := 0; k < nd; k++ {
			ct, st, sh := cnt[b*nd+k], uint64(0), shp[k]
			switch {
			case k == joinedDim:
				sh, st = math.MaxInt64/2, uint64(*joined)
			case e.kind == globalArray:
				st = offs[b*nd+k]
			}
			if sh > math.MaxInt64/2 || ct > sh || st > sh-ct {
				return catalog.Corrupt("bp5", "md.0", wt.mdOff, "%s: box start %v count %v outside shape %v", writerBlock(e.name, e.Step, r, b), offs, cnt[b*nd:(b+1)*nd], shp)
			}
			count[k], lower[k], shape[k] = int64(ct), int64(st), int64(sh)
		}
		if joinedDim >= 0 {
			*joined += count[joinedDim]
		}
		if a.Shape == nil {
			a.Shape = slices.Clone(shape)
		} else if !joinedEqual(a.Shape, shape, joinedDim) {
			return catalog.Corrupt("bp5", "md.0", wt.mdOff, "%s: shape %v, first block says %v", writerBlock(e.name, e.Step, r, b), shape, a.Shape)
		}
		if last == nil || !slices.Equal(count, last) {
			last = slices.Clone(count)
		}
		box := catalog.Box{Lower: lower, Count: last}
		n := box.Elements()
		if n == 0 {
			continue
		}
		if n > math.MaxInt64/size {
			return catalog.Corrupt("bp5", "md.0", wt.mdOff, "%s: block of %d elements", writerBlock(e.name, e.Step, r, b), n)
		}
		raw := n * size
		stored := uint64(raw)
		if sizes != nil {
			stored = sizes[b]
		}
		if locs[b] == math.MaxUint64 {
			return fmt.Errorf("bp5: md.0: variable %q step %d writer %d block %d: no data location: %w", e.name, e.Step, r, b, catalog.ErrUnsupported)
		}
		off, ok := t.dataOffset(r, locs[b], stored)
		if !ok || off > math.MaxInt64 || stored > math.MaxInt64 {
			return catalog.Corrupt("bp5", "md.0", wt.mdOff, "%s: data location %d (%d bytes) outside the writer's data", writerBlock(e.name, e.Step, r, b), locs[b], stored)
		}
		if fsize < 0 {
			file = d.subfile(d.b5.wmaps[d.b5.steps[e.step].wmap].subfile[r])
			var err error
			if fsize, err = d.files.Size(ctx, file); err != nil {
				return fmt.Errorf("bp5: %s: variable %q step %d writer %d block %d: %w", d.info.Path, e.name, e.Step, r, b, err)
			}
		}
		blk := catalog.Block{Box: box, File: file, Offset: int64(off), Length: int64(stored), Order: order, Rank: int32(r)}
		if blk.Offset > fsize || blk.Length > fsize-blk.Offset {
			return catalog.Corrupt("bp5", "md.0", wt.mdOff, "%s: payload at offset %d length %d past the end of %s (size %d)", writerBlock(e.name, e.Step, r, b), blk.Offset, blk.Length, blk.File, fsize)
		}
		if wt.op {
			if err := d.operate5(ctx, e, r, b, wt.ptr, raw, &blk); err != nil {
				return err
			}
		}
		a.Blocks = append(a.Blocks, blk)
	}
	return nil
}

// operate5 describes an operator-compressed block. BP5 metadata only says
// that an operator was applied; the payload's common operator header names
// it. bzip2 (buffer version 1): 4-byte common header, size_t raw size,
// size_t batch count, 16 bytes per batch, then the bzip2 streams; size_t is
// the writer's pointer size. blosc: the whole buffer goes to blockio (see
// package blosc). Other operators are refused.
func (d *Dataset) operate5(ctx context.Context, e *entry, rank, block, word int, raw int64, b *catalog.Block) error {
	h, err := d.files.ReadAt(ctx, b.File, b.Offset, min(b.Length, int64(4+2*word)))
	if err != nil {
		return err
	}
	if len(h) < 4 {
		return catalog.Corrupt("bp5", b.File, b.Offset, "%s: compressed block of %d bytes", writerBlock(e.name, e.Step, rank, block), b.Length)
	}
	name, ok := opNames[h[0]]
	if !ok {
		name = fmt.Sprintf("type %d", h[0])
	}
	if name == "blosc" {
		// The whole operator buffer is the block; package blosc decodes
		// its framing (BP5 comes from ADIOS2 >= 2.8: common header).
		b.Codecs = []catalog.Codec{bloscCodec(true, word, d.bo)}
		return nil
	}
	if name != "bzip2" {
		return fmt.Errorf("bp5: %s: variable %q step %d block %d (writer %d): operator %q is not supported (relayout decodes bzip2, blosc): %w",
			d.info.Path, e.name, e.Step, block, rank, name, catalog.ErrUnsupported)
	}
	if len(h) < 4+2*word {
		return catalog.Corrupt("bp5", b.File, b.Offset, "%s: bzip2 header truncated", writerBlock(e.name, e.Step, rank, block))
	}
	get := func(p []byte) uint64 {
		if word == 4 {
			return uint64(d.bo.Uint32(p))
		}
		return d.bo.Uint64(p)
	}
	size, batches := get(h[4:]), get(h[4+word:])
	if size != uint64(raw) || batches != uint64(raw)/bzip2Batch+1 {
		return catalog.Corrupt("bp5", b.File, b.Offset, "%s: bzip2 header says %d bytes in %d batches, the block holds %d",
			writerBlock(e.name, e.Step, rank, block), size, batches, raw)
	}
	skip := int64(4 + 2*word + 16*int(batches))
	if skip > b.Length {
		return catalog.Corrupt("bp5", b.File, b.Offset, "%s: bzip2 header of %d bytes in %d", writerBlock(e.name, e.Step, rank, block), skip, b.Length)
	}
	b.Offset += skip
	b.Length -= skip
	b.Codecs = []catalog.Codec{{Name: "bzip2"}}
	return nil
}

// writerBlock names a BP5 block in messages.
func writerBlock(name string, step int64, writer, block int) string {
	return fmt.Sprintf("variable %q step %d writer %d block %d", name, step, writer, block)
}

// parseAttrs5 reads one attribute block into d.attrs.
func (d *Dataset) parseAttrs5(blk []byte, off int64) error {
	v, err := d.b5.formats.decodeRecord(blk, "md.0", off)
	if err != nil {
		return err
	}
	if v.f.name != "GenericAttributes" {
		d.addSkipped(fmt.Sprintf("attributes in the %q layout (older BP5 writers) are not read", v.f.name))
		return nil
	}
	pi, si := v.field("PrimAttrs"), v.field("StrAttrs")
	if pi < 0 || si < 0 {
		return catalog.Corrupt("bp5", "md.0", off, "attribute block: no PrimAttrs/StrAttrs")
	}
	for _, p := range v.elems(pi) {
		ni, ti := p.field("name"), p.field("Values")
		if ni < 0 {
			ni = p.field("Name")
		}
		if ni < 0 || ti < 0 {
			return catalog.Corrupt("bp5", "md.0", off, "attribute block: PrimAttr without name/Values")
		}
		name, _ := p.str(ni)
		start, n, es := p.array(ti)
		vals := v.b.bytesAt(start, n*uint64(es))
		if v.b.err != nil {
			return v.b.err
		}
		if name == "" {
			return catalog.Corrupt("bp5", "md.0", off, "attribute block: attribute without a name")
		}
		typ, arr := int(name[0])-'0', false
		if typ > 18 {
			typ, arr = typ-18, true
		}
		a, ok := bp5AttrValue(name[1:], typ, arr, vals, d.bo)
		if !ok {
			_, desc, _ := bp5TypeInfo(typ, false)
			d.addSkipped(fmt.Sprintf("attribute %s: %s", name[1:], desc))
			continue
		}
		d.attrs.put(a)
	}
	for _, s := range v.elems(si) {
		ni, ti := s.field("name"), s.field("Values")
		if ni < 0 {
			ni = s.field("Name")
		}
		if ni < 0 || ti < 0 {
			return catalog.Corrupt("bp5", "md.0", off, "attribute block: StrAttr without name/Values")
		}
		name, _ := s.str(ni)
		strs := s.strs(ti)
		if v.b.err != nil {
			return v.b.err
		}
		if name == "" {
			return catalog.Corrupt("bp5", "md.0", off, "attribute block: attribute without a name")
		}
		typ := int(name[0]) - '0'
		d.attrs.put(catalog.Attr{Name: name[1:], Type: "string", Strings: strs, Scalar: typ <= 18 && len(strs) == 1})
	}
	return v.b.err
}

// bp5AttrValue converts a primitive attribute's bytes (writer byte order).
func bp5AttrValue(name string, typ int, arr bool, vals []byte, bo binary.ByteOrder) (catalog.Attr, bool) {
	a := catalog.Attr{Name: name, Scalar: !arr}
	if typ == bp5LongDouble {
		// Stored as float64 (rounded), the closest type HDF5 writers share.
		var ok bool
		a.Type = "float64"
		a.Floats, ok = x87LongDoubles(vals)
		return a, ok && bo == binary.ByteOrder(binary.LittleEndian) && (arr || len(a.Floats) == 1)
	}
	dt, _, ok := bp5TypeInfo(typ, false)
	if !ok || len(vals)%dt.Size != 0 || (!arr && len(vals) != dt.Size) {
		return a, false
	}
	for i := 0; i < len(vals)/dt.Size; i++ {
		p := vals[i*dt.Size : (i+1)*dt.Size]
		switch dt.Kind {
		case catalog.Int:
			a.Ints = append(a.Ints, signed(p, bo))
		case catalog.Uint:
			a.Uints = append(a.Uints, unsigned(p, bo))
		case catalog.Float:
			if dt.Size == 4 {
				a.Floats = append(a.Floats, float64(math.Float32frombits(bo.Uint32(p))))
			} else {
				a.Floats = append(a.Floats, math.Float64frombits(bo.Uint64(p)))
			}
		}
	}
	a.Type = dt.AttrType() // the stored width; values widened
	return a, true
}
