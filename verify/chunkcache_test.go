package verify

import (
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/internal/h5"
)

// chunkCaches: compressed members' chunk rows are cached first, while
// they fit with the bands (3 buffers of 4 rows of 512 bytes and a bitmap:
// 6,176 bytes each) in three quarters of the share; unfiltered ones of
// small chunks only while all the caches fit a quarter, of large chunks
// (uncachedChunk) never (no cache at all: the library reads the bands'
// parts of their chunks from the file); the library's default when the
// bands are whole chunk rows.
func TestChunkCaches(t *testing.T) {
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	mem := func(filtered bool, chunk ...int64) *member {
		info := &h5.DatasetInfo{Layout: "chunked", Chunk: chunk}
		if filtered {
			info.Filters = []h5.Filter{{ID: 1, Name: "deflate"}}
		}
		return &member{a: &catalog.Array{Shape: []int64{64, 64}}, info: info, size: 8, rank: 2, dt: f64, rowBytes: 512, nbuf: 3}
	}
	// A chunk row of 16 rows: 16*64*8 = 8 KiB.
	zip, raw := mem(true, 16, 16), mem(false, 16, 16)
	// Chunks of 64x512 float64 (256 KiB) in a 1024x1024 array.
	big := mem(false, 64, 512)
	big.a = &catalog.Array{Shape: []int64{1024, 1024}}
	big.rowBytes = 8192
	for _, c := range []struct {
		name    string
		ms      []*member
		perBand int64
		share   int64
		want    []int64
	}{
		{"compressed within", []*member{zip}, 4, 20 << 10, []int64{8 << 10}},
		{"compressed beyond", []*member{zip}, 4, 18 << 10, []int64{0}},
		{"whole chunk rows", []*member{zip, raw}, 32, 1 << 20, []int64{0, 0}},
		{"unfiltered within a quarter", []*member{raw}, 4, 32 << 10, []int64{8 << 10}},
		{"unfiltered beyond a quarter", []*member{raw}, 4, 32<<10 - 1, []int64{0}},
		{"compressed first", []*member{raw, zip, zip}, 4, 64 << 10, []int64{0, 8 << 10, 8 << 10}},
		{"both fit", []*member{raw, zip}, 4, 128 << 10, []int64{8 << 10, 8 << 10}},
		{"large unfiltered chunks, any share", []*member{big, big}, 4, 1 << 40, []int64{h5.NoChunkCache, h5.NoChunkCache}},
		{"large unfiltered chunks, whole rows", []*member{big}, 256, 1 << 40, []int64{0}},
		{"contiguous", []*member{{a: zip.a, info: &h5.DatasetInfo{Layout: "contiguous"}, size: 8, rank: 2}}, 4, 1 << 20, []int64{0}},
	} {
		if got := chunkCaches(c.ms, c.perBand, c.share); !slices.Equal(got, c.want) {
			t.Errorf("%s: chunkCaches = %v, want %v", c.name, got, c.want)
		}
	}
}
