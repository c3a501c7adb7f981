// Package queuestate reads what client-go's queue holds, in place: the FIFO
// (what Get hands out next), the dirty set (what needs processing) and the
// processing set (handed out, not yet done), and prints them as the table
// rows of listings 4-2 and 5-2.
//
// Why reflection: the three collections are unexported fields of
// workqueue.Typed[T] (queue, dirty, processing), and client-go has no
// accessor for them. A twin must show what the real queue holds, not a model
// of it, so Read reads those fields in place through reflect + unsafe
// (reflect.NewAt on each field's address). Read-only: it never writes to
// them.
package queuestate

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"k8s.io/client-go/util/workqueue"
)

// State is what the queue's three collections hold at one moment.
type State struct {
	FIFO, Dirty, Processing []string
}

// Read reads the real state of q, a queue made by
// workqueue.NewTypedRateLimitingQueue (or ...WithConfig).
//
// The path down: the rate-limiting queue is a *rateLimitingType[string],
// which embeds TypedDelayingInterface (a *delayingType[string]), which embeds
// TypedInterface (the *Typed[string] that owns the three collections).
func Read(q workqueue.TypedRateLimitingInterface[string]) State {
	rl := reflect.ValueOf(q).Elem()                              // rateLimitingType[string]
	dl := rl.FieldByName("TypedDelayingInterface").Elem().Elem() // delayingType[string]
	typed := dl.FieldByName("TypedInterface").Elem().Elem()      // Typed[string]

	field := func(name string) reflect.Value {
		f := typed.FieldByName(name)
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}

	// Every method of Typed holds cond.L while it touches the collections;
	// hold it too, so the three are read as one consistent snapshot.
	cond := field("cond").Interface().(*sync.Cond)
	cond.L.Lock()
	defer cond.L.Unlock()

	var s State
	// queue is a Queue[string] interface; by default it holds a *queue[string],
	// a pointer to a slice in FIFO order (index 0 is what Get hands out next).
	fifo := field("queue").Elem().Elem()
	for i := range fifo.Len() {
		s.FIFO = append(s.FIFO, fifo.Index(i).String())
	}
	// dirty and processing are sets.Set[string], maps with no order: sort
	// them, as the Rust side does.
	keys := func(m reflect.Value) []string {
		var out []string
		for _, k := range m.MapKeys() {
			out = append(out, k.String())
		}
		sort.Strings(out)
		return out
	}
	s.Dirty = keys(field("dirty"))
	s.Processing = keys(field("processing"))
	return s
}

const rowFormat = "%-22s%-10s%-10s%-12s%v\n"

// PrintHeader prints the table's header: call, FIFO, dirty, processing, Len().
func PrintHeader() {
	fmt.Printf(rowFormat, "call", "FIFO", "dirty", "processing", "Len()")
}

// Show prints one row on stdout: the call just made, then what q's three
// collections hold after it (the FIFO in [], the sets in {}) and q.Len().
func Show(call string, q workqueue.TypedRateLimitingInterface[string]) {
	s := Read(q)
	fmt.Printf(rowFormat, call, set(s.FIFO, "[", "]"), set(s.Dirty, "{", "}"), set(s.Processing, "{", "}"), q.Len())
}

func set(items []string, open, close string) string {
	return open + strings.Join(items, " ") + close
}
