package planner

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"

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
					Rank: int(i), File: "data.0"})
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
