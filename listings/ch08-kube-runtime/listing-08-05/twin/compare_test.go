// Listing 8-5, Go twin: the two controller-runtime runs of the comparison
// ("client-go" and "priority" under each situation), against the real code.
//
// Each situation runs on a fresh queue, once on client-go's rate-limiting
// queue with controller-runtime's default limiter for it (what a controller
// gets with UsePriorityQueue=false), and once on controller-runtime's
// priority queue with its default limiter (what it gets by default). The
// situations that need a controller run the real one, built with
// controller.NewTypedUnmanaged; NewQueue only keeps a handle on the queue
// that the flag would have chosen anyway, so that the twin can add a trigger
// and read NumRequeues.
//
// kube-runtime cannot run in Go. The twin takes its two runs' lines
// ("kube" and "guard"), and their entries in the legend, from the Rust
// listing's committed output.txt (which the test suite checks against a
// fresh run of the listing), recomputes the two controller-runtime lines of
// every situation here, and lays the blocks out as the listing does. So its
// output equals the listing's byte for byte exactly when the Rust port and
// controller-runtime agree on every one of those lines.
//
// Every situation runs in its own testing/synctest bubble: the 10s
// reconcile, the 60s requeue and the 1000s backoff cost no real time.
// testing/synctest needs a *testing.T, so this twin is a test; TestMain sends
// the testing package's own output to stderr. Run from listings/:
//
//	go test -c -o /tmp/listing-08-05.test ./ch08-kube-runtime/listing-08-05/twin && (cd ch08-kube-runtime/listing-08-05/twin && /tmp/listing-08-05.test)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
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

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) {
	// The controller logs every error and the recovered panic.
	twin.QuietLogs()
	twin.RunListing(m)
}

// The situations, in the listing's order: key and heading.
var rows = [][2]string{
	{"dirty", "dirty while processing"},
	{"requeue", "trigger, then requeue 60s"},
	{"stall", "the stall (one object)"},
	{"frozen", "the stall (one worker)"},
	{"panic", "a panic"},
	{"backoff", "per-object backoff"},
	{"terminal", "a terminal error"},
	{"forget", "Forget / a success"},
}

// The four runs' labels, in the order each situation lists them; the first
// two are the twin's.
var runs = []string{"client-go", "priority", "kube", "guard"}

// The widest line the legend may print, as in the listing.
const width = 52

// wrap breaks text between words into lines of at most width columns, the
// lines after the first indented by two, as the listing does.
func wrap(text string) []string {
	lines := []string{""}
	for _, word := range strings.Split(text, " ") {
		last := &lines[len(lines)-1]
		switch {
		case *last == "":
			*last = word
		case len(*last)+1+len(word) > width:
			lines = append(lines, "  "+word)
		default:
			*last += " " + word
		}
	}
	return lines
}

type queue = workqueue.TypedRateLimitingInterface[string]

// newQueue is a bare queue of the kind a controller gets: client-go's with
// DefaultTypedControllerRateLimiter, or the priority queue with its own
// default (5ms doubling to 1000s). No name, so no metrics.
func newQueue(pq bool) queue {
	if pq {
		return priorityqueue.New[string]("")
	}
	return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
}

// running is a real controller-runtime controller, started in the current
// bubble with one key already sent to it.
type running struct {
	q    queue
	stop func()
}

// start builds the controller (defaults apart from the queue flag), sends it
// keys, starts it and returns once its queue exists.
func start(t *testing.T, pq bool, r func(context.Context, string) (reconcile.Result, error), keys ...string) running {
	queues := make(chan queue, 1)
	c, err := controller.NewTypedUnmanaged("demo", controller.TypedOptions[string]{
		Reconciler:         reconcile.TypedFunc[string](r),
		UsePriorityQueue:   ptr.To(pq),
		SkipNameValidation: ptr.To(true),
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
	return running{q: q, stop: func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Fatal(err)
		}
	}}
}

// column runs every situation on one kind of queue, each in its own bubble.
func column(t *testing.T, pq bool) map[string]string {
	cells := map[string]string{}
	bubble := func(f func()) { synctest.Test(t, func(*testing.T) { f() }) }

	// ANCHOR: client_go
	// Dirty while processing: three adds while the key is held.
	bubble(func() {
		q := newQueue(pq)
		q.Add("obj")
		key, _ := q.Get()
		for range 3 {
			q.Add("obj")
		}
		whileHeld := q.Len()
		q.Done(key)
		after := q.Len()
		q.ShutDown()
		cells["dirty"] = fmt.Sprintf("%d adds: Len %d, then %d run after Done",
			3, whileHeld, after)
	})

	// A trigger while the key is held, then the reconcile asks for
	// RequeueAfter(60s).
	bubble(func() {
		begin := time.Now()
		var runs []time.Duration
		c := start(t, pq, func(context.Context, string) (reconcile.Result, error) {
			runs = append(runs, time.Since(begin))
			if len(runs) == 1 {
				time.Sleep(10 * time.Second)
				return reconcile.Result{RequeueAfter: 60 * time.Second}, nil
			}
			return reconcile.Result{}, nil
		}, "obj")
		time.Sleep(2 * time.Second)
		c.q.Add("obj")
		time.Sleep(118 * time.Second)
		c.stop()
		var at []string
		for _, r := range runs {
			at = append(at, r.String())
		}
		cells["requeue"] = "runs at " + strings.Join(at, ", ")
	})
	// ANCHOR_END: client_go

	// The stall: Get without Done.
	bubble(func() {
		q := newQueue(pq)
		q.Add("obj")
		_, _ = q.Get() // held, never Done
		q.Add("obj")
		q.Add("other")
		other, _ := q.Get()
		again := make(chan struct{})
		go func() {
			if _, shutdown := q.Get(); !shutdown {
				close(again)
			}
		}()
		verdict := "never again"
		select {
		case <-again:
			verdict = "again"
		case <-time.After(60 * time.Second):
		}
		q.ShutDown()
		cells["stall"] = fmt.Sprintf("no Done: obj %s, %s runs", verdict, other)
	})

	// One worker, a reconcile that never returns (until the twin lets it go).
	bubble(func() {
		release := make(chan struct{})
		var okRan atomic.Bool
		c := start(t, pq, func(_ context.Context, key string) (reconcile.Result, error) {
			if key == "hang" {
				<-release
			} else {
				okRan.Store(true)
			}
			return reconcile.Result{}, nil
		}, "hang", "ok")
		time.Sleep(60 * time.Second)
		verdict := "never run"
		if okRan.Load() {
			verdict = "run"
		}
		close(release)
		c.stop()
		cells["frozen"] = "1 worker hung: others " + verdict
	})

	// A panic, with controller-runtime's default RecoverPanic.
	bubble(func() {
		c := start(t, pq, func(context.Context, string) (reconcile.Result, error) {
			panic("boom")
		}, "obj")
		synctest.Wait() // the first reconcile has run, its retry is waiting
		cells["panic"] = fmt.Sprintf("recovered: error, retry #%d queued", c.q.NumRequeues("obj"))
		c.stop()
	})

	// Backoff, measured through the queue.
	bubble(func() {
		var attempts []time.Time
		enough := make(chan struct{})
		c := start(t, pq, func(context.Context, string) (reconcile.Result, error) {
			attempts = append(attempts, time.Now())
			if len(attempts) == 21 {
				close(enough)
			}
			return reconcile.Result{}, errors.New("connection refused")
		}, "obj")
		<-enough
		c.stop()
		var waits []string
		capped := "never capped"
		for i := 1; i < len(attempts); i++ {
			w := attempts[i].Sub(attempts[i-1])
			if i <= 3 {
				waits = append(waits, w.String())
			}
			if w >= 1000*time.Second && capped == "never capped" {
				capped = fmt.Sprintf("%s from #%d", 1000*time.Second, i)
			}
		}
		cells["backoff"] = strings.Join(waits, ", ") + "; " + capped
	})

	// A terminal error.
	bubble(func() {
		var calls atomic.Int32
		c := start(t, pq, func(context.Context, string) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{}, reconcile.TerminalError(errors.New("invalid spec"))
		}, "obj")
		time.Sleep(60 * time.Second)
		c.stop()
		cells["terminal"] = fmt.Sprintf("TerminalError: %d requeues in 1m", calls.Load()-1)
	})

	// Forget: the limiter's count, not the queue.
	bubble(func() {
		q := newQueue(pq)
		q.AddRateLimited("obj")
		q.AddRateLimited("obj")
		time.Sleep(time.Second)
		len1 := q.Len() // the priority queue's Len also flushes its add buffer
		count := q.NumRequeues("obj")
		q.Forget("obj")
		cells["forget"] = fmt.Sprintf("count %d->%d, Len %d->%d", count, q.NumRequeues("obj"), len1, q.Len())
		q.ShutDown()
	})
	return cells
}

// listing reads the Rust listing's committed output: for each situation,
// its lines as label -> cell, and the legend under them, one entry (a
// "label: ..." line and the lines that continue it) per run.
func listing(t *testing.T) (blocks []map[string]string, legend [][]string) {
	raw, err := os.ReadFile("../output.txt")
	if err != nil {
		t.Fatal(err)
	}
	paragraphs := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n\n")
	for _, p := range paragraphs[:len(paragraphs)-1] {
		cells := map[string]string{}
		for _, line := range strings.Split(p, "\n")[1:] { // under the heading
			label, cell, _ := strings.Cut(strings.TrimSpace(line), "  ")
			cells[label] = strings.TrimSpace(cell)
		}
		blocks = append(blocks, cells)
	}
	for _, line := range strings.Split(paragraphs[len(paragraphs)-1], "\n") {
		if strings.HasPrefix(line, "  ") && len(legend) > 0 {
			legend[len(legend)-1] = append(legend[len(legend)-1], line)
		} else {
			legend = append(legend, []string{line})
		}
	}
	return blocks, legend
}

func TestComparison(t *testing.T) {
	clientGo := column(t, false)
	priority := column(t, true)
	rust, legend := listing(t)
	if len(rust) != len(rows) {
		t.Fatalf("the listing has %d situations, the twin %d", len(rust), len(rows))
	}

	pad := 0
	for _, l := range runs {
		pad = max(pad, len(l))
	}
	for i, r := range rows {
		// The kube-runtime lines are the listing's; the heading is the twin's.
		cells := []string{clientGo[r[0]], priority[r[0]], rust[i]["kube"], rust[i]["guard"]}
		fmt.Fprintln(stdout, r[1])
		for j, l := range runs {
			fmt.Fprintf(stdout, "  %-*s  %s\n", pad, l, cells[j])
		}
		fmt.Fprintln(stdout)
	}
	for _, entry := range []string{
		"client-go: controller-runtime on client-go's queue (UsePriorityQueue=false)",
		"priority: controller-runtime on the priority queue (its default)",
	} {
		for _, l := range wrap(entry) {
			fmt.Fprintln(stdout, l)
		}
	}
	// The legend's entries for the kube-runtime runs, as the listing printed them.
	for _, entry := range legend {
		if label, _, _ := strings.Cut(entry[0], ":"); label == runs[0] || label == runs[1] {
			continue
		}
		for _, l := range entry {
			fmt.Fprintln(stdout, l)
		}
	}
}
