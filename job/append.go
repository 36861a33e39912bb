package job

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"relayout/catalog"
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
//     new plan at the same path with the same shape, offset and type (an
//     array gone from the input, a step removed, a reshaped array are
//     refused, naming it); a plan that adds nothing is refused, naming the
//     input files that changed.
//  4. The rewrite, the verification and the digests as in any run; then
//     appendState.checkDigests, before anything is committed: the digest
//     of every dataset OUT held must equal the one its manifest records
//     (the input's values of what was converted did not change); a
//     difference is refused naming the array and the input files changed.
//  5. The manifest gets OUT's appends and this one's (Manifest.Appends:
//     the new or grown input files, the datasets added); commitStage
//     moves the stage to OUT, the journaled renames replacing the old
//     files by their extended copies, the manifest last.
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
		case nv.File != ov.File:
			return refuse(fmt.Sprintf("variable %s would be written to %s, is in %s", ov.Name, nv.File, ov.File))
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
		case !slices.Equal(nd.Shape, od.Shape) || !slices.Equal(nd.Offset, od.Offset):
			return refuse(fmt.Sprintf("%s is of shape %s at offset %v in the input, of shape %s at offset %v in %s (a record dimension that grew is not appended yet)",
				describe(k.v, od), Dims(nd.Shape), nd.Offset, Dims(od.Shape), od.Offset, oldVars[k.v].File))
		}
	}
	a.added = nil
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
	if len(a.added) == 0 {
		return Usagef("run --append: %s: the input has no array %s lacks, but its files changed since (%s): a change to what was converted is refused; nothing appended, %s unchanged (use --force without --append to rewrite it)",
			out, out, a.changed, out)
	}
	return nil
}

// checkDigests compares, before the commit, the digest of every dataset
// OUT holds, now rewritten from the input into the stage (m: the job's
// manifest with its digests), with the one OUT's manifest records; then
// records this append in m (OUT's appends and this one).
func (a *appendState) checkDigests(out string, m *catalog.Manifest) error {
	oldDs, oldVars := manifestDatasets(a.old)
	newDs, _ := manifestDatasets(m)
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
