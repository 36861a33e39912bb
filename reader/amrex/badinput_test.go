package amrex

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// copy3D copies pelelmex-3d (12 MB) into a fresh temporary directory.
func copy3D(t *testing.T) string {
	t.Helper()
	src := testkit.SharedData(t, "amrex/pelelmex-3d")
	dst := filepath.Join(t.TempDir(), "plt")
	testkit.CopyTree(t, src, dst)
	return dst
}

func edit(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s does not contain %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBadInput(t *testing.T) {
	cases := []struct {
		name     string
		damage   func(t *testing.T, dir string)
		sentinel error
		mention  []string
	}{
		{"missing Cell_D", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "Level_1", "Cell_D_00002")); err != nil {
				t.Fatal(err)
			}
		}, catalog.ErrNotFound, []string{"Level_1/Cell_H: line 18", "Level_1/Cell_D_00002"}},
		{"FabOnDisk offset past the end", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "Level_1", "Cell_H"), "FabOnDisk: Cell_D_00001 155735", "FabOnDisk: Cell_D_00001 999999999")
		}, catalog.ErrCorrupt, []string{"Level_1/Cell_H: line 17", "offset 999999999", "Level_1/Cell_D_00001"}},
		{"FAB data past the end", func(t *testing.T, dir string) {
			if err := os.Truncate(filepath.Join(dir, "Level_1", "Cell_D_00001"), 155735+1000); err != nil {
				t.Fatal(err)
			}
		}, catalog.ErrCorrupt, []string{"Level_1/Cell_H: line 17", "past the end of Level_1/Cell_D_00001"}},
		{"box outside the domain", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "Level_1", "Cell_H"), "((8,8,8) (15,15,15) (0,0,0))", "((8,8,8) (15,15,16) (0,0,0))")
		}, catalog.ErrCorrupt, []string{"Level_1/Cell_H: line 13", "outside the level 1 domain"}},
		{"level domain not the coarser one refined", func(t *testing.T, dir string) {
			// Level 1 of pelelmex-3d is 16^3 (level 0's 8^3 refined by 2): a
			// larger one would make the level array span cells no level has.
			edit(t, filepath.Join(dir, "Header"), "((0,0,0) (15,15,15) (0,0,0))", "((0,0,0) (15,15,19) (0,0,0))")
		}, catalog.ErrCorrupt, []string{"Header: level 1 domain", "is not level 0's", "refined by the ratio 2"}},
		{"Header names more levels than exist", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "Level_2")); err != nil {
				t.Fatal(err)
			}
		}, catalog.ErrNotFound, []string{"Header: line", "level 2", "Level_2/Cell_H"}},
		{"FAB header disagrees with Cell_H", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "Level_1", "Cell_H"), "FabOnDisk: Cell_D_00001 155735", "FabOnDisk: Cell_D_00001 0")
		}, catalog.ErrCorrupt, []string{"Level_1/Cell_D_00001: offset 0: FAB box"}},
		{"not a FAB header", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "Level_1", "Cell_H"), "FabOnDisk: Cell_D_00001 155735", "FabOnDisk: Cell_D_00001 155736")
		}, catalog.ErrCorrupt, []string{"Level_1/Cell_D_00001: offset 155736", "not a FAB header"}},
		{"truncated Header", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, "Header"))
			os.WriteFile(filepath.Join(dir, "Header"), b[:600], 0o644)
		}, catalog.ErrCorrupt, []string{"Header: line"}},
		{"level path leaves the dataset", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "Header"), "Level_1/Cell", "../plt/Level_1/Cell")
		}, catalog.ErrCorrupt, []string{"Header: line", "leaves the dataset directory"}},
		{"FabOnDisk names another directory", func(t *testing.T, dir string) {
			edit(t, filepath.Join(dir, "Level_1", "Cell_H"), "FabOnDisk: Cell_D_00001 155735", "FabOnDisk: ../Level_2/Cell_D_00001 155735")
		}, catalog.ErrCorrupt, []string{"Level_1/Cell_H: line 17", "not a file name"}},
		{"Cell_D is a FIFO", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "Level_0", "Cell_D_00000")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, catalog.ErrUnsupported, []string{"Level_0/Cell_D_00000", "named pipe (FIFO)"}},
		{"Cell_H is a directory", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "Level_1", "Cell_H")
			os.Remove(p)
			os.Mkdir(p, 0o755)
		}, catalog.ErrUnsupported, []string{"Level_1/Cell_H", "is a directory"}},
		{"Header is a FIFO", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "Header")
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		}, catalog.ErrUnsupported, []string{"Header", "named pipe (FIFO)"}},
		{"Cell_D is a symlink loop", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "Level_0", "Cell_D_00000")
			os.Remove(p)
			os.Symlink("Cell_D_00000", p)
		}, catalog.ErrCorrupt, []string{"Level_0/Cell_D_00000", "symlink loop"}},
		{"Cell_D is a symlink to /dev/zero", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "Level_0", "Cell_D_00000")
			os.Remove(p)
			os.Symlink("/dev/zero", p)
		}, catalog.ErrUnsupported, []string{"Level_0/Cell_D_00000", "character device"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copy3D(t)
			c.damage(t, dir)
			ds, err := Open(dir, Config{})
			if err == nil {
				ds.Close()
				t.Fatal("no error")
			}
			t.Log(err)
			if !errors.Is(err, c.sentinel) {
				t.Errorf("error %q does not wrap %v", err, c.sentinel)
			}
			for _, m := range c.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

// A directory of plotfiles is one dataset: steps from the Headers, or from
// the directory names when the Headers' steps repeat; particle containers
// and stray directories are listed as skipped.
func TestSeries(t *testing.T) {
	src := testkit.SharedData(t, "amrex/pelelmex-3d")
	root := t.TempDir()
	testkit.CopyTree(t, src, filepath.Join(root, "plt00020"))
	testkit.CopyTree(t, src, filepath.Join(root, "plt00040"))
	os.MkdirAll(filepath.Join(root, "plt00040", "particle0"), 0o755)
	os.WriteFile(filepath.Join(root, "plt00040", "particle0", "Header"), []byte("Version_Two_Dot_Zero_double\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "notes"), 0o755)
	if !Detect(root) || Detect(filepath.Join(root, "notes")) {
		t.Fatal("Detect")
	}
	ds, err := Open(root, Config{Match: func(v string) bool { return v == "temp" }})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	var keys []catalog.Key
	for _, a := range testkit.ScanAll(t, ds) {
		keys = append(keys, a.Key())
		if !strings.HasPrefix(a.Blocks[0].File, "plt000") {
			t.Errorf("block file %s not relative to the series root", a.Blocks[0].File)
		}
	}
	var want []catalog.Key
	for _, step := range []int64{20, 40} {
		for l := 0; l < 3; l++ {
			want = append(want, catalog.Key{Var: "temp", Step: step, Level: l})
		}
	}
	if !slices.Equal(keys, want) {
		t.Errorf("arrays %v, want %v", keys, want)
	}
	sk := strings.Join(ds.Info().Skipped, "\n")
	if !strings.Contains(sk, "plt00040/particle0: particle container") || !strings.Contains(sk, "notes: directory without a plotfile Header") {
		t.Errorf("skipped: %s", sk)
	}
}

// The one symlink policy (README): a data file symlinked to a regular file
// outside the plotfile is followed and read like the file it points to.
func TestSymlinkOutFollowed(t *testing.T) {
	dir := copy3D(t)
	p := filepath.Join(dir, "Level_0", "Cell_D_00000")
	os.Remove(p)
	if err := os.Symlink(filepath.Join(testkit.SharedData(t, "amrex/pelelmex-3d"), "Level_0", "Cell_D_00000"), p); err != nil {
		t.Fatal(err)
	}
	ds, err := Open(dir, Config{Match: func(v string) bool { return v == "temp" }})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	ref, err := Open(testkit.SharedData(t, "amrex/pelelmex-3d"), Config{Match: func(v string) bool { return v == "temp" }})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	got, want := testkit.ScanAll(t, ds), testkit.ScanAll(t, ref)
	if len(got) != len(want) || len(got) == 0 {
		t.Fatalf("%d arrays, want %d", len(got), len(want))
	}
	for i := range got {
		a, b := got[i], want[i]
		for j := range a.Blocks {
			if a.Blocks[j].File != "Level_0/Cell_D_00000" {
				continue
			}
			x, err := catalog.ReadBlock(t.Context(), ds, &a.Blocks[j], a.DType)
			if err != nil {
				t.Fatal(err)
			}
			y, err := catalog.ReadBlock(t.Context(), ref, &b.Blocks[j], b.DType)
			if err != nil {
				t.Fatal(err)
			}
			if string(x) != string(y) {
				t.Fatalf("block %d of %s read through the symlink differs", j, a.Var)
			}
		}
	}
}
