package catalog

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	_ "modernc.org/sqlite" // pure-Go SQLite driver, registered as "sqlite"
)

// Schema of the catalog database. Documented in README.md ("The catalog");
// users query it with sqlite3. Boxes, shapes, codecs and attributes are JSON.
const schema = `
CREATE TABLE dataset (
  path    TEXT NOT NULL,
  root    TEXT NOT NULL,
  format  TEXT NOT NULL,
  attrs   TEXT NOT NULL,            -- JSON list of attributes
  skipped TEXT NOT NULL,            -- JSON list of "object: reason"
  span    TEXT,                     -- JSON [first, last]: a stream's first and last dates (DatasetInfo.Span)
  unlimited TEXT                    -- JSON list: the input's unlimited (record) dimensions (DatasetInfo.Unlimited)
);
CREATE TABLE arrays (
  id         INTEGER PRIMARY KEY,
  var        TEXT    NOT NULL,
  step       INTEGER NOT NULL,
  level      INTEGER NOT NULL,
  dtype      TEXT    NOT NULL,      -- NumPy form, e.g. "<f8"
  shape      TEXT    NOT NULL,      -- JSON list
  offset     TEXT    NOT NULL,      -- JSON list: global index of element 0
  fill       BLOB,
  attrs      TEXT    NOT NULL,
  step_attrs TEXT    NOT NULL,
  source     TEXT    NOT NULL,
  boxes      TEXT,                  -- JSON list of {lower, count}: an AMR level's boxes
  nblocks     INTEGER NOT NULL,     -- blocks of the array
  block_bytes INTEGER NOT NULL,     -- sum of their lengths
  block_list  TEXT,                 -- NULL: the blocks are in block_parts (catalogs of earlier versions: their JSON list)
  constant    INTEGER NOT NULL DEFAULT 0, -- 1: every element is fill, no blocks (an openPMD constant record)
  species     TEXT    NOT NULL DEFAULT '', -- openPMD particle species of a particle record component ('' a mesh)
  grain       TEXT,                 -- JSON list: the block grid's step per dimension (Array.BlockGrain)
  dims        TEXT,                 -- JSON list: the dimensions' names (Array.Dims; netCDF), NULL: none
  UNIQUE (var, step, level)
);
CREATE TABLE block_parts (          -- an array's blocks, one JSON list cut between blocks (blocklist.go)
  array_id INTEGER NOT NULL REFERENCES arrays(id),
  part     INTEGER NOT NULL,        -- 0, 1, ... in block order
  first    INTEGER NOT NULL,        -- seq of the part's first block
  list     TEXT    NOT NULL,        -- JSON list of blocks; the blocks view unpacks them
  PRIMARY KEY (array_id, part)
);
CREATE TABLE block_files (          -- the file names the block lists refer to by index
  array_id INTEGER NOT NULL REFERENCES arrays(id),
  idx      INTEGER NOT NULL,
  name     TEXT    NOT NULL,        -- relative to dataset.root; '' for inline
  PRIMARY KEY (array_id, idx)
);
CREATE TABLE inline_blocks (        -- bytes of blocks kept in metadata (HDF5 compact storage)
  array_id INTEGER NOT NULL REFERENCES arrays(id),
  seq      INTEGER NOT NULL,
  data     BLOB    NOT NULL,
  PRIMARY KEY (array_id, seq)
);
-- One row per block, as users query it with sqlite3.
CREATE VIEW blocks AS SELECT
  p.array_id AS array_id,
  p.first + j.key AS seq,           -- order within the array
  json_extract(j.value, '$[0]') AS lower,   -- JSON list, relative to the array
  json_extract(j.value, '$[1]') AS count,   -- JSON list
  json_extract(j.value, '$[2]') AS stored,  -- JSON list when larger than count (partial edge chunks)
  f.name AS file,                   -- relative to dataset.root; '' for inline
  json_extract(j.value, '$[4]') AS byte_offset,
  json_extract(j.value, '$[5]') AS length,
  json_extract(j.value, '$[6]') AS storage, -- 'row' or 'col'
  json_extract(j.value, '$[7]') AS codecs,  -- JSON list of {name, params}, encode order
  json_extract(j.value, '$[8]') AS rank,    -- writer rank, -1 unknown
  i.data AS inline,
  json_extract(j.value, '$[9]') AS stored_lower -- JSON list: where the valid region starts in the stored array (ghost cells)
FROM block_parts p JOIN json_each(p.list) j
  LEFT JOIN block_files f ON f.array_id = p.array_id AND f.idx = json_extract(j.value, '$[3]')
  LEFT JOIN inline_blocks i ON i.array_id = p.array_id AND i.seq = p.first + j.key;
`

// Catalogs written before block_list kept one table row per block; they are
// still read (legacyBlocks).
const legacyBlocksTable = "CREATE TABLE blocks ("

// Store is the SQLite catalog of one dataset.
type Store struct {
	db     *sql.DB
	path   string
	legacy bool // blocks are rows of a blocks table (catalogs of earlier versions)
	// whole: block lists are whole in arrays.block_list (catalogs of
	// earlier versions), not in block_parts.
	whole bool
	// missing are the columns of arrays that a catalog of an earlier
	// version lacks (constant, species): its arrays are never constant
	// and hold no particles. nil for a catalog of this version.
	missing map[string]bool
	cache   blockCache // decoded block lists kept (KeepBlocks)
	noLists bool       // Put stores no block list (OmitBlockLists)
	stmts   sync.Map   // query text -> *sql.Stmt (stmt)
}

// stmt is query q prepared once for the store's life (a *sql.Stmt is safe
// for concurrent use): sqlite's parser costs more than the lookups
// themselves. E3SM-IO's F-case h0 (414 arrays, each read three times)
// spent 0.28 of 1.6 CPU-s parsing the same few statements over again.
func (s *Store) stmt(q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.Prepare(q)
	if err != nil {
		return nil, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// OmitBlockLists makes Put store each array without its block list: the
// array's header, source files, block count and stored bytes only, which
// is all Variables and EachArrayHeader read. For a catalog built to be
// summarised or planned and then removed (relayout catalog and relayout
// plan without --catalog), where encoding and storing the lists that
// nothing reads back was a fifth of the command's CPU (m1: 833,480 BP5
// blocks, 0.47 s of 2.2 s in plan). Reading an array's blocks from such a
// store is an error.
func (s *Store) OmitBlockLists() { s.noLists = true }

// laterDatasetColumns are the columns added to dataset after its first
// version (missing: "dataset.<name>").
var laterDatasetColumns = []string{"span", "unlimited"}

// laterColumns are the columns added to arrays after its first version.
var laterColumns = []string{"constant", "species", "grain", "dims"}

// col is the arrays column name, or the SQL literal def standing for its
// value in a catalog that lacks it.
func (s *Store) col(name, def string) string {
	if s.missing[name] {
		return def
	}
	return name
}

// CreateStore creates a fresh catalog at path, replacing an existing one.
func CreateStore(path string) (*Store, error) {
	for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("catalog: %s: %w", p, err)
		}
	}
	s, err := openDB(path)
	if err != nil {
		return nil, err
	}
	if _, err := s.db.Exec(schema); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("catalog: %s: create schema: %w", path, err)
	}
	return s, nil
}

// OpenStore opens an existing catalog.
func OpenStore(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("catalog: %s: %w", path, ErrNotFound)
	}
	s, err := openDB(path)
	if err != nil {
		return nil, err
	}
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name IN ('dataset','arrays','blocks')`).Scan(&n); err != nil || n != 3 {
		s.db.Close()
		return nil, Corrupt("relayout", path, -1, "catalog: not a relayout catalog")
	}
	var sqlText string
	if err := s.db.QueryRow(`SELECT sql FROM sqlite_master WHERE name = 'blocks'`).Scan(&sqlText); err != nil {
		s.db.Close()
		return nil, Corrupt("relayout", path, -1, "catalog: %v", err)
	}
	s.legacy = strings.HasPrefix(sqlText, legacyBlocksTable)
	if err := s.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'block_parts'`).Scan(&n); err != nil {
		s.db.Close()
		return nil, Corrupt("relayout", path, -1, "catalog: %v", err)
	}
	s.whole = n == 0 && !s.legacy
	for _, c := range laterDatasetColumns {
		if err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info('dataset') WHERE name = ?`, c).Scan(&n); err != nil {
			s.db.Close()
			return nil, Corrupt("relayout", path, -1, "catalog: %v", err)
		}
		if n == 0 {
			if s.missing == nil {
				s.missing = map[string]bool{}
			}
			s.missing["dataset."+c] = true
		}
	}
	for _, c := range laterColumns {
		if err := s.db.QueryRow(`SELECT count(*) FROM pragma_table_info('arrays') WHERE name = ?`, c).Scan(&n); err != nil {
			s.db.Close()
			return nil, Corrupt("relayout", path, -1, "catalog: %v", err)
		}
		if n == 0 {
			if s.missing == nil {
				s.missing = map[string]bool{}
			}
			s.missing[c] = true
		}
	}
	return s, nil
}

// openDB opens the database with SQLite's rollback journal (the default;
// a catalog written in WAL mode by an earlier version stays in it): a
// catalog is written once, in one transaction per array, then only read,
// and the block lists of a fresh catalog are appended pages, written once
// into the database file. In WAL mode every page was written twice, into
// the log and again at the checkpoint (a tenth of catalog's CPU). A fresh
// catalog gets 64 KiB pages: its block lists are overflow chains of a few
// MB, written with one pwrite per page (4 KiB pages: 1,665 calls for bp4's
// 104,209 blocks, 64 KiB: 247); page_size does nothing to an existing file.
func openDB(path string) (*Store, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=page_size(65536)&_pragma=synchronous(OFF)&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("catalog: %s: %w", path, err)
	}
	db.SetMaxOpenConns(1) // one writer; queries are short
	if err := db.Ping(); err != nil {
		db.Close()
		if strings.Contains(err.Error(), "disk is full") {
			return nil, fmt.Errorf("catalog: %s: %w", path, err) // not damage: no space to open it
		}
		return nil, Corrupt("relayout", path, -1, "catalog: %v", err)
	}
	return &Store{db: db, path: path}, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	s.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	return s.db.Close()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain values are marshalled here
	}
	return string(b)
}

// parseInts reads a JSON list of integers without spaces ("[0,32,16]"), as
// catalogs of earlier versions hold them.
func parseInts(s string) ([]int64, error) {
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil, Corrupt("relayout", "", -1, "catalog value: bad integer list %q", s)
	}
	body := s[1 : len(s)-1]
	out := make([]int64, 0, strings.Count(body, ",")+1)
	if body == "" {
		return out, nil
	}
	for len(body) > 0 {
		i := strings.IndexByte(body, ',')
		if i < 0 {
			i = len(body)
		}
		v, err := strconv.ParseInt(body[:i], 10, 64)
		if err != nil {
			return nil, Corrupt("relayout", "", -1, "catalog value: bad integer list %q", s)
		}
		out = append(out, v)
		body = body[min(i+1, len(body)):]
	}
	return out, nil
}

// The decoders of a catalog's stored values: a damaged value is a
// CorruptError naming the catalog file.
func (s *Store) fromJSON(v string, dst any) error { return CorruptIn(fromJSON(v, dst), s.path) }

func (s *Store) parseInts(v string) ([]int64, error) {
	x, err := parseInts(v)
	return x, CorruptIn(err, s.path)
}

func (s *Store) parseDType(v string) (DType, error) {
	d, err := ParseDType(v)
	return d, CorruptIn(err, s.path)
}

// codecsJSON encodes a codec list; the common empty list is a constant.
func codecsJSON(c []Codec) string {
	if len(c) == 0 {
		return "[]"
	}
	return mustJSON(c)
}

func fromJSON(s string, v any) error {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		return Corrupt("relayout", "", -1, "catalog value: bad JSON %q", s)
	}
	return nil
}

// SetInfo records the dataset description (replacing any earlier one).
func (s *Store) SetInfo(info DatasetInfo) error {
	tx, err := s.db.Begin()
	if err != nil {
		return fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`DELETE FROM dataset`); err != nil {
		return fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if info.Attrs == nil {
		info.Attrs = []Attr{}
	}
	if info.Skipped == nil {
		info.Skipped = []string{}
	}
	cols := []string{"path", "root", "format", "attrs", "skipped"}
	vals := []any{info.Path, info.Root, info.Format, mustJSON(info.Attrs), mustJSON(info.Skipped)}
	for _, c := range []struct {
		name string
		set  bool
		v    any
	}{{"span", info.Span != nil, info.Span}, {"unlimited", info.Unlimited != nil, info.Unlimited}} {
		if !c.set {
			continue
		}
		if s.missing["dataset."+c.name] {
			return fmt.Errorf("catalog: %s: written by an earlier version of relayout: read-only: %w", s.path, ErrUnsupported)
		}
		cols, vals = append(cols, c.name), append(vals, mustJSON(c.v))
	}
	_, err = tx.Exec(`INSERT INTO dataset (`+strings.Join(cols, ", ")+`) VALUES (?`+strings.Repeat(",?", len(cols)-1)+`)`, vals...)
	if err != nil {
		return fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	return nil
}

// Info returns the dataset description.
func (s *Store) Info() (DatasetInfo, error) {
	var info DatasetInfo
	var attrs, skipped string
	var span, unlimited sql.NullString
	col := func(name string) string {
		if s.missing["dataset."+name] {
			return "NULL"
		}
		return name
	}
	err := s.db.QueryRow(`SELECT path, root, format, attrs, skipped, `+col("span")+`, `+col("unlimited")+` FROM dataset`).
		Scan(&info.Path, &info.Root, &info.Format, &attrs, &skipped, &span, &unlimited)
	if errors.Is(err, sql.ErrNoRows) {
		return info, fmt.Errorf("catalog: %s: no dataset recorded: %w", s.path, ErrNotFound)
	}
	if err != nil {
		return info, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if err := s.fromJSON(attrs, &info.Attrs); err != nil {
		return info, err
	}
	if span.Valid {
		if err := s.fromJSON(span.String, &info.Span); err != nil {
			return info, err
		}
		if len(info.Span) != 2 {
			return info, Corrupt("relayout", s.path, -1, "catalog: dataset span %s", span.String)
		}
	}
	if unlimited.Valid {
		if err := s.fromJSON(unlimited.String, &info.Unlimited); err != nil {
			return info, err
		}
	}
	return info, s.fromJSON(skipped, &info.Skipped)
}

// Put's statements.
const (
	insertArray = `INSERT INTO arrays (var, step, level, dtype, shape, offset, fill, attrs, step_attrs, source, boxes,
		nblocks, block_bytes, constant, species, grain, dims)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	insertPart   = `INSERT INTO block_parts VALUES (?,?,?,?)`
	insertFile   = `INSERT INTO block_files VALUES (?,?,?)`
	insertInline = `INSERT INTO inline_blocks VALUES (?,?,?)`
)

var putStatements = []string{insertArray, insertPart, insertFile, insertInline}

// Put stores one array and its blocks in one transaction. While the kept
// lists have room (KeepBlocks) it keeps a's block list, as it is when
// compact: the caller must not modify the blocks afterwards.
func (s *Store) Put(a *Array) error {
	if s.legacy || s.whole || len(s.missing) > 0 {
		return fmt.Errorf("catalog: %s: written by an earlier version of relayout: read-only: %w", s.path, ErrUnsupported)
	}
	// The statements are prepared (once: stmt) before the transaction
	// takes the store's one connection, and bound to it.
	stmts := map[string]*sql.Stmt{}
	for _, q := range putStatements {
		st, err := s.stmt(q)
		if err != nil {
			return err
		}
		stmts[q] = st
	}
	tx, err := s.db.Begin()
	if err != nil {
		return fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	defer tx.Rollback()
	exec := func(q string, args ...any) (sql.Result, error) { return tx.Stmt(stmts[q]).Exec(args...) }
	var boxes, grain any
	if a.Boxes != nil {
		boxes = mustJSON(a.Boxes)
	}
	if g := a.BlockGrain(); g != nil {
		grain = mustJSON(g)
	}
	var dims any
	if a.Dims != nil {
		dims = mustJSON(a.Dims)
	}
	var parts, files []string
	var firsts []int
	var stored int64
	if s.noLists {
		files, stored = blockFiles(a.Blocks), blockBytes(a.Blocks)
	} else {
		parts, firsts, files, stored = encodeParts(a.Blocks, blockPartBytes)
	}
	if a.Constant && (len(a.Blocks) > 0 || len(a.Fill) != a.DType.Size) {
		return Corrupt("relayout", s.path, -1, "catalog: constant array %s step %d: %d blocks, value of %d bytes", a.Var, a.Step, len(a.Blocks), len(a.Fill))
	}
	res, err := exec(insertArray,
		a.Var, a.Step, a.Level, a.DType.NumPy(), mustJSON(nonNil(a.Shape)), mustJSON(nonNil(a.Offset)), a.Fill,
		mustJSON(nonNilAttrs(a.Attrs)), mustJSON(nonNilAttrs(a.StepAttrs)), a.Source, boxes,
		len(a.Blocks), stored, a.Constant, a.Species, grain, dims)
	if err != nil {
		return fmt.Errorf("catalog: %s: array %s step %d level %d: %w", s.path, a.Var, a.Step, a.Level, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	for i, list := range parts {
		if _, err := exec(insertPart, id, i, firsts[i], list); err != nil {
			return fmt.Errorf("catalog: %s: blocks of %s: %w", s.path, a.Var, err)
		}
	}
	for i, name := range files {
		if _, err := exec(insertFile, id, i, name); err != nil {
			return fmt.Errorf("catalog: %s: files of %s: %w", s.path, a.Var, err)
		}
	}
	for i := range a.Blocks {
		if b := &a.Blocks[i]; b.Inline() != nil && !s.noLists {
			if _, err := exec(insertInline, id, i, b.Inline()); err != nil {
				return fmt.Errorf("catalog: %s: inline block %d of %s: %w", s.path, i, a.Var, err)
			}
		}
	}
	// With the rollback journal the pages reach the file here (a full
	// disk shows at the commit): name the catalog.
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("catalog: %s: array %s step %d level %d: %w", s.path, a.Var, a.Step, a.Level, err)
	}
	s.cache.keep(a.Key(), a.Blocks)
	if s.cache.kept(a.Key()) {
		// Its header too, as the database gives it back (read once
		// here, beside the reader's scan, where a run's passes would
		// read and decode the row a dozen times: an E3SM h0 file's 414
		// arrays were 5,372 queries), while the budget of what is kept
		// is open.
		h, _, n, err := s.readHeader(a.Key())
		if err != nil {
			return err
		}
		s.cache.setHeader(a.Key(), h, n)
	}
	return nil
}

func nonNil(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

func nonNilAttrs(v []Attr) []Attr {
	if v == nil {
		return []Attr{}
	}
	return v
}

// VarSummary is one variable as `relayout catalog` shows it.
type VarSummary struct {
	Name        string
	DType       DType
	Arrays      int
	Blocks      int
	Bytes       int64 // logical bytes of all arrays
	StoredBytes int64 // bytes of all blocks as stored (compressed)
	// ConstantBytes are the logical bytes of its constant arrays (in
	// Bytes), which the output stores as two attributes.
	ConstantBytes int64
	// HoleBytes are the logical bytes of its refined AMR levels (Level > 0
	// or an openPMD "<record>_lvl<N>", with a box table) that no box covers
	// (in Bytes): the output's sparse chunks never store them.
	HoleBytes int64
	Files     int // distinct source files
	Steps     []int64
	Levels    int
}

// Variables summarises every variable, sorted by name.
func (s *Store) Variables() ([]VarSummary, error) {
	rows, err := s.db.Query(`SELECT id, var, step, level, dtype, shape, boxes, ` + s.col("constant", "0") + ` FROM arrays ORDER BY var, step, level`)
	if err != nil {
		return nil, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	type arr struct {
		id       int64
		v        string
		step     int64
		level    int
		dtype    string
		shape    string
		boxes    sql.NullString
		constant bool
	}
	var all []arr
	for rows.Next() {
		var a arr
		if err := rows.Scan(&a.id, &a.v, &a.step, &a.level, &a.dtype, &a.shape, &a.boxes, &a.constant); err != nil {
			rows.Close()
			return nil, err
		}
		all = append(all, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	byName := map[string]*VarSummary{}
	levels := map[string]map[int]bool{}
	var order []string
	for _, a := range all {
		vs := byName[a.v]
		if vs == nil {
			dt, err := s.parseDType(a.dtype)
			if err != nil {
				return nil, err
			}
			vs = &VarSummary{Name: a.v, DType: dt}
			byName[a.v] = vs
			levels[a.v] = map[int]bool{}
			order = append(order, a.v)
		}
		var shape []int64
		if err := s.fromJSON(a.shape, &shape); err != nil {
			return nil, err
		}
		vs.Arrays++
		n := Box{Count: shape}.Elements() * int64(vs.DType.Size)
		vs.Bytes += n
		if a.constant {
			vs.ConstantBytes += n
		}
		if a.boxes.Valid && (a.level > 0 || MeshLevel(a.v) > 0) {
			var boxes []Box
			if err := s.fromJSON(a.boxes.String, &boxes); err != nil {
				return nil, err
			}
			var covered int64
			for _, b := range boxes {
				covered += b.Elements()
			}
			vs.HoleBytes += max(0, n-covered*int64(vs.DType.Size))
		}
		if n := len(vs.Steps); n == 0 || vs.Steps[n-1] != a.step {
			vs.Steps = append(vs.Steps, a.step)
		}
		levels[a.v][a.level] = true
	}
	q := `SELECT a.var, sum(a.nblocks), sum(a.block_bytes),
		(SELECT count(DISTINCT f.name) FROM block_files f JOIN arrays b ON b.id = f.array_id WHERE b.var = a.var)
		FROM arrays a GROUP BY a.var`
	if s.legacy {
		q = `SELECT a.var, count(*), coalesce(sum(b.length),0), count(DISTINCT b.file)
		FROM blocks b JOIN arrays a ON a.id = b.array_id GROUP BY a.var`
	}
	rows, err = s.db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n, files int
		var stored int64
		if err := rows.Scan(&name, &n, &stored, &files); err != nil {
			return nil, err
		}
		if vs := byName[name]; vs != nil {
			vs.Blocks, vs.StoredBytes, vs.Files = n, stored, files
		}
	}
	sort.Strings(order)
	out := make([]VarSummary, 0, len(order))
	for _, n := range order {
		byName[n].Levels = len(levels[n])
		out = append(out, *byName[n])
	}
	return out, rows.Err()
}

// EachArray calls fn for every array of varName in step then level order, with
// the blocks of that array only loaded.
func (s *Store) EachArray(ctx context.Context, varName string, fn func(*Array) error) error {
	return s.eachArray(ctx, varName, true, fn)
}

// EachArrayHeader is EachArray without loading blocks (Array.Blocks is nil),
// for planning passes that need shapes and types only.
func (s *Store) EachArrayHeader(ctx context.Context, varName string, fn func(*Array) error) error {
	return s.eachArray(ctx, varName, false, fn)
}

func (s *Store) eachArray(ctx context.Context, varName string, blocks bool, fn func(*Array) error) error {
	keys, err := s.keys(ctx, `WHERE var = ?`, varName)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return err
		}
		a, err := s.array(k, blocks)
		if err != nil {
			return err
		}
		if err := fn(a); err != nil {
			return err
		}
	}
	return nil
}

// keys lists the keys of the arrays that where (an SQL WHERE clause, or
// "") selects, in (var, step, level) order.
func (s *Store) keys(ctx context.Context, where string, args ...any) ([]Key, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT var, step, level FROM arrays `+where+` ORDER BY var, step, level`, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	defer rows.Close()
	var keys []Key
	for rows.Next() {
		var k Key
		if err := rows.Scan(&k.Var, &k.Step, &k.Level); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// Array loads one array with its blocks; ErrNotFound if the catalog lacks it.
func (s *Store) Array(k Key) (*Array, error) { return s.array(k, true) }

// readHeader reads the row of array k: the array without its blocks, its
// id, and about the memory it holds (twice its row's text as decoded Go
// values).
func (s *Store) readHeader(k Key) (_ *Array, id int64, n int64, err error) {
	a := &Array{Var: k.Var, Step: k.Step, Level: k.Level}
	var dtype, shape, offset, attrs, stepAttrs string
	var boxes, grain, dims sql.NullString
	st, err := s.stmt(`SELECT id, dtype, shape, offset, fill, attrs, step_attrs, source, boxes, ` + s.col("constant", "0") + `, ` + s.col("species", "''") + `, ` + s.col("grain", "NULL") + `, ` + s.col("dims", "NULL") + ` FROM arrays
		WHERE var = ? AND step = ? AND level = ?`)
	if err != nil {
		return nil, 0, 0, err
	}
	err = st.QueryRow(k.Var, k.Step, k.Level).
		Scan(&id, &dtype, &shape, &offset, &a.Fill, &attrs, &stepAttrs, &a.Source, &boxes, &a.Constant, &a.Species, &grain, &dims)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, 0, 0, fmt.Errorf("catalog: %s: %s step %d level %d: %w", s.path, k.Var, k.Step, k.Level, ErrNotFound)
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if a.DType, err = s.parseDType(dtype); err != nil {
		return nil, 0, 0, err
	}
	for _, p := range []struct {
		s string
		v any
	}{{shape, &a.Shape}, {offset, &a.Offset}, {attrs, &a.Attrs}, {stepAttrs, &a.StepAttrs}} {
		if err := s.fromJSON(p.s, p.v); err != nil {
			return nil, 0, 0, err
		}
	}
	if boxes.Valid {
		if err := s.fromJSON(boxes.String, &a.Boxes); err != nil {
			return nil, 0, 0, err
		}
	}
	if grain.Valid {
		if err := s.fromJSON(grain.String, &a.Grain); err != nil {
			return nil, 0, 0, err
		}
		if len(a.Grain) != len(a.Shape) {
			return nil, 0, 0, Corrupt("relayout", s.path, -1, "catalog: %s step %d level %d: grain %s for %d dimensions", k.Var, k.Step, k.Level, grain.String, len(a.Shape))
		}
	}
	if dims.Valid {
		if err := s.fromJSON(dims.String, &a.Dims); err != nil {
			return nil, 0, 0, err
		}
		if len(a.Dims) != len(a.Shape) {
			return nil, 0, 0, Corrupt("relayout", s.path, -1, "catalog: %s step %d level %d: dimension names %s for %d dimensions", k.Var, k.Step, k.Level, dims.String, len(a.Shape))
		}
	}
	n = int64(unsafe.Sizeof(Array{})) + 2*int64(len(shape)+len(offset)+len(attrs)+len(stepAttrs)+
		len(a.Fill)+len(a.Source)+len(boxes.String)+len(grain.String)+len(dims.String))
	return a, id, n, nil
}

func (s *Store) array(k Key, blocks bool) (_ *Array, err error) {
	if a, ok := s.cache.header(k); ok { // kept with its blocks (Put)
		if !blocks {
			a.Blocks = nil
		}
		return a, nil
	}
	a, id, _, err := s.readHeader(k)
	if err != nil {
		return nil, err
	}
	if !blocks {
		return a, nil
	}
	if b, ok := s.cache.get(k); ok {
		a.Blocks = b
		return a, nil
	}
	if s.cache.limit > 0 {
		defer func() {
			if err == nil {
				s.cache.put(k, a.Blocks)
			}
		}()
	}
	if s.legacy {
		a.Blocks, err = s.legacyBlocks(id)
		return a, err
	}
	if s.noLists {
		return nil, fmt.Errorf("catalog: %s: blocks of %s step %d level %d: the block lists were not stored (a catalog only summarised)", s.path, k.Var, k.Step, k.Level)
	}
	lists, firsts, nblocks, err := s.blockLists(id)
	if err != nil {
		return nil, err
	}
	var files []string
	st, err := s.stmt(`SELECT idx, name FROM block_files WHERE array_id = ? ORDER BY idx`)
	if err != nil {
		return nil, err
	}
	rows, err := st.Query(id)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var idx int
		var name string
		if err := rows.Scan(&idx, &name); err != nil {
			rows.Close()
			return nil, err
		}
		if idx != len(files) {
			rows.Close()
			return nil, Corrupt("relayout", s.path, -1, "catalog: %s: file index %d out of order", a.Source, idx)
		}
		files = append(files, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if a.Blocks, err = decodeParts(lists, firsts, files, nblocks); err != nil {
		return nil, fmt.Errorf("catalog: blocks of %s step %d level %d: %w", k.Var, k.Step, k.Level, CorruptIn(err, s.path))
	}
	if len(a.Blocks) != nblocks {
		return nil, Corrupt("relayout", s.path, -1, "catalog: %s step %d level %d: %d blocks listed, nblocks %d", k.Var, k.Step, k.Level, len(a.Blocks), nblocks)
	}
	if st, err = s.stmt(`SELECT seq, data FROM inline_blocks WHERE array_id = ?`); err != nil {
		return nil, err
	}
	if rows, err = st.Query(id); err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var data []byte
		if err := rows.Scan(&seq, &data); err != nil {
			return nil, err
		}
		if seq < 0 || seq >= int64(len(a.Blocks)) {
			return nil, Corrupt("relayout", s.path, -1, "catalog: inline block %d of %d", seq, len(a.Blocks))
		}
		if data == nil {
			data = []byte{}
		}
		a.Blocks[seq] = a.Blocks[seq].WithInline(data)
	}
	return a, rows.Err()
}

// blockLists is array id's block list (its parts in order, with the index
// of each one's first block; a catalog of an earlier version: its one
// block_list, firsts nil) and its block count.
func (s *Store) blockLists(id int64) (lists []string, firsts []int, nblocks int, err error) {
	if s.whole {
		var list string
		if err := s.db.QueryRow(`SELECT block_list, nblocks FROM arrays WHERE id = ?`, id).Scan(&list, &nblocks); err != nil {
			return nil, nil, 0, fmt.Errorf("catalog: %s: %w", s.path, err)
		}
		return []string{list}, nil, nblocks, nil
	}
	st, err := s.stmt(`SELECT nblocks FROM arrays WHERE id = ?`)
	if err != nil {
		return nil, nil, 0, err
	}
	if err := st.QueryRow(id).Scan(&nblocks); err != nil {
		return nil, nil, 0, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if st, err = s.stmt(`SELECT part, first, list FROM block_parts WHERE array_id = ? ORDER BY part`); err != nil {
		return nil, nil, 0, err
	}
	rows, err := st.Query(id)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var part, first int
		var list string
		if err := rows.Scan(&part, &first, &list); err != nil {
			return nil, nil, 0, fmt.Errorf("catalog: %s: %w", s.path, err)
		}
		if part != len(lists) {
			return nil, nil, 0, Corrupt("relayout", s.path, -1, "catalog: block list part %d missing (part %d follows)", len(lists), part)
		}
		lists, firsts = append(lists, list), append(firsts, first)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, 0, fmt.Errorf("catalog: %s: %w", s.path, err)
	}
	if len(lists) == 0 {
		return []string{"[]"}, nil, nblocks, nil // no blocks (nblocks says whether that is right)
	}
	return lists, firsts, nblocks, nil
}

// legacyBlocks loads the blocks of array id from a catalog of an earlier
// version (one row per block).
func (s *Store) legacyBlocks(id int64) ([]Block, error) {
	rows, err := s.db.Query(`SELECT lower, count, stored, file, byte_offset, length, storage, codecs, rank, inline, stored_lower
		FROM blocks WHERE array_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Block
	for rows.Next() {
		var b Block
		var lower, count, storage, codecs string
		var stored, storedLower sql.NullString
		var inline []byte
		if err := rows.Scan(&lower, &count, &stored, &b.File, &b.Offset, &b.Length, &storage, &codecs, &b.Rank, &inline, &storedLower); err != nil {
			return nil, err
		}
		var storedShape, lowerInStored []int64
		if storedLower.Valid {
			if lowerInStored, err = s.parseInts(storedLower.String); err != nil {
				return nil, err
			}
		}
		if b.Box.Lower, err = s.parseInts(lower); err != nil {
			return nil, err
		}
		if b.Box.Count, err = s.parseInts(count); err != nil {
			return nil, err
		}
		if stored.Valid {
			if storedShape, err = s.parseInts(stored.String); err != nil {
				return nil, err
			}
		}
		b = b.WithStored(storedShape, lowerInStored).WithInline(inline)
		if codecs != "[]" {
			if err := s.fromJSON(codecs, &b.Codecs); err != nil {
				return nil, err
			}
		}
		if len(b.Codecs) == 0 {
			b.Codecs = nil
		}
		if storage == "col" {
			b.Order = ColMajor
		}
		out = append(out, b)
	}
	return out, rows.Err()
}
