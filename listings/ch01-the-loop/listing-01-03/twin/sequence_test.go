// Listing 1-3, Go twin: one object through the real controller-runtime
// loop, each step printed with its time: the event that adds it, the
// worker's get, the reconcile and what it returns, the requeue or Forget
// the controller picks, the Forget the queue passes on to the rate limiter,
// and Done.
//
// The controller has default options but two hooks: its queue is the
// priority queue the default NewQueue builds, wrapped in a trace.Queue that
// reports each call, and its rate limiter is client-go's
// DefaultTypedControllerRateLimiter (the one a controller picks only with
// UsePriorityQueue set to false; the default is the plain exponential one,
// which gives this key the same 5ms), wrapped to report Forget. The 5ms retry runs on testing/synctest's virtual
// clock, so this twin is a test; TestMain sends the testing package's own
// output to stderr. Run from listings/:
//
//	go test -c -o /tmp/listing-01-03.test ./ch01-the-loop/listing-01-03/twin && /tmp/listing-01-03.test
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

	"forget-is-not-delete/listings/internal/trace"
	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) {
	twin.QuietLogs() // the controller logs the first attempt's error
	twin.RunListing(m)
}

var start time.Time

// step prints one step of the sequence: when, from which participant, to
// which, what.
func step(from, to, what string) {
	fmt.Fprintf(stdout, "%-6s %-10s %-10s %s\n", time.Since(start), from, to, what)
}

// ANCHOR: limiter
// reporting wraps a limiter (here DefaultTypedControllerRateLimiter),
// reporting each Forget the queue passes on to it. (Its When is not
// reported: the priority queue asks for the delay on a goroutine of its
// own, when it flushes its add buffer, so the line's place in the trace
// would depend on the scheduler.)
type reporting struct {
	workqueue.TypedRateLimiter[string]
}

func (r reporting) Forget(key string) {
	step("queue", "limiter", fmt.Sprintf("forget %q", key))
	r.TypedRateLimiter.Forget(key)
}

// ANCHOR_END: limiter

func TestSequence(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start = time.Now() // virtual time
		fmt.Fprintf(stdout, "%-6s %-10s %-10s call\n", "time", "from", "to")

		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		// Every call on the queue is reported: the event source's adds,
		// and the worker's gets and decisions. The run ends at the third
		// Done.
		queue := &trace.Queue{
			OnCall: func(c trace.Call) {
				from := "worker"
				if c.Op == trace.Add {
					from = "source"
				}
				step(from, "queue", c.String())
			},
			OnGet: func(key string) { step("worker", "queue", fmt.Sprintf("get -> %q", key)) },
			OnDone: func(_ string, doneCalls int) {
				if doneCalls == 3 {
					cancel()
				}
			},
		}

		// ANCHOR: reconcile
		// The first attempt fails; during the second, an update to the
		// object arrives (the source adds it while the worker holds it);
		// every later attempt succeeds.
		updates, added := make(chan string), make(chan struct{})
		attempts := 0
		reconciler := reconcile.TypedFunc[string](func(
			_ context.Context, key string,
		) (reconcile.Result, error) {
			attempts++
			step("worker", "Reconcile", fmt.Sprintf("reconcile %q #%d", key, attempts))
			if attempts == 2 {
				updates <- key
				<-added
			}
			if attempts == 1 {
				err := errors.New("connection refused")
				step("Reconcile", "worker", "error: "+err.Error())
				return reconcile.Result{}, err
			}
			step("Reconcile", "worker", "ok")
			return reconcile.Result{}, nil
		})
		// ANCHOR_END: reconcile

		c, err := controller.NewTypedUnmanaged("sequence", controller.TypedOptions[string]{
			Reconciler:  reconciler,
			RateLimiter: reporting{workqueue.DefaultTypedControllerRateLimiter[string]()},
			NewQueue:    queue.NewQueue,
		})
		if err != nil {
			t.Fatal(err)
		}
		// The event source: the object once at start, then each update the
		// reconciler asks for.
		if err := c.Watch(source.TypedFunc[string](func(ctx context.Context, q workqueue.TypedRateLimitingInterface[string]) error {
			q.Add("web")
			go func() {
				for {
					select {
					case key := <-updates:
						q.Add(key)
						added <- struct{}{}
					case <-ctx.Done():
						return
					}
				}
			}()
			return nil
		})); err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil { // returns once ctx is cancelled and the worker stopped
			t.Fatal(err)
		}
		if queue.Len() != 0 {
			t.Fatalf("the queue still holds %d keys", queue.Len())
		}
	})
}
