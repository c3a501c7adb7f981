package workqueuedone

import (
	"go/ast"
	"go/token"
	"go/types"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/ssa"
)

// The pass: the package's SSA form, built only where there is something to
// follow; the functions' facts; then every hand-out. Reports go through
// one funnel that leaves out test files (unless -tests) and reports
// accepted by a directive.

// checker holds what one pass knows about its package.
type checker struct {
	pass *analysis.Pass
	cfgs *ctrlflow.CFGs

	funcs     []*ssa.Function // the package's functions and literals, in source order
	ids       ids
	noReturn  map[token.Pos]bool // calls (by Lparen) that never return
	callAt    map[token.Pos]*ast.CallExpr
	returnAt  map[token.Pos]*ast.ReturnStmt
	releasing map[*ssa.Function]bool
	inPhi     map[*ssa.Phi]bool // φs whose key is being worked out
	channels  map[types.Object]*channelEnd

	// What this package's functions are, as facts for other packages.
	facts       map[*types.Func]*releases
	wrappers    map[*types.Func]*handsOut
	stores      map[*types.Func]*storesParam
	flagHelpers map[*types.Func]*shutdownFlag

	dirs       *directives
	results    []Handout
	receiverAt map[token.Pos]bool // receivers already reported
	panicAt    map[token.Pos]bool // Done calls already reported as panic:
}

func run(pass *analysis.Pass) (any, error) {
	insp := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	c := &checker{
		pass:        pass,
		cfgs:        pass.ResultOf[ctrlflow.Analyzer].(*ctrlflow.CFGs),
		ids:         ids{m: map[any]int{}},
		noReturn:    map[token.Pos]bool{},
		callAt:      map[token.Pos]*ast.CallExpr{},
		returnAt:    map[token.Pos]*ast.ReturnStmt{},
		releasing:   map[*ssa.Function]bool{},
		inPhi:       map[*ssa.Phi]bool{},
		channels:    map[types.Object]*channelEnd{},
		facts:       map[*types.Func]*releases{},
		wrappers:    map[*types.Func]*handsOut{},
		stores:      map[*types.Func]*storesParam{},
		flagHelpers: map[*types.Func]*shutdownFlag{},
		receiverAt:  map[token.Pos]bool{},
		panicAt:     map[token.Pos]bool{},
	}
	c.dirs = findDirectives(pass, c.skipFile)

	// A package that cannot reach a queue can hold no item. Most of a
	// build's dependencies are such packages, and go vet runs the analyzer
	// over every one of them for its facts: they cost only this check.
	if !reachesQueue(pass.Pkg) {
		c.reportDirectiveProblems()
		return c.results, nil
	}

	// The shutdown-flag helpers are read from the syntax (a body of one
	// return), and a package needs SSA only if it calls a queue's method
	// or a function with a fact.
	need := false
	for cur := range insp.Root().Preorder((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil), (*ast.CallExpr)(nil), (*ast.ReturnStmt)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.FuncDecl:
			if obj, ok := pass.TypesInfo.Defs[n.Name].(*types.Func); ok {
				if f := c.flagHelper(n); f != nil {
					c.flagHelpers[obj] = f
				}
			}
			if n.Body != nil {
				c.noReturns(c.cfgs.FuncDecl(n), n.Body)
			}
		case *ast.FuncLit:
			c.noReturns(c.cfgs.FuncLit(n), n.Body)
		case *ast.CallExpr:
			c.callAt[n.Lparen] = n
			if !need {
				if m, _ := queueMethod(pass.TypesInfo, n); m != "" {
					need = true
				} else if fn := calleeOrigin(pass.TypesInfo, n); fn != nil && fn.Pkg() != pass.Pkg &&
					(c.wrapperFact(fn) != nil || c.releasesFact(fn) != nil || c.storesFact(fn) != nil) {
					need = true
				}
			}
		case *ast.ReturnStmt:
			c.returnAt[n.Return] = n
		}
	}
	if need {
		c.buildSSA()
		c.computeFacts()
		for _, fn := range c.funcs {
			for _, h := range c.handouts(fn, true) {
				n, gaveUp := c.check(h)
				c.counted(fn, h.pos, n, true)
				if gaveUp {
					c.results[len(c.results)-1].GaveUp = true
				}
			}
		}
	}
	exportFacts(c, c.flagHelpers)
	c.reportDirectiveProblems()
	return c.results, nil
}

// buildSSA builds the package's SSA form, with debug information (a
// branch is named by its condition as written), and lists its functions
// and function literals in source order.
func (c *checker) buildSSA() {
	prog := ssa.NewProgram(c.pass.Fset, ssa.BuilderMode(0))
	for _, p := range c.pass.Pkg.Imports() {
		prog.CreatePackage(p, nil, nil, true)
	}
	pkg := prog.CreatePackage(c.pass.Pkg, c.pass.Files, c.pass.TypesInfo, false)
	pkg.SetDebugMode(true)
	pkg.Build()
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		c.funcs = append(c.funcs, fn)
		for _, a := range fn.AnonFuncs {
			add(a)
		}
	}
	for _, f := range c.pass.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			obj, ok := c.pass.TypesInfo.Defs[fd.Name].(*types.Func)
			if !ok {
				continue
			}
			if fn := prog.FuncValue(obj); fn != nil && fn.Blocks != nil {
				add(fn)
			}
		}
	}
}

// noReturns records the calls that end a block of g with no successor and
// no return: calls of functions that never return (os.Exit, klog.Fatal),
// which ctrlflow knows across packages.
func (c *checker) noReturns(g *cfg.CFG, body *ast.BlockStmt) {
	if g == nil || len(g.Blocks) == 0 {
		return
	}
	for _, b := range g.Blocks {
		if len(b.Succs) != 0 || !b.Live || b.Return() != nil || len(b.Nodes) == 0 {
			continue
		}
		es, ok := b.Nodes[len(b.Nodes)-1].(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := ast.Unparen(es.X).(*ast.CallExpr)
		if !ok {
			continue
		}
		// The function's own last block ends with no successor too.
		if len(body.List) > 0 && body.List[len(body.List)-1] == es {
			continue
		}
		c.noReturn[call.Lparen] = true
	}
}

// reportDirectiveProblems reports each directive that is malformed or
// accepts nothing.
func (c *checker) reportDirectiveProblems() {
	for _, d := range c.dirs.problems() {
		c.pass.Report(d)
	}
}

func (c *checker) paramVars(ft *ast.FuncType) []*types.Var {
	var out []*types.Var
	for _, f := range ft.Params.List {
		if len(f.Names) == 0 {
			out = append(out, nil)
		}
		for _, id := range f.Names {
			v, _ := c.pass.TypesInfo.Defs[id].(*types.Var)
			out = append(out, v)
		}
	}
	return out
}

// funcName is how messages and results name fn.
func funcName(fn *ssa.Function) string {
	if fn.Parent() != nil {
		return "the function literal"
	}
	return fn.Name()
}

// skipFile reports whether reports in f are left out: a _test.go file,
// unless -tests.
func (c *checker) skipFile(f *ast.File) bool {
	if reportTests {
		return false
	}
	return strings.HasSuffix(c.pass.Fset.File(f.Pos()).Name(), "_test.go")
}

// report makes d, unless it is in a file left out or a directive accepts
// it; it says whether it did.
func (c *checker) report(d analysis.Diagnostic) bool {
	if f := c.fileOf(d.Pos); f != nil && c.skipFile(f) {
		return false
	}
	if c.dirs.accepts(d.Pos) {
		return false
	}
	c.pass.Report(d)
	return true
}

// counted records a hand-out in the analyzer's result.
func (c *checker) counted(fn *ssa.Function, get token.Pos, reports int, record bool) {
	if !record {
		return
	}
	if f := c.fileOf(get); f != nil && c.skipFile(f) {
		return // not counted where nothing is reported
	}
	pos := token.NoPos
	if s := fn.Syntax(); s != nil {
		pos = s.Pos()
	}
	c.results = append(c.results, Handout{Func: funcName(fn), FuncPos: pos, Get: get, Reports: reports})
}

func (c *checker) fileOf(pos token.Pos) *ast.File {
	for _, f := range c.pass.Files {
		if f.FileStart <= pos && pos <= f.FileEnd {
			return f
		}
	}
	return nil
}

// reachQueue remembers, across the packages of one process, whether a
// package imports a queue package, directly or not.
var reachQueue sync.Map // *types.Package -> bool

// reachesQueue reports whether pkg is a queue package or imports one,
// directly or through other packages.
func reachesQueue(pkg *types.Package) bool {
	if v, ok := reachQueue.Load(pkg); ok {
		return v.(bool)
	}
	reachQueue.Store(pkg, false) // import cycles cannot happen; this guards re-entry
	found := queuePackages[pkg.Path()]
	for _, imp := range pkg.Imports() {
		if found {
			break
		}
		found = reachesQueue(imp)
	}
	reachQueue.Store(pkg, found)
	return found
}

// factOf is fn's fact of type F. The cache holds this package's facts,
// worked out by computeFacts, and the imported ones looked up before,
// found or not: a fact is looked up at every call of fn. A function of
// this package that is not in the cache has none.
func factOf[F any, PF interface {
	*F
	analysis.Fact
}](c *checker, cache map[*types.Func]PF, fn *types.Func) PF {
	if f, ok := cache[fn]; ok {
		return f
	}
	if fn.Pkg() == c.pass.Pkg {
		return nil
	}
	var f PF = new(F)
	if !c.pass.ImportObjectFact(fn, f) {
		f = nil
	}
	cache[fn] = f
	return f
}

// exportFacts exports the facts of this package's functions (the cache
// also remembers imported ones, and their absence).
func exportFacts[PF interface {
	comparable
	analysis.Fact
}](c *checker, facts map[*types.Func]PF) {
	var none PF
	for fn, f := range facts {
		if f != none && fn.Pkg() == c.pass.Pkg {
			c.pass.ExportObjectFact(fn, f)
		}
	}
}
