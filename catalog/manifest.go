package catalog

import (
	"encoding/json"
	"fmt"
	"os"
)

// ManifestName is the manifest's file name inside an output directory.
const ManifestName = "relayout.json"

// Manifest is OUT/relayout.json: what workflow managers and `verify` parse.
type Manifest struct {
	Tool      string             `json:"tool"`    // "relayout"
	Version   string             `json:"version"` // relayout version that wrote it
	Input     ManifestInput      `json:"input"`
	Variables []ManifestVariable `json:"variables"`
	Skipped   []string           `json:"skipped,omitempty"`
}

type ManifestInput struct {
	Path   string `json:"path"`
	Format string `json:"format"`
}

type ManifestVariable struct {
	Name     string            `json:"name"`
	DType    string            `json:"dtype"` // NumPy form of the output type, e.g. "<f8"
	File     string            `json:"file"`  // relative to OUT
	Datasets []ManifestDataset `json:"datasets"`
}

type ManifestDataset struct {
	Step   int64   `json:"step"`
	Level  int     `json:"level"`
	Path   string  `json:"path"` // HDF5 dataset path inside File
	Shape  []int64 `json:"shape"`
	Offset []int64 `json:"offset"`
	Layout string  `json:"layout"` // "contiguous" or "chunked"
	Chunk  []int64 `json:"chunk,omitempty"`
	SHA256 string  `json:"sha256"` // of the logical array as row-major little-endian bytes
	// Compression is the HDF5 filter pipeline of a chunked dataset, e.g.
	// "shuffle+deflate:4"; empty when stored raw.
	Compression string `json:"compression,omitempty"`
	// Boxes is the HDF5 path of an AMR level's box table in File: int64
	// [nboxes][2][rank], lower and upper (inclusive) corners in the level's
	// global index space. Empty for non-AMR arrays.
	Boxes string `json:"boxes,omitempty"`
}

// ReadManifest reads and checks OUT/relayout.json.
func ReadManifest(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("catalog: manifest %s: %v: %w", path, err, ErrCorrupt)
	}
	if m.Tool != "relayout" {
		return nil, fmt.Errorf("catalog: manifest %s: not written by relayout: %w", path, ErrCorrupt)
	}
	return &m, nil
}
