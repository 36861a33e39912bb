package bp

// BP4 directory (see doc.go for the whole picture):
//
//	NAME.bp/md.idx   [64-byte header][64-byte record per step]...
//	                 header: 0 "ADIOS-BP v2.7.1 Index Table" | 32 major '2' |
//	                 33 '0'+minor (':' for 10) | 34 patch | 36 endianness (0 LE,
//	                 1 BE) | 37 BP version (4) | 38 writer active
//	                 record: u64 step | u64 rank | u64 PG-index offset |
//	                 u64 var-index offset | u64 attr-index offset | u64 end |
//	                 u64 time | u64 0        (offsets are absolute in md.0)
//	NAME.bp/md.0     [64-byte header] then per step:
//	                 [PG index: u64 n, u64 len, n x (u16 len, str16 io,
//	                              u8 'y'|'n' column-major, u32 rank, str16 step,
//	                              u32 step, u64 PG offset in its data file)]
//	                 [var index: u32 n, u64 len, n x entry]
//	                 [attr index: u32 n, u64 len, n x entry]
//	                 entry: u32 len | u32 id | str16 group | str16 name |
//	                        u8 'K' | u8 0 | u8 type | u64 sets | sets...
//	                 set: u8 count | u32 len | (u8 id, payload)...  (index.go)
//	NAME.bp/data.N   [64-byte header][PG: "[PGI" u64 len ... [VMD ... VMD] payload ... PGI]]...

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"relayout/catalog"
	"relayout/internal/fileio"
	"relayout/reader/blockio"
)

// stepRec is one md.idx record: absolute offsets in md.0.
type stepRec struct {
	pg, vars, attrs, end uint64
}

// bp4Header checks a 64-byte BP4 header and returns its byte order, the
// writer's ADIOS version (major*1000+minor) and the active flag.
func bp4Header(h []byte, file string) (binary.ByteOrder, int, bool, error) {
	if len(h) < 64 {
		return nil, 0, false, catalog.Corrupt("bp4", file, 0, "header of %d bytes, want 64", len(h))
	}
	if h[37] == 0 || h[37] > 9 {
		return nil, 0, false, catalog.Corrupt("bp4", file, 37, "header: BP format version byte %d", h[37])
	}
	if h[37] != 4 {
		return nil, 0, false, fmt.Errorf("bp4: %s: header at offset 37: BP format version %d, want 4: %w", file, h[37], catalog.ErrUnsupported)
	}
	var bo binary.ByteOrder
	switch h[36] {
	case 0:
		bo = binary.LittleEndian
	case 1:
		bo = binary.BigEndian
	default:
		return nil, 0, false, catalog.Corrupt("bp4", file, 36, "header: endianness byte %d", h[36])
	}
	// Version bytes, not header text: minor is '0'+minor, so 2.10 is "2:".
	major, minor := int(h[32])-'0', int(h[33])-'0'
	if major < 0 || major > 9 || minor < 0 {
		return nil, 0, false, catalog.Corrupt("bp4", file, 32, "header: ADIOS version bytes %q", h[32:34])
	}
	return bo, major*1000 + minor, h[38] == 1, nil
}

// parseIndexTable checks md.idx and returns its step records, each checked
// against the size of md.0. A trailing partial record or a record past the
// end of md.0 is tolerated only while the writer is active.
func parseIndexTable(idx []byte, mdSize int64) ([]stepRec, error) {
	bo, _, active, err := bp4Header(idx, "md.idx")
	if err != nil {
		return nil, err
	}
	mdSize = max(mdSize, 0)
	if (len(idx)-64)%64 != 0 && !active {
		return nil, catalog.Corrupt("bp4", "md.idx", int64(len(idx)-(len(idx)-64)%64), "index table: %d trailing bytes", (len(idx)-64)%64)
	}
	var recs []stepRec
	for off := 64; off+64 <= len(idx); off += 64 {
		r := stepRec{bo.Uint64(idx[off+16:]), bo.Uint64(idx[off+24:]), bo.Uint64(idx[off+32:]), bo.Uint64(idx[off+40:])}
		if r.end > uint64(mdSize) || r.pg < 64 || r.vars < r.pg || r.vars-r.pg < 16 || r.attrs < r.vars || r.attrs-r.vars < 12 || r.end < r.attrs || r.end-r.attrs < 12 {
			if active && r.end > uint64(mdSize) {
				break // a writer is still appending this step
			}
			return nil, catalog.Corrupt("bp4", "md.idx", int64(off), "index record: md.0 offsets %d/%d/%d/%d outside md.0 (size %d)",
				r.pg, r.vars, r.attrs, r.end, mdSize)
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// maxIndexBytes bounds md.idx as read into memory (64 bytes per step: 16 M steps).
const maxIndexBytes = 1 << 30

func openBP4(dir string, cfg Config) (*Dataset, error) {
	idxPath := filepath.Join(dir, "md.idx")
	idx, err := fileio.ReadFile(idxPath, maxIndexBytes) // 64 bytes per step
	if err != nil {
		return nil, fmt.Errorf("bp4: %w", err)
	}
	bo, version, _, err := bp4Header(idx, "md.idx")
	if err != nil {
		return nil, err
	}
	files := blockio.NewFiles(dir, cfg.MaxOpenFiles)
	d := &Dataset{
		info:    catalog.DatasetInfo{Path: dir, Root: dir, Format: "bp4"},
		files:   files,
		source:  blockio.NewSource(files),
		bo:      bo,
		pfx:     "bp4",
		version: version,
		meta:    "md.0",
		subfile: func(i uint32) string { return fmt.Sprintf("data.%d", i) },
	}
	fail := func(err error) (*Dataset, error) { files.Close(); return nil, err }
	ctx := context.Background()
	mdSize, err := files.Size(ctx, "md.0")
	if err != nil {
		return fail(err)
	}
	hdr, err := files.ReadAt(ctx, "md.0", 0, min(64, mdSize))
	if err != nil {
		return fail(err)
	}
	if _, _, _, err := bp4Header(hdr, "md.0"); err != nil {
		return fail(err)
	}
	d.nfiles = countSubfiles(dir, "data.")
	if d.steps4, err = parseIndexTable(idx, mdSize); err != nil {
		return fail(err)
	}
	if msg, err := d.unindexed4(ctx, mdSize); err != nil {
		return fail(err)
	} else if msg != "" {
		d.addSkipped(msg)
	}
	varNames := map[string]bool{}
	var raw []entry
	md := d.mdMapped(ctx) // kept for Scan, which reads it again
	err = blockio.Guarded("md.0", md, func() error {
		for s, r := range d.steps4 {
			es, err := d.indexStep4(ctx, s, r, varNames)
			if err != nil {
				return err
			}
			raw = append(raw, es...)
			blockio.Forget(md, int64(r.pg), int64(r.end-r.pg))
		}
		return nil
	})
	if err != nil {
		return fail(err)
	}
	if err := d.finishOpen(raw, varNames, cfg); err != nil {
		return fail(err)
	}
	return d, nil
}

// unindexed4 describes the step metadata md.0 holds after the last step
// md.idx indexes ("" when none): md.idx cut at a record boundary, as a writer
// that died between writing a step's metadata and its index record leaves
// it. Those steps are not converted; the message (catalog.Incomplete) says
// how many there are. Each step's metadata is three sections whose lengths
// are in their headers (PG index: u64 count, u64 length; variable and
// attribute indexes: u32 count, u64 length), so they are counted by walking
// the headers only.
func (d *Dataset) unindexed4(ctx context.Context, mdSize int64) (string, error) {
	pos := int64(64)
	if n := len(d.steps4); n > 0 {
		pos = int64(d.steps4[n-1].end)
	}
	if pos >= mdSize {
		return "", nil
	}
	start, steps := pos, 0
	for {
		end, ok, err := d.stepEnd4(ctx, pos, mdSize)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		steps, pos = steps+1, end
	}
	return unindexedMessage(len(d.steps4), start, steps, mdSize-pos), nil
}

// unindexedMessage is the Skipped entry for md.0 metadata after the last of
// the indexed steps (ending at offset start): steps more steps found there,
// then rest bytes that are not a step's.
func unindexedMessage(indexed int, start int64, steps int, rest int64) string {
	where := fmt.Sprintf("after offset %d (the end of step %d, the last md.idx indexes)", start, indexed-1)
	if indexed == 0 {
		where = fmt.Sprintf("from offset %d (md.idx indexes no step)", start)
	}
	var msg string
	if steps > 0 {
		msg = fmt.Sprintf("md.0: %d more step(s) of metadata %s are not in md.idx", steps, where)
		if rest > 0 {
			msg += fmt.Sprintf(", then %d bytes that are no step's", rest)
		}
	} else {
		msg = fmt.Sprintf("md.0: %d bytes %s are not in md.idx", rest, where)
	}
	return catalog.Incomplete(msg + " (md.idx ends early: did the writer stop?); only the indexed steps are converted")
}

// stepEnd4 returns the end of the step metadata starting at pos in md.0 and
// whether its section headers fit inside md.0.
func (d *Dataset) stepEnd4(ctx context.Context, pos, mdSize int64) (int64, bool, error) {
	hdr := func(off, n int64) ([]byte, bool, error) {
		if off < 0 || off > mdSize-n {
			return nil, false, nil
		}
		b, err := d.files.ReadAt(ctx, "md.0", off, n)
		return b, err == nil, err
	}
	b, ok, err := hdr(pos, 16)
	if !ok {
		return 0, false, err
	}
	vars := pos + 16 + int64(min(d.bo.Uint64(b[8:]), uint64(mdSize)))
	if b, ok, err = hdr(vars, 12); !ok {
		return 0, false, err
	}
	attrs := vars + 12 + int64(min(d.bo.Uint64(b[4:]), uint64(mdSize)))
	if b, ok, err = hdr(attrs, 12); !ok {
		return 0, false, err
	}
	end := attrs + 12 + int64(min(d.bo.Uint64(b[4:]), uint64(mdSize)))
	return end, end <= mdSize, nil
}

// indexStep4 reads one step's metadata from md.0 (one step in memory) and
// returns its variables' index entries; attributes go to d.attrs.
func (d *Dataset) indexStep4(ctx context.Context, s int, r stepRec, varNames map[string]bool) ([]entry, error) {
	buf, mapped, err := d.mdSlice(int64(r.pg), int64(r.end-r.pg))
	if !mapped {
		buf, err = d.files.ReadAt(ctx, "md.0", int64(r.pg), int64(r.end-r.pg))
	}
	if err != nil {
		return nil, err
	}
	return d.parseStep4(buf, s, r, varNames)
}

// parseStep4 indexes one step from its md.0 bytes buf = md.0[r.pg:r.end].
func (d *Dataset) parseStep4(buf []byte, s int, r stepRec, varNames map[string]bool) ([]entry, error) {
	mk := func(from, to uint64, what string) *cursor {
		return newCursor(buf[from-r.pg:to-r.pg], int64(from), d.bo, "bp4", "md.0", what)
	}
	pc := mk(r.pg, r.vars, "process group index")
	pgs := parsePGIndex(pc, int(r.vars-r.pg-16))
	if pc.err != nil {
		return nil, pc.err
	}
	colMaj := len(pgs) > 0 && pgs[0].ColMajor
	vc := mk(r.vars, r.attrs, "variable index")
	vc.u32()
	vc.u64()
	var out []entry
	for vc.err == nil && vc.remaining() > 0 {
		h, ec := readEntry(vc, false)
		if vc.err != nil {
			break
		}
		e, err := d.indexEntry(h, ec, int64(s), colMaj)
		if err != nil {
			return nil, err
		}
		e.step = s
		varNames[h.Name] = true
		out = append(out, e)
	}
	if vc.err != nil {
		return nil, vc.err
	}
	ac := mk(r.attrs, r.end, "attribute index")
	d.attrs.step = s
	d.parseAttrIndex(ac)
	return out, ac.err
}

// indexEntry parses one variable index entry's sets to classify it.
func (d *Dataset) indexEntry(h entryHeader, ec *cursor, step int64, colMaj bool) (entry, error) {
	_, size, _, _ := typeInfo(h.TypeID, false)
	var c classifier
	var arena dimArena
	for ec.err == nil && ec.remaining() > 0 {
		s := parseSet(ec, h.TypeID, size, &arena)
		if ec.err != nil {
			break
		}
		d.classifySet(&c, h.Name, step, &s)
		arena.rewind() // s is not kept: the next set reuses its dimension lists
	}
	if ec.err != nil {
		return entry{}, ec.err
	}
	e := entry{name: h.Name, typeID: h.TypeID, off: h.start, length: 4 + h.length, colMaj: colMaj}
	e.dt, _, _, _ = typeInfo(h.TypeID, d.bo == binary.BigEndian)
	e.kind = c.kind
	e.skip, e.err = c.reason(h.TypeID), c.err
	return e, nil
}

// finishOpen maps names (plain or openPMD), applies the selection, records
// skipped variables and sorts the arrays.
func (d *Dataset) finishOpen(raw []entry, varNames map[string]bool, cfg Config) error {
	if pmd := detectOpenPMD(d.attrs.list); pmd != nil {
		d.pmd = pmd
		d.info.Format = "openpmd-" + d.pfx
		if pmd.varBased {
			if err := d.snapshots(raw); err != nil {
				return err
			}
		}
	}
	for _, e := range raw {
		if d.pmd != nil && d.pmd.varBased && e.name == d.pmd.snapshotName() {
			continue // the iteration index, read by snapshots
		}
		if e.skip != "" { // no data is read, so a refusal does not apply
			d.addSkipped(fmt.Sprintf("%s: %s", e.name, e.skip))
			continue
		}
		e.Var, e.Step = e.name, int64(e.step)
		if d.pmd != nil {
			pl := d.pmd.locate(e.name, e.step)
			switch pl.kind {
			case pmdOutside:
				d.addSkipped(fmt.Sprintf("%s: outside the openPMD meshesPath and particlesPath", e.name))
				continue
			}
			e.Var, e.Step, e.record, e.iterKey = pl.Var, pl.Step, pl.Record, pl.Iter
			e.species, e.speciesGroup = pl.Species, pl.SpeciesGroup
		}
		if !cfg.Selects(e.Var) {
			continue
		}
		if e.err != nil {
			return e.err
		}
		d.entries = append(d.entries, e)
	}
	if d.pmd != nil {
		if err := d.constants(varNames, cfg); err != nil {
			return err
		}
	}
	d.finishAttrs(varNames)
	return d.sortEntries()
}

// steps is the number of ADIOS2 steps Open indexed.
func (d *Dataset) steps() int {
	switch {
	case d.b5 != nil:
		return len(d.b5.steps)
	case d.bp3:
		return len(d.steps3)
	}
	return len(d.steps4)
}

// snapshots finds the iteration of every step of a variable-based openPMD
// series: the /data/snapshot variable of the step, else the attribute as it
// stood at that step, else the step index.
func (d *Dataset) snapshots(raw []entry) error {
	p := d.pmd
	name := p.snapshotName()
	p.iters = make([]int64, d.steps())
	for s := range p.iters {
		p.iters[s] = int64(s)
		if a, ok := d.attrs.getAt(name, s); ok {
			it, err := d.snapshotValue(s, a.Uints, a.Ints)
			if err != nil {
				return err
			}
			p.iters[s] = it
		}
	}
	for i := range raw {
		e := &raw[i]
		if e.name != name || e.step < 0 || e.step >= len(p.iters) {
			continue
		}
		if e.err != nil {
			return e.err
		}
		if e.kind != globalValue && e.kind != globalArray {
			return fmt.Errorf("%s: %s: variable %s step %d is a %s: %w", d.pfx, d.info.Path, name, e.step, e.kind, catalog.ErrUnsupported)
		}
		if d.pgCache == nil {
			d.pgCache = map[int]*pgTable{}
		}
		a, err := d.buildArray(context.Background(), e)
		if err != nil {
			return err
		}
		var vals []uint64
		for _, b := range a.Blocks {
			raw := b.Inline()
			if raw == nil {
				if raw, err = catalog.ReadBlock(context.Background(), d, &b, a.DType); err != nil {
					return err
				}
			}
			if a.DType.Size != 8 || len(raw)%8 != 0 || len(raw) > 8*1024 {
				return fmt.Errorf("%s: %s: variable %s step %d: %d bytes of %s, want 64-bit integers: %w", d.pfx, d.info.Path, name, e.step, len(raw), a.DType, catalog.ErrUnsupported)
			}
			bo := binary.ByteOrder(binary.LittleEndian)
			if a.DType.BigEndian {
				bo = binary.BigEndian
			}
			for k := 0; k < len(raw); k += 8 {
				vals = append(vals, bo.Uint64(raw[k:]))
			}
		}
		it, err := d.snapshotValue(e.step, vals, nil)
		if err != nil {
			return err
		}
		p.iters[e.step] = it
	}
	return nil
}

// snapshotValue checks that a step holds exactly one iteration.
func (d *Dataset) snapshotValue(step int, u []uint64, i []int64) (int64, error) {
	for _, v := range u {
		i = append(i, int64(v))
	}
	if len(i) != 1 || i[0] < 0 {
		return 0, fmt.Errorf("%s: %s: step %d: variable-based openPMD snapshot %v: one iteration per step is supported: %w",
			d.pfx, d.info.Path, step, i, catalog.ErrUnsupported)
	}
	return i[0], nil
}

// countSubfiles counts PREFIX0, PREFIX1, ... in dir (consecutive from 0).
func countSubfiles(dir, prefix string) int {
	n := 0
	for {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s%d", prefix, n))); err != nil {
			return n
		}
		n++
	}
}

func notFound(err error) error {
	if os.IsNotExist(err) {
		return catalog.ErrNotFound
	}
	return err
}
