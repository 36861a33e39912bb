package testkit

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// PeersEnv returns ../shared/peers (absolute) and the environment its env.sh
// sets up (bpls, the adios2 and openpmd_api Python modules for Debian's
// /usr/bin/python3), skipping when the folder is absent and failing under
// CI=true.
func PeersEnv(t testing.TB) (dir string, env []string) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(repoRoot(t), "..", "shared", "peers"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "env.sh")); err != nil {
		Unavailable(t, "peers %s not present (../shared/peers is not part of a checkout): %v", dir, err)
	}
	out, err := exec.Command("bash", "-c", `. "$1" && env -0`, "_", filepath.Join(dir, "env.sh")).Output()
	if err != nil {
		t.Fatalf("sourcing %s/env.sh: %v", dir, err)
	}
	for _, kv := range bytes.Split(out, []byte{0}) {
		if len(kv) > 0 {
			env = append(env, string(kv))
		}
	}
	return dir, env
}

// OpenPMDGen runs ../shared/peers/openpmd_gen.py with args (write, check,
// rule) and returns its combined output; a failure ends the test.
func OpenPMDGen(t testing.TB, args ...string) string {
	t.Helper()
	dir, _ := PeersEnv(t)
	return PeersPython(t, append([]string{filepath.Join(dir, "openpmd_gen.py")}, args...)...)
}

// PeersPython runs Debian's python3 with args in the peers' environment
// (PeersEnv: the adios2 and openpmd_api modules), e.g. "-c", script, and
// returns its combined output; a failure ends the test.
func PeersPython(t testing.TB, args ...string) string {
	t.Helper()
	_, env := PeersEnv(t)
	cmd := exec.Command(Python, args...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 %s: %v\n%s", strings.Join(args[:min(len(args), 1)], " "), err, b)
	}
	return string(b)
}
