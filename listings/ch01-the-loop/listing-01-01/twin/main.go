// Listing 1-1, Go twin: a trace of the real controller-runtime loop.
//
// This runs the real controller from sigs.k8s.io/controller-runtime with no
// API server: the events come from a channel source, the reconciler follows
// a script, and there is one worker. Everything else is the default: the
// priority queue, the 5ms..1000s exponential rate limiter, RecoverPanic on.
//
// To see what the controller does with the queue, its queue is wrapped in
// tracingQueue, which prints each Forget, rate-limited add, delayed add and
// Done before passing it on to the real priority queue.
//
// Run from listings/: go run ./ch01-the-loop/listing-01-01/twin
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
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// 5 first attempts, plus the second attempts of "fail", "later" and "boom".
const wantReconciles = 8

func main() {
	// Keep stdout for the trace: the controller logs every error, and the
	// panic handler logs through klog.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	var (
		mu         sync.Mutex
		attempts   = map[string]int{}
		reconciles int
	)
	// The scripted reconciler. Request type is a plain string key.
	reconciler := reconcile.TypedFunc[string](func(ctx context.Context, key string) (reconcile.Result, error) {
		mu.Lock()
		attempts[key]++
		n := attempts[key]
		reconciles++
		mu.Unlock()

		say := func(outcome string) { fmt.Printf("reconcile %q #%d -> %s\n", key, n, outcome) }
		if n > 1 {
			say("success")
			return reconcile.Result{}, nil
		}
		switch key {
		case "fail":
			err := errors.New("connection refused")
			say("error: " + err.Error())
			return reconcile.Result{}, err
		case "terminal":
			err := reconcile.TerminalError(errors.New("spec.replicas must be >= 0"))
			say(err.Error()) // "terminal error: spec.replicas must be >= 0"
			return reconcile.Result{}, err
		case "later":
			res := reconcile.Result{RequeueAfter: 30 * time.Millisecond}
			say(fmt.Sprintf("requeue after %s", res.RequeueAfter))
			return res, nil
		case "boom":
			say("panic")
			var m map[string]int
			m["x"]++ // a real "assignment to entry in nil map" panic
		}
		say("success")
		return reconcile.Result{}, nil
	})

	allDone := make(chan struct{})
	c, err := controller.NewTypedUnmanaged("trace", controller.TypedOptions[string]{
		Reconciler: reconciler,
		// NewQueue is the public hook for the queue. It receives the rate
		// limiter the controller chose (the default one here) and builds
		// the same priority queue the default NewQueue builds; we only
		// wrap it.
		NewQueue: func(name string, rl workqueue.TypedRateLimiter[string]) workqueue.TypedRateLimitingInterface[string] {
			pq := priorityqueue.New(name, func(o *priorityqueue.Opts[string]) { o.RateLimiter = rl })
			return &tracingQueue{PriorityQueue: pq, stopAfter: wantReconciles, allDone: allDone}
		},
	})
	if err != nil {
		panic(err)
	}

	// The channel source: every event becomes a plain Add of its key.
	events := make(chan event.TypedGenericEvent[string], 5)
	for _, key := range []string{"ok", "fail", "terminal", "later", "boom"} {
		events <- event.TypedGenericEvent[string]{Object: key}
	}
	err = c.Watch(source.TypedChannel(events, handler.TypedFuncs[string, string]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[string]) {
			q.Add(e.Object)
		},
	}))
	if err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Start(ctx) }()

	select {
	case <-allDone:
	case <-time.After(10 * time.Second):
		fmt.Fprintln(os.Stderr, "timed out waiting for the reconciles")
		os.Exit(1)
	}
	cancel()
	if err := <-stopped; err != nil {
		panic(err)
	}

	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("\nreconciles: %d, done calls: %d\n", reconciles, doneCalls)
}

var doneCalls int // only touched by the single worker, and read after it stopped

// tracingQueue is the real priority queue plus a print for each call the
// controller makes after a reconcile. It still satisfies
// priorityqueue.PriorityQueue, so the controller uses it as a priority queue.
type tracingQueue struct {
	priorityqueue.PriorityQueue[string]
	stopAfter int
	allDone   chan struct{}
}

// The controller requeues through AddWithOpts: RateLimited for an error,
// After for Result.RequeueAfter. A plain add (the channel source) is not printed.
func (q *tracingQueue) AddWithOpts(o priorityqueue.AddOpts, items ...string) {
	for _, key := range items {
		switch {
		case o.RateLimited:
			fmt.Printf("  add_rate_limited %q\n", key)
		case o.After > 0:
			fmt.Printf("  add_after %q %s\n", key, o.After)
		}
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

func (q *tracingQueue) AddRateLimited(key string) {
	fmt.Printf("  add_rate_limited %q\n", key)
	q.PriorityQueue.AddRateLimited(key)
}

func (q *tracingQueue) AddAfter(key string, d time.Duration) {
	fmt.Printf("  add_after %q %s\n", key, d)
	q.PriorityQueue.AddAfter(key, d)
}

func (q *tracingQueue) Forget(key string) {
	fmt.Printf("  forget %q\n", key)
	q.PriorityQueue.Forget(key)
}

func (q *tracingQueue) Done(key string) {
	fmt.Printf("  done %q\n", key)
	q.PriorityQueue.Done(key)
	doneCalls++
	if doneCalls == q.stopAfter {
		close(q.allDone)
	}
}
