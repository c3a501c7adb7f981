package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// What releases an item: a Done on its queue (or a local name for it), a
// literal called at once that releases it on every path, a function with
// the releases fact for that parameter, and what counts as the item (the
// variable, those assigned from it, the field it is in).

// releases is the fact that a function releases some of its parameters
// on every path: Params holds their indices (the receiver is not counted).
type releases struct{ Params []int }

func (*releases) AFact() {}
func (r *releases) String() string {
	return fmt.Sprintf("releases%v", r.Params)
}

// A queueRef says which Done calls release an item: a Done on the queue
// expression that handed it out, on a local variable assigned from it
// (q := c.queue), or, for an item from a wrapper, on a field of the
// wrapper (w.inner.Done) or through a method of the wrapper's type called
// on the same receiver.
type queueRef struct {
	exprs       map[string]bool
	wrapperRecv *types.Named // the wrapper's receiver type, if a method
}

func (q *queueRef) matches(e ast.Expr) bool {
	if q == nil {
		return true
	}
	s := types.ExprString(e)
	if q.exprs[s] {
		return true
	}
	if q.wrapperRecv != nil {
		for x := range q.exprs {
			if strings.HasPrefix(s, x+".") {
				return true
			}
		}
	}
	return false
}

// An event is what one CFG node does to the item.
type event struct {
	release     ast.Node // the call (or defer, or go) that releases it
	text        string   // that release as written
	deferred    bool
	direct      bool // a Done of the queue itself, not through a helper
	handoff     *handoff
	overwritten bool // the node assigns another value to the item's variable
}

// effect says what node n does to the item on the path st describes.
func (c *checker) effect(t *target, n ast.Node, st *pathState) event {
	var ev event
	switch n := n.(type) {
	case *ast.DeferStmt:
		if c.callReleases(t, n.Call) {
			ev.release, ev.text, ev.deferred = n, "defer "+types.ExprString(n.Call), true
			ev.direct = isDone(c.pass.TypesInfo, n.Call)
			return ev
		}
		return ev // a deferred call runs later: nothing here
	case *ast.GoStmt:
		if c.callReleases(t, n.Call) {
			ev.release, ev.text = n, "go "+types.ExprString(n.Call)
			return ev
		}
	case *ast.AssignStmt:
		for i, l := range n.Lhs {
			id, ok := ast.Unparen(l).(*ast.Ident)
			if !ok {
				continue
			}
			if v := c.varOf(id); v != nil && t.vars[v] {
				if len(n.Rhs) == len(n.Lhs) && c.refersTo(n.Rhs[i], t) {
					continue
				}
				ev.overwritten = true
			}
		}
	}
	if t.queue != nil {
		// A helper's parameter (no queue) that is handed off is the
		// storesParam fact's business, not the releases fact's.
		ev.handoff = c.handoffIn(t, n)
	}
	info := c.pass.TypesInfo
	ast.Inspect(n, func(x ast.Node) bool {
		if ev.release != nil {
			return false
		}
		switch x := x.(type) {
		case *ast.FuncLit, *ast.DeferStmt, *ast.GoStmt:
			return false // handled above, or not run here
		case *ast.CallExpr:
			method, _ := queueMethod(info, x)
			if method == "Forget" && len(x.Args) == 1 && c.refersTo(x.Args[0], t) {
				if st.forgot == token.NoPos {
					st.forgot = x.Pos()
				}
				return true
			}
			if c.callReleases(t, x) {
				ev.release, ev.text, ev.direct = x, types.ExprString(x), method == "Done"
				return false
			}
			if c.canPanic(x) {
				st.called = true
			}
		}
		return true
	})
	return ev
}

func isDone(info *types.Info, call *ast.CallExpr) bool {
	method, _ := queueMethod(info, call)
	return method == "Done"
}

// The builtins that cannot panic: a call of one between Get and Done
// leaves nothing a recover could strand.
var safeBuiltins = map[string]bool{
	"len": true, "cap": true, "append": true, "copy": true, "delete": true,
	"min": true, "max": true, "new": true, "clear": true, "complex": true,
	"real": true, "imag": true, "print": true, "println": true,
}

// canPanic reports whether call may panic: any call but a conversion or a
// builtin of safeBuiltins.
func (c *checker) canPanic(call *ast.CallExpr) bool {
	info := c.pass.TypesInfo
	if tv, ok := info.Types[call.Fun]; ok && tv.IsType() {
		return false
	}
	if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok {
		if b, ok := info.Uses[id].(*types.Builtin); ok {
			return !safeBuiltins[b.Name()]
		}
	}
	return true
}

// callReleases says whether call releases the item: a Done on its queue,
// a literal called at once that releases it on every path, or a function
// with the releases fact for the argument it is passed as.
func (c *checker) callReleases(t *target, call *ast.CallExpr) bool {
	info := c.pass.TypesInfo
	if method, queue := queueMethod(info, call); method == "Done" {
		return len(call.Args) == 1 && c.refersTo(call.Args[0], t) && t.queue.matches(queue)
	}
	if t.queue == nil && len(call.Args) == 1 && calledName(call) == "Done" && c.refersTo(call.Args[0], t) {
		// A helper's parameter, finished through an interface the helper
		// declares (d interface{ Done(string) }): its caller passes the
		// queue, and the analyzer trusts the name there.
		if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
			if recv := info.TypeOf(sel.X); recv != nil && types.IsInterface(recv) {
				return true
			}
		}
	}
	if lit, ok := ast.Unparen(call.Fun).(*ast.FuncLit); ok {
		inner := &target{vars: map[*types.Var]bool{}, exprs: t.exprs, queue: t.queue}
		for v := range t.vars {
			inner.vars[v] = true // captured
		}
		params := c.paramVars(lit.Type)
		for i, arg := range call.Args {
			if i < len(params) && params[i] != nil && c.refersTo(arg, t) {
				inner.vars[params[i]] = true
			}
		}
		return c.litReleases(lit, inner)
	}
	fn := calleeOrigin(info, call)
	if fn == nil {
		return false
	}
	r := c.releasesFact(fn)
	if r == nil {
		return false
	}
	// A method of the wrapper's own type must be called on the wrapper the
	// item came from (w.Done(item), not other.Done(item)).
	if t.queue != nil && t.queue.wrapperRecv != nil {
		if recv := receiverExpr(info, call); recv != nil && sameNamed(info.TypeOf(recv), t.queue.wrapperRecv) &&
			!t.queue.exprs[types.ExprString(recv)] {
			return false
		}
	}
	for _, i := range r.Params {
		if i < len(call.Args) && c.refersTo(call.Args[i], t) {
			return true
		}
	}
	return false
}

// releasesFact is the releases fact of fn, from this package or imported.
func (c *checker) releasesFact(fn *types.Func) *releases {
	return factOf(c, c.facts, fn)
}

// sameNamed reports whether t is named (or a pointer to) the same
// generic-origin type as n.
func sameNamed(t types.Type, n *types.Named) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	tn, ok := t.(*types.Named)
	return ok && tn.Origin() == n.Origin()
}

// namedRecv is the named type of fn's receiver, or nil.
func namedRecv(fn *types.Func) *types.Named {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := t.(*types.Named)
	return n
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
// on every path (or hands it on).
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
	for v := range c.aliases(lit.Body, t.vars) {
		t.vars[v] = true
	}
	res := c.walk(t, g.Blocks[0], 0)
	return res.released && len(res.leaks) == 0
}

// releasedParams lists the parameters d releases on every path.
func (c *checker) releasedParams(d *ast.FuncDecl, mayRelease bool) []int {
	g := c.cfgs.FuncDecl(d)
	if !mayRelease || g == nil || len(g.Blocks) == 0 {
		return nil
	}
	var out []int
	for i, v := range c.paramVars(d.Type) {
		if v == nil {
			continue
		}
		t := &target{vars: c.aliases(d.Body, map[*types.Var]bool{v: true})}
		res := c.walk(t, g.Blocks[0], 0)
		if res.released && len(res.leaks) == 0 {
			out = append(out, i)
		}
	}
	return out
}

// aliases returns vars and every variable of body assigned from one of
// them, as it is or through a type assertion or conversion (key :=
// obj.(string)).
func (c *checker) aliases(body *ast.BlockStmt, vars map[*types.Var]bool) map[*types.Var]bool {
	graph := c.aliasGraph(body)
	set := map[*types.Var]bool{}
	var todo []*types.Var
	for v := range vars {
		set[v] = true
		todo = append(todo, v)
	}
	for len(todo) > 0 {
		v := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, w := range graph[v] {
			if !set[w] {
				set[w] = true
				todo = append(todo, w)
			}
		}
	}
	return set
}

// aliasGraph is, for body, which variables are assigned from which: an
// edge from x to y for y := x, y = x.(T), y = T(x). It is built once per
// body: every parameter of every function asks for it.
func (c *checker) aliasGraph(body *ast.BlockStmt) map[*types.Var][]*types.Var {
	if g, ok := c.aliasGraphs[body]; ok {
		return g
	}
	g := map[*types.Var][]*types.Var{}
	ast.Inspect(body, func(n ast.Node) bool {
		assign, ok := n.(*ast.AssignStmt)
		if !ok || len(assign.Rhs) != 1 {
			return true
		}
		from := c.rootVar(assign.Rhs[0])
		if from == nil {
			return true
		}
		if id, ok := assign.Lhs[0].(*ast.Ident); ok {
			if to := c.varOf(id); to != nil && to != from {
				g[from] = append(g[from], to)
			}
		}
		return true
	})
	c.aliasGraphs[body] = g
	return g
}

// rootVar is the variable e is, possibly asserted to a type or converted.
func (c *checker) rootVar(e ast.Expr) *types.Var {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := c.pass.TypesInfo.Uses[e].(*types.Var)
		return v
	case *ast.TypeAssertExpr:
		return c.rootVar(e.X)
	case *ast.CallExpr:
		if tv, ok := c.pass.TypesInfo.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			return c.rootVar(e.Args[0])
		}
	}
	return nil
}

// refersTo reports whether e is the item (one of t's variables, or the
// field it is in), possibly asserted to a type or converted.
func (c *checker) refersTo(e ast.Expr, t *target) bool {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := c.pass.TypesInfo.Uses[e].(*types.Var)
		return v != nil && t.vars[v]
	case *ast.SelectorExpr, *ast.IndexExpr, *ast.StarExpr:
		return len(t.exprs) > 0 && t.exprs[types.ExprString(e)]
	case *ast.TypeAssertExpr:
		return c.refersTo(e.X, t)
	case *ast.CallExpr:
		if tv, ok := c.pass.TypesInfo.Types[e.Fun]; ok && tv.IsType() && len(e.Args) == 1 {
			return c.refersTo(e.Args[0], t)
		}
	}
	return false
}

// queueAliases is the queue expression and the local variables of body
// assigned from it, or it from them (q := c.queue).
func (c *checker) queueAliases(body *ast.BlockStmt, queue string) map[string]bool {
	set := map[string]bool{queue: true}
	var pairs [][2]string
	ast.Inspect(body, func(n ast.Node) bool {
		if a, ok := n.(*ast.AssignStmt); ok && len(a.Lhs) == 1 && len(a.Rhs) == 1 {
			if id, ok := a.Lhs[0].(*ast.Ident); ok {
				switch r := ast.Unparen(a.Rhs[0]).(type) {
				case *ast.Ident, *ast.SelectorExpr:
					pairs = append(pairs, [2]string{id.Name, types.ExprString(r)})
				}
			}
		}
		return true
	})
	for changed := true; changed; {
		changed = false
		for _, p := range pairs {
			if set[p[0]] != set[p[1]] {
				set[p[0]], set[p[1]] = true, true
				changed = true
			}
		}
	}
	return set
}
