package catalog

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/zeebo/blake3"
)

// Digest is the algorithm of an output's digests (run --digest): of every
// dataset's logical array in the manifest (row-major, little-endian), and
// of every unit in a journaled job's journals. One job, one output, one
// algorithm: the writer, the verifier and commit's checks all take it from
// here, by name.
//
// The zero value is SHA256, the default, so that manifests, jobs and
// signatures written before the choice existed (which knew only sha256 and
// none) read as what they were.
type Digest uint8

// The digest algorithms.
const (
	SHA256   Digest = iota // crypto/sha256 (SHA-NI where the CPU has it); checkable with hashlib, sha256sum
	XXH64                  // XXH64, seed 0 (github.com/cespare/xxhash/v2); checkable with python3-xxhash, xxhsum
	NoDigest               // none recorded; verify still compares every element
	// BLAKE3, 256-bit output, unkeyed (github.com/zeebo/blake3, AVX2): a
	// cryptographic digest at about twice SHA-NI sha256's speed (3.4 GB/s
	// against 1.7 on the 2-core machine of bench/RESULTS.md); checkable
	// with b3sum. Last, so that the values above keep their numbers.
	BLAKE3
)

// Digests are the algorithms in the order of the --digest help.
var Digests = []Digest{SHA256, BLAKE3, XXH64, NoDigest}

var digestNames = [...]string{SHA256: "sha256", XXH64: "xxh64", NoDigest: "none", BLAKE3: "blake3"}

// String is the digest's name: the --digest value, the manifest's
// options.digest and the name of its per-dataset field.
func (d Digest) String() string {
	if int(d) < len(digestNames) {
		return digestNames[d]
	}
	return fmt.Sprintf("digest(%d)", d)
}

// ParseDigest reads a digest name ("sha256", "blake3", "xxh64", "none").
func ParseDigest(s string) (Digest, error) {
	for _, d := range Digests {
		if s == d.String() {
			return d, nil
		}
	}
	names := make([]string, len(Digests))
	for i, d := range Digests {
		names[i] = d.String()
	}
	return 0, fmt.Errorf("digest %q: want %s", s, strings.Join(names, ", "))
}

// MarshalText writes the name (JSON of job specs and job.json).
func (d Digest) MarshalText() ([]byte, error) {
	if int(d) >= len(digestNames) {
		return nil, fmt.Errorf("unknown digest %d", d)
	}
	return []byte(d.String()), nil
}

// UnmarshalText reads a name.
func (d *Digest) UnmarshalText(b []byte) error {
	v, err := ParseDigest(string(b))
	if err == nil {
		*d = v
	}
	return err
}

// New is a new hash of the algorithm; nil for NoDigest.
func (d Digest) New() hash.Hash {
	switch d {
	case SHA256:
		return sha256.New()
	case XXH64:
		return xxhash.New() // seed 0
	case BLAKE3:
		return blake3.New()
	}
	return nil
}

// Hex is the digest of b in hex ("" for NoDigest), as the manifest and the
// journals record it: for XXH64 the canonical big-endian form that
// xxhsum and python-xxhash's hexdigest print.
func (d Digest) Hex(b []byte) string {
	h := d.New()
	if h == nil {
		return ""
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// DigestStoredChunks is ManifestDataset.DigestOf for a digest over a
// chunked dataset's stored chunks instead of its logical array: for each
// allocated chunk, in row-major order of the chunk grid, its offset (the
// index of its first element, an int64 little-endian per dimension, as
// HDF5's chunk index and h5py's get_chunk_info give it) then its elements
// inside the array (the chunk's box clipped to the shape, row-major,
// little-endian). Together with the dataset's fill value, which every
// other element reads as, it stands for the whole array; the writer and
// the verifier compute it without touching the holes.
const DigestStoredChunks = "stored chunks"

// HashStoredChunk writes to h, as DigestStoredChunks says, the chunk whose
// box (clipped to the array) is c: its offset, then its elements row by
// row from buf, the row-major bytes (elements of size bytes) of the box
// within, which holds c. The writer and the verifier hash each chunk
// through it from bytes of their own: the definition in one place.
func HashStoredChunk(h hash.Hash, buf []byte, within, c Box, size int64) {
	var b [8]byte
	for _, o := range c.Lower {
		binary.LittleEndian.PutUint64(b[:], uint64(o))
		h.Write(b[:])
	}
	rank := len(c.Lower)
	if rank == 0 {
		return
	}
	last := rank - 1
	stride := make([]int64, rank) // of within, in elements
	s := int64(1)
	for d := last; d >= 0; d-- {
		stride[d] = s
		s *= within.Count[d]
	}
	at := append([]int64(nil), c.Lower...)
	row := c.Count[last] * size
	for {
		var e int64
		for d := range rank {
			e += (at[d] - within.Lower[d]) * stride[d]
		}
		h.Write(buf[e*size : e*size+row])
		d := last - 1
		for ; d >= 0; d-- {
			if at[d]++; at[d] < c.Lower[d]+c.Count[d] {
				break
			}
			at[d] = c.Lower[d]
		}
		if d < 0 {
			return
		}
	}
}
