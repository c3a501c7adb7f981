package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
)

// The shutdown check. On its shutdown side the queue handed nothing out
// (Get returns the zero item), so no path through it is followed. The
// walk reads it on SSA (walk.flagTest), where && and || are branches of
// their own; here it is read on the syntax, for a helper that returns the
// flag and for the suggested fix.

// shutdownFlag is the fact that a function returns whether the queue shut
// down, given the flag as its parameter Param: func stopped(quit bool)
// bool { return quit }. Sign is +1 if it returns the flag, -1 if its
// negation.
type shutdownFlag struct {
	Param int
	Sign  int
}

func (*shutdownFlag) AFact() {}
func (f *shutdownFlag) String() string {
	return fmt.Sprintf("shutdownFlag[%d]%+d", f.Param, f.Sign)
}

// flagTest is +1 if cond is true only when nothing was handed out (quit,
// !ok, err != nil), -1 if cond is false only then (!quit, ok, err == nil),
// and 0 if cond does not say. kind is how v says it (handsOut.FlagKind).
func (c *checker) flagTest(cond ast.Expr, v *types.Var, kind string) int {
	info := c.pass.TypesInfo
	switch e := ast.Unparen(cond).(type) {
	case *ast.Ident:
		if info.Uses[e] != v {
			return 0
		}
		switch kind {
		case "shutdown":
			return +1
		case "ok":
			return -1
		}
	case *ast.UnaryExpr:
		if e.Op == token.NOT {
			return -c.flagTest(e.X, v, kind)
		}
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND:
			// True only if both are: true means shutdown if either says so.
			if c.flagTest(e.X, v, kind) > 0 || c.flagTest(e.Y, v, kind) > 0 {
				return +1
			}
		case token.LOR:
			// False only if both are: false means shutdown if either says so.
			if c.flagTest(e.X, v, kind) < 0 || c.flagTest(e.Y, v, kind) < 0 {
				return -1
			}
		case token.EQL, token.NEQ:
			x, y := e.X, e.Y
			if isConst(info, x) {
				x, y = y, x
			}
			sign := 0
			if kind == "error" && isNil(info, y) {
				if id, ok := ast.Unparen(x).(*ast.Ident); ok && info.Uses[id] == v {
					sign = +1 // err != nil
				}
				if e.Op == token.EQL {
					sign = -sign
				}
				return sign
			}
			tv := info.Types[y]
			if tv.Value == nil || tv.Value.Kind() != constant.Bool {
				return 0
			}
			sign = c.flagTest(x, v, kind)
			if !constant.BoolVal(tv.Value) {
				sign = -sign
			}
			if e.Op == token.NEQ {
				sign = -sign
			}
			return sign
		}
	case *ast.CallExpr:
		// A helper that returns the flag, or its negation.
		fn := calleeOrigin(info, e)
		if fn == nil {
			return 0
		}
		f := c.flagFact(fn)
		if f == nil || f.Param >= len(e.Args) {
			return 0
		}
		return f.Sign * c.flagTest(e.Args[f.Param], v, kind)
	}
	return 0
}

func isConst(info *types.Info, e ast.Expr) bool {
	tv := info.Types[e]
	return tv.Value != nil || tv.IsNil()
}

func isNil(info *types.Info, e ast.Expr) bool {
	return info.Types[e].IsNil()
}

// flagFact is the shutdownFlag fact of fn, from this package or imported.
func (c *checker) flagFact(fn *types.Func) *shutdownFlag {
	return factOf(c, c.flagHelpers, fn)
}

// flagHelper says whether d is a helper that returns its bool parameter,
// or its negation: a body of one return statement, of one bool result,
// that tests a parameter the way flagTest reads a shutdown flag.
func (c *checker) flagHelper(d *ast.FuncDecl) *shutdownFlag {
	if d.Body == nil || len(d.Body.List) != 1 || d.Type.Results == nil {
		return nil
	}
	ret, ok := d.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return nil
	}
	for i, p := range c.paramVars(d.Type) {
		if p == nil || !isBool(p.Type()) {
			continue
		}
		if s := c.flagTest(ret.Results[0], p, "shutdown"); s != 0 {
			return &shutdownFlag{Param: i, Sign: s}
		}
	}
	return nil
}
