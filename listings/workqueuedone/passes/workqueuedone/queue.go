package workqueuedone

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// What a queue is. A type is a queue because client-go's workqueue or
// controller-runtime's priorityqueue declares its Get and Done, never
// because of the methods' names.

// The packages whose methods make a queue. A type is a queue because its
// Get and Done are these packages' methods, not because of their names.
var queuePackages = map[string]bool{
	"k8s.io/client-go/util/workqueue":                             true,
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue": true,
}

// queueMethod returns the name of the queue method call calls (Get,
// GetWithPriority, Done or Forget) and the expression of its queue, or ""
// if call is not a call of such a method.
func queueMethod(info *types.Info, call *ast.CallExpr) (string, ast.Expr) {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return "", nil
	}
	return queueSelector(info, sel)
}

// queueSelector is queueMethod for the selector q.Method, called or not
// (a method value q.Done passed on is a release handed off).
func queueSelector(info *types.Info, sel *ast.SelectorExpr) (string, ast.Expr) {
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

// calleeOrigin is the function call calls statically, uninstantiated (a
// fact is on the generic declaration), or nil.
func calleeOrigin(info *types.Info, call *ast.CallExpr) *types.Func {
	fn := typeutil.StaticCallee(info, call)
	if fn == nil {
		return nil
	}
	return fn.Origin()
}

// receiverExpr is the receiver expression of a method call (x in x.M()),
// or nil for a function.
func receiverExpr(info *types.Info, call *ast.CallExpr) ast.Expr {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok {
		return nil
	}
	if s := info.Selections[sel]; s != nil && s.Kind() == types.MethodVal {
		return sel.X
	}
	return nil
}
