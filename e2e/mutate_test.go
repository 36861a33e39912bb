package e2e

// Mutation fuzzing of whole inputs: copies of real datasets (../shared/data)
// and of generated ones, damaged one way each (truncation, byte flips,
// patched integers, deleted or replaced files, FIFOs, symlinks), each run
// through `relayout run` under a time limit and an address-space cap, and
// the outcome classified:
//
//	same-as-clean  exit 0, every dataset digest equal to the undamaged run's
//	explained      exit 0, other values, and the independent reader (h5py,
//	               adios2) reads the damaged input the same way
//	unexplained    exit 0, other values the independent reader disagrees with
//	changed-unchecked  exit 0, other values, no independent reader for the format
//	clean-error    exit 2, a message without a panic, nothing under final names
//	exit1          exit 1 (an input problem should be exit 2)
//	panic, hang, memcap, final-names   failures
//
// TestMutationSample (part of `go test`) runs a small fixed sample and fails
// on a panic, hang, memcap or final-names outcome; `make fuzz-inputs`
// (RELAYOUT_FUZZ_INPUTS=N) runs N mutations and reports the class counts.

import (
	"context"
	bin "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"relayout/internal/testkit"
)

// mutSeed is one undamaged input: src under ../shared/data (or generated),
// the argument to run (relative to the copy), and the independent reader.
type mutSeed struct {
	name, src, arg, oracle string // oracle: "h5py", "adios2" or ""
	gen                    bool
}

var mutSeeds = []mutSeed{
	{name: "bp4-heat", src: "bp4/heat-2.7.1/heat.bp", oracle: "adios2"},
	{name: "bp4-multiblock", src: "bp4/multiblock-2.5.0/BP4Multiblock2D4x2.bp", oracle: "adios2"},
	{name: "bp5-lb", src: "bp5/generated-lb/lb-bp5.bp", oracle: "adios2"},
	{name: "bp3-heat", src: "bp3/heat-adios2", arg: "heat.bp", oracle: "adios2"},
	{name: "hdf5-types", src: "hdf5/adios2-hdf5-engine-types_np.h5", oracle: "h5py"},
	{name: "hdf5-femm", src: "hdf5/openpmd-femm/example-femm-3d.h5", oracle: "h5py"},
	{name: "chombo-2d", src: "chombo/mushy-layer/plt000100.2d.hdf5"},
	{name: "scorpio-io16", src: "scorpio/adios-io16", arg: "f.eam.h1.0001-01-01-00000.nc.bp"},
	{name: "generated", gen: true, oracle: "h5py"},
}

// mutation is one way of damaging a copy.
type mutation struct {
	kind string // truncate, flip, int32, int64, delete, fifo, dir, devzero, loop
	file string // relative to the copy's root
	off  int64
	val  uint64
}

func (m mutation) String() string {
	switch m.kind {
	case "truncate":
		return fmt.Sprintf("truncate %s at %d", m.file, m.off)
	case "flip":
		return fmt.Sprintf("flip %s byte %d ^ %#x", m.file, m.off, m.val)
	case "int32", "int64":
		return fmt.Sprintf("%s %s at %d = %d", m.kind, m.file, m.off, m.val)
	}
	return m.kind + " " + m.file
}

var interesting = []uint64{0, 1, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, 1 << 32, 1 << 40, 1 << 62, 1<<63 - 1, 1<<64 - 1}

// pickMutation draws a mutation of one of files (name -> size).
func pickMutation(r *rand.Rand, files []string, sizes map[string]int64) mutation {
	f := files[r.IntN(len(files))]
	size := sizes[f]
	kinds := []string{"truncate", "flip", "flip", "flip", "int32", "int64", "int64", "delete", "fifo", "dir", "devzero", "loop"}
	m := mutation{kind: kinds[r.IntN(len(kinds))], file: f}
	if size == 0 && (m.kind == "truncate" || m.kind == "flip" || m.kind == "int32" || m.kind == "int64") {
		m.kind = "delete"
	}
	// Metadata lives near the ends of most formats: half the offsets are
	// drawn from the first and last 4 KiB.
	off := func(width int64) int64 {
		n := max(size-width, 1)
		switch r.IntN(4) {
		case 0:
			return r.Int64N(min(n, 4096))
		case 1:
			return max(n-1-r.Int64N(min(n, 4096)), 0)
		}
		return r.Int64N(n)
	}
	switch m.kind {
	case "truncate":
		m.off = off(0)
	case "flip":
		m.off, m.val = off(1), uint64(1+r.IntN(255))
	case "int32":
		m.off, m.val = off(4), interesting[r.IntN(len(interesting))]&0xffffffff
	case "int64":
		m.off, m.val = off(8), interesting[r.IntN(len(interesting))]
		if r.IntN(3) == 0 {
			m.val = uint64(size) + uint64(r.IntN(64)) // just past the end
		}
	}
	return m
}

func (m mutation) apply(root string) error {
	p := filepath.Join(root, m.file)
	os.Chmod(p, 0o644)
	switch m.kind {
	case "truncate":
		return os.Truncate(p, m.off)
	case "flip", "int32", "int64":
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		var b []byte
		switch m.kind {
		case "flip":
			b = make([]byte, 1)
			if _, err := f.ReadAt(b, m.off); err != nil {
				return err
			}
			b[0] ^= byte(m.val)
		case "int32":
			b = bin.LittleEndian.AppendUint32(nil, uint32(m.val))
		default:
			b = bin.LittleEndian.AppendUint64(nil, m.val)
		}
		_, err = f.WriteAt(b, m.off)
		return err
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	switch m.kind {
	case "fifo":
		return syscall.Mkfifo(p, 0o644)
	case "dir":
		return os.Mkdir(p, 0o755)
	case "devzero":
		return os.Symlink("/dev/zero", p)
	case "loop":
		return os.Symlink(filepath.Base(p), p)
	}
	return nil // delete
}

// mutCase is a seed prepared for mutation: its pristine copy, files and the
// digests of its clean run.
type mutCase struct {
	seed  mutSeed
	clean string // pristine copy
	files []string
	sizes map[string]int64
	sums  map[string]string
	env   []string
}

func prepareSeed(t *testing.T, s mutSeed, dir string) *mutCase {
	t.Helper()
	c := &mutCase{seed: s, clean: filepath.Join(dir, s.name), sizes: map[string]int64{}}
	if s.gen {
		mustRun(t, "generate", c.clean, "--shape", "24,20,16", "--chunk", "8,10,8", "--steps", "0,10")
	} else {
		testkit.CopyTree(t, sharedData(t, s.src), c.clean)
	}
	filepath.WalkDir(c.clean, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, "PROVENANCE.txt") && !strings.HasSuffix(p, "profiling.json") {
			rel, _ := filepath.Rel(c.clean, p)
			if rel == "." {
				rel = ""
			}
			info, _ := d.Info()
			c.files = append(c.files, rel)
			c.sizes[rel] = info.Size()
		}
		return nil
	})
	sort.Strings(c.files)
	out := filepath.Join(dir, s.name+".clean-out")
	mustRun(t, "run", c.arg(c.clean), "-o", out, "-q", "--jobs", "1")
	c.sums = datasetSums(t, out)
	os.RemoveAll(out)
	if s.oracle == "adios2" {
		_, c.env = testkit.PeersEnv(t)
	}
	return c
}

func (c *mutCase) arg(root string) string {
	if c.seed.arg != "" {
		return filepath.Join(root, c.seed.arg)
	}
	return root
}

// copyInput copies the pristine input to dst (a single file or a tree).
func (c *mutCase) copyInput(t *testing.T, dst string) string {
	if b, err := exec.Command("cp", "-r", c.clean, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, b)
	}
	exec.Command("chmod", "-R", "u+w", dst).Run()
	return dst
}

// runMutation applies m to a fresh copy, runs relayout and classifies it.
func (c *mutCase) runMutation(t *testing.T, m mutation, dir string) (class, detail string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	root := c.copyInput(t, filepath.Join(dir, "in"))
	defer os.RemoveAll(dir)
	if c.seed.arg == "" && len(c.files) == 1 && c.files[0] == "" {
		m.file = "" // a single-file input: root is the file
	}
	if err := m.apply(root); err != nil {
		return "skipped", err.Error()
	}
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{"run", c.arg(root), "-o", out, "-q", "--jobs", "1", "--max-mem", "256MiB"}
	name, cmdArgs := binary, args
	if pl, err := exec.LookPath("prlimit"); err == nil {
		name, cmdArgs = pl, append([]string{"--as=" + strconv.Itoa(2<<30), "--", binary}, args...)
	}
	cmd := exec.CommandContext(ctx, name, cmdArgs...)
	cmd.WaitDelay = 2 * time.Second
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	stderr := errb.String()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	first := strings.SplitN(stderr, "\n", 2)[0]
	switch {
	case ctx.Err() != nil:
		return "hang", stderr
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") ||
		strings.Contains(stderr, "pthread_create failed"):
		return "memcap", first
	case strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "fatal error"):
		return "panic", stderr
	}
	if code != 0 {
		if names := finalNames(t, out); len(names) > 0 {
			return "final-names", fmt.Sprint(names)
		}
		if code == 2 {
			return "clean-error", first
		}
		return fmt.Sprintf("exit%d", code), first
	}
	sums := map[string]string{}
	if _, err := os.Stat(filepath.Join(out, "relayout.json")); err == nil {
		sums = datasetSums(t, out)
	}
	if len(sums) == len(c.sums) {
		same := true
		for k, v := range c.sums {
			same = same && sums[k] == v
		}
		if same {
			return "same-as-clean", ""
		}
	}
	var oracle *exec.Cmd
	switch c.seed.oracle {
	case "h5py":
		oracle = exec.Command(python, "oracle.py", c.arg(root), out)
	case "adios2":
		oracle = exec.Command(python, "-c", adiosSteps, c.arg(root), out)
		oracle.Env = c.env
	default:
		return "changed-unchecked", "no independent reader for " + c.seed.name
	}
	if b, err := oracle.CombinedOutput(); err != nil {
		if onlySkipped(string(b), out) {
			return "explained", "arrays left out are listed in the manifest's skipped"
		}
		return "unexplained", lastLine(string(b))
	}
	return "explained", ""
}

// onlySkipped reports whether the oracle's only complaints are arrays
// missing from the output that the manifest lists as skipped, with their
// reason (e.g. a float type damaged into one relayout cannot move).
func onlySkipped(report, out string) bool {
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		return false
	}
	var m struct{ Skipped []string }
	if json.Unmarshal(b, &m) != nil {
		return false
	}
	bad := 0
	for _, line := range strings.Split(report, "\n") {
		if !strings.HasPrefix(line, "BAD ") {
			continue
		}
		bad++
		f := strings.Fields(line) // BAD var step N missing from output
		if len(f) < 4 || !strings.Contains(line, "missing from output") {
			return false
		}
		listed := false
		for _, s := range m.Skipped {
			listed = listed || strings.Contains(s, "/"+f[1]+":") && strings.Contains(s, f[3])
		}
		if !listed {
			return false
		}
	}
	return bad > 0
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// mutate runs n mutations spread over the seeds, deterministically from seed.
func mutate(t *testing.T, n int, seed uint64) map[string]int {
	dir := t.TempDir()
	var cases []*mutCase
	for _, s := range mutSeeds {
		cases = append(cases, prepareSeed(t, s, dir))
	}
	r := rand.New(rand.NewPCG(seed, 17))
	counts := map[string]int{}
	bad := 0
	for i := 0; i < n; i++ {
		c := cases[i%len(cases)]
		m := pickMutation(r, c.files, c.sizes)
		class, detail := c.runMutation(t, m, filepath.Join(dir, fmt.Sprintf("m%d", i)))
		counts[class]++
		switch class {
		case "panic", "hang", "memcap", "final-names":
			bad++
			t.Errorf("%s: %s: %s\n%s", c.seed.name, m, class, detail)
		case "unexplained", "exit1":
			t.Logf("%s: %s: %s: %s", c.seed.name, m, class, detail)
		}
	}
	var keys []string
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	t.Logf("%d mutations: %s", n, strings.Join(parts, ", "))
	return counts
}

// TestMutationSample runs a small fixed sample of damaged inputs.
func TestMutationSample(t *testing.T) {
	mutate(t, 48, 1)
}

// TestMutationFuzz runs RELAYOUT_FUZZ_INPUTS mutations (make fuzz-inputs),
// seeded by RELAYOUT_FUZZ_SEED (default 2).
func TestMutationFuzz(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RELAYOUT_FUZZ_INPUTS"))
	if n <= 0 {
		t.Skip("skipping: set RELAYOUT_FUZZ_INPUTS=N (make fuzz-inputs) to run N mutated inputs")
	}
	seed, _ := strconv.ParseUint(os.Getenv("RELAYOUT_FUZZ_SEED"), 10, 64)
	if seed == 0 {
		seed = 2
	}
	mutate(t, n, seed)
}
