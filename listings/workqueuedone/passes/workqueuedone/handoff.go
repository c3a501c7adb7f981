package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// Hand-offs. An item that leaves the function in someone else's hands is
// no stall of the function: a channel of this package is followed to its
// receivers; any other end (a map, a slice, a field, a closure, a function
// that stores the item) is trusted, and reported only under -strict.

// A handoff is a place where the item leaves the function in someone
// else's hands without being released: sent on a channel, stored, given
// to a function that stores it, or captured by a closure that releases it
// and is passed on rather than called. The path is then no stall of this
// function; whether the other end releases the item is checked where the
// other end can be seen (a channel of this package), and trusted, quietly,
// where it cannot, unless -strict is set.
type handoff struct {
	pos  token.Pos
	what string // how messages say it: "sent on tc.ch[i]", "stored in m[k]"
	// For an item sent as it is on a channel: the variable or field the
	// channel is reached through, whose receivers are followed.
	channel types.Object
}

// storesParam is the fact that a function hands some of its parameters
// off (sends or stores them) on some path: Params holds their indices.
// An item passed to it is handed off, to an end that cannot be seen.
type storesParam struct{ Params []int }

func (*storesParam) AFact() {}
func (s *storesParam) String() string {
	return fmt.Sprintf("storesParam%v", s.Params)
}

// carries reports whether the value of e holds the item: the item itself,
// a carrier variable, a composite literal or append with it among its
// elements, or its address.
func (c *checker) carries(e ast.Expr, t *target) bool {
	if c.refersTo(e, t) {
		return true
	}
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		v, _ := c.pass.TypesInfo.Uses[e].(*types.Var)
		return v != nil && t.carriers[v]
	case *ast.CompositeLit:
		for _, el := range e.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				el = kv.Value
			}
			if c.carries(el, t) {
				return true
			}
		}
	case *ast.UnaryExpr:
		return e.Op == token.AND && c.carries(e.X, t)
	case *ast.CallExpr:
		if id, ok := ast.Unparen(e.Fun).(*ast.Ident); ok {
			if b, ok := c.pass.TypesInfo.Uses[id].(*types.Builtin); ok && b.Name() == "append" {
				for _, a := range e.Args[1:] {
					if c.carries(a, t) {
						return true
					}
				}
			}
		}
	case *ast.FuncLit:
		return c.closureReleases(e, t)
	}
	return false
}

// closureReleases reports whether lit calls Done on the item somewhere
// (a callback that finishes it).
func (c *checker) closureReleases(lit *ast.FuncLit, t *target) bool {
	found := false
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		if call, ok := n.(*ast.CallExpr); ok && !found {
			inner := &target{vars: t.vars, exprs: t.exprs, queue: t.queue}
			found = c.callReleases(inner, call)
		}
		return !found
	})
	return found
}

// findCarriers is the variables of body assigned a value that holds the
// item without being it: ev := event{key: key, done: func() {...}}.
func (c *checker) findCarriers(body *ast.BlockStmt, t *target) map[*types.Var]bool {
	set := map[*types.Var]bool{}
	t.carriers = set
	ast.Inspect(body, func(n ast.Node) bool {
		a, ok := n.(*ast.AssignStmt)
		if !ok || len(a.Lhs) != len(a.Rhs) {
			return true
		}
		for i, r := range a.Rhs {
			id, ok := a.Lhs[i].(*ast.Ident)
			if !ok || c.refersTo(r, t) {
				continue
			}
			switch ast.Unparen(r).(type) {
			case *ast.CompositeLit, *ast.UnaryExpr, *ast.FuncLit:
				if c.carries(r, t) {
					if v := c.varOf(id); v != nil {
						set[v] = true
					}
				}
			}
		}
		return true
	})
	return set
}

// handoffIn finds a hand-off of the item in node n.
func (c *checker) handoffIn(t *target, n ast.Node) *handoff {
	info := c.pass.TypesInfo
	switch n := n.(type) {
	case *ast.SendStmt:
		if c.refersTo(n.Value, t) {
			return &handoff{pos: n.Pos(), what: "sent on " + types.ExprString(n.Chan), channel: rootObject(info, n.Chan)}
		}
		if c.carries(n.Value, t) {
			return &handoff{pos: n.Pos(), what: "sent on " + types.ExprString(n.Chan) + " inside a value"}
		}
	case *ast.AssignStmt:
		for i, l := range n.Lhs {
			var r ast.Expr
			switch {
			case len(n.Rhs) == len(n.Lhs):
				r = n.Rhs[i]
			default:
				continue
			}
			// An item used as a map's key (cache[key] = v) is looked up by,
			// not handed over: caches keyed by the item are everywhere, and
			// a store that says nothing about who finishes it is no hand-off.
			switch l := ast.Unparen(l).(type) {
			case *ast.IndexExpr, *ast.SelectorExpr, *ast.StarExpr:
				if len(t.exprs) > 0 && t.exprs[types.ExprString(l)] {
					continue // the item's own field, being assigned
				}
				if c.carries(r, t) {
					return &handoff{pos: n.Pos(), what: "stored in " + types.ExprString(l)}
				}
			case *ast.Ident:
				// s = append(s, item): a slice of items, read elsewhere.
				if call, ok := ast.Unparen(r).(*ast.CallExpr); ok && !c.refersTo(r, t) && c.carries(call, t) {
					if _, isLit := ast.Unparen(r).(*ast.FuncLit); !isLit {
						return &handoff{pos: n.Pos(), what: "stored in " + l.Name}
					}
				}
			}
		}
	}
	var found *handoff
	ast.Inspect(n, func(x ast.Node) bool {
		if found != nil {
			return false
		}
		switch x := x.(type) {
		case *ast.CallExpr:
			if fn := calleeOrigin(info, x); fn != nil {
				if s := c.storesFact(fn); s != nil {
					for _, i := range s.Params {
						if i < len(x.Args) && c.carries(x.Args[i], t) {
							found = &handoff{pos: x.Pos(), what: "given to " + types.ExprString(x.Fun) + ", which stores it"}
							return false
						}
					}
				}
			}
			// The function itself of a call is not a value passed on.
			if _, ok := ast.Unparen(x.Fun).(*ast.FuncLit); ok {
				for _, a := range x.Args {
					ast.Inspect(a, func(y ast.Node) bool {
						if lit, ok := y.(*ast.FuncLit); ok && found == nil && c.closureReleases(lit, t) {
							found = &handoff{pos: lit.Pos(), what: "captured by a function literal that finishes it, passed on"}
						}
						return found == nil
					})
				}
				return false
			}
		case *ast.FuncLit:
			if c.closureReleases(x, t) {
				found = &handoff{pos: x.Pos(), what: "captured by a function literal that finishes it, passed on"}
			}
			return false
		case *ast.SelectorExpr:
			// q.Done as a value, not called: whoever holds it may finish
			// the item.
			if method, queue := queueSelector(info, x); method == "Done" && !c.isCalled(n, x) && t.queue.matches(queue) {
				found = &handoff{pos: x.Pos(), what: "left to whoever calls " + types.ExprString(x) + ", passed on"}
				return false
			}
		}
		return true
	})
	return found
}

// isCalled reports whether sel is the function of a call within n.
func (c *checker) isCalled(n ast.Node, sel *ast.SelectorExpr) bool {
	called := false
	ast.Inspect(n, func(x ast.Node) bool {
		if call, ok := x.(*ast.CallExpr); ok && ast.Unparen(call.Fun) == sel {
			called = true
		}
		return !called
	})
	return called
}

// storesFact is the storesParam fact of fn, from this package or imported.
func (c *checker) storesFact(fn *types.Func) *storesParam {
	return factOf(c, c.stores, fn)
}

// storedParams lists the parameters d hands off on some path. Only the
// statements that could store anything are looked at, and only for the
// parameters they mention.
func (c *checker) storedParams(d *ast.FuncDecl) []int {
	cands := c.storeCandidates(d.Body)
	if len(cands) == 0 {
		return nil
	}
	var out []int
	for i, v := range c.paramVars(d.Type) {
		if v == nil {
			continue
		}
		t := &target{vars: c.aliases(d.Body, map[*types.Var]bool{v: true})}
		for _, n := range cands {
			if c.mentions(n, t.vars) {
				if h := c.handoffIn(t, n); h != nil && h.channel == nil {
					out = append(out, i)
					break
				}
			}
		}
	}
	return out
}

// mentions reports whether n uses one of vars.
func (c *checker) mentions(n ast.Node, vars map[*types.Var]bool) bool {
	found := false
	ast.Inspect(n, func(x ast.Node) bool {
		if id, ok := x.(*ast.Ident); ok {
			if v, ok := c.pass.TypesInfo.Uses[id].(*types.Var); ok && vars[v] {
				found = true
			}
		}
		return !found
	})
	return found
}

// rootObject is the variable or field a channel expression is reached
// through: tc.ch[i] is tc's field ch; ch is the variable ch.
func rootObject(info *types.Info, e ast.Expr) types.Object {
	switch e := ast.Unparen(e).(type) {
	case *ast.Ident:
		return info.Uses[e]
	case *ast.SelectorExpr:
		if s := info.Selections[e]; s != nil && s.Kind() == types.FieldVal {
			return s.Obj()
		}
		return info.Uses[e.Sel] // a package-level variable
	case *ast.IndexExpr:
		return rootObject(info, e.X)
	}
	return nil
}

// A receiver is a place where a channel's value is received: the walk of
// what it received starts at block/index, and goes round to skip.
type receiver struct {
	pos       token.Pos
	v         *types.Var // nil: the value is dropped
	ok        *types.Var // v, ok := <-ch
	block     *cfg.Block
	index     int
	skip      ast.Node
	skipBlock *cfg.Block
	body      *ast.BlockStmt
}

// channelEnd is what the package shows of a channel's other end.
type channelEnd struct {
	receivers []receiver
	unseen    string // why its other end cannot be seen, or ""
}

// channelEnd finds every receive from the channel reached through obj. Its
// other end cannot be seen when obj is a parameter, exported, or used in
// any way but send, receive, make, append, len, cap and close.
func (c *checker) channelEndOf(obj types.Object) *channelEnd {
	if end, ok := c.channels[obj]; ok {
		return end
	}
	end := &channelEnd{}
	c.channels[obj] = end
	info := c.pass.TypesInfo
	switch {
	case obj == nil:
		end.unseen = "a channel the analyzer cannot name"
		return end
	case obj.Pkg() != c.pass.Pkg:
		end.unseen = "a channel of another package"
		return end
	case obj.Exported():
		end.unseen = "an exported channel, which other packages may receive from"
		return end
	}
	if v, ok := obj.(*types.Var); ok && c.params[v] {
		end.unseen = "a channel passed in as a parameter"
		return end
	}
	// Every use of obj must be one the analyzer understands.
	for _, fn := range c.funcs {
		parents := map[ast.Node]ast.Node{}
		var stack []ast.Node
		ast.Inspect(fn.body, func(n ast.Node) bool {
			if n == nil {
				stack = stack[:len(stack)-1]
				return true
			}
			if _, ok := n.(*ast.FuncLit); ok {
				return false // a literal is a function of its own in c.funcs
			}
			if len(stack) > 0 {
				parents[n] = stack[len(stack)-1]
			}
			stack = append(stack, n)
			return true
		})
		for n, p := range parents {
			id, ok := n.(*ast.Ident)
			if !ok {
				continue
			}
			if info.Uses[id] != obj {
				continue
			}
			// Climb from the use to the channel expression (tc.ch[i]).
			var e ast.Node = id
			if sel, ok := p.(*ast.SelectorExpr); ok && sel.Sel == id {
				e, p = sel, parents[sel]
			}
			for {
				if ix, ok := p.(*ast.IndexExpr); ok && ix.X == e {
					e, p = ix, parents[ix]
					continue
				}
				if pe, ok := p.(*ast.ParenExpr); ok {
					e, p = pe, parents[pe]
					continue
				}
				break
			}
			if why := c.channelUse(fn, e.(ast.Expr), p, parents, end); why != "" && end.unseen == "" {
				end.unseen = why
			}
		}
	}
	if end.unseen == "" && len(end.receivers) == 0 {
		end.unseen = "a channel this package never receives from"
	}
	return end
}

// channelUse records how the channel expression e (whose parent is p) is
// used: a receive becomes a receiver; an unknown use returns why the other
// end cannot be seen.
func (c *checker) channelUse(fn funcInfo, e ast.Expr, p ast.Node, parents map[ast.Node]ast.Node, end *channelEnd) string {
	info := c.pass.TypesInfo
	switch p := p.(type) {
	case *ast.SendStmt:
		if p.Chan == e {
			return ""
		}
	case *ast.UnaryExpr:
		if p.Op != token.ARROW {
			break
		}
		switch pp := parents[p].(type) {
		case *ast.AssignStmt:
			if len(pp.Rhs) == 1 && pp.Rhs[0] == p {
				r := receiver{pos: p.Pos(), skip: pp, body: fn.body}
				if id, ok := pp.Lhs[0].(*ast.Ident); ok && id.Name != "_" {
					r.v = c.varOf(id)
				}
				if len(pp.Lhs) == 2 {
					if id, ok := pp.Lhs[1].(*ast.Ident); ok && id.Name != "_" {
						r.ok = c.varOf(id)
					}
				}
				if !c.locateReceive(fn, pp, &r) {
					return "a receive the analyzer cannot follow"
				}
				end.receivers = append(end.receivers, r)
				return ""
			}
		case *ast.ExprStmt:
			// <-ch on its own, or case <-ch: the value is dropped.
			end.receivers = append(end.receivers, receiver{pos: p.Pos()})
			return ""
		}
		return "a receive whose value goes where the analyzer cannot follow"
	case *ast.RangeStmt:
		if p.X == e {
			if t := info.TypeOf(e); t != nil {
				if _, isChan := t.Underlying().(*types.Chan); isChan {
					r := receiver{pos: p.Pos(), body: fn.body}
					if id, ok := p.Key.(*ast.Ident); ok && id.Name != "_" {
						r.v = c.varOf(id)
					}
					if r.v == nil {
						end.receivers = append(end.receivers, receiver{pos: p.Pos()})
						return ""
					}
					for _, b := range fn.g.Blocks {
						if b.Stmt == p && b.Kind == cfg.KindRangeBody {
							r.block = b
						}
						if b.Stmt == p && b.Kind == cfg.KindRangeLoop {
							r.skipBlock = b
						}
					}
					if r.block == nil {
						return "a range the analyzer cannot follow"
					}
					end.receivers = append(end.receivers, r)
					return ""
				}
			}
		}
	case *ast.AssignStmt:
		for _, l := range p.Lhs {
			if l == e {
				return "" // made or grown here: tc.ch = append(tc.ch, make(chan T))
			}
		}
	case *ast.CallExpr:
		if id, ok := ast.Unparen(p.Fun).(*ast.Ident); ok {
			if b, ok := info.Uses[id].(*types.Builtin); ok {
				switch b.Name() {
				case "len", "cap", "close", "append":
					return ""
				}
			}
		}
	}
	return fmt.Sprintf("a channel used at line %d in a way the analyzer does not follow", c.pass.Fset.Position(e.Pos()).Line)
}

// locateReceive finds where the walk of a received value starts: after
// the assignment, or, in a select, at the top of its case's body (go/cfg
// evaluates every case's communication before choosing one).
func (c *checker) locateReceive(fn funcInfo, assign *ast.AssignStmt, r *receiver) bool {
	for _, b := range fn.g.Blocks {
		if cc, ok := b.Stmt.(*ast.CommClause); ok && cc.Comm == assign && b.Kind == cfg.KindSelectCaseBody {
			r.block, r.index = b, 0
			return true
		}
	}
	for _, b := range fn.g.Blocks {
		for i, n := range b.Nodes {
			if n == assign {
				r.block, r.index = b, i+1
				return true
			}
		}
	}
	return false
}

// storeCandidates is the statements of body that could hand a value off:
// a send, a store into an index, field or pointer, an append, a call of a
// function that stores.
func (c *checker) storeCandidates(body *ast.BlockStmt) []ast.Node {
	var out []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SendStmt:
			out = append(out, n)
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				switch ast.Unparen(l).(type) {
				case *ast.IndexExpr, *ast.SelectorExpr, *ast.StarExpr:
					out = append(out, n)
					return true
				}
			}
			for _, r := range n.Rhs {
				if call, ok := ast.Unparen(r).(*ast.CallExpr); ok {
					if id, ok := ast.Unparen(call.Fun).(*ast.Ident); ok && id.Name == "append" {
						out = append(out, n)
						return true
					}
				}
			}
		case *ast.CallExpr:
			if fn := calleeOrigin(c.pass.TypesInfo, n); fn != nil && c.storesFact(fn) != nil {
				out = append(out, n)
			}
		}
		return true
	})
	return out
}
