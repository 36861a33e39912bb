package blockio

import (
	"context"

	"golang.org/x/sys/unix"

	"relayout/catalog"
)

// Prefetch implements catalog.Source: the blocks (sorted by file and
// offset, as for ReadBlocks) are cut into the same runs (catalog.Runs) and
// each run is handed to posix_fadvise(WILLNEED), which starts reading it
// into the page cache and returns. Inline blocks and files that cannot be
// opened are skipped (the read that follows reports them).
func (s *Source) Prefetch(ctx context.Context, blocks []*catalog.Block) {
	catalog.Runs(blocks, maxRun, func(i, _ int, start, end int64) error {
		if start == end {
			return nil
		}
		of, err := s.files.get(ctx, blocks[i].File)
		if err != nil {
			return nil
		}
		unix.Fadvise(int(of.f.Fd()), start, end-start, unix.FADV_WILLNEED)
		s.files.release(of)
		return nil
	})
}
