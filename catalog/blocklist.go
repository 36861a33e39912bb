package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// An array's blocks are one JSON list, cut between blocks into parts of
// about blockPartBytes of text, the rows of block_parts (array_id, part,
// first: the index of its first block; a catalog of a million tiny chunks
// is a few hundred rows, not a million; catalogs of earlier versions hold
// the whole list in arrays.block_list), which the blocks view unpacks for
// sqlite3 users:
//
//	[ [lower, count, stored, file, byte_offset, length, storage, codecs, rank, stored_lower], ... ]
//	     |      |      |      |                          |        |              |
//	     |      |      |      |                          |        |              +- [int,...] or null
//	     |      |      |      |                          |        +- [{"name":..,"params":[..]},...]
//	     |      |      |      |                          +- "row" or "col"
//	     |      |      |      +- index into block_files (array_id, idx) -> name
//	     |      |      +- [int,...] or null (stored shape = count)
//	     [int,...] relative to the array
//
// Inline bytes are in inline_blocks (array_id, seq). encodeParts writes no
// spaces; decodeParts reads exactly that form (and reports anything else as
// ErrCorrupt: catalogs are input).

// blockFiles is the distinct files of blocks in the order encodeParts
// numbers them (first met first).
func blockFiles(blocks []Block) []string {
	var files []string
	seen := map[string]bool{}
	for i := range blocks {
		if f := blocks[i].File; (i == 0 || f != blocks[i-1].File) && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	return files
}

// blockBytes is the bytes blocks store (their lengths summed).
func blockBytes(blocks []Block) int64 {
	var n int64
	for i := range blocks {
		n += blocks[i].Length
	}
	return n
}

// blockPartBytes is about the most text one block_parts row holds. SQLite
// copies a bound text three times (into C memory, the record, the pages),
// each time into memory first touched: 351,537 blocks of four arrays as
// four lists of 6.4 MB cost Put 0.12 s, the same text in 256 KiB parts
// 0.023 s, and Put is what bounds the catalog beside the parser.
const blockPartBytes = 256 << 10

// encodeParts returns the block list JSON of blocks cut into lists of
// about partBytes of text each (a part ends at the first block end past
// it), the index of each part's first block, the file names the lists
// index, and the sum of the blocks' lengths.
func encodeParts(blocks []Block, partBytes int) (parts []string, firsts []int, files []string, stored int64) {
	fileIdx := map[string]int{}
	b := make([]byte, 0, 64*len(blocks)+2)
	Populate(b)
	b = append(b, '[')
	var bounds []int // where each part's text starts in b, and where the last ends
	bounds, firsts = append(bounds, 0), append(firsts, 0)
	var countText []byte // the last block's count list, in b
	var lastCodecs []Codec
	lastCodecsJSON := "[]"
	lastFile := 0
	for i := range blocks {
		k := &blocks[i]
		switch {
		case i > 0 && len(b)-bounds[len(bounds)-1] >= partBytes:
			b = append(b, ']')
			bounds, firsts = append(bounds, len(b)), append(firsts, i)
			b = append(b, '[')
		case i > 0:
			b = append(b, ',')
		}
		b = append(b, '[')
		b = appendInts(b, nonNil(k.Box.Lower))
		b = append(b, ',')
		if i == 0 || !slices.Equal(k.Box.Count, blocks[i-1].Box.Count) {
			at := len(b)
			b = appendInts(b, nonNil(k.Box.Count))
			countText = b[at:] // blocks of one array mostly share their count
		} else {
			b = append(b, countText...)
		}
		b = append(b, ',')
		b = appendIntsOrNull(b, k.Stored())
		b = append(b, ',')
		f := lastFile
		if i == 0 || k.File != files[f] { // blocks come in runs of one file
			var ok bool
			if f, ok = fileIdx[k.File]; !ok {
				f = len(files)
				fileIdx[k.File] = f
				files = append(files, k.File)
			}
			lastFile = f
		}
		b = appendInt(b, int64(f))
		b = append(b, ',')
		b = appendInt(b, k.Offset)
		b = append(b, ',')
		b = appendInt(b, k.Length)
		if k.Order == ColMajor {
			b = append(b, `,"col",`...)
		} else {
			b = append(b, `,"row",`...)
		}
		if len(k.Codecs) != len(lastCodecs) || len(k.Codecs) > 0 && &k.Codecs[0] != &lastCodecs[0] {
			lastCodecs, lastCodecsJSON = k.Codecs, codecsJSON(k.Codecs)
		}
		b = append(b, lastCodecsJSON...)
		b = append(b, ',')
		b = appendInt(b, int64(k.Rank))
		b = append(b, ',')
		b = appendIntsOrNull(b, k.StoredLower())
		b = append(b, ']')
		stored += k.Length
	}
	b = append(b, ']')
	bounds = append(bounds, len(b))
	// b is not written again: the strings share it (a copy of 15 MB for
	// 208,370 blocks cost as much as writing the text).
	for k := range firsts {
		parts = append(parts, unsafe.String(&b[bounds[k]], bounds[k+1]-bounds[k]))
	}
	return parts, firsts, files, stored
}

func appendInts(b []byte, v []int64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendInt(b, x)
	}
	return append(b, ']')
}

// digitPairs holds "00" to "99".
const digitPairs = "0001020304050607080910111213141516171819" +
	"2021222324252627282930313233343536373839" +
	"4041424344454647484950515253545556575859" +
	"6061626364656667686970717273747576777879" +
	"8081828384858687888990919293949596979899"

// appendInt is strconv.AppendInt(b, v, 10) in one function, the digits
// made in pairs: strconv's three calls per integer were a third of a
// catalog's instructions (ten integers a block).
func appendInt(b []byte, v int64) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = -u // |v|, math.MinInt64 included
	}
	if u < 10 {
		return append(b, byte('0'+u))
	}
	var buf [20]byte
	i := len(buf)
	for u >= 100 {
		q := u / 100
		r := 2 * (u - 100*q)
		i -= 2
		buf[i], buf[i+1] = digitPairs[r], digitPairs[r+1]
		u = q
	}
	if u >= 10 {
		i -= 2
		buf[i], buf[i+1] = digitPairs[2*u], digitPairs[2*u+1]
	} else {
		i--
		buf[i] = byte('0' + u)
	}
	return append(b, buf[i:]...)
}

func appendIntsOrNull(b []byte, v []int64) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	return appendInts(b, v)
}

// listParser reads block_list text.
type listParser struct {
	s     string
	i     int
	part  int     // of the block list's parts (block_parts), the one in s
	arena []int64 // backing store of the blocks' integer lists
}

func (p *listParser) errorf(what string) error {
	if p.part > 0 {
		return Corrupt("relayout", "", -1, "catalog block list part %d at byte %d: %s", p.part, p.i, what)
	}
	return Corrupt("relayout", "", -1, "catalog block list at byte %d: %s", p.i, what)
}

func (p *listParser) byte(c byte) error {
	if p.i >= len(p.s) || p.s[p.i] != c {
		return p.errorf(fmt.Sprintf("want %q", c))
	}
	p.i++
	return nil
}

func (p *listParser) int() (int64, error) {
	j := p.i
	neg := j < len(p.s) && p.s[j] == '-'
	if neg {
		j++
	}
	d0 := j
	var u uint64
	for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
		u = u*10 + uint64(p.s[j]-'0')
		j++
	}
	// Up to 18 digits cannot overflow: the common case is read here, the
	// rest (and every error) by strconv.
	if n := j - d0; n > 0 && n <= 18 {
		p.i = j
		if neg {
			return -int64(u), nil
		}
		return int64(u), nil
	}
	v, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
	if err != nil {
		return 0, p.errorf("bad integer")
	}
	p.i = j
	return v, nil
}

// ints reads [int,...] into the arena; the slice's capacity ends at its length.
func (p *listParser) ints() ([]int64, error) {
	if err := p.byte('['); err != nil {
		return nil, err
	}
	start := len(p.arena)
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return []int64{}, nil
	}
	for {
		v, err := p.int()
		if err != nil {
			return nil, err
		}
		if len(p.arena) == cap(p.arena) { // a fresh arena; earlier slices keep the old one
			p.arena = append(make([]int64, 0, max(1024, 2*(len(p.arena)-start+1))), p.arena[start:]...)
			start = 0
		}
		p.arena = append(p.arena, v)
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if err := p.byte(']'); err != nil {
			return nil, err
		}
		return p.arena[start:len(p.arena):len(p.arena)], nil
	}
}

// reuse returns prev in place of v, the list read last, when they are equal,
// giving v's room in the arena back: the blocks of one array mostly share
// their count and stored shape, and a million blocks then hold one copy.
func (p *listParser) reuse(v, prev []int64) []int64 {
	if v == nil || prev == nil || !slices.Equal(v, prev) {
		return v
	}
	p.arena = p.arena[:len(p.arena)-len(v)]
	return prev
}

func (p *listParser) intsOrNull() ([]int64, error) {
	if len(p.s)-p.i >= 4 && p.s[p.i:p.i+4] == "null" {
		p.i += 4
		return nil, nil
	}
	return p.ints()
}

// value skips one JSON value (the codecs list) and returns its text.
func (p *listParser) value() (string, error) {
	start, depth, inString := p.i, 0, false
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case inString && c == '\\':
			p.i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth < 0 {
				return "", p.errorf("unbalanced")
			}
		case depth == 0 && c == ',':
			return p.s[start:p.i], nil
		}
	}
	return "", p.errorf("unterminated")
}

// decodeParts parses the parts of a block list (encodeParts) as one list;
// firsts (unless nil) are the indexes their first blocks must have, files
// the names their file indexes refer to, n the number of blocks expected
// (a capacity hint).
func decodeParts(lists []string, firsts []int, files []string, n int) ([]Block, error) {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	p := &listParser{arena: make([]int64, 0, min(total/8, 1<<20))}
	out := make([]Block, 0, min(max(n, 0), total/16))
	Populate(out)
	shared := blockContext{codecsText: "[]"}
	for part, list := range lists {
		p.s, p.i, p.part = list, 0, part
		if firsts != nil && firsts[part] != len(out) {
			return nil, p.errorf(fmt.Sprintf("first block %d, after %d blocks", firsts[part], len(out)))
		}
		if err := p.byte('['); err != nil {
			return nil, err
		}
		for more := p.i >= len(p.s) || p.s[p.i] != ']'; more; {
			b, err := p.block(files, &shared)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
			if more = p.i < len(p.s) && p.s[p.i] == ','; more {
				p.i++
			}
		}
		if err := p.byte(']'); err != nil {
			return nil, err
		}
		if p.i != len(p.s) {
			return nil, p.errorf("trailing bytes")
		}
	}
	return out, nil
}

// blockContext is what the next block of a list may share with those
// before it: the last block's lists and extra part, and the codecs last
// decoded with their text (blocks of one array usually share their codecs:
// decoded once; "[]" before the first).
type blockContext struct {
	prev       Block
	codecsText string
	codecs     []Codec
}

// block parses one block of a list, sharing what it can with c (updated).
func (p *listParser) block(files []string, c *blockContext) (b Block, err error) {
	prev := c.prev
	if err = p.byte('['); err != nil {
		return Block{}, err
	}
	if b.Box.Lower, err = p.ints(); err != nil {
		return Block{}, err
	}
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	if b.Box.Count, err = p.ints(); err != nil {
		return Block{}, err
	}
	b.Box.Count = p.reuse(b.Box.Count, prev.Box.Count)
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	stored, err := p.intsOrNull()
	if err != nil {
		return Block{}, err
	}
	stored = p.reuse(stored, prev.Stored())
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	f, err := p.int()
	if err != nil {
		return Block{}, err
	}
	if f < 0 || f >= int64(len(files)) {
		return Block{}, p.errorf(fmt.Sprintf("file index %d of %d files", f, len(files)))
	}
	b.File = files[f]
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	if b.Offset, err = p.int(); err != nil {
		return Block{}, err
	}
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	if b.Length, err = p.int(); err != nil {
		return Block{}, err
	}
	switch {
	case len(p.s)-p.i >= 7 && p.s[p.i:p.i+7] == `,"row",`:
	case len(p.s)-p.i >= 7 && p.s[p.i:p.i+7] == `,"col",`:
		b.Order = ColMajor
	default:
		return Block{}, p.errorf("want storage \"row\" or \"col\"")
	}
	p.i += 7
	text, err := p.value()
	if err != nil {
		return Block{}, err
	}
	if text != c.codecsText {
		if c.codecs, err = decodeCodecs(text); err != nil {
			return Block{}, p.errorf(err.Error())
		}
		c.codecsText = text
	}
	b.Codecs = c.codecs
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	rank, err := p.int()
	if err != nil {
		return Block{}, err
	}
	if rank < -1<<31 || rank > 1<<31-1 {
		return Block{}, p.errorf(fmt.Sprintf("rank %d", rank))
	}
	b.Rank = int32(rank)
	if err = p.byte(','); err != nil {
		return Block{}, err
	}
	storedLower, err := p.intsOrNull()
	if err != nil {
		return Block{}, err
	}
	storedLower = p.reuse(storedLower, prev.StoredLower())
	switch {
	case stored == nil && storedLower == nil:
	case prev.extra != nil && sameList(stored, prev.extra.stored) && sameList(storedLower, prev.extra.storedLower):
		b.extra = prev.extra // HDF5 chunks share their stored shape
	default:
		b = b.WithStored(stored, storedLower)
	}
	if err = p.byte(']'); err != nil {
		return Block{}, err
	}
	c.prev = b
	return b, nil
}

// sameList reports whether a and b are the same slice (both nil, or one
// backing array and length).
func sameList(a, b []int64) bool {
	return len(a) == len(b) && (a == nil) == (b == nil) && (len(a) == 0 || &a[0] == &b[0])
}

// decodeCodecs parses a block's codec list strictly: known keys only, every
// codec named, no params given as an empty list (what encodeParts writes
// reads back the same).
func decodeCodecs(text string) ([]Codec, error) {
	var codecs []Codec
	d := json.NewDecoder(strings.NewReader(text))
	d.DisallowUnknownFields()
	if err := d.Decode(&codecs); err != nil || d.More() {
		return nil, fmt.Errorf("bad codecs")
	}
	for i := range codecs {
		if codecs[i].Name == "" {
			return nil, fmt.Errorf("codec %d without a name", i)
		}
		if len(codecs[i].Params) == 0 {
			codecs[i].Params = nil
		}
	}
	if len(codecs) == 0 {
		codecs = nil
	}
	return codecs, nil
}
