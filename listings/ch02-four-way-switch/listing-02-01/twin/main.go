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
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/trace"
	"forget-is-not-delete/listings/internal/twin"
)

// ANCHOR: cases
var cause = errors.New("spec.replicas must be >= 0")

// Each case is a key; the reconciler returns that case's error on the
// first attempt (and nil on any retry).
var cases = []struct {
	key string
	err error
}{
	{"plain error", errors.New("connection refused")},
	{"TerminalError", reconcile.TerminalError(cause)},
	{"TerminalError wrapped with %w",
		fmt.Errorf("updating status: %w", reconcile.TerminalError(cause))},
	{"TerminalError wrapped with %v",
		fmt.Errorf("updating status: %v", reconcile.TerminalError(cause))},
	{"nil", nil},
}

// ANCHOR_END: cases

func main() {
	twin.QuietLogs() // the controller logs every error; keep stdout for the table

	var keys []string
	errs := map[string]error{}
	for _, c := range cases {
		keys = append(keys, c.key)
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

	// The queue notes which key the worker is handling (between Get and
	// Done) and whether anything adds that key back during that time, which
	// is how the controller requeues. It says when every case has had its
	// Done.
	var (
		inFlight = map[string]bool{}
		requeued = map[string]bool{}
		doneKeys = map[string]bool{}
		allDone  = make(chan struct{})
		closed   bool
	)
	queue := &trace.Queue{
		OnGet: func(key string) { inFlight[key] = true },
		OnCall: func(c trace.Call) {
			if c.Op.IsAdd() && inFlight[c.Key] {
				requeued[c.Key] = true
			}
		},
		OnDone: func(key string, _ int) {
			delete(inFlight, key)
			doneKeys[key] = true
			if len(doneKeys) == len(cases) && !closed {
				closed = true
				close(allDone)
			}
		},
	}
	ctrl, err := controller.NewTypedUnmanaged("terminal-errors", controller.TypedOptions[string]{
		Reconciler: reconciler,
		// Same priority queue as the default, with the limiter the
		// controller picked, wrapped so we can watch it.
		NewQueue: queue.NewQueue,
	})
	if err != nil {
		panic(err)
	}
	// The channel source: every event becomes a plain Add of its key.
	if err := drive.Keys(ctrl, keys...); err != nil {
		panic(err)
	}

	stop := drive.Start(ctrl)
	drive.Wait(allDone, "timed out waiting for the reconciles") // every case reconciled at least once and marked Done
	stop()

	fmt.Printf("%-33s%-36srequeued?\n",
		"error", "errors.Is(err, TerminalError(nil))")
	for _, c := range cases {
		// ANCHOR: detect
		isTerminal := errors.Is(c.err, reconcile.TerminalError(nil))
		// ANCHOR_END: detect
		fmt.Printf("%-33s%-36t%t\n", c.key, isTerminal, requeued[c.key])
	}
	// ANCHOR: message
	terminal := reconcile.TerminalError(cause)
	fmt.Println()
	fmt.Printf("TerminalError message : %s\n", terminal.Error())
	fmt.Printf("Unwrap()              : %s\n", errors.Unwrap(terminal).Error())
	fmt.Printf("TerminalError(nil)    : %s\n", reconcile.TerminalError(nil).Error())
	// ANCHOR_END: message
}
