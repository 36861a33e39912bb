package job

import "relayout/catalog"

// digestPlan is where a job's digests come from: the one decision, taken
// by planDigests for every combination of the job's kind (in memory: run;
// journaled: run --resume, plan -o + rewrite + commit), its check (verify,
// --no-verify) and --digest. prepareRun and prepareWith give the rewriter
// its pipeline digest; commitJob fills the manifest through the verifier
// or the read-back it says. Which of the rewriter's own sites takes an
// in-memory dataset's digest (hashed in order, bands gathered in memory,
// read back from the written file, a read-only pass over the input) is
// the rewriter's, by the dataset's layout: rewriter's digestSite.
type digestPlan struct {
	// pipeline is what the rewrite pipeline hashes (rewriter.Options.Digest,
	// the Plan's Digest): in memory each dataset's digest as its units are
	// written, journaled each unit's, recorded in its shard's journal.
	pipeline catalog.Digest
	// units is the algorithm of the unit digests the journals record and
	// commit's read-back checks (NoDigest: none; an in-memory job keeps no
	// journal).
	units catalog.Digest
	// verifier: the verifier fills the manifest's digests from the bytes
	// it read through the library and compared equal to the input
	// (VerifyOutput's fill).
	verifier bool
	// readBack: commit reads the joined output back (checkUnits, through
	// Plan.ReadBack): every unit against its journal record and the
	// datasets' digests (--digest none: only their presence and shape).
	readBack bool
}

// planDigests decides where the digests of a job come from: journaled or
// in memory, verified or not, with digest, the manifest's algorithm
// (--digest as the user asked it; NoDigest: none recorded).
//
//	job        check        --digest  pipeline      units   verifier  readBack
//	in memory  verify       D         none          none    D         no
//	in memory  --no-verify  D         D (datasets)  none    no        no
//	journaled  verify       D         D (units)     D       D         no
//	journaled  --no-verify  D         D (units)     D       no        yes
//	any        any          none      none          none    no        journaled --no-verify
//
// Why, row by row:
//   - in memory, verify: the verifier reads every element of the output
//     anyway and hashes what it compared, so the pipeline hashes nothing
//     and the manifest's digests are the verifier's. Measured (big4, BP4
//     448³, session 22: bench/history/2026-12-05-session-22-summary.md):
//     the writer taking the digests as --no-verify does and the verifier
//     hashing nothing cost 1.05x the wall (n = 6, 4.26 against 3.97 s;
//     the writer's digests of chunked and sparse datasets need a read-back
//     or a second input pass, while the verifier is CPU-bound anyway).
//   - in memory, --no-verify: the one shard holds every unit, so each
//     dataset's digest is taken by the pipeline as it writes (the
//     rewriter's digestSite picks how, by layout); nothing reads the
//     output again, and no unit digest is taken (nothing to resume).
//   - journaled, verify: the pipeline still journals each unit's digest:
//     whether the commit verifies is the commit's choice (commit
//     --no-verify, run --resume --no-verify), not the job's signature, and
//     the shards ran before it. The verifier fills the manifest's digests;
//     commit's journal pass (checkUnits reads the whole output again to
//     hash the units) adds nothing to a comparison of every element with
//     the input, and is skipped (23f10ad).
//   - journaled, --no-verify: the shards are separate processes and none
//     of the algorithms is combinable, so no shard can take a dataset's
//     digest: each unit's is journaled, and commit reads the joined output
//     back once, checking every unit against its record (damage between
//     the shard's write and the commit) and taking the datasets' digests
//     from the same read (a second row-major pass where the units are
//     tiles, boxes of chunks or cuboids: ReadBack.Dataset).
//   - --digest none: nothing is hashed anywhere and the manifest's digests
//     stay empty; the verifier still compares every element, and a
//     journaled --no-verify commit still reads back each dataset's
//     presence and shape.
func planDigests(journaled, verify bool, digest catalog.Digest) digestPlan {
	if digest == catalog.NoDigest {
		return digestPlan{pipeline: catalog.NoDigest, units: catalog.NoDigest, readBack: journaled && !verify}
	}
	if !journaled {
		if verify {
			return digestPlan{pipeline: catalog.NoDigest, units: catalog.NoDigest, verifier: true}
		}
		return digestPlan{pipeline: digest, units: catalog.NoDigest}
	}
	return digestPlan{pipeline: digest, units: digest, verifier: verify, readBack: !verify}
}
