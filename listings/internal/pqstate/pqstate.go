// Package pqstate reads what controller-runtime's priority queue holds, in
// place: its ready entries in hand-out order, its waiting entries in the
// order they become ready (with the time each does), and its locked keys
// (handed out, not yet done).
//
// Why reflection: the collections are unexported fields of
// priorityqueue.priorityqueue[T] (ready and waiting, two B-trees of
// *item[T], and locked, a set), and the package has no accessor for them
// (its logState goroutine logs a copy every 10s at V(5), which a twin
// cannot time). A twin must show what the real queue holds, not a model of
// it, so Read calls the trees' own Ascend through reflect + unsafe
// (reflect.NewAt on each field's address), under the queue's own locks.
// Read-only: it never writes to them.
package pqstate

import (
	"reflect"
	"sort"
	"sync"
	"time"
	"unsafe"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// Waiting is a waiting entry: its key and when it becomes ready.
type Waiting struct {
	Key     string
	ReadyAt time.Time
}

// State is what the priority queue's collections hold at one moment.
type State struct {
	Ready   []string
	Waiting []Waiting
	Locked  []string
}

// Read reads the real state of q, a queue made by priorityqueue.New. It
// calls q.Len first, which moves the adds still in the queue's add buffer
// into its trees, as every method that reads them does.
func Read(q priorityqueue.PriorityQueue[string]) State {
	q.Len()
	pq := reflect.ValueOf(q).Elem() // priorityqueue[string]
	field := func(name string) reflect.Value {
		f := pq.FieldByName(name)
		return reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	}

	var s State
	// lock guards items, ready and waiting; lockedLock guards locked.
	lock := field("lock").Addr().Interface().(*sync.Mutex)
	lock.Lock()
	ascend := func(tree string, each func(item reflect.Value)) {
		t := field(tree).Elem() // the bTree interface's *btree.BTreeG[*item[string]]
		ascend := t.MethodByName("Ascend")
		iterator := reflect.MakeFunc(ascend.Type().In(0), func(args []reflect.Value) []reflect.Value {
			each(args[0].Elem())
			return []reflect.Value{reflect.ValueOf(true)}
		})
		ascend.Call([]reflect.Value{iterator})
	}
	ascend("ready", func(item reflect.Value) { s.Ready = append(s.Ready, item.FieldByName("Key").String()) })
	ascend("waiting", func(item reflect.Value) {
		at := item.FieldByName("ReadyAt").Interface().(*time.Time)
		s.Waiting = append(s.Waiting, Waiting{Key: item.FieldByName("Key").String(), ReadyAt: *at})
	})
	lock.Unlock()

	lockedLock := field("lockedLock").Addr().Interface().(*sync.Mutex)
	lockedLock.Lock()
	for _, k := range field("locked").MapKeys() {
		s.Locked = append(s.Locked, k.String())
	}
	lockedLock.Unlock()
	sort.Strings(s.Locked) // a set has no order; sorted, as the Rust side does
	return s
}
