package job

import (
	"fmt"
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
