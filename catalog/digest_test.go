package catalog

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDigestKinds: each algorithm's digest of known bytes is the published
// one (sha256 of "abc" from FIPS 180-2; XXH64 seed 0 from xxhsum and
// python3-xxhash, canonical big-endian hex; BLAKE3 from b3sum 1.2, the
// official Rust implementation's command); names round trip; the zero
// value is sha256 (what manifests and jobs without a choice meant).
func TestDigestKinds(t *testing.T) {
	for _, c := range []struct {
		d          Digest
		abc, empty string
	}{
		{SHA256, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{XXH64, "44bc2cf5ad770999", "ef46db3751d8e999"},
		{BLAKE3, "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85", "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
		{NoDigest, "", ""},
	} {
		if got := c.d.Hex([]byte("abc")); got != c.abc {
			t.Errorf("%v(abc) = %q, want %q", c.d, got, c.abc)
		}
		if got := c.d.Hex(nil); got != c.empty {
			t.Errorf("%v() = %q, want %q", c.d, got, c.empty)
		}
		back, err := ParseDigest(c.d.String())
		if err != nil || back != c.d {
			t.Errorf("%v: parsed back as %v, %v", c.d, back, err)
		}
		b, err := json.Marshal(struct {
			D Digest `json:"d"`
		}{c.d})
		if want := `{"d":"` + c.d.String() + `"}`; err != nil || string(b) != want {
			t.Errorf("%v: JSON %s %v, want %s", c.d, b, err, want)
		}
	}
	var zero Digest
	if zero != SHA256 {
		t.Error("the zero Digest is not sha256")
	}
	if _, err := ParseDigest("md5"); err == nil || !strings.Contains(err.Error(), "want sha256, blake3, xxh64, none") {
		t.Errorf("md5: %v", err)
	}
}

// TestManifestDigest: a manifest of an older version (no options, or
// options.digest sha256 or none, no xxh64 field) reads with its sha256 as
// the digest; an xxh64 one with its xxh64, a blake3 one with its blake3;
// an unknown algorithm is refused as corrupt.
func TestManifestDigest(t *testing.T) {
	dir := t.TempDir()
	ds := `"datasets": [{"step": 0, "level": 0, "path": "/x", "shape": [2], "offset": [0], "layout": "contiguous", "sha256": %s%s}]`
	for _, c := range []struct {
		options, sha, xxh string
		kind              Digest
		err               bool
	}{
		{``, `"aa"`, ``, SHA256, false},
		{`"options": {"layout": "contiguous", "compression": "none", "digest": "sha256", "netcdf": false},`, `"aa"`, ``, SHA256, false},
		{`"options": {"layout": "contiguous", "compression": "none", "digest": "none", "netcdf": false},`, `""`, ``, NoDigest, false},
		{`"options": {"layout": "contiguous", "compression": "none", "digest": "xxh64", "netcdf": false},`, `""`, `, "xxh64": "bb"`, XXH64, false},
		{`"options": {"layout": "contiguous", "compression": "none", "digest": "blake3", "netcdf": false},`, `""`, `, "blake3": "cc"`, BLAKE3, false},
		{`"options": {"layout": "contiguous", "compression": "none", "digest": "md5", "netcdf": false},`, `""`, ``, 0, true},
	} {
		js := `{"schema": "relayout-manifest/1", "tool": "relayout", ` + c.options +
			`"variables": [{"name": "x", "dtype": "<f8", "file": "x.h5", ` +
			strings.Replace(strings.Replace(ds, "%s", c.sha, 1), "%s", c.xxh, 1) + `}]}`
		p := filepath.Join(dir, ManifestName)
		if err := os.WriteFile(p, []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadManifest(p)
		if c.err {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `digest "md5"`) {
				t.Errorf("options %s: err %v, want corrupt naming the digest", c.options, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		kind, err := m.DigestKind()
		if err != nil || kind != c.kind {
			t.Errorf("options %s: kind %v %v, want %v", c.options, kind, err, c.kind)
		}
		d := &m.Variables[0].Datasets[0]
		want := map[Digest]string{SHA256: "aa", XXH64: "bb", BLAKE3: "cc", NoDigest: ""}[c.kind]
		if got := d.Sum(kind); got != want {
			t.Errorf("options %s: Sum %q, want %q", c.options, got, want)
		}
	}
}

// BenchmarkDigest: each algorithm over 8 MiB buffers (the size of a tile).
// On the session-8 machine (2 cores, sha_ni in /proc/cpuinfo): see
// bench/RESULTS.md.
func BenchmarkDigest(b *testing.B) {
	buf := make([]byte, 8<<20)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for _, d := range []Digest{SHA256, BLAKE3, XXH64} {
		b.Run(d.String(), func(b *testing.B) {
			h := d.New()
			b.SetBytes(int64(len(buf)))
			b.ReportAllocs()
			for b.Loop() {
				h.Reset()
				h.Write(buf)
				h.Sum(nil)
			}
		})
	}
}

// TestHashStoredChunk: the bytes HashStoredChunk hashes are the chunk's
// offset (int64 little-endian each) then its elements, gathered here one by
// one from their global index, in row-major order of the chunk's box.
func TestHashStoredChunk(t *testing.T) {
	within := Box{Lower: []int64{4, 10, 0}, Count: []int64{6, 5, 7}}
	c := Box{Lower: []int64{6, 12, 3}, Count: []int64{3, 2, 4}}
	const size = 2
	buf := make([]byte, within.Elements()*size)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	var want []byte
	for _, o := range c.Lower {
		want = binary.LittleEndian.AppendUint64(want, uint64(o))
	}
	for i := c.Lower[0]; i < c.Lower[0]+c.Count[0]; i++ {
		for j := c.Lower[1]; j < c.Lower[1]+c.Count[1]; j++ {
			for k := c.Lower[2]; k < c.Lower[2]+c.Count[2]; k++ {
				e := ((i-within.Lower[0])*within.Count[1]+(j-within.Lower[1]))*within.Count[2] + k - within.Lower[2]
				want = append(want, buf[e*size:(e+1)*size]...)
			}
		}
	}
	h := SHA256.New()
	HashStoredChunk(h, buf, within, c, size)
	if got := hex.EncodeToString(h.Sum(nil)); got != SHA256.Hex(want) {
		t.Errorf("digest %s, want %s (of the %d bytes gathered one by one)", got, SHA256.Hex(want), len(want))
	}
}
