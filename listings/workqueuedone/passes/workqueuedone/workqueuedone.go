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
)

// The pass: the package's functions and their facts first, then every
// hand-out; reports go through one funnel that leaves out test files
// (unless -tests) and reports accepted by a directive.

// A funcInfo is one function of the package, declared or literal.
type funcInfo struct {
	name string // its name, or "the function literal"
	node ast.Node
	decl *ast.FuncDecl // nil for a literal
	body *ast.BlockStmt
	g    *cfg.CFG
}

// checker holds what one pass knows about its package.
type checker struct {
	pass *analysis.Pass
	cfgs *ctrlflow.CFGs

	funcs       []funcInfo
	params      map[*types.Var]bool   // every function's parameters
	caseTags    map[ast.Expr]ast.Expr // a switch case's value -> its switch's tag
	lits        map[*ast.FuncLit]bool // being walked (no recursion)
	channels    map[types.Object]*channelEnd
	aliasGraphs map[*ast.BlockStmt]map[*types.Var][]*types.Var

	// What this package's functions are, as facts for other packages.
	facts       map[*types.Func]*releases
	wrappers    map[*types.Func]*handsOut
	stores      map[*types.Func]*storesParam
	flagHelpers map[*types.Func]*shutdownFlag

	dirs       *directives
	results    []Handout
	receiverAt map[token.Pos]bool // receivers already reported
}

func run(pass *analysis.Pass) (any, error) {
	insp := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	c := &checker{
		pass:        pass,
		cfgs:        pass.ResultOf[ctrlflow.Analyzer].(*ctrlflow.CFGs),
		params:      map[*types.Var]bool{},
		caseTags:    map[ast.Expr]ast.Expr{},
		lits:        map[*ast.FuncLit]bool{},
		channels:    map[types.Object]*channelEnd{},
		aliasGraphs: map[*ast.BlockStmt]map[*types.Var][]*types.Var{},
		facts:       map[*types.Func]*releases{},
		wrappers:    map[*types.Func]*handsOut{},
		stores:      map[*types.Func]*storesParam{},
		flagHelpers: map[*types.Func]*shutdownFlag{},
		receiverAt:  map[token.Pos]bool{},
	}
	c.dirs = findDirectives(pass, c.skipFile)

	// A package that cannot reach a queue can hold no item. Most of a
	// build's dependencies are such packages, and go vet runs the analyzer
	// over every one of them for its facts: they cost only this check.
	if !reachesQueue(pass.Pkg) {
		c.reportDirectiveProblems()
		return c.results, nil
	}

	for cur := range insp.Root().Preorder((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil), (*ast.SwitchStmt)(nil)) {
		switch n := cur.Node().(type) {
		case *ast.FuncDecl:
			if n.Body == nil {
				continue
			}
			if g := c.cfgs.FuncDecl(n); g != nil {
				c.funcs = append(c.funcs, funcInfo{name: n.Name.Name, node: n, decl: n, body: n.Body, g: g})
			}
			for _, v := range c.paramVars(n.Type) {
				c.params[v] = true
			}
		case *ast.FuncLit:
			if g := c.cfgs.FuncLit(n); g != nil {
				c.funcs = append(c.funcs, funcInfo{name: "the function literal", node: n, body: n.Body, g: g})
			}
			for _, v := range c.paramVars(n.Type) {
				c.params[v] = true
			}
		case *ast.SwitchStmt:
			if n.Tag == nil {
				continue
			}
			for _, cc := range n.Body.List {
				for _, e := range cc.(*ast.CaseClause).List {
					c.caseTags[e] = n.Tag
				}
			}
		}
	}

	c.computeFacts()

	// Then every hand-out, in the function (or literal) it is made in.
	for _, fn := range c.funcs {
		for _, h := range c.handouts(fn.g, fn, true) {
			c.counted(fn, h.call.Pos(), c.check(h, fn), true)
		}
	}
	c.reportDirectiveProblems()
	return c.results, nil
}

// reportDirectiveProblems reports each directive that is malformed or
// accepts nothing.
func (c *checker) reportDirectiveProblems() {
	for _, d := range c.dirs.problems() {
		c.pass.Report(d)
	}
}

// computeFacts works out what the package's functions do with an item:
// release a parameter, store one, return a queue's item (a wrapper), or
// return the shutdown flag. One may call another, so it goes round until
// nothing changes (each round can only add).
func (c *checker) computeFacts() {
	// Only a function that calls another of this package can learn
	// anything in a later round.
	callsLocal := map[*ast.FuncDecl]bool{}
	for _, fn := range c.funcs {
		if fn.decl == nil {
			continue
		}
		ast.Inspect(fn.body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if f := calleeOrigin(c.pass.TypesInfo, call); f != nil && f.Pkg() == c.pass.Pkg {
					callsLocal[fn.decl] = true
				}
			}
			return !callsLocal[fn.decl]
		})
	}
	for round := 0; round < 10; round++ {
		changed := false
		for _, fn := range c.funcs {
			if fn.decl == nil || (round > 0 && !callsLocal[fn.decl]) {
				continue
			}
			obj, _ := c.pass.TypesInfo.Defs[fn.decl.Name].(*types.Func)
			if obj == nil {
				continue
			}
			if _, ok := c.flagHelpers[obj]; !ok {
				if f := c.flagHelper(fn.decl); f != nil {
					c.flagHelpers[obj] = f
					changed = true
				}
			}
			callsRelease := c.mayRelease(fn.body)
			if r := c.releasedParams(fn.decl, callsRelease); len(r) > 0 && (c.facts[obj] == nil || len(c.facts[obj].Params) < len(r)) {
				c.facts[obj] = &releases{Params: r}
				changed = true
			}
			if s := c.storedParams(fn.decl); len(s) > 0 && (c.stores[obj] == nil || len(c.stores[obj].Params) < len(s)) {
				c.stores[obj] = &storesParam{Params: s}
				changed = true
			}
			if _, ok := c.wrappers[obj]; !ok {
				if w := c.passesOn(fn.decl); w != nil {
					c.wrappers[obj] = w
					changed = true
					continue
				}
				for _, h := range c.handouts(fn.g, fn, false) {
					t, start, index := c.targetOf(h, fn)
					if start == nil {
						continue
					}
					res := c.walk(t, start, index)
					if w := c.wrapperOf(h, t, res.returned, obj.Type().(*types.Signature)); w != nil {
						c.wrappers[obj] = w
						changed = true
						break
					}
				}
			}
		}
		if !changed {
			break
		}
	}
	exportFacts(c, c.facts)
	exportFacts(c, c.wrappers)
	exportFacts(c, c.stores)
	exportFacts(c, c.flagHelpers)
}

// targetOf is what the walk of h looks for, and where it starts.
func (c *checker) targetOf(h *handout, fn funcInfo) (*target, *cfg.Block, int) {
	t := &target{
		vars:         map[*types.Var]bool{},
		skip:         h.stmt,
		shutdown:     h.shutdown,
		shutdownKind: h.shutdownKind,
	}
	if h.item != nil {
		t.vars = c.aliases(fn.body, map[*types.Var]bool{h.item: true})
	}
	if h.itemExpr != "" {
		t.exprs = map[string]bool{h.itemExpr: true}
	}
	switch {
	case h.wrapper == nil:
		t.queue = &queueRef{exprs: c.queueAliases(fn.body, h.queue)}
	case h.queue != "":
		t.queue = &queueRef{exprs: c.queueAliases(fn.body, h.queue), wrapperRecv: namedRecv(h.wrapper)}
	}
	c.findCarriers(fn.body, t)
	for _, b := range fn.g.Blocks {
		for i, n := range b.Nodes {
			if n == h.stmt {
				return t, b, i + 1
			}
		}
	}
	return t, nil, 0
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
func (c *checker) counted(fn funcInfo, get token.Pos, reports int, record bool) {
	if !record {
		return
	}
	if f := c.fileOf(get); f != nil && c.skipFile(f) {
		return // not counted where nothing is reported
	}
	c.results = append(c.results, Handout{Func: fn.name, FuncPos: fn.node.Pos(), Get: get, Reports: reports})
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

// mayRelease reports whether body (literals in it included) calls
// anything that can release an item: a Done, or a function known to
// release; functions that cannot are not walked at all.
func (c *checker) mayRelease(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if isDone(c.pass.TypesInfo, n) || calledName(n) == "Done" {
				found = true
			} else if fn := calleeOrigin(c.pass.TypesInfo, n); fn != nil && c.releasesFact(fn) != nil {
				found = true
			}
		}
		return !found
	})
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
