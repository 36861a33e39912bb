package rewriter

import (
	"bytes"
	"compress/zlib"
	"fmt"

	"relayout/catalog"
	"relayout/internal/h5"
)

// encodeChunk returns a chunk as stored: a private copy when level is 0
// (cutChunks reuses its buffer), else HDF5's shuffle filter (for elements
// wider than a byte) followed by its deflate filter (a zlib stream), the
// pipeline h5py and h5repack use.
func encodeChunk(data []byte, elemSize, level int) ([]byte, error) {
	if level == 0 {
		out := make([]byte, len(data))
		catalog.Populate(out)
		copy(out, data)
		return out, nil
	}
	src := data
	if elemSize > 1 {
		src = shuffle(data, elemSize)
	}
	var out bytes.Buffer
	out.Grow(len(src) / 2)
	zw, err := zlib.NewWriterLevel(&out, level)
	if err != nil {
		return nil, fmt.Errorf("deflate level %d: %w", level, err)
	}
	if _, err := zw.Write(src); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// shuffle groups byte k of every element together (HDF5's shuffle filter);
// a tail shorter than one element is copied unchanged.
func shuffle(data []byte, size int) []byte {
	n := len(data) / size
	out := make([]byte, len(data))
	for k := 0; k < size; k++ {
		dst := out[k*n : (k+1)*n]
		for e := range n {
			dst[e] = data[e*size+k]
		}
	}
	copy(out[n*size:], data[n*size:])
	return out
}

// compression names a dataset's filter pipeline for the manifest.
func compression(spec h5.DatasetSpec) string {
	switch {
	case spec.Deflate > 0 && spec.Shuffle:
		return fmt.Sprintf("shuffle+deflate:%d", spec.Deflate)
	case spec.Deflate > 0:
		return fmt.Sprintf("deflate:%d", spec.Deflate)
	}
	return ""
}
