package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"relayout/internal/testkit"
)

// slurmUnavailable skips (or fails under CI=true) with reason.
func slurmUnavailable(t *testing.T, reason string) {
	t.Helper()
	testkit.Unavailable(t, "single-node Slurm unavailable: %s", reason)
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

// startSlurm runs munged, slurmctld and slurmd in the foreground as
// children of the test (root, this host only, state under a temp dir) and
// stops them in t.Cleanup. It returns the environment for sbatch.
func startSlurm(t *testing.T) []string {
	t.Helper()
	for _, tool := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue"} {
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
	for _, d := range []string{"state", "spool", "log", "munge"} {
		os.MkdirAll(filepath.Join(dir, d), 0o700)
	}
	key := filepath.Join(dir, "munge", "munge.key")
	if err := os.WriteFile(key, []byte(strings.Repeat("relayout-test-munge-key-", 44)), 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "munge.sock")
	conf := filepath.Join(dir, "slurm.conf")
	cfg := fmt.Sprintf(`ClusterName=relayout
SlurmctldHost=%[1]s
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[2]s
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/log/slurmctld.log
SlurmdLogFile=%[5]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
NodeName=%[1]s CPUs=2 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, host, sock, freePort(t), freePort(t), dir)
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SLURM_CONF="+conf)
	start := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		logf, _ := os.Create(filepath.Join(dir, "log", filepath.Base(name)+".out"))
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			slurmUnavailable(t, fmt.Sprintf("%s: %v", name, err))
		}
		t.Cleanup(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			logf.Close()
		})
	}
	start("munged", "-F", "--key-file="+key, "--socket="+sock, "--pid-file="+filepath.Join(dir, "munge", "munged.pid"),
		"--log-file="+filepath.Join(dir, "munge", "munged.log"), "--seed-file="+filepath.Join(dir, "munge", "seed"), "--force")
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 100 {
			slurmUnavailable(t, "munged did not create its socket in 5s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	start("slurmctld", "-D", "-f", conf)
	start("slurmd", "-D", "-f", conf)
	deadline := time.Now().Add(20 * time.Second)
	for {
		cmd := exec.Command("sinfo", "-h", "-o", "%t")
		cmd.Env = env
		b, _ := cmd.CombinedOutput()
		if s := strings.TrimSpace(string(b)); s == "idle" || s == "mix" {
			break
		}
		if time.Now().After(deadline) {
			logs, _ := os.ReadFile(filepath.Join(dir, "log", "slurmd.log"))
			slurmUnavailable(t, fmt.Sprintf("node not idle after 20s (sinfo: %q); slurmd.log:\n%s", b, logs))
		}
		time.Sleep(200 * time.Millisecond)
	}
	return env
}

func TestSlurmArrayJob(t *testing.T) {
	env := startSlurm(t)
	dir := t.TempDir()
	in := generated(t, dir, "64,64,64")
	ref := filepath.Join(dir, "ref")
	mustRun(t, "run", in, "-o", ref, "-q")
	out := filepath.Join(dir, "out")
	mustRun(t, "plan", in, "-o", out, "--shards", "4", "--layout", "contiguous")
	script, err := filepath.Abs("../examples/slurm/relayout.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	// The example script, run as shipped: the array job runs the shards
	// (shard from SLURM_ARRAY_TASK_ID), the dependent job commits.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sbatch := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "sbatch", args...)
		cmd.Env = append(env, "RELAYOUT="+binary, "OUT="+out)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("sbatch %v: %v\n%s", args, err, b)
		}
		return strings.TrimSpace(string(b))
	}
	logs := filepath.Join(dir, "slurm-%x-%A_%a.out")
	shards := sbatch("--parsable", "--array=0-3", "-o", logs, script, "rewrite")
	commit := sbatch("--parsable", "--dependency=afterok:"+shards, "-o", logs, script, "commit")
	jobLogs := func() string {
		matches, _ := filepath.Glob(filepath.Join(dir, "slurm-*.out"))
		var all strings.Builder
		for _, m := range matches {
			b, _ := os.ReadFile(m)
			fmt.Fprintf(&all, "== %s\n%s", filepath.Base(m), b)
		}
		return all.String()
	}
	prev := ""
	for {
		cmd := exec.CommandContext(ctx, "squeue", "-h", "-o", "%i %T %r") // this private cluster runs only our jobs
		cmd.Env = env
		b, err := cmd.CombinedOutput()
		if err == nil && strings.TrimSpace(string(b)) == "" {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("jobs %s and %s not finished in 60s: %v %s\n%s", shards, commit, err, b, jobLogs())
		}
		if last := strings.TrimSpace(string(b)); last != "" && last != prev {
			t.Logf("squeue: %s", last)
			prev = last
		}
		if strings.Contains(string(b), "DependencyNeverSatisfied") {
			t.Fatalf("a shard failed, the commit job will never run:\n%s\n%s", b, jobLogs())
		}
		time.Sleep(300 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(out, "relayout.json")); err != nil {
		t.Fatalf("commit job did not commit: %v\n%s", err, jobLogs())
	}
	sameSums(t, "sbatch --array=0-3 + commit", datasetSums(t, out), datasetSums(t, ref))
	mustRun(t, "verify", in, out)
}
