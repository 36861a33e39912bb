package amrex

import (
	"fmt"
	"math"
)

// A level's MultiFab header, Level_<l>/Cell_H (text; spec §3):
//
//	1                                   version: 1 FAB headers + per-box min/max,
//	                                    2 no FAB headers, 3 + per-box min/max, 4 + global min/max
//	1                                   how written (0 one file per rank, 1 NFiles)
//	38                                  ncomp
//	0                                   nghost: n or (gx,gy,gz)
//	(8 0                                BoxArray: count, dummy hash
//	((0,0,0) (7,7,7) (0,0,0))           valid boxes, one per line
//	...
//	)
//	8                                   FabOnDisk count
//	FabOnDisk: Cell_D_00001 0           data file (relative to the level directory), byte offset
//	...
//	8,38                                versions 1, 3: minima (count,ncomp; then count lines of
//	v,v,...,                            ncomp values, each followed by a comma), then maxima
//	8,38
//	v,v,...,
//	((8, (64 ...)),(8, (8 7 ...)))      versions 2-4 only: the RealDescriptor

// CellH is a parsed MultiFab header.
type CellH struct {
	Version int
	How     int
	NComp   int
	NGhost  []int64 // per dimension
	Boxes   []box
	BoxLine []int // line of each box, for messages
	Fabs    []FabOnDisk
	// Min and Max are per box, per component (versions 1 and 3), or a single
	// row for the whole MultiFab (version 4); nil for version 2.
	Min, Max [][]float64
	// Real is the element format for versions 2-4 (no FAB headers).
	Real *RealDesc
}

// FabOnDisk locates one box's FAB: a file in the level directory and the byte
// offset of its FAB header (version 1) or data (versions 2-4).
type FabOnDisk struct {
	File   string
	Offset int64
	Line   int
}

// ParseCellH parses a Cell_H of a d-dimensional plotfile.
func ParseCellH(file string, b []byte, d int) (*CellH, error) {
	l := newLexer(file, b)
	c := &CellH{}
	v, err := l.int("header version", 1, 4)
	if err != nil {
		return nil, err
	}
	c.Version = int(v)
	how, err := l.int("how written", 0, 1)
	if err != nil {
		return nil, err
	}
	c.How = int(how)
	nc, err := l.int("number of components", 1, maxVars)
	if err != nil {
		return nil, err
	}
	c.NComp = int(nc)
	if l.peek() == '(' {
		if c.NGhost, err = l.intVect("ghost width", d); err != nil {
			return nil, err
		}
	} else {
		g, err := l.int("ghost width", 0, 1<<20)
		if err != nil {
			return nil, err
		}
		c.NGhost = make([]int64, d)
		for i := range c.NGhost {
			c.NGhost[i] = g
		}
	}
	for i, g := range c.NGhost {
		if g < 0 || g > 1<<20 {
			return nil, l.errf("ghost width %d in dimension %d", g, i)
		}
	}
	if err := l.expect('(', "box array"); err != nil {
		return nil, err
	}
	// A box takes at least 7+6d bytes of text: "((0,0) (0,0) (0,0))".
	nb, err := l.int("number of boxes", 0, int64(l.remaining()/(7+6*d)))
	if err != nil {
		return nil, err
	}
	if _, err := l.int("box array hash", math.MinInt64, math.MaxInt64); err != nil {
		return nil, err
	}
	c.Boxes = make([]box, nb)
	c.BoxLine = make([]int, nb)
	for i := range c.Boxes {
		l.skipSpace()
		c.BoxLine[i] = l.line
		if c.Boxes[i], err = l.box(fmt.Sprintf("box %d", i), d); err != nil {
			return nil, err
		}
	}
	if err := l.expect(')', "end of box array"); err != nil {
		return nil, err
	}
	nf, err := l.int("number of FabOnDisk entries", 0, int64(l.remaining()/12))
	if err != nil {
		return nil, err
	}
	if nf != nb {
		return nil, l.errf("%d FabOnDisk entries for %d boxes", nf, nb)
	}
	c.Fabs = make([]FabOnDisk, nf)
	for i := range c.Fabs {
		tag, err := l.word("FabOnDisk", "")
		if err != nil {
			return nil, err
		}
		if tag != "FabOnDisk:" {
			return nil, l.errf("FabOnDisk %d: found %q", i, tag)
		}
		fd := &c.Fabs[i]
		fd.Line = l.line
		if fd.File, err = l.word("FabOnDisk file name", ""); err != nil {
			return nil, err
		}
		if fd.Offset, err = l.int("FabOnDisk offset", 0, math.MaxInt64); err != nil {
			return nil, err
		}
	}
	switch c.Version {
	case 1, 3:
		if c.Min, err = minMaxTable(l, "minima", int(nb), c.NComp); err != nil {
			return nil, err
		}
		if c.Max, err = minMaxTable(l, "maxima", int(nb), c.NComp); err != nil {
			return nil, err
		}
	case 4:
		for _, p := range []*[][]float64{&c.Min, &c.Max} {
			row, err := commaRow(l, "global min/max", c.NComp)
			if err != nil {
				return nil, err
			}
			*p = [][]float64{row}
		}
	}
	if c.Version != 1 {
		rd, err := parseRealDesc(l)
		if err != nil {
			return nil, err
		}
		c.Real = &rd
	}
	return c, nil
}

// minMaxTable reads "n,m" then n rows of m comma-terminated values.
func minMaxTable(l *lexer, what string, n, m int) ([][]float64, error) {
	rn, err := l.int(what+" row count", 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if err := l.expect(',', what); err != nil {
		return nil, err
	}
	rm, err := l.int(what+" column count", 0, math.MaxInt32)
	if err != nil {
		return nil, err
	}
	if int(rn) != n || int(rm) != m {
		return nil, l.errf("%s table is %d×%d, want %d boxes × %d components", what, rn, rm, n, m)
	}
	// Each value takes at least two bytes ("0,").
	if int64(n)*int64(m) > int64(l.remaining()/2) {
		return nil, l.errf("%s table of %d×%d values does not fit in the rest of the file", what, n, m)
	}
	out := make([][]float64, n)
	for i := range out {
		if out[i], err = commaRow(l, what, m); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func commaRow(l *lexer, what string, m int) ([]float64, error) {
	if m > l.remaining()/2 {
		return nil, l.errf("%s: %d values do not fit in the rest of the file", what, m)
	}
	row := make([]float64, m)
	for j := range row {
		v, err := l.float(what)
		if err != nil {
			return nil, err
		}
		if err := l.expect(',', what); err != nil {
			return nil, err
		}
		row[j] = v
	}
	return row, nil
}
