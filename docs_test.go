package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// docFiles are the documents whose commands, make targets and links
// TestDocs checks: README.md, every docs/*.md and bench/RESULTS.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no docs/*.md")
	}
	return append(append([]string{"README.md"}, files...), "bench/RESULTS.md")
}

// docCommand is one relayout command a document states.
type docCommand struct {
	file string
	line int
	text string
}

var (
	fence     = regexp.MustCompile("^\\s*(```|~~~)")
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	mdLink    = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	makeCall  = regexp.MustCompile(`(?:^|[\s;&|(])make\s+(?:[A-Z_][A-Z0-9_]*=\S*\s+)*([a-z][a-z0-9-]*)`)
	makeRule  = regexp.MustCompile(`(?m)^([a-z][a-z0-9 -]*):([^=]|$)`)
	shellCtrl = regexp.MustCompile(`&&|\|\||[;|]`)
)

// docLine is a line or an inline code span of a document, with the number
// of the line it starts on.
type docLine struct {
	line int
	text string
}

// splitDoc returns the lines inside fenced code blocks, the inline code
// spans of the rest (a span may wrap onto the next line of its paragraph),
// and the rest with its code spans blanked out, line numbers kept.
func splitDoc(text string) (fenced, spans []docLine, prose string) {
	lines := strings.Split(text, "\n")
	in := false
	for i, line := range lines {
		if fence.MatchString(line) {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			fenced = append(fenced, docLine{i + 1, line})
			lines[i] = ""
		}
	}
	rest := strings.Join(lines, "\n")
	var b strings.Builder
	last := 0
	for _, m := range codeSpan.FindAllStringSubmatchIndex(rest, -1) {
		span := rest[m[2]:m[3]]
		if strings.Contains(span, "\n\n") { // not a span: an unpaired backtick
			continue
		}
		n := 1 + strings.Count(rest[:m[0]], "\n")
		spans = append(spans, docLine{n, strings.ReplaceAll(span, "\n", " ")})
		b.WriteString(rest[last:m[0]])
		b.WriteString(strings.Repeat("\n", strings.Count(span, "\n")))
		last = m[1]
	}
	b.WriteString(rest[last:])
	return fenced, spans, b.String()
}

// commandsIn returns the relayout commands of file: every line of a fenced
// code block that starts (after an optional "$ ") with "relayout " or
// "bin/relayout ", and every such command after &&, ;, | or $( on a line
// (a shell comment, "  # ...", is not part of the command); and every
// inline code span of the prose that starts so (`relayout verify --exact`).
func commandsIn(file, text string) []docCommand {
	var out []docCommand
	fenced, spans, _ := splitDoc(text)
	for _, s := range spans {
		if c := strings.TrimPrefix(s.text, "bin/"); strings.HasPrefix(c, "relayout ") {
			out = append(out, docCommand{file, s.line, c})
		}
	}
	for _, l := range fenced {
		line := l.text
		if j := strings.Index(line, " #"); j >= 0 {
			line = line[:j]
		}
		for _, seg := range shellCtrl.Split(line, -1) {
			seg = strings.TrimSpace(seg)
			seg = strings.TrimPrefix(seg, "$ ")
			if k := strings.LastIndex(seg, "$("); k >= 0 {
				seg = seg[k+2:]
			}
			seg = strings.TrimPrefix(seg, "bin/")
			if strings.HasPrefix(seg, "relayout ") {
				out = append(out, docCommand{file, l.line, seg})
			}
		}
	}
	return out
}

// checkCommand reports what in c's command line the CLI does not define:
// an unknown verb, or a flag (long or short) the verb's flag set lacks.
func checkCommand(c docCommand, sets map[string]*pflag.FlagSet) []string {
	words := strings.Fields(c.text)
	if len(words) < 2 {
		return []string{"no verb"}
	}
	v := words[1]
	if v == "version" || v == "help" || v == "--help" || v == "--version" {
		return nil
	}
	fs, ok := sets[v]
	if !ok {
		var found bool
		if fs, found = flagSetOf(v); !found {
			return []string{"unknown verb " + v}
		}
		sets[v] = fs
	}
	var bad []string
	for _, w := range words[2:] {
		// Placeholders of synopses: [--layout ...], [--a | --b].
		w = strings.Trim(w, "[]()|\"'")
		if w == "" || w == "-" || w == "--" || !strings.HasPrefix(w, "-") || strings.Trim(w, "-.0123456789") == "" {
			continue
		}
		if strings.HasPrefix(w, "--") {
			name, _, _ := strings.Cut(w[2:], "=")
			if name != "help" && fs.Lookup(name) == nil {
				bad = append(bad, "--"+name)
			}
			continue
		}
		for _, r := range w[1:] {
			if r == '=' {
				break
			}
			if r != 'h' && fs.ShorthandLookup(string(r)) == nil {
				bad = append(bad, "-"+string(r))
			}
		}
	}
	return bad
}

// TestDocs checks that the documentation states only what exists: every
// relayout command in a fenced code block or an inline code span uses a verb the CLI has and only
// flags that verb defines (its real flag set, flagSetOf), every `make
// TARGET` names a Makefile target, and every relative link points at a file.
func TestDocs(t *testing.T) {
	mk, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	targets := map[string]bool{}
	for _, m := range makeRule.FindAllStringSubmatch(string(mk), -1) {
		for _, name := range strings.Fields(m[1]) {
			targets[name] = true
		}
	}
	if !targets["demo"] || !targets["test"] {
		t.Fatalf("Makefile targets not found (%v)", targets)
	}
	sets := map[string]*pflag.FlagSet{}
	var ncmd int
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		for _, c := range commandsIn(file, text) {
			ncmd++
			if bad := checkCommand(c, sets); len(bad) > 0 {
				t.Errorf("%s:%d: %q: %s not defined for relayout %s", c.file, c.line, c.text,
					strings.Join(bad, ", "), strings.Fields(c.text)[1])
			}
		}
		fenced, spans, prose := splitDoc(text)
		for _, c := range append(fenced, spans...) {
			for _, m := range makeCall.FindAllStringSubmatch(c.text, -1) {
				if !targets[m[1]] {
					t.Errorf("%s:%d: make %s: no such Makefile target", file, c.line, m[1])
				}
			}
		}
		for _, m := range mdLink.FindAllStringSubmatchIndex(prose, -1) {
			link := prose[m[2]:m[3]]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") || strings.HasPrefix(link, "#") {
				continue
			}
			target, _, _ := strings.Cut(link, "#")
			if _, err := os.Stat(filepath.Join(filepath.Dir(file), target)); err != nil {
				t.Errorf("%s:%d: link %s: %v", file, 1+strings.Count(prose[:m[0]], "\n"), link, err)
			}
		}
	}
	t.Logf("%d relayout commands checked", ncmd)
	if ncmd < 20 {
		t.Errorf("only %d relayout commands found in the documentation", ncmd)
	}
}

// TestDocsCatchesUnknownFlag: the check fails on a flag no verb defines.
func TestDocsCatchesUnknownFlag(t *testing.T) {
	sets := map[string]*pflag.FlagSet{}
	for _, c := range []struct {
		text string
		ok   bool
	}{
		{"relayout run diags/ -o out --layout chunked --chunks 2x2x2", true},
		{"relayout plan IN -o OUT --shards N [--layout ...] [--compress deflate:4]", true},
		{"relayout run diags/ -o out --chunk-shap 4", false},
		{"relayout verify a b --shards 2", false},
		{"relayout run diags/ -x", false},
		{"relayout paln diags/", false},
	} {
		bad := checkCommand(docCommand{"x", 1, c.text}, sets)
		if (len(bad) == 0) != c.ok {
			t.Errorf("%q: %v", c.text, bad)
		}
	}
	got := commandsIn("x", "text\n```sh\n$ relayout catalog d   # a comment --nope\nx=$(relayout plan d --json) && bin/relayout verify a b\n```\nrelayout run not-code, `relayout verify --exact` in prose\n")
	if len(got) != 4 || got[0].text != "relayout verify --exact" || got[1].text != "relayout catalog d" || got[2].text != "relayout plan d --json)" || got[3].text != "relayout verify a b" {
		t.Errorf("commandsIn: %+v", got)
	}
}
