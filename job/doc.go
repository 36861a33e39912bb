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
//	spec.go     Spec, Layout kinds, Signature/ParseSignature/SignatureDiff,
//	            Validate (the cross-flag checks), PlanOptions (plan previews
//	            what run writes), the manifest's options
//	job.go      Env (log, display, budgets, verify, report, force), Run,
//	            Prepare, RewriteShard, Commit
//	out.go      OUT's checks (never inside the input, empty unless --force),
//	            its lock, settleOut (roll forward, done, --force, refusals),
//	            the interrupted message
//	catalog.go  BuildCatalog (a reader into a catalog store), VerifyOutput
//	            (the one call of package verify, the independent verifier)
//	chunks.go   the up-front notes on --chunks/--chunk-shape
//	layouts.go  the per-array layouts of auto and of --compress alone
//	space.go    free space checks and disk-full hints
//	shard.go    --shard I/N and the launchers' environment
//	errors.go   ErrUsage/Usagef (main: exit 2), ErrVerifyFailed (exit 1)
//
// What it must not do: parse flags or print usage (main), touch the
// rewriter's internals (only its exported API), map errors to exit codes.
// Every function takes the context of the command; none starts goroutines
// of its own (the rewriter's pipelines do) but BuildCatalogEach, whose one
// goroutine calls its each beside the store and ends before it returns.
//
// The work directory OUT/.relayout it owns (the rewriter writes inside it):
//
//	OUT/.relayout/
//	  lock                 flock: exclusive for run, plan -o, commit; shared by rewrite
//	  lock.shard-I-of-N    flock: one process per shard
//	  catalog.db           the input's catalog (SQLite), built by run/plan -o
//	  job.json             the prepared job (rewriter.Job): units, datasets, Signature
//	  journal/shard-*.log  each shard's finished units with their digest (--digest)
//	  parts/shard-*.part   compressed or sparse chunks a shard appended, joined at commit
//	  stage/               the output under its final names, manifest included
//	  verify.db            the output's catalog while commit checks the units against the journal (removed)
//	  committing           the commit record (renames) while moving stage/ to OUT
//	  committed            the same record once every rename is durable: done
//
// A finished OUT is "done" to a rerun with the same signature and input
// files (sizes, mtimes); --force takes it apart first (old manifest first);
// a difference is refused naming it. Deleting OUT/.relayout of an
// unfinished job loses only the work done so far.
package job
