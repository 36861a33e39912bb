package verify

import (
	"context"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
)

// geoPow and boxWeight agree with their definitions summed term by term
// (powX of every element's index), for boxes of every rank touching the
// edges, counts of 0 and 1, and ratios 0 and 1.
func TestBoxWeight(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	fs := newFields()
	for _, r := range []uint64{0, 1, 2, mersenne61 - 1, rng.Uint64N(mersenne61)} {
		for _, n := range []int64{0, 1, 2, 3, 7, 64, 1000} {
			want, p := uint64(0), uint64(1)
			for range n {
				want, p = fold(want+p), reduce(mul(p, r))
			}
			if got := reduce(geoPow(r, n)); got != reduce(want) {
				t.Fatalf("geoPow(%d, %d) = %d, want %d", r, n, got, reduce(want))
			}
		}
	}
	for _, size := range []int{1, 4, 8} {
		f := fs.of(size)
		for trial := range 200 {
			rank := 1 + trial%4
			shape := make([]int64, rank)
			box := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
			for d := range rank {
				shape[d] = 1 + rng.Int64N(9)
				box.Lower[d] = rng.Int64N(shape[d])
				box.Count[d] = rng.Int64N(shape[d] - box.Lower[d] + 1)
			}
			rs := f.rowSteps(shape)
			var want uint64
			g := make([]int64, rank)
			eachIndex(box, g, func() {
				var e int64
				for d := range rank {
					e += g[d] * rs.stride[d]
				}
				want = fold(want + reduce(f.powX(e)))
			})
			if got := reduce(f.boxWeight(box, rs)); got != reduce(want) {
				t.Fatalf("size %d shape %v box %v: %d, want %d", size, shape, box, got, reduce(want))
			}
		}
	}
}

// The tap on real ADIOS2 output whose variables interleave block by block
// (generated-lb: BP4 and BP5, a partly covered fine/Ez): the blocks a
// rewrite reads are summed then and not read again; blocks it leaves are
// read by the verifier; copies of blocks (as the rewriter's trimmed ones)
// and blocks read twice (at once, by two goroutines) change nothing; sums the tap got wrong are not
// trusted (the array is compared again and verifies); an output edited by
// h5py is still found, at its index.
func TestTap(t *testing.T) {
	defer func(old int64) { quickBlock = old }(quickBlock)
	quickBlock = 1 << 40 // 8^3 float64 blocks on the checksum path
	for _, in := range []string{"bp4/generated-lb", "bp5/generated-lb"} {
		t.Run(strings.Split(in, "/")[0], func(t *testing.T) {
			lb := shared(t, in)
			out := rewrite(t, lb)
			ds, store := keptInput(t, lb)
			stored := int64(0) // the bytes of the tappable arrays' blocks
			// read has the tap of a fresh check see the blocks of every
			// kept array that pick(i) selects (mixed in one call per array,
			// as the rewriter's joint reads are), a copy of one block and
			// one block twice; bad, when set, changes one block's bytes of
			// fields/rho at step 1 as the tap sees them.
			read := func(t *testing.T, pick func(i int) bool, bad bool) *Tap {
				tap, err := NewTap(store)
				if err != nil {
					t.Fatal(err)
				}
				if len(tap.arrays) < 4 {
					t.Fatalf("%d arrays tapped, want the 4 fields", len(tap.arrays))
				}
				stored = 0
				src := tap.Source(ds)
				for _, k := range store.KeptKeys() {
					a, err := store.Array(k)
					if err != nil {
						t.Fatal(err)
					}
					if tap.of(a) == nil {
						continue
					}
					var blocks []*catalog.Block
					var dts []catalog.DType
					for i := range a.Blocks {
						stored += a.Blocks[i].Length
						if pick(i) {
							blocks, dts = append(blocks, &a.Blocks[i]), append(dts, a.DType)
						}
					}
					if len(blocks) > 0 {
						c := *blocks[0] // the rewriter's trimmed blocks are copies
						blocks, dts = append(blocks, &c, blocks[len(blocks)-1]), append(dts, a.DType, a.DType)
					}
					// Twice at once, as two of the rewriter's readers may.
					var eg errgroup.Group
					for range 2 {
						eg.Go(func() error {
							return src.ReadBlocks(context.Background(), catalog.Reads{Blocks: blocks, DTypes: dts}, func(int, []byte) error { return nil })
						})
					}
					if err := eg.Wait(); err != nil {
						t.Fatal(err)
					}
					if bad && k.Var == "fields/rho" && k.Step == 1 {
						b := &a.Blocks[len(a.Blocks)/2]
						data, err := catalog.ReadBlock(context.Background(), ds, b, a.DType) // untapped
						if err != nil {
							t.Fatal(err)
						}
						data[5] ^= 1
						ta := tap.of(a)
						i := len(a.Blocks) / 2
						ta.seen[i/64].And(^(uint64(1) << (i % 64))) // as if not read yet
						tb := &tapBatch{t: tap}
						tb.Block(b, a.DType, data)
						tb.Close()
					}
				}
				return tap
			}
			verifyWith := func(t *testing.T, out string, tap *Tap) (bool, string, *stats, Result) {
				var st *stats
				statsHook = func(s *stats) { st = s }
				defer func() { statsHook = nil }()
				var log strings.Builder
				res, err := Check(context.Background(), store, ds, out, nil, Options{Jobs: 2, Log: &log, Tap: tap})
				if err != nil {
					t.Fatalf("verify: %v\n%s", err, log.String())
				}
				return res.OK, log.String(), st, res
			}

			t.Run("all", func(t *testing.T) {
				tap := read(t, func(int) bool { return true }, false)
				ok, log, st, res := verifyWith(t, out, tap)
				if !ok || st.counter("checksummed") < 4 || st.counter("rechecked") != 0 {
					t.Fatalf("ok %v, %s\n%s", ok, st, log)
				}
				if n := res.IO.Input.ReadBytes; n != 0 {
					t.Errorf("the verifier read %d input bytes, every block was tapped", n)
				}
			})
			t.Run("threshold", func(t *testing.T) {
				// At the default threshold the 4 KiB blocks of fields/Bx
				// and fine/Ez take the checksum path only when tapped (the
				// exact path would read them again); the 2 KiB ones of
				// fields/id and fields/rho either way.
				defer func(old int64) { quickBlock = old }(quickBlock)
				quickBlock = 2 << 10
				ok, log, _, untapped := verifyWith(t, out, nil)
				if !ok || untapped.Checksummed != 6 {
					t.Fatalf("without a tap: ok %v, %d arrays checksummed, want 6\n%s", ok, untapped.Checksummed, log)
				}
				ok, log, _, tapped := verifyWith(t, out, read(t, func(int) bool { return true }, false))
				if !ok || tapped.Checksummed != 12 || tapped.IO.Input.ReadBytes != 0 {
					t.Fatalf("tapped: ok %v, %d arrays checksummed, want 12; %d input bytes read again\n%s", ok, tapped.Checksummed, tapped.IO.Input.ReadBytes, log)
				}
			})
			t.Run("half", func(t *testing.T) {
				tap := read(t, func(i int) bool { return i%2 == 0 }, false)
				ok, log, st, res := verifyWith(t, out, tap)
				if !ok || st.counter("checksummed") < 4 || st.counter("rechecked") != 0 {
					t.Fatalf("ok %v, %s\n%s", ok, st, log)
				}
				if n := res.IO.Input.ReadBytes; n == 0 { // gaps included: as much as all of them, coalesced
					t.Errorf("the verifier read no input, half of it tapped")
				}
			})
			t.Run("none", func(t *testing.T) {
				ok, log, st, res := verifyWith(t, out, read(t, func(int) bool { return false }, false))
				if !ok || st.counter("rechecked") != 0 || res.IO.Input.ReadBytes < stored {
					t.Fatalf("ok %v, read %d of %d, %s\n%s", ok, res.IO.Input.ReadBytes, stored, st, log)
				}
			})
			t.Run("dtype", func(t *testing.T) {
				// Bytes decoded for another element type are not summed
				// (a codec's output may depend on it), the zero DType's
				// neither; the array's own are.
				tap, err := NewTap(store)
				if err != nil {
					t.Fatal(err)
				}
				a, err := store.Array(catalog.Key{Var: "fields/rho", Step: 1})
				if err != nil {
					t.Fatal(err)
				}
				ta := tap.of(a)
				b := &a.Blocks[0]
				data, err := catalog.ReadBlock(context.Background(), ds, b, a.DType)
				if err != nil {
					t.Fatal(err)
				}
				other := a.DType
				other.Kind = catalog.Int
				for _, dt := range []catalog.DType{other, {}} {
					tb := &tapBatch{t: tap}
					tb.Block(b, dt, data)
					tb.Close()
					if ta.has(0) || ta.raw != 0 || ta.cover != 0 {
						t.Fatalf("a block decoded as %v summed for an array of %v", dt, a.DType)
					}
				}
				tb := &tapBatch{t: tap}
				tb.Block(b, a.DType, data)
				tb.Close()
				if !ta.has(0) || ta.cover == 0 {
					t.Fatalf("a block of %v not summed for its array", a.DType)
				}
			})
			t.Run("wrong", func(t *testing.T) {
				tap := read(t, func(int) bool { return true }, true)
				ok, log, st, _ := verifyWith(t, out, tap)
				if !ok || st.counter("rechecked") != 1 {
					t.Fatalf("a wrong tapped sum: want fields/rho compared again and found equal; ok %v, %s\n%s", ok, st, log)
				}
			})
			t.Run("output", func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "out")
				if b, err := exec.Command("cp", "-r", out, dir).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v %s", err, b)
				}
				// fields/rho = (i*N*N + j*N + k)*0.25 + step, N = 32: 1330.75 at [5,6,7] of step 1.
				python(t, damagePy, dir, "fields/rho", "/data/1/meshes/fields/rho", "poke", "5,6,7")
				tap := read(t, func(int) bool { return true }, false)
				ok, log, st, _ := verifyWith(t, dir, tap)
				want := regexp.MustCompile(`(?m)^DIFF fields/rho step 1 level 0 at \[5,6,7\]: in=1330.75 out=1331.75$`)
				if ok || st.counter("rechecked") != 1 || !want.MatchString(log) {
					t.Fatalf("ok %v, %s\n%s", ok, st, log)
				}
			})
		})
	}
}
