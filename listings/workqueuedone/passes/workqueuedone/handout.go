package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/cfg"
)

// What hands an item out: a queue's Get or GetWithPriority, or a wrapper,
// a function that returns an item it got from one. A wrapper is known by
// its handsOut fact, in its package and in those that import it, and its
// callers are checked as if they had called Get.

// handsOut is the fact that a function is a wrapper of a queue's Get: on
// some path it returns an item it got from a queue, or from another
// wrapper, without releasing it. Its callers are checked as if they had
// called Get.
type handsOut struct {
	Item int // the result that holds the item
	// Flag is the result that says whether anything was handed out, or -1:
	// a bool that is true when the queue shut down (FlagKind "shutdown"), a
	// bool that is true when an item was handed out ("ok"), or an error that
	// is nil when one was ("error").
	Flag     int
	FlagKind string
}

func (*handsOut) AFact() {}
func (h *handsOut) String() string {
	if h.Flag < 0 {
		return fmt.Sprintf("handsOut[%d]", h.Item)
	}
	return fmt.Sprintf("handsOut[%d] %s[%d]", h.Item, h.FlagKind, h.Flag)
}

// A handout is one call that hands out an item.
type handout struct {
	call    *ast.CallExpr
	stmt    ast.Node // the statement the call is in (a CFG node)
	name    string   // the call as messages write it: c.queue.Get()
	method  string   // the method or function called: Get, getWork
	queue   string   // the queue (or the wrapper's receiver) as written; "" for a wrapper function
	wrapper *types.Func

	item     *types.Var // the variable the item is assigned to, or nil
	itemExpr string     // ... or the field it is assigned to (c.current)
	itemName string     // how messages name the item

	shutdown     *types.Var // the flag's variable, or nil
	shutdownKind string     // "shutdown", "ok" or "error", as handsOut.FlagKind
}

// handoutCall says whether call hands out an item: a queue's Get or
// GetWithPriority, or a call of a wrapper. It returns how the results are
// laid out, and the queue (or receiver) expression, nil for a function.
func (c *checker) handoutCall(call *ast.CallExpr) (*handsOut, ast.Expr, *types.Func) {
	info := c.pass.TypesInfo
	if method, queue := queueMethod(info, call); method == "Get" || method == "GetWithPriority" {
		n := 2
		if method == "GetWithPriority" {
			n = 3
		}
		return &handsOut{Item: 0, Flag: n - 1, FlagKind: "shutdown"}, queue, nil
	}
	fn := calleeOrigin(info, call)
	if fn == nil {
		return nil, nil, nil
	}
	if f := c.wrapperFact(fn); f != nil {
		return f, receiverExpr(info, call), fn
	}
	return nil, nil, nil
}

// wrapperFact is the handsOut fact of fn, from this package or imported.
func (c *checker) wrapperFact(fn *types.Func) *handsOut {
	return factOf(c, c.wrappers, fn)
}

// handouts finds the calls in g's statements (not in nested literals) that
// hand out an item. An item thrown away is reported here (report is false
// while facts are being computed).
func (c *checker) handouts(g *cfg.CFG, fn funcInfo, report bool) []*handout {
	var out []*handout
	for _, b := range g.Blocks {
		for _, n := range b.Nodes {
			var lhs []ast.Expr
			var rhs ast.Expr
			switch n := n.(type) {
			case *ast.AssignStmt:
				if len(n.Rhs) != 1 {
					continue
				}
				lhs, rhs = n.Lhs, n.Rhs[0]
			case *ast.ValueSpec: // var key, quit = q.Get() (go/cfg makes each spec a node)
				if len(n.Values) != 1 {
					continue
				}
				for _, id := range n.Names {
					lhs = append(lhs, id)
				}
				rhs = n.Values[0]
			case *ast.ExprStmt: // q.Get() on its own: the item is dropped
				rhs = n.X
			default:
				continue
			}
			call, ok := ast.Unparen(rhs).(*ast.CallExpr)
			if !ok {
				continue
			}
			layout, queue, wrapper := c.handoutCall(call)
			if layout == nil {
				continue
			}
			h := &handout{
				call: call, stmt: n, wrapper: wrapper,
				name: types.ExprString(call.Fun) + "()",
			}
			if queue != nil {
				h.queue = types.ExprString(queue)
			}
			h.method = h.name[strings.LastIndex(h.name, ".")+1 : len(h.name)-2]
			var itemLHS ast.Expr
			if layout.Item < len(lhs) {
				itemLHS = ast.Unparen(lhs[layout.Item])
			}
			switch e := itemLHS.(type) {
			case nil:
				h.itemName = "" // dropped
			case *ast.Ident:
				if e.Name != "_" {
					h.item = c.varOf(e)
					h.itemName = e.Name
				}
			case *ast.SelectorExpr, *ast.IndexExpr, *ast.StarExpr:
				h.itemExpr = types.ExprString(e)
				h.itemName = h.itemExpr
			default:
				continue
			}
			if h.item == nil && h.itemExpr == "" {
				if report {
					c.report(analysis.Diagnostic{
						Pos: call.Pos(), End: call.End(),
						Message: fmt.Sprintf("stall: the item %s hands out is discarded, so it is never Done", h.name),
					})
				}
				c.counted(fn, call.Pos(), 1, report)
				continue
			}
			if layout.Flag >= 0 && layout.Flag < len(lhs) {
				if id, ok := lhs[layout.Flag].(*ast.Ident); ok && id.Name != "_" {
					h.shutdown = c.varOf(id)
					h.shutdownKind = layout.FlagKind
				}
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

// wrapperOf says how fn hands out the item of h, given the returns on
// which it still held it: which result is the item, and which the flag.
func (c *checker) wrapperOf(h *handout, t *target, rets []*ast.ReturnStmt, sig *types.Signature) *handsOut {
	info := c.pass.TypesInfo
	results := sig.Results()
	var out *handsOut
	for _, ret := range rets {
		f := &handsOut{Item: -1, Flag: -1}
		for i, r := range ret.Results {
			if f.Item < 0 && c.refersTo(r, t) {
				f.Item = i
				continue
			}
			tv := info.Types[r]
			switch {
			case i < results.Len() && types.Identical(results.At(i).Type(), types.Universe.Lookup("error").Type()) &&
				tv.IsNil():
				if f.Flag < 0 {
					f.Flag, f.FlagKind = i, "error"
				}
			case tv.Value != nil && tv.Type != nil && isBool(tv.Type):
				// On the path that hands the item out: true means "ok".
				if tv.Value.String() == "true" {
					f.Flag, f.FlagKind = i, "ok"
				} else {
					f.Flag, f.FlagKind = i, "shutdown"
				}
			case h.shutdown != nil && tv.Type != nil && isBool(tv.Type):
				if s := c.flagTest(r, h.shutdown, h.shutdownKind); s != 0 {
					f.Flag = i
					if s > 0 {
						f.FlagKind = "shutdown"
					} else {
						f.FlagKind = "ok"
					}
				}
			}
		}
		if f.Item < 0 || len(ret.Results) == 0 {
			continue
		}
		if out == nil {
			out = f
		} else if *out != *f {
			return &handsOut{Item: out.Item, Flag: -1} // returns that disagree: no flag
		}
	}
	return out
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Kind() == types.Bool
}

// passesOn says whether d returns a hand-out call's results as they are
// (return q.inner.Get()): it is then a wrapper with the same layout.
func (c *checker) passesOn(d *ast.FuncDecl) *handsOut {
	var out *handsOut
	ast.Inspect(d.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.ReturnStmt:
			if len(n.Results) != 1 || out != nil {
				return false
			}
			if call, ok := ast.Unparen(n.Results[0]).(*ast.CallExpr); ok {
				if layout, _, _ := c.handoutCall(call); layout != nil {
					l := *layout
					out = &l
				}
			}
			return false
		}
		return true
	})
	return out
}
