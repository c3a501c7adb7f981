// Listing 3-4, Go twin: the retry curve after replacing the default rate
// limiter.
//
// The same always-failing reconciler as listing 3-2, run by a real
// controller-runtime controller whose Options.RateLimiter is an exponential
// limiter with a 100ms base and a 30s cap. UsePriorityQueue is left unset,
// so the controller still runs on the priority queue, which takes the
// limiter it is given. The reconciler notes the time of every attempt; the
// table is made from those timestamps only.
//
// The controller runs inside a testing/synctest bubble, whose clock is
// virtual, so testing/synctest needs a *testing.T and this twin is a test.
// TestMain sends the testing package's own output to stderr. Run from
// listings/:
//
//	go test -c -o /tmp/listing-03-04.test ./ch03-retry-curve/listing-03-04/twin && /tmp/listing-03-04.test
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

const wantAttempts = 13 // enough for a row at failure #12

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) {
	twin.QuietLogs() // the controller logs every one of the 13 errors
	twin.RunListing(m)
}

func TestCustomRateLimiter(t *testing.T) {
	var attempts []time.Time

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		// ANCHOR: limiter
		options := controller.TypedOptions[string]{
			RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[string](
				100*time.Millisecond, 30*time.Second),
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
		// ANCHOR_END: limiter
		if err != nil {
			t.Fatal(err)
		}
		// One object, added once when the controller starts.
		if err := c.Watch(source.TypedFunc[string](func(
			_ context.Context, q workqueue.TypedRateLimitingInterface[string],
		) error {
			q.Add("default/web")
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil { // returns once ctx is cancelled and the worker stopped
			t.Fatal(err)
		}
	})

	if len(attempts) != wantAttempts {
		t.Fatalf("observed %d attempts, want %d", len(attempts), wantAttempts)
	}
	fmt.Fprintf(stdout, "%-10s%15s%22s\n", "failure", "waited", "reconciled again at")
	for n := 1; n < wantAttempts; n++ {
		// attempts[0] is attempt 1; failure n is attempt n, retried as attempt n+1.
		waited := attempts[n].Sub(attempts[n-1])
		againAt := attempts[n].Sub(attempts[0])
		fmt.Fprintf(stdout, "%-10d%15s%22s\n", n, waited, againAt)
	}
	fmt.Fprintf(stdout, "\nattempts observed: %d\n", len(attempts))
}
