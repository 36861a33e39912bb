package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCLIMessages runs command-line mistakes and reported flag values on a
// generated series and compares exit code and message with
// ../testdata/golden/cli-messages.txt (go test ./e2e -run TestCLIMessages
// -update rewrites it). Temporary paths read as $TMP; for commands that
// succeed only their "note:" lines are kept, and "progress:" lines never
// (they hold timings).
func TestCLIMessages(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "32,32,32", "--chunk-shape", "8,8,8", "--steps", "0", "-q")
	out := func(n string) string { return filepath.Join(dir, n) }
	cases := [][]string{
		{"paln", in},
		{"verfy", in, out("o")},
		{"frobnicate"},
		{"run", in, "-o", out("o1"), "--max-mem", "100"},
		{"run", in, "-o", out("o1"), "--max-mem", "10K"},
		{"run", in, "-o", out("o1"), "--resume", "--max-mem", "1"},
		{"verify", "--max-mem", "100", in, out("o")},
		{"commit", out("o"), "--max-mem", "1000"},
		{"rewrite", out("o"), "--shard", "0/1", "--max-mem", "1000"},
		{"calibrate", dir, "--size", "100"},
		{"commit", out("o"), "--jobs", "0"},
		{"run", in, "-o", out("o1"), "--stats", "-1s"},
		{"run", in, "-o", out("o1"), "--progress", "fancy"},
		{"run", in, "-o", out("o1"), "--chunk-shap", "8,8,8"},
		{"plan", in, "--readrs", "4"},
		{"run", in, "-out", out("o1")},
		{"plan", in, "-json"},
		{"run", in},
		{"run", in, "-o", out("o1"), "--var", "rhoo"},
		{"run", in, "-o", out("o1"), "--var", "RHO"},
		{"catalog", in, "--var", "e/X"},
		{"generate", in},
		{"run", in, "-o", out("c1"), "--layout", "chunked", "--chunks", "3x3x3", "--progress", "none"},
		{"run", in, "-o", out("c2"), "--layout", "chunked", "--chunk-shape", "64,64,64", "--progress", "none"},
		{"run", in, "-o", out("c3"), "--layout", "chunked", "--chunks", "40x4x4", "--progress", "none"},
		{"run", in, "-o", out("c4"), "--layout", "chunked", "--chunks", "2x4x8", "--progress", "none"},
	}
	var b strings.Builder
	for _, args := range cases {
		r := relayout(t, args...)
		fmt.Fprintf(&b, "$ relayout %s\nexit %d\n", strings.Join(args, " "), r.code)
		var kept []string // progress lines (a log's, with timings) left out
		for _, l := range strings.SplitAfter(r.stderr, "\n") {
			if !strings.HasPrefix(l, "progress: ") {
				kept = append(kept, l)
			}
		}
		msg := strings.Join(kept, "")
		if r.code == 0 {
			var notes []string
			for _, l := range strings.Split(msg, "\n") {
				if strings.HasPrefix(l, "note:") {
					notes = append(notes, l)
				}
			}
			msg = strings.Join(notes, "\n")
			if msg != "" {
				msg += "\n"
			}
		}
		if strings.Contains(msg, "panic") {
			t.Errorf("relayout %v panicked:\n%s", args, msg)
		}
		b.WriteString(msg)
		b.WriteString("\n")
	}
	got := strings.ReplaceAll(b.String(), dir, "$TMP")
	golden := filepath.Join("..", "testdata", "golden", "cli-messages.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("messages differ from %s (rerun with -update if the change is intended):\n%s", golden, firstDiff(string(want), got))
	}
	// The generated input is untouched by the refused generate.
	if entries, _ := os.ReadDir(in); len(entries) != 1 {
		t.Errorf("generate without --force changed %s: %d entries", in, len(entries))
	}
	// The notes say what h5py finds: chunks of 11^3 for --chunks 3x3x3, the
	// whole 32^3 array for --chunk-shape 64,64,64, 1x8x8 for 40x4x4.
	for o, want := range map[string]string{"c1": "(11, 11, 11)", "c2": "(32, 32, 32)", "c3": "(1, 8, 8)", "c4": "(16, 8, 4)"} {
		script := fmt.Sprintf("import h5py\nwith h5py.File(%q) as f: print(f['/data/0/meshes/rho'].chunks)\n", filepath.Join(out(o), "rho.h5"))
		b, err := exec.Command(python, "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(b)) != want {
			t.Errorf("%s: h5py chunks %s (%v), want %s", o, b, err, want)
		}
	}
}

// TestCLIAliases: the deprecated spellings still work and say what to use.
func TestCLIAliases(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	r := mustRun(t, "generate", in, "--shape", "8,8,8", "--chunk", "4,4,4", "--steps", "0")
	if !strings.Contains(r.stderr, "--chunk has been deprecated, use --chunk-shape") {
		t.Errorf("generate --chunk: no deprecation note:\n%s", r.stderr)
	}
	for _, v := range []string{"run", "catalog", "plan", "rewrite", "commit", "inspect", "verify", "calibrate", "generate"} {
		if r := mustRun(t, v, "--help"); !strings.Contains(r.stdout, "-q, --quiet") {
			t.Errorf("%s --help has no -q, --quiet:\n%s", v, r.stdout)
		}
	}
	for _, v := range []string{"run", "plan", "calibrate"} {
		if r := mustRun(t, v, "--help"); !strings.Contains(r.stdout, "-o, --out") || strings.Contains(r.stdout, "--output") {
			t.Errorf("%s --help: want -o, --out and no --output:\n%s", v, r.stdout)
		}
	}
	if r := mustRun(t, "generate", "--help"); strings.Contains(r.stdout, "--chunk ") || !strings.Contains(r.stdout, "--chunk-shape") {
		t.Errorf("generate --help: want --chunk-shape only:\n%s", r.stdout)
	}
	// generate --force writes into a non-empty DIR; -q prints nothing.
	r = mustRun(t, "generate", in, "--shape", "8,8,8", "--chunk-shape", "4,4,4", "--steps", "0,1", "--force", "-q")
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("generate -q printed %q %q", r.stdout, r.stderr)
	}
	if entries, _ := os.ReadDir(in); len(entries) != 2 {
		t.Errorf("generate --force: %d files, want 2", len(entries))
	}
}

// TestManifestAndJSON: the manifest's schema, options, timestamps and
// verified flag (read by Python's json, not relayout's types), and JSON
// without HTML escaping from catalog, plan and the manifest.
func TestManifestAndJSON(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "16,16,16", "--chunk-shape", "8,8,8", "--steps", "0", "-q")
	before := time.Now().UTC().Truncate(time.Second)
	o1, o2 := filepath.Join(dir, "o1"), filepath.Join(dir, "o2")
	mustRun(t, "run", in, "-o", o1, "-q", "--layout", "chunked", "--chunks", "2x2x2", "--compress", "deflate:3", "--max-mem", "64MiB", "--jobs", "2")
	mustRun(t, "run", in, "-o", o2, "-q", "--no-verify", "--digest", "none")
	check := fmt.Sprintf(`
import json, datetime, sys
before = datetime.datetime.fromisoformat(%q.replace("Z", "+00:00"))
now = datetime.datetime.now(datetime.timezone.utc)
for path, verified, opts in [(%q, True, {"layout": "chunked", "chunks": [2,2,2], "compression": "deflate:3", "digest": "sha256", "netcdf": False, "max_mem": 64<<20, "jobs": 2}),
                             (%q, False, {"layout": "contiguous", "compression": "none", "digest": "none", "netcdf": False, "max_mem": 1<<30})]:
    raw = open(path + "/relayout.json").read()
    assert "\\\\u003c" not in raw, "HTML-escaped JSON"
    m = json.loads(raw)
    assert m["schema"] == "relayout-manifest/1", m["schema"]
    assert m["verified"] is verified, (path, m["verified"])
    for k, v in opts.items():
        assert m["options"][k] == v, (path, k, m["options"].get(k), v)
    s = datetime.datetime.fromisoformat(m["started"].replace("Z", "+00:00"))
    f = datetime.datetime.fromisoformat(m["finished"].replace("Z", "+00:00"))
    assert m["started"].endswith("Z") and s.tzinfo is not None
    assert before <= s <= f <= now, (before, s, f, now)
    assert m["variables"][0]["dtype"] == "<f8"
print("manifest ok")
`, before.Format(time.RFC3339), o1, o2)
	if b, err := exec.Command(python, "-c", check).CombinedOutput(); err != nil {
		t.Fatalf("manifest check: %v\n%s", err, b)
	}
	for _, args := range [][]string{{"catalog", in, "--json"}, {"plan", in, "--json"}} {
		r := mustRun(t, args...)
		if strings.Contains(r.stdout, `\u003c`) || !strings.Contains(r.stdout, `"<f8"`) {
			t.Errorf("%s: HTML-escaped or no <f8:\n%.400s", strings.Join(args, " "), r.stdout)
		}
		var doc struct {
			Input struct{ Path, Format string }
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Input.Path != in || doc.Input.Format != "openpmd-hdf5" {
			t.Errorf("%s: input %+v (%v), want {%s openpmd-hdf5}", strings.Join(args, " "), doc.Input, err, in)
		}
	}
}

// TestRunScreen (issue 41): a default run on a terminal shows the progress
// and a short summary — no io: line, no OK line, no per-variable figures,
// no storage line where nothing was attempted — ending with where the
// manifest is; -v brings the diagnostics back (in a log as on a terminal),
// with the same summary; -q prints nothing. relayout verify keeps its OK
// lines, its io: verify line under -v.
func TestRunScreen(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "32,32,32", "--chunk-shape", "16,16,16", "--steps", "0,1", "-q")
	out := filepath.Join(dir, "o1")
	b, err := exec.Command(python, "-c", ptyRun, binary, "run", in, "-o", out).Output()
	if err != nil {
		t.Fatalf("run in a pty: %v\n%s", err, b)
	}
	lines := screen(strings.ReplaceAll(string(b), "\r\n", "\n"))
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	want := []string{
		"catalog: 4 variables from " + in + " (openpmd-hdf5) in ",
		"done: 4 variables written to " + out + " in ",
		"  written:   2.0MiB of arrays in 7 files (", // 4 variables, series.h5, the views of 2 steps
		"  verified:  element by element: every element equals the input",
		"  manifest:  " + filepath.Join(out, "relayout.json"),
	}
	if len(lines) != len(want) {
		t.Fatalf("default screen: %d lines, want %d:\n%s", len(lines), len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("default screen line %d: %q, want it to start with %q", i+1, lines[i], w)
		}
	}
	if !strings.HasSuffix(lines[3], "; sha256 of every array in the manifest") {
		t.Errorf("the summary does not say the digests recorded: %q", lines[3])
	}

	// -v: the diagnostics, in a log (no terminal) as on one, then the
	// same summary.
	r := mustRun(t, "run", in, "-o", filepath.Join(dir, "o2"), "-v")
	for _, w := range []string{"catalog: ", "limits: budget ", "storage: ", "E/x: 2 arrays", "io: read ", "io: write ", "io: stage seconds",
		"io: buffers peak", "OK  rho", "io: verify read", "done: 4 variables", "  manifest:  "} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(w)).MatchString(r.stderr) {
			t.Errorf("run -v: no line starting %q:\n%s", w, r.stderr)
		}
	}
	// Without -v, in a log: the progress lines, the catalog and the
	// summary, nothing else.
	r = mustRun(t, "run", in, "-o", filepath.Join(dir, "o3"))
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if !strings.HasPrefix(l, "progress: ") && !strings.HasPrefix(l, "catalog: ") && !strings.HasPrefix(l, "done: ") && !strings.HasPrefix(l, "  ") {
			t.Errorf("default run in a log: line %q (a diagnostic without -v?)\n%s", l, r.stderr)
		}
	}
	if r := mustRun(t, "run", in, "-o", filepath.Join(dir, "o4"), "-q"); r.stderr != "" || r.stdout != "" {
		t.Errorf("run -q printed:\n%s%s", r.stdout, r.stderr)
	}
	if r := relayout(t, "run", in, "-o", filepath.Join(dir, "o5"), "-q", "-v"); r.code != 2 {
		t.Errorf("run -q -v: exit %d, want 2\n%s", r.code, r.stderr)
	}

	r = mustRun(t, "verify", in, out)
	if !strings.Contains(r.stdout, "OK  rho  2 steps") || strings.Contains(r.stdout, "io: ") {
		t.Errorf("verify: want the OK lines and no io: line:\n%s", r.stdout)
	}
	if r := mustRun(t, "verify", in, out, "-v"); !strings.Contains(r.stdout, "OK  rho  2 steps") || !strings.Contains(r.stdout, "\nio: verify read ") {
		t.Errorf("verify -v: want the OK lines and the io: verify line:\n%s", r.stdout)
	}
}

// TestProgressJSON: with --progress json every stdout line is a JSON event
// (human text stays on stderr), the sequence is start, progress through the
// phases catalog, rewrite, verify, commit in order, then the summary, and
// numbers carry at most three decimals. A run that fails after it started
// ends with an error event and a failed summary.
func TestProgressJSON(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "64,64,64", "--chunk-shape", "16,16,16", "--steps", "0,1", "-q")
	r := mustRun(t, "run", in, "-o", filepath.Join(dir, "o1"), "--progress", "json", "--layout", "chunked", "--chunks", "3x3x3", "--jobs", "1")
	events := parseEvents(t, r.stdout)
	if !strings.Contains(r.stderr, "catalog: 4 variables") || strings.Contains(r.stderr, `"type"`) {
		t.Errorf("stderr should hold the human text only:\n%s", r.stderr)
	}
	var phases []string
	verifiedAll := false
	for i, e := range events {
		typ := e["type"]
		switch {
		case i == 0:
			if typ != "start" || e["schema"] != "relayout-progress/1" || e["input"] != in {
				t.Errorf("first event %v, want start with schema relayout-progress/1", e)
			}
		case i == len(events)-1:
			if typ != "summary" || e["status"] != "done" || e["variables"] != 4.0 || e["verified"] != true || e["bytes"] != float64(2*4*64*64*64*8) {
				t.Errorf("last event %v, want a done summary of 4 variables, verified, 16 MiB", e)
			}
		case typ == "progress":
			p, _ := e["phase"].(string)
			if len(phases) == 0 || phases[len(phases)-1] != p {
				phases = append(phases, p)
			}
			if (p == "rewrite" || p == "verify") && e["bytes_total"] != nil && e["bytes_total"] != float64(2*4*64*64*64*8) {
				t.Errorf("%s progress %v: bytes_total", p, e)
			}
			if p == "verify" && e["bytes_done"] == e["bytes_total"] && e["bytes_total"] != nil {
				verifiedAll = true
			}
		case typ == "warning":
			if m, _ := e["message"].(string); !strings.HasPrefix(m, "note: --chunks 3x3x3") {
				t.Errorf("warning %v", e)
			}
		default:
			t.Errorf("event %d: unexpected %v", i, e)
		}
	}
	if strings.Join(phases, ",") != "catalog,rewrite,verify,commit" {
		t.Errorf("phases %v, want catalog,rewrite,verify,commit", phases)
	}
	if !verifiedAll {
		t.Errorf("no verify progress event with every byte verified: %v", events)
	}
	// run --resume: the same phases as run (one path): catalog, rewrite,
	// verify (the journal check, then the verifier), commit, summary.
	r = mustRun(t, "run", in, "-o", filepath.Join(dir, "o3"), "--resume", "--progress", "json")
	events = parseEvents(t, r.stdout)
	phases = nil
	rewroteAll := false
	for _, e := range events {
		if p, _ := e["phase"].(string); p != "" && (len(phases) == 0 || phases[len(phases)-1] != p) {
			phases = append(phases, p)
		}
		if e["phase"] == "rewrite" && e["bytes_total"] == float64(2*4*64*64*64*8) && e["bytes_done"] == e["bytes_total"] {
			rewroteAll = true
		}
	}
	if !rewroteAll {
		t.Errorf("run --resume: no rewrite progress event with every byte written: %v", events)
	}
	last := events[len(events)-1]
	if strings.Join(phases, ",") != "catalog,rewrite,verify,commit" || events[0]["type"] != "start" || last["type"] != "summary" || last["status"] != "done" || last["variables"] != 4.0 {
		t.Errorf("run --resume events: phases %v, %v", phases, events)
	}
	// A failure once the events started: an error event, then the summary.
	r = relayout(t, "run", in, "-o", filepath.Join(dir, "o2"), "--progress", "json", "--var", "rhoo")
	events = parseEvents(t, r.stdout)
	n := len(events)
	if r.code != 2 || n < 3 || events[n-2]["type"] != "error" || events[n-1]["type"] != "summary" || events[n-1]["status"] != "failed" ||
		!strings.Contains(fmt.Sprint(events[n-2]["message"]), "did you mean --var rho") {
		t.Errorf("failed run: exit %d, events %v", r.code, events)
	}
}

// parseEvents parses every line of s as a JSON object, failing on any other
// line and on numbers with more than three decimals.
func parseEvents(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	long := regexp.MustCompile(`[:,\[]-?[0-9]+\.[0-9]{4,}`)
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("stdout line %d is not JSON (%v): %q", i+1, err, l)
		}
		if long.MatchString(l) {
			t.Errorf("line %d: a number with more than three decimals: %s", i+1, l)
		}
		out = append(out, e)
	}
	return out
}

// TestChunkNotesEverywhere: run --resume, plan and plan -o report the same
// chunk note as run.
func TestChunkNotesEverywhere(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "32,32,32", "--chunk-shape", "8,8,8", "--steps", "0", "-q")
	const want = "note: --chunks 3x3x3 on shape 32x32x32 (E/x and 3 other arrays): chunks of 11x11x11, the last along each axis 10x10x10 (the shape is not a multiple of the decomposition)\n"
	for _, args := range [][]string{
		{"run", in, "-o", filepath.Join(dir, "r"), "--resume", "--layout", "chunked", "--chunks", "3x3x3"},
		{"plan", in, "--layout", "chunked", "--chunks", "3x3x3"},
		{"plan", in, "-o", filepath.Join(dir, "p"), "--shards", "2", "--layout", "chunked", "--chunks", "3x3x3"},
	} {
		r := mustRun(t, args...)
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("relayout %s: want the note once on stderr:\n%s", strings.Join(args, " "), r.stderr)
		}
	}
}

// ptyRun runs relayout in a real pseudo-terminal (Python's pty module) and
// returns what the terminal received and the exit code.
const ptyRun = `
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.environ["COLUMNS"] = "120"
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        b = os.read(fd, 65536)
    except OSError:
        break
    if not b:
        break
    out += b
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.waitstatus_to_exitcode(st))
`

// screen replays a terminal's output (\r, \n, ESC[K; other text overwrites
// at the cursor) and returns the lines left on the screen.
func screen(raw string) []string {
	var lines []string
	var cur []rune
	col := 0
	rs := []rune(raw)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\r':
			col = 0
		case c == '\n':
			lines = append(lines, string(cur))
			cur, col = nil, 0
		case c == 0x1b && i+2 < len(rs) && rs[i+1] == '[' && rs[i+2] == 'K':
			cur = cur[:col]
			i += 2
		default:
			if col < len(cur) {
				cur[col] = c
			} else {
				cur = append(cur, c)
			}
			col++
		}
	}
	if len(cur) > 0 {
		lines = append(lines, string(cur))
	}
	return lines
}

// TestTerminalProgress: in a terminal the status line shows every phase,
// log lines (-v: every diagnostic) are never broken by it (each is a whole
// line of the screen), and it is gone at the end, leaving the "done:"
// summary; without a terminal a "progress:" line marks every phase and the
// rewrite's end.
func TestTerminalProgress(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	mustRun(t, "generate", in, "--shape", "64,64,64", "--chunk-shape", "16,16,16", "--steps", "0,1", "-q")
	cmd := exec.Command(python, "-c", ptyRun, binary, "run", in, "-o", filepath.Join(dir, "o1"), "--jobs", "1", "-v")
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("run in a pty: %v\n%s", err, b)
	}
	raw := strings.ReplaceAll(string(b), "\r\n", "\n") // the pty's output processing
	for _, p := range []string{"catalog", "rewrite", "verify", "commit"} {
		if !strings.Contains(raw, "\r\x1b[K"+p+"  ") {
			t.Errorf("the status line never showed phase %s:\n%q", p, raw)
		}
	}
	if !regexp.MustCompile(`\r\x1b\[Krewrite  16\.0MiB / 16\.0MiB  100%  `).MatchString(raw) {
		t.Errorf("the status line never showed the rewrite at 100%% of 16.0MiB:\n%q", raw)
	}
	lines := screen(raw)
	status := regexp.MustCompile(`(catalog|rewrite|verify|commit)  `)
	want := []string{"catalog: 4 variables", "storage: ", "E/x: 2 arrays", "rho: 2 arrays", "io: ", "OK  rho", "done: 4 variables"}
	for _, l := range lines {
		if status.MatchString(l) {
			t.Errorf("status text left on the screen or breaking a log line: %q", l)
		}
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, w)
		}
		if !found {
			t.Errorf("no screen line starts with %q:\n%s", w, strings.Join(lines, "\n"))
		}
	}
	if n := len(lines); n < 4 || !strings.HasPrefix(lines[n-4], "done: 4 variables") ||
		lines[n-1] != "  manifest:  "+filepath.Join(dir, "o1", "relayout.json") {
		t.Errorf("the screen does not end with the summary:\n%s", strings.Join(lines, "\n"))
	}

	// Without a terminal (a batch log): a line per phase, in order, and the
	// rewrite's final figures; --stats 0 leaves out the periodic ones.
	r := mustRun(t, "run", in, "-o", filepath.Join(dir, "o2"), "--stats", "0")
	var got []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "progress: ") {
			got = append(got, strings.Fields(l)[1])
		}
		if strings.Contains(l, "\r") || strings.Contains(l, "\x1b") {
			t.Errorf("terminal control characters in a log: %q", l)
		}
	}
	if strings.Join(got, ",") != "catalog,rewrite,rewrite,verify,verify,commit" {
		t.Errorf("progress lines %v, want catalog,rewrite,rewrite (final),verify,verify (final),commit:\n%s", got, r.stderr)
	}
	if !strings.Contains(r.stderr, "progress: verify  16.0MiB / 16.0MiB  100%") {
		t.Errorf("no final verify line:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "progress: rewrite  16.0MiB / 16.0MiB  100%") {
		t.Errorf("no final rewrite line:\n%s", r.stderr)
	}
}
