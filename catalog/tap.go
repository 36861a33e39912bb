package catalog

import "context"

// A tap lets a third party see the blocks a Source reads for its caller:
// the verifier sums the input's blocks while the rewriter reads them, so
// that the input is read once, not once to write and once more to verify
// (issue 19's "verification that costs CPU only on data already in
// memory"). The caller that reads (the rewriter) knows nothing of it: the
// tap travels in the context (WithTap), and the Source hands it every
// block it returns whole, as decoded, before the caller sees the bytes.
//
//	rewriter ──ReadBlocks(ctx+tap)──► Source ──data──► caller's fn
//	                                    │
//	                                    └──► TapBatch.Block(b, dt, data)   (verify/tap.go)
//
// The tap decides what a block is by the *Block it is handed: the verifier
// counts only blocks that are the catalog's own (the store's kept lists),
// never the rewriter's trimmed copies, so which bytes belong to which
// elements is the reader's and the catalog's word, as when the verifier
// reads a block itself.

// BlockTap receives the decoded bytes of the blocks a Source reads.
// Implementations are safe for concurrent use.
type BlockTap interface {
	// Batch starts the blocks of one read call (one goroutine's, in the
	// order read); the Source closes it when the call ends.
	Batch() TapBatch
}

// TapBatch is one read call's share of a BlockTap: Block for each block
// read whole, with the element type it was decoded for (a codec's output
// may depend on it: shuffle's element size; the zero DType when data are
// the stored bytes as they are, a block without codecs) and its decoded
// bytes (valid only during the call), then Close once. Used by one
// goroutine.
type TapBatch interface {
	Block(b *Block, dt DType, data []byte)
	Close()
}

type tapKey struct{}

// WithTap has the Sources reading under ctx hand the blocks they read to
// tap (nil: none).
func WithTap(ctx context.Context, tap BlockTap) context.Context {
	if tap == nil {
		return ctx
	}
	return context.WithValue(ctx, tapKey{}, tap)
}

// TapOf is the tap of ctx (WithTap), or nil.
func TapOf(ctx context.Context) BlockTap {
	t, _ := ctx.Value(tapKey{}).(BlockTap)
	return t
}
