package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
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

// wrapperFact is the handsOut fact of fn, from this package or imported.
func (c *checker) wrapperFact(fn *types.Func) *handsOut {
	return factOf(c, c.wrappers, fn)
}

// A handout is one call that hands out an item.
type handout struct {
	fn     *ssa.Function
	call   *ssa.Call
	pos    token.Pos // where the call starts
	name   string    // the call as messages write it: c.queue.Get()
	method string    // the method or function called: Get, getWork
	queue  string    // the queue (or the wrapper's receiver) as written; "" for a wrapper function

	item     ssa.Value // the item, or nil when it is thrown away
	itemName string    // how messages name it
	flag     ssa.Value
	flagKind string

	wrapper  *types.Func
	queueKey string
	stmt     ast.Node // the statement the call is in
}

// handoutCall says whether a call hands out an item, how its results are
// laid out, its queue (or a wrapper method's receiver), and the wrapper.
func (c *checker) handoutCall(cc *ssa.CallCommon) (*handsOut, ssa.Value, *types.Func) {
	switch m, recv := queueCall(cc); m {
	case "Get":
		return &handsOut{Item: 0, Flag: 1, FlagKind: "shutdown"}, recv, nil
	case "GetWithPriority":
		return &handsOut{Item: 0, Flag: 2, FlagKind: "shutdown"}, recv, nil
	}
	fn := staticFunc(cc)
	if fn == nil {
		return nil, nil, nil
	}
	f := c.wrapperFact(fn)
	if f == nil {
		return nil, nil, nil
	}
	var recv ssa.Value
	if namedRecv(fn) != nil && len(cc.Args) > 0 {
		recv = cc.Args[0]
	}
	return f, recv, fn
}

// handouts finds the calls in fn (not in its literals) that hand out an
// item. An item thrown away is reported here when report is set.
func (c *checker) handouts(fn *ssa.Function, report bool) []*handout {
	var out []*handout
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			call, ok := ins.(*ssa.Call)
			if !ok {
				continue
			}
			layout, recv, wrapper := c.handoutCall(&call.Call)
			if layout == nil {
				continue
			}
			h := &handout{fn: fn, call: call, wrapper: wrapper, pos: call.Pos(), flagKind: layout.FlagKind}
			ce := c.callAt[call.Pos()]
			if ce == nil {
				continue // a call the source does not write (a wrapper's)
			}
			h.pos = ce.Pos()
			h.name = types.ExprString(ce.Fun) + "()"
			h.method = h.name[strings.LastIndex(h.name, ".")+1 : len(h.name)-2]
			if sel, ok := ast.Unparen(ce.Fun).(*ast.SelectorExpr); ok && recv != nil {
				h.queue = types.ExprString(sel.X)
			}
			top := &frame{fn: fn}
			if recv != nil {
				h.queueKey = plainKey(c.valueKey(top, recv))
			}
			if tuple, ok := call.Type().(*types.Tuple); ok && tuple.Len() > 1 {
				for _, r := range *call.Referrers() {
					if e, ok := r.(*ssa.Extract); ok {
						switch {
						case e.Index == layout.Item && hasUses(e):
							h.item = e
						case e.Index == layout.Flag && hasUses(e):
							h.flag = e
						}
					}
				}
			} else if layout.Item == 0 && hasUses(call) {
				h.item = call
			}
			h.stmt, h.itemName = c.assignment(ce, layout.Item)
			if h.itemName == "" {
				h.itemName = nameOf(h.item)
			}
			if h.item == nil {
				if report {
					c.report(diag(ce.Pos(), ce.End(),
						fmt.Sprintf("stall: the item %s hands out is discarded, so it is never Done", h.name)))
				}
				c.counted(fn, h.pos, 1, report)
				continue
			}
			if h.itemName == "" {
				h.itemName = "the item"
			}
			out = append(out, h)
		}
	}
	return out
}

// hasUses reports whether v is used by anything but a debug reference.
func hasUses(v ssa.Value) bool {
	if v.Referrers() == nil {
		return false
	}
	for _, r := range *v.Referrers() {
		if _, ok := r.(*ssa.DebugRef); !ok {
			return true
		}
	}
	return false
}

// assignment is the statement a hand-out call is assigned in, and the
// item's left-hand side as written ("" when it is _ or missing).
func (c *checker) assignment(ce *ast.CallExpr, item int) (ast.Node, string) {
	for _, n := range c.enclosing(ce.Pos()) {
		var lhs []ast.Expr
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Rhs) != 1 || ast.Unparen(n.Rhs[0]) != ce {
				return n, ""
			}
			lhs = n.Lhs
		case *ast.ValueSpec:
			if len(n.Values) != 1 || ast.Unparen(n.Values[0]) != ce {
				return n, ""
			}
			for _, id := range n.Names {
				lhs = append(lhs, id)
			}
		case *ast.ExprStmt, *ast.ReturnStmt, *ast.IfStmt, *ast.ForStmt, *ast.BlockStmt:
			return n, ""
		default:
			continue
		}
		if item < len(lhs) {
			if id, ok := lhs[item].(*ast.Ident); ok && id.Name == "_" {
				return n, ""
			}
			return n, types.ExprString(lhs[item])
		}
		return n, ""
	}
	return nil, ""
}

// walkOf is the walk of one hand-out's item.
func (c *checker) walkOf(h *handout, facts bool) *walk {
	w := &walk{
		c: c, fn: h.fn, root: h.item, rootPath: itself, again: h.call,
		flag: h.flag, flagKind: h.flagKind, queue: h.queueKey, facts: facts,
	}
	if h.wrapper != nil {
		w.wrapper = true
		w.wrapperType = namedRecv(h.wrapper)
		if w.wrapperType == nil {
			w.queue = "" // a wrapper function: its caller's Done may be on any queue
		}
	}
	if h.stmt != nil {
		w.home = [2]token.Pos{h.stmt.Pos(), h.stmt.End()}
	}
	return w
}

// runFrom walks w from just after the instruction ins.
func (w *walk) runFrom(ins ssa.Instruction) *walkResult {
	b := ins.Block()
	for i, x := range b.Instrs {
		if x == ins {
			return w.run(b, i+1)
		}
	}
	return &walkResult{}
}

// wrapperOf says how fn hands out the item of h, given the returns on
// which it still held it: which result is the item, and which the flag.
func (c *checker) wrapperOf(res *walkResult, sig *types.Signature) *handsOut {
	var out *handsOut
	errType := types.Universe.Lookup("error").Type()
	for _, r := range res.returns {
		f := &handsOut{Item: -1, Flag: -1}
		for i, p := range r.results {
			if f.Item < 0 && p.holds() {
				f.Item = i
				continue
			}
			v := r.ret.Results[i]
			if k, ok := v.(*ssa.Const); ok && k.IsNil() && i < sig.Results().Len() && types.Identical(sig.Results().At(i).Type(), errType) {
				if f.Flag < 0 {
					f.Flag, f.FlagKind = i, "error"
				}
				continue
			}
			switch {
			case r.bools[i] == "T":
				f.Flag, f.FlagKind = i, "ok"
			case r.bools[i] == "F":
				f.Flag, f.FlagKind = i, "shutdown"
			case r.flags[i] > 0:
				f.Flag, f.FlagKind = i, "shutdown"
			case r.flags[i] < 0:
				f.Flag, f.FlagKind = i, "ok"
			}
		}
		if f.Item < 0 {
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
