// Listing 5-3, Go twin: the stall, collection by collection, read from the
// real client-go queue's state. Once Done is skipped, the key sits in the
// processing set for good, and every new event only re-marks it dirty.
//
// Run from listings/: go run ./ch05-silent-stall/listing-05-03/twin
package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"k8s.io/client-go/util/workqueue"
)

func main() {
	fmt.Printf("%-22s%-10s%-10s%-12s%s\n", "call", "FIFO", "dirty", "processing", "Len()")
	queue := workqueue.NewTypedRateLimitingQueue[string](
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second))
	defer queue.ShutDown()

	queue.Add("obj")
	show(`Add("obj")`, queue)
	obj, _ := queue.Get()
	show(`Get() -> "obj"`, queue)
	queue.Forget(obj)
	show(`Forget("obj")`, queue)
	// No Done. Events keep arriving:
	queue.Add("obj")
	show(`Add("obj")`, queue)
	for range 99 {
		queue.Add("obj")
	}
	show(`Add("obj") x99 more`, queue)
	queue.Add("other")
	other, _ := queue.Get()
	queue.Done(other)
	show("other: Add, Get, Done", queue) // the rest of the queue is fine
}

// state is what the queue's three collections hold at one moment.
type state struct {
	fifo, dirty, processing []string
}

// readState reads the real state of client-go's queue.
//
// Why reflection: the FIFO, the dirty set and the processing set are
// unexported fields of workqueue.Typed[T] (queue, dirty, processing), and
// client-go has no accessor for them. A twin must show what the real queue
// holds, not a model of it, so it reads those fields in place through
// reflect + unsafe (reflect.NewAt on each field's address). Read-only: it
// never writes to them.
//
// The path down: the rate-limiting queue is a *rateLimitingType[string],
// which embeds TypedDelayingInterface (a *delayingType[string]), which embeds
// TypedInterface (the *Typed[string] that owns the three collections).
func readState(q workqueue.TypedRateLimitingInterface[string]) state {
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

	var s state
	// queue is a Queue[string] interface; by default it holds a *queue[string],
	// a pointer to a slice in FIFO order (index 0 is what Get hands out next).
	fifo := field("queue").Elem().Elem()
	for i := range fifo.Len() {
		s.fifo = append(s.fifo, fifo.Index(i).String())
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
	s.dirty = keys(field("dirty"))
	s.processing = keys(field("processing"))
	return s
}

func set(items []string, open, close string) string {
	return open + strings.Join(items, " ") + close
}

// show prints one row: the call, then the three collections and Len().
func show(call string, q workqueue.TypedRateLimitingInterface[string]) {
	s := readState(q)
	fmt.Printf("%-22s%-10s%-10s%-12s%d\n",
		call, set(s.fifo, "[", "]"), set(s.dirty, "{", "}"), set(s.processing, "{", "}"), q.Len())
}
