package workqueuedone

import (
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Calls: a queue's Done or Forget, a function whose facts say it releases
// or stores a parameter, a function literal walked in place (called,
// deferred or started with go), and what an argument lets go of.

// maxDepth is how deep literals are walked in place (a literal in a
// literal in a literal).
const maxDepth = 4

// A call's mode: called, deferred or started.
type mode int

const (
	called mode = iota
	deferred
	started
)

// call handles a call on the path. It reports whether the walk went on in
// a literal's continuation (the caller must then stop).
func (w *walk) call(fr *frame, b *ssa.BasicBlock, i int, ins *ssa.Call, st *state, last token.Pos, k cont) bool {
	c := w.c
	cc := ins.Common()
	if w.touch(fr, cc, ins.Pos(), st, called) {
		return false
	}
	if callee, bindings := w.literalOf(fr, cc.Value, st); callee != nil && fr.depth < maxDepth {
		id := strconv.Itoa(c.ids.of(ins))
		snaps := make([]argSnap, len(cc.Args))
		for j, a := range cc.Args {
			snaps[j] = w.snap(fr, a, st)
		}
		w.inline(fr, callee, bindings, snaps, *st, false, last, ins.Pos(), func(after state, results []pathSet) {
			for j, r := range results {
				key := id
				if len(results) > 1 {
					key += "#" + strconv.Itoa(j)
				}
				after.set("s"+key, r.encode())
				n, _ := after.get("r#" + strconv.Itoa(j))
				after.set("r#"+strconv.Itoa(j), "")
				after.set("n"+key, n)
			}
			w.block(fr, b, i+1, after, last, k)
		})
		return true
	}
	w.escapes(fr, cc, ins.Pos(), st)
	if canPanic(cc) {
		st.called = true
	}
	return false
}

// touch applies a call that acts on the item by what it is: a queue's Done
// or Forget, or a function with facts. It reports whether the call was
// one of those (and so needs no more looking at).
func (w *walk) touch(fr *frame, cc *ssa.CallCommon, pos token.Pos, st *state, m mode) bool {
	c := w.c
	method, recv := queueCall(cc)
	args := callArgs(cc)
	prefix := ""
	switch m {
	case deferred:
		prefix = "defer "
	case started:
		prefix = "go "
	}
	text, start, end := c.callText(pos)
	if m != called {
		start = pos // the defer or go keyword
	}
	switch method {
	case "Done":
		if len(args) == 1 && w.isItem(fr, args[0], st) && w.queueMatches(fr, recv) {
			w.release(fr, st, start, end, prefix+text, m == deferred, m == called || m == deferred)
		}
		return true
	case "Forget":
		if len(args) == 1 && w.isItem(fr, args[0], st) && st.forgot == token.NoPos {
			st.forgot = start
		}
		return true
	case "Get", "GetWithPriority":
		return true
	}
	if method == "" && w.helper && cc.IsInvoke() && cc.Method.Name() == "Done" && len(args) == 1 && w.isItem(fr, args[0], st) {
		// A helper's parameter, finished through an interface the helper
		// declares: its caller passes the queue.
		w.release(fr, st, start, end, prefix+text, m == deferred, false)
		return true
	}
	fn := staticFunc(cc)
	if fn == nil {
		return false
	}
	if r := c.releasesFact(fn); r != nil && w.factReleases(fr, fn, r, cc, args, st) {
		w.release(fr, st, start, end, prefix+text, m == deferred, false)
		return true
	}
	if s := c.storesFact(fn); s != nil {
		for _, j := range s.Params {
			if j < len(args) && !c.paths(w, fr, args[j], st).empty() {
				w.handOff(st, &handoff{pos: c.stmtPos(pos), what: "given to " + c.funText(pos) + ", which stores it"})
				return true
			}
		}
	}
	return false
}

// factReleases reports whether a call of fn, which releases the
// parameters r names on every path, releases the item.
func (w *walk) factReleases(fr *frame, fn *types.Func, r *releases, cc *ssa.CallCommon, args []ssa.Value, st *state) bool {
	// A method of the wrapper's own type must be called on the wrapper
	// the item came from (w.Done(item), not other.Done(item)).
	if w.wrapperType != nil && !cc.IsInvoke() && len(cc.Args) > 0 && len(args) < len(cc.Args) {
		if sameNamed(cc.Args[0].Type(), w.wrapperType) && !w.queueMatches(fr, cc.Args[0]) {
			return false
		}
	}
	for _, j := range r.Params {
		if j < len(args) && w.isItem(fr, args[j], st) {
			return true
		}
	}
	for _, f := range r.Fields {
		param, path, _ := strings.Cut(f, ".")
		j, err := strconv.Atoi(param)
		if err != nil || j >= len(args) {
			continue
		}
		for _, p := range w.c.paths(w, fr, args[j], st) {
			if p == itself+path {
				return true
			}
		}
	}
	return false
}

// escapes looks at what a call that is not otherwise understood lets go
// of: a function literal that finishes the item, or the queue's Done as a
// value, passed on. Whoever holds it may finish the item: a hand-off.
func (w *walk) escapes(fr *frame, cc *ssa.CallCommon, pos token.Pos, st *state) {
	c := w.c
	for _, a := range cc.Args {
		if c.paths(w, fr, a, st).finishes() {
			w.handOff(st, &handoff{pos: c.stmtPos(pos), what: "captured by a function literal that finishes it, passed on"})
			return
		}
		if mc, ok := a.(*ssa.MakeClosure); ok && len(mc.Bindings) == 1 {
			if f, ok := mc.Fn.(*ssa.Function); ok && strings.HasSuffix(f.Name(), "$bound") {
				if obj, ok := f.Object().(*types.Func); ok && obj.Name() == "Done" && obj.Pkg() != nil &&
					queuePackages[obj.Pkg().Path()] && w.queueMatches(fr, mc.Bindings[0]) {
					w.handOff(st, &handoff{pos: c.stmtPos(pos), what: "left to whoever calls " + c.exprText(a, a.Pos()) + ", passed on"})
					return
				}
			}
		}
	}
}

// deferCall registers a deferred call: a release (it runs at the
// return, and no path can skip it), or a literal, walked at the return.
func (w *walk) deferCall(fr *frame, ins *ssa.Defer, st *state) {
	c := w.c
	cc := ins.Common()
	if w.touch(fr, cc, ins.Pos(), st, deferred) {
		return
	}
	if callee, _ := w.literalOf(fr, cc.Value, st); callee != nil && fr.depth < maxDepth {
		id := strconv.Itoa(c.ids.of(ins))
		for j, a := range cc.Args {
			s := w.snap(fr, a, st)
			v := s.paths.encode()
			if v == "" {
				v = "-"
			}
			st.set("d"+id+"#"+strconv.Itoa(j), v+"/"+s.boolc)
		}
		if st.defers != "" {
			st.defers += "|"
		}
		st.defers += strconv.Itoa(fr.depth) + ":" + id
		return
	}
	w.escapes(fr, cc, ins.Pos(), st)
}

// runDefers runs the frame's deferred literals, last first, then goes on
// after the RunDefers at index i. It reports whether it took the walk on.
func (w *walk) runDefers(fr *frame, b *ssa.BasicBlock, i int, st *state, last token.Pos, k cont) bool {
	c := w.c
	entries := strings.Split(st.defers, "|")
	top := len(entries) - 1
	if st.defers == "" || !strings.HasPrefix(entries[top], strconv.Itoa(fr.depth)+":") {
		return false
	}
	_, idText, _ := strings.Cut(entries[top], ":")
	st.defers = strings.Join(entries[:top], "|")
	id, _ := strconv.Atoi(idText)
	d := c.ids.vals[id].(*ssa.Defer)
	callee, bindings := w.literalOf(fr, d.Call.Value, st)
	snaps := make([]argSnap, len(d.Call.Args))
	for j, a := range d.Call.Args {
		v, _ := st.get("d" + idText + "#" + strconv.Itoa(j))
		p, bc, _ := strings.Cut(v, "/")
		if p == "-" {
			p = ""
		}
		snaps[j] = argSnap{paths: decodePaths(p), key: c.valueKey(fr, a), boolc: bc}
	}
	w.inline(fr, callee, bindings, snaps, *st, true, last, d.Pos(), func(after state, _ []pathSet) {
		if !w.runDefers(fr, b, i, &after, last, k) {
			w.block(fr, b, i+1, after, last, k)
		}
	})
	return true
}

// goCall is a go statement: a release if what it starts releases the item
// on every path (or hands it on).
func (w *walk) goCall(fr *frame, ins *ssa.Go, st *state) {
	c := w.c
	cc := ins.Common()
	if w.touch(fr, cc, ins.Pos(), st, started) {
		return
	}
	callee, bindings := w.literalOf(fr, cc.Value, st)
	if callee == nil || fr.depth >= maxDepth {
		w.escapes(fr, cc, ins.Pos(), st)
		return
	}
	snaps := make([]argSnap, len(cc.Args))
	for j, a := range cc.Args {
		snaps[j] = w.snap(fr, a, st)
	}
	sub := *st
	sub.releasedAt, sub.deferredAt, sub.handedOff, sub.called = token.NoPos, token.NoPos, token.NoPos, false
	all, any := true, false
	w.inline(fr, callee, bindings, snaps, sub, false, token.NoPos, ins.Pos(), func(after state, _ []pathSet) {
		any = true
		if after.releasedAt == token.NoPos && after.handedOff == token.NoPos {
			all = false
		}
	})
	if any && all {
		_, _, end := c.callText(ins.Pos())
		w.release(fr, st, ins.Pos(), end, "go "+c.stmtText(ins.Pos()), false, false)
	}
}

// inline walks a function literal in place, from its entry, and calls k
// at each of its returns.
func (w *walk) inline(fr *frame, callee *ssa.Function, bindings []ssa.Value, args []argSnap, st state, runDeferred bool, last, site token.Pos, k cont) {
	if len(callee.Blocks) == 0 {
		k(st, nil)
		return
	}
	nf := &frame{
		fn: callee, parent: fr, depth: fr.depth + 1, runDeferred: runDeferred,
		params: map[*ssa.Parameter]argSnap{}, free: map[*ssa.FreeVar]string{}, site: site,
	}
	if fr.parent != nil {
		nf.site = fr.site
	}
	for j, p := range callee.Params {
		if j < len(args) {
			nf.params[p] = args[j]
		}
	}
	for j, fv := range callee.FreeVars {
		if j < len(bindings) {
			nf.free[fv] = w.c.valueKey(fr, bindings[j])
		}
	}
	w.steps++
	if w.steps > maxSteps {
		w.res.gaveUp = true
		return
	}
	w.block(nf, callee.Blocks[0], 0, st, last, func(after state, results []pathSet) {
		// A defer the literal made has run at its return.
		if after.deferredAt != token.NoPos && after.deferredDepth == nf.depth {
			if after.releasedAt == token.NoPos {
				after.releasedAt = after.deferredAt
			}
			after.deferredAt, after.deferredDepth = token.NoPos, 0
		}
		k(after, results)
	})
}

// snap is an argument as a call sees it.
func (w *walk) snap(fr *frame, v ssa.Value, st *state) argSnap {
	return argSnap{paths: w.c.paths(w, fr, v, st), key: w.c.valueKey(fr, v), boolc: w.c.boolConst(fr, v, st)}
}

// literalOf is literal, or the literal a variable holds on this path.
func (w *walk) literalOf(fr *frame, v ssa.Value, st *state) (*ssa.Function, []ssa.Value) {
	if f, b := literal(v); f != nil {
		return f, b
	}
	if load, ok := v.(*ssa.UnOp); ok && load.Op == token.MUL {
		if id, ok := st.get("l" + w.c.valueKey(fr, load.X)); ok {
			if n, err := strconv.Atoi(id); err == nil {
				if mc, ok := w.c.ids.vals[n].(*ssa.MakeClosure); ok {
					return literal(mc)
				}
			}
		}
	}
	return nil, nil
}

// literal is the function literal v calls, and what it captured, or nil.
func literal(v ssa.Value) (*ssa.Function, []ssa.Value) {
	switch v := v.(type) {
	case *ssa.MakeClosure:
		if f, ok := v.Fn.(*ssa.Function); ok && f.Parent() != nil {
			return f, v.Bindings
		}
	case *ssa.Function:
		if v.Parent() != nil {
			return v, nil
		}
	}
	return nil, nil
}

// closureFinishes reports whether the literal mc captures the item and
// releases it: a Done (or a function that releases) in its body, or in a
// literal inside it, is given what the literal captured. Passed on, it is
// a callback that finishes the item.
func (c *checker) closureFinishes(w *walk, fr *frame, mc *ssa.MakeClosure, st *state) bool {
	f, ok := mc.Fn.(*ssa.Function)
	if !ok || f.Parent() == nil || !c.mayRelease(f) || fr.depth >= maxDepth {
		return false
	}
	nf := &frame{fn: f, parent: fr, depth: fr.depth + 1, params: map[*ssa.Parameter]argSnap{}, free: map[*ssa.FreeVar]string{}}
	for j, fv := range f.FreeVars {
		if j < len(mc.Bindings) {
			nf.free[fv] = c.valueKey(fr, mc.Bindings[j])
		}
	}
	for _, b := range f.Blocks {
		for _, ins := range b.Instrs {
			call, ok := ins.(ssa.CallInstruction)
			if !ok {
				continue
			}
			cc := call.Common()
			args := callArgs(cc)
			releasing := c.releasingCall(cc)
			if inner, ok := cc.Value.(*ssa.MakeClosure); ok && c.closureFinishes(w, nf, inner, st) {
				return true
			}
			if !releasing {
				continue
			}
			for _, a := range args {
				if c.pathsDepth(w, nf, a, st, 24).holds() {
					return true
				}
			}
		}
	}
	return false
}

// releasingCall reports whether a call can release an item it is given:
// a queue's Done, a Done through an interface, or a function whose facts
// say it releases a parameter.
func (c *checker) releasingCall(cc *ssa.CallCommon) bool {
	if m, _ := queueCall(cc); m == "Done" {
		return true
	}
	if cc.IsInvoke() && cc.Method.Name() == "Done" {
		return true
	}
	f := staticFunc(cc)
	return f != nil && c.releasesFact(f) != nil
}

// mayRelease reports whether fn, or a literal in it, calls a Done of a
// queue, a Done through an interface, or a function known to release.
func (c *checker) mayRelease(fn *ssa.Function) bool {
	if r, ok := c.releasing[fn]; ok {
		return r
	}
	c.releasing[fn] = false
	found := false
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			call, ok := ins.(ssa.CallInstruction)
			if !ok {
				continue
			}
			cc := call.Common()
			if c.releasingCall(cc) {
				found = true
			} else if lit, _ := literal(cc.Value); lit != nil && c.mayRelease(lit) {
				found = true
			}
		}
	}
	for _, a := range fn.AnonFuncs {
		if !found && c.mayRelease(a) {
			found = true
		}
	}
	c.releasing[fn] = found
	return found
}

// The builtins that cannot panic: a call of one between Get and Done
// leaves nothing a recover could strand.
var safeBuiltins = map[string]bool{
	"len": true, "cap": true, "append": true, "copy": true, "delete": true,
	"min": true, "max": true, "new": true, "clear": true, "complex": true,
	"real": true, "imag": true, "print": true, "println": true,
}

// canPanic reports whether a call may panic: any call but a builtin of
// safeBuiltins, a method of the queue, or a mutex's Lock and Unlock (an
// unlock of an unlocked mutex is a fatal error, which no recover sees).
func canPanic(cc *ssa.CallCommon) bool {
	if b, ok := cc.Value.(*ssa.Builtin); ok {
		return !safeBuiltins[b.Name()]
	}
	var fn *types.Func
	if cc.IsInvoke() {
		fn = cc.Method
	} else {
		fn = staticFunc(cc)
	}
	if fn == nil || fn.Pkg() == nil {
		return true
	}
	switch {
	case queuePackages[fn.Pkg().Path()]:
		return false
	case fn.Pkg().Path() == "sync":
		switch fn.Name() {
		case "Lock", "Unlock", "RLock", "RUnlock":
			return false
		}
	}
	return true
}

// staticFunc is the function a call calls statically, uninstantiated (a
// fact is on the generic declaration), or nil.
func staticFunc(cc *ssa.CallCommon) *types.Func {
	if cc.IsInvoke() {
		return nil
	}
	f, ok := cc.Value.(*ssa.Function)
	if !ok {
		return nil
	}
	if o := f.Origin(); o != nil {
		f = o
	}
	obj, _ := f.Object().(*types.Func)
	if obj == nil {
		return nil
	}
	return obj.Origin()
}

// queueCall returns the queue method a call calls (Get, GetWithPriority,
// Done or Forget) and its receiver, or "" if it calls none.
func queueCall(cc *ssa.CallCommon) (string, ssa.Value) {
	var fn *types.Func
	var recv ssa.Value
	switch {
	case cc.IsInvoke():
		fn, recv = cc.Method, cc.Value
	case boundMethod(cc.Value) != nil:
		// q.Done kept as a value and called: the method, on its receiver.
		mc := cc.Value.(*ssa.MakeClosure)
		fn, recv = boundMethod(cc.Value), mc.Bindings[0]
	default:
		f := staticFunc(cc)
		if f == nil || len(cc.Args) == 0 {
			return "", nil
		}
		if sig, ok := f.Type().(*types.Signature); !ok || sig.Recv() == nil {
			return "", nil
		}
		fn, recv = f, cc.Args[0]
	}
	if fn == nil || fn.Pkg() == nil || !queuePackages[fn.Pkg().Path()] {
		return "", nil
	}
	switch fn.Name() {
	case "Get", "GetWithPriority", "Done", "Forget":
	default:
		return "", nil
	}
	if obj, _, _ := types.LookupFieldOrMethod(recv.Type(), true, fn.Pkg(), "Done"); obj == nil {
		return "", nil
	}
	return fn.Name(), recv
}

// boundMethod is the method a method value (q.Done, not called) is, or nil.
func boundMethod(v ssa.Value) *types.Func {
	mc, ok := v.(*ssa.MakeClosure)
	if !ok || len(mc.Bindings) != 1 {
		return nil
	}
	f, ok := mc.Fn.(*ssa.Function)
	if !ok || !strings.HasSuffix(f.Name(), "$bound") {
		return nil
	}
	m, _ := f.Object().(*types.Func)
	return m
}

// callArgs is a call's arguments without its receiver.
func callArgs(cc *ssa.CallCommon) []ssa.Value {
	if cc.IsInvoke() || boundMethod(cc.Value) != nil {
		return cc.Args
	}
	if f := staticFunc(cc); f != nil {
		if sig, ok := f.Type().(*types.Signature); ok && sig.Recv() != nil && len(cc.Args) > 0 {
			return cc.Args[1:]
		}
	}
	return cc.Args
}

// sameNamed reports whether t is named (or a pointer to) the same
// generic-origin type as n.
func sameNamed(t types.Type, n *types.Named) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	tn, ok := t.(*types.Named)
	return ok && tn.Origin() == n.Origin()
}

// namedRecv is the named type of fn's receiver, or nil.
func namedRecv(fn *types.Func) *types.Named {
	sig, _ := fn.Type().(*types.Signature)
	if sig == nil || sig.Recv() == nil {
		return nil
	}
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := t.(*types.Named)
	return n
}
