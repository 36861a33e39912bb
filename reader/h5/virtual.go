package h5

import (
	"fmt"

	"relayout/catalog"
	ih5 "relayout/internal/h5"
)

// buildVirtual lists the blocks of a virtual dataset (HDF5 VDS) whose
// mappings are whole datasets of the same file ("."), each placed at one box
// and not themselves virtual: relayout's merged layout stores the cuboids of
// a partially covered array that way. Each source's blocks (one for a
// contiguous source) are shifted to its box; the rest of the array holds the
// virtual dataset's fill value (a.Fill). Other mappings (other files,
// partial or strided selections, overlapping boxes) are refused as
// unsupported.
func buildVirtual(hf *ih5.File, file string, size int64, path string, a *catalog.Array) (*catalog.Array, error) {
	maps, err := hf.VirtualMappings(path)
	if err != nil {
		return nil, err
	}
	rank := len(a.Shape)
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("reader/h5: %s: virtual dataset %s: %s: %w", file, path, fmt.Sprintf(format, args...), catalog.ErrUnsupported)
	}
	var covered int64
	for _, m := range maps {
		if m.File != "." {
			return nil, refuse("source in file %q (only sources in the same file are read)", m.File)
		}
		if !m.Whole || len(m.Box.Lower) != rank {
			return nil, refuse("source %s is not mapped whole onto one box", m.Dataset)
		}
		src, err := buildArray(hf, file, size, m.Dataset)
		if err != nil {
			return nil, err
		}
		if len(src.Shape) != rank || (catalog.Box{Count: src.Shape}).Elements() != m.Box.Elements() {
			return nil, refuse("source %s of shape %v mapped onto %v", m.Dataset, src.Shape, m.Box)
		}
		for d := range rank {
			if src.Shape[d] != m.Box.Count[d] || m.Box.Lower[d] < 0 || m.Box.Lower[d]+m.Box.Count[d] > a.Shape[d] {
				return nil, refuse("source %s of shape %v mapped onto %v in shape %v", m.Dataset, src.Shape, m.Box, a.Shape)
			}
		}
		if src.DType != a.DType {
			return nil, refuse("source %s of type %s in a dataset of type %s", m.Dataset, src.DType, a.DType)
		}
		var library []catalog.Codec
		for _, b := range src.Blocks {
			for d := range rank {
				b.Box.Lower[d] += m.Box.Lower[d]
			}
			if libraryBlock(&b) { // read the box of the virtual dataset
				if library == nil {
					library = libraryCodecs(path)
				}
				b.Codecs = library
			}
			a.Blocks = append(a.Blocks, b)
		}
		covered += m.Box.Elements()
	}
	if covered > a.Elements() {
		return nil, refuse("sources overlap (%d elements mapped onto %d)", covered, a.Elements())
	}
	return a, nil
}
