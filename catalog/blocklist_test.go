package catalog

import (
	"database/sql"
	"errors"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// encodeBlocks is encodeParts as one list.
func encodeBlocks(blocks []Block) (list string, files []string, stored int64) {
	parts, _, files, stored := encodeParts(blocks, math.MaxInt)
	return parts[0], files, stored
}

// decodeBlocks is decodeParts of one list.
func decodeBlocks(list string, files []string, n int) ([]Block, error) {
	return decodeParts([]string{list}, nil, files, n)
}

// oddBlocks exercises what block_list must carry exactly: inline bytes
// (empty too), file names JSON would mangle (quotes, backslashes, invalid
// UTF-8), several files, shared and distinct codecs, negative ranks, empty
// and zero-dimensional boxes.
func oddBlocks() []Block {
	deflate := []Codec{{Name: "deflate", Params: []uint32{4}}}
	return []Block{
		{Box: Box{Lower: []int64{0, 0}, Count: []int64{2, 2}}, File: `a "quoted" \\ name.h5`, Offset: 1, Length: 32, Codecs: deflate, Rank: -1},
		{Box: Box{Lower: []int64{2, 0}, Count: []int64{2, 2}}, File: "bad\xff\xfeutf8", Offset: 1 << 40, Length: 32, Codecs: deflate, Rank: 7},
		Block{Box: Box{Lower: []int64{0, 2}, Count: []int64{2, 2}}, Length: 8, Rank: -1}.WithInline([]byte{1, 2, 3, 4, 5, 6, 7, 8}),
		Block{Box: Box{Lower: []int64{2, 2}, Count: []int64{0, 2}}, Rank: -1,
			Codecs: []Codec{{Name: "shuffle", Params: []uint32{8}}, {Name: "fletcher32"}}}.WithInline([]byte{}),
		Block{Box: Box{Lower: []int64{}, Count: []int64{}}, File: `a "quoted" \\ name.h5`, Offset: 9, Length: 8,
			Order: ColMajor, Rank: 2147483647}.WithStored([]int64{}, []int64{}),
	}
}

func TestStoreOddBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a := &Array{Var: "odd", DType: DType{Kind: Float, Size: 8}, Shape: []int64{4, 4}, Offset: []int64{0, 0}, Blocks: oddBlocks()}
	empty := &Array{Var: "empty", DType: DType{Kind: Int, Size: 4}, Shape: []int64{0}, Offset: []int64{0}}
	for _, x := range []*Array{a, empty} {
		if err := s.Put(x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Array(a.Key())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Blocks, a.Blocks) {
		t.Fatalf("blocks:\n got %#v\nwant %#v", got.Blocks, a.Blocks)
	}
	if got, err := s.Array(empty.Key()); err != nil || len(got.Blocks) != 0 {
		t.Fatalf("empty array: %v %v", got, err)
	}
	vs, err := s.Variables()
	if err != nil || len(vs) != 2 || vs[1].Name != "odd" || vs[1].Blocks != 5 || vs[1].Files != 3 || vs[1].StoredBytes != 80 {
		t.Fatalf("summary %+v %v", vs, err)
	}
	// The view shows each block as the table of earlier versions did.
	rows, err := s.db.Query(`SELECT seq, lower, count, stored, file, byte_offset, length, storage, codecs, rank, inline, stored_lower
		FROM blocks JOIN arrays ON arrays.id = blocks.array_id WHERE var = 'odd' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var seq, off, length, rank int64
		var lower, count, file, storage, codecs string
		var stored, storedLower sql.NullString
		var inline []byte
		if err := rows.Scan(&seq, &lower, &count, &stored, &file, &off, &length, &storage, &codecs, &rank, &inline, &storedLower); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Join([]string{lower, count, stored.String, file, storage, codecs, string(inline), storedLower.String}, " "))
	}
	want := []string{
		`[0,0] [2,2]  a "quoted" \\ name.h5 row [{"name":"deflate","params":[4]}]  `,
		"[2,0] [2,2]  bad\xff\xfeutf8 row [{\"name\":\"deflate\",\"params\":[4]}]  ",
		"[0,2] [2,2]   row [] \x01\x02\x03\x04\x05\x06\x07\x08 ",
		`[2,2] [0,2]   row [{"name":"shuffle","params":[8]},{"name":"fletcher32"}]  `,
		`[] [] [] a "quoted" \\ name.h5 col []  []`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("view:\n%q\nwant\n%q", lines, want)
	}
}

// legacySchema is the blocks table of catalogs before block_list.
const legacySchema = `
CREATE TABLE dataset (path TEXT NOT NULL, root TEXT NOT NULL, format TEXT NOT NULL, attrs TEXT NOT NULL, skipped TEXT NOT NULL);
CREATE TABLE arrays (id INTEGER PRIMARY KEY, var TEXT NOT NULL, step INTEGER NOT NULL, level INTEGER NOT NULL,
  dtype TEXT NOT NULL, shape TEXT NOT NULL, offset TEXT NOT NULL, fill BLOB, attrs TEXT NOT NULL,
  step_attrs TEXT NOT NULL, source TEXT NOT NULL, boxes TEXT, UNIQUE (var, step, level));
CREATE TABLE blocks (array_id INTEGER NOT NULL REFERENCES arrays(id), seq INTEGER NOT NULL, lower TEXT NOT NULL,
  count TEXT NOT NULL, stored TEXT, file TEXT NOT NULL, byte_offset INTEGER NOT NULL, length INTEGER NOT NULL,
  storage TEXT NOT NULL, codecs TEXT NOT NULL, rank INTEGER NOT NULL, inline BLOB, stored_lower TEXT,
  PRIMARY KEY (array_id, seq));
INSERT INTO arrays VALUES (1, 'B/x', 100, 0, '>f8', '[47,47]', '[0,0]', x'0000000000000000',
  '[{"name":"unitSI","type":"float64","scalar":true,"floats":[1.5]}]',
  '[{"name":"time","type":"float64","scalar":true,"floats":[0.25]}]', 'f.h5:/data/1/meshes/B/x',
  '[{"lower":[0,0],"count":[32,47]},{"lower":[32,0],"count":[15,47]}]');
INSERT INTO blocks VALUES (1, 0, '[0,0]', '[32,47]', '[32,64]', 'f.h5', 4096, 100, 'row',
  '[{"name":"shuffle","params":[8]},{"name":"deflate","params":[6]}]', -1, NULL, NULL);
INSERT INTO blocks VALUES (1, 1, '[32,0]', '[15,47]', NULL, 'f.h5', 8192, 5640, 'col', '[]', 3, NULL, '[0,0]');
`

// TestStoreLegacy: a catalog written before block_list (one row per block)
// is still read, and refuses new arrays.
func TestStoreLegacy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(legacySchema); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = OpenStore(path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Array(Key{"B/x", 100, 0})
	if err != nil {
		t.Fatal(err)
	}
	if want := sampleArray(100); !reflect.DeepEqual(got, want) {
		t.Fatalf("legacy:\n got %+v\nwant %+v", got, want)
	}
	vs, err := s.Variables()
	if err != nil || len(vs) != 1 || vs[0].Blocks != 2 || vs[0].StoredBytes != 5740 || vs[0].Files != 1 {
		t.Fatalf("summary %+v %v", vs, err)
	}
	if err := s.Put(sampleArray(0)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Put into a legacy catalog: %v", err)
	}
}

func TestDecodeBlocksCorrupt(t *testing.T) {
	list, files, _ := encodeBlocks(oddBlocks())
	if _, err := decodeBlocks(list, files, 5); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		"", "[", "]", "[]x", "[[]]", list[:len(list)-1], list + ",", strings.Replace(list, `"row"`, `"rows"`, 1),
		strings.Replace(list, "[0,0],[2,2],null,0", "[0,0],[2,2],null,9", 1), // file index out of range
		strings.Replace(list, "[0,0],[2,2],null,0", "[0,0],[2,2],null,-1", 1),
		strings.Replace(list, "[0,0]", "[0,,0]", 1),
		strings.Replace(list, "[0,0]", "[0,99999999999999999999]", 1),
		strings.Replace(list, `[{"name":"deflate","params":[4]}]`, `[{"name":"deflate","params":[-4]}]`, 1),
		strings.Replace(list, `[{"name":"deflate","params":[4]}]`, `[{"name":"deflate"`, 1),
	} {
		if _, err := decodeBlocks(bad, files, 5); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", bad, err)
		}
	}
}

// FuzzDecodeBlocks: any block_list text gives blocks or ErrCorrupt, never a
// panic; what decodes re-encodes to text that decodes to the same blocks.
func FuzzDecodeBlocks(f *testing.F) {
	list, _, _ := encodeBlocks(oddBlocks())
	f.Add(list)
	list, _, _ = encodeBlocks(sampleArray(0).Blocks)
	f.Add(list)
	f.Add("[]")
	files := []string{"a", "b", ""}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1<<16 {
			return
		}
		bs, err := decodeBlocks(s, files, 1<<30)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		again, fs, _ := encodeBlocks(bs)
		bs2, err := decodeBlocks(again, fs, len(bs))
		if err != nil || !reflect.DeepEqual(bs, bs2) && len(bs) > 0 {
			t.Fatalf("%q re-encoded as %q: %v", s, again, err)
		}
	})
}

// The sqlite3 shell (what users query) understands the view.
func TestBlocksViewInShell(t *testing.T) {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Skip("sqlite3 not installed")
	}
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(&Array{Var: "odd", DType: DType{Kind: Float, Size: 8}, Shape: []int64{4, 4}, Offset: []int64{0, 0}, Blocks: oddBlocks()}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	out, err := exec.Command(sqlite, path, "SELECT seq, lower, file, byte_offset, length, storage, rank, hex(inline), stored_lower FROM blocks ORDER BY seq").CombinedOutput()
	want := "0|[0,0]|a \"quoted\" \\\\ name.h5|1|32|row|-1||\n1|[2,0]|bad\xff\xfeutf8|1099511627776|32|row|7||\n2|[0,2]||0|8|row|-1|0102030405060708|\n" +
		"3|[2,2]||0|0|row|-1||\n4|[]|a \"quoted\" \\\\ name.h5|9|8|col|2147483647||[]\n"
	if err != nil || string(out) != want {
		t.Fatalf("sqlite3: %v\n%q\nwant\n%q", err, out, want)
	}
}

// BenchmarkStoreTinyBlocks: Put and Array of an array of 32,768 tiny blocks
// (256^3 in 8^3 chunks), per block.
func BenchmarkStoreTinyBlocks(b *testing.B) {
	a := &Array{Var: "v", DType: DType{Kind: Float, Size: 8}, Shape: []int64{256, 256, 256}, Offset: []int64{0, 0, 0}}
	for i := range int64(32768) {
		a.Blocks = append(a.Blocks, Block{Box: Box{Lower: []int64{i / 1024 * 8, i / 32 % 32 * 8, i % 32 * 8}, Count: []int64{8, 8, 8}},
			File: "data00000000.h5", Offset: 4096 + (i*7919%32768)*4096, Length: 4096, Rank: -1})
	}
	s, err := CreateStore(filepath.Join(b.TempDir(), "catalog.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.SetBytes(int64(len(a.Blocks)) * 4096) // the block bytes the catalog describes
	for i := 0; b.Loop(); i++ {
		a.Step = int64(i)
		if err := s.Put(a); err != nil {
			b.Fatal(err)
		}
		got, err := s.Array(a.Key())
		if err != nil || len(got.Blocks) != len(a.Blocks) {
			b.Fatal(len(got.Blocks), err)
		}
	}
}

// The list parser's integers read as strconv.ParseInt reads them, around
// the 18-digit fast path and at the int64 limits.
func TestListParserInt(t *testing.T) {
	for _, s := range []string{"0", "-0", "007", "-", "", "x", "123456789012345678", "-123456789012345678",
		"1234567890123456789", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "99999999999999999999", "000000000000000000001"} {
		p := &listParser{s: s + ","}
		got, err := p.int()
		want, werr := strconv.ParseInt(s, 10, 64)
		if (err != nil) != (werr != nil) || err == nil && got != want {
			t.Errorf("%q: %d, %v; strconv: %d, %v", s, got, err, want, werr)
		}
		if err == nil && p.s[p.i] != ',' {
			t.Errorf("%q: stopped at byte %d", s, p.i)
		}
	}
}

// appendInt writes what strconv does, at every length and sign.
func TestAppendInt(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 99, 100, 101, 999, 1000, -1, -9, -10, -99, -100, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1}
	for p := int64(1); p > 0 && p <= math.MaxInt64/10; p *= 10 {
		vs = append(vs, p-1, p, p+1, -p+1, -p, -p-1, 10*p-1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		vs = append(vs, int64(rng.Uint64()), rng.Int64N(1<<20)-1<<19)
	}
	for _, v := range vs {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Fatalf("%d: %q, want %q", v, got, want)
		}
	}
}

// TestStoreBlockParts: a block list longer than blockPartBytes is stored
// in parts cut between blocks; it reads back whole, the blocks view (and
// the sqlite3 shell) numbers its blocks across the parts, a missing or
// misnumbered part is corrupt input, and a catalog of the previous version
// (the whole list in arrays.block_list) still reads.
func TestStoreBlockParts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "catalog.db")
	s, err := CreateStore(path)
	if err != nil {
		t.Fatal(err)
	}
	a := &Array{Var: "v", DType: DType{Kind: Float, Size: 8}, Shape: []int64{160, 160, 160}, Offset: []int64{0, 0, 0}}
	for i := range int64(64000) {
		a.Blocks = append(a.Blocks, Block{Box: Box{Lower: []int64{i / 1600 * 4, i / 40 % 40 * 4, i % 40 * 4}, Count: []int64{4, 4, 4}},
			File: []string{"data.0", "data.1"}[i%2], Offset: i / 2 * 512, Length: 512, Rank: int32(i % 8)})
	}
	a.Blocks[40000] = a.Blocks[40000].WithInline(make([]byte, 512))
	if err := s.Put(a); err != nil {
		t.Fatal(err)
	}
	var parts int
	var firsts string
	if err := s.db.QueryRow(`SELECT count(*), group_concat(first) FROM block_parts`).Scan(&parts, &firsts); err != nil || parts < 4 {
		t.Fatalf("%d parts (firsts %s), want several: %v", parts, firsts, err)
	}
	got, err := s.Array(a.Key())
	if err != nil || !reflect.DeepEqual(got.Blocks, a.Blocks) {
		t.Fatalf("round trip of %d parts: %d blocks, %v", parts, len(got.Blocks), err)
	}
	// The view: every block once, numbered across the parts.
	var n, lo, hi int
	var lower string
	var inline []byte
	if err := s.db.QueryRow(`SELECT count(*), min(seq), max(seq) FROM blocks`).Scan(&n, &lo, &hi); err != nil || n != 64000 || lo != 0 || hi != 63999 {
		t.Fatalf("view: %d rows, seq %d..%d, %v", n, lo, hi, err)
	}
	if err := s.db.QueryRow(`SELECT lower, inline FROM blocks WHERE seq = 40000`).Scan(&lower, &inline); err != nil || lower != "[100,0,0]" || len(inline) != 512 {
		t.Fatalf("view, block 40000: %s, %d inline bytes, %v", lower, len(inline), err)
	}
	if sqlite, err := exec.LookPath("sqlite3"); err == nil {
		s.Close()
		out, err := exec.Command(sqlite, path, "SELECT count(*), sum(seq), max(file) FROM blocks; SELECT lower FROM blocks WHERE seq = 63999").CombinedOutput()
		if want := "64000|2047968000|data.1\n[156,156,156]\n"; err != nil || string(out) != want {
			t.Fatalf("sqlite3: %v\n%q\nwant %q", err, out, want)
		}
		if s, err = OpenStore(path); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		if s != nil {
			s.Close()
		}
	}()
	// Damage: a part renumbered, then a part missing.
	if _, err := s.db.Exec(`UPDATE block_parts SET first = first + 1 WHERE part = 2`); err != nil {
		t.Fatal(err)
	}
	s.KeepBlocks(0)
	if _, err := s.Array(a.Key()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "part 2") {
		t.Errorf("a part's first block misnumbered: %v", err)
	}
	if _, err := s.db.Exec(`UPDATE block_parts SET first = first - 1 WHERE part = 2; DELETE FROM block_parts WHERE part = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Array(a.Key()); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "part 1 missing") {
		t.Errorf("a part missing: %v", err)
	}
	// The previous version's form: the whole list in arrays.block_list, no
	// block_parts (its view read block_list).
	s.Close()
	old := filepath.Join(t.TempDir(), "old.db")
	if s, err = CreateStore(old); err != nil {
		t.Fatal(err)
	}
	b := &Array{Var: "w", DType: DType{Kind: Float, Size: 8}, Shape: []int64{4, 4}, Offset: []int64{0, 0}, Blocks: oddBlocks()}
	if err := s.Put(b); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE arrays SET block_list = (SELECT list FROM block_parts WHERE array_id = arrays.id);
		DROP VIEW blocks; DROP TABLE block_parts;
		CREATE VIEW blocks AS SELECT a.id AS array_id, j.key AS seq FROM arrays a JOIN json_each(a.block_list) j`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = OpenStore(old); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Array(b.Key()); err != nil || !reflect.DeepEqual(got.Blocks, b.Blocks) {
		t.Fatalf("a catalog of the previous version: %v, %v", got, err)
	}
	c := *b
	c.Var = "x"
	if err := s.Put(&c); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Put into a catalog of the previous version: %v", err)
	}
}
