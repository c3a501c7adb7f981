package workqueuedone

import (
	"fmt"
	"go/types"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Facts: what a function does with an item it is given or gets, known to
// its callers in its package and in the packages that import it.

// releases is the fact that a function releases some of its parameters:
// Params on every path (their indices; the receiver is not counted),
// Fields, as "param.path", a part of a parameter on every path (1.0 is
// field 0 of parameter 1, 0.* each element of parameter 0), and Some,
// the parameters some path releases (so -fix knows a Done may be there).
type releases struct {
	Params []int
	Fields []string
	Some   []int
}

func (*releases) AFact() {}
func (r *releases) String() string {
	var parts []string
	if len(r.Params) > 0 || (len(r.Fields) == 0 && len(r.Some) == 0) {
		parts = append(parts, fmt.Sprintf("releases%v", r.Params))
	}
	if len(r.Fields) > 0 {
		parts = append(parts, fmt.Sprintf("releasesParts%v", r.Fields))
	}
	var extra []int
	for _, s := range r.Some {
		whole := slices.ContainsFunc(r.Fields, func(f string) bool { return strings.HasPrefix(f, strconv.Itoa(s)+".") })
		if !slices.Contains(r.Params, s) && !whole {
			extra = append(extra, s)
		}
	}
	if len(extra) > 0 {
		parts = append(parts, fmt.Sprintf("sometimes%v", extra))
	}
	return strings.Join(parts, " ")
}

// everyPath reports whether r releases some parameter or part on every path.
func (r *releases) everyPath() bool { return len(r.Params) > 0 || len(r.Fields) > 0 }

// releasesFact is the releases fact of fn, from this package or imported.
func (c *checker) releasesFact(fn *types.Func) *releases {
	return factOf(c, c.facts, fn)
}

// storesParam is the fact that a function hands some of its parameters
// off (sends or stores them) on some path: Params holds their indices.
// An item passed to it is handed off, to an end that cannot be seen.
type storesParam struct{ Params []int }

func (*storesParam) AFact() {}
func (s *storesParam) String() string {
	return fmt.Sprintf("storesParam%v", s.Params)
}

// storesFact is the storesParam fact of fn, from this package or imported.
func (c *checker) storesFact(fn *types.Func) *storesParam {
	return factOf(c, c.stores, fn)
}

// computeFacts works out what the package's functions do with an item:
// release a parameter, store one, or return a queue's item (a wrapper).
// One may call another, so it goes round until nothing changes (each
// round can only add).
func (c *checker) computeFacts() {
	for round := 0; round < 10; round++ {
		changed := false
		for _, fn := range c.funcs {
			if fn.Parent() != nil {
				continue // a literal has no name to hang a fact on
			}
			obj, ok := fn.Object().(*types.Func)
			if !ok {
				continue
			}
			if _, ok := c.wrappers[obj]; !ok {
				for _, h := range c.handouts(fn, false) {
					res := c.walkOf(h, true).runFrom(h.call)
					if res.gaveUp {
						continue
					}
					if f := c.wrapperOf(res, fn.Signature); f != nil {
						c.wrappers[obj] = f
						changed = true
						break
					}
				}
			}
			r, s := c.paramFacts(fn)
			if r != nil && (c.facts[obj] == nil || r.String() != c.facts[obj].String()) {
				c.facts[obj] = r
				c.releasing = map[*ssa.Function]bool{} // callers may release now
				changed = true
			}
			if s != nil && (c.stores[obj] == nil || len(c.stores[obj].Params) < len(s.Params)) {
				c.stores[obj] = s
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	exportFacts(c, c.facts)
	exportFacts(c, c.wrappers)
	exportFacts(c, c.stores)
}

// paramFacts walks each parameter of fn that could be an item, and each
// part of one (a field of a struct, an element of a slice or map), from
// the function's entry: released on every path, on some, or stored.
func (c *checker) paramFacts(fn *ssa.Function) (*releases, *storesParam) {
	releasing, storing := c.mayRelease(fn), c.mayStore(fn)
	if (!releasing && !storing) || len(fn.Blocks) == 0 {
		return nil, nil
	}
	off := 0
	if fn.Signature.Recv() != nil {
		off = 1
	}
	r, s := &releases{}, &storesParam{}
	for j := off; j < len(fn.Params); j++ {
		p := fn.Params[j]
		if !releasing && !c.reachesStore(p) {
			continue // nothing it could be stored by: no walk needed
		}
		paths := []string{itself}
		if releasing {
			paths = append(paths, partPaths(p.Type())...)
		}
		for _, path := range paths {
			w := &walk{c: c, fn: fn, root: p, rootPath: path, helper: true, facts: true}
			if path != itself {
				w.rootKey = c.valueKey(&frame{fn: fn}, p)
			}
			res := w.run(fn.Blocks[0], 0)
			if res.gaveUp {
				continue
			}
			every := res.released && len(res.leaks) == 0
			switch {
			case path == itself && every:
				r.Params = append(r.Params, j-off)
			case every:
				r.Fields = append(r.Fields, strconv.Itoa(j-off)+"."+path[1:])
			}
			if res.released && !slices.Contains(r.Some, j-off) {
				r.Some = append(r.Some, j-off)
			}
			if path == itself {
				for _, h := range res.handoffs {
					if h.channel == nil {
						s.Params = append(s.Params, j-off)
						break
					}
				}
			}
		}
	}
	if len(r.Params) == 0 && len(r.Fields) == 0 && len(r.Some) == 0 {
		r = nil
	}
	if len(s.Params) == 0 {
		s = nil
	}
	return r, s
}

// reachesStore reports whether the value of parameter p can reach, through
// the values made from it, an instruction that stores or sends it, a
// call, or a literal that captures it: the only ways a walk of it could
// find it handed off.
func (c *checker) reachesStore(p *ssa.Parameter) bool {
	seen := map[ssa.Value]bool{}
	stack := []ssa.Value{p}
	for len(stack) > 0 && len(seen) < 256 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] || v.Referrers() == nil {
			continue
		}
		seen[v] = true
		for _, r := range *v.Referrers() {
			switch r := r.(type) {
			case *ssa.Store:
				if r.Val == v {
					return true
				}
				stack = append(stack, r.Addr) // the variable it is kept in
			case *ssa.MapUpdate, *ssa.Send, *ssa.MakeClosure:
				return true
			case ssa.CallInstruction:
				// Only a function known to store its parameter stores it
				// (an unknown one is not taken for a hand-off).
				if f := staticFunc(r.Common()); f != nil && c.storesFact(f) != nil {
					return true
				}
				if lit, _ := literal(r.Common().Value); lit != nil {
					return true
				}
				if b, ok := r.Common().Value.(*ssa.Builtin); ok && b.Name() == "append" {
					if call, ok := r.(*ssa.Call); ok {
						stack = append(stack, call)
					}
				}
			case ssa.Value:
				stack = append(stack, r)
			}
		}
	}
	return false
}

// partPaths are the parts of a value of type t that may hold an item: the
// fields of a struct (or of the struct a pointer points to), and the
// elements of a slice or map.
func partPaths(t types.Type) []string {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		if u.NumFields() > 8 {
			return nil
		}
		var out []string
		for i := range u.NumFields() {
			out = append(out, itself+strconv.Itoa(i))
		}
		return out
	case *types.Slice, *types.Map:
		return []string{itself + "*"}
	}
	return nil
}

// mayStore reports whether fn writes anything anyone else could read
// (memory it did not allocate, a map, a channel), or calls a function
// that stores a parameter.
func (c *checker) mayStore(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, ins := range b.Instrs {
			switch ins := ins.(type) {
			case *ssa.Store:
				if _, local := ins.Addr.(*ssa.Alloc); !local {
					return true
				}
			case *ssa.MapUpdate, *ssa.Send:
				return true
			case ssa.CallInstruction:
				if f := staticFunc(ins.Common()); f != nil && c.storesFact(f) != nil {
					return true
				}
			}
		}
	}
	return false
}
