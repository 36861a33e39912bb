package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"relayout/internal/testkit"
)

// slurmUnavailable skips (or fails under CI=true) with reason.
func slurmUnavailable(t *testing.T, reason string) {
	t.Helper()
	testkit.Unavailable(t, "Slurm on this host unavailable: %s", reason)
}

// freePort asks the kernel for an unused TCP port.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// slurmCluster is a private Slurm on this host: munged, one slurmctld and
// one slurmd per compute node. Debian's slurmd runs several daemons per
// host (slurmd -N NAME): every node is its own slurmd on 127.0.0.1 with
// its own port, spool, log and pid file, and one CPU, so that an array of
// N one-CPU tasks spreads over N nodes. Every daemon is a child of the
// test, in the foreground, its state under a temporary directory; the
// host's file system is shared by all nodes, as a parallel file system
// would be.
type slurmCluster struct {
	t     *testing.T
	dir   string
	conf  string
	env   []string // for the Slurm commands (SLURM_CONF)
	nodes []string
	// slurmd holds each node's daemon; killNode ends one, startNode
	// starts it again.
	slurmd map[string]*daemon
	// out, when set (in), is an OUT that every poll checks: nothing
	// under a final name before the commit began.
	out string
}

// daemon is one Slurm or munge daemon the test started.
type daemon struct {
	cmd  *exec.Cmd
	done chan struct{}
	log  *os.File
}

// stop interrupts the daemon (SIGKILL after 5 s) and waits for it.
func (d *daemon) stop(sig os.Signal) {
	d.cmd.Process.Signal(sig)
	select {
	case <-d.done:
	case <-time.After(5 * time.Second):
		d.cmd.Process.Kill()
		<-d.done
	}
	d.log.Close()
}

// Timing of the private cluster, small so that failures are seen in
// seconds rather than Slurm's production minutes: a node whose slurmd is
// gone is DOWN after SlurmdTimeout (about 25 s measured here: pings are
// spaced), a requeued job waits cred_expire (AuthInfo) before it can
// start again and the scheduler looks at it within sched_interval, a job
// over its time limit gets SIGTERM and KillWait seconds later SIGKILL
// (slurmctld checks limits every 30 s: 60 to 90 s for --time=1);
// completed jobs stay visible to scontrol for MinJobAge.
const slurmTimings = `SlurmdTimeout=5
SchedulerParameters=sched_interval=2
KillWait=2
OverTimeLimit=0
MinJobAge=600
`

// startSlurm starts a cluster of nodes compute nodes (n1..nN) and stops
// every daemon, and every job process they left, in t.Cleanup.
func startSlurm(t *testing.T, nodes int) *slurmCluster {
	t.Helper()
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "srun", "scontrol", "scancel"} {
		if _, err := exec.LookPath(tool); err != nil {
			slurmUnavailable(t, tool+" missing (Debian slurm-wlm munge; see scripts/deps.sh)")
		}
	}
	if os.Geteuid() != 0 {
		slurmUnavailable(t, "slurmd must run as root")
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "relayout-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &slurmCluster{t: t, dir: dir, conf: filepath.Join(dir, "slurm.conf"), slurmd: map[string]*daemon{}}
	for _, d := range []string{"state", "log", "munge"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	key := filepath.Join(dir, "munge", "munge.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("relayout-test-munge-key-", 44)), 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "munge.sock")
	var nodeLines strings.Builder
	for i := range nodes {
		name := fmt.Sprintf("n%d", i+1)
		c.nodes = append(c.nodes, name)
		os.MkdirAll(filepath.Join(dir, "spool", name), 0o755)
		fmt.Fprintf(&nodeLines, "NodeName=%s NodeHostname=%s NodeAddr=127.0.0.1 Port=%d CPUs=1 RealMemory=1000 State=UNKNOWN\n",
			name, host, freePort(t))
	}
	// %n: each slurmd's own spool, log and pid file.
	cfg := fmt.Sprintf(`ClusterName=relayout
SlurmctldHost=%[1]s
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[2]s,cred_expire=5
SlurmctldPort=%[3]d
StateSaveLocation=%[4]s/state
SlurmdSpoolDir=%[4]s/spool/%%n
SlurmctldPidFile=%[4]s/slurmctld.pid
SlurmdPidFile=%[4]s/slurmd-%%n.pid
SlurmctldLogFile=%[4]s/log/slurmctld.log
SlurmdLogFile=%[4]s/log/slurmd-%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
%[5]s%[6]sPartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, sock, freePort(t), dir, slurmTimings, nodeLines.String())
	if err := os.WriteFile(c.conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	c.env = append(os.Environ(), "SLURM_CONF="+c.conf)
	// Cleanups run last first: the job processes go after the daemons
	// have stopped (a slurmstepd outlives its slurmd).
	t.Cleanup(c.killJobProcesses)
	munged := c.start("munged", "munged", "-F", "--key-file="+key, "--socket="+sock, "--pid-file="+filepath.Join(dir, "munge", "munged.pid"),
		"--log-file="+filepath.Join(dir, "munge", "munged.log"), "--seed-file="+filepath.Join(dir, "munge", "seed"), "--force")
	t.Cleanup(func() { munged.stop(os.Interrupt) })
	c.await(5*time.Second, "munged's socket", func() bool { _, err := os.Stat(sock); return err == nil })
	ctld := c.start("slurmctld", "slurmctld", "-D", "-f", c.conf)
	t.Cleanup(func() { ctld.stop(os.Interrupt) })
	for _, n := range c.nodes {
		c.startNode(n)
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			if d := c.slurmd[n]; d != nil {
				d.stop(os.Interrupt)
			}
		}
	})
	// Jobs a failed test left are cancelled while the daemons still run.
	t.Cleanup(func() { c.scontrolQuiet("scancel", "--full", "--user=root") })
	if err := c.awaitIdle(20 * time.Second); err != nil {
		slurmUnavailable(t, err.Error())
	}
	return c
}

// start runs a daemon as a child of the test, its output in log/NAME.out.
func (c *slurmCluster) start(logName, name string, args ...string) *daemon {
	c.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = c.env
	logf, err := os.OpenFile(filepath.Join(c.dir, "log", logName+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		slurmUnavailable(c.t, fmt.Sprintf("%s: %v", name, err))
	}
	d := &daemon{cmd: cmd, done: make(chan struct{}), log: logf}
	go func() { cmd.Wait(); close(d.done) }()
	return d
}

// startNode starts node's slurmd.
func (c *slurmCluster) startNode(node string) {
	c.t.Helper()
	c.slurmd[node] = c.start("slurmd-"+node, "slurmd", "-D", "-N", node, "-f", c.conf)
}

// killNode makes node fail as a machine does: its slurmd and every
// process of its jobs (each slurmstepd with the job's processes, one
// session per step) die at once with SIGKILL, nothing reported.
func (c *slurmCluster) killNode(node string) {
	c.t.Helper()
	d := c.slurmd[node]
	d.cmd.Process.Kill()
	<-d.done
	d.log.Close()
	c.slurmd[node] = nil
	killSessions(jobSessions(c.conf, "SLURMD_NODENAME="+node))
}

// killJobProcesses kills what jobs of this cluster left running once its
// daemons are gone (the processes of a node the test killed and never
// restarted, or of a test that failed mid-job).
func (c *slurmCluster) killJobProcesses() { killSessions(jobSessions(c.conf)) }

// jobSessions returns the sessions of the processes run by this
// cluster's jobs (their environment names its slurm.conf) that also have
// every one of vars ("NAME=value") in their environment. Each step's
// slurmstepd leads the session of its processes; the test's own session
// (its daemons, srun) is never one of them.
func jobSessions(conf string, vars ...string) map[int]bool {
	own, _ := unix.Getsid(0)
	sessions := map[int]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		env, err := os.ReadFile(p)
		if err != nil {
			continue // gone, or not ours to read
		}
		vs := bytes.Split(env, []byte{0})
		if !hasAll(vs, append([]string{"SLURM_CONF=" + conf}, vars...)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if sid, err := unix.Getsid(pid); err == nil && sid != own {
			sessions[sid] = true
		}
	}
	return sessions
}

func hasAll(env [][]byte, vars []string) bool {
	for _, v := range vars {
		found := false
		for _, e := range env {
			if string(e) == v {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// killSessions SIGKILLs every process of sessions.
func killSessions(sessions map[int]bool) {
	if len(sessions) == 0 {
		return
	}
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		pid, _ := strconv.Atoi(filepath.Base(p))
		if sid, err := unix.Getsid(pid); err == nil && sessions[sid] {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// jobPID returns the pid of the process named comm whose environment has
// every one of vars (0 while there is none).
func (c *slurmCluster) jobPID(comm string, vars ...string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		name, err := os.ReadFile(filepath.Join(p, "comm"))
		if err != nil || strings.TrimSpace(string(name)) != comm {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !hasAll(bytes.Split(env, []byte{0}), append([]string{"SLURM_CONF=" + c.conf}, vars...)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(p))
		return pid
	}
	return 0
}

// await polls cond (every 100 ms, each poll cheap and on observable state)
// until it holds, failing the test with the cluster's state after timeout.
// Every poll checks the watched OUT too (published).
func (c *slurmCluster) await(timeout time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for c.published(); !cond(); c.published() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not after %v\n%s", what, timeout, c.state())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// awaitIdle waits until every node is idle.
func (c *slurmCluster) awaitIdle(timeout time.Duration) error {
	want := fmt.Sprintf("%d idle", len(c.nodes))
	deadline := time.Now().Add(timeout)
	for {
		got := strings.TrimSpace(c.scontrolQuiet("sinfo", "-h", "-o", "%D %t"))
		if got == want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nodes not idle after %v (sinfo: %q)\n%s", timeout, got, c.state())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// scontrolQuiet runs a Slurm command (10 s at most) and returns its
// output, whatever its exit status.
func (c *slurmCluster) scontrolQuiet(name string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = c.env
	b, _ := cmd.CombinedOutput()
	return string(b)
}

// command runs a Slurm command (10 s at most), failing the test if it
// fails; extra is added to its environment.
func (c *slurmCluster) command(extra []string, name string, args ...string) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append([]string{}, c.env...), extra...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("%s %v: %v\n%s\n%s", name, args, err, b, c.state())
	}
	return strings.TrimSpace(string(b))
}

// state says what the cluster is doing, for a failure's message: queue,
// nodes, every job's record, the tail of the controller's log.
func (c *slurmCluster) state() string {
	var s strings.Builder
	fmt.Fprintf(&s, "squeue:\n%s", c.scontrolQuiet("squeue", "-o", "%i %T %r %N"))
	fmt.Fprintf(&s, "sinfo:\n%s", c.scontrolQuiet("sinfo", "-N", "-o", "%N %t %E"))
	fmt.Fprintf(&s, "jobs:\n%s", c.scontrolQuiet("scontrol", "-o", "show", "job"))
	if b, err := os.ReadFile(filepath.Join(c.dir, "log", "slurmctld.log")); err == nil {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		fmt.Fprintf(&s, "slurmctld.log (last lines):\n%s\n", strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
	return s.String()
}

// slurmJob is one job's record (an array task's, or a pending array's
// remaining tasks) as scontrol -o show job prints it.
type slurmJob map[string]string

// jobs returns the records of job id (an array: every task).
func (c *slurmCluster) jobs(id string) []slurmJob {
	c.t.Helper()
	out := c.command(nil, "scontrol", "-o", "show", "job", id)
	var recs []slurmJob
	for _, line := range strings.Split(out, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		rec := slurmJob{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				rec[k] = v
			}
		}
		recs = append(recs, rec)
	}
	return recs
}

// finished reports whether a job ended (whatever its state).
func (j slurmJob) finished() bool {
	switch j["JobState"] {
	case "COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED":
		return true
	}
	return false
}

// awaitJobs waits until every job of ids (arrays: every task) has ended,
// and returns their records. A job whose dependency can never be
// satisfied fails the test (it would stay pending).
func (c *slurmCluster) awaitJobs(timeout time.Duration, ids ...string) []slurmJob {
	c.t.Helper()
	var recs []slurmJob
	start, seen := time.Now(), ""
	c.await(timeout, "jobs "+strings.Join(ids, ", ")+" finished", func() bool {
		recs = recs[:0]
		var states []string
		for _, id := range ids {
			for _, j := range c.jobs(id) {
				states = append(states, fmt.Sprintf("%s %s %s", j["JobId"], j["JobState"], j["NodeList"]))
				if j["Reason"] == "DependencyNeverSatisfied" {
					c.t.Fatalf("job %s: a job it depends on failed: it will never run\n%s\n%s", j["JobId"], c.state(), jobLogs(filepath.Dir(c.out)))
				}
				recs = append(recs, j)
			}
		}
		if now := strings.Join(states, ", "); now != seen { // the jobs' course, in -v
			c.t.Logf("%5.1fs: %s", time.Since(start).Seconds(), now)
			seen = now
		}
		for _, j := range recs {
			if !j.finished() {
				return false
			}
		}
		return true
	})
	return recs
}

// sbatch submits a job (--parsable) and returns its id.
func (c *slurmCluster) sbatch(extra []string, args ...string) string {
	c.t.Helper()
	return c.command(extra, "sbatch", append([]string{"--parsable"}, args...)...)
}

// jobLogs returns every job log in dir (slurm-*.out), for messages.
func jobLogs(dir string) string {
	matches, _ := filepath.Glob(filepath.Join(dir, "slurm-*.out"))
	sort.Strings(matches)
	var all strings.Builder
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		fmt.Fprintf(&all, "== %s\n%s", filepath.Base(m), b)
	}
	return all.String()
}

// sbatchScript is the example script, run as shipped.
func sbatchScript(t *testing.T) string {
	script, err := filepath.Abs("../examples/slurm/relayout.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	return script
}

func TestSlurmArrayJob(t *testing.T) {
	c := startSlurm(t, 1)
	dir := t.TempDir()
	in := generated(t, dir, "64,64,64")
	ref := filepath.Join(dir, "ref")
	mustRun(t, "run", in, "-o", ref, "-q")
	out := filepath.Join(dir, "out")
	mustRun(t, "plan", in, "-o", out, "--shards", "4", "--layout", "contiguous")
	c = c.in(t, out)
	script := sbatchScript(t)
	// The example script, run as shipped: the array job runs the shards
	// (shard from SLURM_ARRAY_TASK_ID), the dependent job commits.
	env := []string{"RELAYOUT=" + binary, "OUT=" + out}
	logs := filepath.Join(dir, "slurm-%x-%A_%a.out")
	shards := c.sbatch(env, "--array=0-3", "-o", logs, script, "rewrite")
	commit := c.sbatch(env, "--dependency=afterok:"+shards, "-o", logs, script, "commit")
	for _, j := range c.awaitJobs(60*time.Second, shards, commit) {
		if j["JobState"] != "COMPLETED" {
			t.Fatalf("job %s: %s\n%s", j["JobId"], j["JobState"], jobLogs(dir))
		}
	}
	if _, err := os.Stat(filepath.Join(out, "relayout.json")); err != nil {
		t.Fatalf("commit job did not commit: %v\n%s", err, jobLogs(dir))
	}
	sameSums(t, "sbatch --array=0-3 + commit", datasetSums(t, out), datasetSums(t, ref))
	mustRun(t, "verify", in, out)
}
