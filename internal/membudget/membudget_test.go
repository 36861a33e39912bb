package membudget

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
)

func (b *Budget) waiting() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.queue)
}

// waitQueued waits (yielding, no sleep) until n requests wait.
func waitQueued(b *Budget, n int) {
	for b.waiting() != n {
		runtime.Gosched()
	}
}

func TestStrict(t *testing.T) {
	ctx := context.Background()
	b := New(100)
	if err := b.Acquire(ctx, 101); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("101 of 100: %v", err)
	}
	if err := b.Acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	if b.TryAcquire(50) {
		t.Fatal("TryAcquire 50 with 40 free")
	}
	// FIFO: 50 waits, then 10 (which would fit) waits behind it.
	got := make(chan int64, 2)
	for _, n := range []int64{50, 10} {
		go func() {
			if err := b.Acquire(ctx, n); err != nil {
				t.Error(err)
			}
			got <- n
		}()
		waitQueued(b, map[int64]int{50: 1, 10: 2}[n])
	}
	if b.TryAcquire(1) {
		t.Fatal("TryAcquire passed waiting requests")
	}
	b.Release(60)
	first, second := <-got, <-got
	if first != 50 && second != 50 || b.Used() != 60 || b.Peak() != 60 {
		t.Fatalf("granted %d, %d; used %d, peak %d", first, second, b.Used(), b.Peak())
	}
	b.Release(50)
	b.Release(10)
	if b.Used() != 0 {
		t.Fatalf("used %d after releasing all", b.Used())
	}
}

func TestCancelAndClose(t *testing.T) {
	b := New(10)
	if err := b.Acquire(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() { errc <- b.Acquire(ctx, 8) }()
	waitQueued(b, 1)
	// A smaller request behind the cancelled one is granted when it goes.
	small := make(chan error)
	go func() { small <- b.Acquire(context.Background(), 0) }()
	waitQueued(b, 2)
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled acquire: %v", err)
	}
	if err := <-small; err != nil {
		t.Fatal(err)
	}
	go func() { errc <- b.Acquire(context.Background(), 5) }()
	waitQueued(b, 1)
	b.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire on close: %v", err)
	}
	if err := b.Acquire(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("acquire after close: %v", err)
	}
	b.Release(10)
	if b.Used() != 0 || b.Peak() != 10 {
		t.Fatalf("used %d peak %d", b.Used(), b.Peak())
	}
}

// TestOvercommit: the verifier's rule. A request larger than the budget is
// granted when only pinned bytes are held, and waits while a transient
// holder will release some.
func TestOvercommit(t *testing.T) {
	ctx := context.Background()
	b := Overcommit(100)
	if err := b.Acquire(ctx, 80); err != nil {
		t.Fatal(err)
	}
	b.Pin(80)
	if err := b.Acquire(ctx, 150); err != nil { // only pinned held: granted
		t.Fatal(err)
	}
	if b.Peak() != 230 {
		t.Fatalf("peak %d", b.Peak())
	}
	done := make(chan error)
	go func() { done <- b.Acquire(ctx, 10) }()
	waitQueued(b, 1) // 150 transient bytes will come back
	b.Release(150)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b.Release(10)
	b.Unpin(80)
	if b.Used() != 0 {
		t.Fatalf("used %d", b.Used())
	}
}

// TestConcurrent: many goroutines never hold more than the capacity
// (run with -race).
func TestConcurrent(t *testing.T) {
	b := New(64)
	var mu sync.Mutex
	var held, most int64
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				n := int64(1 + (i*7+j)%40)
				if err := b.Acquire(context.Background(), n); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				held += n
				most = max(most, held)
				mu.Unlock()
				mu.Lock()
				held -= n
				mu.Unlock()
				b.Release(n)
			}
		}()
	}
	wg.Wait()
	if most > 64 || b.Peak() > 64 || b.Used() != 0 {
		t.Fatalf("held at most %d, peak %d, used %d with a budget of 64", most, b.Peak(), b.Used())
	}
}

// TestOvercommitNotFIFO: an overcommitting budget grants a small request
// that fits past a larger waiting one (a holder asking for more while it
// holds must not wait behind it).
func TestOvercommitNotFIFO(t *testing.T) {
	ctx := context.Background()
	b := Overcommit(100)
	if err := b.Acquire(ctx, 60); err != nil {
		t.Fatal(err)
	}
	big := make(chan error)
	go func() { big <- b.Acquire(ctx, 50) }()
	waitQueued(b, 1)
	if err := b.Acquire(ctx, 30); err != nil { // fits: granted at once
		t.Fatal(err)
	}
	if !b.TryAcquire(10) {
		t.Fatal("TryAcquire of 10 that fit")
	}
	b.Release(100)
	if err := <-big; err != nil {
		t.Fatal(err)
	}
	b.Release(50)
	if b.Used() != 0 {
		t.Fatalf("used %d", b.Used())
	}
}
