package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"relayout/internal/testkit"
	"strings"
	"testing"
)

// The layering of the module (GUIDE §2; each package's doc.go states its
// part) is go-arch-lint's rules (.go-arch-lint.yml, run by make lint):
//
//	main (relayout), bench/*, e2e → anything
//	job                      → reader, planner, rewriter, verify, catalog, internal/*
//	reader, reader/*         → catalog, reader/*, internal/* (never planner, rewriter, job)
//	rewriter                 → planner, catalog, internal/* (never reader, job)
//	verify                   → catalog, internal/* (never rewriter, planner, reader: it shares no code with the writer)
//	planner                  → catalog only (pure: never reader, rewriter, internal/h5)
//	catalog                  → no relayout package
//	internal/*               → catalog, internal/*
//
// TestLayeringRules runs it against imports that break them. What it cannot
// say is checked here: only main imports job; cgo only in internal/h5
// (gonum.org/v1/hdf5 imported there alone, its cgo files behind
// //go:build cgo with a stub otherwise, so that the whole module builds
// with CGO_ENABLED=0: make test builds and vets it so), and catalog,
// planner, reader/bp, reader/scorpio, reader/amrex, reader/netcdf,
// reader/blockio, internal/membudget and internal/limits are pure Go:
// nothing they depend on has cgo files (make test also tests them with
// CGO_ENABLED=0).

// pureGo must build without cgo.
var pureGo = []string{"relayout/catalog", "relayout/planner", "relayout/reader/bp", "relayout/reader/scorpio", "relayout/reader/amrex", "relayout/reader/netcdf", "relayout/reader/blockio", "relayout/internal/membudget", "relayout/internal/limits"}

type pkgInfo struct {
	path     string
	imports  []string
	cgo      bool
	standard bool
}

func goList(t *testing.T, args ...string) []pkgInfo {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{len .CgoFiles}}|{{.Standard}}"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, stderr.String())
	}
	var pkgs []pkgInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "|")
		if len(f) != 4 {
			t.Fatalf("go list line %q", sc.Text())
		}
		pkgs = append(pkgs, pkgInfo{path: f[0], imports: strings.Fields(f[1]), cgo: f[2] != "0", standard: f[3] == "true"})
	}
	return pkgs
}

func TestLayering(t *testing.T) {
	pkgs := goList(t, "./...")
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages", len(pkgs))
	}
	// The job owns run/plan/rewrite/commit (GUIDE §2): it exists, and only
	// main (and programs under bench/) import it.
	foundJob := false
	for _, p := range pkgs {
		foundJob = foundJob || p.path == "relayout/job"
		for _, imp := range p.imports {
			if imp == "relayout/job" && p.path != "relayout" && !strings.HasPrefix(p.path, "relayout/bench/") {
				t.Errorf("%s imports relayout/job: only main turns flags into a job", p.path)
			}
		}
	}
	if !foundJob {
		t.Error("go list found no relayout/job")
	}
	for _, p := range pkgs {
		if p.cgo && p.path != "relayout/internal/h5" {
			t.Errorf("%s has cgo files: cgo belongs in internal/h5 only", p.path)
		}
		for _, imp := range p.imports {
			if imp == "gonum.org/v1/hdf5" && p.path != "relayout/internal/h5" {
				t.Errorf("%s imports %s: HDF5 is called through internal/h5 only", p.path, imp)
			}
		}
	}
	for _, pkg := range pureGo {
		for _, d := range goList(t, "-deps", pkg) {
			if !d.standard && d.cgo {
				t.Errorf("%s depends on %s, which has cgo files: it must build with CGO_ENABLED=0", pkg, d.path)
			}
		}
	}
}

// TestLayeringRules runs go-arch-lint with the module's rules on a module
// of empty packages where pkg imports imp, one import a case: the imports
// that break the rules are refused, the others pass.
func TestLayeringRules(t *testing.T) {
	lint := archLint(t)
	rules, err := os.ReadFile(".go-arch-lint.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pkg, imp string
		ok       bool
	}{
		{"relayout/planner", "relayout/catalog", true},
		{"relayout/planner", "relayout/reader", false},
		{"relayout/planner", "relayout/rewriter", false},
		{"relayout/planner", "relayout/internal/h5", false},
		{"relayout/rewriter", "relayout/reader", false},
		{"relayout/rewriter", "relayout/reader/bp", false},
		{"relayout/rewriter", "relayout/internal/h5", true},
		{"relayout/reader/bp", "relayout/reader/blockio", true},
		{"relayout/reader/bp", "relayout/planner", false},
		{"relayout/catalog", "relayout/planner", false},
		{"relayout/internal/h5", "relayout/rewriter", false},
		{"relayout/job", "relayout/rewriter", true},
		{"relayout/job", "relayout/reader", true},
		{"relayout/job", "relayout/planner", true},
		{"relayout/job", "relayout/verify", true},
		{"relayout/verify", "relayout/rewriter", false},
		{"relayout/job", "relayout", false},
		{"relayout/rewriter", "relayout/job", false},
		{"relayout/planner", "relayout/job", false},
		{"relayout/reader", "relayout/job", false},
		{"relayout/reader/bp", "relayout/job", false},
		{"relayout/catalog", "relayout/job", false},
		{"relayout/internal/h5", "relayout/job", false},
	} {
		t.Run(strings.TrimPrefix(c.pkg, "relayout/")+"→"+strings.TrimPrefix(c.imp, "relayout/"), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write := func(rel, text string) {
				p := filepath.Join(dir, filepath.FromSlash(rel))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			write("go.mod", "module relayout\n\ngo 1.26\n")
			write(".go-arch-lint.yml", string(rules))
			// Every component's folder, each an empty package.
			for _, d := range []string{"", "bench/x", "examples/x", "e2e", "job", "reader", "reader/bp", "reader/blockio", "rewriter", "verify", "planner", "catalog", "internal/h5", "internal/x"} {
				name := path.Base("relayout/" + d)
				write(path.Join(d, "doc.go"), "package "+name+"\n")
			}
			pkg := strings.TrimPrefix(strings.TrimPrefix(c.pkg, "relayout"), "/")
			write(path.Join(pkg, "case.go"), fmt.Sprintf("package %s\n\nimport _ %q\n", path.Base(c.pkg), c.imp))
			cmd := exec.Command(lint, "check", "--output-color=false")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			named := bytes.Contains(out, []byte("shouldn't depend on "+c.imp+" in"))
			if refused := err != nil; refused == c.ok || refused && !named {
				t.Errorf("%s importing %s: refused %v (naming that import: %v), want %v\n%s", c.pkg, c.imp, refused, named, !c.ok, out)
			}
		})
	}
}

// archLint is the go-arch-lint that make lint installs: on PATH, else in
// GOBIN or GOPATH/bin.
func archLint(t *testing.T) string {
	if p, err := exec.LookPath("go-arch-lint"); err == nil {
		return p
	}
	for _, env := range []string{"GOBIN", "GOPATH"} {
		out, err := exec.Command("go", "env", env).Output()
		dir := strings.TrimSpace(string(out))
		if err != nil || dir == "" {
			continue
		}
		if env == "GOPATH" {
			dir = filepath.Join(filepath.SplitList(dir)[0], "bin")
		}
		if p := filepath.Join(dir, "go-arch-lint"); fileIsExec(p) {
			return p
		}
	}
	return testkit.NeedTool(t, "go-arch-lint", "make lint installs it")
}

func fileIsExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
