// Command relayout reorganizes write-optimized simulation output (many small
// scattered blocks in sub-files or chunked HDF5) into read-optimized HDF5, one
// file per variable, and proves that every element arrived.
//
// main.go wires subcommands and maps errors to exit codes; each subcommand lives
// in its own cmd_*.go file as runX(ctx, opts, args). The job itself (run,
// run --resume, plan -o, rewrite, commit) is package job: main turns flags
// into a job.Spec and a job.Env (cli_spec.go) and errors into exit codes.
//
// Imports flow one way: main -> job -> {reader, planner, rewriter} -> catalog;
// planner never imports reader or rewriter, rewriter never imports reader,
// catalog imports no relayout package, and cgo lives in internal/h5 alone
// (layering_test.go checks every import with go list).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"relayout/catalog"
	"relayout/job"
)

// version is stamped by `make build` (-ldflags -X main.version=...).
var version = "0.1.0-dev"

// Exit codes, documented in --help and docs/usage.md.
const (
	exitOK          = 0
	exitFailed      = 1 // verification failed, or the job stopped part-way
	exitBadInput    = 2 // bad input or usage
	exitInterrupted = 130
)

const usage = `relayout: rewrite scattered simulation output into read-optimized HDF5.

Usage:
  relayout run IN -o OUT [flags]     catalog, plan, rewrite and verify IN into OUT
  relayout catalog IN [flags]        list variables, steps, blocks, bytes and files of IN
  relayout plan IN [flags]           merged cuboids, target layout and predicted read cost per variable
                                     (the layouts run writes with the same flags; both default to contiguous)
  relayout plan IN -o OUT --shards N also prepare OUT for N shards (catalog, output files allocated)
  relayout rewrite OUT [--shard I/N] run one shard (default: from SLURM_ARRAY_TASK_ID, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID)
  relayout commit OUT                check every shard finished and every unit, write the manifest, move files to final names
  relayout inspect IN --svg FILE     picture of a slice: blocks by writer rank, cuboids, read cost
  relayout verify IN OUT             compare every element of IN with a relayout OUT
  relayout calibrate DIR             measure latency and bandwidth of DIR for the cost model (--cost-model)
  relayout generate DIR              write a synthetic openPMD-HDF5 series (values known by index)
  relayout version                   print the version

Run 'relayout COMMAND --help' for the flags of a command.

Exit codes:
  0    success
  1    verification failed, or the job stopped part-way (commit: a shard has not
       finished; rewrite/commit/run: OUT is locked by another relayout process)
  2    bad input or usage
  130  interrupted (SIGINT/SIGTERM)
`

// commands are the verbs that take flags, each defining its own flag set
// in its cmd_*.go file: dispatch runs them, flagSetOf (flags.go) reads
// their flag sets for the documentation test.
var commands = map[string]func(context.Context, []string) error{
	"run":       runRun,
	"catalog":   runCatalog,
	"plan":      runPlan,
	"rewrite":   runRewrite,
	"commit":    runCommit,
	"inspect":   runInspect,
	"calibrate": runCalibrate,
	"verify":    runVerify,
	"generate":  runGenerate,
}

// verbs are the commands dispatch knows (for "did you mean").
var verbs = []string{"run", "catalog", "plan", "rewrite", "commit", "inspect", "verify", "calibrate", "generate", "version", "help"}

// verb is the command being run, for the help hint of usage errors.
var verb string

// helpHint is the last line of a usage error: the verb's help, or the
// global one for an unknown verb.
func helpHint() string {
	if verb == "" || verb == "help" || verb == "version" {
		return "see relayout --help"
	}
	return "see relayout " + verb + " --help"
}

// usagef is a usage error (job.ErrUsage: exit 2, with the verb's help hint).
func usagef(format string, a ...any) error { return job.Usagef(format, a...) }

// errVerifyFailed reports that verification found differences (exit 1).
var errVerifyFailed = job.ErrVerifyFailed

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(dispatch(ctx, os.Args[1:]))
}

func dispatch(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return exitBadInput
	}
	var err error
	verb = args[0]
	switch args[0] {
	case "version", "--version":
		fmt.Println("relayout", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		run, ok := commands[args[0]]
		if !ok {
			verb = ""
			err = usagef("unknown command %q%s", args[0], didYouMean(suggest(args[0], verbs, 2)))
			break
		}
		err = run(ctx, args[1:])
	}
	return exitCode(ctx, cliError(err))
}

// exitCode prints err and maps it to the documented exit codes.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return exitOK
	}
	var full *job.DiskFullError
	switch {
	case errors.Is(err, errHelp):
		return exitOK
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		fmt.Fprintln(os.Stderr, "relayout: interrupted:", err)
		return exitInterrupted
	case errors.Is(err, job.ErrUsage):
		fmt.Fprintf(os.Stderr, "relayout: %v\n%s\n", err, helpHint())
		return exitBadInput
	case errors.As(err, &full):
		// Out of space: may succeed once space is freed (before the
		// sentinels: SQLite's full disk can surface as a corrupt database).
		fmt.Fprintln(os.Stderr, "relayout:", err)
		return exitFailed
	case errors.Is(err, errVerifyFailed):
		fmt.Fprintln(os.Stderr, "relayout:", err)
		return exitFailed
	case errors.Is(err, catalog.ErrCorrupt), errors.Is(err, catalog.ErrUnsupported), errors.Is(err, catalog.ErrNotFound):
		fmt.Fprintln(os.Stderr, "relayout:", err)
		return exitBadInput
	default:
		fmt.Fprintln(os.Stderr, "relayout:", err)
		return exitFailed
	}
}
