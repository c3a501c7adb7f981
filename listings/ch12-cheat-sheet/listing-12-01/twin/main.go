// Listing 12-1, Go twin: the cheat sheet's two tables, measured.
//
// Part 1 runs each arm of the switch through a real controller-runtime
// controller (one per arm, one worker, the default priority queue and
// RecoverPanic on). Its rate limiter is the controller's default kind, the
// 5ms..1000s exponential limiter, passed in through Options.RateLimiter after
// it has already seen two failures for the key. The queue is wrapped through
// the NewQueue hook so that each Forget, rate-limited add, delayed add and
// Done the controller makes is recorded; the failure count is read from the
// limiter after the reconcile.
//
// Part 2 runs each Forget/Done rule on client-go's rate-limiting queue with
// the same kind of limiter. Nothing in the tables is typed in.
//
// Run from listings/: go run ./ch12-cheat-sheet/listing-12-01/twin
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

const (
	key      = "default/web"
	patience = 500 * time.Millisecond
)

func limiter() workqueue.TypedRateLimiter[string] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
}

type outcome func() (reconcile.Result, error)

// arm runs one reconcile returning outcome through the real controller, for
// a key that has failed twice already, and reports the queue calls the
// controller made and the failure count after.
func arm(name string, out outcome) ([]string, int) {
	rl := limiter()
	rl.When(key)
	rl.When(key)

	q := &recordingQueue{done: make(chan struct{})}
	c, err := controller.NewTypedUnmanaged(name, controller.TypedOptions[string]{
		Reconciler:  reconcile.TypedFunc[string](func(context.Context, string) (reconcile.Result, error) { return out() }),
		RateLimiter: rl,
		// The hook receives rl and builds the priority queue the default
		// NewQueue builds (minus the logger); we only wrap it.
		NewQueue: func(name string, rl workqueue.TypedRateLimiter[string]) workqueue.TypedRateLimitingInterface[string] {
			pq := priorityqueue.New(name, func(o *priorityqueue.Opts[string]) { o.RateLimiter = rl })
			q.PriorityQueue = pq
			return q
		},
	})
	if err != nil {
		panic(err)
	}

	events := make(chan event.TypedGenericEvent[string], 1)
	events <- event.TypedGenericEvent[string]{Object: key}
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
	case <-q.done:
	case <-time.After(10 * time.Second):
		fmt.Fprintf(os.Stderr, "%s: timed out waiting for the reconcile\n", name)
		os.Exit(1)
	}
	cancel()
	if err := <-stopped; err != nil {
		panic(err)
	}
	return q.calls, q.failures
}

// recordingQueue is the real priority queue plus a record of each call the
// controller makes after a reconcile. It still satisfies
// priorityqueue.PriorityQueue, so the controller uses it as a priority queue.
//
// It hands out exactly one item: after the first Done, GetWithPriority
// reports shutdown, so the worker stops after its one reconcile even if a
// rate-limited requeue becomes ready before the controller is stopped.
type recordingQueue struct {
	priorityqueue.PriorityQueue[string]
	mu       sync.Mutex
	calls    []string
	handed   bool
	failures int
	done     chan struct{}
}

func (q *recordingQueue) record(call string) {
	q.mu.Lock()
	q.calls = append(q.calls, call)
	q.mu.Unlock()
}

func (q *recordingQueue) GetWithPriority() (string, int, bool) {
	q.mu.Lock()
	handed := q.handed
	q.handed = true
	q.mu.Unlock()
	if handed {
		return "", 0, true
	}
	return q.PriorityQueue.GetWithPriority()
}

// The controller requeues through AddWithOpts: RateLimited for an error or
// Requeue, After for Result.RequeueAfter. A plain add (the channel source)
// is not recorded.
func (q *recordingQueue) AddWithOpts(o priorityqueue.AddOpts, items ...string) {
	for range items {
		switch {
		case o.RateLimited:
			q.record("add_rate_limited")
		case o.After > 0:
			q.record(fmt.Sprintf("add_after %s", o.After))
		}
	}
	q.PriorityQueue.AddWithOpts(o, items...)
}

func (q *recordingQueue) AddRateLimited(item string) {
	q.record("add_rate_limited")
	q.PriorityQueue.AddRateLimited(item)
}

func (q *recordingQueue) AddAfter(item string, d time.Duration) {
	q.record(fmt.Sprintf("add_after %s", d))
	q.PriorityQueue.AddAfter(item, d)
}

func (q *recordingQueue) Forget(item string) {
	q.record("forget")
	q.PriorityQueue.Forget(item)
}

func (q *recordingQueue) Done(item string) {
	q.record("done")
	q.PriorityQueue.Done(item)
	// controller-runtime's priority queue takes adds into a buffer that a
	// background goroutine flushes, and a rate-limited add calls When (the
	// failure count) only at the flush. Len flushes the buffer first, so
	// the count read next includes the requeue the reconcile just made.
	q.PriorityQueue.Len()
	q.mu.Lock()
	q.failures = q.PriorityQueue.NumRequeues(item)
	q.mu.Unlock()
	close(q.done)
}

func main() {
	// Keep stdout for the tables: the controller logs every error, and the
	// panic handler logs through klog.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())

	arms := []struct {
		name string
		out  outcome
	}{
		{"Ok(done)", func() (reconcile.Result, error) { return reconcile.Result{}, nil }},
		{"Ok(requeue_after 30s)", func() (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
		}},
		{"Ok(requeue: true)", func() (reconcile.Result, error) {
			return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the deprecated field is the point
		}},
		{"Err(any error)", func() (reconcile.Result, error) {
			return reconcile.Result{}, errors.New("connection refused")
		}},
		{"Err(TerminalError)", func() (reconcile.Result, error) {
			return reconcile.Result{}, reconcile.TerminalError(errors.New("spec.replicas must be >= 0"))
		}},
		{"panic, RecoverPanic on", func() (reconcile.Result, error) { panic("nil map") }},
	}
	fmt.Println("THE SWITCH: what happens after Reconcile returns (the key had failed twice)")
	fmt.Printf("%-24s%-38s%s\n", "reconcile returned", "queue calls, in order", "failures after")
	for i, a := range arms {
		calls, failures := arm(fmt.Sprintf("arm-%d", i+1), a.out)
		fmt.Printf("%-24s%-38s%d\n", a.name, strings.Join(calls, ", "), failures)
	}

	fmt.Println()
	fmt.Println("FORGET AND DONE: on client-go's queue")
	fmt.Printf("%-28s%-44s%s\n", "call", "the queue", "the failure count")
	rl := limiter()
	q := workqueue.NewTypedRateLimitingQueue(rl)
	defer q.ShutDown() // also releases the Get still waiting in the background
	q.Add(key)
	rl.When(key)
	rl.When(key)
	n, count := q.Len(), q.NumRequeues(key)
	q.Forget(key)
	forgot := fmt.Sprintf("Len %d -> %d", n, q.Len())
	fmt.Printf("%-28s%-44s%d -> %d\n", "Forget(key)", forgot, count, q.NumRequeues(key))

	item, _ := q.Get()
	q.Add(item) // an event while processing: dirty only
	before := q.Len()
	q.Done(item)
	done := fmt.Sprintf("Len %d -> %d: back in the FIFO", before, q.Len())
	fmt.Printf("%-28s%-44s%s\n", "Done(key) after a re-add", done, "untouched")

	item, _ = q.Get()
	for range 100 {
		q.Add(item)
	}
	stalled := !getWithin(q, patience)
	never := fmt.Sprintf("Len %d, Get timed out after %s: %t", q.Len(), patience, stalled)
	fmt.Printf("%-28s%-44s%s\n", "no Done, then 100 adds", never, "untouched")
}

// getWithin reports whether a Get returns an item within d. The Get runs in
// the background; if it is still waiting, ShutDown releases it later.
func getWithin(q workqueue.TypedRateLimitingInterface[string], d time.Duration) bool {
	got := make(chan struct{}, 1)
	go func() {
		if item, shutdown := q.Get(); !shutdown {
			q.Done(item)
			got <- struct{}{}
		}
	}()
	select {
	case <-got:
		return true
	case <-time.After(d):
		return false
	}
}
