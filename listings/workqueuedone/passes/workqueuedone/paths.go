package workqueuedone

import (
	"go/ast"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/cfg"
)

// Paths. From a hand-out, every path of the control-flow graph is
// followed to an exit (a return, or the loop coming back to the hand-out),
// carrying what has happened to the item on it: released, deferred,
// handed off, forgotten, a call that can panic, the last branch taken.

// A target is what one walk looks for: the releases of one item.
type target struct {
	vars  map[*types.Var]bool // the item's variable, and those assigned from it
	exprs map[string]bool     // ... or the field it is in, as written (c.current)
	// carriers are variables assigned a value that holds the item (a struct
	// literal, a closure): sending or storing one hands the item off.
	carriers map[*types.Var]bool
	queue    *queueRef // nil accepts a Done on any queue (a helper's parameter)

	// Reaching skip again (or skipBlock, a range loop's head) means the loop
	// around the hand-out came back to it.
	skip      ast.Node
	skipBlock *cfg.Block

	shutdown     *types.Var // the flag that says nothing was handed out
	shutdownKind string
}

// What a walk knows on one path.
type pathState struct {
	deferred   token.Pos // a deferred release is pending: the defer
	releasedAt token.Pos // the release on this path
	handedOff  token.Pos // the hand-off on this path
	forgot     token.Pos // the first Forget of the item on the path
	called     bool      // a call that can panic since the hand-out
	via        token.Pos // the condition of the last branch taken
	viaTrue    bool      // ... and which side
}

// A leak is one path that leaves holding the item.
type leak struct {
	pos, end token.Pos
	forgot   token.Pos
	looped   bool // the loop came back to the hand-out
	deferIn  bool // ... with a deferred Done that waits for the return
	via      token.Pos
	viaTrue  bool
}

// A double is a second release of the item on one path.
type double struct {
	pos, end token.Pos
	first    token.Pos
	text     string // the second release as written
}

// An exposure is a Done, not deferred, after a call that can panic.
type exposure struct {
	pos  token.Pos
	text string
}

type walkResult struct {
	leaks    []leak
	released bool // some path released the item
	exposed  []exposure
	doubles  []double
	handoffs []*handoff
	returned []*ast.ReturnStmt // returns that hand the held item to the caller
	looped   bool              // some path came back to the hand-out
}

// walk follows every path from node index i of block b.
func (c *checker) walk(t *target, b *cfg.Block, i int) *walkResult {
	type key struct {
		b  *cfg.Block
		st pathState
	}
	seen := map[key]bool{}
	res := &walkResult{}
	loopBack := func(st pathState, pos token.Pos) {
		res.looped = true
		switch {
		case st.releasedAt != token.NoPos || st.handedOff != token.NoPos:
		case st.deferred != token.NoPos:
			res.leaks = append(res.leaks, leak{pos: pos, looped: true, deferIn: true, forgot: st.forgot, via: st.via, viaTrue: st.viaTrue})
		default:
			res.leaks = append(res.leaks, leak{pos: pos, looped: true, forgot: st.forgot, via: st.via, viaTrue: st.viaTrue})
		}
	}
	var visit func(b *cfg.Block, i int, st pathState, last ast.Node)
	visit = func(b *cfg.Block, i int, st pathState, last ast.Node) {
		if i == 0 {
			if b == t.skipBlock {
				loopBack(st, c.loopPos(last, b.Stmt))
				return
			}
			k := key{b, st}
			if seen[k] {
				return
			}
			seen[k] = true
		}
		for ; i < len(b.Nodes); i++ {
			n := b.Nodes[i]
			if n == t.skip {
				loopBack(st, c.loopPos(last, n))
				return
			}
			ev := c.effect(t, n, &st)
			if ev.handoff != nil && st.handedOff == token.NoPos && st.releasedAt == token.NoPos {
				st.handedOff = ev.handoff.pos
				res.handoffs = append(res.handoffs, ev.handoff)
			}
			if ev.release != nil {
				res.released = true
				held := st.releasedAt == token.NoPos && st.deferred == token.NoPos
				if !held && st.handedOff == token.NoPos {
					first := st.releasedAt
					if first == token.NoPos {
						first = st.deferred
					}
					res.doubles = append(res.doubles, double{pos: ev.release.Pos(), end: ev.release.End(), first: first, text: ev.text})
				}
				switch {
				case ev.deferred:
					if st.deferred == token.NoPos {
						st.deferred = ev.release.Pos()
					}
				default:
					if held && ev.direct && st.called && st.handedOff == token.NoPos {
						res.exposed = append(res.exposed, exposure{pos: ev.release.Pos(), text: ev.text})
					}
					if st.releasedAt == token.NoPos {
						st.releasedAt = ev.release.Pos()
					}
				}
			}
			if ev.overwritten && (st.releasedAt != token.NoPos || st.handedOff != token.NoPos) {
				return // the variable holds another item from here on
			}
			last = n
		}
		if ret := b.Return(); ret != nil {
			switch {
			case st.deferred != token.NoPos || st.releasedAt != token.NoPos || st.handedOff != token.NoPos:
			case c.returnsItem(t, ret):
				res.returned = append(res.returned, ret)
			default:
				pos, end := ret.Pos(), ret.End()
				if c.pass.Fset.File(pos) != c.pass.Fset.File(end) || end <= pos {
					end = pos // a synthetic return at the closing brace
				}
				res.leaks = append(res.leaks, leak{pos: pos, end: end, forgot: st.forgot, via: st.via, viaTrue: st.viaTrue})
			}
			return
		}
		if len(b.Succs) == 0 {
			return // a call that never returns (panic, os.Exit, klog.Fatal)
		}
		test := c.branchTest(b, t)
		var cond ast.Expr
		if len(b.Succs) == 2 && len(b.Nodes) > 0 {
			cond, _ = b.Nodes[len(b.Nodes)-1].(ast.Expr)
		}
		for j, s := range b.Succs {
			if (test > 0 && j == 0) || (test < 0 && j == 1) {
				continue // the shutdown side: nothing was handed out
			}
			next := st
			if cond != nil && test == 0 {
				next.via, next.viaTrue = cond.Pos(), j == 0
			}
			visit(s, 0, next, last)
		}
	}
	visit(b, i, pathState{}, nil)
	return res
}

// loopPos is where a path goes back round the loop: the continue that
// ends the branch it is in, if there is one, else the last statement on
// the path before the loop head (or the loop's head itself).
func (c *checker) loopPos(last, head ast.Node) token.Pos {
	if last == nil {
		return head.Pos()
	}
	best := token.NoPos
	if f := c.fileOf(last.Pos()); f != nil {
		ast.Inspect(f, func(n ast.Node) bool {
			if br, ok := n.(*ast.BranchStmt); ok && br.Tok == token.CONTINUE && br.Pos() > last.End() {
				if best == token.NoPos || br.Pos() < best {
					best = br.Pos()
				}
			}
			return true
		})
	}
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

func (c *checker) fileOf(pos token.Pos) *ast.File {
	for _, f := range c.pass.Files {
		if f.FileStart <= pos && pos <= f.FileEnd {
			return f
		}
	}
	return nil
}

// returnsItem reports whether ret hands the item back to the caller.
func (c *checker) returnsItem(t *target, ret *ast.ReturnStmt) bool {
	for _, r := range ret.Results {
		if c.refersTo(r, t) {
			return true
		}
	}
	return false
}
