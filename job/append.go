package job

import (
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"relayout/catalog"
	"relayout/internal/h5"
)

// relayout run IN -o OUT --append (Env.Append) extends a finished output
// with what its input gained since (new openPMD iterations, new BP steps:
// new arrays, each a new dataset) on the one path of Run:
//
//  1. settleAppend, under OUT's lock: OUT must hold a committed output of
//     the same options (its commit record's signature); an input whose
//     files are unchanged since is done (nothing new). The input files
//     changed since (new, grown, rewritten, gone) are named in every
//     refusal that follows.
//  2. The job is prepared as run prepares it, into OUT/.relayout/stage,
//     keeping OUT's commit record: until the new commit, OUT is the old
//     output, complete, verified and committed; a crash or a refusal leaves
//     it so (only the stage's files are lost).
//  3. appendState.checkPlan: every dataset of OUT's manifest must be in the
//     new plan at the same path with the same shape (or grown along its
//     first axis: a netCDF time series' record dimension over new history
//     files), offset and type (an array gone from the input, a step
//     removed, a reshaped array are refused, naming it); a plan that adds
//     nothing is refused, naming the input files that changed. OUT's files
//     the new manifest no longer names (a time series file named by its
//     record range) are to be removed by the commit.
//  4. The rewrite, the verification and the digests as in any run; then
//     appendState.checkDigests, before anything is committed: the digest
//     of every dataset OUT held (of a grown one: of its first rows, read
//     back from the stage) must equal the one its manifest records (the
//     input's values of what was converted did not change); a difference
//     is refused naming the array and the input files changed.
//  5. The manifest gets OUT's appends and this one's (Manifest.Appends:
//     the new or grown input files, the datasets added); commitStage
//     moves the stage to OUT, the journaled renames replacing the old
//     files by their extended copies, the manifest last, then removes the
//     old files no longer named (CommitRecord.Removes).
//
// Every array of the input is rewritten (the old ones into the stage's new
// files, beside the new arrays) and the old ones are checked against OUT's
// digests; the old output's files are not modified in place.

// appendState is what run --append extends: OUT's manifest and commit
// record, and how the input files changed since.
type appendState struct {
	old     *catalog.Manifest
	kind    catalog.Digest
	changed string   // the input files new, grown or modified since (inputsDiffer)
	inputs  []string // the names of those new or changed
	added   []catalog.ManifestAppendedKey
	// grown are OUT's datasets the input extended along their first axis
	// (a netCDF time series' record dimension over new history files):
	// the old array must be the new one's first rows (checkDigests).
	grown map[datasetKey]bool
	// removes are OUT's files the new manifest no longer names (a time
	// series file named by its record range), removed by the commit after
	// the manifest (CommitRecord.Removes).
	removes []string
}

// settleAppend is run --append's settleOut: it finishes an interrupted
// commit, then returns OUT's finished output to extend, done when the input
// files have not changed since, or a refusal naming why OUT cannot be
// extended by this input.
func settleAppend(inAbs, out, sig string, logw io.Writer) (*appendState, bool, error) {
	work := workDir(out)
	rolled, err := rollForward(work, out)
	if err != nil {
		return nil, false, err
	}
	if rolled {
		fmt.Fprintf(logw, "%s: finished the commit a killed relayout had begun\n", out)
	}
	if !committed(work, out) {
		return nil, false, Usagef("run --append: %s holds no finished output to append to (run without --append first)", out)
	}
	rec, _, err := readCommitRecord(work)
	if err != nil {
		return nil, false, Usagef("run --append: %s holds a finished output without a readable commit record (%v)", out, err)
	}
	if d := signatureDiff(rec.Signature, sig); d != "" {
		return nil, false, Usagef("run --append: %s was made with other options or input (%s): append with the options it was made with", out, d)
	}
	old, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		return nil, false, err
	}
	kind, err := old.DigestKind()
	if err != nil {
		return nil, false, err
	}
	if kind == catalog.NoDigest {
		return nil, false, Usagef("run --append: %s was made with --digest none: its manifest records no digest to check what was converted against; rewrite it with --force", out)
	}
	now, err := inputFiles(inAbs)
	if err != nil {
		return nil, false, err
	}
	st := &appendState{old: old, kind: kind, changed: inputsDiffer(rec.Inputs, now)}
	if st.changed == "" {
		fmt.Fprintf(logw, "%s: done (the input files have not changed since it was made; nothing to append)\n", out)
		return nil, true, nil
	}
	// The files new or changed since; whether what they held is still
	// there, alike, is for the catalog (checkPlan) and the digests
	// (checkDigests) to say: a writer appending steps rewrites files that
	// hold no array (ADIOS2's profiling.json, shorter or gone), and a
	// file gone or cut is refused there when it held an array of OUT.
	was := map[string]InputFile{}
	for _, f := range rec.Inputs {
		was[f.Name] = f
	}
	for _, f := range now {
		if o, ok := was[f.Name]; !ok || f.Size != o.Size || f.MTimeNs != o.MTimeNs {
			st.inputs = append(st.inputs, f.Name)
		}
	}
	return st, false, nil
}

// datasetKey names a dataset of a manifest: its variable and its path in
// the variable's file (constants under their own prefix).
type datasetKey struct{ v, path string }

func manifestDatasets(m *catalog.Manifest) (map[datasetKey]*catalog.ManifestDataset, map[string]*catalog.ManifestVariable) {
	ds := map[datasetKey]*catalog.ManifestDataset{}
	vars := map[string]*catalog.ManifestVariable{}
	for vi := range m.Variables {
		v := &m.Variables[vi]
		vars[v.Name] = v
		for di := range v.Datasets {
			ds[datasetKey{v.Name, v.Datasets[di].Path}] = &v.Datasets[di]
		}
		for di := range v.Constants {
			ds[datasetKey{v.Name, "constant:" + v.Constants[di].Path}] = &v.Constants[di]
		}
	}
	return ds, vars
}

// describe names dataset d of variable v for a message.
func describe(v string, d *catalog.ManifestDataset) string {
	s := fmt.Sprintf("%s step %d", v, d.Step)
	if d.Level != 0 {
		s += fmt.Sprintf(" level %d", d.Level)
	}
	if d.Var != "" && d.Var != v {
		s += fmt.Sprintf(" (its copy of %s)", d.Var)
	}
	return s + fmt.Sprintf(" (%s)", d.Path)
}

// checkPlan compares the prepared job's manifest m with OUT's: every
// dataset OUT holds must be planned again, alike; the ones it lacks are
// what this append adds. A difference, or nothing to add, is refused.
func (a *appendState) checkPlan(out string, m *catalog.Manifest) error {
	oldDs, oldVars := manifestDatasets(a.old)
	newDs, newVars := manifestDatasets(m)
	refuse := func(what string) error {
		return Usagef("run --append: %s: %s; the input changed since %s was made (%s): a change to what was converted is refused; nothing appended, %s unchanged (use --force without --append to rewrite it)",
			out, what, out, a.changed, out)
	}
	for _, ov := range a.old.Variables {
		nv, ok := newVars[ov.Name]
		switch {
		case !ok:
			return refuse(fmt.Sprintf("variable %s is in %s but no longer in the input", ov.Name, ov.File))
		case nv.DType != ov.DType:
			return refuse(fmt.Sprintf("variable %s is %s in the input, %s in %s", ov.Name, nv.DType, ov.DType, ov.File))
		}
	}
	keys := make([]datasetKey, 0, len(oldDs))
	for k := range oldDs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y datasetKey) int { return strings.Compare(x.v+"\x00"+x.path, y.v+"\x00"+y.path) })
	for _, k := range keys {
		od := oldDs[k]
		nd, ok := newDs[k]
		switch {
		case !ok:
			return refuse(fmt.Sprintf("%s is in %s but no longer in the input (a step removed?)", describe(k.v, od), oldVars[k.v].File))
		case nd.Step != od.Step || nd.Level != od.Level || nd.Var != od.Var:
			return refuse(fmt.Sprintf("%s would now hold %s", describe(k.v, od), describe(k.v, nd)))
		case !slices.Equal(nd.Offset, od.Offset) || !(slices.Equal(nd.Shape, od.Shape) || grownRows(od, nd)):
			return refuse(fmt.Sprintf("%s is of shape %s at offset %v in the input, of shape %s at offset %v in %s",
				describe(k.v, od), Dims(nd.Shape), nd.Offset, Dims(od.Shape), od.Offset, oldVars[k.v].File))
		}
	}
	a.added, a.grown = nil, map[datasetKey]bool{}
	for _, k := range keys {
		od, nd := oldDs[k], newDs[k]
		if !slices.Equal(nd.Shape, od.Shape) {
			a.grown[k] = true
			a.added = append(a.added, catalog.ManifestAppendedKey{Var: k.v, Step: nd.Step, Level: nd.Level, Path: nd.Path,
				ExtendedFrom: slices.Clone(od.Shape)})
		}
	}
	for _, v := range m.Variables {
		for _, d := range v.Datasets {
			if _, ok := oldDs[datasetKey{v.Name, d.Path}]; !ok {
				a.added = append(a.added, catalog.ManifestAppendedKey{Var: v.Name, Step: d.Step, Level: d.Level, Path: d.Path})
			}
		}
		for _, d := range v.Constants {
			if _, ok := oldDs[datasetKey{v.Name, "constant:" + d.Path}]; !ok {
				a.added = append(a.added, catalog.ManifestAppendedKey{Var: v.Name, Step: d.Step, Level: d.Level, Path: d.Path})
			}
		}
	}
	a.removes = nil
	now := map[string]bool{}
	for _, n := range manifestFiles(m) {
		now[n] = true
	}
	for _, n := range manifestFiles(a.old) {
		if !now[n] && validFileName(n) {
			a.removes = append(a.removes, n)
		}
	}
	if len(a.added) == 0 {
		return Usagef("run --append: %s: the input has no array %s lacks, but its files changed since (%s): a change to what was converted is refused; nothing appended, %s unchanged (use --force without --append to rewrite it)",
			out, out, a.changed, out)
	}
	return nil
}

// grownRows reports whether dataset n is dataset o extended along its
// first axis (the rest of its shape alike), a digest of its logical bytes
// (not of stored chunks) to check o's against n's first rows.
func grownRows(o, n *catalog.ManifestDataset) bool {
	return len(o.Shape) > 0 && len(n.Shape) == len(o.Shape) && n.Shape[0] > o.Shape[0] &&
		slices.Equal(n.Shape[1:], o.Shape[1:]) && o.DigestOf == "" && n.DigestOf == ""
}

// manifestFiles are the files directly in OUT a manifest names, its own
// aside.
func manifestFiles(m *catalog.Manifest) []string {
	var names []string
	for _, v := range m.Variables {
		names = append(names, v.File)
	}
	if m.Series != "" {
		names = append(names, m.Series)
	}
	for _, v := range m.Views {
		names = append(names, v.File)
	}
	return names
}

// prefixDigest is the digest of kind of the first rows[0] rows of the
// dataset path in the HDF5 (netCDF-4) file: the digest its array had
// before it grew, read back from the stage in bands of about 16 MiB.
func prefixDigest(kind catalog.Digest, file, path string, rows []int64) (string, error) {
	f, err := h5.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	info, err := f.Dataset(path)
	if err != nil {
		return "", err
	}
	if !info.Numeric {
		return "", fmt.Errorf("job: %s: %s: %s elements: %w", file, path, info.TypeDesc, catalog.ErrUnsupported)
	}
	if len(info.Shape) != len(rows) || info.Shape[0] < rows[0] {
		return "", fmt.Errorf("job: %s: %s: of shape %s, not %s extended", file, path, Dims(info.Shape), Dims(rows))
	}
	dt := info.DType.LittleEndian()
	rowBytes := int64(dt.Size)
	for _, n := range rows[1:] {
		rowBytes *= n
	}
	band := max(1, (16<<20)/max(rowBytes, 1))
	r, err := f.OpenSlabReader(path, dt, 0)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := kind.New()
	lower := make([]int64, len(rows))
	count := slices.Clone(rows)
	for lo := int64(0); lo < rows[0]; lo += band {
		lower[0], count[0] = lo, min(band, rows[0]-lo)
		buf := make([]byte, count[0]*rowBytes)
		if err := r.Read(lower, count, buf); err != nil {
			return "", err
		}
		h.Write(buf)
	}
	return hex.EncodeToString(h.Sum(nil)), nil // as catalog.Digest.Hex
}

// checkDigests compares, before the commit, the digest of every dataset
// OUT holds, now rewritten from the input into the stage (m: the job's
// manifest with its digests), with the one OUT's manifest records; then
// records this append in m (OUT's appends and this one).
func (a *appendState) checkDigests(out, stage string, m *catalog.Manifest) error {
	oldDs, oldVars := manifestDatasets(a.old)
	newDs, newVars := manifestDatasets(m)
	keys := make([]datasetKey, 0, len(oldDs))
	for k := range oldDs {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(x, y datasetKey) int { return strings.Compare(x.v+"\x00"+x.path, y.v+"\x00"+y.path) })
	for _, k := range keys {
		od, nd := oldDs[k], newDs[k]
		if nd == nil {
			return fmt.Errorf("run --append: %s: %s is not in the job's manifest: %w", out, describe(k.v, od), catalog.ErrNotFound)
		}
		was, now := od.Sum(a.kind), nd.Sum(a.kind)
		if was == "" {
			continue // none recorded (an older manifest's constant)
		}
		if a.grown[k] {
			// The array grew along its first axis: its first rows, read
			// back from the stage (which the verifier found equal to
			// the input), are what OUT holds.
			var err error
			if now, err = prefixDigest(a.kind, filepath.Join(stage, newVars[k.v].File), nd.Path, od.Shape); err != nil {
				return fmt.Errorf("run --append: %s: %s: %w", out, describe(k.v, od), err)
			}
		}
		if now == "" {
			return fmt.Errorf("run --append: %s: no %v digest taken of %s to compare with %s's: %w", out, a.kind, describe(k.v, od), oldVars[k.v].File, catalog.ErrNotFound)
		}
		if now != was || nd.DigestOf != od.DigestOf {
			return Usagef("run --append: %s: %s has other values in the input than in %s (%v %s, was %s): the input changed since %s was made (%s): a change to what was converted is refused; nothing appended, %s unchanged (use --force without --append to rewrite it)",
				out, describe(k.v, od), oldVars[k.v].File, a.kind, short(now), short(was), out, a.changed, out)
		}
	}
	m.Appends = append(slices.Clone(a.old.Appends), catalog.ManifestAppend{
		Finished: utcSecond(time.Now()), Inputs: a.inputs, Datasets: a.added})
	return nil
}

func short(sum string) string {
	if len(sum) > 16 {
		return sum[:16] + "…"
	}
	return sum
}
