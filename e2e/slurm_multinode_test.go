package e2e

import (
	"bytes"
	"context"
	bin "encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSlurmMultiNode runs relayout's batch path on a Slurm of three
// compute nodes on this host (startSlurm), as a user would, and through
// the failures a user meets: a node lost mid-array, a shard killed by its
// time limit, a commit submitted while a shard is still pending. Every
// subtest ends with the output of a one-process relayout run (the
// manifests' digests equal, every element compared with the input by the
// commit job and by relayout verify), and at every poll no file of OUT is
// under its final name before the commit began.
func TestSlurmMultiNode(t *testing.T) {
	c := startSlurm(t, 3)
	dir := t.TempDir()
	// 128 MiB in 3 shards of about 680 units of 64 KiB: a shard journals
	// its first batch of 64 units well before its last (SIGSTOP catches
	// it mid-shard, see freezeMidShard).
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "256,128,64", "--chunk-shape", "16,16,16", "--steps", "0,100")
	ref := filepath.Join(dir, "ref")
	mustRun(t, "run", in, "-o", ref, "-q")
	want := datasetSums(t, ref)
	script := sbatchScript(t)

	// prepare plans OUT for 3 shards (plan's default layout, or layout's
	// flags) in its own folder, where the jobs' logs go too; it returns
	// the cluster watching OUT, OUT, the environment of the example script
	// and sbatch's -o.
	prepare := func(t *testing.T, layout ...string) (*slurmCluster, string, []string, string) {
		sub := t.TempDir()
		out := filepath.Join(sub, "out")
		mustRun(t, append([]string{"plan", in, "-o", out, "--shards", "3", "--unit-size", "64KiB"}, layout...)...)
		return c.in(t, out), out, []string{"RELAYOUT=" + binary, "OUT=" + out}, filepath.Join(sub, "slurm-%x-%A_%a.out")
	}
	// done checks a committed OUT against the one-process run.
	done := func(t *testing.T, what, out string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(out, "relayout.json")); err != nil {
			t.Fatalf("%s: not committed: %v\n%s", what, err, jobLogs(filepath.Dir(out)))
		}
		sameSums(t, what, datasetSums(t, out), want)
		mustRun(t, "verify", in, out)
	}

	t.Run("array", func(t *testing.T) {
		c, out, env, logs := prepare(t)
		shards := c.sbatch(env, "--array=0-2", "-o", logs, script, "rewrite")
		commit := c.sbatch(env, "--dependency=afterok:"+shards, "-o", logs, script, "commit")
		nodes := map[string]bool{}
		for _, j := range c.awaitJobs(60*time.Second, shards, commit) {
			if j["JobState"] != "COMPLETED" {
				t.Fatalf("job %s: %s\n%s", j["JobId"], j["JobState"], jobLogs(filepath.Dir(out)))
			}
			if j["ArrayJobId"] == shards {
				nodes[j["NodeList"]] = true
			}
		}
		if len(nodes) < 2 {
			t.Fatalf("the 3 shards ran on %v: want 2 nodes or more", nodes)
		}
		t.Logf("shards ran on %d nodes", len(nodes))
		done(t, "sbatch --array=0-2 + commit", out)
	})

	t.Run("srun", func(t *testing.T) {
		// One task per node in one allocation: the shard is SLURM_PROCID
		// of SLURM_NTASKS; each task says its node first.
		c, out, _, _ := prepare(t)
		b := c.srun(90*time.Second, "-N", "3", "--ntasks-per-node=1", "-l",
			"sh", "-c", `echo "node $SLURMD_NODENAME"; exec "$0" "$@"`, binary, "rewrite", out, "--jobs", "1")
		nodes := map[string]bool{}
		for task := range 3 {
			m := regexp.MustCompile(fmt.Sprintf(`(?m)^%d: node (\S+)$`, task)).FindStringSubmatch(b)
			if m == nil || !strings.Contains(b, fmt.Sprintf("%d: shard-%d-of-3: ", task, task)) {
				t.Fatalf("srun: task %d did not say its node or run shard %d:\n%s", task, task, b)
			}
			nodes[m[1]] = true
		}
		if len(nodes) != 3 {
			t.Fatalf("srun -N 3: tasks on %v", nodes)
		}
		c.published()
		c.srun(90*time.Second, "-N", "1", "-n", "1", binary, "commit", out)
		done(t, "srun -N 3 + srun commit", out)
	})

	t.Run("commit-while-pending", func(t *testing.T) {
		// Shard 1 held: the commit job a user submits without waiting for
		// it must refuse, naming the shard and the command that finishes
		// it, and publish nothing; once the shard ran, commit succeeds.
		c, out, env, logs := prepare(t)
		shards := c.sbatch(env, "--array=0-2", "--hold", "-o", logs, script, "rewrite")
		c.command(nil, "scontrol", "release", shards+"_0", shards+"_2")
		c.await(60*time.Second, "shards 0 and 2 completed", func() bool {
			n := 0
			for _, j := range c.jobs(shards) {
				if j["ArrayTaskId"] != "1" && j["JobState"] == "COMPLETED" {
					n++
				}
			}
			return n == 2
		})
		early := c.sbatch(env, "-o", logs, script, "commit")
		j := c.awaitJobs(60*time.Second, early)[0]
		log := jobLogs(filepath.Dir(out))
		if j["JobState"] != "FAILED" || j["ExitCode"] != "1:0" {
			t.Fatalf("commit while shard 1 is pending: job %s %s exit %s, want FAILED 1:0\n%s", early, j["JobState"], j["ExitCode"], log)
		}
		if !strings.Contains(log, "shard-1-of-3: ") || !strings.Contains(log, "units not done (run: relayout rewrite OUT --shard 1/3)") {
			t.Fatalf("the refused commit does not name shard 1 and its command:\n%s", log)
		}
		if names := finalEntries(out); len(names) > 0 {
			t.Fatalf("a refused commit left %v in OUT", names)
		}
		for _, rec := range c.jobs(shards) {
			if rec["ArrayTaskId"] == "1" && rec["JobState"] != "PENDING" {
				t.Fatalf("shard 1 %s while held", rec["JobState"])
			}
		}
		c.command(nil, "scontrol", "release", shards+"_1")
		commit := c.sbatch(env, "--dependency=afterok:"+shards, "-o", logs, script, "commit")
		for _, j := range c.awaitJobs(60*time.Second, shards, commit) {
			if j["JobState"] != "COMPLETED" {
				t.Fatalf("job %s: %s\n%s", j["JobId"], j["JobState"], jobLogs(filepath.Dir(out)))
			}
		}
		done(t, "commit refused while a shard was pending, then committed", out)
	})

	t.Run("time-limit", func(t *testing.T) {
		// Shard 1 stopped mid-shard (as if its file system hung) until
		// its one-minute limit: Slurm sends SIGCONT, SIGTERM and
		// (KillWait later) SIGKILL; the dependent commit never runs. The
		// user resubmits that index alone and a commit after it.
		c, out, env, logs := prepare(t)
		shards := c.sbatch(env, "--array=0-2", "--time=1", "-o", logs, script, "rewrite")
		commit := c.sbatch(env, "--dependency=afterok:"+shards, "-o", logs, script, "commit")
		c.freezeMidShard(shards, 1, out)
		c.await(150*time.Second, "shard 1 killed by its time limit", func() bool {
			for _, j := range c.jobs(shards) {
				if j["ArrayTaskId"] == "1" {
					return j["JobState"] == "TIMEOUT"
				}
			}
			return false
		})
		c.await(30*time.Second, "the commit job's dependency failed", func() bool {
			return c.jobs(commit)[0]["Reason"] == "DependencyNeverSatisfied"
		})
		c.command(nil, "scancel", commit)
		if names := finalEntries(out); len(names) > 0 {
			t.Fatalf("OUT has %v before any commit", names)
		}
		// The shard's log says why it stopped, what it kept and how to
		// go on.
		b, _ := os.ReadFile(filepath.Join(filepath.Dir(out), fmt.Sprintf("slurm-relayout-%s_1.out", shards)))
		for _, want := range []string{"DUE TO TIME LIMIT", "units journaled, which are kept", "--shard 1/3", "sbatch --array=1"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the timed-out shard's log does not say %q:\n%s", want, b)
			}
		}
		again := c.sbatch(env, "--array=1", "-o", logs, script, "rewrite")
		commit = c.sbatch(env, "--dependency=afterok:"+again, "-o", logs, script, "commit")
		for _, j := range c.awaitJobs(60*time.Second, shards, again, commit) {
			want := "COMPLETED"
			if j["ArrayJobId"] == shards && j["ArrayTaskId"] == "1" {
				want = "TIMEOUT"
			}
			if j["JobState"] != want {
				t.Fatalf("job %s: %s, want %s\n%s", j["JobId"], j["JobState"], want, jobLogs(filepath.Dir(out)))
			}
		}
		resumed(t, filepath.Join(filepath.Dir(out), fmt.Sprintf("slurm-relayout-%s_1.out", again)), 1)
		done(t, "shard killed by its time limit, index resubmitted", out)
	})

	t.Run("node-killed", func(t *testing.T) {
		// The node running shard 1 dies mid-shard: its slurmd and the
		// shard's processes killed at once. Slurm finds the node not
		// responding, sets it DOWN and requeues the task (JobRequeue's
		// default) on another node, where it resumes from its journal;
		// the commit job submitted with the array then runs. Compressed
		// chunks: the shard leaves a half-written part file too (the time
		// limit's shard wrote contiguous datasets in place).
		c, out, env, logs := prepare(t, "--layout", "chunked", "--chunk-shape", "8,16,64", "--compress", "deflate:1")
		shards := c.sbatch(env, "--array=0-2", "-o", logs, script, "rewrite")
		commit := c.sbatch(env, "--dependency=afterok:"+shards, "-o", logs, script, "commit")
		node := c.freezeMidShard(shards, 1, out)
		part := filepath.Join(out, ".relayout", "parts", "shard-1-of-3.part")
		if st, err := os.Stat(part); err != nil || st.Size() == 0 {
			t.Fatalf("shard 1 stopped without chunks in its part file: %v", err)
		}
		t.Cleanup(func() {
			c.startNode(node)
			if err := c.awaitIdle(60 * time.Second); err != nil {
				t.Error(err)
			}
		})
		c.killNode(node)
		var task1 slurmJob
		for _, j := range c.awaitJobs(120*time.Second, shards, commit) {
			if j["JobState"] != "COMPLETED" {
				t.Fatalf("job %s: %s\n%s", j["JobId"], j["JobState"], jobLogs(filepath.Dir(out)))
			}
			if j["ArrayJobId"] == shards && j["ArrayTaskId"] == "1" {
				task1 = j
			}
		}
		if task1["Restarts"] == "0" || task1["NodeList"] == node {
			t.Fatalf("shard 1 was not requeued away from %s: %v", node, task1)
		}
		log := resumed(t, filepath.Join(filepath.Dir(out), fmt.Sprintf("slurm-relayout-%s_1.out", shards)), 1)
		if !strings.Contains(log, "did not finish (killed, or its node failed)") {
			t.Errorf("the requeued shard does not report the killed one's stale lock:\n%s", log)
		}
		t.Logf("shard 1 killed with node %s, requeued on %s", node, task1["NodeList"])
		done(t, "node killed mid-shard, task requeued by Slurm", out)
	})
}

// resumed checks that a shard's log says it resumed from its journal (some
// units finished before) and returns the log.
func resumed(t *testing.T, logPath string, shard int) string {
	t.Helper()
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(fmt.Sprintf(`shard-%d-of-3: (\d+) units \((\d+) finished before\)`, shard)).FindStringSubmatch(string(b))
	if m == nil {
		t.Fatalf("%s: no line of the resumed shard %d:\n%s", logPath, shard, b)
	}
	if n, _ := strconv.Atoi(m[2]); n == 0 {
		t.Fatalf("%s: shard %d redid every unit, its journal was not used:\n%s", logPath, shard, b)
	}
	return string(b)
}

// in returns the cluster for subtest t, checking at every poll that no
// file of out is under its final name before the commit began.
func (c *slurmCluster) in(t *testing.T, out string) *slurmCluster {
	cc := *c
	cc.t, cc.out = t, out
	return &cc
}

// published fails the test when a file of OUT is under its final name
// while no commit has begun moving them.
func (c *slurmCluster) published() {
	c.t.Helper()
	if c.out == "" {
		return
	}
	names := finalEntries(c.out)
	if len(names) == 0 {
		return
	}
	for _, mark := range []string{"committing", "committed"} {
		if _, err := os.Stat(filepath.Join(c.out, ".relayout", mark)); err == nil {
			return
		}
	}
	c.t.Fatalf("%s: %v under final names before the commit began", c.out, names)
}

// freezeMidShard waits until task of array job id runs its shard and has
// journaled its first batch of units, then stops the shard's process
// (SIGSTOP): however fast the machine, the shard stays half written until
// Slurm or the test kills it. It fails the test if the shard had already
// finished, and returns the node it runs on.
func (c *slurmCluster) freezeMidShard(id string, task int, out string) string {
	c.t.Helper()
	journal := filepath.Join(out, ".relayout", "journal", fmt.Sprintf("shard-%d-of-3.log", task))
	// Tight polls, so that the shard is caught early: its process is
	// stopped as soon as it is found, then let run again only until its
	// first batch of units is journaled, the journal read without pause
	// meanwhile (a busy loop for the fraction of a second the shard
	// takes to its first batch: on a loaded machine a sleeping poll
	// wakes too late).
	deadline := time.Now().Add(60 * time.Second)
	poll := func(what string, pause time.Duration, cond func() bool) {
		for !cond() {
			if time.Now().After(deadline) {
				c.t.Fatalf("shard %d: %s: not in 60s\n%s", task, what, c.state())
			}
			time.Sleep(pause)
		}
	}
	var pid int
	poll("its process", 2*time.Millisecond, func() bool {
		pid = c.jobPID("relayout", "SLURM_ARRAY_JOB_ID="+id, fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", task))
		return pid != 0
	})
	stop := func(sig syscall.Signal) {
		if err := syscall.Kill(pid, sig); err != nil {
			c.t.Fatalf("shard %d finished before it could be stopped mid-shard (make the input larger): %v", task, err)
		}
	}
	stop(syscall.SIGSTOP)
	found, _ := journalUnits(journal)
	if found == 0 {
		stop(syscall.SIGCONT)
		poll("a unit journaled", 0, func() bool { units, _ := journalUnits(journal); return units > 0 })
		stop(syscall.SIGSTOP)
	}
	units, finished := journalUnits(journal)
	if finished {
		c.t.Fatalf("shard %d finished before it could be stopped mid-shard (make the input larger)", task)
	}
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	node := ""
	for _, v := range bytes.Split(env, []byte{0}) {
		if n, ok := strings.CutPrefix(string(v), "SLURMD_NODENAME="); ok {
			node = n
		}
	}
	c.t.Logf("shard %d stopped on node %s with %d units journaled (%d when its process was found)", task, node, units, found)
	return node
}

// journalUnits counts the unit records of a shard's journal (its frames:
// length, CRC, JSON payload; the first is the header) and whether it has
// the final record.
func journalUnits(path string) (units int, finished bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for n := 0; len(b) >= 8; n++ {
		size := int(bin.LittleEndian.Uint32(b))
		if len(b) < 8+size {
			break
		}
		if n > 0 {
			if bytes.Contains(b[8:8+size], []byte(`"done":true`)) {
				finished = true
			} else {
				units++
			}
		}
		b = b[8+size:]
	}
	return units, finished
}

// srun runs srun with args in the cluster (bounded by timeout) and returns
// its output, failing the test if it fails.
func (c *slurmCluster) srun(timeout time.Duration, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "srun", args...)
	cmd.Env = c.env
	b, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("srun %v: %v\n%s\n%s", args, err, b, c.state())
	}
	return string(b)
}
