package membudget

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is returned by Acquire on a closed Budget.
var ErrClosed = errors.New("membudget: closed")

// ErrTooLarge wraps the error of a request larger than a strict budget.
var ErrTooLarge = errors.New("membudget: request larger than the budget")

// Budget is a semaphore over capacity bytes that tracks the most bytes
// held at once. Bytes are transient when acquired; Pin marks some as kept
// for later (they stay charged), Unpin releases pinned bytes. A strict
// budget (New) refuses a request of more than its capacity; an
// overcommitting one (Overcommit) grants any request when no transient
// bytes are held, so that work whose pinned data alone exceeds the budget
// still proceeds. The zero value is not usable.
type Budget struct {
	mu         sync.Mutex
	capacity   int64
	overcommit bool
	used       int64 // transient + pinned
	transient  int64
	peak       int64
	closed     bool
	queue      []*waiter
}

type waiter struct {
	n     int64
	ready chan struct{} // closed when granted
	err   error         // set before ready is closed when not granted
}

// New is a strict budget of capacity bytes (at least 1).
func New(capacity int64) *Budget { return &Budget{capacity: max(capacity, 1)} }

// Overcommit is a budget of capacity bytes that grants any request when
// nothing transient is held (only pinned bytes, or nothing).
func Overcommit(capacity int64) *Budget {
	return &Budget{capacity: max(capacity, 1), overcommit: true}
}

// Capacity is the budget's size in bytes.
func (b *Budget) Capacity() int64 { return b.capacity }

// fits reports whether n more bytes may be granted now. The caller holds mu.
func (b *Budget) fits(n int64) bool {
	return b.used+n <= b.capacity || b.overcommit && b.transient == 0
}

// grant charges n transient bytes. The caller holds mu.
func (b *Budget) grant(n int64) {
	b.used += n
	b.transient += n
	b.peak = max(b.peak, b.used)
}

// Acquire takes n transient bytes, waiting (in arrival order) until they
// fit or ctx is done. A strict budget refuses n > Capacity at once
// (ErrTooLarge); a closed one ErrClosed.
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	if n < 0 {
		return fmt.Errorf("membudget: acquire %d bytes", n)
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return ErrClosed
	}
	if !b.overcommit && n > b.capacity {
		b.mu.Unlock()
		return fmt.Errorf("%w: %d bytes, the budget is %d", ErrTooLarge, n, b.capacity)
	}
	if (len(b.queue) == 0 || b.overcommit) && b.fits(n) {
		b.grant(n)
		b.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return w.err
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready: // granted (or closed) meanwhile
			b.mu.Unlock()
			if w.err == nil {
				b.Release(n)
			}
			return ctx.Err()
		default:
		}
		for i, q := range b.queue {
			if q == w {
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				break
			}
		}
		b.notify() // a smaller request behind it may fit now
		b.mu.Unlock()
		return ctx.Err()
	}
}

// TryAcquire takes n transient bytes if they fit now (and, strict, nobody
// waits).
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || n < 0 || !b.overcommit && (n > b.capacity || len(b.queue) > 0) || !b.fits(n) {
		return false
	}
	b.grant(n)
	return true
}

// notify grants waiters that fit: a strict budget those at the head of the
// queue (in arrival order, as x/sync/semaphore), an overcommitting one
// every waiter that fits, in arrival order (as the verifier's condition
// variable did: a holder that asks for more while it holds is never
// stuck behind a larger request). The caller holds mu.
func (b *Budget) notify() {
	q := b.queue[:0]
	for i, w := range b.queue {
		if !b.fits(w.n) {
			if !b.overcommit {
				q = append(q, b.queue[i:]...)
				break
			}
			q = append(q, w)
			continue
		}
		b.grant(w.n)
		close(w.ready)
	}
	clear(b.queue[len(q):])
	b.queue = q
}

// Release gives back n transient bytes.
func (b *Budget) Release(n int64) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.transient -= n
	if b.used < 0 || b.transient < 0 {
		b.mu.Unlock()
		panic("membudget: released more than acquired")
	}
	b.notify()
	b.mu.Unlock()
}

// Pin turns n transient bytes into pinned ones: still charged, but no
// longer a holder an overcommitting budget waits for.
func (b *Budget) Pin(n int64) {
	b.mu.Lock()
	b.transient -= n
	b.notify()
	b.mu.Unlock()
}

// Unpin releases n pinned bytes.
func (b *Budget) Unpin(n int64) {
	b.mu.Lock()
	b.used -= n
	b.notify()
	b.mu.Unlock()
}

// Used is the bytes held now (transient and pinned).
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Peak is the most bytes held at once so far.
func (b *Budget) Peak() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak
}

// Close fails every waiting and later Acquire with ErrClosed; bytes held
// may still be released.
func (b *Budget) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for _, w := range b.queue {
		w.err = ErrClosed
		close(w.ready)
	}
	b.queue = nil
}
