package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// checkDigest checks, with h5py, python3-xxhash and b3sum
// (testkit.H5Digests, not relayout), that the manifest of out says
// options.digest kind ("xxh64" or "blake3"), records no sha256, and records
// for every dataset and constant record, under the name kind, the digest
// of its logical array as row-major little-endian bytes as h5py reads it.
// It returns how many digests it checked.
func checkDigest(t *testing.T, out, kind string) int {
	t.Helper()
	want := testkit.H5Digests(t, out)
	m := readManifestMap(t, out)
	if d := m["options"].(map[string]any)["digest"]; d != kind {
		t.Errorf("options.digest %v, want %s", d, kind)
	}
	n := 0
	for _, v := range m["variables"].([]any) {
		v := v.(map[string]any)
		for _, list := range []string{"datasets", "constants"} {
			ds, _ := v[list].([]any)
			for _, d := range ds {
				d := d.(map[string]any)
				key := fmt.Sprintf("%s %v %v", v["name"], d["step"], d["level"])
				if d["sha256"] != "" {
					t.Errorf("%s: sha256 %v recorded with --digest %s", key, d["sha256"], kind)
				}
				if got := want[key][kind]; d[kind] != got || got == "" {
					t.Errorf("%s: manifest %s %v, the oracle's of h5py's bytes %q", key, kind, d[kind], got)
				}
				n++
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d digests in the manifest, h5py read %d", n, len(want))
	}
	return n
}

// TestDigestXXH64BLAKE3: run --digest xxh64 (and blake3) records every dataset's
// XXH64 (BLAKE3) of its logical bytes, as python3-xxhash (b3sum) computes
// it from what h5py reads, on real inputs (partly covered arrays,
// particles with constant records, AMR levels) and on every path that
// takes the digest: the verifier's (the default), the writer's pipeline
// (--no-verify: row-major units, chunk boxes band by band, encoded chunks
// from a second pass over the input, merged cuboids); the values are the
// input's (the h5py oracle, for the HDF5 input; the others were verified
// by the run or are by other tests).
func TestDigestXXH64BLAKE3(t *testing.T) {
	for _, kind := range []string{"xxh64", "blake3"} {
		for _, in := range []string{"bp4/generated-lb/lb-bp4.bp", "hdf5/fbpic", "amrex/pelelmex-3d"} {
			for _, flags := range [][]string{
				nil,
				{"--no-verify"},
				{"--no-verify", "--layout", "chunked", "--chunks", "2x2x2"},
				{"--no-verify", "--compress", "deflate:1"},
				{"--no-verify", "--layout", "merged"},
			} {
				t.Run(kind+filepath.Base(in)+strings.Join(flags, ""), func(t *testing.T) {
					path := sharedData(t, in)
					out := filepath.Join(t.TempDir(), "out")
					mustRun(t, append([]string{"run", path, "-o", out, "-q", "--digest", kind}, flags...)...)
					if n := checkDigest(t, out, kind); n == 0 {
						t.Fatal("no digest checked")
					}
					if strings.HasPrefix(in, "hdf5/") && len(flags) < 2 {
						oracle(t, path, out) // an HDF5 input: h5py reads both sides
					}
				})
			}
		}
	}
}

// TestDigestVerifyWrong: relayout verify checks the manifest's xxh64 (and
// blake3): a wrong one is a difference (exit 1) on a line naming the
// dataset, the algorithm and both digests; the output is otherwise intact
// (the digest is the only thing changed).
func TestDigestVerifyWrong(t *testing.T) {
	in := sharedData(t, "bp4/generated-lb/lb-bp4.bp")
	for _, kind := range []string{"xxh64", "blake3"} {
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "run", in, "-o", out, "-q", "--digest", kind)
		if r := mustRun(t, "verify", in, out); !strings.Contains(r.stdout, "OK  fields/rho  3 steps  98304 elements  "+kind+" ok") {
			t.Errorf("verify of an %s output does not say %s ok:\n%s", kind, kind, r.stdout)
		}
		m := readManifestMap(t, out)
		d := m["variables"].([]any)[2].(map[string]any)["datasets"].([]any)[1].(map[string]any)
		good := d[kind].(string)
		d[kind] = "0123456789abcdef"
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, "relayout.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := relayout(t, "verify", in, out)
		want := regexp.MustCompile(`(?m)^DIFF fields/rho step 1 level 0: ` + kind + ` of output ` + good + `, manifest says 0123456789abcdef$`)
		if r.code != 1 || !want.MatchString(r.stdout) {
			t.Errorf("verify with a wrong %s: exit %d, want 1 and a line matching %s\n%s\n%s", kind, r.code, want, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "OK  fields/Bx  3 steps  98304 elements  "+kind+" ok") {
			t.Errorf("the other variables' digests are not checked:\n%s", r.stdout)
		}
	}
}

// TestDigestXXH64Journaled: a journaled job of --digest xxh64 journals each
// unit's xxh64 and commit checks them: plan -o --shards 2 --digest xxh64,
// one shard rewritten, then a plan or run --resume of another digest is
// refused naming it (the journal's units are xxh64), the other shard
// rewritten, commit --no-verify (the units read back against the journal)
// commits; run --resume --digest xxh64 killed before its commit's first
// rename resumes and commits. The manifests' xxh64 are python3-xxhash's of
// h5py's bytes, and relayout verify checks them with every element.
func TestDigestXXH64Journaled(t *testing.T) {
	in := sharedData(t, "bp4/generated-lb/lb-bp4.bp")
	dir := t.TempDir()
	out := filepath.Join(dir, "sharded")
	mustRun(t, "plan", in, "-o", out, "--shards", "2", "--unit-size", "64KiB", "--digest", "xxh64", "-q")
	mustRun(t, "rewrite", out, "--shard", "0/2", "-q")
	for _, args := range [][]string{
		{"plan", in, "-o", out, "--shards", "2", "--unit-size", "64KiB", "-q"},
		{"plan", in, "-o", out, "--shards", "2", "--unit-size", "64KiB", "--digest", "sha256", "-q"},
		{"plan", in, "-o", out, "--shards", "2", "--unit-size", "64KiB", "--digest", "none", "-q"},
	} {
		r := relayout(t, args...)
		if r.code != 2 || !strings.Contains(r.stderr, `digest was "xxh64", now `) {
			t.Errorf("%v over an xxh64 job: exit %d, want 2 naming the digest\n%s", args, r.code, r.stderr)
		}
	}
	if r := relayout(t, "commit", out, "-q"); r.code != 1 {
		t.Errorf("commit with shard 1 unfinished: exit %d, want 1\n%s", r.code, r.stderr)
	}
	mustRun(t, "rewrite", out, "--shard", "1/2", "-q")
	r := mustRun(t, "commit", out, "--no-verify", "-v") // -v: the OK line of each variable
	if !strings.Contains(r.stdout+r.stderr, "OK  fields/Bx  98304 elements  xxh64 of every unit equals the journal") {
		t.Errorf("commit --no-verify does not check the units' xxh64:\n%s\n%s", r.stdout, r.stderr)
	}
	if n := checkDigest(t, out, "xxh64"); n != 15 {
		t.Errorf("%d digests checked, want 15", n)
	}
	if r := mustRun(t, "verify", in, out); strings.Count(r.stdout, "  xxh64 ok\n") != 5 {
		t.Errorf("verify of the sharded xxh64 output: want 5 variables xxh64 ok:\n%s", r.stdout)
	}

	resumed := filepath.Join(dir, "resumed")
	args := []string{"run", in, "-o", resumed, "-q", "--resume", "--unit-size", "64KiB", "--digest", "xxh64"}
	killed(t, []string{"RELAYOUT_TEST_KILL_AT=rename:0"}, args...)
	if _, err := os.Stat(filepath.Join(resumed, "relayout.json")); err == nil {
		t.Fatal("a manifest before the commit's first rename")
	}
	if r := relayout(t, "run", in, "-o", resumed, "-q", "--resume", "--unit-size", "64KiB"); r.code != 2 || !strings.Contains(r.stderr, `digest was "xxh64", now null`) {
		t.Errorf("run --resume (sha256) over a killed xxh64 job: exit %d, want 2 naming the digest\n%s", r.code, r.stderr)
	}
	mustRun(t, args...)
	if n := checkDigest(t, resumed, "xxh64"); n != 15 {
		t.Errorf("resumed: %d digests checked, want 15", n)
	}
	if v := readManifestMap(t, resumed)["verified"]; v != true {
		t.Errorf("resumed: verified %v", v)
	}
	// The same digests as the sharded job's (same bytes, same algorithm).
	if a, b := digestsOf(readManifestMap(t, out)), digestsOf(readManifestMap(t, resumed)); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("sharded and resumed xxh64 differ:\n%v\n%v", a, b)
	}
}

// digestsOf lists a manifest's (as a map) dataset paths with their xxh64.
func digestsOf(m map[string]any) []string {
	var s []string
	for _, v := range m["variables"].([]any) {
		for _, d := range v.(map[string]any)["datasets"].([]any) {
			d := d.(map[string]any)
			s = append(s, fmt.Sprintf("%s=%v", d["path"], d["xxh64"]))
		}
	}
	return s
}
