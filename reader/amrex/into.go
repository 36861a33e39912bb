package amrex

import (
	"context"

	"relayout/catalog"
)

// ReadBlockInto implements catalog.IntoSource: one pread of a raw block
// straight into dst.
func (d *Dataset) ReadBlockInto(ctx context.Context, b *catalog.Block, dst []byte) error {
	return d.src.ReadBlockInto(ctx, b, dst)
}
