package main

import (
	"bufio"
	"bytes"
	"cmp"
	"os/exec"
	"strings"
	"testing"
)

// The layering of the module, enforced (GUIDE §2; each package's doc.go
// states its part):
//
//	main (relayout), bench/* → anything
//	job                      → reader, planner, rewriter, catalog, internal/*
//	reader, reader/*         → catalog, reader/*, internal/* (never planner, rewriter, job)
//	rewriter                 → planner, catalog, internal/* (never reader, job)
//	verify                   → catalog, internal/* (never rewriter, planner, reader: it shares no code with the writer)
//	planner                  → catalog only (pure: never reader, rewriter, internal/h5)
//	catalog                  → no relayout package
//	internal/*               → catalog, internal/*
//
// cgo only in internal/h5 (gonum.org/v1/hdf5 imported there alone, its cgo
// files behind //go:build cgo with a stub otherwise, so that the whole
// module builds with CGO_ENABLED=0: make test builds and vets it so), and
// catalog, planner, reader/bp, reader/scorpio, reader/amrex, reader/netcdf, reader/blockio,
// internal/membudget and internal/limits are pure Go: nothing they depend on has cgo files
// (make test also tests them with CGO_ENABLED=0).
var allowed = []struct{ pkg, may string }{
	{"relayout/job", "relayout/reader relayout/planner relayout/rewriter relayout/verify relayout/catalog relayout/internal/"},
	{"relayout/reader", "relayout/catalog relayout/reader/ relayout/internal/"},
	{"relayout/rewriter", "relayout/planner relayout/catalog relayout/internal/"},
	{"relayout/verify", "relayout/catalog relayout/internal/"},
	{"relayout/planner", "relayout/catalog"},
	{"relayout/catalog", ""},
	{"relayout/internal/", "relayout/catalog relayout/internal/"},
}

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

// rule finds the rule of pkg (the longest matching prefix; a trailing "/"
// matches sub-packages, a plain path itself and its sub-packages).
func rule(pkg string) (string, bool) {
	best, may, found := -1, "", false
	for _, r := range allowed {
		p := r.pkg
		if pkg == strings.TrimSuffix(p, "/") || strings.HasPrefix(pkg, strings.TrimSuffix(p, "/")+"/") {
			if len(p) > best {
				best, may, found = len(p), r.may, true
			}
		}
	}
	return may, found
}

func permitted(imp, may string) bool {
	for _, m := range strings.Fields(may) {
		if imp == strings.TrimSuffix(m, "/") || strings.HasSuffix(m, "/") && strings.HasPrefix(imp, m) {
			return true
		}
	}
	return false
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
		may, ok := rule(p.path)
		for _, imp := range p.imports {
			if imp == "gonum.org/v1/hdf5" && p.path != "relayout/internal/h5" {
				t.Errorf("%s imports %s: HDF5 is called through internal/h5 only", p.path, imp)
			}
			if !ok || !strings.HasPrefix(imp, "relayout/") && imp != "relayout" {
				continue
			}
			if !permitted(imp, may) {
				t.Errorf("%s imports %s, which breaks the layering (it may import: %s)", p.path, imp, cmp.Or(may, "no relayout package"))
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

// TestLayeringRules checks the checker on imports that break the rules.
func TestLayeringRules(t *testing.T) {
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
		may, _ := rule(c.pkg)
		if got := permitted(c.imp, may); got != c.ok {
			t.Errorf("%s importing %s: permitted %v, want %v", c.pkg, c.imp, got, c.ok)
		}
	}
}
