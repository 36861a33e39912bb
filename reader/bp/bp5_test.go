package bp

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader/blockio"
)

func TestBP5GeneratedLB(t *testing.T) {
	dir := dataDir(t, "bp5/generated-lb")
	p := filepath.Join(dir, "lb-bp5.bp")
	if !IsBP5(p) || IsBP4(p) {
		t.Fatalf("IsBP5 %v IsBP4 %v", IsBP5(p), IsBP4(p))
	}
	d := open(t, p)
	if d.Info().Format != "bp5" || len(d.Info().Skipped) != 0 {
		t.Errorf("format %q skipped %q", d.Info().Format, d.Info().Skipped)
	}
	checkGeneratedLB(t, d, dir)
	// 6 writers over 3 sub-files (NumAggregators=3): writer r in data.(r/2).
	for _, s := range d.b5.steps {
		if m := d.b5.wmaps[s.wmap]; m.writers != 6 || !slices.Equal(m.subfile, []uint32{0, 0, 1, 1, 2, 2}) {
			t.Errorf("writer map %+v", m)
		}
	}
	for _, a := range scanAll(t, d) {
		for _, b := range a.Blocks {
			if b.Inline() == nil && b.File != "data."+string(rune('0'+b.Rank/2)) {
				t.Errorf("%s@%d rank %d block in %s", a.Var, a.Step, b.Rank, b.File)
			}
		}
	}
}

// TestBP5Quokka reads openPMD on BP5 from 8 writers aggregated into one
// sub-file: six 512x512 meshes of 16 blocks, every element covered once.
func TestBP5Quokka(t *testing.T) {
	d := open(t, filepath.Join(dataDir(t, "bp5/quokka-2d"), "plt00758.bp"))
	if d.Info().Format != "openpmd-bp5" {
		t.Errorf("format %q", d.Info().Format)
	}
	arrays := scanAll(t, d)
	want := map[string]varWant{}
	for _, v := range []string{"gasDensity", "gasEnergy", "gasInternalEnergy", "x_GasMomentum", "y_GasMomentum", "z_GasMomentum"} {
		want[v] = varWant{"<f8", []int64{512, 512}, []int64{758}, 16}
	}
	checkSummary(t, summary(t, arrays), want)
	if a := attr(d.Info().Attrs, "software"); a == nil || a.Strings[0] != "Quokka" {
		t.Errorf("software attribute %+v", a)
	}
	for _, a := range arrays {
		ranks := map[int32]int{}
		for _, b := range a.Blocks {
			ranks[b.Rank]++
			if b.File != "data.0" || b.Order != catalog.RowMajor || len(b.Codecs) != 0 {
				t.Errorf("%s block %+v", a.Var, b)
			}
		}
		if len(ranks) != 8 {
			t.Errorf("%s: blocks from writers %v, want all 8", a.Var, ranks)
		}
		v, seen := values(t, d, a)
		if slices.Contains(seen, false) {
			t.Errorf("%s: not fully covered", a.Var)
		}
		if a.Var == "gasDensity" && (v[0] != 1 || slices.ContainsFunc(v, func(x float64) bool { return x <= 0 })) {
			t.Errorf("gasDensity: first %v, a non-positive density", v[0])
		}
		if a.StepAttrs == nil && a.Attrs == nil {
			t.Errorf("%s: no openPMD attributes", a.Var)
		}
	}
}

// equalArrays compares two inputs array by array and element by element,
// ignoring the byte order of the element type.
func equalArrays(t *testing.T, a, b *Dataset) {
	t.Helper()
	aa, bb := scanAll(t, a), scanAll(t, b)
	if len(aa) != len(bb) || len(aa) == 0 {
		t.Fatalf("%d arrays vs %d", len(aa), len(bb))
	}
	for i := range aa {
		x, y := aa[i], bb[i]
		if x.Var != y.Var || x.Step != y.Step || x.DType.LittleEndian() != y.DType.LittleEndian() || !slices.Equal(x.Shape, y.Shape) || len(x.Blocks) != len(y.Blocks) {
			t.Fatalf("%s@%d %s %v %d blocks vs %s@%d %s %v %d", x.Var, x.Step, x.DType, x.Shape, len(x.Blocks), y.Var, y.Step, y.DType, y.Shape, len(y.Blocks))
		}
		for k := range x.Blocks {
			if x.Blocks[k].Rank != y.Blocks[k].Rank {
				t.Errorf("%s@%d block %d: rank %d vs %d", x.Var, x.Step, k, x.Blocks[k].Rank, y.Blocks[k].Rank)
			}
		}
		vx, sx := values(t, a, x)
		vy, sy := values(t, b, y)
		if !slices.Equal(vx, vy) || !slices.Equal(sx, sy) {
			t.Errorf("%s@%d: values differ", x.Var, x.Step)
		}
	}
}

// TestBP5Archive checks the 2.10 x86-64, i386 and s390x BP5 outputs of the
// ADIOS2 archive writers against the same writers' BP4 output.
func TestBP5Archive(t *testing.T) {
	dir5, dir4 := dataDir(t, "bp5/archive"), dataDir(t, "bp4/archive")
	c4 := open(t, filepath.Join(dir4, "Common.2.10.bp4.bp"))
	a4 := open(t, filepath.Join(dir4, "Attribute.2.5.bp4.bp"))
	for _, arch := range []string{"2.10", "i386", "s390x"} {
		t.Run(arch, func(t *testing.T) {
			c5 := open(t, filepath.Join(dir5, "Common."+arch+".bp5.bp"))
			info := c5.Info()
			if info.Format != "bp5" || !slices.Contains(info.Skipped, "md.idx header damaged; detected by structure") {
				t.Errorf("format %q skipped %q", info.Format, info.Skipped)
			}
			for _, v := range []string{"c32: element type complex64", "c64: element type complex128"} {
				if !strings.Contains(strings.Join(info.Skipped, "\n"), v) {
					t.Errorf("Skipped %q lacks %q", info.Skipped, v)
				}
			}
			if big := c5.bo == binary.BigEndian; big != (arch == "s390x") {
				t.Errorf("big-endian %v", big)
			}
			equalArrays(t, c5, c4)
			p5 := open(t, filepath.Join(dir5, "Attribute."+arch+".bp5.bp"))
			equalArrays(t, p5, a4)
			got, want := p5.Info().Attrs, a4.Info().Attrs
			if len(got) != 4 {
				t.Errorf("attributes %+v", got)
			}
			for _, g := range got {
				w := attr(want, g.Name)
				if w == nil || w.Type != g.Type || !slices.Equal(w.Strings, g.Strings) || !slices.Equal(w.Floats, g.Floats) || !slices.Equal(w.Ints, g.Ints) {
					t.Errorf("attribute %+v, BP4 has %+v", g, w)
				}
			}
		})
	}
}

// TestBP5Flushes checks the logical-to-file offset mapping with flushes.
func TestBP5Flushes(t *testing.T) {
	// 2 writers, 2 flushes: writer 1 flushed 100 bytes at 1000 and 50 at
	// 5000, the rest went to 9000.
	var raw []byte
	for _, v := range []uint64{0, 10, 10, 10, 20, 1000, 100, 5000, 50, 9000} {
		raw = binary.LittleEndian.AppendUint64(raw, v)
	}
	st := &bp5StepInfo{nflush: 2}
	st.final, st.flush = parseDataPos(raw, binary.LittleEndian, 2, 2)
	for _, c := range []struct {
		r      int
		loc, n uint64
		off    uint64
		ok     bool
	}{
		{1, 0, 100, 1000, true}, {1, 99, 1, 1099, true}, {1, 100, 50, 5000, true}, {1, 149, 1, 5049, true},
		{1, 150, 8, 9000, true}, {1, 160, 8, 9010, true}, {1, 90, 20, 0, false}, // spans two pieces
		{0, 0, 10, 0, true}, {0, 25, 5, 25, true},
	} {
		off, ok := st.dataOffset(c.r, c.loc, c.n)
		if ok != c.ok || (ok && off != c.off) {
			t.Errorf("writer %d loc %d: %d %v, want %d %v", c.r, c.loc, off, ok, c.off, c.ok)
		}
	}
}

// TestBP5Operators frames a real bzip2 stream (from an ADIOS2 2.7.1 BP4
// block, which predates the common operator header) as ADIOS2 >= 2.8 writes
// it, and refuses a zfp header.
func TestBP5Operators(t *testing.T) {
	bz := open(t, filepath.Join(dataDir(t, "bp4/compressed-2.7.1"), "compressed_bzip2_271.bp"))
	a := scanAll(t, bz)[0]
	ref := a.Blocks[0]
	want, err := catalog.ReadBlock(t.Context(), bz, &ref, a.DType)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := bz.files.ReadAt(t.Context(), ref.File, ref.Offset, ref.Length)
	if err != nil {
		t.Fatal(err)
	}
	for _, word := range []int{8, 4} { // size_t of 64- and 32-bit writers
		tmp := t.TempDir()
		put := func(b []byte, v uint64) []byte {
			if word == 4 {
				return binary.LittleEndian.AppendUint32(b, uint32(v))
			}
			return binary.LittleEndian.AppendUint64(b, v)
		}
		payload := []byte{1, 1, 0, 0}
		payload = put(payload, uint64(len(want)))
		payload = put(payload, 1)
		payload = append(payload, make([]byte, 16)...)
		payload = append(append([]byte("pad"), payload...), stream...)
		os.WriteFile(filepath.Join(tmp, "data.0"), payload, 0o644)
		files := blockio.NewFiles(tmp, 4)
		defer files.Close()
		d := &Dataset{files: files, source: blockio.NewSource(files), bo: binary.LittleEndian, pfx: "bp5", b5: &bp5State{}}
		d.info.Path = tmp
		e := &entry{name: "a", Step: 3}
		b := catalog.Block{File: "data.0", Offset: 3, Length: int64(len(payload) - 3), Box: ref.Box}
		if err := d.operate5(t.Context(), e, 0, 0, word, int64(len(want)), &b); err != nil {
			t.Fatal(err)
		}
		if b.Offset != int64(3+4+2*word+16) || b.Length != int64(len(stream)) {
			t.Errorf("size_t %d: block at %d+%d", word, b.Offset, b.Length)
		}
		got, err := catalog.ReadBlock(t.Context(), d, &b, a.DType)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("bzip2 block: %v", err)
		}
		// A wrong raw size in the header is corruption.
		b = catalog.Block{File: "data.0", Offset: 3, Length: int64(len(payload) - 3)}
		if err := d.operate5(t.Context(), e, 0, 0, word, int64(len(want))+8, &b); !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("wrong raw size: %v", err)
		}
		// A zfp payload is refused by name, variable, step and block.
		payload[3] = 7
		os.WriteFile(filepath.Join(tmp, "data.0"), payload, 0o644)
		b = catalog.Block{File: "data.0", Offset: 3, Length: 40}
		err = d.operate5(t.Context(), e, 1, 2, word, 80, &b)
		if !errors.Is(err, catalog.ErrUnsupported) {
			t.Fatalf("zfp: %v", err)
		}
		for _, s := range []string{`operator "zfp"`, `variable "a"`, "step 3", "block 2"} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("error %q does not name %s", err, s)
			}
		}
	}
}

// TestBP5Corrupt damages copies of a real set: every case ends in an error
// wrapping ErrCorrupt (or a clean open), never a panic.
func TestBP5Corrupt(t *testing.T) {
	src := filepath.Join(dataDir(t, "bp5/generated-lb"), "lb-bp5.bp")
	dir := t.TempDir()
	orig := map[string][]byte{}
	for _, n := range []string{"md.idx", "md.0", "mmd.0", "data.0", "data.1", "data.2"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		orig[n] = b
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	restore := func() {
		for n, b := range orig {
			os.WriteFile(filepath.Join(dir, n), b, 0o644)
		}
	}
	scan := func() error {
		d, err := Open(dir, Config{})
		if err != nil {
			return err
		}
		defer d.Close()
		return d.Scan(t.Context(), func(*catalog.Array) error { return nil })
	}
	for _, c := range []struct {
		file, what string
		mut        func([]byte) []byte
	}{
		{"md.0", "md.idx: offset 226: record", func(b []byte) []byte { return b[:30000] }},
		{"md.idx", "md.idx: offset 307: record", func(b []byte) []byte { return b[:len(b)-7] }},
		{"mmd.0", "mmd.0", func(b []byte) []byte { return b[:len(b)-3] }},
		{"mmd.0", "mmd.0", func(b []byte) []byte { b[0x24+8] = 0xff; return b }}, // field count
		{"md.0", "md.0", func(b []byte) []byte { b[8] = 0xff; b[9] = 0xff; return b }},
		{"md.0", "metadata record", func(b []byte) []byte { b[8+16*6+4] ^= 0x55; return b }}, // format ID
		{"data.2", "past the end of data.2", func(b []byte) []byte { return b[:1000] }},
	} {
		restore()
		os.WriteFile(filepath.Join(dir, c.file), c.mut(slices.Clone(orig[c.file])), 0o644)
		if err := scan(); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), c.what) {
			t.Errorf("%s (%s): %v", c.file, c.what, err)
		}
	}
	// Every byte of the first writer block flipped in turn: errors only.
	restore()
	for i := 0; i < 600; i++ {
		b := slices.Clone(orig["md.0"])
		b[8+16*6+i] ^= 0xa5
		os.WriteFile(filepath.Join(dir, "md.0"), b, 0o644)
		if err := scan(); err != nil && !errors.Is(err, catalog.ErrCorrupt) && !errors.Is(err, catalog.ErrUnsupported) {
			t.Fatalf("byte %d: %v", i, err)
		}
	}
}

// Fuzz targets: md.idx records, mmd.0 format descriptions and FFS records,
// seeded from the real BP5 sets when present.

var bp5Sets = []string{"generated-lb/lb-bp5.bp", "quokka-2d/plt00758.bp", "archive/Common.2.10.bp5.bp",
	"archive/Common.i386.bp5.bp", "archive/Common.s390x.bp5.bp", "archive/Attribute.s390x.bp5.bp"}

func bytesIndex(b []byte, h bp5Hdr) *bp5Index {
	return &bp5Index{size: int64(len(b)), hdr: h, read: func(off, n int64) ([]byte, error) {
		if off < 0 || n < 0 || off+n > int64(len(b)) {
			return nil, errors.New("read past the end")
		}
		return b[off : off+n], nil
	}}
}

// FuzzBP5Index mutates md.idx: header, writer maps, step records and the
// per-writer data positions with their flush translation.
func FuzzBP5Index(f *testing.F) {
	for _, s := range bp5Sets {
		if b := realFile("bp5/" + s + "/md.idx"); b != nil {
			f.Add(b, int64(len(realFile("bp5/"+s+"/md.0"))), uint64(100))
		}
	}
	f.Fuzz(func(t *testing.T, idx []byte, mdSize int64, loc uint64) {
		if len(idx) > maxFuzz || len(idx) < 64 {
			return
		}
		h, err := bp5Header(idx[:64], idx[64:])
		wantSentinel(t, err)
		if err != nil {
			return
		}
		x := bytesIndex(idx, h)
		var maps []bp5WriterMap
		err = x.walk(mdSize, func(m bp5WriterMap) error { maps = append(maps, m); return nil }, func(s bp5Step) error {
			w := maps[s.wmap].writers
			if s.mdPos+s.mdSize > uint64(max(mdSize, 0)) {
				t.Fatalf("step %+v accepted for md.0 of %d bytes", s, mdSize)
			}
			raw := idx[s.body+24 : s.body+24+int64(8*w*(2*int(s.flushes)+1))]
			st := &bp5StepInfo{nflush: int(s.flushes)}
			st.final, st.flush = parseDataPos(raw, h.bo, w, st.nflush)
			for r := 0; r < w; r++ {
				st.dataOffset(r, loc, 8)
			}
			return nil
		})
		if err != nil && !errors.Is(err, catalog.ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
	})
}

// FuzzFFSFormat mutates mmd.0 (format descriptions) and derives the BP5
// layout of every format.
func FuzzFFSFormat(f *testing.F) {
	for _, s := range bp5Sets {
		if b := realFile("bp5/" + s + "/mmd.0"); b != nil && len(b) <= maxSeed {
			f.Add(b, strings.Contains(s, "s390x"))
		}
	}
	f.Fuzz(func(t *testing.T, mmd []byte, big bool) {
		if len(mmd) > maxFuzz {
			return
		}
		var bo binary.ByteOrder = binary.LittleEndian
		if big {
			bo = binary.BigEndian
		}
		fs, err := parseMMD(mmd, bo)
		wantSentinel(t, err)
		if err != nil {
			return
		}
		for _, fm := range fs.byID {
			_, err := layout5(fm)
			wantSentinel(t, err)
		}
	})
}

// FuzzFFSRecord mutates one writer's metadata or attribute block (with its
// set's mmd.0) and indexes it as Open does, then reads every written
// variable's array metadata as Scan does.
func FuzzFFSRecord(f *testing.F) {
	for _, s := range bp5Sets {
		idx, md0, mmd := realFile("bp5/"+s+"/md.idx"), realFile("bp5/"+s+"/md.0"), realFile("bp5/"+s+"/mmd.0")
		if idx == nil || md0 == nil || mmd == nil {
			continue
		}
		h, err := bp5Header(idx[:64], idx[64:])
		if err != nil {
			continue
		}
		w := int(h.bo.Uint64(idx[64+9:]))
		for r := 0; r < 2*w && 8+16*w <= len(md0); r++ {
			pos := 8 + 16*w
			for k := 0; k < r; k++ {
				pos += int(h.bo.Uint64(md0[8+8*k:]))
			}
			n := int(h.bo.Uint64(md0[8+8*r:]))
			if n > 0 && pos+n <= len(md0) && n <= maxSeed {
				f.Add(mmd, md0[pos:pos+n], h.bo == binary.BigEndian)
			}
		}
	}
	f.Fuzz(func(t *testing.T, mmd, blk []byte, big bool) {
		if len(mmd)+len(blk) > maxFuzz {
			return
		}
		var bo binary.ByteOrder = binary.LittleEndian
		if big {
			bo = binary.BigEndian
		}
		fs, err := parseMMD(mmd, bo)
		if err != nil {
			return
		}
		d := &Dataset{bo: bo, pfx: "bp5", b5: &bp5State{formats: fs}}
		v, err := fs.decodeRecord(blk, "md.0", 0)
		wantSentinel(t, err)
		if err != nil {
			return
		}
		if v.f.name == "GenericAttributes" {
			wantSentinel(t, d.parseAttrs5(blk, 0))
			return
		}
		var out []entry
		err = d.indexWriter5(blk, 0, 0, 0, map[string]int{}, &out)
		wantSentinel(t, err)
		if err != nil {
			return
		}
		l, _ := layout5(v.f)
		for _, fv := range l.vars {
			if fv.arr == nil {
				fd := &v.f.fields[fv.fi]
				v.b.bytesAt(fd.off, uint64(fd.size))
				continue
			}
			m, ok := v.inner(fv.fi)
			if !ok {
				continue
			}
			m.int(fv.aDims)
			for _, k := range []int{fv.aShape, fv.aCount, fv.aOffset, fv.aLoc, fv.aSize} {
				if k >= 0 {
					m.uints(k)
				}
			}
			if fv.aMM >= 0 {
				m.array(fv.aMM)
			}
		}
		if v.b.err != nil && !errors.Is(v.b.err, catalog.ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", v.b.err)
		}
	})
}

// TestBP5Kinds turns variables of the generated set into the other BP5
// kinds by renaming their FFS fields (same length) and, for the joined
// array, writing JoinedDim into its shapes: a local value, a local array
// (skipped with its reason) and a joined array.
func TestBP5Kinds(t *testing.T) {
	src := filepath.Join(dataDir(t, "bp5/generated-lb"), "lb-bp5.bp")
	dir := t.TempDir()
	for _, n := range []string{"md.idx", "md.0", "mmd.0", "data.0", "data.1", "data.2"} {
		b, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			t.Fatal(err)
		}
		if n == "mmd.0" {
			for o, nw := range map[string]string{"BPg_time": "BPl_time", "BPG_4_3_fields/id": "BPL_4_3_fields/id", "BPG_8_10_fields/Bx": "BPJ_8_10_fields/Bx"} {
				b = []byte(strings.ReplaceAll(string(b), o+"\x00", nw+"\x00"))
			}
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
	}
	d := open(t, dir)
	md0, _ := os.ReadFile(filepath.Join(dir, "md.0"))
	for s := range d.b5.steps {
		st, err := d.stepTable(t.Context(), s)
		if err != nil {
			t.Fatal(err)
		}
		for r := range st.mdOff {
			v, err := d.b5.formats.decodeRecord(md0[st.mdOff[r]:st.mdOff[r]+st.mdLen[r]], "md.0", int64(st.mdOff[r]))
			if err != nil {
				t.Fatal(err)
			}
			l, _ := layout5(v.f)
			fv := &l.vars[l.byName["fields/Bx"]]
			m, _ := v.inner(fv.fi)
			start, n, _ := m.array(fv.aShape)
			if n != 3 || fv.shape != 'J' {
				t.Fatalf("shape of %d dims, kind %c", n, fv.shape)
			}
			binary.LittleEndian.PutUint64(md0[v.b.base+int64(start):], joinedDim64)
		}
	}
	os.WriteFile(filepath.Join(dir, "md.0"), md0, 0o644)
	d = open(t, dir)
	if !slices.Contains(d.Info().Skipped, "fields/id: local array (blocks have no global position) is not supported by run") {
		t.Errorf("skipped %q", d.Info().Skipped)
	}
	for _, a := range scanAll(t, d) {
		switch a.Var {
		case "time":
			if !slices.Equal(a.Shape, []int64{6}) || len(a.Blocks) != 1 || a.Blocks[0].Rank != 0 || !slices.Equal(a.Blocks[0].Box.Lower, []int64{0}) {
				t.Fatalf("local value %v %+v", a.Shape, a.Blocks)
			}
			if v, seen := values(t, d, a); v[0] != 0.5*float64(a.Step) || slices.Contains(seen[:1], false) {
				t.Errorf("time@%d = %v", a.Step, v[0])
			}
		case "fields/Bx":
			if !slices.Equal(a.Shape, []int64{512, 32, 32}) || len(a.Blocks) != 64 {
				t.Fatalf("joined array %v, %d blocks", a.Shape, len(a.Blocks))
			}
			prev := int32(-1)
			for k, b := range a.Blocks {
				if b.Box.Lower[0] != int64(8*k) || b.Box.Lower[1] != 0 || b.Rank < prev {
					t.Fatalf("joined block %d at %v rank %d", k, b.Box.Lower, b.Rank)
				}
				prev = b.Rank
			}
			// Non-joined dimensions start at 0: each block covers 8x8x8.
			if _, seen := values(t, d, a); countTrue(seen) != 64*512 {
				t.Errorf("joined array: %d elements covered", countTrue(seen))
			}
		case "fields/id":
			t.Error("local array catalogued")
		}
	}
}

// TestBP5FieldNames decodes the variable field names of every kind.
func TestBP5FieldNames(t *testing.T) {
	arr := &ffsFormat{name: "MetaArray", byName: map[string]int{}}
	for i, n := range []string{"Dims", "BlockCount", "DBCount", "Shape", "Count", "Offset", "DataBlockLocation"} {
		arr.byName[n] = i
		fd := ffsField{name: n, base: "integer", size: 8}
		if i >= 3 {
			fd.dynamic = true
		}
		arr.fields = append(arr.fields, fd)
	}
	f := &ffsFormat{name: "MetaData", ptr: 8, bo: binary.LittleEndian}
	f.fields = append(f.fields, []ffsField{
		{name: "BPG_8_10_a/b", base: "MetaArray", sub: arr},
		{name: "BPJ_4_3_j", base: "MetaArray", sub: arr},
		{name: "BPL_2_6_loc", base: "MetaArray", sub: arr},
		{name: "BPG-8-Z2ZnKQA=-8_10_derived", base: "MetaArray", sub: arr},
		{name: "BPg_s", base: "string", size: 8},
		{name: "BPl_u", base: "unsigned integer", size: 2},
		{name: "BPg_d", base: "float", size: 8},
		{name: "BPG_8_10_old", base: "integer", size: 8}, // V1 layout
	}...)
	want := []struct {
		name  string
		shape byte
		typ   int
		skip  string
	}{
		{"a/b", 'G', 10, ""}, {"j", 'J', 3, ""}, {"loc", 'L', 6, "local array (blocks have no global position) is not supported by run"},
		{"derived", 'G', 10, ""}, {"s", 'g', dtString, "element type string is not supported by run"}, {"u", 'l', 6, ""}, {"d", 'g', 10, ""},
		{"old", 'G', 10, ""},
	}
	d := &Dataset{bo: binary.LittleEndian, b5: &bp5State{}}
	for i, w := range want {
		v, err := parseVarField(f, i)
		if err != nil {
			t.Fatalf("%s: %v", f.fields[i].name, err)
		}
		if v.name != w.name || v.shape != w.shape || v.typeID != w.typ {
			t.Errorf("%s: %q %c %d", f.fields[i].name, v.name, v.shape, v.typeID)
		}
		e := d.newEntry5(&v, 0)
		if e.skip != w.skip {
			t.Errorf("%s: skip %q, want %q", v.name, e.skip, w.skip)
		}
		if w.name == "old" && !errors.Is(e.err, catalog.ErrUnsupported) {
			t.Errorf("V1 array layout: %v", e.err)
		}
	}
}

func countTrue(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

// notMapped makes d read md.0's writer blocks, as when md.0 cannot be
// mapped, until its next Scan ends.
func notMapped(d *Dataset) {
	d.files.Unmap(d.md)
	d.md, d.mapTried = nil, true
}

// TestBP5WriterBlockCache scans the generated BP5 dataset (6 writers, 3
// steps, 5 variables), md.0 read rather than mapped, with no writer block
// kept, some kept, and all kept: the values still follow the writer's rule
// when blocks share the scratch buffer, and the metadata read falls as more
// are kept, to each block once.
func TestBP5WriterBlockCache(t *testing.T) {
	dir := dataDir(t, "bp5/generated-lb")
	p := filepath.Join(dir, "lb-bp5.bp")
	var all int64 // every writer's metadata block once
	d := open(t, p)
	for step := range d.b5.steps {
		st, err := d.stepTable(t.Context(), step)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range st.mdLen {
			all += int64(n)
		}
	}
	read := map[string]int64{}
	for _, c := range []struct {
		name  string
		limit int
	}{{"none", 0}, {"some", int(all / 3)}, {"all", int(all)}} {
		d := open(t, p)
		d.b5.blockLimit = c.limit
		notMapped(d)
		before := d.files.IOStats().ReadBytes
		scanAll(t, d)
		read[c.name] = d.files.IOStats().ReadBytes - before
		d.b5.blockLimit = c.limit
		checkGeneratedLB(t, d, dir)
	}
	// The step tables and attributes are read in every case.
	if !(read["none"] > read["some"] && read["some"] > read["all"]) || read["none"]-read["all"] < 3*all {
		t.Errorf("md bytes read by Scan: %v (writer blocks %d)", read, all)
	}
	t.Logf("md bytes read by Scan: %v (writer blocks %d)", read, all)
}

// TestMappedMetadata: Open of a BP4 and a BP5 dataset maps md.0 and reads
// it in place; Scan reads none of it again (BP5's step tables only), emits
// what the read path emits, and lets the mapping go when it ends.
func TestMappedMetadata(t *testing.T) {
	for _, sub := range []string{"bp5/generated-lb/lb-bp5.bp", "bp4/generated-lb/lb-bp4.bp"} {
		t.Run(filepath.Base(sub), func(t *testing.T) {
			p := filepath.Join(dataDir(t, filepath.Dir(sub)), filepath.Base(sub))
			d := open(t, p)
			st, err := os.Stat(filepath.Join(p, "md.0"))
			if err != nil {
				t.Fatal(err)
			}
			if len(d.md) != int(st.Size()) {
				t.Fatalf("md.0 mapped: %d bytes, want its %d", len(d.md), st.Size())
			}
			before := d.files.IOStats().ReadBytes
			mapped := scanAll(t, d)
			scanned := d.files.IOStats().ReadBytes - before
			if d.md != nil {
				t.Error("md.0 still mapped after Scan")
			}
			r := open(t, p)
			notMapped(r)
			read := scanAll(t, r)
			if len(mapped) != len(read) {
				t.Fatalf("%d arrays mapped, %d read", len(mapped), len(read))
			}
			for i := range mapped {
				if !reflect.DeepEqual(mapped[i], read[i]) {
					t.Errorf("array %d (%s step %d): mapped and read differ", i, read[i].Var, read[i].Step)
				}
			}
			// The mapping counts as one read of md.0 (Open's); Scan reads the
			// step tables only (BP5).
			if before < st.Size() || scanned > 4096 {
				t.Errorf("Open read %d bytes (md.0: %d), Scan %d more; want the mapping once, then the step tables", before, st.Size(), scanned)
			}
			checkGeneratedLB(t, d, filepath.Dir(p))
		})
	}
}

// TestMappedMetadataTruncated: md.0 cut short after Open mapped it, a Scan
// that reads past the new end fails with a corruption error naming md.0 and
// the offset, not a crash.
func TestMappedMetadataTruncated(t *testing.T) {
	for _, sub := range []string{"bp5/generated-lb/lb-bp5.bp", "bp4/generated-lb/lb-bp4.bp"} {
		t.Run(filepath.Base(sub), func(t *testing.T) {
			src := filepath.Join(dataDir(t, filepath.Dir(sub)), filepath.Base(sub))
			p := filepath.Join(t.TempDir(), filepath.Base(sub))
			testkit.CopyTree(t, src, p)
			d := open(t, p)
			if d.md == nil {
				t.Fatal("md.0 not mapped")
			}
			if err := os.Truncate(filepath.Join(p, "md.0"), 4096); err != nil {
				t.Fatal(err)
			}
			err := d.Scan(t.Context(), func(*catalog.Array) error { return nil })
			if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "md.0") || !strings.Contains(err.Error(), "changed while it was read") {
				t.Fatalf("Scan of a truncated md.0: %v, want a corruption error naming md.0", err)
			}
			t.Log(err)
		})
	}
}

// TestBlockListsKeptAsBuilt: the block lists BP3, BP4 and BP5 build are
// compact (lower corners in one arena, a writer's equal counts shared), so
// the catalog keeps each mesh's list as it is instead of copying it
// (catalog.Store.Put): Array returns the very blocks Scan emitted.
func TestBlockListsKeptAsBuilt(t *testing.T) {
	for _, p := range []string{"bp5/generated-lb/lb-bp5.bp", "bp4/generated-lb/lb-bp4.bp", "bp3/heat-adios2/heat.bp"} {
		dir, name := filepath.Split(p)
		d := open(t, filepath.Join(dataDir(t, filepath.Clean(dir)), name))
		s, err := catalog.CreateStore(filepath.Join(t.TempDir(), "catalog.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s.KeepBlocks(1 << 30)
		meshes := 0
		for _, a := range scanAll(t, d) {
			if err := s.Put(a); err != nil {
				t.Fatal(err)
			}
			if len(a.Shape) == 0 || len(a.Blocks) < 2 {
				continue // values and single blocks: no arena to share
			}
			meshes++
			kept, err := s.Array(a.Key())
			if err != nil {
				t.Fatal(err)
			}
			if &kept.Blocks[0] != &a.Blocks[0] {
				t.Errorf("%s: %s step %d: its %d blocks were copied, not kept as built", p, a.Var, a.Step, len(a.Blocks))
			}
		}
		if meshes == 0 {
			t.Errorf("%s: no mesh of several blocks", p)
		}
	}
}
