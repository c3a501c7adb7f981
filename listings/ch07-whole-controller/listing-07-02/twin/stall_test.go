// Listing 7-2, Go twin: the silent stall of listing 5-1, seen through the
// workqueue metrics.
//
// A client-go rate-limiting queue named "stall". A queue reports metrics only
// if it has a name and a metrics provider has been installed with
// workqueue.SetProvider. Any program that links controller-runtime's
// controller package has one: the package's internal metrics package
// installs it in an init, and its gauges live in
// sigs.k8s.io/controller-runtime/pkg/metrics.Registry, the registry a
// manager serves on /metrics. Importing pkg/metrics alone is not enough:
// that package only holds the registry, not the provider. So the queue
// reports here with controller="stall" and name="stall" labels.
//
// The bug: the worker calls Get and Forget but never Done. The item stays
// "processing" for ever; 100 more Adds of it mark it dirty once and are then
// deduplicated, and Get would never hand it out again. Nothing returns an
// error and nothing is logged. The only sign is in two gauges that the queue
// refreshes every 500ms: unfinished_work_seconds and
// longest_running_processor_seconds, which grow with the wall clock.
//
// To sample them 1s, 10s and 1m after the Get without waiting a minute, the
// queue runs inside a testing/synctest bubble: the queue's 500ms ticker and
// its clock (the default real clock) read the bubble's virtual time.
// testing/synctest needs a *testing.T, so this twin is a test; TestMain
// sends the testing package's own output to stderr. Run from listings/:
//
//	go test -c -o /tmp/listing-07-02.test ./ch07-whole-controller/listing-07-02/twin && /tmp/listing-07-02.test
package main

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"
	// Imported only for its side effect, as in any controller binary: it
	// installs controller-runtime's workqueue metrics provider.
	_ "sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"forget-is-not-delete/listings/internal/twin"
)

const queueName = "stall"

const rowFormat = "%-9s%-7s%-7s%-6s%-17s%s\n"

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) { twin.RunListing(m) }

func TestStallInMetrics(t *testing.T) {
	var samples []map[string]float64
	synctest.Test(t, func(t *testing.T) {
		// ANCHOR: stall
		q := workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[string](
				5*time.Millisecond, 1000*time.Second),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: queueName},
		)
		defer q.ShutDown()

		q.Add("obj")
		item, _ := q.Get()
		gotAt := time.Now()
		q.Forget(item)
		// ... and no q.Done(item): the bug.
		for range 100 {
			q.Add("obj") // an event for obj each time
		}
		// ANCHOR_END: stall

		// ANCHOR: watch
		// The two gauges in seconds: workqueue_unfinished_work_seconds and
		// workqueue_longest_running_processor_seconds.
		fmt.Fprintf(stdout, rowFormat, "time", "Len()", "depth", "adds",
			"unfinished_work", "longest_running")
		for _, at := range []time.Duration{time.Second, 10 * time.Second, time.Minute} {
			time.Sleep(time.Until(gotAt.Add(at)))
			synctest.Wait() // let the queue's ticker goroutine refresh the gauges
			g := gather(t)
			samples = append(samples, g)
			fmt.Fprintf(stdout, rowFormat, at, fmt.Sprint(q.Len()),
				fmt.Sprint(g["workqueue_depth"]),
				fmt.Sprint(g["workqueue_adds_total"]),
				fmt.Sprint(g["workqueue_unfinished_work_seconds"]),
				fmt.Sprint(g["workqueue_longest_running_processor_seconds"]))
		}
		closing(samples)
		// ANCHOR_END: watch

		// ANCHOR: done
		// A second key is taken at 1m; obj's Done finally comes at 1m30s.
		fmt.Fprintln(stdout)
		q.Add("other")
		_, _ = q.Get() // held until the end
		otherAt := time.Now()
		half := 500 * time.Millisecond
		for _, at := range []time.Duration{90 * time.Second, 90*time.Second + half} {
			time.Sleep(time.Until(gotAt.Add(at)))
			synctest.Wait()
			g := gather(t)
			longest := g["workqueue_longest_running_processor_seconds"]
			fmt.Fprintf(stdout, rowFormat, at, fmt.Sprint(q.Len()),
				fmt.Sprint(g["workqueue_depth"]),
				fmt.Sprint(g["workqueue_adds_total"]),
				fmt.Sprint(g["workqueue_unfinished_work_seconds"]),
				fmt.Sprint(longest))
			if at == 90*time.Second {
				q.Done(item)
				fmt.Fprintf(stdout,
					"done(obj) at %s; other, taken at %s, is still held\n",
					at, otherAt.Sub(gotAt))
			} else if longest == time.Since(otherAt).Seconds() {
				fmt.Fprintln(stdout,
					"the longest-running gauge fell to other's age, not to 0")
			}
		}
		// ANCHOR_END: done
	})
}

// closing prints the sentence under the table only if the samples show it.
func closing(samples []map[string]float64) {
	// The closing sentence is printed only if the samples show it: depth
	// and adds stood still while both unfinished-work gauges kept growing.
	// (Nothing here returns an error, and the queue has no logger.)
	first, last := samples[0], samples[len(samples)-1]
	still := first["workqueue_depth"] == last["workqueue_depth"] &&
		first["workqueue_adds_total"] == last["workqueue_adds_total"]
	grew := last["workqueue_unfinished_work_seconds"] > first["workqueue_unfinished_work_seconds"] &&
		last["workqueue_longest_running_processor_seconds"] > first["workqueue_longest_running_processor_seconds"]
	if still && grew {
		fmt.Fprintf(stdout, "\nno error, no log line: only the two unfinished-work gauges grow\n")
	} else {
		fmt.Fprintf(stdout, "\nunexpected: depth/adds still=%t, unfinished-work gauges grew=%t\n", still, grew)
	}
}

// gather reads controller-runtime's registry and returns, for each counter
// or gauge family, the value of its series with name="stall".
func gather(t *testing.T) map[string]float64 {
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != "name" || l.GetValue() != queueName {
					continue
				}
				switch mf.GetType().String() {
				case "COUNTER":
					values[mf.GetName()] = m.GetCounter().GetValue()
				case "GAUGE":
					values[mf.GetName()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return values
}
