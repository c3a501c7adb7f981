// Listing 3-2, Go twin: the retry curve measured through the real loop.
//
// A reconciler that always fails is run by a real controller-runtime
// controller with default options (priority queue, exponential 5ms..1000s
// limiter). The reconciler notes the time of every attempt; the waits are
// made from those timestamps only, and set beside what a limiter of the same
// kind, asked on its own, answers for the same failure.
//
// Waiting 1h28m for 23 attempts is not an option, so the controller runs
// inside a testing/synctest bubble: every goroutine it starts lives in the
// bubble, time.Now and the queue's timers read a virtual clock, and that
// clock jumps forward only when every goroutine in the bubble is blocked.
// The queue's own timer is what wakes the worker, so the gaps between
// attempts are measured, not computed.
//
// testing/synctest needs a *testing.T, so this twin is a test. TestMain
// sends the testing package's own chatter (PASS, === RUN ...) to stderr,
// leaving stdout with the table alone. Run from the repository:
//
//	go -C listings/ch03-retry-curve/listing-03-02/twin test
package main

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"forget-is-not-delete/listings/internal/twin"
)

var rows = []int{1, 2, 4, 8, 10, 12, 14, 16, 18, 19, 20, 22}

const wantAttempts = 23 // enough for a row at failure #22

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) {
	twin.QuietLogs() // the controller logs every one of the 23 errors
	twin.RunListing(m)
}

func TestRetryCurve(t *testing.T) {
	var attempts []time.Time

	// ANCHOR: measure
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		options := controller.TypedOptions[string]{
			Reconciler: reconcile.TypedFunc[string](func(
				context.Context, string,
			) (reconcile.Result, error) {
				attempts = append(attempts, time.Now()) // virtual time
				if len(attempts) == wantAttempts {
					// Stop the controller; its last requeue is never
					// handed out.
					cancel()
				}
				return reconcile.Result{}, errors.New("connection refused")
			}),
		}
		c, err := controller.NewTypedUnmanaged("retry-curve", options)
		if err != nil {
			t.Fatal(err)
		}
		// One object, added once when the controller starts.
		if err := c.Watch(source.TypedFunc[string](func(
			_ context.Context, q workqueue.TypedRateLimitingInterface[string],
		) error {
			q.Add("my-object")
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		// Returns once ctx is cancelled and the worker stopped.
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
	})
	// ANCHOR_END: measure

	if len(attempts) != wantAttempts {
		t.Fatalf("observed %d attempts, want %d", len(attempts), wantAttempts)
	}
	// ANCHOR: table
	// The limiter's own answers, from a fresh one of the same kind: the
	// n-th call is what it says for failure n. Their running total is shown
	// to the second; the measured columns are exact.
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](
		5*time.Millisecond, 1000*time.Second)
	says := make([]time.Duration, wantAttempts)
	for i := range says {
		says[i] = limiter.When("my-object")
	}
	fmt.Fprintf(stdout, "%-10s%15s%17s%15s%22s\n",
		"failure", "delay", "cumulative", "waited", "reconciled again at")
	for _, n := range rows {
		var cumulative time.Duration
		for _, d := range says[:n] {
			cumulative += d
		}
		// attempts[0] is attempt 1; failure n is attempt n, retried as attempt n+1.
		waited := attempts[n].Sub(attempts[n-1])
		againAt := attempts[n].Sub(attempts[0])
		fmt.Fprintf(stdout, "%-10d%15s%17s%15s%22s\n",
			n, says[n-1], cumulative.Round(time.Second), waited, againAt)
	}
	// ANCHOR_END: table
	fmt.Fprintf(stdout, "\nattempts observed: %d\n", len(attempts))
}
