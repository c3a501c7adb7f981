// Listing 1-1, Go twin: a trace of the real controller-runtime loop.
//
// This runs the real controller from sigs.k8s.io/controller-runtime with no
// API server: the events come from a channel source, the reconciler follows
// a script, and there is one worker. Everything else is the default: the
// priority queue, the 5ms..1000s exponential rate limiter, RecoverPanic on.
//
// To see what the controller does with the queue, its queue is wrapped in a
// trace.Queue (internal/trace), which prints each Forget, rate-limited add,
// delayed add and Done before passing it on to the real priority queue.
//
// Run from listings/: go run ./ch01-the-loop/listing-01-01/twin
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/trace"
	"forget-is-not-delete/listings/internal/twin"
)

// 5 first attempts, plus the second attempts of "fail", "later" and "boom".
const wantReconciles = 8

func main() {
	// Keep stdout for the trace: the controller logs every error, and the
	// panic handler logs through klog.
	twin.QuietLogs()

	var (
		mu         sync.Mutex
		attempts   = map[string]int{}
		reconciles int
	)
	// ANCHOR: script
	// The scripted reconciler. Request type is a plain string key.
	reconciler := reconcile.TypedFunc[string](func(
		ctx context.Context, key string,
	) (reconcile.Result, error) {
		mu.Lock()
		attempts[key]++
		n := attempts[key]
		reconciles++
		mu.Unlock()

		say := func(outcome string) {
			fmt.Printf("reconcile %q #%d -> %s\n", key, n, outcome)
		}
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
			m["x"]++ // a real runtime error: "assignment to entry in nil map"
		}
		say("success")
		return reconcile.Result{}, nil
	})
	// ANCHOR_END: script

	// The queue prints each call the controller makes after a reconcile
	// (a plain add, from the channel source, is not printed), and says when
	// every reconcile has had its Done.
	allDone := make(chan struct{})
	queue := &trace.Queue{
		OnCall: trace.Print,
		OnDone: func(_ string, doneCalls int) {
			if doneCalls == wantReconciles {
				close(allDone)
			}
		},
	}
	// ANCHOR: loop
	c, err := controller.NewTypedUnmanaged("trace", controller.TypedOptions[string]{
		Reconciler: reconciler,
		// NewQueue is the public hook for the queue. It receives the rate
		// limiter the controller chose (the default one here) and builds
		// the same priority queue the default NewQueue builds; we only
		// wrap it.
		NewQueue: queue.NewQueue,
		// The controller's logger prints the error of each failed
		// reconcile into the trace, where it logs "Reconciler error".
		LogConstructor: func(*string) logr.Logger {
			return twin.ReconcilerErrors(func(err error) {
				fmt.Printf("  log: Reconciler error: %v\n", err)
			})
		},
	})
	if err != nil {
		panic(err)
	}

	// The channel source: every event becomes a plain Add of its key.
	if err := drive.Keys(c, "ok", "fail", "terminal", "later", "boom"); err != nil {
		panic(err)
	}

	stop := drive.Start(c)
	drive.Wait(allDone, "timed out waiting for the reconciles")
	stop()
	// ANCHOR_END: loop

	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("\nreconciles: %d, done calls: %d\n", reconciles, queue.DoneCalls())
}
