package job

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/gen"
	"relayout/internal/limits"
	"relayout/internal/testkit"
	"relayout/reader"
	"relayout/rewriter"
)

// sample writes a small generated openPMD series and returns its directory.
func sample(t *testing.T) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "in")
	if _, err := gen.WriteOpenPMD(gen.OpenPMDSpec{Dir: in, Shape: [3]int64{16, 12, 8}, Chunk: [3]int64{8, 8, 8}, Steps: []int64{0, 5}, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return in
}

func specOf(t *testing.T, in string, s Spec) Spec {
	t.Helper()
	abs, err := RealPath(in)
	if err != nil {
		t.Fatal(err)
	}
	s.Input = abs
	if err := s.Validate("run"); err != nil {
		t.Fatal(err)
	}
	return s
}

func layouts(t *testing.T, out string) map[string]bool {
	t.Helper()
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			got[d.Layout] = true
		}
	}
	return got
}

// TestRunRerun: the job decides reruns — the same spec on a finished OUT
// is done (plain or journaled: shards do not decide the output), another
// layout is refused as a usage error naming the difference, Force
// replaces the output.
func TestRunRerun(t *testing.T) {
	ctx := context.Background()
	in := sample(t)
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	env := Env{Log: &log, Verify: true, Jobs: 2, MaxMem: 64 << 20, Version: "test"}
	plain := specOf(t, in, Spec{Readers: DefaultReaders})
	if err := Run(ctx, out, plain, env); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if got := layouts(t, out); !got["contiguous"] || len(got) != 1 {
		t.Fatalf("default layout wrote %v", got)
	}
	journaled := plain
	journaled.Shards = 1
	for _, s := range []Spec{plain, journaled} {
		log.Reset()
		if err := Run(ctx, out, s, env); err != nil || !strings.Contains(log.String(), "done") {
			t.Fatalf("rerun (shards %d): %v\n%s", s.Shards, err, log.String())
		}
	}
	chunked := specOf(t, in, Spec{Layout: Chunked, Chunks: []int64{2, 2, 2}, Given: Given{Layout: true}})
	err := Run(ctx, out, chunked, env)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `layout was "contiguous", now "chunked"`) {
		t.Fatalf("other layout on a finished OUT: %v", err)
	}
	env.Force = true
	if err := Run(ctx, out, chunked, env); err != nil {
		t.Fatalf("--force: %v", err)
	}
	if got := layouts(t, out); !got["chunked"] || got["contiguous"] {
		t.Fatalf("--force chunked wrote %v", got)
	}
}

// TestShardedJob: Prepare, RewriteShard and Commit: a shard count other
// than the plan's is a usage error, a commit before every shard finished
// fails without committing (not a usage error: rerun it later), and a
// second commit is done.
func TestShardedJob(t *testing.T) {
	ctx := context.Background()
	in := sample(t)
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	env := Env{Log: &log, Verify: true, Jobs: 1, MaxMem: 64 << 20, Version: "test", Verb: "plan"}
	spec := specOf(t, in, Spec{Layout: Chunked, ChunkShape: []int64{8, 4, 8}, Deflate: 1, Shards: 2, UnitBytes: 1024, Given: Given{Layout: true}})
	job, err := Prepare(ctx, out, spec, env)
	if err != nil || job == nil || job.Shards != 2 {
		t.Fatalf("prepare: %v %v\n%s", job, err, log.String())
	}
	if again, err := Prepare(ctx, out, spec, env); err != nil || again != nil || !strings.Contains(log.String(), "already prepared") {
		t.Fatalf("prepare again: %v %v\n%s", again, err, log.String())
	}
	other := spec
	other.Deflate = 2
	if _, err := Prepare(ctx, out, other, env); !errors.Is(err, ErrUsage) {
		t.Fatalf("prepare with other options: %v", err)
	}
	if err := RewriteShard(ctx, out, Shard{I: 0, N: 3, From: "--shard"}, env); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "planned for 2 shards") {
		t.Fatalf("shard 0/3 of a 2-shard job: %v", err)
	}
	if err := RewriteShard(ctx, out, Shard{I: 0, N: 2, From: "--shard"}, env); err != nil {
		t.Fatal(err)
	}
	if err := Commit(ctx, out, env); err == nil || errors.Is(err, ErrUsage) {
		t.Fatalf("commit with shard 1 unfinished: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, catalog.ManifestName)); err == nil {
		t.Fatal("a manifest in OUT after a failed commit")
	}
	if err := RewriteShard(ctx, out, Shard{I: 1, N: 2, From: "--shard"}, env); err != nil {
		t.Fatal(err)
	}
	if err := Commit(ctx, out, env); err != nil {
		t.Fatalf("commit: %v\n%s", err, log.String())
	}
	log.Reset()
	if err := Commit(ctx, out, env); err != nil || !strings.Contains(log.String(), "done") {
		t.Fatalf("second commit: %v\n%s", err, log.String())
	}
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil || m.Options == nil || m.Options.Shards != 2 || m.Options.Compression != "deflate:1" || m.Options.Layout != "chunked" {
		t.Fatalf("manifest options %+v, %v", m.Options, err)
	}
}

// TestCheckOutput: OUT never inside the input, and empty unless forced.
func TestCheckOutput(t *testing.T) {
	in := sample(t)
	files, _ := filepath.Glob(filepath.Join(in, "*.h5"))
	if len(files) == 0 {
		t.Fatal("no sample files")
	}
	full := t.TempDir()
	os.WriteFile(filepath.Join(full, "x"), []byte("x"), 0o644)
	for _, c := range []struct {
		in, out string
		force   bool
		want    string
	}{
		{in, filepath.Join(in, "out"), false, "is inside the input"},
		{files[0], in, false, "is the input's own directory"},
		{in, in, false, "is inside the input"},
		{in, full, false, "is not empty (use --force to write into it)"},
		{in, full, true, ""},
		{in, filepath.Join(t.TempDir(), "new"), false, ""},
	} {
		err := checkOutput(c.in, c.out, c.force)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s -> %s: %v", c.in, c.out, err)
			}
			continue
		}
		if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s -> %s: %v; want a usage error with %q", c.in, c.out, err, c.want)
		}
	}
	if err := checkOutput(filepath.Join(in, "missing"), t.TempDir(), false); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing input: %v", err)
	}
}

// TestInterrupted: a canceled job says what OUT/.relayout holds and how to
// go on, and still wraps context.Canceled.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	os.MkdirAll(workDir(out), 0o755)
	os.WriteFile(filepath.Join(workDir(out), "catalog.db"), make([]byte, 2048), 0o644)
	for _, c := range []struct {
		journaled bool
		want      string
	}{{false, "relayout run --resume keeps finished work"}, {true, "the units already written are kept"}} {
		err := interrupted(ctx, context.Canceled, out, c.journaled)
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing was committed") ||
			!strings.Contains(err.Error(), "(2.0KiB)") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("journaled %v: %v", c.journaled, err)
		}
	}
	if err := interrupted(context.Background(), errors.New("other"), out, false); err.Error() != "other" {
		t.Errorf("an error that is no interruption changed: %v", err)
	}
}

// TestInterruptedShard: a shard stopped by a signal (a time limit) says how
// many of its units its journal keeps and how to rerun it, also as an
// array index, and still wraps context.Canceled.
func TestInterruptedShard(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := t.TempDir()
	job := &Job{ID: "job1", Plan: rewriter.Plan{Shards: 3}}
	for u := range 9 {
		job.Units = append(job.Units, rewriter.Unit{ID: u, Shard: u % 3})
	}
	jpath := journalPath(workDir(out), 1, 3)
	os.MkdirAll(filepath.Dir(jpath), 0o755)
	j, err := openJournal(jpath, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []int{1, 4} {
		j.Add(rewriter.UnitRecord{Unit: u})
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	err = interruptedShard(ctx, fmt.Errorf("rewriter: E/x: %w", context.Canceled), out, job, 1)
	for _, want := range []string{"shard-1-of-3 of " + out + " stopped with 2 of its 3 units journaled", "relayout rewrite " + out + " --shard 1/3", "sbatch --array=1", "then relayout commit"} {
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), want) {
			t.Errorf("interrupted shard: %v; want %q", err, want)
		}
	}
	if err := interruptedShard(context.Background(), errors.New("other"), out, job, 1); err.Error() != "other" {
		t.Errorf("an error that is no interruption changed: %v", err)
	}
}

// TestRunChargesKeptBlocks: the block lists an in-memory run keeps are
// charged to --max-mem: the data buffers' budget (the manifest's io
// max_mem) is --max-mem less them, at most a quarter, and the run says
// how much they hold; the manifest's options keep the --max-mem asked.
func TestRunChargesKeptBlocks(t *testing.T) {
	ctx := context.Background()
	in := sample(t)
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	env := Env{Log: &log, Verbose: &log, Verify: true, Jobs: 2, MaxMem: 64 << 20, Version: "test"}
	if err := Run(ctx, out, specOf(t, in, Spec{Readers: DefaultReaders}), env); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if m.IO == nil || m.Options.MaxMem != env.MaxMem {
		t.Fatalf("manifest options max_mem %d, io %+v", m.Options.MaxMem, m.IO)
	}
	kept := env.MaxMem - m.IO.MaxMem
	if kept <= 0 || kept > env.MaxMem/4 || m.IO.PeakMem > m.IO.MaxMem {
		t.Fatalf("data budget %d of --max-mem %d (peak %d): block lists kept %d", m.IO.MaxMem, env.MaxMem, m.IO.PeakMem, kept)
	}
	if !strings.Contains(log.String(), "of block lists kept in memory, of --max-mem") {
		t.Errorf("the run does not say what the kept lists take:\n%s", log.String())
	}
}

// TestRunChargesReaderPlans: what a SCORPIO input's reader keeps to read
// its blocks (the decomposition plans, reader.Resident) is charged to
// --max-mem like the kept block lists: the data buffers' budget (the
// manifest's io max_mem) is --max-mem less both, and the run says how
// much the plans hold.
func TestRunChargesReaderPlans(t *testing.T) {
	ctx := context.Background()
	in := filepath.Join(testkit.SharedData(t, "scorpio/adios-io16"), "f.eam.h1.0001-01-01-00000.nc.bp")
	ds, err := reader.Open(in, reader.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resident, err := reader.Resident(ctx, ds)
	ds.Close()
	if err != nil || resident <= 0 {
		t.Fatalf("the SCORPIO reader keeps %d bytes of plans: %v", resident, err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var log bytes.Buffer
	env := Env{Log: &log, Verbose: &log, Verify: true, Jobs: 2, MaxMem: 64 << 20, Version: "test"}
	if err := Run(ctx, out, specOf(t, in, Spec{Readers: DefaultReaders}), env); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if m.IO == nil {
		t.Fatal("no io figures in the manifest")
	}
	charged := env.MaxMem - m.IO.MaxMem
	if charged < resident || charged > resident+env.MaxMem/4 || m.IO.PeakMem > m.IO.MaxMem {
		t.Fatalf("data budget %d of --max-mem %d (peak %d): %d charged, the plans hold %d", m.IO.MaxMem, env.MaxMem, m.IO.PeakMem, charged, resident)
	}
	if want := "reader: " + HumanBytes(resident) + " kept in memory to read the blocks"; !strings.Contains(log.String(), want) {
		t.Errorf("the run does not say what the plans take (%q):\n%s", want, log.String())
	}
}

// TestRunPrintsLimits: run -v prints the limits once, those of the data
// budget (--max-mem less the kept block lists: the manifest's io max_mem)
// and --jobs, which the rewrite and the check use; not without -v.
func TestRunPrintsLimits(t *testing.T) {
	ctx := context.Background()
	in := sample(t)
	out := filepath.Join(t.TempDir(), "out")
	var log, verbose bytes.Buffer
	env := Env{Log: &log, Verbose: &verbose, Verify: true, Jobs: 2, MaxMem: 64 << 20, Version: "test"}
	if err := Run(ctx, out, specOf(t, in, Spec{Readers: DefaultReaders}), env); err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	want := limits.For(m.IO.MaxMem, env.Jobs).String() + "\n"
	if n := strings.Count(verbose.String(), want); n != 1 {
		t.Errorf("-v: %d lines %q, want 1:\n%s", n, want, verbose.String())
	}
	if strings.Contains(log.String(), "limits: ") {
		t.Errorf("the limits without -v:\n%s", log.String())
	}
}
