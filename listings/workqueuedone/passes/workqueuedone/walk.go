package workqueuedone

import (
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Paths. A walk follows every path of one item through the SSA form of the
// function it is handed out in: from the hand-out (or a receive, or a
// parameter, when a function's facts are worked out) to a return, or to
// the hand-out again round a loop. Function literals the function calls,
// defers or starts are walked in place, with the cells of the variables
// they capture, so a local closure that finishes the item is followed,
// not trusted. Deferred literals run at the return, in the state the
// path reached: a release flag they read is read as the path left it.

// A walk is the search for one item.
type walk struct {
	c        *checker
	fn       *ssa.Function // the function the item is handed out in
	root     ssa.Value     // the value that is the item...
	rootPath string        // ... at this access path (itself, or a field)
	again    ssa.Instruction
	// rootKey is the root's key when the item is a part of a reference (a
	// field of a *work parameter): a store below it overwrites that part.
	rootKey  string
	flag     ssa.Value // the shutdown flag, or nil
	flagKind string    // "shutdown", "ok" or "error"
	// For an item received in a select: its index, and the case's number.
	selIndex ssa.Value
	selCase  int

	queue   string // the queue's key; "" accepts a Done on any queue
	wrapper bool   // the item came from a wrapper: a Done on a field of it counts
	// wrapperType is the wrapper's receiver type, for a wrapper method.
	wrapperType *types.Named
	helper      bool // a parameter's walk: a Done through any interface counts
	home        [2]token.Pos
	facts       bool // working out facts: no channel is followed

	res   *walkResult
	seen  map[visit]bool
	steps int
	// loopAt is the block of the instruction being walked in the
	// function's own frame, for exposures.
	loopAt *ssa.BasicBlock
}

// inLoop reports whether block b can reach itself.
func inLoop(b *ssa.BasicBlock) bool {
	seen := map[*ssa.BasicBlock]bool{}
	stack := append([]*ssa.BasicBlock{}, b.Succs...)
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x == b {
			return true
		}
		if !seen[x] {
			seen[x] = true
			stack = append(stack, x.Succs...)
		}
	}
	return false
}

type visit struct {
	fr *frame
	b  int
	st state
}

// The most block visits one walk makes; a function whose paths need more
// is given up on, silently: precise, not loud.
const maxSteps = 20000

type walkResult struct {
	leaks    []leak
	released bool // some path releases the item
	exposed  []exposure
	doubles  []double
	handoffs []*handoff
	returns  []returned
	looped   bool
	gaveUp   bool
	doneText string // the first direct Done of the item, as written
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
	pos, end     token.Pos
	first        token.Pos
	text         string
	site, first2 token.Pos // the sites of this release and the first
}

// An exposure is a Done, not deferred, after a call that can panic.
type exposure struct {
	pos    token.Pos
	text   string
	inLoop bool // the Done is in a loop, where a defer would wait for the return
}

// A returned is a return that hands the item to the caller.
type returned struct {
	ret     *ssa.Return
	results []pathSet
	bools   []string
	flags   []int
}

// A handoff is where the item leaves the function in someone else's hands.
type handoff struct {
	pos     token.Pos
	what    string       // "sent on d.ch", "stored in c.batch"
	channel types.Object // for the item itself sent on a channel: the channel's variable or field
	param   bool         // that channel is a parameter
	named   bool         // the channel could be named at all
}

// A cont is what happens when a walked literal returns: the caller goes
// on with the state the literal left and the paths of its results.
type cont func(st state, results []pathSet)

func (w *walk) run(b *ssa.BasicBlock, i int) *walkResult {
	w.res = &walkResult{}
	w.seen = map[visit]bool{}
	w.block(&frame{fn: w.fn}, b, i, state{}, token.NoPos, nil)
	return w.res
}

// enter goes into block b from block from, setting b's φs for this path.
func (w *walk) enter(fr *frame, b, from *ssa.BasicBlock, st state, last token.Pos, k cont) {
	w.steps++
	if w.steps > maxSteps {
		w.res.gaveUp = true
		return
	}
	c := w.c
	edge := -1
	for j, p := range b.Preds {
		if p == from {
			edge = j
			break
		}
	}
	if edge >= 0 {
		type set struct{ key, val string }
		var sets []set
		for _, ins := range b.Instrs {
			phi, ok := ins.(*ssa.Phi)
			if !ok {
				break
			}
			id := strconv.Itoa(c.ids.of(phi))
			e := phi.Edges[edge]
			p := c.paths(w, fr, e, &st)
			v := p.encode()
			if v == "" {
				v = "-"
			}
			sets = append(sets, set{"s" + id, v})
			if isBool(phi.Type()) && decides(phi) {
				sets = append(sets, set{"b" + id, c.boolConst(fr, e, &st)})
			}
			if fr.parent == nil && isBool(phi.Type()) {
				flag := ""
				switch w.flagTest(e, &st) {
				case +1:
					flag = "+"
				case -1:
					flag = "-"
				}
				sets = append(sets, set{"f" + id, flag})
			}
		}
		for _, s := range sets {
			if s.key[0] == 's' && s.val == "-" {
				// No item here: drop the entry unless an older one says
				// otherwise (a φ is redefined on every entry).
				if _, had := st.get(s.key); !had {
					continue
				}
			}
			st.set(s.key, s.val)
		}
	}
	key := visit{fr, b.Index, st}
	if w.seen[key] {
		return
	}
	w.seen[key] = true
	w.block(fr, b, 0, st, last, k)
}

// block walks the instructions of b from index i on.
func (w *walk) block(fr *frame, b *ssa.BasicBlock, i int, st state, last token.Pos, k cont) {
	c := w.c
	for ; i < len(b.Instrs); i++ {
		ins := b.Instrs[i]
		if fr.parent == nil {
			w.loopAt = b
		}
		if fr.parent == nil && ins == w.again && w.again != nil {
			if !w.loopBack(&st, last) {
				return
			}
			continue // the item lives on in a batch; the hand-out now names another
		}
		if fr.parent == nil && ins.Pos().IsValid() && !w.isHome(ins.Pos()) {
			if _, ok := ins.(*ssa.DebugRef); !ok {
				last = ins.Pos() // the hand-out's own statement is not where a path goes
			}
		}
		switch ins := ins.(type) {
		case *ssa.DebugRef, *ssa.Phi:
			continue
		case *ssa.Call:
			if w.call(fr, b, i, ins, &st, last, k) {
				return // walked on in the literal's continuation
			}
			if c.noReturn[ins.Pos()] {
				return // os.Exit, klog.Fatal: no path goes on
			}
		case *ssa.Defer:
			w.deferCall(fr, ins, &st)
		case *ssa.Go:
			w.goCall(fr, ins, &st)
		case *ssa.RunDefers:
			if w.runDefers(fr, b, i, &st, last, k) {
				return
			}
		case *ssa.Store:
			w.store(fr, ins, &st)
		case *ssa.MapUpdate:
			w.mapUpdate(fr, ins, &st)
		case *ssa.Send:
			w.send(fr, ins, &st)
		case *ssa.UnOp:
			if ins.Op == token.MUL {
				if ia, ok := ins.X.(*ssa.IndexAddr); ok {
					if w.pick(fr, b, i, ins, c.paths(w, fr, ia.X, &st).under("*"), &st, last, k) {
						return
					}
				}
			}
		case *ssa.Index:
			if w.pick(fr, b, i, ins, c.paths(w, fr, ins.X, &st).under("*"), &st, last, k) {
				return
			}
		case *ssa.Lookup:
			elems := c.paths(w, fr, ins.X, &st).under("*")
			if ins.CommaOk {
				if w.pickAt(fr, b, i, "s"+strconv.Itoa(c.ids.of(ins))+"#0", elems, &st, last, k) {
					return
				}
			} else if w.pick(fr, b, i, ins, elems, &st, last, k) {
				return
			}
		case *ssa.Extract:
			if next, ok := ins.Tuple.(*ssa.Next); ok && !next.IsString {
				if rng, ok := next.Iter.(*ssa.Range); ok {
					comp := "*"
					if ins.Index == 1 {
						comp = "k"
					}
					if ins.Index > 0 && w.pick(fr, b, i, ins, c.paths(w, fr, rng.X, &st).under(comp), &st, last, k) {
						return
					}
				}
			}
		case *ssa.SliceToArrayPointer:
			st.called = true // it panics when the slice is too short
		case *ssa.Convert:
			if _, ok := ins.X.Type().Underlying().(*types.Slice); ok {
				if _, ok := ins.Type().Underlying().(*types.Array); ok {
					st.called = true
				}
			}
		case *ssa.Panic:
			return // a panic is not a path that returns
		case *ssa.Return:
			w.ret(fr, ins, st, k)
			return
		case *ssa.Jump:
			w.enter(fr, b.Succs[0], b, st, last, k)
			return
		case *ssa.If:
			w.branch(fr, b, ins, st, last, k)
			return
		}
	}
}

// loopBack handles the path reaching the hand-out again. It says whether
// the walk goes on past it: only when the item is still held in a local
// batch, where a later loop may finish it.
func (w *walk) loopBack(st *state, last token.Pos) bool {
	w.res.looped = true
	switch {
	case st.releasedAt != token.NoPos || st.handedOff != token.NoPos:
		return false
	case w.parked(st):
		st.stale = true
		return true
	case st.deferredAt != token.NoPos:
		w.res.leaks = append(w.res.leaks, leak{pos: w.c.loopPos(last), looped: true, deferIn: true, forgot: st.forgot, via: st.via, viaTrue: st.viaTrue})
	default:
		w.res.leaks = append(w.res.leaks, leak{pos: w.c.loopPos(last), looped: true, forgot: st.forgot, via: st.via, viaTrue: st.viaTrue})
	}
	return false
}

// parked reports whether the item is held in a local collection or cell
// that outlives this iteration.
func (w *walk) parked(st *state) bool {
	for _, e := range strings.Split(st.env, ";") {
		k, v, ok := strings.Cut(e, "=")
		if !ok || v == "-" || v == "T" || v == "F" {
			continue
		}
		p := decodePaths(v)
		if p.empty() {
			continue
		}
		elems := !p.under("*").empty() || !p.under("k").empty()
		switch k[0] {
		case 'c':
			// An element of a local slice or map; a variable of its own
			// is given the next item when the loop comes round.
			if w.c.localRoot(k[1:]) && !w.c.temporary(k[1:]) && (elems || strings.Contains(k, ".*") || strings.HasSuffix(k, ".k")) {
				return true
			}
		case 's':
			id, err := strconv.Atoi(strings.SplitN(k[1:], "#", 2)[0])
			if err != nil || id >= len(w.c.ids.vals) {
				continue
			}
			v, ok := w.c.ids.vals[id].(ssa.Value)
			if !ok {
				continue
			}
			switch v.Type().Underlying().(type) {
			case *types.Slice, *types.Map:
				if elems {
					return true
				}
			}
		}
	}
	return false
}

// pick reads one element of a collection that holds the item: on one
// path it is the item (once per walk: a batch holds it once), on the
// other it is another.
func (w *walk) pick(fr *frame, b *ssa.BasicBlock, i int, v ssa.Value, elems pathSet, st *state, last token.Pos, k cont) bool {
	return w.pickAt(fr, b, i, "s"+strconv.Itoa(w.c.ids.of(v)), elems, st, last, k)
}

func (w *walk) pickAt(fr *frame, b *ssa.BasicBlock, i int, key string, elems pathSet, st *state, last token.Pos, k cont) bool {
	if elems.empty() || st.picked {
		st.set(key, "-")
		return false
	}
	mine := *st
	mine.picked = true
	mine.set(key, elems.encode())
	w.block(fr, b, i+1, mine, last, k)
	st.set(key, "-")
	return false
}

// branch follows the sides of an if that the path can take.
func (w *walk) branch(fr *frame, b *ssa.BasicBlock, ins *ssa.If, st state, last token.Pos, k cont) {
	c := w.c
	test := 0
	if fr.parent == nil {
		test = w.flagTest(ins.Cond, &st)
	}
	bc := c.boolConst(fr, ins.Cond, &st)
	skipDone := false
	if (b.Comment == "rangeindex.loop" || b.Comment == "rangeiter.loop") && !st.picked {
		// A range over a batch that holds the item ends, when it runs to
		// the end, only after it came to the item's element.
		if x := rangedOver(b); x != nil {
			p := c.paths(w, fr, x, &st)
			if !p.under("*").empty() || !p.under("k").empty() {
				skipDone = true
			}
		}
	}
	for j, s := range b.Succs {
		switch {
		case test > 0 && j == 0, test < 0 && j == 1:
			continue // the side on which nothing was handed out
		case bc == "T" && j == 1, bc == "F" && j == 0:
			continue // a condition this path has decided
		case skipDone && j == 1:
			continue
		}
		next := st
		if j == 0 {
			w.selectSend(fr, ins.Cond, &next)
		}
		if test == 0 && bc == "" {
			if pos := c.condPos(b, ins.Cond); pos.IsValid() {
				next.via, next.viaTrue = pos, j == 0
			}
		}
		w.enter(fr, s, b, next, last, k)
	}
}

// selectSend applies, on the side of a select's case that sends the item,
// the send: index == k, where case k is a send.
func (w *walk) selectSend(fr *frame, cond ssa.Value, st *state) {
	bin, ok := cond.(*ssa.BinOp)
	if !ok || bin.Op != token.EQL {
		return
	}
	e, ok := bin.X.(*ssa.Extract)
	k, ok2 := bin.Y.(*ssa.Const)
	if !ok || !ok2 || e.Index != 0 || k.Value == nil {
		return
	}
	sel, ok := e.Tuple.(*ssa.Select)
	if !ok {
		return
	}
	n, err := strconv.Atoi(k.Value.ExactString())
	if err != nil || n < 0 || n >= len(sel.States) || sel.States[n].Dir != types.SendOnly {
		return
	}
	s := sel.States[n]
	w.sendValue(fr, s.Chan, s.Send, s.Pos, st)
}

// decides reports whether a bool φ is a branch's condition, as it is or
// negated: only then does its constant value on a path matter.
func decides(phi *ssa.Phi) bool {
	for _, r := range *phi.Referrers() {
		switch r := r.(type) {
		case *ssa.If:
			return true
		case *ssa.UnOp:
			if r.Op == token.NOT && r.Referrers() != nil {
				for _, rr := range *r.Referrers() {
					if _, ok := rr.(*ssa.If); ok {
						return true
					}
				}
			}
		}
	}
	return false
}

// rangedOver is the slice or map the range loop headed by b ranges over.
func rangedOver(b *ssa.BasicBlock) ssa.Value {
	for _, ins := range b.Instrs {
		switch ins := ins.(type) {
		case *ssa.Next:
			if r, ok := ins.Iter.(*ssa.Range); ok {
				return r.X
			}
		case *ssa.If:
			if bin, ok := ins.Cond.(*ssa.BinOp); ok && bin.Op == token.LSS {
				if call, ok := bin.Y.(*ssa.Call); ok && len(call.Call.Args) == 1 {
					if bi, ok := call.Call.Value.(*ssa.Builtin); ok && bi.Name() == "len" {
						return call.Call.Args[0]
					}
				}
			}
		}
	}
	return nil
}

// flagTest reads a branch's condition against the shutdown flag: +1 if
// its true side is taken only when nothing was handed out, -1 if its
// false side is, 0 otherwise.
func (w *walk) flagTest(v ssa.Value, st *state) int {
	if w.flag == nil && w.selIndex == nil {
		return 0
	}
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op == token.NOT {
			return -w.flagTest(v.X, st)
		}
	case *ssa.ChangeType:
		return w.flagTest(v.X, st)
	case *ssa.BinOp:
		if v.Op != token.EQL && v.Op != token.NEQ {
			return 0
		}
		x, y := v.X, v.Y
		if _, ok := x.(*ssa.Const); ok {
			x, y = y, x
		}
		k, ok := y.(*ssa.Const)
		if !ok {
			return 0
		}
		sign := 0
		switch {
		case w.selIndex != nil && x == w.selIndex && k.Value != nil:
			// index == n: true is our case (handed out) if n is ours.
			n, _ := strconv.Atoi(k.Value.ExactString())
			if n == w.selCase {
				sign = -1
			} else {
				sign = +1
			}
		case w.flagKind == "error" && k.IsNil() && x == w.flag:
			sign = -1 // err == nil
		case k.Value != nil && isBool(k.Type()):
			sign = w.flagTest(x, st)
			if k.Value.String() == "false" {
				sign = -sign
			}
		}
		if v.Op == token.NEQ {
			sign = -sign
		}
		return sign
	case *ssa.Phi:
		// A φ is the flag on the paths that came in by the flag's edge.
		switch v, _ := st.get("f" + strconv.Itoa(w.c.ids.of(v))); v {
		case "+":
			return +1
		case "-":
			return -1
		}
		return 0
	case *ssa.Call:
		if fn := staticFunc(&v.Call); fn != nil {
			if f := w.c.flagFact(fn); f != nil {
				args := v.Call.Args
				if f.Param < len(args) {
					return f.Sign * w.flagTest(args[f.Param], st)
				}
			}
		}
	}
	if v == w.flag && w.flag != nil {
		switch w.flagKind {
		case "shutdown":
			return +1
		case "ok":
			return -1
		}
	}
	return 0
}

// isItem reports whether v is the item itself on this path.
func (w *walk) isItem(fr *frame, v ssa.Value, st *state) bool {
	return w.c.paths(w, fr, v, st).holds()
}

// queueMatches reports whether a Done on the queue recv may release the item.
func (w *walk) queueMatches(fr *frame, recv ssa.Value) bool {
	if w.queue == "" {
		return true
	}
	k := plainKey(w.c.valueKey(fr, recv))
	return k == w.queue || (w.wrapper && strings.HasPrefix(k, w.queue+"."))
}

// plainKey is a key with its loads left out: q and the q it was read
// from name one queue.
func plainKey(k string) string {
	return strings.NewReplacer("(", "", ")", "").Replace(k)
}

// release records a release of the item on this path.
func (w *walk) release(fr *frame, st *state, pos, end token.Pos, text string, deferred, direct bool) {
	w.res.released = true
	if direct && w.res.doneText == "" && !deferred {
		w.res.doneText = text
	} else if direct && w.res.doneText == "" {
		w.res.doneText = strings.TrimPrefix(text, "defer ")
	}
	site := pos
	if fr.parent != nil {
		site = fr.site
	}
	held := st.releasedAt == token.NoPos && st.deferredAt == token.NoPos
	if !held && st.handedOff == token.NoPos {
		first := st.releasedAt
		if first == token.NoPos {
			first = st.deferredAt
		}
		w.res.doubles = append(w.res.doubles, double{pos: pos, end: end, first: first, text: text, site: site, first2: st.firstSite})
	}
	if deferred {
		if st.deferredAt == token.NoPos {
			st.deferredAt, st.deferredDepth = pos, fr.depth
			st.firstSite = site
		}
		return
	}
	if held && direct && st.called && st.handedOff == token.NoPos && !fr.deferred() {
		w.res.exposed = append(w.res.exposed, exposure{pos: pos, text: text, inLoop: w.loopAt != nil && inLoop(w.loopAt)})
	}
	if st.releasedAt == token.NoPos {
		st.releasedAt, st.firstSite = pos, site
	}
}

func (fr *frame) deferred() bool {
	for f := fr; f != nil; f = f.parent {
		if f.runDeferred {
			return true
		}
	}
	return false
}

// handOff records that the item leaves in someone else's hands here.
func (w *walk) handOff(st *state, h *handoff) {
	if st.handedOff != token.NoPos || st.releasedAt != token.NoPos {
		return
	}
	st.handedOff = h.pos
	w.res.handoffs = append(w.res.handoffs, h)
}

// store writes a value to memory: a local cell now holds it; a cell
// anyone else may read (a field of a parameter, a global) holds it too,
// and the item is then handed off, unless this is where the hand-out
// puts it (w.current, quit = w.q.Get()).
func (w *walk) store(fr *frame, ins *ssa.Store, st *state) {
	c := w.c
	key := c.valueKey(fr, ins.Addr)
	p := c.paths(w, fr, ins.Val, st)
	if _, ok := ins.Addr.(*ssa.IndexAddr); ok {
		// One element of many: the others stay.
		if !p.empty() {
			st.set("c"+key, union(decodeCell(st, key), p).encode())
		}
	} else {
		// Only what the item's paths can need is kept: what holds it, and
		// in memory the function made, a bool flag or a literal. Every
		// other store would only multiply the states a walk tells apart.
		if strings.Contains(st.env, key) {
			st.clearCells(key)
		}
		local := c.localRoot(key)
		if mc, ok := ins.Val.(*ssa.MakeClosure); ok && local {
			// A literal kept in a variable that another literal captured:
			// remembered, so a call through the variable walks it.
			st.set("l"+key, strconv.Itoa(c.ids.of(mc)))
		}
		switch {
		case !p.empty():
			st.set("c"+key, p.encode())
		case local && isBool(ins.Val.Type()):
			if bc := c.boolConst(fr, ins.Val, st); bc != "" {
				st.set("c"+key, bc)
			}
		case w.rootKey != "" && strings.HasPrefix(key, w.rootKey):
			st.set("c"+key, "-") // written: no longer the part of the root it was
		}
	}
	if p.empty() || c.localRoot(key) || w.isHome(ins.Pos()) {
		return
	}
	w.handOff(st, &handoff{pos: c.stmtPos(ins.Pos()), what: "stored in " + c.storeTarget(ins.Pos())})
}

// decodeCell is what the cell at key itself holds.
func decodeCell(st *state, key string) pathSet {
	v, _ := st.get("c" + key)
	if v == "T" || v == "F" || v == "-" {
		return nil
	}
	return decodePaths(v)
}

func (w *walk) isHome(pos token.Pos) bool {
	return pos.IsValid() && w.home[0] <= pos && pos < w.home[1]
}

// mapUpdate writes m[k] = v: a local map keeps both; for another map, a
// value that holds the item hands it off (a key is looked up by, not
// handed over: caches keyed by the item are everywhere).
func (w *walk) mapUpdate(fr *frame, ins *ssa.MapUpdate, st *state) {
	c := w.c
	key := c.valueKey(fr, ins.Map)
	vp := c.paths(w, fr, ins.Value, st)
	kp := c.paths(w, fr, ins.Key, st)
	if c.localRoot(key) {
		if !vp.empty() {
			st.set("c"+key+".*", union(decodeCell(st, key+".*"), vp).encode())
		}
		if !kp.empty() {
			st.set("c"+key+".k", union(decodeCell(st, key+".k"), kp).encode())
		}
		return
	}
	if !vp.empty() {
		w.handOff(st, &handoff{pos: c.stmtPos(ins.Pos()), what: "stored in " + c.storeTarget(ins.Pos())})
	}
}

// send hands the item off on a channel: as it is, to the channel's
// receivers, which are followed where the package holds them all.
func (w *walk) send(fr *frame, ins *ssa.Send, st *state) {
	w.sendValue(fr, ins.Chan, ins.X, ins.Pos(), st)
}

func (w *walk) sendValue(fr *frame, chv, x ssa.Value, pos token.Pos, st *state) {
	c := w.c
	p := c.paths(w, fr, x, st)
	if p.empty() {
		return
	}
	ch := c.exprText(chv, pos)
	h := &handoff{pos: c.stmtPos(pos), what: "sent on " + ch}
	if p.holds() && len(p) == 1 && fr.parent == nil {
		h.channel, h.param, h.named = chanObject(chv)
	} else {
		h.what += " inside a value"
	}
	w.handOff(st, h)
}

// nilness is "nil" for a nil constant, "set" for a value that cannot be
// nil (a non-nil interface made from a concrete value, a call of
// fmt.Errorf or errors.New), or "".
func nilness(v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.Const:
		if v.IsNil() {
			return "nil"
		}
	case *ssa.MakeInterface:
		return "set"
	case *ssa.Call:
		if f := staticFunc(&v.Call); f != nil && f.Pkg() != nil {
			switch f.Pkg().Path() + "." + f.Name() {
			case "fmt.Errorf", "errors.New":
				return "set"
			}
		}
	}
	return ""
}

// ret is a return: a literal's goes back to its caller; the function's
// own leaves holding the item, hands it to its caller, or is fine.
func (w *walk) ret(fr *frame, ins *ssa.Return, st state, k cont) {
	c := w.c
	results := make([]pathSet, len(ins.Results))
	for i, r := range ins.Results {
		results[i] = c.paths(w, fr, r, &st)
	}
	if fr.parent != nil {
		// Whether each result is nil, for the caller's err != nil.
		for i, r := range ins.Results {
			st.set("r#"+strconv.Itoa(i), nilness(r))
		}
		k(st, results)
		return
	}
	if st.releasedAt != token.NoPos || st.deferredAt != token.NoPos || st.handedOff != token.NoPos {
		return
	}
	held := false
	for _, p := range results {
		if !p.empty() {
			held = true
		}
	}
	if held {
		r := returned{ret: ins, results: results, bools: make([]string, len(results)), flags: make([]int, len(results))}
		for i, v := range ins.Results {
			r.bools[i] = c.boolConst(fr, v, &st)
			if isBool(v.Type()) {
				r.flags[i] = w.flagTest(v, &st)
			}
		}
		w.res.returns = append(w.res.returns, r)
		return
	}
	pos := ins.Pos()
	end := pos
	if !pos.IsValid() {
		pos = c.closingBrace(w.fn)
		end = pos
	} else if r := c.returnAt[pos]; r != nil {
		end = r.End()
	}
	w.res.leaks = append(w.res.leaks, leak{pos: pos, end: end, forgot: st.forgot, via: st.via, viaTrue: st.viaTrue})
}
