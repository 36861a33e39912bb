package blockio

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"relayout/catalog"
)

// Config tunes a format reader's Open (every reader's Config is this type).
type Config struct {
	// Match selects variables by name (the reader's mapped name, e.g.
	// openPMD's record/component); nil selects all.
	Match func(name string) bool
	// MaxOpenFiles bounds the block-read file pool (<= 0: the default).
	MaxOpenFiles int
}

// Selects reports whether the variable name is selected (Match, or all).
func (c Config) Selects(name string) bool { return c.Match == nil || c.Match(name) }

// Source implements catalog.Source over a Files pool: raw pread of the block's
// bytes, then its codecs decoded in Go.
type Source struct {
	files *Files
}

// NewSource returns a Source reading block files through files.
func NewSource(files *Files) *Source { return &Source{files: files} }

// IOStats implements catalog.Source: the preads issued through the pool.
func (s *Source) IOStats() catalog.IOCounters { return s.files.IOStats() }

// Files is the pool the source reads through.
func (s *Source) Files() *Files { return s.files }

// Close closes the pool's files. A format reader embeds its Source, so this
// (with the methods of catalog.Source) is its own method.
func (s *Source) Close() error { return s.files.Close() }

// StoredBytes is the decoded size of b for elements of dt, or an error when
// the stored shape is negative or its size overflows.
func StoredBytes(b *catalog.Block, dt catalog.DType) (int64, error) {
	n := int64(dt.Size)
	if n <= 0 {
		return 0, catalog.Corrupt("blockio", "", -1, "element size %d", dt.Size)
	}
	for _, d := range b.StoredShape() {
		if d < 0 || (d > 0 && n > math.MaxInt64/d) {
			return 0, catalog.Corrupt("blockio", "", -1, "stored shape %v", b.StoredShape())
		}
		n *= d
	}
	return n, nil
}

// readAlone returns the decoded bytes of b, read with a request of its own
// (inline bytes, an extent of no length): a block no run holds.
func (s *Source) readAlone(ctx context.Context, b *catalog.Block, dt catalog.DType, timer *int64) ([]byte, error) {
	want, err := StoredBytes(b, dt)
	if err != nil {
		return nil, atBlock(b, err)
	}
	if b.Inline() != nil {
		if int64(len(b.Inline())) != want {
			return nil, catalog.Corrupt("blockio", "", -1, "inline block %v: %d bytes, want %d", b.Box, len(b.Inline()), want)
		}
		return s.decode(b, dt, b.Inline())
	}
	if len(b.Codecs) == 0 && b.Length != want {
		return nil, catalog.Corrupt("blockio", b.File, b.Offset, "block of %d bytes, want %d", b.Length, want)
	}
	raw := make([]byte, b.Length)
	if err := s.files.readAtTimed(ctx, b.File, b.Offset, raw, timer); err != nil {
		return nil, err
	}
	return s.decode(b, dt, raw)
}

// decode turns b's raw stored bytes into its decoded bytes; for a block
// without codecs the result is raw itself.
func (s *Source) decode(b *catalog.Block, dt catalog.DType, raw []byte) ([]byte, error) {
	want, err := StoredBytes(b, dt)
	if err != nil {
		return nil, atBlock(b, err)
	}
	if len(b.Codecs) == 0 && int64(len(raw)) != want {
		return nil, catalog.Corrupt("blockio", b.File, b.Offset, "block of %d bytes, want %d", len(raw), want)
	}
	out, err := Decode(raw, b.Codecs, dt.Size, want)
	if err != nil {
		return nil, atBlock(b, err)
	}
	return out, nil
}

// Placement implements catalog.Source: no block is placed through maps.
func (s *Source) Placement(context.Context, *catalog.Block, catalog.DType) (*catalog.Placement, error) {
	return nil, nil
}

// Caps implements catalog.Source: neighbouring extents are read with one
// request.
func (s *Source) Caps() catalog.Caps { return catalog.Caps{Coalesces: true} }

// atBlock names b's file and offset in an error about its bytes: a codec's
// CorruptError (which knows no file) becomes one naming b's file and offset.
func atBlock(b *catalog.Block, err error) error {
	if ce := (*catalog.CorruptError)(nil); errors.As(err, &ce) && ce.File == "" {
		return catalog.Corrupt("blockio", b.File, b.Offset, "block of %d bytes: %s", b.Length, strings.TrimSuffix(err.Error(), ": "+catalog.ErrCorrupt.Error()))
	}
	return fmt.Errorf("blockio: %s: block at offset %d: %w", b.File, b.Offset, err)
}
