package catalog

import "testing"

func TestMeshLevel(t *testing.T) {
	for v, want := range map[string]int{
		"rho": 0, "rho_lvl1": 1, "E_lvl2/x": 2, "E_lvl12/x": 12, "rho_lvl": 0, "rho_lvl0": 0, "rho_lvl01": 0,
		"a_lvlx": 0, "_lvl1": 0, "E/x_lvl1": 0, "particles/e_lvl1/position/x": 0, "rho_lvl99999999999999999999": 0,
	} {
		if got := MeshLevel(v); got != want {
			t.Errorf("MeshLevel(%q) = %d, want %d", v, got, want)
		}
	}
}

func TestSetLevelBoxes(t *testing.T) {
	blocks := []Block{{Box: Box{Lower: []int64{0, 0}, Count: []int64{8, 16}}}, {Box: Box{Lower: []int64{16, 8}, Count: []int64{8, 8}}},
		{Box: Box{Lower: []int64{0, 0}, Count: []int64{0, 4}}}}
	a := &Array{Var: "E_lvl1/x", Shape: []int64{32, 32}, Blocks: blocks}
	SetLevelBoxes(a)
	if len(a.Boxes) != 2 || a.Boxes[1].Lower[0] != 16 || a.Boxes[1].Count[1] != 8 {
		t.Errorf("boxes %v", a.Boxes)
	}
	c := &Array{Var: "temp", Level: 2, Shape: []int64{32, 32}, Blocks: blocks}
	SetLevelBoxes(c)
	if len(c.Boxes) != 2 {
		t.Errorf("level 2: boxes %v", c.Boxes)
	}
	for _, b := range []*Array{{Var: "rho", Shape: []int64{32, 32}, Blocks: blocks}, {Var: "particles/e_lvl1/x", Species: "e_lvl1", Shape: []int64{4}, Blocks: blocks}} {
		SetLevelBoxes(b)
		if b.Boxes != nil {
			t.Errorf("%s: boxes %v", b.Var, b.Boxes)
		}
	}
}

// HoleBytes: the part of a refined level's (or an openPMD _lvl record's)
// domain that no box covers; level 0 and box-less arrays have none.
func TestVariablesHoleBytes(t *testing.T) {
	s, err := CreateStore(t.TempDir() + "/c.db")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f64 := DType{Kind: Float, Size: 8}
	box := Box{Lower: []int64{0, 0}, Count: []int64{4, 4}}
	blk := []Block{{Box: box, File: "f", Length: 128}}
	for _, a := range []*Array{
		{Var: "rho", Level: 0, DType: f64, Shape: []int64{8, 8}, Boxes: []Box{box}, Blocks: blk},
		{Var: "rho", Level: 1, DType: f64, Shape: []int64{16, 16}, Boxes: []Box{box, {Lower: []int64{8, 8}, Count: []int64{4, 4}}}, Blocks: blk},
		{Var: "E_lvl1/x", DType: f64, Shape: []int64{16, 16}, Boxes: []Box{box}, Blocks: blk},
		{Var: "plain", Level: 1, DType: f64, Shape: []int64{16, 16}, Blocks: blk},
	} {
		if err := s.Put(a); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := s.Variables()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"rho": (256 - 32) * 8, "E_lvl1/x": (256 - 16) * 8, "plain": 0}
	for _, v := range vs {
		if v.HoleBytes != want[v.Name] {
			t.Errorf("%s: HoleBytes %d, want %d", v.Name, v.HoleBytes, want[v.Name])
		}
	}
}
