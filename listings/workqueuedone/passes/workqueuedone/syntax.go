package workqueuedone

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ast/astutil"
	"golang.org/x/tools/go/ssa"
)

// Syntax: a report is made where the source says it, and quotes the
// source: the SSA form gives the positions, the files the text.

// enclosing is the innermost nodes around pos, innermost first.
func (c *checker) enclosing(pos token.Pos) []ast.Node {
	f := c.fileOf(pos)
	if f == nil || !pos.IsValid() {
		return nil
	}
	path, _ := astutil.PathEnclosingInterval(f, pos, pos)
	return path
}

// simpleAt is the statement, or the condition of an if, for or switch,
// that pos is in: where a path is, as a reader would point to it.
func (c *checker) simpleAt(pos token.Pos) ast.Node {
	path := c.enclosing(pos)
	for i, n := range path {
		switch n := n.(type) {
		case *ast.ExprStmt, *ast.AssignStmt, *ast.IncDecStmt, *ast.SendStmt, *ast.DeferStmt,
			*ast.GoStmt, *ast.ReturnStmt, *ast.DeclStmt, *ast.BranchStmt:
			return n
		case ast.Expr:
			if i+1 < len(path) {
				switch p := path[i+1].(type) {
				case *ast.IfStmt:
					if p.Cond == n {
						return n
					}
				case *ast.ForStmt:
					if p.Cond == n {
						return n
					}
				case *ast.SwitchStmt:
					if p.Tag == n {
						return n
					}
				case *ast.RangeStmt:
					if p.X == n {
						return p
					}
				}
			}
		case *ast.RangeStmt, *ast.SelectStmt:
			return n
		}
	}
	return nil
}

// stmtPos is where the statement pos is in starts.
func (c *checker) stmtPos(pos token.Pos) token.Pos {
	if n := c.simpleAt(pos); n != nil {
		return n.Pos()
	}
	return pos
}

// stmtText is the statement pos is in, as written.
func (c *checker) stmtText(pos token.Pos) string {
	switch n := c.simpleAt(pos).(type) {
	case *ast.GoStmt:
		return types.ExprString(n.Call)
	case *ast.DeferStmt:
		return types.ExprString(n.Call)
	case *ast.ExprStmt:
		return types.ExprString(n.X)
	}
	return "the call"
}

// callText is the call whose Lparen (or defer or go keyword) is at pos,
// as written, with where it starts and ends.
func (c *checker) callText(pos token.Pos) (string, token.Pos, token.Pos) {
	call := c.callAt[pos]
	if call == nil {
		switch n := c.simpleAt(pos).(type) {
		case *ast.DeferStmt:
			call = n.Call
		case *ast.GoStmt:
			call = n.Call
		}
	}
	if call == nil {
		return "the call", pos, pos
	}
	return types.ExprString(call), call.Pos(), call.End()
}

// funText is the function a call at pos calls, as written.
func (c *checker) funText(pos token.Pos) string {
	if call := c.callAt[pos]; call != nil {
		return types.ExprString(call.Fun)
	}
	return "a function"
}

// exprText is the source of v, found from a debug reference in its
// function, or from the innermost expression at pos.
func (c *checker) exprText(v ssa.Value, pos token.Pos) string {
	if e := debugExpr(v); e != nil {
		return types.ExprString(e)
	}
	for _, n := range c.enclosing(pos) {
		switch n := n.(type) {
		case *ast.SendStmt:
			return types.ExprString(n.Chan)
		case ast.Expr:
			return types.ExprString(n)
		}
	}
	return "a value"
}

// debugExpr is the expression a debug reference names v by, if any.
func debugExpr(v ssa.Value) ast.Expr {
	if v == nil {
		return nil
	}
	refs := v.Referrers()
	if refs == nil {
		return nil
	}
	for _, r := range *refs {
		if d, ok := r.(*ssa.DebugRef); ok && d.X == v {
			return d.Expr
		}
	}
	return nil
}

// nameOf is the variable v is assigned to, as written, or "".
func nameOf(v ssa.Value) string {
	if v == nil || v.Referrers() == nil {
		return ""
	}
	for _, r := range *v.Referrers() {
		if d, ok := r.(*ssa.DebugRef); ok && d.X == v {
			if id, ok := d.Expr.(*ast.Ident); ok {
				return id.Name
			}
		}
	}
	return ""
}

// storeTarget is what the assignment at pos stores into, as written.
func (c *checker) storeTarget(pos token.Pos) string {
	for _, n := range c.enclosing(pos) {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Lhs) == 1 {
				return types.ExprString(n.Lhs[0])
			}
			for _, l := range n.Lhs {
				if l.Pos() <= pos && pos <= l.End() {
					return types.ExprString(l)
				}
			}
			return types.ExprString(n.Lhs[0])
		case *ast.IndexExpr:
			return types.ExprString(n)
		case *ast.KeyValueExpr:
			return "a composite literal"
		}
	}
	return "memory"
}

// condPos is where the condition of the if that ends block b is written.
func (c *checker) condPos(b *ssa.BasicBlock, cond ssa.Value) token.Pos {
	for _, ins := range b.Instrs {
		if d, ok := ins.(*ssa.DebugRef); ok && d.X == cond {
			return d.Expr.Pos()
		}
	}
	if e := debugExpr(cond); e != nil {
		return e.Pos()
	}
	return token.NoPos
}

// closingBrace is the closing brace of fn's body: where a function that
// falls off its end returns.
func (c *checker) closingBrace(fn *ssa.Function) token.Pos {
	switch s := fn.Syntax().(type) {
	case *ast.FuncDecl:
		return s.Body.Rbrace
	case *ast.FuncLit:
		return s.Body.Rbrace
	}
	return fn.Pos()
}

// loopPos is where a path goes back round the loop: the continue that
// ends the branch it is in, if there is one, else the last statement on
// the path before the loop head.
func (c *checker) loopPos(last token.Pos) token.Pos {
	n := c.simpleAt(last)
	if n == nil {
		return last
	}
	best := token.NoPos
	if f := c.fileOf(last); f != nil {
		ast.Inspect(f, func(x ast.Node) bool {
			if br, ok := x.(*ast.BranchStmt); ok && br.Tok == token.CONTINUE && br.Pos() > n.End() {
				if best == token.NoPos || br.Pos() < best {
					best = br.Pos()
				}
			}
			return true
		})
	}
	if best != token.NoPos && c.pass.Fset.Position(best).Line-c.pass.Fset.Position(n.End()).Line <= 2 {
		return best
	}
	return n.Pos()
}
