package planner

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"

	"relayout/catalog"
)

// Picture is what RenderSVG draws: a 2-D slice of one array with its source
// blocks coloured by writer rank (by sub-file when the ranks are unknown),
// the merged cuboids of the plan's scope outlined, and beside it the
// predicted read time per pattern before, merged and after.
type Picture struct {
	Title   string         // e.g. "fields/Bx step 0"
	Array   *catalog.Array // shape, offset and blocks
	Plan    ArrayPlan      // from Planner.PlanArray of the same array
	Readers int
	Scope   Scope
	// Axis is the axis held fixed at Slice (arrays of 3 or more dimensions;
	// further axes beyond the two drawn are held at their middle). Slice is in
	// the array's global index space (Array.Offset included).
	Axis  int
	Slice int64
}

// Canvas geometry (pixels).
const (
	svgW       = 1240
	domX, domY = 70, 150 // top-left of the domain panel
	domSize    = 520
	chartX     = 700
	chartW     = 500
)

// AxisName is how pictures and the CLI name axis d of an array with dims
// dimensions: x, y, z for up to three (row-major: z fastest, as in the cost
// model), d0..d3 beyond.
func AxisName(d, dims int) string {
	if dims <= 3 {
		return string("xyz"[d])
	}
	return fmt.Sprintf("d%d", d)
}

// SliceAxes returns the two axes RenderSVG draws (horizontal, vertical; -1
// when the array has fewer dimensions) for an array of dims dimensions with
// axis fixed: the last two axes other than axis.
func SliceAxes(dims, axis int) (h, v int) {
	var rest []int
	for d := 0; d < dims; d++ {
		if d != axis || dims <= 2 {
			rest = append(rest, d)
		}
	}
	switch len(rest) {
	case 0:
		return -1, -1
	case 1:
		return rest[0], -1
	}
	return rest[len(rest)-2], rest[len(rest)-1]
}

// RenderSVG draws p as a standalone SVG document. Errors are usage errors
// (an axis or slice outside the array).
func RenderSVG(p Picture) ([]byte, error) {
	a := p.Array
	dims := len(a.Shape)
	if dims >= 3 && (p.Axis < 0 || p.Axis >= dims) {
		return nil, fmt.Errorf("planner: axis %d: the array has %d dimensions", p.Axis, dims)
	}
	off := a.Offset
	if len(off) != dims {
		off = make([]int64, dims)
	}
	// fixed[d] is the relative index axis d is held at (-1: drawn).
	h, v := SliceAxes(dims, p.Axis)
	fixed := make([]int64, dims)
	for d := range fixed {
		switch {
		case d == h || d == v:
			fixed[d] = -1
		case d == p.Axis:
			k := p.Slice - off[d]
			if k < 0 || k >= a.Shape[d] {
				return nil, fmt.Errorf("planner: slice %s = %d is outside the array (%d to %d)",
					AxisName(d, dims), p.Slice, off[d], off[d]+a.Shape[d]-1)
			}
			fixed[d] = k
		default:
			fixed[d] = a.Shape[d] / 2
		}
	}
	inSlice := func(b catalog.Box) bool {
		for d, k := range fixed {
			if k >= 0 && (k < b.Lower[d] || k >= b.Lower[d]+b.Count[d]) {
				return false
			}
		}
		return !IsEmpty(b)
	}

	// Colour keys: writer ranks, or sub-files when no rank is known.
	byFile := true
	for i := range a.Blocks {
		if a.Blocks[i].Rank >= 0 {
			byFile = false
			break
		}
	}
	keyOf := func(b *catalog.Block) string {
		if byFile {
			if b.File == "" {
				return "(inline)"
			}
			return b.File
		}
		if b.Rank < 0 {
			return "unknown"
		}
		return fmt.Sprint(b.Rank)
	}
	var keys []string
	seen := map[string]bool{}
	for i := range a.Blocks {
		if k := keyOf(&a.Blocks[i]); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, naturalCompare)
	legend := legendGroups(keys, byFile)
	colour := map[string]string{}
	for _, e := range legend.entries {
		for _, k := range e.keys {
			colour[k] = e.colour
		}
	}

	var s svgBuf
	bottom := 0.0 // lowest y used; the image is made tall enough for it

	// Header.
	pl := p.Plan
	s.text(20, 28, "font-size=\"18\" font-weight=\"bold\"", p.Title)
	what := "writer ranks"
	if byFile {
		what = "sub-files (writer ranks unknown)"
	}
	summary := fmt.Sprintf("shape %s · %d blocks", dimsList(a.Shape), pl.Blocks)
	if !byFile {
		summary += fmt.Sprintf(" from %d ranks (%d–%d per rank, mean %.3g)", pl.Ranks, pl.BlocksPerRank.Min, pl.BlocksPerRank.Max, pl.BlocksPerRank.Mean)
	}
	if byFile {
		summary += " (writer ranks unknown: the rank scope is one group)"
	}
	summary += fmt.Sprintf(" → merged cuboids: %d per-rank", pl.Cuboids.Rank)
	if pl.Cuboids.Node != nil {
		summary += fmt.Sprintf(", %d per-node", *pl.Cuboids.Node)
	}
	summary += fmt.Sprintf(", %d global", pl.Cuboids.Global)
	s.text(20, 50, "", summary)
	layout := pl.Layout.Kind
	if pl.Layout.Chunk != nil {
		layout += " " + dimsString(pl.Layout.Chunk)
	}
	reason := wrap("target layout: "+layout+" — "+pl.Layout.Reason, 170)
	for i, line := range reason {
		if i == 3 {
			break
		}
		s.text(20, float64(70+18*i), "fill=\"#333\"", line)
	}

	// Domain panel.
	if h < 0 {
		s.text(domX, domY+20, "", "scalar: nothing to draw")
	} else {
		wCount := a.Shape[h]
		hCount := int64(1)
		if v >= 0 {
			hCount = a.Shape[v]
		}
		sx := float64(domSize) / float64(max(wCount, 1))
		sy := float64(domSize) / float64(max(hCount, 1))
		toScale := true
		switch {
		case v < 0:
			sy = 40
		case sx/sy > 8 || sy/sx > 8:
			toScale = false // extreme aspect: fill the panel, say so
		default:
			sx = min(sx, sy)
			sy = sx
		}
		pw, ph := sx*float64(wCount), sy*float64(hCount)
		// y grows upward: index 0 of the vertical axis at the bottom.
		px := func(i int64) float64 { return domX + sx*float64(i) }
		py := func(j int64) float64 { return domY + ph - sy*float64(j) }
		sliceDesc := "the whole array"
		var parts []string
		for d, k := range fixed {
			if k >= 0 {
				parts = append(parts, fmt.Sprintf("%s = %d", AxisName(d, dims), k+off[d]))
			}
		}
		if len(parts) > 0 {
			sliceDesc = "slice " + strings.Join(parts, ", ")
		}
		s.text(domX, domY-14, "font-weight=\"bold\"", fmt.Sprintf("Source blocks by %s, %s", what, sliceDesc))
		fmt.Fprintf(&s.b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="url(#hole)" stroke="#555"/>`+"\n", px(0), py(hCount), pw, ph)
		for i := range a.Blocks {
			b := &a.Blocks[i]
			if !inSlice(b.Box) {
				continue
			}
			x0, x1 := px(b.Box.Lower[h]), px(b.Box.Lower[h]+b.Box.Count[h])
			y0, y1 := py(1), py(0) // no vertical axis: one row
			if v >= 0 {
				y0, y1 = py(b.Box.Lower[v]+b.Box.Count[v]), py(b.Box.Lower[v])
			}
			k := keyOf(b)
			fmt.Fprintf(&s.b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="%s" stroke="white" stroke-width="1.5"><title>block %d %s rank %d file %s</title></rect>`+"\n",
				x0, y0, x1-x0, y1-y0, colour[k], i, esc(b.Box.String()), b.Rank, esc(b.File))
			if x1-x0 >= 18 && y1-y0 >= 14 && !byFile {
				s.text((x0+x1)/2, (y0+y1)/2+4, `text-anchor="middle" font-size="10" fill="white"`, k)
			}
		}
		for _, g := range pl.MergeGroups {
			for _, c := range g.Cuboids {
				if !inSlice(c.Box) {
					continue
				}
				x0, x1 := px(c.Box.Lower[h]), px(c.Box.Lower[h]+c.Box.Count[h])
				y0, y1 := py(1), py(0)
				if v >= 0 {
					y0, y1 = py(c.Box.Lower[v]+c.Box.Count[v]), py(c.Box.Lower[v])
				}
				fmt.Fprintf(&s.b, `<rect x="%.2f" y="%.2f" width="%.2f" height="%.2f" fill="none" stroke="#111" stroke-width="2.5"><title>cuboid %s of group %d</title></rect>`+"\n",
					x0+1.25, y0+1.25, max(x1-x0-2.5, 0.5), max(y1-y0-2.5, 0.5), esc(c.Box.String()), g.Key)
			}
		}
		// Axes: ticks in global index coordinates.
		for _, t := range ticks(off[h], wCount) {
			x := px(t - off[h])
			fmt.Fprintf(&s.b, `<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="#555"/>`+"\n", x, py(0), x, py(0)+5)
			s.text(x, py(0)+18, `text-anchor="middle" font-size="11"`, fmt.Sprint(t))
		}
		s.text(domX+pw/2, py(0)+36, `text-anchor="middle"`, fmt.Sprintf("%s (axis %d)", AxisName(h, dims), h))
		if v >= 0 {
			for _, t := range ticks(off[v], hCount) {
				y := py(t - off[v])
				fmt.Fprintf(&s.b, `<line x1="%.2f" y1="%.2f" x2="%.2f" y2="%.2f" stroke="#555"/>`+"\n", px(0)-5, y, px(0), y)
				s.text(px(0)-8, y+4, `text-anchor="end" font-size="11"`, fmt.Sprint(t))
			}
			fmt.Fprintf(&s.b, `<text x="%d" y="%.2f" text-anchor="middle" transform="rotate(-90 %d %.2f)">%s (axis %d)</text>`+"\n",
				domX-45, domY+ph/2, domX-45, domY+ph/2, esc(AxisName(v, dims)), v)
		}
		if !toScale {
			s.text(domX+pw, py(0)+36, `text-anchor="end" font-size="10" fill="#a00"`, "axes not to scale")
		}
		// Legend: one swatch per rank (sub-file), or per range of them when
		// there are more than the palette's distinct colours, in columns.
		ly := py(0) + 58
		ly = s.legend(legend, ly)
		ly += 24
		fmt.Fprintf(&s.b, `<rect x="%d" y="%.2f" width="22" height="12" fill="none" stroke="#111" stroke-width="2.5"/>`+"\n", domX, ly-10)
		s.text(domX+30, ly, "font-size=\"11\"", fmt.Sprintf("merged cuboid (%s scope): %d cuboids for %d blocks", p.Scope, len(flatCuboids(pl.MergeGroups)), pl.Blocks))
		ly += 18
		fmt.Fprintf(&s.b, `<rect x="%d" y="%.2f" width="22" height="12" fill="url(#hole)" stroke="#555"/>`+"\n", domX, ly-10)
		s.text(domX+30, ly, "font-size=\"11\"", "no block (fill value)")
		bottom = ly
	}

	// Cost chart.
	bottom = max(bottom, s.chart(pl, p.Readers, patternKey(pl.Costs, a.Shape, off)))
	height := max(760, int(math.Ceil(bottom))+30)
	var doc bytes.Buffer
	fmt.Fprintf(&doc, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">
<defs><pattern id="hole" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="8" height="8" fill="#f4f4f4"/><line x1="0" y1="0" x2="0" y2="8" stroke="#d0d0d0" stroke-width="3"/></pattern></defs>
<rect width="100%%" height="100%%" fill="white"/>
`, svgW, height, svgW, height)
	doc.Write(s.b.Bytes())
	doc.WriteString("</svg>\n")
	return doc.Bytes(), nil
}

type svgBuf struct{ b bytes.Buffer }

func (s *svgBuf) text(x, y float64, attrs, text string) {
	if attrs != "" {
		attrs = " " + attrs
	}
	fmt.Fprintf(&s.b, `<text x="%.2f" y="%.2f"%s>%s</text>`+"\n", x, y, attrs, esc(text))
}

// chart draws the predicted seconds per pattern, three bars each.
// It returns the lowest y it drew at. key explains the pattern names.
func (s *svgBuf) chart(pl ArrayPlan, readers int, key []string) float64 {
	s.text(chartX, domY-14, "font-weight=\"bold\"", fmt.Sprintf("Predicted read time, %d reader(s) (shorter is better)", readers))
	if len(pl.Costs) == 0 {
		s.text(chartX, domY+20, "", "no read patterns for a scalar or empty array")
		return domY + 20
	}
	series := []struct {
		label, colour string
		get           func(PatternCost) CostFigures
		st            StorageInfo
	}{
		{"before (as written)", "#5a5a5a", func(c PatternCost) CostFigures { return c.Before }, pl.Before},
		{"merged cuboids", "#b0b0b0", func(c PatternCost) CostFigures { return c.Merged }, pl.Merged},
		{"after (target layout)", "#0868ac", func(c PatternCost) CostFigures { return c.After }, pl.After},
	}
	var top float64
	totals := make([]float64, len(series))
	for _, c := range pl.Costs {
		for i, se := range series {
			top = max(top, se.get(c).Seconds)
			totals[i] += se.get(c).Seconds
		}
	}
	if top <= 0 {
		top = 1
	}
	const labelW, barH, rowH = 60, 11, 46
	barMax := float64(chartW - labelW - 180) // room for the bar's label beside it
	y := float64(domY)
	for _, c := range pl.Costs {
		s.text(chartX, y+20, "font-weight=\"bold\"", c.Pattern)
		for i, se := range series {
			f := se.get(c)
			w := math.Max(barMax*f.Seconds/top, 1)
			by := y + 4 + float64(i)*(barH+2)
			fmt.Fprintf(&s.b, `<rect x="%d" y="%.2f" width="%.2f" height="%d" fill="%s"><title>%s, %s, %s: %d requests, %d bytes, amplification %.3g</title></rect>`+"\n",
				chartX+labelW, by, w, barH, se.colour, esc(se.label), esc(se.st.Name), esc(c.Pattern), f.Requests, f.Bytes, f.Amplification)
			s.text(chartX+labelW+w+4, by+barH-1, `font-size="10" fill="#333"`,
				fmt.Sprintf("%s · %s · ×%.3g", seconds(f.Seconds), plural(f.Requests, "req"), f.Amplification))
		}
		y += rowH
	}
	// Key and totals.
	y += 10
	for i, se := range series {
		fmt.Fprintf(&s.b, `<rect x="%d" y="%.2f" width="12" height="12" fill="%s"/>`+"\n", chartX, y-10, se.colour)
		s.text(chartX+18, y, "font-size=\"11\"", fmt.Sprintf("%s: %s, %s — total %s", se.label, se.st.Name, plural(se.st.Pieces, "piece"), seconds(totals[i])))
		y += 18
	}
	y += 6
	s.text(chartX, y, `font-size="10" fill="#666"`, "bar label: time · requests · read amplification (bytes read / bytes wanted)")
	// The pattern names, explained.
	if len(key) > 0 {
		y += 26
		s.b.WriteString(`<g id="pattern-key">` + "\n")
		s.text(chartX, y, `font-weight="bold" font-size="11"`, fmt.Sprintf("Read patterns (each read by the %d reader(s) together):", readers))
		for _, k := range key {
			for i, line := range wrap(k, keyWrap) {
				y += 15
				x := float64(chartX)
				if i > 0 {
					x += 12
				}
				s.text(x, y, `font-size="10" fill="#333"`, line)
			}
		}
		s.b.WriteString("</g>\n")
	}
	return y
}

// keyWrap is the length in runes of a pattern key line: at 10 px, about
// 6 px a rune, it stays within the chart's width.
const keyWrap = (chartW - 20) / 6

// patternKey explains each pattern of costs in one line, in their order:
// what region the pattern reads and how its readers split it. Names it does
// not know are left out.
func patternKey(costs []PatternCost, shape, off []int64) []string {
	dims := len(shape)
	axisList := func(axes []int) string {
		var names []string
		for _, d := range axes {
			names = append(names, AxisName(d, dims))
		}
		switch len(names) {
		case 0:
			return ""
		case 1:
			return names[0]
		}
		return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
	}
	var out []string
	for _, c := range costs {
		name := c.Pattern
		var what string
		switch {
		case name == "whole":
			what = "the whole array in slabs along " + AxisName(0, dims) + " (each reader reads consecutive rows)"
		case dims == 3 && (name == "xy" || name == "xz" || name == "yz"):
			fixed := 3 - strings.IndexByte("xyz", name[0]) - strings.IndexByte("xyz", name[1])
			what = fmt.Sprintf("the middle %s plane (%s = %d), split over %s",
				name, AxisName(fixed, 3), off[fixed]+shape[fixed]/2, axisList([]int{strings.IndexByte("xyz", name[0]), strings.IndexByte("xyz", name[1])}))
		case name == "sub":
			what = "the central box, half the extent along every axis, split over all axes"
		default:
			parts := strings.Split(name, "x")
			if len(parts) != dims {
				continue
			}
			var split []int
			ok := true
			for d, p := range parts {
				ok = ok && (p == "1" || p == "2")
				if p == "2" {
					split = append(split, d)
				}
			}
			if !ok || len(split) == 0 {
				continue
			}
			what = "the whole array, a grid of readers along " + axisList(split) + " (domain decomposition)"
		}
		out = append(out, name+": "+what)
	}
	return out
}

// maxLegendColours is how many keys (ranks, sub-files) get a colour each;
// beyond it they are grouped into ranges, a colour per range, so that no two
// entries of the legend share a colour.
const maxLegendColours = 20

type legendEntry struct {
	label  string // "3", "data.0", "32–63"
	title  string // the tooltip: what the entry stands for in full
	colour string
	keys   []string // the keys (ranks or files) drawn in this colour
}

type legendSet struct {
	title   string // "rank", "ranks, 32 a colour", "sub-file"
	entries []legendEntry
}

// legendGroups gives each key its own colour when there are at most
// maxLegendColours of them, and otherwise deals the sorted keys into ranges
// of a power-of-two size (ranks 0–31, 32–63, …), one colour per range. The
// "unknown" rank keeps its grey, outside the ranges.
func legendGroups(keys []string, byFile bool) legendSet {
	unit, units := "rank", "ranks"
	if byFile {
		unit, units = "sub-file", "sub-files"
	}
	var known []string
	unknown := false
	for _, k := range keys {
		if k == "unknown" && !byFile {
			unknown = true
			continue
		}
		known = append(known, k)
	}
	set := legendSet{title: unit}
	size := 1
	for (len(known)+size-1)/size > maxLegendColours {
		size *= 2
	}
	if size > 1 {
		set.title = fmt.Sprintf("%s, %d a colour", units, size)
	}
	for i := 0; i < len(known); i += size {
		g := known[i:min(i+size, len(known))]
		e := legendEntry{label: g[0], title: unit + " " + g[0], keys: g, colour: paletteColour(len(set.entries))}
		if len(g) > 1 {
			first, last := g[0], g[len(g)-1]
			e.label = first + "–" + last
			if byFile {
				e.label = shorten(first, 14) + " – " + shorten(last, 14)
			}
			e.title = fmt.Sprintf("%d %s: %s", len(g), units, strings.Join(g, ", "))
			if len(e.title) > 200 {
				e.title = fmt.Sprintf("%d %s from %s to %s", len(g), units, first, last)
			}
		} else {
			e.label = shorten(e.label, 28)
		}
		set.entries = append(set.entries, e)
	}
	if unknown {
		set.entries = append(set.entries, legendEntry{label: "unknown", title: "blocks whose writer rank is unknown", colour: "#9e9e9e", keys: []string{"unknown"}})
	}
	return set
}

// shorten keeps at most n runes of s: its end (where file names differ:
// "…/data.12"), after an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-(n-1):])
}

// naturalCompare orders strings with their digit runs compared as numbers:
// "2" < "10", "data.2" < "data.10".
func naturalCompare(x, y string) int {
	for x != "" && y != "" {
		xd, yd := isDigit(x[0]), isDigit(y[0])
		if xd != yd {
			return strings.Compare(x, y)
		}
		i, j := 1, 1
		for i < len(x) && isDigit(x[i]) == xd {
			i++
		}
		for j < len(y) && isDigit(y[j]) == yd {
			j++
		}
		a, b := x[:i], y[:j]
		if xd {
			a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
			if c := cmp.Compare(len(a), len(b)); c != 0 {
				return c
			}
		}
		if c := strings.Compare(a, b); c != 0 {
			return c
		}
		x, y = x[i:], y[j:]
	}
	return cmp.Compare(len(x), len(y))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// Legend geometry: entries are laid out in columns of legendColW (the widest
// label decides) within the domain panel's width, column by column.
const (
	legendX     = domX
	legendWidth = chartX - 30 - domX // the legend never reaches the chart
	legendRowH  = 17
)

// legendColWidth is the width of one legend column for labels of at most
// n runes (11 px text, about 6.6 px a rune, after a 12 px swatch).
func legendColWidth(n int) float64 { return 16 + 6.6*float64(n) + 14 }

// legend draws set from baseline y down and returns the last baseline used.
func (s *svgBuf) legend(set legendSet, y float64) float64 {
	s.b.WriteString(`<g id="legend">` + "\n")
	s.text(legendX, y, "font-weight=\"bold\"", set.title+":")
	if len(set.entries) == 0 {
		s.b.WriteString("</g>\n")
		return y
	}
	widest := 0
	for _, e := range set.entries {
		widest = max(widest, len([]rune(e.label)))
	}
	colW := legendColWidth(widest)
	cols := max(1, int(legendWidth/colW))
	rows := (len(set.entries) + cols - 1) / cols
	top := y + 6
	for i, e := range set.entries {
		x := legendX + float64(i/rows)*colW
		by := top + float64(i%rows+1)*legendRowH
		fmt.Fprintf(&s.b, `<rect x="%.2f" y="%.2f" width="12" height="12" fill="%s"><title>%s</title></rect>`+"\n", x, by-10, e.colour, esc(e.title))
		s.text(x+16, by, "font-size=\"11\"", e.label)
	}
	s.b.WriteString("</g>\n")
	return top + float64(rows)*legendRowH
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

func flatCuboids(gs []Group) []Cuboid {
	var out []Cuboid
	for _, g := range gs {
		out = append(out, g.Cuboids...)
	}
	return out
}

// paletteColour is a qualitative palette (Tableau 10, then its light tints),
// continued by golden-angle hues for many keys.
func paletteColour(i int) string {
	base := []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
		"#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"}
	if i < len(base) {
		return base[i]
	}
	return fmt.Sprintf("hsl(%d, 60%%, 50%%)", (i*137)%360)
}

// ticks returns about five round tick positions over [lo, lo+n].
func ticks(lo, n int64) []int64 {
	step := int64(1)
	for p := int64(1); ; p *= 10 {
		found := false
		for _, m := range []int64{1, 2, 5} {
			if n/(m*p) <= 5 {
				step, found = m*p, true
				break
			}
		}
		if found {
			break
		}
	}
	var out []int64
	start := (lo + step - 1) / step * step
	if lo < 0 {
		start = lo / step * step
	}
	for t := start; t <= lo+n; t += step {
		out = append(out, t)
	}
	return out
}

func seconds(v float64) string {
	switch {
	case v >= 1:
		return fmt.Sprintf("%.3g s", v)
	case v >= 1e-3:
		return fmt.Sprintf("%.3g ms", v*1e3)
	default:
		return fmt.Sprintf("%.3g µs", v*1e6)
	}
}

func dimsList(v []int64) string {
	if len(v) == 0 {
		return "scalar"
	}
	return dimsString(v)
}

// wrap breaks s into lines of at most n runes at spaces.
func wrap(s string, n int) []string {
	var lines []string
	var cur strings.Builder
	for _, w := range strings.Fields(s) {
		if cur.Len() > 0 && len([]rune(cur.String()))+1+len([]rune(w)) > n {
			lines = append(lines, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		cur.WriteString(w)
	}
	if cur.Len() > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

func esc(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
