package blockio

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"relayout/catalog"
)

// Prefetch implements catalog.Prefetcher: the blocks' extents, sorted and
// coalesced like ReadBlocks's runs, are handed to posix_fadvise(WILLNEED),
// which starts reading them into the page cache and returns. Inline blocks
// and files that cannot be opened are skipped (the read that follows
// reports them).
func (s *Source) Prefetch(ctx context.Context, blocks []*catalog.Block) {
	bs := make([]*catalog.Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Inline == nil && b.Length > 0 {
			bs = append(bs, b)
		}
	}
	slices.SortFunc(bs, func(x, y *catalog.Block) int {
		if c := strings.Compare(x.File, y.File); c != 0 {
			return c
		}
		return cmp.Compare(x.Offset, y.Offset)
	})
	for i := 0; i < len(bs); {
		j := i + 1
		for j < len(bs) && bs[j].File == bs[i].File {
			j++
		}
		of, err := s.files.get(ctx, bs[i].File)
		if err == nil {
			start, end := bs[i].Offset, bs[i].Offset+bs[i].Length
			for _, b := range bs[i+1 : j] {
				if b.Offset-end <= maxGap && b.Offset+b.Length-start <= maxRun {
					end = max(end, b.Offset+b.Length)
					continue
				}
				unix.Fadvise(int(of.f.Fd()), start, end-start, unix.FADV_WILLNEED)
				start, end = b.Offset, b.Offset+b.Length
			}
			unix.Fadvise(int(of.f.Fd()), start, end-start, unix.FADV_WILLNEED)
			s.files.release(of)
		}
		i = j
	}
}
