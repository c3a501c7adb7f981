// Listing 9-5, Go twin: the two controller-runtime columns of the
// comparison, run against the real code.
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
// The kube-runtime columns cannot run in Go. The twin takes them, and the
// line about kube-runtime's policies under the table, from the Rust
// listing's committed output.txt (which the test suite checks against a
// fresh run of the listing), recomputes the two controller-runtime columns
// here, and lays the table out as the listing does. So its output equals
// the listing's byte for byte exactly when the Rust port and controller-
// runtime agree on every cell of those two columns.
//
// Every situation runs in its own testing/synctest bubble: the 10s
// reconcile, the 60s requeue and the 1000s backoff cost no real time.
// testing/synctest needs a *testing.T, so this twin is a test; TestMain sends
// the testing package's own output to stderr. Run from listings/:
//
//	go test -c -o /tmp/listing-09-05.test ./ch09-kube-runtime/listing-09-05/twin && (cd ch09-kube-runtime/listing-09-05/twin && /tmp/listing-09-05.test)
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

// The rows, in the listing's order: key and label.
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
		cells["dirty"] = fmt.Sprintf("%d adds: Len %d, then %d run after Done", 3, whileHeld, after)
	})

	// A trigger while the key is held, then the reconcile asks for RequeueAfter(60s).
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

// listing reads the Rust listing's committed table: its rows' cells, split
// at the columns its dashed line marks, and the lines under it.
func listing(t *testing.T) (cells [][]string, footer []string) {
	raw, err := os.ReadFile("../output.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	var spans [][2]int
	for i := 0; i < len(lines[1]); {
		if lines[1][i] != '-' {
			i++
			continue
		}
		j := i
		for j < len(lines[1]) && lines[1][j] == '-' {
			j++
		}
		spans = append(spans, [2]int{i, j})
		i = j
	}
	n := 2
	for ; n < len(lines) && lines[n] != ""; n++ {
		var row []string
		for _, s := range spans {
			from, to := min(s[0], len(lines[n])), min(s[1], len(lines[n]))
			row = append(row, strings.TrimSpace(lines[n][from:to]))
		}
		cells = append(cells, row)
	}
	return cells, lines[n+1:]
}

func TestComparison(t *testing.T) {
	clientGo := column(t, false)
	priority := column(t, true)
	rust, footer := listing(t)
	if len(rust) != len(rows) {
		t.Fatalf("the listing has %d rows, the twin %d", len(rust), len(rows))
	}

	header := []string{"situation", "client-go queue", "priority queue", "kube-runtime", "kube-runtime + guard"}
	table := [][]string{}
	for i, r := range rows {
		// The kube-runtime cells are the listing's; the label is the twin's.
		table = append(table, []string{r[1], clientGo[r[0]], priority[r[0]], rust[i][3], rust[i][4]})
	}
	width := make([]int, len(header))
	for _, row := range append([][]string{header}, table...) {
		for i, c := range row {
			width[i] = max(width[i], len(c))
		}
	}
	line := func(cells []string) {
		var padded []string
		for i, c := range cells {
			padded = append(padded, fmt.Sprintf("%-*s", width[i], c))
		}
		fmt.Fprintln(stdout, strings.TrimRight(strings.Join(padded, "  "), " "))
	}
	line(header)
	var dashes []string
	for _, w := range width {
		dashes = append(dashes, strings.Repeat("-", w))
	}
	line(dashes)
	for _, row := range table {
		line(row)
	}
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, "client-go queue: controller-runtime with UsePriorityQueue=false; priority queue: its default")
	// The line about kube-runtime's policies, as the listing printed it.
	for _, l := range footer[1:] {
		fmt.Fprintln(stdout, l)
	}
}
