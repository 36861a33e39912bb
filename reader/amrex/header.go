package amrex

import (
	"fmt"
	"math"
	"strings"

	"relayout/catalog"
)

// The top-level Header of a plotfile (text, one item per line; see
// ../shared/specs/amrex-plotfile.md §2):
//
//	HyperCLaw-V1.1                      version
//	38                                  nvars
//	x_velocity                          nvars names, one per line
//	...
//	3                                   dimension D
//	1.39e-08                            time
//	2                                   finest level F
//	0 0 0                               prob_lo (D floats)
//	0.016 0.016 0.016                   prob_hi
//	2 2                                 F refinement ratios (empty line when F = 0)
//	((0,0,0) (7,7,7) (0,0,0)) ...       F+1 level domain boxes
//	20 20 20                            F+1 level steps
//	0.002 0.002 0.002                   F+1 lines of cell sizes (D floats)
//	...
//	0                                   coordinate system
//	0                                   boundary width
//	0 1 1.39e-08                        per level: level, ngrids, time
//	20                                  level step
//	0 0.016                             ngrids × D lines: physical lo hi
//	...
//	Level_0/Cell                        MultiFab prefix (+ "_H", + "_D_NNNNN")

// Header is a parsed plotfile Header.
type Header struct {
	Version    string
	Vars       []string
	Dim        int
	Time       float64
	Finest     int
	ProbLo     []float64
	ProbHi     []float64
	RefRatio   []int64 // F ratios, level i → i+1 (x component only)
	Domains    []box   // per level, in that level's index space
	LevelSteps []int64
	CellSize   [][]float64 // per level, D values
	CoordSys   int64
	Levels     []HeaderLevel
	// TrailingLine is the first line after the last level's block that holds
	// more text (0 when none): publishers trimming the hierarchy by editing
	// the finest level leave the other levels' blocks behind.
	TrailingLine int
}

// HeaderLevel is one level's block at the end of the Header.
type HeaderLevel struct {
	NGrids int
	Time   float64
	Step   int64
	Prefix string // MultiFab path prefix relative to the plotfile, e.g. "Level_0/Cell"
	Line   int    // line of Prefix, for messages
}

// Bounds on counts read from the text, beyond the bytes-left bound: AMReX
// has at most a handful of levels and dimensions.
const (
	maxVars   = 1 << 16
	maxLevels = 64
)

// ParseHeader parses the top-level Header; file names it in errors.
func ParseHeader(file string, b []byte) (*Header, error) {
	l := newLexer(file, b)
	h := &Header{}
	h.Version = trimSpace(l.restOfLine())
	if h.Version == "" {
		return nil, l.errf("empty version line")
	}
	nv, err := l.int("number of variables", 1, maxVars)
	if err != nil {
		return nil, err
	}
	if int(nv) > l.remaining()/2 {
		return nil, l.errf("%d variables do not fit in the rest of the file", nv)
	}
	if rest := trimSpace(l.restOfLine()); rest != "" {
		return nil, l.errf("text %q after the number of variables", rest)
	}
	seen := map[string]bool{}
	for i := 0; i < int(nv); i++ {
		if l.pos >= len(l.b) {
			return nil, l.errf("variable %d of %d: unexpected end of file", i+1, nv)
		}
		name := trimSpace(l.restOfLine())
		if name == "" || seen[name] {
			return nil, catalog.Corrupt("amrex", file, -1, "line %d: variable name %q empty or repeated", l.line-1, name)
		}
		seen[name] = true
		h.Vars = append(h.Vars, name)
	}
	d, err := l.int("dimension", 1, 3)
	if err != nil {
		return nil, err
	}
	h.Dim = int(d)
	if h.Time, err = l.float("time"); err != nil {
		return nil, err
	}
	f, err := l.int("finest level", 0, maxLevels-1)
	if err != nil {
		return nil, err
	}
	h.Finest = int(f)
	nl := h.Finest + 1
	if h.ProbLo, err = l.floats("prob_lo", h.Dim); err != nil {
		return nil, err
	}
	if h.ProbHi, err = l.floats("prob_hi", h.Dim); err != nil {
		return nil, err
	}
	// The ratios are one line (empty when F = 0), read as a line: publishers
	// trimming levels by hand leave extra ratios on it, which are ignored.
	if rest := trimSpace(l.restOfLine()); rest != "" {
		return nil, catalog.Corrupt("amrex", file, -1, "line %d: text %q after prob_hi", l.line-1, rest)
	}
	rl := newLexer(file, []byte(l.restOfLine()))
	rl.line = l.line - 1
	for i := 0; i < h.Finest; i++ {
		r, err := rl.int("refinement ratio", 1, 1<<16)
		if err != nil {
			return nil, err
		}
		h.RefRatio = append(h.RefRatio, r)
	}
	for i := 0; i < nl; i++ {
		bx, err := l.box(fmt.Sprintf("level %d domain", i), h.Dim)
		if err != nil {
			return nil, err
		}
		h.Domains = append(h.Domains, bx)
	}
	for i := 0; i < nl; i++ {
		s, err := l.int("level step", math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		h.LevelSteps = append(h.LevelSteps, s)
	}
	for i := 0; i < nl; i++ {
		dx, err := l.floats(fmt.Sprintf("level %d cell size", i), h.Dim)
		if err != nil {
			return nil, err
		}
		h.CellSize = append(h.CellSize, dx)
	}
	if h.CoordSys, err = l.int("coordinate system", 0, 2); err != nil {
		return nil, err
	}
	if _, err = l.int("boundary width", math.MinInt32, math.MaxInt32); err != nil {
		return nil, err
	}
	for i := 0; i < nl; i++ {
		lev, err := l.int("level number", 0, maxLevels-1)
		if err != nil {
			return nil, err
		}
		if int(lev) != i {
			return nil, l.errf("level block %d is numbered %d", i, lev)
		}
		// Each grid takes D lines of two numbers (at least 4 bytes per line).
		ng, err := l.int(fmt.Sprintf("level %d number of grids", i), 0, int64(l.remaining()/(4*h.Dim)))
		if err != nil {
			return nil, err
		}
		lv := HeaderLevel{NGrids: int(ng)}
		if lv.Time, err = l.float("level time"); err != nil {
			return nil, err
		}
		if lv.Step, err = l.int("level step", math.MinInt64, math.MaxInt64); err != nil {
			return nil, err
		}
		for g := 0; g < lv.NGrids*h.Dim*2; g++ {
			if _, err := l.float(fmt.Sprintf("level %d grid %d physical extent", i, g/(2*h.Dim))); err != nil {
				return nil, err
			}
		}
		l.skipSpace()
		lv.Line = l.line
		if lv.Prefix, err = l.word(fmt.Sprintf("level %d path", i), ""); err != nil {
			return nil, err
		}
		h.Levels = append(h.Levels, lv)
	}
	if !l.eof() {
		h.TrailingLine = l.line
	}
	return h, nil
}

func trimSpace(s string) string { return strings.TrimSpace(s) }
