package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"relayout/internal/testkit"
)

// TestYTParticles: yt's openPMD frontend shows no particles of any openPMD
// file, the input as well as OUT/series.h5 (by relative or absolute path):
// it looks a species' records up as species["/position"], which h5py
// resolves from the file root, and swallows the KeyError. With the README's
// workaround (those lookups made relative) yt shows every particle of the
// input and the same ones from series.h5.
func TestYTParticles(t *testing.T) {
	testkit.NeedPython(t, "Debian python3-yt", "yt")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.h5")
	testkit.PeersPython(t, "yt_particles.py", "write", in)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	out, err := filepath.Rel(wd, filepath.Join(dir, "out")) // yt_particles.py also tries it absolute
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, "run", in, "-o", out, "-q")
	t.Logf("yt_particles.py check:\n%s", testkit.PeersPython(t, "yt_particles.py", "check", in, out))
}
