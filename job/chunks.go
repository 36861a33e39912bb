package job

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/planner"
)

// ChunkNotes (run, run --resume, plan, plan -o; verb names the command) reports, before any output is written, what --chunks or
// --chunk-shape give the arrays of store where that is not what the flag
// literally says, and accepts it (README: "Chunk shapes"):
//
//   - --chunks N1xN2x...: chunk side i is ceil(shape_i / N_i). When N_i does
//     not divide shape_i the edge chunks are smaller; when shape_i < N_i
//     (or the rounding leaves fewer parts) there are fewer chunks than asked.
//   - --chunk-shape C1,C2,...: a side larger than the array is clipped to it.
//
// One line per distinct array shape, naming its first array and how many
// others share it. A chunking the planner refuses (a rank that does not fit)
// is returned as a usage error naming the array.
func ChunkNotes(ctx context.Context, verb string, store *catalog.Store, chunkShape, chunks []int64, w io.Writer) error {
	if chunkShape == nil && chunks == nil {
		return nil
	}
	vars, err := store.Variables()
	if err != nil {
		return err
	}
	type seen struct {
		first string
		more  int
		note  string
	}
	byShape := map[string]*seen{}
	var order []string
	for _, v := range vars {
		err := store.EachArrayHeader(ctx, v.Name, func(a *catalog.Array) error {
			if a.Constant {
				return nil // a constant record: no data, no chunks
			}
			shape, grid := planner.ArrayChunks(a, chunkShape, chunks)
			key := Dims(a.Shape) + fmt.Sprint(shape, grid)
			if s, ok := byShape[key]; ok {
				s.more++
				return nil
			}
			l, err := planner.ChooseLayout(a.Shape, planner.Chunked, shape, grid)
			if err != nil {
				return Usagef("%s: %s step %d: %v", verb, a.Var, a.Step, err)
			}
			byShape[key] = &seen{first: a.Var, note: chunkNote(a.Shape, l, shape, grid, "\x00")}
			order = append(order, key)
			return nil
		})
		if err != nil {
			return err
		}
	}
	for _, key := range order {
		s := byShape[key]
		if s.note == "" {
			continue
		}
		who := s.first
		if s.more > 0 {
			who += fmt.Sprintf(" and %d other array%s", s.more, map[bool]string{true: "s"}[s.more > 1])
		}
		fmt.Fprintf(w, "note: %s\n", strings.Replace(s.note, "\x00", " ("+who+")", 1))
	}
	return nil
}

// chunkNote is the note for one array shape, or "" when the flag is exact.
// who is inserted after the shape.
func chunkNote(shape []int64, l planner.Layout, chunkShape, chunks []int64, who string) string {
	if l.Kind != planner.Chunked || len(shape) == 0 {
		return ""
	}
	grid := make([]int64, len(shape))
	edge := make([]int64, len(shape))
	for i, n := range shape {
		grid[i] = (n + l.Chunk[i] - 1) / l.Chunk[i]
		edge[i] = n - (grid[i]-1)*l.Chunk[i]
	}
	if chunks != nil {
		if slices.Equal(grid, chunks) && slices.Equal(edge, l.Chunk) {
			return ""
		}
		var b strings.Builder
		fmt.Fprintf(&b, "--chunks %s on shape %s%s: chunks of %s", Dims(chunks), Dims(shape), who, Dims(l.Chunk))
		if !slices.Equal(edge, l.Chunk) {
			fmt.Fprintf(&b, ", the last along each axis %s (the shape is not a multiple of the decomposition)", Dims(edge))
		}
		if !slices.Equal(grid, chunks) {
			fmt.Fprintf(&b, "; %s chunks, fewer than asked (an axis is shorter than its part count)", Dims(grid))
		}
		return b.String()
	}
	if slices.Equal(l.Chunk, chunkShape) {
		return ""
	}
	return fmt.Sprintf("--chunk-shape %s is larger than shape %s%s: clipped to chunks of %s",
		Dims(chunkShape), Dims(shape), who, Dims(l.Chunk))
}
