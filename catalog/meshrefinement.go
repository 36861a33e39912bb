package catalog

import (
	"strconv"
	"strings"
)

// The openPMD mesh-refinement extension names level N > 0 of record "rho"
// "rho_lvlN" ("E_lvl1/x" for component x of vector record E) and stores it
// as a dataset over the previous level's whole extent, whose patches are
// the chunks the writer stored. Readers of openPMD input keep such a record
// under its own name (it is already laid out as relayout writes levels) and
// give it its patches as Boxes (SetLevelBoxes), so that the writer chunks it
// sparsely and writes its box table like any AMR level's.

// MeshLevel is the refinement level an openPMD mesh variable's record name
// declares: 2 for "E_lvl2/x", 1 for "rho_lvl1", 0 for anything else
// (particle records, "rho", "rho_lvl", "rho_lvl0", "a_lvlx").
func MeshLevel(v string) int {
	if strings.HasPrefix(v, ParticlesPrefix) {
		return 0
	}
	rec, _, _ := strings.Cut(v, "/")
	i := strings.LastIndex(rec, "_lvl")
	if i <= 0 {
		return 0
	}
	digits := rec[i+len("_lvl"):]
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" || digits[0] == '0' {
		return 0
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n > 1<<20 {
		return 0
	}
	return n
}

// SetLevelBoxes gives a, a refined level without a box table (an openPMD
// mesh-refinement record, MeshLevel of its Var > 0, or a relayout output's
// level read back, Level > 0), the boxes of its blocks (the patches the
// writer stored, or the chunks) as Boxes. Other arrays are left alone.
func SetLevelBoxes(a *Array) {
	if a.Boxes != nil || a.Species != "" || a.Constant || len(a.Shape) == 0 || len(a.Blocks) == 0 || (a.Level == 0 && MeshLevel(a.Var) == 0) {
		return
	}
	a.Boxes = make([]Box, 0, len(a.Blocks))
	for i := range a.Blocks {
		b := a.Blocks[i].Box
		if b.Elements() == 0 {
			continue
		}
		a.Boxes = append(a.Boxes, Box{Lower: append([]int64(nil), b.Lower...), Count: append([]int64(nil), b.Count...)})
	}
}
