package workqueuedone

import (
	"fmt"
	"go/ast"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// The suggested fix: one line, offered only where it cannot be wrong.

// fix is the one line that releases the item on every path, where there
// is one and it is safe: defer q.Done(item) right after the shutdown
// check. It is not offered
//
//   - when some path already releases the item (a defer would add a second
//     Done there);
//   - when a path hands the item off (its other end calls Done);
//   - when the item or the queue has another name in the function (a Done
//     through that name may already release it);
//   - in a loop (a defer in a loop runs only at the return);
//   - for an item from a wrapper (its Done may be the wrapper's);
//   - when the hand-out and its check are not statements of the body.
func (c *checker) fix(h *handout, t *target, fn funcInfo, res *walkResult) *analysis.SuggestedFix {
	switch {
	case res.released, len(res.handoffs) > 0, res.looped, len(res.returned) > 0,
		h.shutdown == nil, h.item == nil, h.wrapper != nil,
		len(t.vars) != 1, len(t.queue.exprs) != 1, len(t.carriers) > 0:
		return nil
	}
	for _, l := range res.leaks {
		if l.looped {
			return nil
		}
	}
	body := fn.body
	for i, s := range body.List {
		if s != h.stmt || i+1 >= len(body.List) {
			continue
		}
		ifs, ok := body.List[i+1].(*ast.IfStmt)
		if !ok || ifs.Init != nil || c.flagTest(ifs.Cond, h.shutdown, h.shutdownKind) != +1 {
			return nil
		}
		indent := strings.Repeat("\t", c.pass.Fset.Position(s.Pos()).Column-1)
		line := fmt.Sprintf("defer %s.Done(%s)", h.queue, h.item.Name())
		return &analysis.SuggestedFix{
			Message:   line + " after the shutdown check",
			TextEdits: []analysis.TextEdit{{Pos: ifs.End(), End: ifs.End(), NewText: []byte("\n" + indent + line)}},
		}
	}
	return nil
}
