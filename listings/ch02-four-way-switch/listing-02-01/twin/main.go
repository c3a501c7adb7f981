// Listing 2-1, Go twin: which errors make the controller retry?
//
// controller-runtime's reconcileHandler asks one question of a non-nil
// error: errors.Is(err, reconcile.TerminalError(nil)). If yes, the error is
// counted and logged, and the item is not requeued. If no, the item goes back
// through the rate limiter (AddWithOpts with RateLimited: true).
//
// The "requeued?" column is not worked out here: every error is returned by
// a reconciler run by the real controller, and a wrapper around its queue
// records whether the controller added the key back while handling it.
//
// Run from listings/: go run ./ch02-four-way-switch/listing-02-01/twin
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

var cause = errors.New("spec.replicas must be >= 0")

// Each case is a key; the reconciler returns that case's error on the
// first attempt (and nil on any retry).
var cases = []struct {
	key string
	err error
}{
	{"plain error", errors.New("connection refused")},
	{"TerminalError", reconcile.TerminalError(cause)},
	{"TerminalError wrapped with %w", fmt.Errorf("updating status: %w", reconcile.TerminalError(cause))},
	{"nil", nil},
}

func main() {
	ctrllog.SetLogger(logr.Discard()) // the controller logs every error; keep stdout for the table

	errs := map[string]error{}
	for _, c := range cases {
		errs[c.key] = c.err
	}
	var mu sync.Mutex
	attempts := map[string]int{}
	reconciler := reconcile.TypedFunc[string](func(_ context.Context, key string) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		attempts[key]++
		if attempts[key] > 1 {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, errs[key]
	})

	wq := &watchingQueue{inFlight: map[string]bool{}, requeued: map[string]bool{}, doneKeys: map[string]bool{}, stopAfter: len(cases), allDone: make(chan struct{})}
	ctrl, err := controller.NewTypedUnmanaged("terminal-errors", controller.TypedOptions[string]{
		Reconciler: reconciler,
		// Same priority queue as the default, with the limiter the
		// controller picked, wrapped so we can watch it.
		NewQueue: func(name string, rl workqueue.TypedRateLimiter[string]) workqueue.TypedRateLimitingInterface[string] {
			wq.PriorityQueue = priorityqueue.New(name, func(o *priorityqueue.Opts[string]) { o.RateLimiter = rl })
			return wq
		},
	})
	if err != nil {
		panic(err)
	}
	events := make(chan event.TypedGenericEvent[string], len(cases))
	for _, c := range cases {
		events <- event.TypedGenericEvent[string]{Object: c.key}
	}
	if err := ctrl.Watch(source.TypedChannel(events, handler.TypedFuncs[string, string]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[string]) {
			q.Add(e.Object)
		},
	})); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- ctrl.Start(ctx) }()
	select {
	case <-wq.allDone: // every case reconciled at least once and marked Done
	case <-time.After(10 * time.Second):
		fmt.Fprintln(os.Stderr, "timed out waiting for the reconciles")
		os.Exit(1)
	}
	cancel()
	if err := <-stopped; err != nil {
		panic(err)
	}

	wq.mu.Lock()
	defer wq.mu.Unlock()
	for _, c := range cases {
		isTerminal := errors.Is(c.err, reconcile.TerminalError(nil))
		fmt.Printf("%-33serrors.Is(err, TerminalError(nil)) = %-8trequeued? %t\n", c.key, isTerminal, wq.requeued[c.key])
	}
	terminal := reconcile.TerminalError(cause)
	fmt.Println()
	fmt.Printf("TerminalError message : %s\n", terminal.Error())
	fmt.Printf("Unwrap()              : %s\n", errors.Unwrap(terminal).Error())
}

// watchingQueue is the real priority queue. It notes which key the worker is
// handling (between Get and Done) and whether anything adds that key back
// during that time, which is how the controller requeues.
type watchingQueue struct {
	priorityqueue.PriorityQueue[string]

	mu        sync.Mutex
	inFlight  map[string]bool
	requeued  map[string]bool
	doneKeys  map[string]bool
	stopAfter int
	allDone   chan struct{}
	closed    bool
}

func (q *watchingQueue) GetWithPriority() (string, int, bool) {
	key, prio, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown {
		q.mu.Lock()
		q.inFlight[key] = true
		q.mu.Unlock()
	}
	return key, prio, shutdown
}

func (q *watchingQueue) noteAdd(keys ...string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, k := range keys {
		if q.inFlight[k] {
			q.requeued[k] = true
		}
	}
}

func (q *watchingQueue) AddWithOpts(o priorityqueue.AddOpts, keys ...string) {
	q.noteAdd(keys...)
	q.PriorityQueue.AddWithOpts(o, keys...)
}

func (q *watchingQueue) Add(key string) { q.noteAdd(key); q.PriorityQueue.Add(key) }

func (q *watchingQueue) AddRateLimited(key string) {
	q.noteAdd(key)
	q.PriorityQueue.AddRateLimited(key)
}

func (q *watchingQueue) AddAfter(key string, d time.Duration) {
	q.noteAdd(key)
	q.PriorityQueue.AddAfter(key, d)
}

func (q *watchingQueue) Done(key string) {
	q.PriorityQueue.Done(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.inFlight, key)
	q.doneKeys[key] = true
	if len(q.doneKeys) == q.stopAfter && !q.closed {
		q.closed = true
		close(q.allDone)
	}
}
