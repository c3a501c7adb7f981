// Listing 10-1, Go twin: the cheat sheet's two tables, measured.
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
// Run from listings/: go run ./cheat-sheet/listing-cheat-sheet/twin
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/trace"
	"forget-is-not-delete/listings/internal/twin"
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

	// The queue records each call the controller makes after the reconcile
	// (not the source's plain add). It hands out exactly one item: after
	// that, GetWithPriority reports shutdown, so the worker stops after its
	// one reconcile even if a rate-limited requeue becomes ready before the
	// controller is stopped.
	var (
		calls    []string
		failures int
		done     = make(chan struct{})
	)
	q := &trace.Queue{HandOut: 1}
	q.OnCall = func(c trace.Call) {
		if c.Op != trace.Add {
			calls = append(calls, c.WithoutKey())
		}
	}
	q.OnDone = func(item string, _ int) {
		// controller-runtime's priority queue takes adds into a buffer that
		// a background goroutine flushes, and a rate-limited add calls When
		// (the failure count) only at the flush. Len flushes the buffer
		// first, so the count read next includes the requeue the reconcile
		// just made.
		q.Len()
		failures = q.NumRequeues(item)
		close(done)
	}
	// ANCHOR: arm
	c, err := controller.NewTypedUnmanaged(name, controller.TypedOptions[string]{
		Reconciler:  reconcile.TypedFunc[string](func(context.Context, string) (reconcile.Result, error) { return out() }),
		RateLimiter: rl,
		// The hook receives rl and builds the priority queue the default
		// NewQueue builds (minus the logger); we only wrap it.
		NewQueue: q.NewQueue,
	})
	// ANCHOR_END: arm
	if err != nil {
		panic(err)
	}
	if err := drive.Keys(c, key); err != nil {
		panic(err)
	}

	stop := drive.Start(c)
	drive.Wait(done, name+": timed out waiting for the reconcile")
	stop()
	return calls, failures
}

// goName writes a recorded call as Go does: "add_after 30s" is
// "AddAfter 30s". The trace names calls as the Rust port does.
func goName(call string) string {
	name, rest, _ := strings.Cut(call, " ")
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	if rest == "" {
		return b.String()
	}
	return b.String() + " " + rest
}

func main() {
	// Keep stdout for the tables: the controller logs every error, and the
	// panic handler logs through klog.
	twin.QuietLogs()

	arms := []struct {
		name string
		out  outcome
	}{
		{"Result{}, nil", func() (reconcile.Result, error) { return reconcile.Result{}, nil }},
		{"{RequeueAfter: 30s}, nil", func() (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: 30 * time.Second}, nil
		}},
		{"{Requeue: true}, nil", func() (reconcile.Result, error) {
			return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the deprecated field is the point
		}},
		{"{}, err", func() (reconcile.Result, error) {
			return reconcile.Result{}, errors.New("connection refused")
		}},
		{"{}, TerminalError(err)", func() (reconcile.Result, error) {
			return reconcile.Result{}, reconcile.TerminalError(errors.New("spec.replicas must be >= 0"))
		}},
		{"panic, RecoverPanic on", func() (reconcile.Result, error) { panic("nil map") }},
	}
	fmt.Println("THE SWITCH: what happens after Reconcile returns (the key had failed twice)")
	fmt.Printf("%-26s%-38s%s\n", "reconcile returned", "queue calls, in order", "failures after")
	for i, a := range arms {
		calls, failures := arm(fmt.Sprintf("arm-%d", i+1), a.out)
		for i, c := range calls {
			calls[i] = goName(c)
		}
		fmt.Printf("%-26s%-38s%d\n", a.name, strings.Join(calls, ", "), failures)
	}

	fmt.Println()
	fmt.Println("FORGET AND DONE: on client-go's queue")
	fmt.Printf("%-26s%-40s%s\n", "call", "the queue", "failure count")
	rl := limiter()
	q := workqueue.NewTypedRateLimitingQueue(rl)
	defer q.ShutDown() // also releases the Get still waiting in the background
	q.Add(key)
	rl.When(key)
	rl.When(key)
	n, count := q.Len(), q.NumRequeues(key)
	q.Forget(key)
	forgot := fmt.Sprintf("Len %d -> %d", n, q.Len())
	fmt.Printf("%-26s%-40s%d -> %d\n", "Forget(key)", forgot, count, q.NumRequeues(key))

	item, _ := q.Get()
	q.Add(item) // an event while processing: dirty only
	before := q.Len()
	q.Done(item)
	done := fmt.Sprintf("Len %d -> %d: back in the FIFO", before, q.Len())
	fmt.Printf("%-26s%-40s%s\n", "Done(key) after a re-add", done, "untouched")

	item, _ = q.Get()
	for range 100 {
		q.Add(item)
	}
	stalled := !getWithin(q, patience)
	never := fmt.Sprintf("Len %d, Get timed out after %s: %t", q.Len(), patience, stalled)
	fmt.Printf("%-26s%-40s%s\n", "no Done, then 100 adds", never, "untouched")
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
