package bp

// BP3 (ADIOS2's BP3 engine and ADIOS 1.x):
//
//	NAME.bp   [PGs, when not sub-filed]...
//	          [PG index:   u64 n, u64 len, n x PG entry (as BP4, all steps)]
//	          [var index:  u32 n, u64 len, n x entry]   one entry per variable
//	          [attr index: u32 n, u64 len, n x entry]   for the whole file
//	          [footer]
//	entry:    u32 len | u32 id | str16 group | str16 name | str16 path |
//	          u8 type | u64 sets | sets...   (a set's time_index is its step)
//	footer, ADIOS2 and ADIOS 1.13 (56)  older ADIOS 1.x (28 bytes)
//	  24  "ADIOS-BP v2.5.0" text
//	   4  major, minor, patch, 0 (ADIOS2: characters '2','5','0';
//	      ADIOS 1.13: binary 1, 13, 1)
//	   8  u64 PG index offset            8  u64 PG index offset
//	   8  u64 var index offset           8  u64 var index offset
//	   8  u64 attr index offset          8  u64 attr index offset
//	   1  endianness (0 LE, 1 BE)        4  version word, big-endian:
//	   1  0                                 0x80000000 big-endian writer,
//	   1  3 = sub-files, 0|2 = none         0x100 sub-files, 0x200 time
//	   1  BP version (3)                    index, low byte BP version
//	NAME.bp.dir/NAME.bp.N   sub-file N: the PGs of aggregator N; block
//	                        offsets are relative to the sub-file named by
//	                        the block's file_index.

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/reader/blockio"
)

// footerKind reads the last 28 bytes of a file of the given size: byte
// order and whether there are sub-files.
func footerKind(b []byte, size int64) (binary.ByteOrder, bool, error) {
	if len(b) != 28 || size < 28 {
		return nil, false, fmt.Errorf("%d-byte file", size)
	}
	t := b[24:]
	if t[3] != 3 {
		return nil, false, fmt.Errorf("BP version %d, want 3", t[3])
	}
	var bo binary.ByteOrder
	switch t[0] {
	case 0:
		bo = binary.LittleEndian
	case 1, 0x80:
		bo = binary.BigEndian
	default:
		return nil, false, fmt.Errorf("endianness byte %d", t[0])
	}
	// Index offsets must be ordered and inside the file.
	pg, vars, attrs := bo.Uint64(b[0:]), bo.Uint64(b[8:]), bo.Uint64(b[16:])
	if pg > vars || vars-pg < 16 || attrs < vars || attrs-vars < 12 || attrs > uint64(size)-28 || uint64(size)-28-attrs < 12 {
		return nil, false, fmt.Errorf("index offsets %d/%d/%d in a %d-byte file", pg, vars, attrs, size)
	}
	return bo, t[2]&1 != 0, nil
}

func openBP3(path string, cfg Config) (*Dataset, error) {
	root, base := filepath.Dir(path), filepath.Base(path)
	files := blockio.NewFiles(root, cfg.MaxOpenFiles)
	ctx := context.Background()
	fail := func(err error) (*Dataset, error) { files.Close(); return nil, err }
	size, err := files.Size(ctx, base)
	if err != nil {
		return fail(err)
	}
	foot, err := files.ReadAt(ctx, base, size-min(size, 56), min(size, 56))
	if err != nil {
		return fail(err)
	}
	f, err := parseFooter(foot, size, base)
	if err != nil {
		return fail(err)
	}
	d := &Dataset{
		info:    catalog.DatasetInfo{Path: path, Root: root, Format: "bp3"},
		files:   files,
		source:  blockio.NewSource(files),
		bo:      f.bo,
		pfx:     "bp3",
		bp3:     true,
		version: f.version,
		meta:    base,
		subfile: func(uint32) string { return base },
	}
	if f.sub {
		dir := base + ".dir"
		d.subfile = func(i uint32) string { return fmt.Sprintf("%s/%s.%d", dir, base, i) }
		d.nfiles = countSubfiles(filepath.Join(root, dir), base+".")
	}
	// The index is one piece for the whole file; read it once.
	idx, err := files.ReadAt(ctx, base, int64(f.pg), size-f.length-int64(f.pg))
	if err != nil {
		return fail(err)
	}
	raw, varNames, err := d.parseIndex3(idx, f)
	if err != nil {
		return fail(err)
	}
	if err := d.finishOpen(raw, varNames, cfg); err != nil {
		return fail(err)
	}
	return d, nil
}

// footer is what the BP3 footer says.
type footer struct {
	bo              binary.ByteOrder
	sub             bool
	length          int64 // 56 (ADIOS2) or 28 (ADIOS 1.x)
	version         int   // major*1000+minor; 1000 for ADIOS 1.x
	pg, vars, attrs uint64
}

// parseFooter reads the footer from the last (up to) 56 bytes of a file.
func parseFooter(foot []byte, size int64, name string) (footer, error) {
	var f footer
	if len(foot) < 28 {
		return f, catalog.Corrupt("bp3", name, 0, "footer: %d-byte file", size)
	}
	b28 := foot[len(foot)-28:]
	bo, sub, err := footerKind(b28, size)
	if err != nil {
		return f, catalog.Corrupt("bp3", name, size-28, "footer: %v", err)
	}
	f.bo, f.sub, f.length, f.version = bo, sub, 28, 1000
	// ADIOS2 writes a 56-byte footer with its version text; ADIOS 1.x 28.
	if len(foot) == 56 && strings.HasPrefix(string(foot), "ADIOS-BP v") {
		f.length = 56
		// ADIOS2 writes the version as characters ('0'+n), ADIOS 1.x as
		// binary numbers (1, 13, 1 for 1.13.1).
		major, minor := int(foot[24]), int(foot[25])
		if major >= '0' {
			major, minor = major-'0', minor-'0'
		}
		if major < 1 || major > 9 || minor < 0 {
			return f, catalog.Corrupt("bp3", name, size-32, "footer: version bytes %q", foot[24:26])
		}
		f.version = major*1000 + minor
	}
	f.pg, f.vars, f.attrs = bo.Uint64(b28), bo.Uint64(b28[8:]), bo.Uint64(b28[16:])
	if f.attrs > uint64(size-f.length) || uint64(size-f.length)-f.attrs < 12 {
		return f, catalog.Corrupt("bp3", name, size-28, "footer: attribute index at %d past the index end %d", f.attrs, size-f.length)
	}
	return f, nil
}

// parseIndex3 indexes the whole-file index idx (the bytes from the PG index
// to the footer): PG index, variables (one entry per variable and step) and
// attributes.
func (d *Dataset) parseIndex3(idx []byte, f footer) ([]entry, map[string]bool, error) {
	end := f.pg + uint64(len(idx))
	mk := func(from, to uint64, what string) *cursor {
		return newCursor(idx[from-f.pg:to-f.pg], int64(from), f.bo, "bp3", d.meta, what)
	}
	// ADIOS 1.x index lengths are unreliable: bound each by the next offset.
	pc := mk(f.pg, f.vars, "process group index")
	d.pgs3 = parsePGIndex(pc, int(f.vars-f.pg-16))
	if pc.err != nil {
		return nil, nil, pc.err
	}
	colMaj := false
	stepIdx := map[uint32]int{}
	for _, p := range d.pgs3 {
		colMaj = colMaj || p.ColMajor
		if _, ok := stepIdx[p.Step]; !ok {
			stepIdx[p.Step] = 0
			d.steps3 = append(d.steps3, p.Step)
		}
	}
	slices.Sort(d.steps3)
	for i, t := range d.steps3 {
		stepIdx[t] = i
	}
	vc := mk(f.vars, f.attrs, "variable index")
	vc.u32()
	vc.u64()
	varNames := map[string]bool{}
	var raw []entry
	for vc.err == nil && vc.remaining() > 0 {
		h, ec := readEntry(vc, true)
		if vc.err != nil {
			break
		}
		es, err := d.indexEntry3(h, ec, stepIdx, colMaj)
		if err != nil {
			return nil, nil, err
		}
		varNames[es[0].name] = true
		raw = append(raw, es...)
	}
	if vc.err != nil {
		return nil, nil, vc.err
	}
	ac := mk(f.attrs, end, "attribute index")
	d.parseAttrIndex(ac)
	return raw, varNames, ac.err
}

// fullName joins a BP3 entry's path and name (ADIOS 1.x keeps them apart).
func fullName(h entryHeader) string {
	p := strings.Trim(h.Path, "/")
	if p == "" {
		return h.Name
	}
	return p + "/" + h.Name
}

// indexEntry3 splits one variable's entry into one entry per step.
func (d *Dataset) indexEntry3(h entryHeader, ec *cursor, stepIdx map[uint32]int, colMaj bool) ([]entry, error) {
	_, size, _, _ := typeInfo(h.TypeID, false)
	name := fullName(h)
	byStep := map[uint32]*classifier{}
	var order []uint32
	var arena dimArena
	for ec.err == nil && ec.remaining() > 0 {
		s := parseSet(ec, h.TypeID, size, &arena)
		if ec.err != nil {
			break
		}
		c := byStep[s.Step]
		if c == nil {
			c = &classifier{}
			byStep[s.Step] = c
			order = append(order, s.Step)
		}
		si, ok := stepIdx[s.Step]
		if !ok {
			return nil, catalog.Corrupt("bp3", d.meta, h.start, "variable index: variable %q has time index %d, which no process group has",
				name, s.Step)
		}
		d.classifySet(c, name, int64(si), &s)
		arena.rewind() // s is not kept: the next set reuses its dimension lists
	}
	if ec.err != nil {
		return nil, ec.err
	}
	if len(order) == 0 {
		return []entry{{name: name, skip: "no blocks"}}, nil
	}
	dt, _, _, _ := typeInfo(h.TypeID, d.bo == binary.BigEndian)
	var out []entry
	for _, t := range order {
		c := byStep[t]
		out = append(out, entry{name: name, typeID: h.TypeID, dt: dt, step: stepIdx[t], off: h.start, length: 4 + h.length,
			colMaj: colMaj, kind: c.kind, skip: c.reason(h.TypeID), err: c.err})
	}
	return out, nil
}
