package workqueuedone

import (
	"go/token"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// The one question every report rests on: is this value the item that Get
// handed out? It is answered on SSA, where every value has one
// definition, and along one path at a time, because a variable may hold
// the item on one path and another value on the next.
//
// A value holds the item at an access path: "^" is the item itself, "^2"
// its field 2 (of a struct built from it), "^*" an element of a slice or
// map, "^k" a key of a map, "^λ" a function literal that finishes it. The
// same value under another name (a type switch's variable, a conversion
// to or from an interface, a field read back, a captured variable, an
// element taken from a local batch) holds it at "^"; a variable given
// another value does not, on the paths where it was given it.

// A pathSet is the sorted access paths at which a value holds the item.
type pathSet []string

const (
	itself   = "^"
	finisher = "λ"
)

func (p pathSet) holds() bool    { return slices.Contains(p, itself) }
func (p pathSet) empty() bool    { return len(p) == 0 }
func (p pathSet) encode() string { return strings.Join(p, ",") }
func decodePaths(s string) pathSet {
	if s == "" || s == "-" {
		return nil
	}
	return strings.Split(s, ",")
}

// under is the paths p holds below component comp: the paths of x.comp,
// given those of x.
func (p pathSet) under(comp string) pathSet {
	var out pathSet
	for _, s := range p {
		rest := s[1:]
		switch {
		case rest == comp:
			out = append(out, itself)
		case strings.HasPrefix(rest, comp+"."):
			out = append(out, itself+rest[len(comp)+1:])
		}
	}
	return normal(out)
}

// underPath is under for each component of a dotted path.
func (p pathSet) underPath(path string) pathSet {
	for _, comp := range strings.Split(path, ".") {
		if comp != "" {
			p = p.under(comp)
		}
	}
	return p
}

// finishes reports whether p holds a function literal that finishes the
// item, at any depth.
func (p pathSet) finishes() bool {
	for _, s := range p {
		if strings.HasSuffix(s, finisher) {
			return true
		}
	}
	return false
}

func union(a, b pathSet) pathSet { return normal(append(slices.Clone(a), b...)) }

func normal(p pathSet) pathSet {
	slices.Sort(p)
	return slices.Compact(p)
}

// A state is what one path knows at one point: what has happened to the
// item, and the environment (env) its values are read in. It is a
// comparable value, so that a walk visits a block once per state.
type state struct {
	releasedAt token.Pos // the first release on this path
	firstSite  token.Pos // ... and its site (frame.site)
	deferredAt token.Pos // a deferred release waits for the return
	// deferredDepth is the depth of the frame whose return runs it.
	deferredDepth int
	handedOff     token.Pos // the item left in someone else's hands
	forgot        token.Pos // the first Forget of the item
	called        bool      // a call that can panic since the hand-out
	stale         bool      // the hand-out ran again: its result is another item
	picked        bool      // a loop over a batch has come to the item's element
	via           token.Pos // the condition of the last branch taken
	viaTrue       bool
	returned      bool // the item was returned to the caller

	// defers is the stack of deferred calls that may touch the item, as
	// "id:args" entries joined by "|" (args are the snapshots of the
	// arguments, evaluated at the defer).
	defers string

	// env holds, as sorted "key=value" entries joined by ";":
	//   - s<id>: the paths a value held when its definition ran on this
	//     path (a φ, a read from a batch, a literal's result);
	//   - c<cell>: the paths a memory cell holds, or T or F for a bool
	//     constant stored there.
	env string
}

func (st *state) get(key string) (string, bool) {
	for _, e := range strings.Split(st.env, ";") {
		if k, v, ok := strings.Cut(e, "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// set records key=value in env; an empty value removes key.
func (st *state) set(key, value string) {
	var out []string
	for _, e := range strings.Split(st.env, ";") {
		if e == "" {
			continue
		}
		if k, _, _ := strings.Cut(e, "="); k == key {
			continue
		}
		out = append(out, e)
	}
	if value != "" {
		out = append(out, key+"="+value)
	}
	slices.Sort(out)
	st.env = strings.Join(out, ";")
}

// clearCells removes the cell at key and every cell below it.
func (st *state) clearCells(key string) {
	var out []string
	for _, e := range strings.Split(st.env, ";") {
		k, _, _ := strings.Cut(e, "=")
		if e == "" || k == "c"+key || strings.HasPrefix(k, "c"+key+".") || k == "l"+key {
			continue
		}
		out = append(out, e)
	}
	st.env = strings.Join(out, ";")
}

// cellPaths is what the cell at key and the cells below it hold.
func (st *state) cellPaths(key string) pathSet {
	var out pathSet
	for _, e := range strings.Split(st.env, ";") {
		k, v, ok := strings.Cut(e, "=")
		if !ok || v == "T" || v == "F" {
			continue
		}
		switch {
		case strings.HasPrefix("c"+key, k+"."):
			// A cell that holds a whole struct: the part asked for.
			out = append(out, decodePaths(v).underPath(key[len(k):])...)
		case k == "c"+key:
			out = append(out, decodePaths(v)...)
		case strings.HasPrefix(k, "c"+key+"."):
			sub := k[len(key)+2:]
			for _, p := range decodePaths(v) {
				if p == itself {
					out = append(out, itself+sub)
				} else {
					out = append(out, itself+sub+"."+p[1:])
				}
			}
		}
	}
	return normal(out)
}

// A frame is one function being walked: the hand-out's own, or a function
// literal it calls, defers or starts, walked in place. A literal's
// parameters are the snapshots of its arguments; its free variables are
// the cells of the variables it captured.
type frame struct {
	fn     *ssa.Function
	parent *frame
	params map[*ssa.Parameter]argSnap
	free   map[*ssa.FreeVar]string // the cell key of each captured variable
	depth  int
	// runDeferred: a deferred literal, run at its caller's return.
	runDeferred bool
	// site is where the walked function's own code calls into this
	// frame: two calls of one literal are two sites, one Done in it
	// reached twice round a loop is one.
	site token.Pos
}

// An argSnap is an argument as the call saw it.
type argSnap struct {
	paths pathSet
	key   string // its name as a cell or queue (valueKey)
	boolc string // "T" or "F" for a bool constant
}

// ids numbers SSA values for keys, in the order they are first seen.
type ids struct {
	m    map[any]int
	vals []any
}

func (n *ids) of(v any) int {
	if i, ok := n.m[v]; ok {
		return i
	}
	n.m[v] = len(n.vals)
	n.vals = append(n.vals, v)
	return len(n.vals) - 1
}

// valueKey names where v points or what it is, as an access path from a
// root value: c.queue read twice is the same queue, w.key the same cell.
func (c *checker) valueKey(fr *frame, v ssa.Value) string {
	switch v := v.(type) {
	case *ssa.Parameter:
		if a, ok := fr.params[v]; ok {
			return a.key
		}
	case *ssa.FreeVar:
		if k, ok := fr.free[v]; ok {
			return k
		}
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return "(" + c.valueKey(fr, v.X) + ")"
		}
	case *ssa.FieldAddr:
		return c.valueKey(fr, v.X) + "." + strconv.Itoa(v.Field)
	case *ssa.Field:
		return c.valueKey(fr, v.X) + "." + strconv.Itoa(v.Field)
	case *ssa.IndexAddr:
		return c.valueKey(fr, v.X) + ".*"
	case *ssa.ChangeType:
		return c.valueKey(fr, v.X)
	case *ssa.ChangeInterface:
		return c.valueKey(fr, v.X)
	case *ssa.MakeInterface:
		return c.valueKey(fr, v.X)
	case *ssa.Slice:
		return c.valueKey(fr, v.X)
	case *ssa.TypeAssert:
		if !v.CommaOk {
			return c.valueKey(fr, v.X)
		}
	case *ssa.Phi:
		// A φ of one name on every edge is that name (a loop's φ that
		// names itself on the back edge is left out).
		if c.inPhi[v] {
			return ""
		}
		c.inPhi[v] = true
		k := ""
		for _, e := range v.Edges {
			ek := c.valueKey(fr, e)
			if ek == "" {
				continue
			}
			if k != "" && ek != k {
				k = "-"
				break
			}
			k = ek
		}
		delete(c.inPhi, v)
		if k != "" && k != "-" {
			return k
		}
	}
	return "v" + strconv.Itoa(c.ids.of(v))
}

// localRoot reports whether the cell key is rooted in memory the walked
// functions allocated themselves (a local struct, slice, map or captured
// variable): its readers are all in sight.
func (c *checker) localRoot(key string) bool {
	v, rest := c.rootOf(key)
	// Only the root itself counts: a pointer loaded from a local cell
	// points anywhere.
	if v == nil || strings.HasPrefix(rest, ")") {
		return false
	}
	switch v.(type) {
	case *ssa.Alloc, *ssa.MakeSlice, *ssa.MakeMap:
		return true
	}
	return false
}

// rootOf is the value a cell key starts from ("v12.0" starts from value
// 12), and the rest of the key, or nil for a key through a load.
func (c *checker) rootOf(key string) (any, string) {
	if !strings.HasPrefix(key, "v") {
		return nil, key
	}
	end := 1
	for end < len(key) && key[end] >= '0' && key[end] <= '9' {
		end++
	}
	i, err := strconv.Atoi(key[1:end])
	if err != nil || i >= len(c.ids.vals) {
		return nil, key
	}
	return c.ids.vals[i], key[end:]
}

// temporary reports whether the cell key is rooted in memory the compiler
// made for one expression (the array behind a call's ... arguments, a
// composite literal): it does not outlive the statement, so an item in it
// is not kept in a batch.
func (c *checker) temporary(key string) bool {
	v, _ := c.rootOf(key)
	a, ok := v.(*ssa.Alloc)
	if !ok {
		return false
	}
	switch a.Comment {
	case "varargs", "slicelit", "complit":
		return true
	}
	return false
}

// paths is where v holds the item on the path st describes, in frame fr.
func (c *checker) paths(w *walk, fr *frame, v ssa.Value, st *state) pathSet {
	return c.pathsDepth(w, fr, v, st, 0)
}

func (c *checker) pathsDepth(w *walk, fr *frame, v ssa.Value, st *state, depth int) pathSet {
	if depth > 32 || v == nil {
		return nil
	}
	rec := func(x ssa.Value) pathSet { return c.pathsDepth(w, fr, x, st, depth+1) }
	if fr.parent == nil && v == w.root {
		if st.stale {
			return nil
		}
		return pathSet{w.rootPath}
	}
	if s, ok := st.get("s" + strconv.Itoa(c.ids.of(v))); ok {
		return decodePaths(s)
	}
	switch v := v.(type) {
	case *ssa.Parameter:
		if a, ok := fr.params[v]; ok {
			return a.paths
		}
		if fr.parent == nil && v == w.root {
			return pathSet{w.rootPath}
		}
	case *ssa.ChangeType:
		return rec(v.X)
	case *ssa.ChangeInterface:
		return rec(v.X)
	case *ssa.MakeInterface:
		return rec(v.X)
	case *ssa.Convert:
		return rec(v.X)
	case *ssa.SliceToArrayPointer:
		return rec(v.X)
	case *ssa.TypeAssert:
		if !v.CommaOk {
			return rec(v.X)
		}
	case *ssa.Extract:
		if ta, ok := v.Tuple.(*ssa.TypeAssert); ok && v.Index == 0 {
			return rec(ta.X)
		}
		if s, ok := st.get("s" + strconv.Itoa(c.ids.of(v.Tuple)) + "#" + strconv.Itoa(v.Index)); ok {
			return decodePaths(s)
		}
	case *ssa.Field:
		return rec(v.X).under(strconv.Itoa(v.Field))
	case *ssa.Index:
		// A read of an element is a pick (walk.pick); anything else of the
		// array is not the item.
		return nil
	case *ssa.UnOp:
		if v.Op == token.MUL {
			return c.pointee(w, fr, c.valueKey(fr, v.X), st)
		}
	case *ssa.Slice:
		return rec(v.X)
	case *ssa.Alloc, *ssa.MakeSlice, *ssa.MakeMap, *ssa.FieldAddr, *ssa.IndexAddr, *ssa.FreeVar, *ssa.Global:
		// A reference: what it points to.
		return c.pointee(w, fr, c.valueKey(fr, v), st)
	case *ssa.Call:
		if b, ok := v.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" && len(v.Call.Args) == 2 {
			out := rec(v.Call.Args[0])
			return union(out, rec(v.Call.Args[1]))
		}
	case *ssa.MakeClosure:
		if c.closureFinishes(w, fr, v, st) {
			return pathSet{itself + finisher}
		}
	}
	return nil
}

// pointee is what the memory at key holds: what the path stored there,
// or, below a root that is itself a reference (a parameter *work walked
// for its field), the part of the root it is.
func (c *checker) pointee(w *walk, fr *frame, key string, st *state) pathSet {
	out := st.cellPaths(key)
	if w.root == nil || w.rootPath == itself {
		return out
	}
	switch w.root.Type().Underlying().(type) {
	case *types.Pointer, *types.Slice, *types.Map:
	default:
		return out
	}
	rk := c.valueKey(&frame{fn: w.fn}, w.root)
	for k := key; ; {
		if _, ok := st.get("c" + k); ok {
			return out // written on this path: what was written counts
		}
		i := strings.LastIndex(k, ".")
		if i < 0 {
			break
		}
		k = k[:i]
	}
	switch {
	case key == rk:
		return union(out, pathSet{w.rootPath})
	case strings.HasPrefix(key, rk+"."):
		return union(out, pathSet{w.rootPath}.underPath(key[len(rk)+1:]))
	}
	return out
}

// boolConst is the bool constant v is on this path, "T" or "F", or "".
func (c *checker) boolConst(fr *frame, v ssa.Value, st *state) string {
	switch v := v.(type) {
	case *ssa.Const:
		if v.Value != nil && v.Type() != nil && isBool(v.Type()) {
			if v.Value.String() == "true" {
				return "T"
			}
			return "F"
		}
	case *ssa.UnOp:
		switch v.Op {
		case token.MUL:
			s, _ := st.get("c" + c.valueKey(fr, v.X))
			if s == "T" || s == "F" {
				return s
			}
		case token.NOT:
			switch c.boolConst(fr, v.X, st) {
			case "T":
				return "F"
			case "F":
				return "T"
			}
		}
	case *ssa.Parameter:
		if a, ok := fr.params[v]; ok {
			return a.boolc
		}
	case *ssa.Phi:
		if s, ok := st.get("b" + strconv.Itoa(c.ids.of(v))); ok {
			return s
		}
	case *ssa.BinOp:
		// err != nil, where err is what a literal walked in place returned.
		if v.Op != token.EQL && v.Op != token.NEQ {
			break
		}
		x, y := v.X, v.Y
		if k, ok := x.(*ssa.Const); ok && k.IsNil() {
			x, y = y, x
		}
		if k, ok := y.(*ssa.Const); !ok || !k.IsNil() {
			break
		}
		key := ""
		switch x := x.(type) {
		case *ssa.Call:
			key = "n" + strconv.Itoa(c.ids.of(x))
		case *ssa.Extract:
			key = "n" + strconv.Itoa(c.ids.of(x.Tuple)) + "#" + strconv.Itoa(x.Index)
		}
		n, _ := st.get(key)
		if n == "" {
			break
		}
		if (n == "nil") == (v.Op == token.EQL) {
			return "T"
		}
		return "F"
	}
	return ""
}

func isBool(t types.Type) bool {
	b, ok := t.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsBoolean != 0
}
