// Package workqueuedone defines an Analyzer that reports work-queue items
// that are handed out and never finished.
//
// # Analyzer workqueuedone
//
// workqueuedone: report a path on which a work-queue item is never Done
//
// A client-go work queue (k8s.io/client-go/util/workqueue, typed or not,
// and controller-runtime's priorityqueue) hands an item out with Get or
// GetWithPriority and marks it as being processed. Until Done is called on
// that item, the queue never hands it out again: every later Add of the key
// is absorbed, and the object is silently never reconciled. Forget does not
// help; it only resets the rate limiter.
//
// For each call that hands out an item, the analyzer follows every path
// from the call, past the shutdown check, to the end of the function (a
// return, or the loop around the Get coming back to it) and reports each
// path on which the item is not released. An item is released by
//
//   - q.Done(item), or defer q.Done(item), on the same queue, with the item
//     or a variable assigned from it (item.(string), a conversion);
//   - a function literal called at once, or started with go, that releases
//     it on every path (sample-controller's func(obj any) error {...}(obj));
//   - a function or method, of this package or of one analyzed before it,
//     that releases its parameter on every path (an analysis fact);
//   - returning it to the caller, whose job it then is.
//
// Each report starts with its kind:
//
//   - stall: a path leaves without releasing the item;
//   - forget: the same, on a path that calls Forget on the item, which
//     resets the backoff but is not Done;
//   - panic: Done is called on every path but not deferred, with calls in
//     between, so a panic in one of them leaks the item (-panic=false turns
//     this kind off).
//
// Where adding defer q.Done(item) after the shutdown check fixes every
// path, the report carries that line as a suggested fix.
//
// What it cannot see: a queue reached through an interface of your own
// that declares Get and Done itself (only methods declared by client-go's
// workqueue and controller-runtime's priorityqueue count); an item stored
// (in a channel, slice, map or field) and released later elsewhere, which
// it reports as a stall; an item released through reflection or a
// function value; Done on a queue held in a different variable than the
// one Get was called on.
package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
	"golang.org/x/tools/go/cfg"
	"golang.org/x/tools/go/types/typeutil"
)

const doc = `report a path on which a work-queue item is never Done

A client-go work queue hands an item out with Get (or GetWithPriority on
controller-runtime's priority queue) and never hands that key out again
until Done is called on it. workqueuedone follows every path from the
hand-out, past the shutdown check, to the function's end, and reports a
path that does not release the item: "stall:" where nothing releases it,
"forget:" where the path calls Forget, which is not Done, and "panic:"
where Done is called but not deferred, so that a panic in between leaks
the item.`

// Analyzer is the workqueuedone analyzer.
var Analyzer = &analysis.Analyzer{
	Name:       "workqueuedone",
	Doc:        doc,
	URL:        "https://github.com/forget-is-not-delete/book/tree/main/listings/workqueuedone",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, ctrlflow.Analyzer},
	Run:        run,
	FactTypes:  []analysis.Fact{new(releases)},
	ResultType: reflect.TypeFor[[]Handout](),
}

// A Handout is one call that hands out an item, as the analyzer's result
// reports it to a driver that counts (the book's corpus listing does).
type Handout struct {
	Func    string    // the function the call is in ("the function literal")
	Get     token.Pos // the call
	Reports int       // how many reports it got (stall:, forget: and panic:)
}

var reportPanic bool

func init() {
	Analyzer.Flags.BoolVar(&reportPanic, "panic", true,
		"report Done that is called on every path but not deferred")
}

// The packages whose methods make a queue. A type is a queue because its
// Get and Done are these packages' methods, not because of their names.
var queuePackages = map[string]bool{
	"k8s.io/client-go/util/workqueue":                             true,
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue": true,
}

// releases is the fact that a function releases some of its parameters
// on every path: Params holds their indices (the receiver is not counted).
type releases struct{ Params []int }

func (*releases) AFact() {}
func (r *releases) String() string {
	return fmt.Sprintf("releases%v", r.Params)
}

// queueMethod returns the name of the queue method call calls (Get,
// GetWithPriority, Done or Forget) and the expression of its queue, or ""
// if call is not a call of such a method.
func queueMethod(info *types.Info, call *ast.CallExpr) (string, ast.Expr) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", nil
	}
	fn, ok := info.Uses[sel.Sel].(*types.Func)
	if !ok || fn.Pkg() == nil || !queuePackages[fn.Pkg().Path()] {
		return "", nil
	}
	switch fn.Name() {
	case "Get", "GetWithPriority", "Done", "Forget":
	default:
		return "", nil
	}
	// A Get of these packages on a type without Done hands out nothing
	// anyone must finish (none exists today; the check keeps it so).
	recv := info.TypeOf(sel.X)
	if recv == nil {
		return "", nil
	}
	if obj, _, _ := types.LookupFieldOrMethod(recv, true, fn.Pkg(), "Done"); obj == nil {
		return "", nil
	}
	return fn.Name(), sel.X
}

// A handout is one call that hands out an item.
type handout struct {
	call     *ast.CallExpr
	stmt     ast.Node // the assignment (a CFG node)
	method   string   // Get or GetWithPriority
	queue    string   // the queue expression, as written
	item     *types.Var
	shutdown *types.Var // nil if discarded
}

type checker struct {
	pass    *analysis.Pass
	results []Handout
	cfgs    *ctrlflow.CFGs
	lits    map[*ast.FuncLit]bool // being analyzed (no recursion)
	facts   map[*types.Func]*releases
}

func run(pass *analysis.Pass) (any, error) {
	insp := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	c := &checker{
		pass:  pass,
		cfgs:  pass.ResultOf[ctrlflow.Analyzer].(*ctrlflow.CFGs),
		lits:  map[*ast.FuncLit]bool{},
		facts: map[*types.Func]*releases{},
	}

	// First the helpers: which functions of this package release which
	// parameters. A helper may call another, so go round until nothing
	// changes (each round can only add facts).
	var decls []*ast.FuncDecl
	for cur := range insp.Root().Preorder((*ast.FuncDecl)(nil)) {
		if d := cur.Node().(*ast.FuncDecl); d.Body != nil {
			decls = append(decls, d)
		}
	}
	for changed := true; changed; {
		changed = false
		for _, d := range decls {
			fn, _ := pass.TypesInfo.Defs[d.Name].(*types.Func)
			if fn == nil {
				continue
			}
			r := c.releasedParams(d, fn)
			if old := c.facts[fn]; len(r) > 0 && (old == nil || len(old.Params) < len(r)) {
				c.facts[fn] = &releases{Params: r}
				changed = true
			}
		}
	}
	for fn, r := range c.facts {
		pass.ExportObjectFact(fn, r)
	}

	// Then every hand-out, in the function (or literal) it is made in.
	for cur := range insp.Root().Preorder((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		var body *ast.BlockStmt
		var g *cfg.CFG
		name := "the function literal"
		switch fn := cur.Node().(type) {
		case *ast.FuncDecl:
			if fn.Body == nil {
				continue
			}
			body, g, name = fn.Body, c.cfgs.FuncDecl(fn), fn.Name.Name
		case *ast.FuncLit:
			body, g = fn.Body, c.cfgs.FuncLit(fn)
		}
		if g == nil {
			continue
		}
		for _, h := range c.handouts(g, name) {
			c.results = append(c.results, Handout{Func: name, Get: h.call.Pos(), Reports: c.check(h, body, g, name)})
		}
	}
	return c.results, nil
}

// handouts finds the calls in body (not in nested literals) that hand out
// an item, and the CFG node each is in.
func (c *checker) handouts(g *cfg.CFG, fname string) []*handout {
	var out []*handout
	for _, b := range g.Blocks {
		for _, n := range b.Nodes {
			assign, ok := n.(*ast.AssignStmt)
			if !ok || len(assign.Rhs) != 1 {
				continue
			}
			call, ok := ast.Unparen(assign.Rhs[0]).(*ast.CallExpr)
			if !ok {
				continue
			}
			method, queue := queueMethod(c.pass.TypesInfo, call)
			if method != "Get" && method != "GetWithPriority" {
				continue
			}
			h := &handout{call: call, stmt: assign, method: method, queue: types.ExprString(queue)}
			if id, ok := assign.Lhs[0].(*ast.Ident); ok {
				h.item = c.varOf(id)
				if id.Name == "_" {
					c.pass.Report(analysis.Diagnostic{
						Pos: call.Pos(), End: call.End(),
						Message: fmt.Sprintf("stall: the item %s.%s() hands out is discarded, so it is never Done",
							h.queue, method),
					})
					c.results = append(c.results, Handout{Func: fname, Get: call.Pos(), Reports: 1})
					continue
				}
			}
			if h.item == nil {
				continue // assigned to a field or an index: not followed
			}
			if id, ok := assign.Lhs[len(assign.Lhs)-1].(*ast.Ident); ok && id.Name != "_" {
				h.shutdown = c.varOf(id)
			}
			out = append(out, h)
		}
	}
	return out
}

func (c *checker) varOf(id *ast.Ident) *types.Var {
	if v, ok := c.pass.TypesInfo.Defs[id].(*types.Var); ok {
		return v
	}
	v, _ := c.pass.TypesInfo.Uses[id].(*types.Var)
	return v
}

// aliases returns item and every variable of body assigned from it, as it
// is or through a type assertion or conversion (key := obj.(string)).
func (c *checker) aliases(body *ast.BlockStmt, item *types.Var) map[*types.Var]bool {
	set := map[*types.Var]bool{item: true}
	for changed := true; changed; {
		changed = false
		ast.Inspect(body, func(n ast.Node) bool {
			assign, ok := n.(*ast.AssignStmt)
			if !ok || len(assign.Rhs) != 1 {
				return true
			}
			if !c.refersTo(assign.Rhs[0], set) {
				return true
			}
			if id, ok := assign.Lhs[0].(*ast.Ident); ok {
				if v := c.varOf(id); v != nil && !set[v] {
					set[v] = true
					changed = true
				}
			}
			return true
		})
	}
	return set
}

// refersTo reports whether e is one of vars, possibly asserted to a type
// or converted.
func (c *checker) refersTo(e ast.Expr, vars map[*types.Var]bool) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := c.pass.TypesInfo.Uses[e].(*types.Var)
		return v != nil && vars[v]
	case *ast.TypeAssertExpr:
		return c.refersTo(e.X, vars)
	case *ast.CallExpr:
		if tv, ok := c.pass.TypesInfo.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			return c.refersTo(e.Args[0], vars)
		}
	}
	return false
}

// A target is what one walk looks for: the releases of some variables.
type target struct {
	vars  map[*types.Var]bool
	queue string // "" accepts a Done on any queue (a helper's parameter)
	// skip is the hand-out statement: reaching it again means the loop
	// around it came back to Get.
	skip     ast.Node
	shutdown *types.Var
}

// What a walk finds on one path.
type pathState struct {
	deferred bool      // a deferred release is pending
	forgot   token.Pos // first Forget of the item on the path
	called   bool      // a call since the hand-out (for "panic:")
}

type leak struct {
	pos     token.Pos
	end     token.Pos
	forgot  token.Pos
	looped  bool // the loop came back to Get
	deferIn bool // ... with a deferred Done that waits for the return
}

type walkResult struct {
	leaks    []leak
	released bool        // some path released the item
	exposed  []token.Pos // non-deferred Dones with calls before them
}

// walk follows every path from node index i of block b.
func (c *checker) walk(t *target, b *cfg.Block, i int) walkResult {
	type key struct {
		b  *cfg.Block
		st pathState
	}
	seen := map[key]bool{}
	var res walkResult
	var visit func(b *cfg.Block, i int, st pathState, last ast.Node)
	visit = func(b *cfg.Block, i int, st pathState, last ast.Node) {
		if i == 0 {
			k := key{b, st}
			if seen[k] {
				return
			}
			seen[k] = true
		}
		for ; i < len(b.Nodes); i++ {
			n := b.Nodes[i]
			if n == t.skip {
				if st.deferred {
					res.leaks = append(res.leaks, leak{pos: c.loopPos(last, b), looped: true, deferIn: true, forgot: st.forgot})
				} else {
					res.leaks = append(res.leaks, leak{pos: c.loopPos(last, b), looped: true, forgot: st.forgot})
				}
				return
			}
			switch c.effect(t, n, &st) {
			case released:
				res.released = true
				return
			case exposedRelease:
				res.released = true
				res.exposed = append(res.exposed, n.Pos())
				return
			}
			last = n
		}
		if ret := b.Return(); ret != nil {
			if st.deferred || c.returnsItem(t, ret) {
				res.released = true
				return
			}
			pos, end := ret.Pos(), ret.End()
			if c.pass.Fset.File(pos) != c.pass.Fset.File(end) || end <= pos {
				end = pos // a synthetic return at the closing brace
			}
			res.leaks = append(res.leaks, leak{pos: pos, end: end, forgot: st.forgot})
			return
		}
		if len(b.Succs) == 0 {
			return // a call that never returns (panic, os.Exit, klog.Fatal)
		}
		succs := b.Succs
		if len(succs) == 2 && len(b.Nodes) > 0 && t.shutdown != nil {
			// The shutdown check: on its shutdown side nothing was handed out.
			if cond, ok := b.Nodes[len(b.Nodes)-1].(ast.Expr); ok {
				switch c.shutdownTest(cond, t.shutdown) {
				case +1:
					succs = succs[1:]
				case -1:
					succs = succs[:1]
				}
			}
		}
		for _, s := range succs {
			visit(s, 0, st, last)
		}
	}
	visit(b, i, pathState{}, nil)
	return res
}

// shutdownTest is +1 if cond is true exactly when the queue shut down
// (shutdown, quit), -1 if it is false then (!shutdown, ok), 0 otherwise.
func (c *checker) shutdownTest(cond ast.Expr, v *types.Var) int {
	switch e := ast.Unparen(cond).(type) {
	case *ast.Ident:
		if c.pass.TypesInfo.Uses[e] == v {
			return +1
		}
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return -c.shutdownTest(e.X, v)
		}
	}
	return 0
}

// loopPos is where a path goes back round the loop: the continue that
// ends the branch it is in, if there is one, else the last statement on
// the path before the loop head.
func (c *checker) loopPos(last ast.Node, b *cfg.Block) token.Pos {
	if last == nil {
		return b.Nodes[0].Pos()
	}
	best := token.NoPos
	ast.Inspect(c.enclosingBody(last), func(n ast.Node) bool {
		if br, ok := n.(*ast.BranchStmt); ok && br.Tok == token.CONTINUE && br.Pos() > last.End() {
			if best == token.NoPos || br.Pos() < best {
				best = br.Pos()
			}
		}
		return true
	})
	if best != token.NoPos && c.sameLineRun(last.End(), best) {
		return best
	}
	return last.Pos()
}

// sameLineRun reports whether nothing but blank lines, comments and
// closing braces separate from and to (so the continue follows the last
// statement directly).
func (c *checker) sameLineRun(from, to token.Pos) bool {
	f := c.pass.Fset.File(from)
	if f == nil || f != c.pass.Fset.File(to) {
		return false
	}
	return c.pass.Fset.Position(to).Line-c.pass.Fset.Position(from).Line <= 2
}

func (c *checker) enclosingBody(n ast.Node) ast.Node {
	for _, f := range c.pass.Files {
		if f.Pos() <= n.Pos() && n.End() <= f.End() {
			return f
		}
	}
	return n
}

// returnsItem reports whether ret hands the item back to the caller.
func (c *checker) returnsItem(t *target, ret *ast.ReturnStmt) bool {
	for _, r := range ret.Results {
		if c.refersTo(r, t.vars) {
			return true
		}
	}
	return false
}

type effectKind int

const (
	nothing effectKind = iota
	released
	exposedRelease // released by a Done that is not deferred
)

// effect says what node n does to the item on the path st describes.
func (c *checker) effect(t *target, n ast.Node, st *pathState) effectKind {
	info := c.pass.TypesInfo
	switch n := n.(type) {
	case *ast.DeferStmt:
		if c.callReleases(t, n.Call) != nothing {
			st.deferred = true
			return nothing
		}
	case *ast.GoStmt:
		if c.callReleases(t, n.Call) != nothing {
			return released
		}
	}
	result := nothing
	ast.Inspect(n, func(x ast.Node) bool {
		if result != nothing {
			return false
		}
		switch x := x.(type) {
		case *ast.FuncLit, *ast.DeferStmt, *ast.GoStmt:
			return false // handled above, or not run here
		case *ast.CallExpr:
			method, _ := queueMethod(info, x)
			switch {
			case method == "Forget" && len(x.Args) == 1 && c.refersTo(x.Args[0], t.vars):
				if st.forgot == token.NoPos {
					st.forgot = x.Pos()
				}
				return true
			case method == "Done":
				if k := c.callReleases(t, x); k != nothing {
					result = k
					if st.called && k == released {
						result = exposedRelease
					}
					return false
				}
			}
			if k := c.callReleases(t, x); k != nothing {
				result = released
				return false
			}
			st.called = true
		}
		return true
	})
	return result
}

// callReleases says whether call releases the item: a Done on its queue,
// a literal called at once that releases it on every path, or a function
// with the releases fact for the argument it is passed as.
func (c *checker) callReleases(t *target, call *ast.CallExpr) effectKind {
	info := c.pass.TypesInfo
	if method, queue := queueMethod(info, call); method == "Done" {
		if len(call.Args) == 1 && c.refersTo(call.Args[0], t.vars) &&
			(t.queue == "" || types.ExprString(queue) == t.queue) {
			return released
		}
		return nothing
	}
	if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
		vars := map[*types.Var]bool{}
		for v := range t.vars {
			vars[v] = true // captured
		}
		params := c.paramVars(lit.Type)
		for i, arg := range call.Args {
			if i < len(params) && c.refersTo(arg, t.vars) {
				vars[params[i]] = true
			}
		}
		if c.litReleases(lit, &target{vars: vars, queue: t.queue}) {
			return released
		}
		return nothing
	}
	fn := typeutil.StaticCallee(info, call)
	if fn == nil {
		return nothing
	}
	r := c.facts[fn]
	if r == nil {
		r = new(releases)
		if !c.pass.ImportObjectFact(fn, r) {
			return nothing
		}
	}
	for _, i := range r.Params {
		if i < len(call.Args) && c.refersTo(call.Args[i], t.vars) {
			return released
		}
	}
	return nothing
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

// litReleases reports whether lit, run from its start, releases t's item
// on every path.
func (c *checker) litReleases(lit *ast.FuncLit, t *target) bool {
	if c.lits[lit] {
		return false
	}
	c.lits[lit] = true
	defer delete(c.lits, lit)
	g := c.cfgs.FuncLit(lit)
	if g == nil || len(g.Blocks) == 0 {
		return false
	}
	res := c.walk(t, g.Blocks[0], 0)
	return res.released && len(res.leaks) == 0
}

// releasedParams lists the parameters d releases on every path.
func (c *checker) releasedParams(d *ast.FuncDecl, fn *types.Func) []int {
	g := c.cfgs.FuncDecl(d)
	if g == nil || len(g.Blocks) == 0 {
		return nil
	}
	var out []int
	for i, v := range c.paramVars(d.Type) {
		if v == nil {
			continue
		}
		t := &target{vars: c.aliases(d.Body, v)}
		res := c.walk(t, g.Blocks[0], 0)
		if res.released && len(res.leaks) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// check follows every path of one hand-out and reports what leaks.
// It returns how many reports it made.
func (c *checker) check(h *handout, body *ast.BlockStmt, g *cfg.CFG, fname string) int {
	t := &target{
		vars:     c.aliases(body, h.item),
		queue:    h.queue,
		skip:     h.stmt,
		shutdown: h.shutdown,
	}
	var start *cfg.Block
	index := 0
	for _, b := range g.Blocks {
		for i, n := range b.Nodes {
			if n == h.stmt {
				start, index = b, i+1
			}
		}
	}
	if start == nil {
		return 0
	}
	res := c.walk(t, start, index)
	reports := 0
	fset := c.pass.Fset
	getLine := fset.Position(h.call.Pos()).Line
	item := h.item.Name()
	done := fmt.Sprintf("%s.Done(%s)", h.queue, item)

	// One report per place a path leaves; forget: wins over stall: there.
	byPos := map[token.Pos]leak{}
	for _, l := range res.leaks {
		if old, ok := byPos[l.pos]; !ok || (old.forgot == token.NoPos && l.forgot != token.NoPos) {
			byPos[l.pos] = l
		}
	}
	positions := make([]token.Pos, 0, len(byPos))
	for p := range byPos {
		positions = append(positions, p)
	}
	sort.Slice(positions, func(i, j int) bool { return positions[i] < positions[j] })
	fix := c.fix(h, body, res)
	for _, p := range positions {
		l := byPos[p]
		var where string
		switch {
		case l.deferIn:
			where = fmt.Sprintf("the loop goes back to %s here, but defer %s runs only when %s returns", h.method, done, fname)
		case l.looped:
			where = fmt.Sprintf("the loop goes back to %s here without %s", h.method, done)
		default:
			where = fmt.Sprintf("this path returns without %s", done)
		}
		var msg string
		if l.forgot != token.NoPos {
			msg = fmt.Sprintf("forget: %s.Forget(%s) on line %d resets the backoff but is not Done: %s.%s() on line %d handed out %s, and %s",
				h.queue, item, fset.Position(l.forgot).Line, h.queue, h.method, getLine, item, where)
		} else {
			msg = fmt.Sprintf("stall: %s.%s() on line %d hands out %s, and %s",
				h.queue, h.method, getLine, item, where)
		}
		d := analysis.Diagnostic{Pos: l.pos, End: l.end, Message: msg}
		if fix != nil {
			d.SuggestedFixes = []analysis.SuggestedFix{*fix}
		}
		c.pass.Report(d)
		reports++
	}
	if reportPanic && len(res.leaks) == 0 {
		seen := map[token.Pos]bool{}
		for _, p := range res.exposed {
			if seen[p] {
				continue
			}
			seen[p] = true
			reports++
			c.pass.Report(analysis.Diagnostic{
				Pos: p,
				Message: fmt.Sprintf("panic: %s is not deferred: a panic between %s.%s() on line %d and here leaves %s never Done; defer it after the shutdown check",
					done, h.queue, h.method, getLine, item),
			})
		}
	}
	return reports
}

// fix is the one line that releases the item on every path, where there
// is one: defer q.Done(item) right after the shutdown check, when nothing
// in the function calls Done on the item yet and the Get is not in a loop
// (a defer in a loop runs only at the return).
func (c *checker) fix(h *handout, body *ast.BlockStmt, res walkResult) *analysis.SuggestedFix {
	if res.released || h.shutdown == nil {
		return nil
	}
	for _, l := range res.leaks {
		if l.looped {
			return nil
		}
	}
	// The Get and its shutdown check must be statements of the body itself.
	for i, s := range body.List {
		if s != h.stmt || i+1 >= len(body.List) {
			continue
		}
		ifs, ok := body.List[i+1].(*ast.IfStmt)
		if !ok || ifs.Init != nil || c.shutdownTest(ifs.Cond, h.shutdown) != +1 {
			return nil
		}
		indent := strings.Repeat("\t", c.pass.Fset.Position(s.Pos()).Column-1)
		text := fmt.Sprintf("\n%sdefer %s.Done(%s)", indent, h.queue, h.item.Name())
		return &analysis.SuggestedFix{
			Message:   fmt.Sprintf("defer %s.Done(%s) after the shutdown check", h.queue, h.item.Name()),
			TextEdits: []analysis.TextEdit{{Pos: ifs.End(), End: ifs.End(), NewText: []byte(text)}},
		}
	}
	return nil
}
