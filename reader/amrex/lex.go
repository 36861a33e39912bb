package amrex

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"relayout/catalog"
)

// lexer reads the whitespace-tokenised text of AMReX headers. AMReX writes
// them with C++ iostreams, so line breaks are not relied on except where the
// format needs them (variable names, one per line). Every error names the file
// and the line.
type lexer struct {
	file string
	b    []byte
	pos  int
	line int // 1-based line of b[pos]
	// base, when >= 0, makes errors report byte offsets base+pos instead of
	// lines (binary files with a text header).
	base int64
}

func newLexer(file string, b []byte) *lexer { return &lexer{file: file, b: b, line: 1, base: -1} }

func (l *lexer) errf(format string, args ...any) error {
	if l.base >= 0 {
		return catalog.Corrupt("amrex", l.file, l.base+int64(l.pos), format, args...)
	}
	return catalog.Corrupt("amrex", l.file, -1, "line %d: %s", l.line, fmt.Sprintf(format, args...))
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.b) && isSpace(l.b[l.pos]) {
		if l.b[l.pos] == '\n' {
			l.line++
		}
		l.pos++
	}
}

// eof reports whether only whitespace is left.
func (l *lexer) eof() bool {
	l.skipSpace()
	return l.pos >= len(l.b)
}

// remaining is the number of bytes not yet read, a bound for counts read from
// the text (every value takes at least one byte).
func (l *lexer) remaining() int { return len(l.b) - l.pos }

// word returns the next run of characters that are neither whitespace nor any
// of stop.
func (l *lexer) word(what string, stop string) (string, error) {
	l.skipSpace()
	start := l.pos
	for l.pos < len(l.b) && !isSpace(l.b[l.pos]) && !contains(stop, l.b[l.pos]) {
		l.pos++
	}
	if l.pos == start {
		if l.pos >= len(l.b) {
			return "", l.errf("%s: unexpected end of file", what)
		}
		return "", l.errf("%s: unexpected %q", what, l.b[l.pos])
	}
	return string(l.b[start:l.pos]), nil
}

func contains(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// int reads an integer in [lo, hi].
func (l *lexer) int(what string, lo, hi int64) (int64, error) {
	w, err := l.word(what, "(),")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(w, 10, 64)
	if err != nil {
		return 0, l.errf("%s: %q is not an integer", what, w)
	}
	if v < lo || v > hi {
		return 0, l.errf("%s: %d out of range [%d, %d]", what, v, lo, hi)
	}
	return v, nil
}

// float reads a floating-point number (stopping at a comma).
func (l *lexer) float(what string) (float64, error) {
	w, err := l.word(what, ",")
	if err != nil {
		return 0, err
	}
	// AMReX prints non-finite values as C++ streams do (nan, -nan, inf,
	// -inf); a NaN becomes the quiet NaN C and NumPy write (bits
	// 0x7ff8000000000000, sign kept), not Go's math.NaN().
	switch strings.ToLower(w) {
	case "nan", "+nan":
		return math.Float64frombits(0x7ff8000000000000), nil
	case "-nan":
		return math.Float64frombits(0xfff8000000000000), nil
	}
	v, err := strconv.ParseFloat(w, 64)
	if err != nil {
		// Anything else is damage.
		return 0, l.errf("%s: %q is not a number", what, w)
	}
	return v, nil
}

func (l *lexer) floats(what string, n int) ([]float64, error) {
	out := make([]float64, n)
	for i := range out {
		v, err := l.float(what)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// expect skips whitespace and consumes c.
func (l *lexer) expect(c byte, what string) error {
	l.skipSpace()
	if l.pos >= len(l.b) {
		return l.errf("%s: unexpected end of file, want %q", what, c)
	}
	if l.b[l.pos] != c {
		return l.errf("%s: unexpected %q, want %q", what, l.b[l.pos], c)
	}
	l.pos++
	return nil
}

// peek returns the next non-space byte (0 at the end).
func (l *lexer) peek() byte {
	l.skipSpace()
	if l.pos >= len(l.b) {
		return 0
	}
	return l.b[l.pos]
}

// line reads the rest of the current line (without the newline) and moves to
// the next line.
func (l *lexer) restOfLine() string {
	start := l.pos
	for l.pos < len(l.b) && l.b[l.pos] != '\n' {
		l.pos++
	}
	s := string(l.b[start:l.pos])
	if l.pos < len(l.b) {
		l.pos++
		l.line++
	}
	if n := len(s); n > 0 && s[n-1] == '\r' {
		s = s[:n-1]
	}
	return s
}

// maxIndex bounds box corners: AMReX indices are C ints.
const maxIndex = 1<<31 - 1

// intVect reads "(i,j,k)" with d components.
func (l *lexer) intVect(what string, d int) ([]int64, error) {
	if err := l.expect('(', what); err != nil {
		return nil, err
	}
	v := make([]int64, d)
	for i := range v {
		if i > 0 {
			if err := l.expect(',', what); err != nil {
				return nil, err
			}
		}
		x, err := l.int(what, -maxIndex-1, maxIndex)
		if err != nil {
			return nil, err
		}
		v[i] = x
	}
	return v, l.expect(')', what)
}

// box is an AMReX Box: inclusive corners and the index type (0 cell, 1 node).
type box struct {
	Lo, Hi, Type []int64
}

// count is the number of points per dimension (nodal boxes already carry the
// extra point in Hi).
func (b box) count() []int64 {
	c := make([]int64, len(b.Lo))
	for i := range c {
		c[i] = b.Hi[i] - b.Lo[i] + 1
	}
	return c
}

func (b box) String() string { return fmt.Sprintf("(%v %v %v)", b.Lo, b.Hi, b.Type) }

// box reads "((lo) (hi) (type))" and checks lo <= hi and the type is 0/1.
func (l *lexer) box(what string, d int) (box, error) {
	var b box
	if err := l.expect('(', what); err != nil {
		return b, err
	}
	var err error
	if b.Lo, err = l.intVect(what, d); err != nil {
		return b, err
	}
	if b.Hi, err = l.intVect(what, d); err != nil {
		return b, err
	}
	if b.Type, err = l.intVect(what, d); err != nil {
		return b, err
	}
	if err := l.expect(')', what); err != nil {
		return b, err
	}
	for i := 0; i < d; i++ {
		if b.Hi[i] < b.Lo[i] {
			return b, l.errf("%s: box %v has hi < lo", what, b)
		}
		if b.Type[i] != 0 && b.Type[i] != 1 {
			return b, l.errf("%s: box %v has index type other than 0/1", what, b)
		}
	}
	return b, nil
}
