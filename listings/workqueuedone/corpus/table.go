package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// A report as printed: the module-relative file and line, and the message.
type report struct {
	file    string // module-relative, with slashes
	path    string // the file as loaded, to match a mutant's file
	line    int
	message string
}

type result struct {
	handouts []workqueuedone.Handout
	reports  []report
	fset     *token.FileSet
}

// analyze runs the analyzer over pkgs and returns its results per package.
func analyze(pkgs []*packages.Package, dir string) (map[*packages.Package]*result, error) {
	graph, err := checker.Analyze([]*analysis.Analyzer{workqueuedone.Analyzer}, pkgs, nil)
	if err != nil {
		return nil, err
	}
	out := map[*packages.Package]*result{}
	for act := range graph.All() {
		if act.Analyzer != workqueuedone.Analyzer || !isRoot(act, pkgs) {
			continue
		}
		if act.Err != nil {
			return nil, fmt.Errorf("%s: %v", act.Package.PkgPath, act.Err)
		}
		r := &result{fset: act.Package.Fset}
		r.handouts, _ = act.Result.([]workqueuedone.Handout)
		for _, d := range act.Diagnostics {
			pos := act.Package.Fset.Position(d.Pos)
			rel, _ := filepath.Rel(dir, pos.Filename)
			r.reports = append(r.reports, report{filepath.ToSlash(rel), pos.Filename, pos.Line, d.Message})
		}
		out[act.Package] = r
	}
	return out, nil
}

func isRoot(act *checker.Action, pkgs []*packages.Package) bool {
	for _, p := range pkgs {
		if act.Package == p {
			return true
		}
	}
	return false
}

// A tableRow is one module's line of the table.
type tableRow struct {
	path, version string
	packages      int
	functions     int // declared functions and methods that hand out an item
	literals      int // function literals that do
	reported      int // of those functions and literals, how many got a report
	gaveUp        int // hand-outs whose paths were too many to follow
}

// tableOutput is the table and every report, gathered module by module.
type tableOutput struct {
	rows  []tableRow
	lines []string // each report, led by its module's line
}

func (t *tableOutput) add(m *module, results map[*packages.Package]*result) {
	row := tableRow{path: m.path, version: m.version, packages: len(m.loaded)}
	for _, p := range m.loaded {
		r := results[p]
		// Each function and each function literal counted once, by where
		// it starts: two literals in one file are two.
		reportsOf := map[token.Pos]int{}
		literal := map[token.Pos]bool{}
		for _, h := range r.handouts {
			if h.GaveUp {
				row.gaveUp++
			}
			fn, _ := enclosingFunc(fileOf(p, h.Get), h.Get)
			at := h.Get // a hand-out outside any function counts as one
			if fn != nil {
				at = fn.Pos()
				_, literal[at] = fn.(*ast.FuncLit)
			}
			reportsOf[at] += h.Reports
		}
		for at, n := range reportsOf {
			if literal[at] {
				row.literals++
			} else {
				row.functions++
			}
			if n > 0 {
				row.reported++
			}
		}
		for _, rep := range r.reports {
			t.lines = append(t.lines, fmt.Sprintf("%s@%s\n  %s:%d\n%s", m.path, m.version, rep.file, rep.line, wrap(rep.message, "    ")))
		}
	}
	t.rows = append(t.rows, row)
}

func (t *tableOutput) print() {
	// The module column is as wide as the longest path: the book's corpus
	// fits the page's 76 columns exactly.
	pathWidth, versionWidth := len("module"), len("version")+1
	for _, r := range t.rows {
		pathWidth = max(pathWidth, len(r.path))
		versionWidth = max(versionWidth, len(r.version))
	}
	format := fmt.Sprintf("%%-%ds %%-%ds %%8v %%9v %%8v %%8v\n", pathWidth, versionWidth)
	fmt.Printf(format, "module", "version", "packages", "functions", "literals", "reported")
	for _, r := range t.rows {
		fmt.Printf(format, r.path, r.version, r.packages, r.functions, r.literals, r.reported)
	}
	gaveUp := 0
	for _, r := range t.rows {
		gaveUp += r.gaveUp
	}
	fmt.Printf("\n%d hand-outs had more paths than the analyzer follows (it gives up on\nthose without a report).\n", gaveUp)
	sort.Strings(t.lines)
	fmt.Printf("\n%d reports, by module, file and line:\n", len(t.lines))
	module := ""
	for _, l := range t.lines {
		// Each line starts with its module, printed once above its reports.
		mod, report, _ := strings.Cut(l, "\n")
		if mod != module {
			fmt.Printf("\n%s\n", mod)
			module = mod
		}
		fmt.Println(report)
	}
}

// fileOf is the file of p that holds pos, or nil.
func fileOf(p *packages.Package, pos token.Pos) *ast.File {
	for _, f := range p.Syntax {
		if f.FileStart <= pos && pos <= f.FileEnd {
			return f
		}
	}
	return nil
}

// enclosingFunc is the innermost function declaration or literal of file
// around pos, and its body; nil when pos is in none.
func enclosingFunc(file *ast.File, pos token.Pos) (ast.Node, *ast.BlockStmt) {
	var fn ast.Node
	var body *ast.BlockStmt
	if file == nil {
		return nil, nil
	}
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil || n.Pos() > pos || n.End() <= pos {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncDecl:
			fn, body = n, n.Body
		case *ast.FuncLit:
			fn, body = n, n.Body
		}
		return true
	})
	return fn, body
}

// width is the widest line the listings print, so that they fit the
// book's column and its printed page.
const width = 76

// wrap breaks text into lines of at most width columns at spaces, each
// starting with indent.
func wrap(text, indent string) string {
	var out []string
	line := indent
	for _, word := range strings.Fields(text) {
		if line != indent && len(line)+1+len(word) > width {
			out = append(out, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += word
	}
	return strings.Join(append(out, line), "\n")
}
