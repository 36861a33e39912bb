package job

import (
	"fmt"
	"io"

	"relayout/catalog"
	"relayout/planner"
)

// layoutFor is the per-array layout choice of the layouts decided array by
// array (Auto, and Chunked with ChunkAuto), as relayout plan predicts them
// (planner.LayoutFor with the spec's PlanOptions); nil for the others,
// which the rewriter applies itself. Each distinct choice per variable is
// logged once on logw.
func layoutFor(spec Spec, logw io.Writer) func(*catalog.Array) (planner.Layout, error) {
	if spec.Layout != Auto && !spec.ChunkAuto {
		return nil
	}
	opts := spec.PlanOptions()
	prefix := "layout auto"
	if spec.ChunkAuto {
		prefix = "layout (--compress without --layout)"
	}
	logged := map[string]bool{}
	return func(a *catalog.Array) (planner.Layout, error) {
		o := opts
		o.Series = planner.IsSeries(a) // a climate time series: its maps and point series weighed
		l, why, err := planner.LayoutFor(a.Shape, a.DType.Size, a.BlockGrain(), o)
		if err != nil {
			return l, err
		}
		name := l.Kind
		if l.Kind == planner.Chunked {
			name += " " + Dims(l.Chunk)
		}
		if key := a.Var + "\x00" + name; !logged[key] {
			logged[key] = true
			fmt.Fprintf(logw, "%s: %s: %s (%s)\n", prefix, a.Var, name, why)
		}
		return l, nil
	}
}
