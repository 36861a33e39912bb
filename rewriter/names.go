package rewriter

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// fileNames maps variable names to output file names, in the given order
// (sorted by name, as the store lists them, so the mapping is stable):
// leading and trailing "/" are dropped, "/" becomes ".", every byte outside
// [A-Za-z0-9._-] becomes "_", a name that would be empty or hidden (leading
// ".") gets a "_" prefix, and ".h5" is appended. A name already taken gets
// "-2", "-3", ... before ".h5"; "series.h5" is reserved (variable "series"
// becomes "series-2.h5"). A base longer than maxFileBase bytes is cut to
// its first bytes, "~" and 16 hex digits of the sha256 of the full variable
// name (deterministic, and the staged ".<name>.tmp" stays within the 255
// bytes a file name may have); the full name stays in the manifest and the
// dataset path.
func fileNames(vars []string, ext string) []string {
	used := make(map[string]bool, len(vars)+1)
	used[seriesName] = true // OUT/series.h5 joins the files
	out := make([]string, len(vars))
	for i, v := range vars {
		base := fileBase(v)
		name := base + ext
		for n := 2; used[name]; n++ {
			name = fmt.Sprintf("%s-%d%s", base, n, ext)
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
	if len(b) > maxFileBase {
		sum := sha256.Sum256([]byte(v))
		b = append(b[:maxFileBase-17], '~')
		b = append(b, hex.EncodeToString(sum[:8])...)
	}
	return string(b)
}

// maxFileBase bounds the part of an output file name taken from the variable
// name: with "-N", ".h5" and the stage's "." and ".tmp" it stays well under
// NAME_MAX (255).
const maxFileBase = 200

// meshParts are the components of variable v inside the meshes group:
// empty and "." components dropped, ".." made "_..", so a name cannot leave
// the group.
func meshParts(v string) []string {
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
	return parts
}

// levelParts applies the openPMD mesh-refinement naming: the record name of
// level L > 0 gets "_lvl<L>" ("E/x" -> "E_lvl1/x", "rho" -> "rho_lvl1"). The
// record is every component of v but the last ("a/b/c": record "a/b", whose
// last part gets the suffix); a one-part v is a scalar record.
func levelParts(level int, v string) []string {
	parts := meshParts(v)
	if level > 0 {
		r := max(len(parts)-2, 0)
		parts[r] += fmt.Sprintf("_lvl%d", level)
	}
	return parts
}

// datasetPath is where array (step, level) of variable v goes inside its file:
// /data/<step>/<meshes>/<record>[_lvl<L>]/<component>, the openPMD mesh
// layout (meshes is the series' meshesPath without slashes, "meshes" unless
// the input named another), so openPMD-aware tools find the variable (see
// levelParts). A rank-0 array (a global value such as a step's "time") is
// not a mesh: it goes to /data/<step>/relayout_values/<v>, where no openPMD
// reader looks for records.
func datasetPath(meshes string, step int64, level int, v string, rank int) string {
	if rank == 0 {
		return fmt.Sprintf("%s/%s/%s", stepGroup(step), valuesGroup, strings.Join(levelParts(level, v), "/"))
	}
	return fmt.Sprintf("%s/%s/%s", stepGroup(step), meshes, strings.Join(levelParts(level, v), "/"))
}

// recordPath is the record group of array (step, level) of v, or "" when v
// is a scalar record (one dataset, no group) or a rank-0 value.
func recordPath(meshes string, step int64, level int, v string, rank int) string {
	parts := levelParts(level, v)
	if len(parts) < 2 || rank == 0 {
		return ""
	}
	return fmt.Sprintf("%s/%s/%s", stepGroup(step), meshes, strings.Join(parts[:len(parts)-1], "/"))
}

// valuesGroup holds an iteration's global values (rank-0 arrays), outside
// the meshes group so that no openPMD reader takes them for meshes (yt
// would take a 0-D mesh for the domain).
const valuesGroup = "relayout_values"

// boxesGroup holds an iteration's AMR box tables, outside the meshes group
// so that openPMD readers do not take them for records.
const boxesGroup = "relayout_boxes"

// boxesPath is where the box table of the level dataset of (step, level, v)
// goes: /data/<step>/relayout_boxes/<record>_lvl<L>/<component>.
func boxesPath(step int64, level int, v string) string {
	return fmt.Sprintf("%s/%s/%s", stepGroup(step), boxesGroup, strings.Join(levelParts(level, v), "/"))
}

// stepGroup is a step's group; it carries Array.StepAttrs (openPMD iteration
// attributes).
func stepGroup(step int64) string { return fmt.Sprintf("/data/%d", step) }
