// Command corpus runs workqueuedone over real controllers that nobody
// here wrote, at pinned versions from the Go module proxy, and prints per
// module how many functions hand out a work-queue item, how many of them
// the analyzer reports, and every report with its file and line.
//
//	go run . -table       the corpus table and every report
//	go run . -mutants     break every function that releases its item and
//	                      count how many broken versions are caught
//	go run . -cost        time the analyzer beside go vet's own analyzers
//	go run . -imports     write imports.go (the packages, for go mod tidy)
//
// Only packages whose non-test files import client-go's workqueue or
// controller-runtime's priorityqueue are loaded: a hand-out needs one of
// those types. Test files are not read.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"forget-is-not-delete/workqueuedone/passes/workqueuedone"
)

// The corpus: each module at the version go.mod pins, and the part of it
// that is read (client-go's controllers are its examples).
var corpus = []struct{ path, under string }{
	{"k8s.io/kubernetes", ""},
	{"k8s.io/client-go", "examples"},
	{"k8s.io/sample-controller", ""},
	{"k8s.io/apiserver", ""},
	{"k8s.io/apiextensions-apiserver", ""},
	{"k8s.io/kube-aggregator", ""},
	{"sigs.k8s.io/controller-runtime", ""},
}

var queueImports = []string{
	`"k8s.io/client-go/util/workqueue"`,
	`"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"`,
}

type module struct {
	path, version, dir string
	packages           []string // import paths
	mains              map[string]bool
	mainImports        []string // what the main packages import, for go.mod
}

func main() {
	table := flag.Bool("table", false, "print the corpus table and every report")
	mutants := flag.Bool("mutants", false, "print the mutation score")
	cost := flag.Bool("cost", false, "time the analyzer beside go vet's analyzers")
	imports := flag.Bool("imports", false, "write imports.go")
	flag.Parse()
	if err := run(*table, *mutants, *cost, *imports); err != nil {
		fmt.Fprintln(os.Stderr, "corpus:", err)
		os.Exit(1)
	}
}

func run(table, mutants, cost, imports bool) error {
	mods, err := modules()
	if err != nil {
		return err
	}
	if imports {
		return writeImports(mods)
	}
	var all []string
	for _, m := range mods {
		all = append(all, m.packages...)
	}
	pkgs, err := load(all)
	if err != nil {
		return err
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	if table {
		if err := printTable(mods, byPath); err != nil {
			return err
		}
	}
	if mutants {
		if err := printMutants(mods, byPath); err != nil {
			return err
		}
	}
	if cost {
		if err := printCost(mods[0], byPath); err != nil {
			return err
		}
	}
	return nil
}

// modules finds each corpus module in the module cache and the packages
// of it that import a queue package.
func modules() ([]*module, error) {
	var out []*module
	for _, c := range corpus {
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Version}} {{.Dir}}", c.path)
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("go list -m %s (run go mod download first): %v", c.path, err)
		}
		version, dir, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if dir == "" {
			return nil, fmt.Errorf("%s %s is not in the module cache: run go mod download", c.path, version)
		}
		m := &module{path: c.path, version: version, dir: dir, mains: map[string]bool{}}
		root := filepath.Join(dir, c.under)
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				name := d.Name()
				if p != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return nil // not Go this toolchain reads; go list says more
			}
			if f.Name.Name == "main" {
				for _, imp := range f.Imports {
					path, _ := strconv.Unquote(imp.Path.Value)
					if strings.Contains(strings.Split(path, "/")[0], ".") {
						m.mainImports = append(m.mainImports, path)
					}
				}
			}
			for _, imp := range f.Imports {
				for _, q := range queueImports {
					if imp.Path.Value == q {
						rel, _ := filepath.Rel(dir, filepath.Dir(p))
						pkg := c.path
						if rel != "." {
							pkg += "/" + filepath.ToSlash(rel)
						}
						if len(m.packages) == 0 || m.packages[len(m.packages)-1] != pkg {
							m.packages = append(m.packages, pkg)
						}
						if f.Name.Name == "main" {
							m.mains[pkg] = true
						}
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		m.packages = dedupe(m.packages)
		m.mainImports = dedupe(m.mainImports)
		out = append(out, m)
	}
	return out, nil
}

func dedupe(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}

// writeImports writes the blank imports that make go mod tidy keep every
// module the corpus packages need (behind a build tag: nothing builds it).
func writeImports(mods []*module) error {
	var b strings.Builder
	b.WriteString("//go:build corpusimports\n\n// Code generated by go run . -imports; DO NOT EDIT.\n\n")
	b.WriteString("// The corpus packages, so that go mod tidy keeps what they need.\npackage main\n\nimport (\n")
	var paths []string
	for _, m := range mods {
		for _, p := range m.packages {
			if !m.mains[p] {
				paths = append(paths, p)
			}
		}
		// A main package cannot be imported: what it imports can.
		paths = append(paths, m.mainImports...)
	}
	for _, p := range dedupe(paths) {
		fmt.Fprintf(&b, "\t_ %q\n", p)
	}
	b.WriteString(")\n")
	return os.WriteFile("imports.go", []byte(b.String()), 0o644)
}

// load type-checks the corpus packages from source; what they import comes
// from export data, as go vet reads it.
func load(paths []string) ([]*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles |
			packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo |
			packages.NeedTypesSizes | packages.NeedImports | packages.NeedModule,
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			bad = append(bad, fmt.Sprintf("%s: %v", p.PkgPath, e))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("a corpus package does not type-check, so nothing was analyzed:\n%s", strings.Join(bad, "\n"))
	}
	// What they import is export data, not syntax: the analyzers cannot run
	// on it, so the checker must not try (no facts come from it).
	for _, p := range pkgs {
		p.Imports = map[string]*packages.Package{}
	}
	return pkgs, nil
}

// A report as printed: the module-relative file and line, and the message.
type report struct {
	file    string
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
			r.reports = append(r.reports, report{filepath.ToSlash(rel), pos.Line, d.Message})
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

func printTable(mods []*module, byPath map[string]*packages.Package) error {
	fmt.Printf("%-31s %-8s %8s %9s %8s\n", "module", "version", "packages", "functions", "reported")
	var lines []string
	for _, m := range mods {
		var pkgs []*packages.Package
		for _, p := range m.packages {
			if byPath[p] == nil {
				return fmt.Errorf("%s was not loaded", p)
			}
			pkgs = append(pkgs, byPath[p])
		}
		results, err := analyze(pkgs, m.dir)
		if err != nil {
			return err
		}
		funcs, reported := 0, 0
		for _, p := range pkgs {
			r := results[p]
			perFunc := map[string]int{}
			for _, h := range r.handouts {
				key := fmt.Sprintf("%s %s", r.fset.Position(h.Get).Filename, h.Func)
				if _, ok := perFunc[key]; !ok {
					perFunc[key] = 0
				}
				perFunc[key] += h.Reports
			}
			for _, n := range perFunc {
				funcs++
				if n > 0 {
					reported++
				}
			}
			for _, rep := range r.reports {
				lines = append(lines, fmt.Sprintf("%s@%s\n  %s:%d\n%s", m.path, m.version, rep.file, rep.line, wrap(rep.message, "    ")))
			}
		}
		fmt.Printf("%-31s %-8s %8d %9d %8d\n", m.path, m.version, len(pkgs), funcs, reported)
	}
	sort.Strings(lines)
	fmt.Printf("\n%d reports, by module, file and line:\n", len(lines))
	module := ""
	for _, l := range lines {
		// Each line starts with its module, printed once above its reports.
		mod, report, _ := strings.Cut(l, "\n")
		if mod != module {
			fmt.Printf("\n%s\n", mod)
			module = mod
		}
		fmt.Println(report)
	}
	return nil
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

// A mutant is one function broken one way.
type mutant struct {
	kind   string // remove, undefer, branch
	expect string // the report that must catch it: stall or panic
	file   string // the file's path
	src    []byte // the file, broken
	where  string // file:line of the release it breaks, module-relative
}

func printMutants(mods []*module, byPath map[string]*packages.Package) error {
	type score struct{ total, caught int }
	scores := map[string]*score{}
	var missed, unmutated []string
	for _, m := range mods {
		var pkgs []*packages.Package
		for _, p := range m.packages {
			pkgs = append(pkgs, byPath[p])
		}
		results, err := analyze(pkgs, m.dir)
		if err != nil {
			return err
		}
		for _, p := range pkgs {
			r := results[p]
			before := countKinds(r.reports)
			for _, h := range r.handouts {
				if h.Reports > 0 {
					continue // already reported: nothing to break
				}
				ms, err := mutate(p, h, m.dir)
				if err != nil {
					return err
				}
				if len(ms) == 0 {
					pos := p.Fset.Position(h.Get)
					rel, _ := filepath.Rel(m.dir, pos.Filename)
					unmutated = append(unmutated, fmt.Sprintf("%s@%s (%s)\n    %s:%d", m.path, m.version, h.Func, filepath.ToSlash(rel), pos.Line))
				}
				for _, mu := range ms {
					after, err := analyzeMutant(p, mu)
					if err != nil {
						return fmt.Errorf("%s mutant of %s: %v", mu.kind, mu.where, err)
					}
					k := mu.kind + " (" + mu.expect + ")"
					if scores[k] == nil {
						scores[k] = &score{}
					}
					scores[k].total++
					if after[mu.expect] > before[mu.expect] {
						scores[k].caught++
					} else {
						missed = append(missed, fmt.Sprintf("%s %s@%s\n    %s", k, m.path, m.version, mu.where))
					}
				}
			}
		}
	}
	kinds := make([]string, 0, len(scores))
	for k := range scores {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	fmt.Printf("%-18s %7s %7s\n", "mutant", "made", "caught")
	for _, k := range kinds {
		fmt.Printf("%-18s %7d %7d\n", k, scores[k].total, scores[k].caught)
	}
	sort.Strings(missed)
	fmt.Printf("\n%d missed:\n", len(missed))
	for _, l := range missed {
		fmt.Println("  " + l)
	}
	sort.Strings(unmutated)
	fmt.Printf("\n%d hand-outs with no Done of their own to break\n(they return the item, or a helper or another goroutine releases it):\n", len(unmutated))
	for _, l := range unmutated {
		fmt.Println("  " + l)
	}
	return nil
}

// countKinds counts reports by their first word: stall (with forget,
// which is a stall too) and panic.
func countKinds(reports []report) map[string]int {
	n := map[string]int{}
	for _, r := range reports {
		switch {
		case strings.HasPrefix(r.message, "stall:"), strings.HasPrefix(r.message, "forget:"):
			n["stall"]++
		case strings.HasPrefix(r.message, "panic:"):
			n["panic"]++
		}
	}
	return n
}

// mutate breaks the function that holds h in each way it can: every Done
// statement in it removed; a deferred Done made a call before the last
// statement; a Done moved into the next if's then-branch.
func mutate(p *packages.Package, h workqueuedone.Handout, dir string) ([]mutant, error) {
	fset := p.Fset
	tf := fset.File(h.Get)
	var file *ast.File
	for _, f := range p.Syntax {
		if fset.File(f.Pos()) == tf {
			file = f
		}
	}
	if file == nil {
		return nil, nil
	}
	src, err := os.ReadFile(tf.Name())
	if err != nil {
		return nil, err
	}
	off := func(pos token.Pos) int { return tf.Offset(pos) }
	// The innermost function around the Get.
	var fn ast.Node
	var body *ast.BlockStmt
	ast.Inspect(file, func(n ast.Node) bool {
		if n == nil || n.Pos() > h.Get || n.End() <= h.Get {
			return n == nil
		}
		switch n := n.(type) {
		case *ast.FuncDecl:
			fn, body = n, n.Body
		case *ast.FuncLit:
			fn, body = n, n.Body
		}
		return true
	})
	if fn == nil || body == nil {
		return nil, nil
	}
	rel, _ := filepath.Rel(dir, tf.Name())
	where := func(pos token.Pos) string {
		return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(pos).Line)
	}
	edit := func(cuts ...[3]any) []byte { // {from, to, text}
		out := append([]byte(nil), src...)
		sort.Slice(cuts, func(i, j int) bool { return cuts[i][0].(int) > cuts[j][0].(int) })
		for _, c := range cuts {
			from, to, text := c[0].(int), c[1].(int), c[2].(string)
			out = append(out[:from], append([]byte(text), out[to:]...)...)
		}
		return out
	}
	var out []mutant
	// Each statement that calls Done, and the block it is a statement of.
	ast.Inspect(body, func(n ast.Node) bool {
		block, ok := n.(*ast.BlockStmt)
		if !ok {
			return true
		}
		for i, s := range block.List {
			call, deferred := doneCall(p.TypesInfo, s)
			if call == nil {
				continue
			}
			text := string(src[off(s.Pos()):off(s.End())])
			out = append(out, mutant{kind: "remove", expect: "stall", file: tf.Name(),
				src: edit([3]any{off(s.Pos()), off(s.End()), ""}), where: where(s.Pos())})
			if deferred && block == body && len(body.List) > 0 {
				last := body.List[len(body.List)-1]
				callText := string(src[off(call.Pos()):off(call.End())])
				expect := "panic"
				if exitsEarly(body, s.End(), last, shutdownCheck(body, h.Get)) {
					expect = "stall"
				}
				at := off(last.Pos())
				if _, isReturn := last.(*ast.ReturnStmt); !isReturn {
					at = off(last.End())
					callText = "\n" + callText
				} else {
					callText += "\n"
				}
				if last != s {
					out = append(out, mutant{kind: "undefer", expect: expect, file: tf.Name(),
						src: edit([3]any{off(s.Pos()), off(s.End()), ""}, [3]any{at, at, callText}), where: where(s.Pos())})
				}
			}
			for _, next := range block.List[i+1:] {
				if ifs, ok := next.(*ast.IfStmt); ok {
					at := off(ifs.Body.Lbrace) + 1
					out = append(out, mutant{kind: "branch", expect: "stall", file: tf.Name(),
						src: edit([3]any{off(s.Pos()), off(s.End()), ""}, [3]any{at, at, "\n" + text}), where: where(s.Pos())})
					break
				}
			}
		}
		return true
	})
	return out, nil
}

// doneCall returns the Done call s makes, as a statement or deferred.
func doneCall(info *types.Info, s ast.Stmt) (*ast.CallExpr, bool) {
	var call *ast.CallExpr
	deferred := false
	switch s := s.(type) {
	case *ast.ExprStmt:
		call, _ = s.X.(*ast.CallExpr)
	case *ast.DeferStmt:
		call, deferred = s.Call, true
	}
	if call == nil {
		return nil, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Done" {
		return nil, false
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return nil, false
	}
	switch fn.Pkg().Path() {
	case "k8s.io/client-go/util/workqueue", "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue":
		return call, deferred
	}
	return nil, false
}

// shutdownCheck is the first if statement after the Get in body that tests
// the Get's last result, the queue's shutdown (nothing was handed out on
// its exits).
func shutdownCheck(body *ast.BlockStmt, get token.Pos) ast.Node {
	name := ""
	for _, s := range body.List {
		if assign, ok := s.(*ast.AssignStmt); ok && s.Pos() <= get && get < s.End() {
			if id, ok := assign.Lhs[len(assign.Lhs)-1].(*ast.Ident); ok {
				name = id.Name
			}
			continue
		}
		ifs, ok := s.(*ast.IfStmt)
		if name == "" || !ok || s.Pos() < get {
			continue
		}
		cond := ifs.Cond
		if u, ok := cond.(*ast.UnaryExpr); ok && u.Op == token.NOT {
			cond = u.X
		}
		if id, ok := cond.(*ast.Ident); ok && id.Name == name {
			return ifs
		}
		return nil
	}
	return nil
}

// exitsEarly reports whether body leaves (return, continue, break or
// goto, outside nested function literals and the shutdown check) between
// after and last.
func exitsEarly(body *ast.BlockStmt, after token.Pos, last ast.Stmt, check ast.Node) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if check != nil && n == check {
			return false
		}
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt, *ast.BranchStmt:
			if n.Pos() > after && n != ast.Node(last) {
				found = true
			}
		}
		return !found
	})
	return found
}

// analyzeMutant type-checks p with one file replaced by the mutant (the
// imports come from the original's export data, so nothing is reloaded)
// and counts the reports in that file by kind.
func analyzeMutant(p *packages.Package, mu mutant) (map[string]int, error) {
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range p.CompiledGoFiles {
		var src any
		if name == mu.file {
			src = mu.src
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	imports := map[string]*types.Package{}
	for _, imp := range p.Types.Imports() {
		imports[imp.Path()] = imp
	}
	info := &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
	var hard []string
	conf := types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if pkg, ok := imports[path]; ok {
				return pkg, nil
			}
			return nil, fmt.Errorf("%s is not imported by the original", path)
		}),
		Sizes: p.TypesSizes,
		Error: func(err error) {
			// A removed Done can leave a variable unused: a soft error,
			// and the types are still complete.
			if te, ok := err.(types.Error); !ok || !te.Soft {
				hard = append(hard, err.Error())
			}
		},
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	tpkg, _ := conf.Check(p.PkgPath, fset, files, info)
	if len(hard) > 0 {
		return nil, fmt.Errorf("the mutant does not type-check: %s", strings.Join(hard, "; "))
	}
	mp := &packages.Package{
		ID: p.ID, Name: p.Name, PkgPath: p.PkgPath, Fset: fset,
		GoFiles: p.GoFiles, CompiledGoFiles: p.CompiledGoFiles,
		Syntax: files, Types: tpkg, TypesInfo: info, TypesSizes: p.TypesSizes,
		Module: p.Module, Imports: map[string]*packages.Package{},
	}
	graph, err := checker.Analyze([]*analysis.Analyzer{workqueuedone.Analyzer}, []*packages.Package{mp}, nil)
	if err != nil {
		return nil, err
	}
	var reports []report
	for act := range graph.All() {
		if act.Analyzer != workqueuedone.Analyzer || act.Package != mp {
			continue
		}
		if act.Err != nil {
			return nil, act.Err
		}
		for _, d := range act.Diagnostics {
			if fset.Position(d.Pos).Filename == mu.file {
				reports = append(reports, report{message: d.Message})
			}
		}
	}
	// The original's reports in this file, counted the same way.
	return countKinds(reports), nil
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// printCost times the analyzer beside go vet's own analyzers over the
// first module's packages, already loaded, and prints the ratio.
func printCost(m *module, byPath map[string]*packages.Package) error {
	var pkgs []*packages.Package
	for _, p := range m.packages {
		pkgs = append(pkgs, byPath[p])
	}
	median := func(analyzers []*analysis.Analyzer) (time.Duration, error) {
		var runs []time.Duration
		for range 5 {
			start := time.Now()
			if _, err := checker.Analyze(analyzers, pkgs, nil); err != nil {
				return 0, err
			}
			runs = append(runs, time.Since(start))
		}
		sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
		return runs[len(runs)/2], nil
	}
	ours, err := median([]*analysis.Analyzer{workqueuedone.Analyzer})
	if err != nil {
		return err
	}
	vet, err := median(vetAnalyzers)
	if err != nil {
		return err
	}
	// The first line names what was measured and is compared byte for byte
	// by the xtask; the times below it vary from run to run.
	fmt.Printf("%d packages of %s@%s, the median of 5 runs each:\n", len(pkgs), m.path, m.version)
	fmt.Printf("  %-24s %8s\n", "workqueuedone", ours.Round(time.Millisecond))
	fmt.Printf("  %-24s %8s\n", fmt.Sprintf("go vet's %d analyzers", len(vetAnalyzers)), vet.Round(time.Millisecond))
	fmt.Printf("  %-24s %8s\n", "ratio", strconv.FormatFloat(float64(ours)/float64(vet), 'f', 2, 64))
	return nil
}
