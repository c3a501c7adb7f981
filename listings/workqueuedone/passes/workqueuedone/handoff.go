package workqueuedone

import (
	"fmt"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Hand-offs. An item that leaves the function in someone else's hands is
// no stall of the function. A channel of this package is followed to its
// receivers, each walked as a hand-out of its own; any other end (a
// field, a map or slice that is not local, a function that stores the
// item, a literal that finishes it passed on) is trusted, and reported
// only under -strict. A local collection, a local literal and a local
// struct are not hand-offs: their other end is in sight, and is walked.

// chanObject is the variable or field a channel value is reached through
// (d.workers[i] is d's field workers), whether it is a parameter, and
// whether it could be named at all.
func chanObject(v ssa.Value) (types.Object, bool, bool) {
	switch v := v.(type) {
	case *ssa.UnOp:
		if v.Op != token.MUL {
			return nil, false, false
		}
		switch a := v.X.(type) {
		case *ssa.FieldAddr:
			if f := fieldVar(a.X.Type(), a.Field); f != nil {
				return f, false, true
			}
		case *ssa.Global:
			return a.Object(), false, true
		case *ssa.IndexAddr:
			return chanObject(a.X)
		}
	case *ssa.Index:
		return chanObject(v.X)
	case *ssa.Field:
		if f := fieldVar(v.X.Type(), v.Field); f != nil {
			return f, false, true
		}
	case *ssa.Parameter:
		return v.Object(), true, true
	case *ssa.ChangeType:
		return chanObject(v.X)
	}
	return nil, false, false
}

// fieldVar is field i of the struct t is, or points to.
func fieldVar(t types.Type, i int) *types.Var {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	if s, ok := t.Underlying().(*types.Struct); ok && i < s.NumFields() {
		return s.Field(i)
	}
	return nil
}

// A receiver is a place where a channel's value is received.
type receiver struct {
	fn       *ssa.Function
	at       ssa.Instruction // the receive, or the select
	pos      token.Pos
	item     ssa.Value // nil: the value is dropped
	flag     ssa.Value // v, ok := <-ch
	selIndex ssa.Value // a select's chosen case...
	selCase  int       // ... and this receive's
}

// channelEnd is what the package shows of a channel's other end.
type channelEnd struct {
	receivers []receiver
	unseen    string // why its other end cannot be seen, or ""
}

// channelEndOf finds every receive from the channel an item is sent on.
// Its other end cannot be seen when the channel is a parameter, exported,
// of another package, or used in any way but send, receive, len, cap and
// close.
func (c *checker) channelEndOf(h *handoff) *channelEnd {
	switch {
	case h.param:
		return &channelEnd{unseen: "a channel passed in as a parameter"}
	case !h.named || h.channel == nil:
		return &channelEnd{unseen: "a channel the analyzer cannot name"}
	}
	obj := h.channel
	if end, ok := c.channels[obj]; ok {
		return end
	}
	end := &channelEnd{}
	c.channels[obj] = end
	switch {
	case obj.Pkg() != c.pass.Pkg:
		end.unseen = "a channel of another package"
		return end
	case obj.Exported():
		end.unseen = "an exported channel, which other packages may receive from"
		return end
	}
	for _, fn := range c.funcs {
		for _, b := range fn.Blocks {
			for _, ins := range b.Instrs {
				seen := map[ssa.Value]bool{}
				for _, op := range ins.Operands(nil) {
					if op == nil || *op == nil || seen[*op] {
						continue
					}
					v := *op
					seen[v] = true
					if _, isChan := v.Type().Underlying().(*types.Chan); !isChan {
						continue
					}
					if o, _, _ := chanObject(v); o != obj {
						continue
					}
					if why := c.channelUse(fn, ins, v, end); why != "" && end.unseen == "" {
						end.unseen = why
					}
				}
			}
		}
	}
	if end.unseen == "" && len(end.receivers) == 0 {
		end.unseen = "a channel this package never receives from"
	}
	return end
}

// channelUse records how ins uses the channel v: a receive becomes a
// receiver; a use it cannot follow returns why.
func (c *checker) channelUse(fn *ssa.Function, ins ssa.Instruction, v ssa.Value, end *channelEnd) string {
	switch ins := ins.(type) {
	case *ssa.Send:
		if ins.Chan == v {
			return ""
		}
	case *ssa.DebugRef:
		return ""
	case *ssa.UnOp:
		if ins.Op == token.ARROW {
			r := receiver{fn: fn, at: ins, pos: ins.Pos()}
			if ins.CommaOk {
				for _, x := range *ins.Referrers() {
					if e, ok := x.(*ssa.Extract); ok {
						switch e.Index {
						case 0:
							r.item = e
						case 1:
							r.flag = e
						}
					}
				}
			} else if hasUses(ins) {
				r.item = ins
			}
			end.receivers = append(end.receivers, r)
			return ""
		}
	case *ssa.Select:
		recvs := 0
		for k, s := range ins.States {
			if s.Dir != types.RecvOnly {
				continue
			}
			if s.Chan == v {
				r := receiver{fn: fn, at: ins, pos: s.Pos, selCase: k}
				for _, x := range *ins.Referrers() {
					if e, ok := x.(*ssa.Extract); ok {
						switch e.Index {
						case 0:
							r.selIndex = e
						case 2 + recvs:
							if hasUses(e) {
								r.item = e
							}
						}
					}
				}
				end.receivers = append(end.receivers, r)
			}
			recvs++
		}
		return ""
	case *ssa.Call:
		if b, ok := ins.Call.Value.(*ssa.Builtin); ok {
			switch b.Name() {
			case "len", "cap", "close":
				return ""
			}
		}
	}
	return fmt.Sprintf("a channel used at line %d in a way the analyzer does not follow", c.pass.Fset.Position(ins.Pos()).Line)
}

// walkReceiver walks what a receiver received, as a hand-out of its own.
func (c *checker) walkReceiver(r receiver) *walkResult {
	w := &walk{c: c, fn: r.fn, root: r.item, rootPath: itself, again: r.at, flag: r.flag, flagKind: "ok"}
	if r.selIndex != nil {
		w.selIndex, w.selCase = r.selIndex, r.selCase
	}
	return w.runFrom(r.at)
}
