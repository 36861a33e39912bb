package planner

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"relayout/catalog"
)

// svgStats decodes doc with encoding/xml (failing on malformed XML) and
// counts the rects whose tooltip starts with each prefix.
func svgStats(t *testing.T, doc []byte) map[string]int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	counts := map[string]int{}
	var inTitle bool
	var root string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, doc)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = e.Name.Local
				if e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", e.Name.Space)
				}
			}
			inTitle = e.Name.Local == "title"
		case xml.CharData:
			if inTitle {
				counts[strings.Fields(string(e))[0]]++
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	if root != "svg" {
		t.Errorf("root element %q", root)
	}
	return counts
}

func TestRenderSVG(t *testing.T) {
	// 3-D, 16x16x16 in blocks of 8 along x and y, 4 along z, one missing
	// (a hole): 4 blocks cross each z slice except where one is absent.
	a := &catalog.Array{Var: "Y(CH4)<&>", DType: catalog.DType{Kind: catalog.Float, Size: 8},
		Shape: []int64{16, 16, 16}, Offset: []int64{100, 0, 0}}
	for i := int64(0); i < 2; i++ {
		for j := int64(0); j < 2; j++ {
			for k := int64(0); k < 4; k++ {
				if i == 1 && j == 1 && k == 2 {
					continue
				}
				a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{8 * i, 8 * j, 4 * k}, Count: []int64{8, 8, 4}},
					Rank: int32(i), File: "data.0"})
			}
		}
	}
	p, err := NewPlanner(PlanOptions{Layout: AutoLayout, Readers: 8, Scope: ScopeRank})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.PlanArray(a)
	if err != nil {
		t.Fatal(err)
	}
	pic := Picture{Title: "test <&>", Array: a, Plan: plan, Readers: 8, Scope: ScopeRank, Axis: 2, Slice: 9}
	doc, err := RenderSVG(pic)
	if err != nil {
		t.Fatal(err)
	}
	c := svgStats(t, doc)
	// z = 9 falls in the blocks with k = 2: three of them (one is the hole).
	if c["block"] != 3 {
		t.Errorf("%d blocks drawn, want 3", c["block"])
	}
	// Rank 0 owns x in [0,8): one cuboid 8x16x16; rank 1 owns x in [8,16)
	// minus the hole, whose cuboids crossing z = 9 are at least one.
	if c["cuboid"] < 2 {
		t.Errorf("%d cuboids drawn, want at least 2", c["cuboid"])
	}
	if c["before"] != 9 || c["merged"] != 9 || c["after"] != 9 { // one bar per pattern and series
		t.Errorf("bars %v", c)
	}
	for _, want := range []string{"slice z = 9", "x (axis 0)", "y (axis 1)", "rank:", ">100<", "test &lt;&amp;&gt;"} {
		if !bytes.Contains(doc, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// Ranks unknown: coloured by sub-file.
	for i := range a.Blocks {
		a.Blocks[i].Rank = -1
	}
	plan, _ = p.PlanArray(a)
	pic.Plan = plan
	if doc, err = RenderSVG(pic); err != nil || !bytes.Contains(doc, []byte("sub-file:")) {
		t.Errorf("ranks unknown: err %v, no sub-file legend", err)
	}
	svgStats(t, doc)
	// A slice outside the array (global index: offset 0 along z) is refused.
	pic.Slice = 16
	if _, err := RenderSVG(pic); err == nil {
		t.Error("slice z = 16 of 0..15 accepted")
	}
	// 1-D and scalar arrays render too.
	line := &catalog.Array{Var: "l", DType: catalog.DType{Kind: catalog.Int, Size: 4}, Shape: []int64{10},
		Blocks: []catalog.Block{{Box: catalog.Box{Lower: []int64{0}, Count: []int64{4}}, Rank: 0}, {Box: catalog.Box{Lower: []int64{4}, Count: []int64{6}}, Rank: 1}}}
	lp, _ := p.PlanArray(line)
	doc, err = RenderSVG(Picture{Title: "line", Array: line, Plan: lp, Readers: 8})
	if err != nil {
		t.Fatal(err)
	}
	if c := svgStats(t, doc); c["block"] != 2 || c["cuboid"] != 2 {
		t.Errorf("1-D: %v", c)
	}
	scalar := &catalog.Array{Var: "s", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Blocks: []catalog.Block{{Box: catalog.Box{}}}}
	sp, _ := p.PlanArray(scalar)
	if doc, err = RenderSVG(Picture{Title: "s", Array: scalar, Plan: sp, Readers: 8}); err != nil {
		t.Fatal(err)
	}
	svgStats(t, doc)
}

var updateGolden = flag.Bool("update", false, "rewrite the golden SVG files under testdata/")

// ranksArray is an n³ array in b³ blocks dealt to ranks writers after a
// shuffle (seeded: the same blocks every time), as load balancing leaves them.
func ranksArray(n, b int64, ranks int) *catalog.Array {
	a := &catalog.Array{Var: "fields/Bx", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{n, n, n}}
	nb := n / b
	perm := rand.New(rand.NewPCG(7, 7)).Perm(int(nb * nb * nb))
	for i := int64(0); i < nb; i++ {
		for j := int64(0); j < nb; j++ {
			for k := int64(0); k < nb; k++ {
				idx := (i*nb+j)*nb + k
				a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{i * b, j * b, k * b}, Count: []int64{b, b, b}},
					Rank: int32(perm[idx] % ranks), File: fmt.Sprintf("data.%d", perm[idx]%ranks%4)})
			}
		}
	}
	return a
}

func renderRanks(t *testing.T, n, b int64, ranks int) []byte {
	t.Helper()
	a := ranksArray(n, b, ranks)
	p, err := NewPlanner(PlanOptions{Layout: AutoLayout, Readers: 8, Scope: ScopeRank})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := p.PlanArray(a)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := RenderSVG(Picture{Title: fmt.Sprintf("fields/Bx step 0 — %d ranks", ranks), Array: a, Plan: plan,
		Readers: 8, Scope: ScopeRank, Axis: 2, Slice: n / 2})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestRenderSVGGolden compares the pictures of a 4-rank and a 512-rank plan
// with golden files (go test ./planner -run TestRenderSVGGolden -update
// rewrites them; look at them in a browser before committing).
func TestRenderSVGGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		n, b  int64
		ranks int
	}{{"svg-4-ranks.svg", 32, 8, 4}, {"svg-512-ranks.svg", 64, 8, 512}} {
		t.Run(tc.name, func(t *testing.T) {
			doc := renderRanks(t, tc.n, tc.b, tc.ranks)
			golden := filepath.Join("testdata", tc.name)
			if *updateGolden {
				if err := os.MkdirAll("testdata", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, doc, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(want, doc) {
				t.Errorf("SVG differs from %s (rerun with -update if the change is intended)", golden)
			}
		})
	}
}

// svgElem is one drawn element of a group of interest, in user units.
type svgElem struct {
	name          string
	x, y, w, h    float64
	text          string
	insideGroupID string
}

// svgGroups parses doc and returns the viewBox and the rect and text
// elements inside the <g> elements with the given ids (a text's extent is
// estimated at 0.64 em a rune, a little wider than DejaVu Sans' digits).
func svgGroups(t *testing.T, doc []byte, ids ...string) (vw, vh float64, elems []svgElem) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	num := func(s string, def float64) float64 {
		if s == "" {
			return def
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("attribute %q is not a number", s)
		}
		return v
	}
	var group string
	depth, groupDepth := 0, -1
	var cur *svgElem
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case e.Name.Local == "svg":
				f := strings.Fields(attr(e, "viewBox"))
				if len(f) != 4 || num(f[0], 0) != 0 || num(f[1], 0) != 0 {
					t.Fatalf("viewBox %q", attr(e, "viewBox"))
				}
				vw, vh = num(f[2], 0), num(f[3], 0)
			case e.Name.Local == "g" && slices.Contains(ids, attr(e, "id")):
				group, groupDepth = attr(e, "id"), depth
			case group != "" && (e.Name.Local == "rect" || e.Name.Local == "text"):
				el := svgElem{name: e.Name.Local, x: num(attr(e, "x"), 0), y: num(attr(e, "y"), 0), insideGroupID: group}
				if e.Name.Local == "rect" {
					el.w, el.h = num(attr(e, "width"), 0), num(attr(e, "height"), 0)
				} else {
					el.h = num(attr(e, "font-size"), 12) // the baseline is y; the glyphs rise above it
				}
				elems = append(elems, el)
				cur = &elems[len(elems)-1]
			}
		case xml.CharData:
			if cur != nil && cur.name == "text" {
				cur.text += string(e)
			}
		case xml.EndElement:
			if e.Name.Local == "text" || e.Name.Local == "rect" {
				cur = nil
			}
			if depth == groupDepth {
				group, groupDepth = "", -1
			}
			depth--
		}
	}
	for i := range elems {
		if el := &elems[i]; el.name == "text" {
			size := el.h
			el.w = 0.64 * size * float64(utf8.RuneCountInString(el.text))
			el.y -= size
		}
	}
	return vw, vh, elems
}

// TestSVGLegendInsideViewBox: with 4 or 512 ranks every element of the
// legend and of the pattern key lies inside the picture, the legend's
// colours are distinct, and every pattern of the chart is explained.
func TestSVGLegendInsideViewBox(t *testing.T) {
	for _, tc := range []struct {
		n, b          int64
		ranks, swatch int
	}{{32, 8, 4, 4}, {128, 8, 512, 16}, {64, 4, 4096, 16}, {64, 8, 24, 12}} {
		doc := renderRanks(t, tc.n, tc.b, tc.ranks)
		vw, vh, elems := svgGroups(t, doc, "legend", "pattern-key")
		var swatches int
		var key []string
		colours := map[string]bool{}
		for _, el := range elems {
			if el.x < 0 || el.y < 0 || el.x+el.w > vw || el.y+el.h > vh {
				t.Errorf("%d ranks: %s %q at (%.0f,%.0f) size %.0fx%.0f lies outside the viewBox 0 0 %.0f %.0f",
					tc.ranks, el.name, el.text, el.x, el.y, el.w, el.h, vw, vh)
			}
			if el.insideGroupID == "legend" && el.name == "rect" {
				swatches++
			}
			if el.insideGroupID == "pattern-key" && el.name == "text" {
				key = append(key, el.text)
			}
		}
		for _, m := range regexp.MustCompile(`<g id="legend">(?s:.*?)</g>`).FindAll(doc, -1) {
			for _, c := range regexp.MustCompile(`fill="([^"]+)"`).FindAllSubmatch(m, -1) {
				if colours[string(c[1])] {
					t.Errorf("%d ranks: colour %s used twice in the legend", tc.ranks, c[1])
				}
				colours[string(c[1])] = true
			}
		}
		if swatches != tc.swatch {
			t.Errorf("%d ranks: %d legend entries, want %d", tc.ranks, swatches, tc.swatch)
		}
		joined := strings.Join(key, " ")
		for _, name := range []string{"whole:", "xy:", "xz:", "yz:", "sub:", "2x1x1:", "1x2x1:", "1x1x2:", "2x2x2:"} {
			if !strings.Contains(joined, name) {
				t.Errorf("%d ranks: the pattern key lacks %q: %q", tc.ranks, name, joined)
			}
		}
		if !strings.Contains(joined, "the middle xy plane (z = ") || !strings.Contains(joined, "readers along y (domain decomposition)") {
			t.Errorf("%d ranks: pattern key %q", tc.ranks, joined)
		}
	}
}

func TestNaturalCompare(t *testing.T) {
	got := []string{"data.10", "data.2", "b", "data.1", "10", "9", "a10b", "a9c", "unknown", "data.002x", ""}
	slices.SortFunc(got, naturalCompare)
	want := []string{"", "9", "10", "a9c", "a10b", "b", "data.1", "data.2", "data.002x", "data.10", "unknown"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestSVGLegendSubFiles: with writer ranks unknown the legend names
// sub-files; 300 of them with long names are grouped into ranges whose
// labels are shortened, and every entry stays inside the picture. Blocks of
// an unknown rank beside known ones get the grey "unknown" entry.
func TestSVGLegendSubFiles(t *testing.T) {
	a := ranksArray(64, 4, 300)
	for i := range a.Blocks {
		a.Blocks[i].File = fmt.Sprintf("simulation_output_with_a_long_name.bp.dir/data.%d", a.Blocks[i].Rank)
		a.Blocks[i].Rank = -1
	}
	p, err := NewPlanner(PlanOptions{Layout: Contiguous, Readers: 4, Scope: ScopeRank})
	if err != nil {
		t.Fatal(err)
	}
	for _, mixed := range []bool{false, true} {
		if mixed {
			for i := range a.Blocks {
				if i%3 != 0 {
					a.Blocks[i].Rank = int32(i % 7)
				}
			}
		}
		plan, err := p.PlanArray(a)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := RenderSVG(Picture{Title: "sub-files", Array: a, Plan: plan, Readers: 4, Scope: ScopeRank, Axis: 0, Slice: 10})
		if err != nil {
			t.Fatal(err)
		}
		vw, vh, elems := svgGroups(t, doc, "legend")
		var labels []string
		for _, el := range elems {
			if el.x < 0 || el.y < 0 || el.x+el.w > vw || el.y+el.h > vh {
				t.Errorf("mixed %v: %s %q outside the viewBox", mixed, el.name, el.text)
			}
			if el.name == "text" {
				labels = append(labels, el.text)
			}
		}
		joined := strings.Join(labels, "|")
		switch {
		case !mixed && (!strings.Contains(joined, "sub-files, 16 a colour:") || !strings.Contains(joined, "…p.dir/data.16 – …p.dir/data.31")):
			t.Errorf("sub-file legend %q", joined)
		case mixed && (!strings.Contains(joined, "rank:") || !strings.Contains(joined, "|unknown")):
			t.Errorf("mixed legend %q", joined)
		}
	}
}
