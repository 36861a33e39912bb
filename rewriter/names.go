package rewriter

import (
	"fmt"
	"strings"
)

// FileNames maps variable names to output file names, in the given order
// (sorted by name, as the store lists them, so the mapping is stable):
// leading and trailing "/" are dropped, "/" becomes ".", every byte outside
// [A-Za-z0-9._-] becomes "_", a name that would be empty or hidden (leading
// ".") gets a "_" prefix, and ".h5" is appended. A name already taken gets
// "-2", "-3", ... before ".h5".
func FileNames(vars []string) []string {
	used := make(map[string]bool, len(vars))
	out := make([]string, len(vars))
	for i, v := range vars {
		base := fileBase(v)
		name := base + ".h5"
		for n := 2; used[name]; n++ {
			name = fmt.Sprintf("%s-%d.h5", base, n)
		}
		used[name] = true
		out[i] = name
	}
	return out
}

func fileBase(v string) string {
	v = strings.Trim(v, "/")
	b := []byte(v)
	for i, c := range b {
		switch {
		case c == '/':
			b[i] = '.'
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] == '.' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

// datasetPath is where array (step, level) of variable v goes inside its file:
// /data/<step>/meshes/<v>, with "_lvl<L>" appended for level L > 0 (the openPMD
// mesh layout, so openPMD-aware tools find the variable). Empty and "."
// components of v are dropped and ".." becomes "_..", so a name cannot leave
// the meshes group.
func datasetPath(step int64, level int, v string) string {
	var parts []string
	for _, p := range strings.Split(v, "/") {
		switch p {
		case "", ".":
			continue
		case "..":
			p = "_.."
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		parts = []string{"_"}
	}
	p := fmt.Sprintf("%s/meshes/%s", stepGroup(step), strings.Join(parts, "/"))
	if level > 0 {
		p += fmt.Sprintf("_lvl%d", level)
	}
	return p
}

// stepGroup is a step's group; it carries Array.StepAttrs (openPMD iteration
// attributes).
func stepGroup(step int64) string { return fmt.Sprintf("/data/%d", step) }
