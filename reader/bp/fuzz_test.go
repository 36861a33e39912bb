package bp

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
)

// Fuzz targets for the metadata parsers, pure functions over bytes (no file
// system, so the fuzzer's input minimization stays cheap). Seeds are read at
// run time from the real sets in ../shared/data when present (never copied
// into the repository), plus small hand-made inputs. Inputs over maxFuzz
// bytes are ignored: the memory cap, since every allocation the parsers make
// is bounded by the bytes that exist.

const (
	maxFuzz  = 1 << 16
	maxSeed  = 8 << 10 // larger real inputs make minimization slow
	dataRoot = "../../../shared/data"
)

func realFile(sub string) []byte {
	b, err := os.ReadFile(filepath.Join(dataRoot, sub))
	if err != nil || len(b) > maxFuzz {
		return nil
	}
	return b
}

// wantSentinel fails unless err is nil or wraps one of relayout's sentinels;
// damage is a CorruptError that names a file and an offset.
func wantSentinel(t *testing.T, err error) {
	if err != nil && !errors.Is(err, catalog.ErrCorrupt) && !errors.Is(err, catalog.ErrUnsupported) && !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("error without a sentinel: %v", err)
	}
	if ce := (*catalog.CorruptError)(nil); errors.Is(err, catalog.ErrCorrupt) && (!errors.As(err, &ce) || ce.File == "") {
		t.Fatalf("damage without a CorruptError naming its file: %v", err)
	}
}

// checkEntries parses every variable entry the way Scan does.
func checkEntries(t *testing.T, d *Dataset, meta []byte, base int64, es []entry) {
	for i := range es {
		e := &es[i]
		if e.skip != "" {
			continue
		}
		lo, hi := e.off-base, e.off-base+int64(e.length)
		if lo < 0 || hi > int64(len(meta)) || lo > hi {
			t.Fatalf("entry %q at %d+%d outside the metadata (%d bytes from %d)", e.name, e.off, e.length, len(meta), base)
		}
		_, err := d.parseEntrySets(meta[lo:hi], e)
		wantSentinel(t, err)
	}
}

func fuzzDataset(bo binary.ByteOrder, bp3 bool) *Dataset {
	d := &Dataset{bo: bo, pfx: "bp4", meta: "md.0", bp3: bp3, version: 2007}
	if bp3 {
		d.pfx, d.meta = "bp3", "f.bp"
	}
	return d
}

var bp4Sets = []string{"generated-lb/lb-bp4.bp", "heat-2.7.1/heat.bp", "archive/Common.2.10.bp4.bp",
	"compressed-2.7.1/compressed_bzip2_271.bp", "picongpu-lwfa/pic_n2.bp"}

func minimalHeader(kind string) []byte {
	h := make([]byte, 64)
	copy(h, "ADIOS-BP v2.7.1 "+kind)
	copy(h[32:], "271")
	h[37] = 4
	return h
}

// FuzzMdIdx mutates md.idx (header and per-step records).
func FuzzMdIdx(f *testing.F) {
	for _, s := range bp4Sets {
		if b := realFile("bp4/" + s + "/md.idx"); b != nil {
			f.Add(b, int64(len(realFile("bp4/"+s+"/md.0"))))
		}
	}
	f.Add(minimalHeader("Index Table"), int64(64))
	f.Fuzz(func(t *testing.T, idx []byte, mdSize int64) {
		if len(idx) > maxFuzz {
			return
		}
		recs, err := parseIndexTable(idx, mdSize)
		wantSentinel(t, err)
		for _, r := range recs {
			if r.end > uint64(max(mdSize, 0)) || r.pg > r.vars || r.vars > r.attrs || r.attrs > r.end {
				t.Fatalf("record %+v accepted for md.0 of %d bytes", r, mdSize)
			}
		}
	})
}

// FuzzMd0 mutates one step's metadata from md.0 (PG, variable and
// attribute indexes; the section offsets are fuzzed too), then parses every
// variable entry as Scan does.
func FuzzMd0(f *testing.F) {
	for _, s := range bp4Sets {
		idx, md0 := realFile("bp4/"+s+"/md.idx"), realFile("bp4/"+s+"/md.0")
		recs, err := parseIndexTable(idx, int64(len(md0)))
		if err != nil || len(recs) == 0 || recs[0].end-recs[0].pg > maxSeed {
			continue
		}
		r := recs[0]
		f.Add(md0[r.pg:r.end], uint32(r.vars-r.pg), uint32(r.attrs-r.pg))
	}
	f.Add(make([]byte, 40), uint32(16), uint32(28))
	f.Fuzz(func(t *testing.T, step []byte, vars, attrs uint32) {
		if len(step) > maxFuzz {
			return
		}
		const pg = 64
		r := stepRec{pg: pg, vars: pg + uint64(vars), attrs: pg + uint64(attrs), end: pg + uint64(len(step))}
		md0 := append(make([]byte, pg), step...)
		recs, err := parseIndexTable(append(minimalHeader("Index Table"), record(r)...), int64(len(md0)))
		if err != nil {
			return // offsets the index table refuses never reach md.0
		}
		d := fuzzDataset(binary.LittleEndian, false)
		es, err := d.parseStep4(step, 0, recs[0], map[string]bool{})
		wantSentinel(t, err)
		if err == nil {
			checkEntries(t, d, md0, 0, es)
		}
	})
}

func record(r stepRec) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint64(b[16:], r.pg)
	binary.LittleEndian.PutUint64(b[24:], r.vars)
	binary.LittleEndian.PutUint64(b[32:], r.attrs)
	binary.LittleEndian.PutUint64(b[40:], r.end)
	return b
}

// FuzzCharacteristics feeds one characteristic set to parseSet for any type.
func FuzzCharacteristics(f *testing.F) {
	// The worked example of the spec: a 2-D double block with min/max.
	set := []byte{6, 0, 0, 0, 0, 8, 1, 0, 0, 0, 7, 1, 0, 0, 0, 4, 2, 48, 0}
	for _, v := range []uint64{50, 100, 50, 200, 200, 0} {
		set = binary.LittleEndian.AppendUint64(set, v)
	}
	set = append(set, 12, 1, 0)
	set = append(set, make([]byte, 16)...)
	set = append(set, 3)
	set = binary.LittleEndian.AppendUint64(set, 1000)
	set = append(set, 6)
	set = binary.LittleEndian.AppendUint64(set, 123456)
	binary.LittleEndian.PutUint32(set[1:], uint32(len(set)-5))
	f.Add(set, uint8(6), false)
	// Real sets: the variable index of the first step of each BP4 set.
	for _, s := range bp4Sets {
		idx, md0 := realFile("bp4/"+s+"/md.idx"), realFile("bp4/"+s+"/md.0")
		if len(idx) < 128 || md0 == nil {
			continue
		}
		vars, attrs := binary.LittleEndian.Uint64(idx[64+24:]), binary.LittleEndian.Uint64(idx[64+32:])
		if vars+12 < attrs && attrs <= uint64(len(md0)) {
			c := newCursor(md0[vars+12:attrs], 0, binary.LittleEndian, "bp4", "md.0", "variable index")
			for c.remaining() > 0 {
				h, ec := readEntry(c, false)
				if ec == nil {
					break
				}
				f.Add(ec.b[ec.pos:], h.TypeID, false)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, typeID uint8, big bool) {
		if len(b) > maxFuzz {
			return
		}
		var bo binary.ByteOrder = binary.LittleEndian
		if big {
			bo = binary.BigEndian
		}
		c := newCursor(b, 0, bo, "bp4", "fuzz", "characteristics")
		_, size, _, _ := typeInfo(typeID, big)
		for c.err == nil && c.remaining() > 0 {
			s := parseSet(c, typeID, size, nil)
			if c.err == nil {
				s.kind()
				attrValue("a", typeID, &s, bo)
			}
		}
		if ce := (*catalog.CorruptError)(nil); c.err != nil && (!errors.As(c.err, &ce) || ce.File == "" || ce.Offset < 0) {
			t.Fatalf("error without a CorruptError naming file and offset: %v", c.err)
		}
	})
}

// FuzzBP3Footer mutates whole BP3 metadata files: the footer, then the
// index it points to, then every variable entry as Scan parses it.
func FuzzBP3Footer(f *testing.F) {
	for _, s := range []string{"bp3/heat-adios2/heat.bp", "bp3/multiblock-2.5.0/BP3Multiblock2D4x2.bp"} {
		b := realFile(s)
		if b == nil {
			continue
		}
		if len(b) > maxSeed {
			// Keep the index and footer only: offsets move by the cut.
			ft, err := parseFooter(b[len(b)-56:], int64(len(b)), s)
			if err != nil || int64(len(b))-int64(ft.pg) > maxSeed {
				continue
			}
			cut := b[ft.pg:]
			for i, o := range []uint64{ft.pg, ft.vars, ft.attrs} {
				binary.LittleEndian.PutUint64(cut[len(cut)-28+8*i:], o-ft.pg)
			}
			b = cut
		}
		f.Add(b)
	}
	foot := make([]byte, 56)
	copy(foot, "ADIOS-BP v2.5.0")
	copy(foot[24:], "250")
	foot[54], foot[55] = 3, 3
	f.Add(foot)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > maxFuzz {
			return
		}
		size := int64(len(b))
		ft, err := parseFooter(b[len(b)-min(len(b), 56):], size, "f.bp")
		wantSentinel(t, err)
		if err != nil {
			return
		}
		if ft.pg > ft.vars || ft.vars > ft.attrs || ft.attrs > uint64(size-ft.length) {
			t.Fatalf("footer %+v accepted for %d bytes", ft, size)
		}
		d := fuzzDataset(ft.bo, true)
		es, _, err := d.parseIndex3(b[ft.pg:size-ft.length], ft)
		wantSentinel(t, err)
		if err == nil {
			checkEntries(t, d, b, 0, es)
		}
	})
}
