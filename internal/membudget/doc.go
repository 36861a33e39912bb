// Package membudget is the one memory budget of relayout: a semaphore over
// bytes that every stage charges before its buffers exist (the rewriter's
// units, the verifier's blocks, commit's check). Pure Go, no cgo; of
// relayout it imports only catalog (Populate and HugePage, for the
// mappings' pages), and golang.org/x/sys/unix for the mappings.
//
//	Budget       capacity bytes; Acquire (blocking, with a context),
//	             TryAcquire, Release, Pin/Unpin, Peak, Used, Close
//	Overcommit   the verifier's rule: a request waits only while some
//	             transient (not pinned) holder will release bytes
//	Map, Unmap   buffers in anonymous mappings, outside the Go heap
//	LimitProcess the collector's soft limit: a total less what Map holds
//
// A strict budget grants requests in the order they arrive (a large one is
// not starved by later small ones): the rewriter admits units in order, and
// the unit its ordered sink waits for must never queue behind a later one.
// An overcommitting one grants any waiter that fits (the verifier's
// blocks, whose holders may ask for more while they hold).
package membudget
