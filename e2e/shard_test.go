package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"relayout/internal/testkit"
)

// datasetSums maps "var step level" to the sha256 the manifest of out
// records (each is checked against the data by commit or verify).
func datasetSums(t *testing.T, out string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Variables []struct {
			Name     string
			Datasets []struct {
				Step   int64
				Level  int
				SHA256 string
			}
		}
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			sums[fmt.Sprintf("%s %d %d", v.Name, d.Step, d.Level)] = d.SHA256
		}
	}
	if len(sums) == 0 {
		t.Fatalf("%s: no datasets in the manifest", out)
	}
	return sums
}

func sameSums(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d datasets, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Fatalf("%s: %s sha256 %s, uninterrupted run %s", what, k, got[k], w)
		}
	}
}

// generated writes a synthetic openPMD series (values known by index).
func generated(t *testing.T, dir, shape string) string {
	t.Helper()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", shape, "--chunk", "16,16,16", "--steps", "0,100")
	return in
}

func TestShardedMpirun(t *testing.T) {
	testkit.NeedTool(t, "mpirun", "Debian openmpi-bin; see scripts/deps.sh")
	dir := t.TempDir()
	in := generated(t, dir, "64,64,64")
	ref := filepath.Join(dir, "ref")
	mustRun(t, "run", in, "-o", ref, "-q", "--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:1")
	out := filepath.Join(dir, "out")
	r := mustRun(t, "plan", in, "-o", out, "--shards", "4", "--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:1")
	// plan shows the file-system decision per output file (a local file
	// system here: nothing is attempted).
	if n := strings.Count(r.stderr, "storage: "); n < 1 || !strings.Contains(r.stderr, "nothing attempted") {
		t.Errorf("plan -o does not show the storage decisions:\n%s", r.stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append(mpirunArgs(4), binary, "rewrite", out, "--jobs", "1")
	cmd := exec.CommandContext(ctx, "mpirun", args...)
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("mpirun: %v\n%s", err, b)
	}
	for s := range 4 {
		if !strings.Contains(string(b), fmt.Sprintf("shard-%d-of-4:", s)) {
			t.Fatalf("mpirun: no output of shard %d (rank from OMPI_COMM_WORLD_RANK):\n%s", s, b)
		}
	}
	report := filepath.Join(dir, "report.json")
	mustRun(t, "commit", out, "--report", report)
	sameSums(t, "mpirun -np 4", datasetSums(t, out), datasetSums(t, ref))
	mustRun(t, "verify", in, out)
	var rep struct {
		Shards    int
		Variables []struct {
			Name         string
			Verification string
			Shards       []int
		}
	}
	rb, err := os.ReadFile(report)
	if err != nil || json.Unmarshal(rb, &rep) != nil || rep.Shards != 4 || len(rep.Variables) == 0 {
		t.Fatalf("report: %v %s", err, rb)
	}
	for _, v := range rep.Variables {
		if v.Verification != "ok" || len(v.Shards) == 0 {
			t.Fatalf("report: %+v", v)
		}
	}
	// Idempotent reruns: a committed OUT is left alone, exit 0.
	for _, args := range [][]string{{"commit", out}, {"rewrite", out, "--shard", "1/4"}, {"plan", in, "-o", out, "--shards", "4"}} {
		if r := relayout(t, args...); r.code != 0 || !strings.Contains(r.stderr, "done") {
			t.Fatalf("rerun %v on a committed OUT: exit %d, %s", args, r.code, r.stderr)
		}
	}
}

// finalEntries lists the files of out outside .relayout.
func finalEntries(out string) []string {
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		if e.Name() != ".relayout" {
			names = append(names, e.Name())
		}
	}
	return names
}

// TestCrashResume kills `relayout run --resume` with SIGKILL at random
// moments, resumes each, and checks the output equals an uninterrupted run,
// verifies, and that no file showed under a final name before the commit
// began moving files.
func TestCrashResume(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "96,96,96")
	ref := filepath.Join(dir, "ref")
	start := time.Now()
	mustRun(t, "run", in, "-o", ref, "-q", "--jobs", "2")
	full := time.Since(start)
	want := datasetSums(t, ref)
	args := func(out string) []string {
		return []string{"run", in, "-o", out, "-q", "--resume", "--jobs", "2", "--unit-size", "256KiB",
			"--layout", "auto"}
	}
	// Reference for the resumable path too, and its duration.
	start = time.Now()
	mustRun(t, args(filepath.Join(dir, "ref2"))...)
	full = max(full, time.Since(start))
	sameSums(t, "uninterrupted run --resume", datasetSums(t, filepath.Join(dir, "ref2")), want)

	const kills = 10
	killed := 0
	deadline := time.Now().Add(60 * time.Second)
	for i := range kills {
		if time.Now().After(deadline) {
			t.Fatalf("crash loop took over 60s after %d kills", i)
		}
		out := filepath.Join(dir, fmt.Sprintf("out%d", i))
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(full)+1))
		delay := time.Duration(n.Int64())
		cmd := exec.Command(binary, args(out)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Watch the final names until the kill: nothing may show there
		// before the commit step has begun moving files.
		stop := time.Now().Add(delay)
		early := ""
		for time.Now().Before(stop) {
			if names := finalEntries(out); len(names) > 0 {
				if _, err := os.Stat(filepath.Join(out, ".relayout", "committing")); err != nil {
					if _, err := os.Stat(filepath.Join(out, ".relayout", "committed")); err != nil {
						early = strings.Join(names, ",")
					}
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		} else if err != nil {
			t.Fatalf("kill %d: run --resume failed before the kill: %v\n%s", i, err, stderr.String())
		}
		if early != "" {
			t.Fatalf("kill %d after %v: %s appeared under final names before commit", i, delay, early)
		}
		if _, err := os.Stat(filepath.Join(out, "relayout.json")); err != nil && len(finalEntries(out)) > 0 {
			if _, err := os.Stat(filepath.Join(out, ".relayout", "committing")); err != nil {
				t.Fatalf("kill %d after %v: final names %v without a commit in progress", i, delay, finalEntries(out))
			}
		}
		r := relayout(t, args(out)...)
		if r.code != 0 {
			t.Fatalf("kill %d after %v: resume: exit %d\n%s", i, delay, r.code, r.stderr)
		}
		sameSums(t, fmt.Sprintf("kill %d after %v, resumed", i, delay), datasetSums(t, out), want)
		mustRun(t, "verify", in, out)
		os.RemoveAll(out)
	}
	t.Logf("%d runs killed with SIGKILL at random moments in [0, %v] (%d before they finished), all resumed to identical, verified output", kills, full, killed)
}

func TestLockRefusesSecondRun(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "32,32,32")
	out := filepath.Join(dir, "out")
	mustRun(t, "plan", in, "-o", out, "--shards", "2")
	// Hold OUT's lock the way a running commit would: a child process
	// that flocks it, says so, and sleeps.
	lock := filepath.Join(out, ".relayout", "lock")
	holder := exec.Command("flock", "-x", lock, "sh", "-c", "echo locked; exec sleep 30")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // flock and its sleep share the lock
	held, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	release := func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() }
	defer release()
	// Wait for the holder to say it holds the lock (no sleep: its line
	// comes once flock(1) has it).
	if line, err := bufio.NewReader(held).ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("lock holder: %q, %v", line, err)
	}
	r := relayout(t, "commit", out)
	if r.code != 1 || !strings.Contains(r.stderr, "in use by another relayout process") {
		t.Fatalf("commit while locked: exit %d, %s", r.code, r.stderr)
	}
	r = relayout(t, "rewrite", out, "--shard", "0/2")
	if r.code != 1 || !strings.Contains(r.stderr, "in use") {
		t.Fatalf("rewrite while locked: exit %d, %s", r.code, r.stderr)
	}
	release()
	// A lock file left by a killed holder is explained, then taken over.
	os.WriteFile(lock, []byte(`{"pid":4242,"host":"node17","start":"2024-01-02T03:04:05Z","command":"commit"}`+"\n"), 0o644)
	// A budget that cannot hold one unit with its read is refused, naming
	// the flag; one that holds a unit at a time is enough.
	if r = relayout(t, "rewrite", out, "--shard", "0/2", "--max-mem", "64KiB"); r.code != 2 || !strings.Contains(r.stderr, "--max-mem") {
		t.Fatalf("rewrite --max-mem 64KiB: exit %d, %s", r.code, r.stderr)
	}
	mustRun(t, "rewrite", out, "--shard", "0/2", "--max-mem", "16MiB")
	mustRun(t, "rewrite", out, "--shard", "1/2")
	// commit reads every unit back within --max-mem too; refused, it can be
	// rerun. (The first commit is the one that finds the stale lock.)
	if r = relayout(t, "commit", out, "--max-mem", "64KiB"); r.code != 2 || !strings.Contains(r.stderr, "--max-mem") {
		t.Fatalf("commit --max-mem 64KiB: exit %d, %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "stale lock") || !strings.Contains(r.stderr, "pid 4242 on host node17") {
		t.Fatalf("stale lock not explained: %s", r.stderr)
	}
	mustRun(t, "commit", out, "--max-mem", "16MiB")
	mustRun(t, "verify", in, out)
}

// TestRunReport: a plain run writes the same job report as run --resume
// (one engine, one report): per variable the blocks and bytes read, the
// datasets, the logical bytes and the verification, with --no-verify said
// so.
func TestRunReport(t *testing.T) {
	dir := t.TempDir()
	in := generated(t, dir, "32,32,32")
	type variable struct {
		Name         string `json:"name"`
		Datasets     int    `json:"datasets"`
		BlocksIn     int    `json:"blocks_in"`
		BlocksOut    int    `json:"blocks_out"`
		BytesIn      int64  `json:"bytes_in"`
		LogicalBytes int64  `json:"logical_bytes"`
		Verification string `json:"verification"`
	}
	read := func(path string) (verified string, vars []variable) {
		var rep struct {
			Schema    string     `json:"schema"`
			Verified  string     `json:"verified"`
			Variables []variable `json:"variables"`
		}
		b, err := os.ReadFile(path)
		if err != nil || json.Unmarshal(b, &rep) != nil || rep.Schema != "relayout-report/1" || len(rep.Variables) != 4 {
			t.Fatalf("report %s: %v %s", path, err, b)
		}
		return rep.Verified, rep.Variables
	}
	plain, resumed, unverified := filepath.Join(dir, "plain.json"), filepath.Join(dir, "resumed.json"), filepath.Join(dir, "nov.json")
	mustRun(t, "run", in, "-o", filepath.Join(dir, "o1"), "-q", "--report", plain)
	mustRun(t, "run", in, "-o", filepath.Join(dir, "o2"), "-q", "--resume", "--report", resumed)
	mustRun(t, "run", in, "-o", filepath.Join(dir, "o3"), "-q", "--no-verify", "--report", unverified)
	pv, p := read(plain)
	rv, r := read(resumed)
	nv, n := read(unverified)
	if !strings.HasPrefix(pv, "every element equals the input") || !strings.HasPrefix(rv, "every element equals the input") || !strings.HasPrefix(nv, "not verified") {
		t.Errorf("verified: plain %q, resumed %q, --no-verify %q", pv, rv, nv)
	}
	for i := range p {
		if p[i] != r[i] || p[i].Verification != "ok" || p[i].BlocksIn == 0 || p[i].BytesIn == 0 || p[i].BlocksOut == 0 || p[i].LogicalBytes != 2*32*32*32*8 {
			t.Errorf("variable %d: plain run %+v, run --resume %+v", i, p[i], r[i])
		}
		if n[i].Verification != "not verified" {
			t.Errorf("--no-verify: %+v", n[i])
		}
	}
	// The manifest carries the report too.
	m, err := os.ReadFile(filepath.Join(dir, "o1", "relayout.json"))
	if err != nil || !strings.Contains(string(m), `"report"`) {
		t.Errorf("manifest without its report: %v", err)
	}
}
