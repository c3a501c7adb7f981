package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/ssa"
)

// The suggested fix: one line, offered only where the analyzer can show
// that after it every path releases the item exactly once.

// fix is defer q.Done(item) right after the shutdown check. The line runs
// on every path past the check, once, at the return; it is right only if
// nothing else in the function can release the item. So it is offered
// only when all of these hold:
//
//   - no path releases the item, hands it off, returns it, or goes back
//     round a loop (a defer in a loop runs only at the return);
//   - the item comes from a queue's own Get, into a variable that is
//     never assigned again and whose address is never taken, with its
//     shutdown flag, and the next statement is the check, which returns;
//   - the function and its literals never write Done (a call, a method
//     value, an interface, a string that reflection could use);
//   - no call in the function is of a function that releases a parameter
//     on any path (its releases fact), in this package or another.
func (c *checker) fix(h *handout, res *walkResult) *analysis.SuggestedFix {
	switch {
	case res.released, len(res.handoffs) > 0, res.looped, len(res.returns) > 0, res.gaveUp,
		h.flag == nil, h.wrapper != nil, h.fn.Parent() != nil, h.queue == "":
		return nil
	}
	for _, l := range res.leaks {
		if l.looped {
			return nil
		}
	}
	decl, ok := h.fn.Syntax().(*ast.FuncDecl)
	if !ok || decl.Body == nil {
		return nil
	}
	assign, ok := h.stmt.(*ast.AssignStmt)
	if !ok || len(assign.Lhs) < 2 {
		return nil
	}
	itemID, ok := assign.Lhs[0].(*ast.Ident)
	flagID, ok2 := assign.Lhs[len(assign.Lhs)-1].(*ast.Ident)
	if !ok || !ok2 || itemID.Name == "_" || flagID.Name == "_" {
		return nil
	}
	info := c.pass.TypesInfo
	item, _ := objOf(info, itemID).(*types.Var)
	flag, _ := objOf(info, flagID).(*types.Var)
	if item == nil || flag == nil {
		return nil
	}
	// The check: the statement after the hand-out, at the top of the body.
	var check *ast.IfStmt
	for i, s := range decl.Body.List {
		if s == ast.Stmt(assign) && i+1 < len(decl.Body.List) {
			check, _ = decl.Body.List[i+1].(*ast.IfStmt)
		}
	}
	if check == nil || check.Init != nil || c.flagTest(check.Cond, flag, h.flagKind) != +1 || !returns(check.Body) {
		return nil
	}
	if c.writesDone(decl.Body) || c.reassigned(decl.Body, item, assign) || c.callsReleaser(h.fn) {
		return nil
	}
	indent := strings.Repeat("\t", c.pass.Fset.Position(assign.Pos()).Column-1)
	line := fmt.Sprintf("defer %s.Done(%s)", h.queue, item.Name())
	return &analysis.SuggestedFix{
		Message:   line + " after the shutdown check",
		TextEdits: []analysis.TextEdit{{Pos: check.End(), End: check.End(), NewText: []byte("\n" + indent + line)}},
	}
}

func objOf(info *types.Info, id *ast.Ident) types.Object {
	if o := info.Defs[id]; o != nil {
		return o
	}
	return info.Uses[id]
}

// returns reports whether a block ends in a return.
func returns(b *ast.BlockStmt) bool {
	if len(b.List) == 0 {
		return false
	}
	_, ok := b.List[len(b.List)-1].(*ast.ReturnStmt)
	return ok
}

// writesDone reports whether body writes the name Done anywhere: as a
// call, a method value, a field, or in a string.
func (c *checker) writesDone(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			found = found || n.Name == "Done"
		case *ast.BasicLit:
			found = found || (n.Kind == token.STRING && strings.Contains(n.Value, "Done"))
		}
		return !found
	})
	return found
}

// reassigned reports whether v is assigned anywhere but in its hand-out,
// or has its address taken.
func (c *checker) reassigned(body *ast.BlockStmt, v *types.Var, handout *ast.AssignStmt) bool {
	found := false
	info := c.pass.TypesInfo
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n == handout {
				return true
			}
			for _, l := range n.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok && objOf(info, id) == v {
					found = true
				}
			}
		case *ast.UnaryExpr:
			if id, ok := ast.Unparen(n.X).(*ast.Ident); ok && n.Op == token.AND && info.Uses[id] == v {
				found = true
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok && objOf(info, id) == v {
					found = true
				}
			}
		}
		return !found
	})
	return found
}

// callsReleaser reports whether fn, or a literal in it, calls a function
// that releases a parameter on some path.
func (c *checker) callsReleaser(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			call, ok := ins.(ssa.CallInstruction)
			if !ok {
				continue
			}
			if f := staticFunc(call.Common()); f != nil && c.releasesFact(f) != nil {
				return true
			}
		}
	}
	for _, a := range fn.AnonFuncs {
		if c.callsReleaser(a) {
			return true
		}
	}
	return false
}
