// Listing 5-7, Go twin: ReconciliationTimeout on a real controller-runtime
// controller, with a reconciler whose first attempt waits an hour. Run
// twice: once the reconciler honours its context (it waits for the hour or
// for ctx.Done(), whichever comes first), once it ignores it.
//
// The option only puts a deadline on the context each Reconcile gets
// (internal/controller/controller.go, context.WithTimeoutCause): a
// reconciler that honours it returns ctx.Err() at the deadline, and the
// switch requeues the key as for any error; one that ignores it runs to the
// end, and holds its key until then. The Rust port drops the reconcile's
// future instead, so this twin prints its own output (twin/output.txt).
//
// The hour passes on testing/synctest's virtual clock, so this twin is a
// test; TestMain sends the testing package's own output to stderr. Run from
// listings/:
//
//	go test -c -o /tmp/listing-05-07.test ./ch05-silent-stall/listing-05-07/twin && /tmp/listing-05-07.test
package main

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) { twin.RunListing(m) }

func TestHonoursItsContext(t *testing.T) { run(t, true) }

func TestIgnoresItsContext(t *testing.T) { run(t, false) }

func run(t *testing.T, honours bool) {
	name := "ignores"
	if honours {
		name = "honours"
	}
	fmt.Fprintf(stdout, "a reconciler that %s its context:\n", name)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now() // virtual time
		at := func() string { return fmt.Sprintf("%-7s", time.Since(start)) }
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		attempts := 0

		// ANCHOR: timeout
		// The first attempt waits an hour on something that never answers;
		// the second returns at once.
		reconciler := reconcile.TypedFunc[string](func(
			ctx context.Context, key string,
		) (reconcile.Result, error) {
			attempts++
			if attempts > 1 {
				fmt.Fprintf(stdout,
					"%s reconcile %q #%d starts, returns ok\n", at(), key, attempts)
				cancel() // stop the controller after this attempt
				return reconcile.Result{}, nil
			}
			fmt.Fprintf(stdout, "%s reconcile %q #1 starts, then waits 1h\n", at(), key)
			if honours {
				select {
				case <-time.After(time.Hour):
				case <-ctx.Done():
					return reconcile.Result{}, ctx.Err()
				}
			} else {
				time.Sleep(time.Hour)
			}
			fmt.Fprintf(stdout, "%s reconcile %q #1 returns ok, its context: %v\n",
				at(), key, ctx.Err())
			cancel()
			return reconcile.Result{}, nil
		})
		c, err := controller.NewTypedUnmanaged(name, controller.TypedOptions[string]{
			Reconciler:            reconciler,
			ReconciliationTimeout: 2 * time.Second,
			LogConstructor: func(*string) logr.Logger {
				return twin.ReconcilerErrors(func(err error) {
					fmt.Fprintf(stdout, "%s Reconciler error: %v\n", at(), err)
				})
			},
		})
		// ANCHOR_END: timeout
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Watch(source.TypedFunc[string](func(_ context.Context, q workqueue.TypedRateLimitingInterface[string]) error {
			q.Add("web")
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil { // returns once ctx is cancelled and the worker stopped
			t.Fatal(err)
		}
		fmt.Fprintf(stdout, "%s attempts: %d\n", at(), attempts)
	})
}
