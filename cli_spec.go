package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/job"
	"relayout/reader"
)

// layoutFlags are the flags of run and plan that decide what is written:
// both turn them into a job.Spec here, the one place a spec is built from
// flags, so that plan previews what run writes.
type layoutFlags struct {
	layout, chunkShape, chunks, compress, costModel, scope string
	readers, rpn                                           int
	vars                                                   []string
	netcdf, strict                                         bool
	fill                                                   bool   // --fill
	noViews                                                bool   // --no-views
	digest                                                 string // --digest sha256|blake3|xxh64|none
}

// spec parses the flags into a job spec of input in (not yet validated:
// the caller adds what is its own, then calls Validate). onlyAuto: the
// verb takes --readers, --cost-model, --scope and --ranks-per-node only
// for the layouts they decide (run); plan uses them for its cost figures
// with any layout.
func (lf *layoutFlags) spec(fs *pflag.FlagSet, verb, in string, onlyAuto bool) (job.Spec, error) {
	var s job.Spec
	var err error
	if s.Input, err = job.RealPath(in); err != nil {
		return s, usagef("%s: %s: %v", verb, in, err)
	}
	s.Path, s.Vars, s.Strict, s.NetCDF, s.Fill, s.NoViews = in, lf.vars, lf.strict, lf.netcdf, lf.fill, lf.noViews
	s.Layout, s.Readers, s.Scope, s.RanksPerNode = job.Layout(lf.layout), lf.readers, lf.scope, lf.rpn
	s.Given = job.Given{Layout: fs.Changed("layout")}
	if onlyAuto {
		s.Given.Readers, s.Given.CostModel = fs.Changed("readers"), lf.costModel != ""
		s.Given.Scope, s.Given.RanksPerNode = fs.Changed("scope"), fs.Changed("ranks-per-node")
	}
	if s.ChunkShape, err = parseDims(lf.chunkShape); err != nil {
		return s, err
	}
	if s.Chunks, err = parseDims(lf.chunks); err != nil {
		return s, err
	}
	if s.Deflate, err = parseCompress(lf.compress); err != nil {
		return s, err
	}
	if s.Cost, err = loadCostModel(lf.costModel); err != nil {
		return s, err
	}
	if lf.digest != "" {
		if s.Digest, err = catalog.ParseDigest(lf.digest); err != nil {
			return s, usagef("%s: --%v", verb, err)
		}
	}
	return s, nil
}

// parseStorage turns the striping and alignment flags into an override.
func parseStorage(count int, size string, noStripe bool, align string) (fsinfo.Override, error) {
	ov := fsinfo.Override{StripeCount: count, NoStripe: noStripe}
	var err error
	if size != "" {
		if ov.StripeSize, err = parseSize(size); err != nil {
			return ov, usagef("run: --stripe-size %q: not a size", size)
		}
	}
	if align != "" {
		a, th, _ := strings.Cut(align, ":")
		if ov.Align, err = parseSize(a); err != nil {
			return ov, usagef("run: --align %q: want SIZE[:THRESHOLD], e.g. 1MiB or 1MiB:64KiB", align)
		}
		if th != "" {
			if ov.AlignThreshold, err = parseSize(th); err != nil {
				return ov, usagef("run: --align %q: want SIZE[:THRESHOLD], e.g. 1MiB or 1MiB:64KiB", align)
			}
		}
	}
	if err := ov.Check(); err != nil {
		return ov, usagef("run: %v", err)
	}
	return ov, nil
}

// parseCompress parses --compress: "" (none), "deflate" or "deflate:N".
func parseCompress(s string) (int, error) {
	if s == "" || s == "none" {
		return 0, nil
	}
	name, level, found := strings.Cut(s, ":")
	if name != "deflate" && name != "gzip" {
		return 0, usagef("run: --compress %q: relayout writes deflate (gzip) with shuffle, e.g. --compress deflate:4", s)
	}
	if !found {
		return 4, nil
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 1 || n > 9 {
		return 0, usagef("run: --compress %q: level must be 1-9", s)
	}
	return n, nil
}

// cliError is err as the user should read it: a --var that selects nothing
// becomes a usage error with suggestions (noMatch).
func cliError(err error) error {
	var nm *reader.NoMatchError
	if errors.As(err, &nm) && !errors.Is(err, job.ErrUsage) {
		return noMatch(nm)
	}
	return err
}

// noMatch is the usage error of a --var that selects nothing: the names
// equal to it but for case, else the closest (parents like "B" of "B/x"
// count as names), then the names the input has.
func noMatch(e *reader.NoMatchError) error {
	seen := map[string]bool{}
	var cands []string
	for _, n := range e.Names {
		for p := n; p != ""; {
			if !seen[p] {
				seen[p] = true
				cands = append(cands, p)
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	names := strings.Join(e.Names, ", ")
	if len(e.Names) > 20 {
		names = strings.Join(e.Names[:20], ", ") + fmt.Sprintf(", ... (%d in all)", len(e.Names))
	}
	if len(e.Names) == 0 {
		names = "none"
	}
	s := suggest(e.Pattern, cands, 4)
	for i := range s {
		s[i] = "--var " + s[i]
	}
	return usagef("%s: --var %s matches no variable%s (variables: %s)", verb, e.Pattern, didYouMean(s), names)
}
