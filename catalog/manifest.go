package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

// ManifestName is the manifest's file name inside an output directory.
const ManifestName = "relayout.json"

// ManifestSchema names the manifest's format; keys are only ever added.
const ManifestSchema = "relayout-manifest/1"

// ConstantLayout is the manifest layout of a constant array (Array.Constant):
// an openPMD constant record component, a group with "value" and "shape"
// attributes and no data.
const ConstantLayout = "constant"

// Manifest is OUT/relayout.json: what workflow managers and `verify` parse.
type Manifest struct {
	// Schema is ManifestSchema (absent in manifests of older versions).
	Schema  string        `json:"schema,omitempty"`
	Tool    string        `json:"tool"`    // "relayout"
	Version string        `json:"version"` // relayout version that wrote it
	Input   ManifestInput `json:"input"`
	// Options are the options that shaped the output.
	Options *ManifestOptions `json:"options,omitempty"`
	// Started and Finished are when the job began (catalog) and when its
	// output was verified and ready to commit, in UTC.
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	// Verified is whether every element of the output was read back and
	// compared with the input before the commit (false with --no-verify).
	Verified  *bool              `json:"verified,omitempty"`
	Variables []ManifestVariable `json:"variables"`
	// Series is the file (relative to OUT) that joins every variable's
	// datasets into one group-based openPMD series through HDF5 virtual
	// datasets and external links ("series.h5"); empty when none was written.
	Series string `json:"series,omitempty"`
	// SeriesFiles are the files (relative to OUT) that series.h5 reads
	// through: its virtual datasets read as the fill value, without an
	// error, when one of them is missing, so verify checks them.
	SeriesFiles []string `json:"series_files,omitempty"`
	Skipped     []string `json:"skipped,omitempty"`
	// Views are the ParaView views (VTKHDF 1.0 ImageData files, one per
	// step and grid) whose arrays are virtual datasets over the variables'
	// datasets; empty with --no-views or when no array has a uniform mesh.
	Views []ManifestView `json:"views,omitempty"`
	// ViewsSkipped says what got no view and why (netCDF time series,
	// particles, refined AMR levels, --no-views).
	ViewsSkipped []string `json:"views_skipped,omitempty"`
	// IO is the run's I/O profile (bytes, request counts, time per stage;
	// a journaled job's: what its journal records know, ManifestIO.From)
	// and its verify phase's reads; absent in manifests of older versions.
	IO *ManifestIO `json:"io,omitempty"`
	// Report is the job's per-variable account (relayout commit and run
	// --resume, see catalog.Report); absent for a plain relayout run.
	Report *Report `json:"report,omitempty"`
	// Appends are what each relayout run --append added to the output,
	// oldest first; absent for an output no append has extended.
	Appends []ManifestAppend `json:"appends,omitempty"`
}

// ManifestView is one ParaView view file (relative to OUT) of one step:
// its ImageData geometry, as written in its /VTKHDF attributes, and its
// arrays.
type ManifestView struct {
	File        string              `json:"file"`
	Step        int64               `json:"step"`
	Type        string              `json:"type"` // "ImageData", "OverlappingAMR", "GDF" or "UnstructuredGrid"
	WholeExtent []int64             `json:"whole_extent,omitempty"`
	Origin      []float64           `json:"origin,omitempty"`
	Spacing     []float64           `json:"spacing,omitempty"`
	Direction   []float64           `json:"direction,omitempty"` // row-major 3x3
	Arrays      []ManifestViewArray `json:"arrays"`
	// Levels are an OverlappingAMR view's levels (Arrays is then empty):
	// /VTKHDF/Level<L> with its Spacing, its AMRBox table and its arrays.
	Levels []ManifestViewLevel `json:"levels,omitempty"`
	// Points is an UnstructuredGrid view's number of particles (VERTEX
	// cells); its arrays named "Points/<x|y|z>" map a position component
	// into that column of /VTKHDF/Points, the others are PointData.
	Points int64 `json:"points,omitempty"`
}

// ManifestViewLevel is one level of an OverlappingAMR view: its spacing
// (VTK's x, y, z: the arrays' last, middle, first axis), the number of its
// boxes (rows of /VTKHDF/Level<L>/AMRBox) and its arrays, each a 1-D
// virtual dataset of Shape [cells of every box] mapping each box, in
// AMRBox's order, to its hyperslab of the level's dataset Path of File.
type ManifestViewLevel struct {
	Level   int                 `json:"level"`
	Spacing []float64           `json:"spacing"`
	Boxes   int                 `json:"boxes"`
	Arrays  []ManifestViewArray `json:"arrays"`
}

// ManifestViewArray is one array of a view: the virtual dataset Dataset of
// the view, of shape Shape, presents the whole dataset Path of File
// (variable Var's file).
type ManifestViewArray struct {
	Name    string  `json:"name"`
	Var     string  `json:"var"`
	File    string  `json:"file"`
	Path    string  `json:"path"`
	Dataset string  `json:"dataset"`
	Shape   []int64 `json:"shape"`
	// Units are a GDF view's field_units of the array (yt's unit string
	// of the input's openPMD unitSI and unitDimension; "" when the input
	// gives none); absent for other views and in older manifests.
	Units *string `json:"units,omitempty"`
}

// ManifestOptions are the options of the job that wrote the output.
type ManifestOptions struct {
	Layout     string   `json:"layout"`                // contiguous, chunked, merged or auto
	ChunkShape []int64  `json:"chunk_shape,omitempty"` // --chunk-shape as given
	Chunks     []int64  `json:"chunks,omitempty"`      // --chunks (decomposition) as given
	Vars       []string `json:"vars,omitempty"`        // --var selection
	// Compression is "deflate:N" (with shuffle), or "none".
	Compression  string `json:"compression"`
	Digest       string `json:"digest"` // sha256, blake3, xxh64 or none (Digest's names; Manifest.DigestKind)
	NetCDF       bool   `json:"netcdf"`
	Readers      int    `json:"readers,omitempty"` // --layout auto
	Scope        string `json:"scope,omitempty"`   // --layout merged
	RanksPerNode int    `json:"ranks_per_node,omitempty"`
	// MaxMem and Jobs are the budget of the process that wrote the output
	// (relayout run); absent for a sharded job, whose shards had their own.
	MaxMem int64 `json:"max_mem,omitempty"`
	Jobs   int   `json:"jobs,omitempty"`
	Shards int   `json:"shards,omitempty"` // a sharded job (plan -o, run --resume)
	// Fill (--fill): partly covered arrays written dense (contiguous, holes
	// as fill values) instead of chunked with their holes unallocated.
	Fill bool `json:"fill,omitempty"`
	// NoViews (--no-views): no ParaView views were made.
	NoViews bool `json:"no_views,omitempty"`
}

// Encode is the manifest's JSON as written to OUT/relayout.json: indented,
// without HTML escaping (dtypes like "<f8" stay readable).
func (m *Manifest) Encode() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
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
	// Constants are the variable's constant arrays (layout "constant"):
	// openPMD constant record components, groups with "value" and "shape"
	// attributes rather than HDF5 datasets, so they are kept apart from
	// Datasets, which h5py reads as arrays.
	Constants []ManifestDataset `json:"constants,omitempty"`
	// Species is the openPMD particle species of a particle record
	// component (catalog.Array.Species); absent for meshes.
	Species string `json:"species,omitempty"`
	// Storage is how the file was laid out on its file system.
	Storage *ManifestStorage `json:"storage,omitempty"`
}

// ManifestStorage records the file-system layout decision for one file.
type ManifestStorage struct {
	FS             string `json:"fs"`      // "lustre", "gpfs", "beegfs", "nfs", "local"
	FSName         string `json:"fs_name"` // e.g. "ext4", "tmpfs"
	StripeCount    int    `json:"stripe_count,omitempty"`
	StripeSize     int64  `json:"stripe_size,omitempty"`
	Striped        bool   `json:"striped,omitempty"`      // the stripes were set
	StripeError    string `json:"stripe_error,omitempty"` // why they could not be
	Alignment      int64  `json:"alignment,omitempty"`    // HDF5 alignment of objects >= AlignThreshold
	AlignThreshold int64  `json:"align_threshold,omitempty"`
}

type ManifestDataset struct {
	Step   int64   `json:"step"`
	Level  int     `json:"level"`
	Path   string  `json:"path"` // HDF5 dataset path inside File
	Shape  []int64 `json:"shape"`
	Offset []int64 `json:"offset"`
	Layout string  `json:"layout"` // "contiguous", "chunked", "merged" or "constant" (ConstantLayout)
	// Cuboids is the number of merged cuboids written as units (layout
	// "merged"); for a partially covered array, also the number of cuboid
	// datasets behind its virtual dataset.
	Cuboids int     `json:"cuboids,omitempty"`
	Chunk   []int64 `json:"chunk,omitempty"`
	// The digest of the logical array as row-major little-endian bytes,
	// under the name of the manifest's algorithm (options.digest): SHA256
	// with sha256 (the field every manifest has, empty with another
	// algorithm), BLAKE3 with blake3, XXH64 with xxh64. Sum and SetSum
	// pick the field.
	SHA256 string `json:"sha256"`
	BLAKE3 string `json:"blake3,omitempty"`
	XXH64  string `json:"xxh64,omitempty"`
	// DigestOf says what the digest is of when it is not the logical
	// array: DigestStoredChunks for a sparse array (planner's sparse.go),
	// whose logical bytes (8 TiB of fill values for a 2^40 float64 array
	// with one chunk written) nobody can afford to hash.
	DigestOf string `json:"digest_of,omitempty"`
	// Compression is the HDF5 filter pipeline of a chunked dataset, e.g.
	// "shuffle+deflate:4"; empty when stored raw.
	Compression string `json:"compression,omitempty"`
	// Boxes is the HDF5 path of an AMR level's box table in File: int64
	// [nboxes][2][rank], lower and upper (inclusive) corners in the level's
	// global index space. Empty for non-AMR arrays.
	Boxes string `json:"boxes,omitempty"`
	// Note says why the layout is not the one asked for: a refined AMR
	// level is always chunked (planner.LevelLayout), and so is a partly
	// covered array asked contiguous, unless --fill (planner.HoleLayout).
	Note string `json:"note,omitempty"`
	// Var is the input variable this dataset holds when it is not its
	// file's own: a netCDF time series file holds copies of the variable's
	// coordinate and ancillary variables beside it ("time", "lat",
	// "time_bnds"); empty for the file's own variable.
	Var string `json:"var,omitempty"`
}

// Key is the input array dataset d of variable v holds: d.Var's when set
// (a copy of another variable), else v's, at d's step and level.
func (v *ManifestVariable) Key(d *ManifestDataset) Key {
	name := v.Name
	if d.Var != "" {
		name = d.Var
	}
	return Key{Var: name, Step: d.Step, Level: d.Level}
}

// IsCopy reports whether d holds another variable than v (ManifestDataset.Var).
func (v *ManifestVariable) IsCopy(d *ManifestDataset) bool { return d.Var != "" && d.Var != v.Name }

// DigestKind is the algorithm of the manifest's digests: options.digest,
// or SHA256 for a manifest without options (one of an older version, or a
// stage's before commit writes them).
func (m *Manifest) DigestKind() (Digest, error) {
	if m.Options == nil || m.Options.Digest == "" {
		return SHA256, nil
	}
	return ParseDigest(m.Options.Digest)
}

// Sum is the dataset's digest of algorithm k ("" when not recorded).
func (d *ManifestDataset) Sum(k Digest) string {
	switch k {
	case SHA256:
		return d.SHA256
	case XXH64:
		return d.XXH64
	case BLAKE3:
		return d.BLAKE3
	}
	return ""
}

// SetSum records the dataset's digest of algorithm k (NoDigest: nothing).
func (d *ManifestDataset) SetSum(k Digest, sum string) {
	switch k {
	case SHA256:
		d.SHA256 = sum
	case XXH64:
		d.XXH64 = sum
	case BLAKE3:
		d.BLAKE3 = sum
	}
}

// ReadManifest reads and checks OUT/relayout.json.
func ReadManifest(path string) (*Manifest, error) {
	// Not a FIFO or device: reading one would block or never end.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		return nil, fmt.Errorf("catalog: manifest %s: not a regular file: %w", path, ErrUnsupported)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog: manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, Corrupt("relayout", path, -1, "manifest: %v", err)
	}
	if m.Tool != "relayout" {
		return nil, Corrupt("relayout", path, -1, "manifest: not written by relayout")
	}
	if _, err := m.DigestKind(); err != nil {
		return nil, Corrupt("relayout", path, -1, "manifest: options: %v", err)
	}
	return &m, nil
}

// ManifestAppend is what one relayout run --append added to an output
// (Manifest.Appends, oldest first): the input files new or grown since the
// output it extended, and the datasets it added (each a variable's array at
// a step and level).
type ManifestAppend struct {
	Finished *time.Time            `json:"finished,omitempty"`
	Inputs   []string              `json:"inputs,omitempty"`
	Datasets []ManifestAppendedKey `json:"datasets"`
}

// ManifestAppendedKey names one dataset an append added: variable Var's
// dataset Path of its file, the input array at Step and Level.
type ManifestAppendedKey struct {
	Var   string `json:"var"`
	Step  int64  `json:"step"`
	Level int    `json:"level"`
	Path  string `json:"path"`
	// ExtendedFrom is the shape the dataset had before this append
	// extended it along its first axis (a netCDF time series' record
	// dimension, over new history files); absent for a new dataset.
	ExtendedFrom []int64 `json:"extended_from,omitempty"`
}
