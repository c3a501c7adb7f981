package workqueuedone

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// Reports: what a walk found, said as stall:, forget:, double: and
// panic:, each naming the path it is about and quoting the Done as the
// function writes it.

func diag(pos, end token.Pos, msg string) analysis.Diagnostic {
	return analysis.Diagnostic{Pos: pos, End: end, Message: msg}
}

// check follows every path of one hand-out and reports what leaks: the
// paths that leave holding the item (stall:, forget:), the second Done on
// a path (double:), receivers of a channel it is sent on that drop it,
// hand-offs to an end it cannot see (only with -strict), and, where no
// path leaks, one Done that a panic could skip (panic:). It returns how
// many reports it made, and whether it gave up.
func (c *checker) check(h *handout) (int, bool) {
	res := c.walkOf(h, false).runFrom(h.call)
	if res.gaveUp {
		return 0, true // too many paths to follow: precise, not loud
	}
	reports := 0
	line := func(p token.Pos) int { return c.pass.Fset.Position(p).Line }
	getLine := line(h.pos)
	done := res.doneText
	switch {
	case done != "":
	case h.wrapper == nil:
		done = fmt.Sprintf("%s.Done(%s)", h.queue, h.itemName)
	default:
		done = "a Done of " + h.itemName
	}
	fix := c.fix(h, res)
	fnName := funcName(h.fn)

	// Leaks, grouped by the place they leave; each path is named by the
	// last branch it took.
	byPos := map[token.Pos][]leak{}
	for _, l := range res.leaks {
		byPos[l.pos] = append(byPos[l.pos], l)
	}
	positions := make([]token.Pos, 0, len(byPos))
	for p := range byPos {
		positions = append(positions, p)
	}
	sort.Slice(positions, func(i, j int) bool { return positions[i] < positions[j] })
	for _, p := range positions {
		ls := byPos[p]
		l := ls[0]
		forgot := token.NoPos
		for _, x := range ls {
			if x.forgot != token.NoPos && (forgot == token.NoPos || x.forgot < forgot) {
				forgot = x.forgot
			}
		}
		paths := c.pathNames(ls)
		var where string
		switch {
		case l.deferIn:
			where = fmt.Sprintf("%s the loop goes back to %s here, but defer %s runs only when %s returns",
				onPaths(paths), h.method, done, fnName)
		case l.looped:
			where = fmt.Sprintf("%s the loop goes back to %s here without %s", onPaths(paths), h.method, done)
		default:
			where = fmt.Sprintf("%s without %s", returnsHere(paths), done)
		}
		where = strings.TrimPrefix(strings.ReplaceAll(where, "  ", " "), " ")
		var msg string
		if forgot != token.NoPos {
			ft, _, _ := c.callText(c.lparenAt(forgot))
			msg = fmt.Sprintf("forget: %s on line %d resets the backoff but is not Done: %s on line %d handed out %s, and %s",
				ft, line(forgot), h.name, getLine, h.itemName, where)
		} else {
			msg = fmt.Sprintf("stall: %s on line %d hands out %s, and %s", h.name, getLine, h.itemName, where)
		}
		d := diag(l.pos, l.end, msg)
		if fix != nil {
			d.SuggestedFixes = []analysis.SuggestedFix{*fix}
		}
		if c.report(d) {
			reports++
		}
	}

	// A second Done on a path.
	seen := map[token.Pos]bool{}
	for _, d := range res.doubles {
		if seen[d.pos] || (d.first == d.pos && d.site == d.first2) {
			// The same Done reached again round a loop that does not hand
			// the item out again: its own condition usually lets it run
			// once, which the analyzer cannot know. Precise, not loud.
			continue
		}
		seen[d.pos] = true
		first := fmt.Sprintf("on line %d", line(d.first))
		if d.first2.IsValid() && d.first2 != d.first {
			first += fmt.Sprintf(", through the call on line %d", line(d.first2))
		}
		msg := fmt.Sprintf("double: %s is the second Done of %s on this path (the first is %s, after %s on line %d handed it out); if %s was added again meanwhile, each Done queues it, and two workers are handed it at once",
			d.text, h.itemName, first, h.name, getLine, h.itemName)
		if c.report(diag(d.pos, d.end, msg)) {
			reports++
		}
	}

	// Hand-offs: follow a channel to its receivers; trust what cannot be
	// seen, unless -strict.
	for _, ho := range res.handoffs {
		end := &channelEnd{unseen: "out of the analyzer's sight"}
		if ho.channel != nil || ho.param {
			end = c.channelEndOf(ho)
		}
		if end.unseen != "" {
			if strict {
				msg := fmt.Sprintf("stall: %s on line %d hands out %s, and it is %s here; the other end is %s, where no Done can be checked (-strict)",
					h.name, getLine, h.itemName, ho.what, end.unseen)
				if c.report(diag(ho.pos, token.NoPos, msg)) {
					reports++
				}
			}
			continue
		}
		reports += c.checkReceivers(h, ho, end)
	}

	// panic: only where every path calls Done: where one hands the item
	// off, a defer would be wrong there, and the advice with it.
	if reportPanic && len(res.leaks) == 0 && len(res.doubles) == 0 && len(res.handoffs) == 0 {
		reports += c.reportExposed(res, fmt.Sprintf("%s on line %d", h.name, getLine), h.itemName, h.method)
	}
	return reports, false
}

// reportExposed makes the one panic: report of an item, at the first Done
// that a panic before it could skip.
func (c *checker) reportExposed(res *walkResult, from, item, method string) int {
	if len(res.exposed) == 0 {
		return 0
	}
	first := res.exposed[0]
	for _, e := range res.exposed {
		if e.pos < first.pos {
			first = e
		}
	}
	if c.panicAt[first.pos] {
		return 0 // two hand-outs of one loop (for k, q := Get(); !q; k, q = Get()) share the Done
	}
	c.panicAt[first.pos] = true
	advice := "defer it after the shutdown check"
	if res.looped || first.inLoop {
		// A defer in the loop would wait for the function to return.
		advice = "move the work after " + method + " into a function that defers it"
	}
	msg := fmt.Sprintf("panic: %s is not deferred: a panic between %s and here leaves %s never Done; %s",
		first.text, from, item, advice)
	if c.report(diag(first.pos, token.NoPos, msg)) {
		return 1
	}
	return 0
}

// checkReceivers follows each receiver of the channel an item is sent on,
// as a hand-out of its own, and reports one that does not release what it
// received, once per receiver.
func (c *checker) checkReceivers(h *handout, ho *handoff, end *channelEnd) int {
	line := func(p token.Pos) int { return c.pass.Fset.Position(p).Line }
	reports := 0
	for _, r := range end.receivers {
		if c.receiverAt[r.pos] {
			continue
		}
		c.receiverAt[r.pos] = true
		var res *walkResult
		if r.item != nil {
			res = c.walkReceiver(r)
			if res.gaveUp {
				continue
			}
		}
		name := nameOf(r.item)
		if name == "" {
			name = "it"
		}
		if res != nil && len(res.leaks) == 0 {
			// The receiver's own panic: report is about the receiver's
			// code, not the hand-out's: it is not counted as the hand-out's.
			if reportPanic && len(res.doubles) == 0 && len(res.handoffs) == 0 {
				c.reportExposed(res, fmt.Sprintf("the receive on line %d", line(r.pos)), name, "the receive")
			}
			continue
		}
		what := "drops it"
		if r.item != nil {
			what = fmt.Sprintf("does not call Done on %s on every path", name)
		}
		msg := fmt.Sprintf("stall: this receive takes %s, which %s on line %d handed out and line %d %s, and %s",
			h.itemName, h.name, line(h.pos), line(ho.pos), ho.what, what)
		if c.report(diag(r.pos, token.NoPos, msg)) {
			reports++
		}
	}
	return reports
}

// lparenAt is the Lparen of the call that starts at pos.
func (c *checker) lparenAt(pos token.Pos) token.Pos {
	for lp, call := range c.callAt {
		if call.Pos() == pos {
			return lp
		}
	}
	return pos
}

// pathNames names each leaking path by the last branch it took, or ""
// for a path that took none.
func (c *checker) pathNames(ls []leak) []string {
	type side struct{ t, f bool }
	sides := map[token.Pos]*side{}
	var order []token.Pos
	for _, l := range ls {
		if l.via == token.NoPos {
			continue
		}
		if sides[l.via] == nil {
			sides[l.via] = &side{}
			order = append(order, l.via)
		}
		if l.viaTrue {
			sides[l.via].t = true
		} else {
			sides[l.via].f = true
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	var out []string
	for _, p := range order {
		cond, line := c.condText(p), c.pass.Fset.Position(p).Line
		switch s := sides[p]; {
		case s.t && s.f:
			out = append(out, fmt.Sprintf("through %s (line %d), either way,", cond, line))
		default:
			out = append(out, fmt.Sprintf("where %s (line %d) is %t", cond, line, s.t))
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// onPaths is "on the path where …," for a loop message, or "" when no
// branch names it.
func onPaths(names []string) string {
	if len(names) == 1 && names[0] == "" {
		return ""
	}
	return strings.TrimSuffix("on the "+pathsPhrase(names), ",") + ","
}

func returnsHere(names []string) string {
	if len(names) == 1 && names[0] == "" {
		return "this path returns"
	}
	if len(names) == 1 && !strings.HasPrefix(names[0], "through") {
		return "the " + pathsPhrase(names) + " returns here"
	}
	return "the " + pathsPhrase(names) + " return here"
}

func pathsPhrase(names []string) string {
	if len(names) == 1 && !strings.HasPrefix(names[0], "through") {
		return "path " + names[0]
	}
	if len(names) == 1 {
		return "paths " + names[0]
	}
	return "paths " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// condText is the condition at pos as written, shortened for a message.
func (c *checker) condText(pos token.Pos) string {
	var cond ast.Expr
	if f := c.fileOf(pos); f != nil {
		ast.Inspect(f, func(n ast.Node) bool {
			if cond != nil || n == nil || pos < n.Pos() || n.End() <= pos {
				return false
			}
			if e, ok := n.(ast.Expr); ok && e.Pos() == pos {
				cond = e // the outermost expression that starts there
				return false
			}
			return true
		})
	}
	if cond == nil {
		return "the condition"
	}
	s := types.ExprString(cond)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
