package workqueuedone_test

import (
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// TestFixesNeverMakeCodeWorse applies every fix the analyzer suggests
// anywhere in testdata, to a copy of it, and analyzes the copy again:
// every package must still build, no fix may add a double: report, and
// every report that carried a fix must be gone.
func TestFixesNeverMakeCodeWorse(t *testing.T) {
	src := analysistest.TestData()
	before := analyze(t, src)
	fixed := 0
	edits := map[string][]analysis.TextEdit{} // by file
	var meant []string                        // the hand-outs a fix is meant to finish
	for _, d := range before.diags {
		for _, f := range d.SuggestedFixes {
			name := before.fset.Position(d.Pos).Filename
			for _, e := range f.TextEdits {
				// Two reports of one hand-out carry the same fix: a
				// driver applies an edit once (go vet -fix and gopls
				// merge identical edits).
				if !slices.ContainsFunc(edits[name], func(x analysis.TextEdit) bool {
					return x.Pos == e.Pos && x.End == e.End && string(x.NewText) == string(e.NewText)
				}) {
					edits[name] = append(edits[name], e)
				}
			}
			fixed++
			meant = append(meant, name[len(src):]+": "+handedOut(d.Message))
		}
	}
	if fixed == 0 {
		t.Fatal("no report in testdata suggests a fix: the test would prove nothing")
	}
	dst := filepath.Join(t.TempDir(), "testdata")
	copyDir(t, src, dst)
	for name, es := range edits {
		rel, _ := filepath.Rel(src, name)
		text, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		tf := before.fset.File(es[0].Pos)
		slices.SortFunc(es, func(a, b analysis.TextEdit) int { return int(b.Pos - a.Pos) })
		for _, e := range es {
			from, to := tf.Offset(e.Pos), tf.Offset(e.End)
			text = append(text[:from:from], append(append([]byte{}, e.NewText...), text[to:]...)...)
		}
		if err := os.WriteFile(filepath.Join(dst, rel), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	after := analyze(t, dst)
	doublesBefore := map[string]int{}
	for _, d := range before.diags {
		if strings.HasPrefix(d.Message, "double:") {
			doublesBefore[before.fset.Position(d.Pos).Filename[len(src):]]++
		}
	}
	doublesAfter := map[string]int{}
	for _, d := range after.diags {
		file := after.fset.Position(d.Pos).Filename[len(dst):]
		if strings.HasPrefix(d.Message, "double:") {
			doublesAfter[file]++
		}
		for _, m := range meant {
			if (strings.HasPrefix(d.Message, "stall:") || strings.HasPrefix(d.Message, "forget:")) && file+": "+handedOut(d.Message) == m {
				t.Errorf("%s: a fix was applied for %s, and it still leaks: %s", after.fset.Position(d.Pos), m, d.Message)
			}
		}
	}
	for file, n := range doublesAfter {
		if n > doublesBefore[file] {
			t.Errorf("%s: the fixes added %d double: reports", file, n-doublesBefore[file])
		}
	}
	t.Logf("%d suggested fixes applied; every package builds, no double: added, their reports gone", fixed)
}

// handedOut is the hand-out a stall: or forget: message is about, by the
// file it is in and the call and line it names ("q.Get() on line 8").
func handedOut(msg string) string {
	return handoutRE.FindString(msg)
}

var handoutRE = regexp.MustCompile(`\S+\(\) on line \d+ hand(s|ed) out \S+`)

type analysisResult struct {
	fset  *token.FileSet
	diags []analysis.Diagnostic
}

// analyze loads every package of the testdata module at dir (it must
// type-check) and runs the analyzer over them.
func analyze(t *testing.T, dir string) analysisResult {
	t.Helper()
	cfg := &packages.Config{
		Mode: packages.LoadAllSyntax,
		Dir:  dir,
		Env:  append(os.Environ(), "GOPROXY=off", "GOWORK=off", "GOFLAGS=-mod=mod"),
	}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
	})
	if len(errs) > 0 {
		t.Fatalf("the packages in %s do not build:\n%s", dir, strings.Join(errs, "\n"))
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{workqueuedone.Analyzer}, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := analysisResult{}
	for act := range graph.All() {
		if act.Analyzer != workqueuedone.Analyzer || !act.IsRoot {
			continue
		}
		if act.Err != nil {
			t.Fatal(act.Err)
		}
		res.fset = act.Package.Fset
		res.diags = append(res.diags, act.Diagnostics...)
	}
	return res
}

// copyDir copies the tree at from to to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
