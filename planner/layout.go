package planner

import (
	"fmt"
)

// Layout kinds.
const (
	Contiguous = "contiguous"
	Chunked    = "chunked"
)

// Layout is the storage layout of one output dataset.
type Layout struct {
	Kind  string  // Contiguous, Chunked or Merged
	Chunk []int64 // chunk shape, Chunked only; every entry in [1, shape[i]]
	// Note says why the layout is not the one asked for (a refined AMR
	// level, LevelLayout), for the run's log and the manifest; else empty.
	Note string
	// Sparse: a partly covered array whose holes dwarf its data (sparse.go):
	// units over its touched chunks only, its digest over its stored chunks.
	Sparse bool
}

// ChooseLayout picks the layout of an array of the given shape.
//
// kind is "contiguous", "chunked" or "" (chunked when a chunk shape or a
// decomposition is given, contiguous otherwise). A chunked layout takes its
// chunk shape either from chunkShape (clipped to shape) or from a
// decomposition such as 2x2x2 (chunk[i] = ceil(shape[i]/d[i])), never both.
// Scalars and zero-size arrays are always contiguous: HDF5 cannot chunk a
// scalar dataspace and there is nothing to cut in an empty one.
// Errors are usage errors (plain, no sentinel): the user's flags are wrong.
func ChooseLayout(shape []int64, kind string, chunkShape, decomposition []int64) (Layout, error) {
	switch kind {
	case "":
		if chunkShape == nil && decomposition == nil {
			kind = Contiguous
		} else {
			kind = Chunked
		}
	case Contiguous:
		if chunkShape != nil || decomposition != nil {
			return Layout{}, fmt.Errorf("planner: contiguous layout takes no chunk shape or decomposition")
		}
	case Merged:
		if chunkShape != nil || decomposition != nil {
			return Layout{}, fmt.Errorf("planner: merged layout takes no chunk shape or decomposition")
		}
		if len(shape) == 0 || isEmpty(shape) {
			return Layout{Kind: Contiguous}, nil
		}
		return Layout{Kind: Merged}, nil
	case Chunked:
		if chunkShape == nil && decomposition == nil {
			return Layout{}, fmt.Errorf("planner: chunked layout needs a chunk shape or a decomposition")
		}
	default:
		return Layout{}, fmt.Errorf("planner: unknown layout %q (want contiguous, chunked or merged)", kind)
	}
	if kind == Contiguous {
		return Layout{Kind: Contiguous}, nil
	}
	if chunkShape != nil && decomposition != nil {
		return Layout{}, fmt.Errorf("planner: give a chunk shape or a decomposition, not both")
	}
	spec, what := chunkShape, "chunk shape"
	if decomposition != nil {
		spec, what = decomposition, "decomposition"
	}
	for i, v := range spec {
		if v <= 0 {
			return Layout{}, fmt.Errorf("planner: %s %v: entry %d is %d, want > 0", what, spec, i, v)
		}
	}
	if len(shape) == 0 || isEmpty(shape) {
		return Layout{Kind: Contiguous}, nil
	}
	if len(spec) != len(shape) {
		return Layout{}, fmt.Errorf("planner: %s %v has %d dimensions, array shape %v has %d",
			what, spec, len(spec), shape, len(shape))
	}
	chunk := make([]int64, len(shape))
	for i, n := range shape {
		if decomposition != nil {
			chunk[i] = (n + spec[i] - 1) / spec[i]
		} else {
			chunk[i] = min(spec[i], n)
		}
	}
	return Layout{Kind: Chunked, Chunk: chunk}, nil
}

func isEmpty(shape []int64) bool {
	for _, n := range shape {
		if n == 0 {
			return true
		}
	}
	return false
}
