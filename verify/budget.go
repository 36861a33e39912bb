package verify

import (
	"context"
	"sync"
)

// budget accounts the bytes of input blocks alive at once. A request waits
// while it does not fit and some transient holder (a block being fetched
// or compared) will release memory; when only pinned memory is held
// (blocks kept for later bands), it is granted anyway, so that a band whose
// blocks exceed the budget still proceeds (the one case where the budget
// is exceeded: its blocks must be in memory together).
type budget struct {
	mu        sync.Mutex
	cond      *sync.Cond
	capacity  int64
	used      int64
	transient int64
	peak      int64 // most bytes used at once
}

func newBudget(capacity int64) *budget {
	b := &budget{capacity: max(capacity, 1)}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// acquire takes n transient bytes.
func (b *budget) acquire(ctx context.Context, n int64) error {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used+n > b.capacity && b.transient > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		b.cond.Wait()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.used += n
	b.transient += n
	b.peak = max(b.peak, b.used)
	return nil
}

// release gives back n transient bytes.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.transient -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// pin turns n transient bytes into pinned ones (kept for later bands).
func (b *budget) pin(n int64) {
	b.mu.Lock()
	b.transient -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// unpin releases n pinned bytes.
func (b *budget) unpin(n int64) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}
