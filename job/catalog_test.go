package job

import (
	"context"
	"errors"
	"testing"

	"relayout/catalog"
)

// alongside hands every array to each in order and stores every array; an
// error of each is returned by the next emit and by wait; a cancelled
// context ends the emits.
func TestAlongside(t *testing.T) {
	arrays := make([]*catalog.Array, 4)
	for i := range arrays {
		arrays[i] = &catalog.Array{Var: "v", Step: int64(i)}
	}
	var put, got []int64
	record := func(to *[]int64) func(*catalog.Array) error {
		return func(a *catalog.Array) error { *to = append(*to, a.Step); return nil }
	}
	emit, wait := alongside(context.Background(), record(&put), record(&got))
	for _, a := range arrays {
		if err := emit(a); err != nil {
			t.Fatal(err)
		}
	}
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	if len(put) != 4 || len(got) != 4 {
		t.Fatalf("stored %v, each got %v, want 4 arrays each", put, got)
	}
	for i := range 4 {
		if put[i] != int64(i) || got[i] != int64(i) {
			t.Fatalf("stored %v, each got %v, want steps 0..3 in order", put, got)
		}
	}

	bad := errors.New("plan failed")
	put = nil
	emit, wait = alongside(context.Background(), record(&put), func(a *catalog.Array) error {
		if a.Step == 1 {
			return bad
		}
		return nil
	})
	for i, a := range arrays[:3] {
		err := emit(a)
		if i < 2 && err != nil {
			t.Fatalf("emit %d: %v", i, err)
		}
		if i == 2 && !errors.Is(err, bad) {
			t.Fatalf("emit after the failing array: %v, want %v", err, bad)
		}
	}
	if err := wait(); !errors.Is(err, bad) {
		t.Fatalf("wait: %v, want %v", err, bad)
	}
	if len(put) != 3 {
		t.Fatalf("stored %v, want the 3 arrays emitted", put)
	}

	ctx, cancel := context.WithCancel(context.Background())
	block := make(chan struct{})
	emit, wait = alongside(ctx, record(&put), func(*catalog.Array) error { <-block; return nil })
	if err := emit(arrays[0]); err != nil { // taken at once
		t.Fatal(err)
	}
	cancel()
	if err := emit(arrays[1]); !errors.Is(err, context.Canceled) { // each still has array 0
		t.Fatalf("emit after cancel: %v, want context.Canceled", err)
	}
	close(block)
	if err := wait(); err != nil {
		t.Fatal(err)
	}
}
