package job

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestPlanDigests enumerates every combination of the job's kind, its
// check and --digest: where each dataset's digest comes from (planDigests'
// table).
func TestPlanDigests(t *testing.T) {
	none := catalog.NoDigest
	for _, d := range []catalog.Digest{catalog.SHA256, catalog.BLAKE3, catalog.XXH64, none} {
		hashed := d != none
		pick := func(c catalog.Digest) catalog.Digest {
			if hashed {
				return c
			}
			return none
		}
		for _, c := range []struct {
			journaled, verify bool
			want              digestPlan
		}{
			// in memory, verify: the verifier's digests, the pipeline hashes nothing
			{false, true, digestPlan{pipeline: none, units: none, verifier: hashed}},
			// in memory, --no-verify: the pipeline's dataset digests
			{false, false, digestPlan{pipeline: pick(d), units: none}},
			// journaled, verify: unit digests journaled (commit may not verify), the verifier's in the manifest
			{true, true, digestPlan{pipeline: pick(d), units: pick(d), verifier: hashed}},
			// journaled, --no-verify: unit digests journaled, checked and the datasets' taken by commit's read-back
			{true, false, digestPlan{pipeline: pick(d), units: pick(d), readBack: true}},
		} {
			t.Run(fmt.Sprintf("journaled=%v/verify=%v/%v", c.journaled, c.verify, d), func(t *testing.T) {
				got := planDigests(c.journaled, c.verify, d)
				if got != c.want {
					t.Fatalf("planDigests(%v, %v, %v) = %+v, want %+v", c.journaled, c.verify, d, got, c.want)
				}
				// Every hashed combination records its digests exactly once
				// in the manifest: from the in-memory pipeline, the verifier
				// or commit's read-back.
				sources := 0
				if !c.journaled && got.pipeline != none {
					sources++
				}
				if got.verifier {
					sources++
				}
				if got.readBack && got.units != none {
					sources++
				}
				if want := map[bool]int{true: 1, false: 0}[hashed]; sources != want {
					t.Fatalf("%+v: %d sources of the manifest's digests, want %d", got, sources, want)
				}
				// A journaled job's units are hashed whatever its commit does
				// (the shards run before it); an in-memory job's never.
				if c.journaled != (got.units != none) && hashed {
					t.Fatalf("%+v: unit digests %v of a journaled=%v job", got, got.units, c.journaled)
				}
				if got.pipeline != got.units && c.journaled {
					t.Fatalf("%+v: a journaled pipeline hashes the units", got)
				}
			})
		}
	}
}

// TestRunDigests runs every combination of planDigests' table, in memory
// and journaled (run --resume), verified and not, for each --digest, on a
// contiguous and a compressed chunked output: every dataset gets the
// digest of --digest (none: none), the same whoever takes it (the
// pipeline, the verifier or commit's read-back), and the report says
// which check ran.
func TestRunDigests(t *testing.T) {
	ctx := context.Background()
	in := sample(t)
	layouts := map[string]Spec{
		"contiguous": {Readers: DefaultReaders},
		"parts":      {Readers: DefaultReaders, Layout: Chunked, ChunkShape: []int64{4, 4, 8}, Deflate: 1, Given: Given{Layout: true}},
	}
	for name, base := range layouts {
		for _, d := range []catalog.Digest{catalog.SHA256, catalog.BLAKE3, catalog.XXH64, catalog.NoDigest} {
			sums := map[string]string{} // dataset -> digest, the same in every combination
			for _, journaled := range []bool{false, true} {
				for _, verify := range []bool{true, false} {
					dp := planDigests(journaled, verify, d)
					s := base
					s.Digest = d
					if journaled {
						s.Shards = 1
					}
					spec := specOf(t, in, s)
					out := filepath.Join(t.TempDir(), "out")
					var log bytes.Buffer
					env := Env{Log: &log, Verify: verify, Jobs: 2, MaxMem: 64 << 20, Version: "test"}
					what := fmt.Sprintf("%s journaled=%v verify=%v %v", name, journaled, verify, d)
					if err := Run(ctx, out, spec, env); err != nil {
						t.Fatalf("%s: %v\n%s", what, err, log.String())
					}
					m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
					if err != nil {
						t.Fatal(err)
					}
					var want string
					switch {
					case verify:
						want = "every element equals the input"
					case dp.readBack && d == catalog.NoDigest:
						want = "every unit present (--digest none: no unit digest)"
					case dp.readBack:
						want = fmt.Sprintf("every unit's %v equals its journal record", d)
					default:
						want = "not verified (--no-verify)"
					}
					if m.Report == nil || !strings.HasPrefix(m.Report.Verified, want) {
						t.Errorf("%s: report %+v, want verified %q", what, m.Report, want)
					}
					n := 0
					for _, v := range m.Variables {
						for _, ds := range v.Datasets {
							n++
							got, key := ds.Sum(d), fmt.Sprintf("%s/%s", v.Name, ds.Path)
							if d == catalog.NoDigest {
								if ds.SHA256 != "" || ds.BLAKE3 != "" || ds.XXH64 != "" {
									t.Errorf("%s: %s has a digest", what, key)
								}
								continue
							}
							if got == "" {
								t.Errorf("%s: %s has no %v", what, key, d)
							} else if prev, ok := sums[key]; ok && prev != got {
								t.Errorf("%s: %s %v %s, another combination's %s", what, key, d, got, prev)
							}
							sums[key] = got
						}
					}
					if n == 0 {
						t.Fatalf("%s: no dataset in the manifest", what)
					}
				}
			}
		}
	}
}
