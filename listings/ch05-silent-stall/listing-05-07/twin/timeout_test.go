// Listing 5-7, Go twin: ReconciliationTimeout on a real controller-runtime
// controller, with a reconciler whose first attempt waits an hour. Run
// three times: the reconciler honours its context (it waits for the hour
// or for ctx.Done(), whichever comes first), ignores it, or passes it to a
// real client-go call to an API server that never answers.
//
// The option only puts a deadline on the context each Reconcile gets
// (internal/controller/controller.go, context.WithTimeoutCause, with the
// cause "reconciliation timeout"): a reconciler that honours it returns
// ctx.Err() at the deadline, and the switch requeues the key as for any
// error; one that ignores it runs to the end, and holds its key until then.
// A client call in flight at the deadline fails with the context's cause,
// not with context.DeadlineExceeded; one made after it fails with ctx.Err().
// The Rust port drops the reconcile's future instead, so this twin prints
// its own output (twin/output.txt).
//
// The hour passes on testing/synctest's virtual clock, so this twin is a
// test; TestMain sends the testing package's own output to stderr. The API
// server is a goroutine on the other end of an in-memory connection
// (net.Pipe), which the virtual clock can wait on. Run from listings/:
//
//	go test -c -o /tmp/listing-05-07.test ./ch05-silent-stall/listing-05-07/twin && /tmp/listing-05-07.test
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) { twin.RunListing(m) }

// How the first attempt waits.
type waits int

const (
	honours   waits = iota // for the hour or ctx.Done()
	ignores                // for the hour
	callsWith              // on a client-go Get, given ctx
)

func TestHonoursItsContext(t *testing.T) { run(t, honours) }

func TestIgnoresItsContext(t *testing.T) { run(t, ignores) }

func TestPassesItToAClientCall(t *testing.T) { run(t, callsWith) }

func run(t *testing.T, how waits) {
	name := [...]string{"honours", "ignores", "client-call"}[how]
	fmt.Fprintf(stdout, "%s:\n", [...]string{
		"a reconciler that honours its context",
		"a reconciler that ignores its context",
		"a reconciler that passes its context to a client-go call",
	}[how])
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
			then := [...]string{"waits 1h", "waits 1h", "gets a ConfigMap"}[how]
			fmt.Fprintf(stdout, "%s reconcile %q #1 starts, then %s\n", at(), key, then)
			switch how {
			case honours:
				select {
				case <-time.After(time.Hour):
				case <-ctx.Done():
					return reconcile.Result{}, ctx.Err()
				}
			case ignores:
				time.Sleep(time.Hour)
			case callsWith:
				return reconcile.Result{}, getTwice(ctx, at, key)
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
					say(at(), "Reconciler error", err)
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
		fmt.Fprintf(stdout, "%s attempts: %d, controller_runtime_reconcile_timeouts_total: %s\n",
			at(), attempts, timeouts(t, name))
	})
}

// ANCHOR: client
// getTwice gets a ConfigMap from an API server that never answers, with
// the reconcile's context, and once more after the first call failed.
func getTwice(ctx context.Context, at func() string, key string) error {
	clients := kubernetes.NewForConfigOrDie(&rest.Config{
		Host:      "http://k8s",
		Transport: &http.Transport{DialContext: silentServer},
	})
	configMaps := clients.CoreV1().ConfigMaps("demo")
	_, err := configMaps.Get(ctx, key, metav1.GetOptions{})
	say(at(), "the call in flight fails", err)
	fmt.Fprintf(stdout, "%s   errors.Is(err, context.DeadlineExceeded): %t\n",
		at(), errors.Is(err, context.DeadlineExceeded))
	fmt.Fprintf(stdout, "%s   ctx.Err(): %v\n", at(), ctx.Err())
	fmt.Fprintf(stdout, "%s   context.Cause(ctx): %v\n", at(), context.Cause(ctx))
	_, again := configMaps.Get(ctx, key, metav1.GetOptions{})
	say(at(), "a call made after the deadline fails", again)
	fmt.Fprintf(stdout, "%s   errors.Is(err, context.DeadlineExceeded): %t\n",
		at(), errors.Is(again, context.DeadlineExceeded))
	return err
}

// ANCHOR_END: client

// say prints what happened and its error on one line, or the error on a
// line of its own when both would not fit the page.
func say(at, what string, err error) {
	line := fmt.Sprintf("%s %s: %v", at, what, err)
	if len(line) > 72 {
		line = fmt.Sprintf("%s %s:\n  %v", at, what, err)
	}
	fmt.Fprintln(stdout, line)
}

// silentServer dials an API server that reads each request and never
// answers: a goroutine on the far end of an in-memory connection, which
// ends when the client closes it.
func silentServer(context.Context, string, string) (net.Conn, error) {
	client, server := net.Pipe()
	go func() {
		defer server.Close()
		if _, err := http.ReadRequest(bufio.NewReader(server)); err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, server) // until the client hangs up
	}()
	return client, nil
}

// timeouts is controller-runtime's count of reconciles that reached
// ReconciliationTimeout, for the controller named, from its metrics
// registry.
func timeouts(t *testing.T, name string) string {
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_timeouts_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == name {
					return fmt.Sprint(m.GetCounter().GetValue())
				}
			}
		}
	}
	return "absent"
}
