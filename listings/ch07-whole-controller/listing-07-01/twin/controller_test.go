// Listing 7-1, Go twin: a whole controller, end to end, and what its
// metrics say afterwards.
//
// A real controller-runtime controller named "demo", built with
// controller.NewTypedUnmanaged and default options: the priority queue, the
// 5ms..1000s exponential rate limiter, RecoverPanic on, one worker. No API
// server: the five keys come from a channel source. The reconciler follows
// the script of listing 1-1, except that "boom" panics with panic("boom").
// Unlike listing 1-1 the queue is not wrapped: the only window into what
// happened is the metrics controller-runtime registers in
// sigs.k8s.io/controller-runtime/pkg/metrics.Registry, the registry a
// manager serves on /metrics.
//
// The controller runs inside a testing/synctest bubble. The retries are due
// 5ms and 30ms after the first attempts; with a virtual clock, which moves
// only when every goroutine in the bubble is blocked, no amount of machine
// load can change which retry is due first. testing/synctest needs a
// *testing.T, so this twin is a test; TestMain sends the testing package's
// own output to stderr. Run from listings/:
//
//	go test -c -o /tmp/listing-07-01.test ./ch07-whole-controller/listing-07-01/twin && /tmp/listing-07-01.test
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/drive"
	"forget-is-not-delete/listings/internal/twin"
)

// 5 first attempts, plus the second attempts of "fail", "later" and "boom".
const wantReconciles = 8

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) {
	// The controller logs every error and the recovered panic; keep them
	// off stdout. The panic handler logs through klog.
	twin.QuietLogs()
	twin.RunListing(m)
}

// The families the listing shows. The registry also holds the other
// workqueue gauges, the timeout counter and the Go runtime's metrics.
var shown = map[string]bool{
	"controller_runtime_active_workers":                  true,
	"controller_runtime_max_concurrent_reconciles":       true,
	"controller_runtime_reconcile_errors_total":          true,
	"controller_runtime_reconcile_panics_total":          true,
	"controller_runtime_reconcile_time_seconds":          true,
	"controller_runtime_reconcile_total":                 true,
	"controller_runtime_terminal_reconcile_errors_total": true,
	"workqueue_adds_total":                               true,
	"workqueue_depth":                                    true,
	"workqueue_queue_duration_seconds":                   true,
	"workqueue_retries_total":                            true,
	"workqueue_work_duration_seconds":                    true,
}

func TestWholeController(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()

		attempts := map[string]int{}
		reconciles := 0
		// The scripted reconciler; the request type is a plain string key.
		// With one worker it is never called concurrently.
		// ANCHOR: script
		reconciler := reconcile.TypedFunc[string](func(
			_ context.Context, key string,
		) (reconcile.Result, error) {
			attempts[key]++
			n := attempts[key]
			reconciles++
			if reconciles == wantReconciles {
				// Stop the controller. This reconcile still finishes
				// normally: its Forget, Done and metrics all happen.
				cancel()
			}

			say := func(outcome string) {
				fmt.Fprintf(stdout, "reconcile %q #%d -> %s\n", key, n, outcome)
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
				// recovered by the controller: RecoverPanic defaults to on
				panic("boom")
			}
			say("success")
			return reconcile.Result{}, nil
		})
		// ANCHOR_END: script

		// ANCHOR: controller
		// Defaults everywhere: no NewQueue, no RateLimiter, no RecoverPanic.
		c, err := controller.NewTypedUnmanaged("demo", controller.TypedOptions[string]{
			Reconciler: reconciler,
		})
		if err != nil {
			t.Fatal(err)
		}

		// The channel source: every event becomes a plain Add of its key.
		if err := drive.Keys(c, "ok", "fail", "terminal", "later", "boom"); err != nil {
			t.Fatal(err)
		}

		// Start returns once ctx is cancelled and the worker has stopped.
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		// ANCHOR_END: controller
		if reconciles != wantReconciles {
			t.Fatalf("observed %d reconciles, want %d", reconciles, wantReconciles)
		}
	})

	// ANCHOR: metrics
	fmt.Fprintf(stdout, "\nmetrics after shutdown:\n")
	lines, err := metricLines("demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	// ANCHOR_END: metrics
}

// metricLines gathers controller-runtime's registry and renders each series
// of the shown families that belongs to controller ctrl as
// `name{label="value",...} value`. A histogram is shown by its sample count,
// as `<name>_count{...} N`. Families are sorted by name, series by label text.
func metricLines(ctrl string) ([]string, error) {
	families, err := metrics.Registry.Gather() // sorted by family name
	if err != nil {
		return nil, err
	}
	var out []string
	for _, mf := range families {
		if !shown[mf.GetName()] {
			continue
		}
		var series []string
		for _, m := range mf.GetMetric() {
			var labels []string
			mine := false
			for _, l := range m.GetLabel() { // Gather sorts labels by name
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				if l.GetName() == "controller" && l.GetValue() == ctrl {
					mine = true
				}
			}
			if !mine {
				continue
			}
			name := mf.GetName()
			var value float64
			switch mf.GetType().String() {
			case "COUNTER":
				value = m.GetCounter().GetValue()
			case "GAUGE":
				value = m.GetGauge().GetValue()
			case "HISTOGRAM":
				name += "_count"
				value = float64(m.GetHistogram().GetSampleCount())
			default:
				return nil, fmt.Errorf("%s: unexpected metric type %s", mf.GetName(), mf.GetType())
			}
			series = append(series, fmt.Sprintf("%s{%s} %v", name, strings.Join(labels, ","), value))
		}
		sort.Strings(series) // same name, so this sorts by label text
		out = append(out, series...)
	}
	return out, nil
}
