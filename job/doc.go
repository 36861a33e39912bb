// Package job owns a relayout job: what it writes (Spec, with one
// versioned, tagged JSON signature), how a rerun of it is decided, and the
// one path every writing verb takes:
//
//	relayout run            Run: Prepare + every shard in-process + commit, one path; the job
//	                        in memory (Spec.Shards 0) or journaled (Spec.Shards 1: --resume)
//	relayout plan -o OUT    Prepare
//	relayout rewrite OUT    RewriteShard
//	relayout commit OUT     Commit
//
// Package map (main → job → {reader, planner, rewriter, verify} → catalog; no
// package below job imports it, layering_test.go checks):
//
//	spec.go       Spec, Layout kinds, Signature/parseSignature/signatureDiff,
//	              Validate (the cross-flag checks), PlanOptions (plan previews
//	              what run writes), the manifest's options
//	job.go        Env (log, display, budgets, verify, report, force), Run,
//	              Prepare, RewriteShard, Commit
//	workdir.go    OUT/.relayout: job.json (Job: the rewriter's Plan with the
//	              job's id, input, signature and input files), LoadJob,
//	              prepareJob (the work directory emptied, the plan, job.json
//	              last), committed/committing, the shards' file names
//	lock.go       the flocks (lockExclusive, lockShared) and their records
//	journal.go    each shard's journal (Journal: the rewriter.Journal its
//	              RewriteShard records units in), jobRecords
//	digest.go     planDigests: the one place that decides where a job's
//	              digests come from (the rewrite pipeline's, the verifier's,
//	              commit's read-back; the unit digests journals record) for
//	              every --resume x --no-verify x --digest, with the reasons;
//	              which of its sites takes a dataset's digest is the
//	              rewriter's, per layout (its engine.digestSite)
//	commitlog.go  the commit record, commitStage, rollForward, uncommit,
//	              inputFiles/inputsDiffer
//	commit.go     syncStage, stageManifest, checkUnits (each unit against
//	              its journal record), buildReport, the I/O summaries
//	summary.go    the lines that end a committed job (written, verified,
//	              skipped, manifest); Env.Log gets them, the diagnostics
//	              (per-variable figures, OK lines, io: lines) go to
//	              Env.Verbose (-v)
//	lines.go      RouteLines: a check's lines split by their prefix
//	manifest.go   the manifest written through a synced temporary file
//	append.go     run --append (Env.Append): settleAppend (OUT's finished
//	              output and the input files changed since), checkPlan (OUT's
//	              datasets planned again alike; what is new), checkDigests
//	              (OUT's arrays rewritten equal to its digests) and the
//	              manifest's appends; OUT's commit record kept until the
//	              new commit
//	out.go        OUT's checks (never inside the input, empty unless --force),
//	              its lock, settleOut (roll forward, done, --force, refusals),
//	              the interrupted messages (of a job, of a shard)
//	catalog.go    BuildCatalog (a reader into a catalog store), VerifyOutput
//	              (the one call of package verify, the independent verifier)
//	chunks.go     the up-front notes on --chunks/--chunk-shape
//	layouts.go    the per-array layouts of auto and of --compress alone
//	space.go      free space checks and disk-full hints
//	shard.go      Shard: --shard I/N and the launchers' environment,
//	              settled against the planned count (planned: a part of
//	              a Slurm array resubmitted alone)
//	errors.go     ErrUsage/Usagef (main: exit 2), ErrVerifyFailed (exit 1)
//
// The rewriter executes the plan; the job drives it through rewriter.Prepare
// (into the stage), RewriteShard (a rewriter.Shard: index, part file, the
// units its journal lists, the journal), JoinParts (the part files),
// the plan's ReadBack (checkUnits' reading) and its other methods
// (PipelineDigests, CheckBudget, Finished, Release), with
// rewriter.Options and its Monitor.
//
// What it must not do: parse flags or print usage (main), touch the
// rewriter's internals (only its exported API), map errors to exit codes.
// Every function takes the context of the command. Its goroutines are few
// and end before the function that starts them returns: commitJob's one
// syncs an in-memory job's files (syncStage) beside JoinParts and the
// verification, and BuildCatalogEach's one calls its each beside the store
// (alongside); the pipelines' goroutines are the rewriter's and the
// verifier's.
//
// The work directory OUT/.relayout it owns (the rewriter writes inside it):
//
//	OUT/.relayout/
//	  lock                 flock: exclusive for run, plan -o, commit; shared by rewrite
//	  lock.shard-I-of-N    flock: one process per shard
//	  catalog.db           the input's catalog (SQLite), built by run/plan -o
//	  job.json             the prepared job (Job: the rewriter's Plan, units, datasets, Signature)
//	  journal/shard-*.log  each shard's finished units with their digest (--digest)
//	  parts/shard-*.part   compressed or sparse chunks a shard appended, joined at commit
//	  stage/               the output under its final names, manifest included
//	  verify.db            the output's catalog while commit checks the units against the journal (removed)
//	  committing           the commit record (renames) while moving stage/ to OUT
//	  committed            the same record once every rename is durable: done
//
// A finished OUT is "done" to a rerun with the same signature and input
// files (sizes, mtimes); --force takes it apart first (old manifest first);
// a difference is refused naming it. run --append extends it instead (append.go). Deleting OUT/.relayout of an
// unfinished job loses only the work done so far.
package job
