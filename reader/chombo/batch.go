package chombo

import (
	"context"

	"relayout/catalog"
)

// ReadBlocks implements catalog.BatchSource: neighbouring blocks of one file
// are read with one pread (see blockio.Source.ReadBlocks).
func (d *Dataset) ReadBlocks(ctx context.Context, blocks []*catalog.Block, dt catalog.DType, fn func(int, []byte) error) error {
	return d.src.ReadBlocks(ctx, blocks, dt, fn)
}

// IOStats implements catalog.IOStats: the reads issued so far.
func (d *Dataset) IOStats() catalog.IOCounters { return d.src.IOStats() }
