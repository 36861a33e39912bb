package job

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"relayout/catalog"
)

// writeSummary prints the few lines that end a committed job, under its
// headline ("done: ..." or "committed: ..."), indented so that no line
// reads as a note or a warning:
//
//	written:   12.0MiB of arrays in 7 files (12.0MiB on disk), 92.3MiB/s
//	verified:  element by element: every element equals the input; sha256 of every array in the manifest
//	skipped:   2 objects, listed under "skipped" in the manifest
//	views:     7 ParaView views (paraview OUT/view_550.hdf); 3 variables or species have none, why under "views_skipped" in the manifest
//	manifest:  OUT/relayout.json
//
// m is the committed manifest (its report says how the job verified);
// the rate is left out when elapsed is 0. The figures the lines leave out
// (I/O profile, per-variable figures) are the manifest's and -v's.
func writeSummary(w io.Writer, out string, m *catalog.Manifest, elapsed time.Duration) {
	var logical int64
	verified := ""
	if r := m.Report; r != nil {
		for _, v := range r.Variables {
			logical += v.LogicalBytes
		}
		verified = r.Verified
	}
	files := map[string]bool{}
	for _, f := range manifestFiles(m) {
		files[f] = true
	}
	var disk int64
	for f := range files {
		if fi, err := os.Stat(filepath.Join(out, f)); err == nil {
			disk += fi.Size()
		}
	}
	// The rate is of the bytes written: a sparse array's logical size (2^40
	// elements, a few chunks stored) would give petabytes a second.
	written := logical
	if m.IO != nil && m.IO.WriteBytes > 0 {
		written = min(written, m.IO.WriteBytes)
	}
	rate := ""
	if elapsed > 0 {
		rate = fmt.Sprintf(", %s/s", HumanBytes(int64(float64(written)/max(elapsed.Seconds(), 1e-9))))
	}
	fmt.Fprintf(w, "  written:   %s of arrays in %d files (%s on disk)%s\n", HumanBytes(logical), len(files), HumanBytes(disk), rate)
	switch {
	case m.Verified != nil && *m.Verified:
		verified = "element by element: " + verified
	case verified != "" && verified != "not verified (--no-verify)":
		verified = "by digests: " + verified
	}
	if kind, err := m.DigestKind(); err == nil && kind != catalog.NoDigest {
		verified += fmt.Sprintf("; %v of every array in the manifest", kind)
	} else if err == nil {
		verified += "; no digest (--digest none) in the manifest"
	}
	fmt.Fprintf(w, "  verified:  %s\n", verified)
	if n := len(m.Skipped); n > 0 {
		fmt.Fprintf(w, "  skipped:   %d objects, listed with the reason under \"skipped\" in the manifest\n", n)
	}
	if line := viewsLine(out, m); line != "" {
		fmt.Fprintf(w, "  views:     %s\n", line)
	}
	fmt.Fprintf(w, "  manifest:  %s\n", filepath.Join(out, catalog.ManifestName))
}

// viewsLine says which variables got no ParaView view (the manifest's
// views_skipped says why), naming the views made; "" when every mesh has
// its view, with --no-views (asked for), and for manifests of older
// versions: the summary stays short when nothing needs saying.
func viewsLine(out string, m *catalog.Manifest) string {
	n, skipped := len(m.Views), len(m.ViewsSkipped)
	switch {
	case skipped == 0 || m.Options != nil && m.Options.NoViews:
		return ""
	case n == 0 && skipped == 1:
		return "none: " + strings.TrimPrefix(m.ViewsSkipped[0], "no ParaView views: ")
	case n == 0:
		return fmt.Sprintf("none; why for each of %d variables or species under \"views_skipped\" in the manifest", skipped)
	}
	return fmt.Sprintf("%d ParaView views (paraview %s); %d variables or species have none, why under \"views_skipped\" in the manifest",
		n, filepath.Join(out, m.Views[0].File), skipped)
}
