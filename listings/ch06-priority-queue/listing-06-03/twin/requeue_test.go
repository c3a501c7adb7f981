// Listing 6-3, Go twin: the same reconcile on controller-runtime v0.25.3's
// real controller, once on client-go's rate-limiting queue
// (UsePriorityQueue=false) and once on the priority queue (the default).
//
// Each run is a testing/synctest bubble, so the fifteen minutes watched take
// no real time; testing/synctest needs a *testing.T, so this twin is a test,
// and TestMain sends the testing package's own output to stderr. Run from
// listings/:
//
//	go test -c -o /tmp/listing-06-03.test ./ch06-priority-queue/listing-06-03/twin && /tmp/listing-06-03.test
package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/twin"
)

func TestMain(m *testing.M) {
	twin.QuietLogs()
	twin.RunListing(m)
}

// situation: an event for the key 2s into the first reconcile, and whether
// every run asks for RequeueAfter or only the first.
type situation struct{ event, everyRun bool }

type queue = workqueue.TypedRateLimitingInterface[string]

// runs watches one key for fifteen minutes on the queue pq chooses and says
// when its reconciles began.
func runs(t *testing.T, pq bool, s situation) string {
	var began []time.Duration
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		// ANCHOR: reconcile
		reconciler := func(context.Context, string) (reconcile.Result, error) {
			first := len(began) == 0
			began = append(began, time.Since(start))
			time.Sleep(10 * time.Second) // the reconcile's work
			if first || s.everyRun {
				// "Come back in ten minutes", to renew something in time.
				return reconcile.Result{RequeueAfter: 10 * time.Minute}, nil
			}
			return reconcile.Result{}, nil
		}
		q, stop := runController(t, pq, reconciler, "cert")
		if s.event {
			time.Sleep(2 * time.Second)
			q.Add("cert") // an update to the object, mid-reconcile
		}
		// ANCHOR_END: reconcile
		time.Sleep(15*time.Minute - time.Since(start))
		stop()
	})
	at := make([]string, len(began))
	for i, d := range began {
		at[i] = d.String()
	}
	return "runs at " + strings.Join(at, ", ")
}

// runController runs the real controller with one worker on the chosen queue,
// its events from a channel source that adds each of keys once.
func runController(t *testing.T, pq bool, r func(context.Context, string) (reconcile.Result, error), keys ...string) (queue, func()) {
	queues := make(chan queue, 1)
	c, err := controller.NewTypedUnmanaged("demo", controller.TypedOptions[string]{
		Reconciler:         reconcile.TypedFunc[string](r),
		UsePriorityQueue:   ptr.To(pq),
		SkipNameValidation: ptr.To(true),
		// The queue the flag chooses anyway, kept for the test's own Add.
		NewQueue: func(_ string, rl workqueue.TypedRateLimiter[string]) queue {
			var q queue
			if pq {
				q = priorityqueue.New("", func(o *priorityqueue.Opts[string]) { o.RateLimiter = rl })
			} else {
				q = workqueue.NewTypedRateLimitingQueue(rl)
			}
			queues <- q
			return q
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := drive.Keys(c, keys...); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Start(ctx) }()
	q := <-queues
	return q, func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
	}
}

func TestListing(t *testing.T) {
	situations := []struct {
		title string
		s     situation
	}{
		{"no other event", situation{}},
		{"an event at 2s, during the first reconcile", situation{event: true}},
		{"the same event, and every run asks again", situation{event: true, everyRun: true}},
	}
	out := twin.Stdout
	fmt.Fprintln(out, "each reconcile takes 10s and asks for RequeueAfter 10m;")
	fmt.Fprintln(out, "when does the key run in the first 15m?")
	for _, sit := range situations {
		fmt.Fprintln(out)
		fmt.Fprintln(out, sit.title)
		fmt.Fprintf(out, "  client-go queue  %s\n", runs(t, false, sit.s))
		fmt.Fprintf(out, "  priority queue   %s\n", runs(t, true, sit.s))
	}
}
