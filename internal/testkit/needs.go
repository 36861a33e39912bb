package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CI reports whether the tests run under CI (CI=true), where a missing
// prerequisite (../shared, a peer, a Debian tool or Python module) is a
// failure instead of a skip (GUIDE §4).
func CI() bool { return os.Getenv("CI") == "true" }

// Unavailable ends the test for a missing prerequisite: it fails under
// CI=true and skips otherwise, with the message format and args make (which
// should say what is missing and how to get it).
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		tb.Fatalf("%s (CI=true: a missing prerequisite is a failure)", msg)
	}
	tb.Skipf("skipping: %s", msg)
}

// SharedPeer returns ../shared/peers/<sub> (absolute; sub "" for the folder
// itself), skipping when absent and failing under CI=true. PeersEnv also
// sets up the peers' environment.
func SharedPeer(tb testing.TB, sub string) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join(repoRoot(tb), "..", "shared", "peers", sub))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		Unavailable(tb, "peers %s not present (../shared/peers is not part of a checkout): %v", p, err)
	}
	return p
}

// NeedTool returns the path of the program name found on PATH, skipping when
// absent and failing under CI=true; hint says where it comes from (e.g.
// "Debian netcdf-bin").
func NeedTool(tb testing.TB, name, hint string) string {
	tb.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(tb, "%s (%s) not installed: %v", name, hint, err)
	}
	return p
}

// NeedPython checks that Debian's python3 (Python) imports every module,
// skipping when one is missing and failing under CI=true; hint says where
// they come from (e.g. "Debian python3-h5py").
func NeedPython(tb testing.TB, hint string, modules ...string) {
	tb.Helper()
	b, err := exec.Command(Python, "-c", "import "+strings.Join(modules, ", ")).CombinedOutput()
	if err != nil {
		Unavailable(tb, "%s cannot import %s (%s): %v\n%s", Python, strings.Join(modules, ", "), hint, err, strings.TrimSpace(string(b)))
	}
}
