// The Go side of the differential harness (listings/differential): replays
// scripts of queue operations on the real client-go rate-limiting queue, or
// (a script whose first line is "queue pq") on controller-runtime's real
// priority queue, and writes one observation per operation.
//
// The queue is NewTypedRateLimitingQueueWithConfig with the exponential
// limiter (5ms, 1000s) and a fake clock. Each script runs in its own
// testing/synctest bubble; after every operation synctest.Wait lets the
// delaying queue's waiting goroutine take in an AddAfter or a clock step
// before the next observation, so the replay is deterministic.
//
// Script format (one op per line, scripts separated by a line "---"):
//
//	add a | get | done a | forget a | add_rate_limited a | add_after a 15ms
//	len | num_requeues a | shut_down | step 7ms
//
// Observations: "ok" for ops without a result; the number for len and
// num_requeues; for get, the item, "empty" (Len()==0 and not shutting down:
// Get would block, so it is not called) or "shutdown".
//
// Priority queue ("queue pq" scripts): priorityqueue.New[string]("") with the
// same exponential limiter (an Opt setting Opts.RateLimiter) and no metrics.
// It reads time.Now and time.Tick, so the bubble's virtual clock drives it:
// "step d" is time.Sleep(d). Extra op:
//
//	add_with_opts a[,b...] [after=15ms] [rate_limited=true] [priority=-100]
//
// "get" calls GetWithPriority on a goroutine and, once the bubble is idle,
// reports "item@priority", "shutdown", or "blocked" if it is still waiting;
// then the queue is shut down to release it and the rest of the script is
// not run (observation "-"). "num_requeues" calls Len first, which flushes
// the add buffer (When runs on the flush), as upstream's tests do. A second
// "shut_down" panics upstream (close of a closed channel); it is recovered
// and observed as "panic".
//
// Without DIFFERENTIAL_SCRIPTS and DIFFERENTIAL_OUT the test skips, so
// `go test ./...` stays green. The Rust test builds and runs it as:
//
//	go test -c -o ../target/differential/replay.test ./differential/replay
//	DIFFERENTIAL_SCRIPTS=in.txt DIFFERENTIAL_OUT=out.txt replay.test -test.run=^TestReplay$
package replay

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

type op struct {
	name  string
	item  string
	items []string // add_with_opts
	opts  priorityqueue.AddOpts
	d     time.Duration
	line  int
}

type script struct {
	pq  bool
	ops []op
}

func parseAddWithOpts(o *op, f []string) error {
	o.items = strings.Split(f[1], ",")
	for _, it := range o.items {
		if it == "" {
			return fmt.Errorf("empty item in %q", f[1])
		}
	}
	seen := map[string]bool{}
	for _, kv := range f[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || seen[k] {
			return fmt.Errorf("bad or repeated option %q", kv)
		}
		seen[k] = true
		var err error
		switch k {
		case "after":
			o.opts.After, err = time.ParseDuration(v)
		case "rate_limited":
			o.opts.RateLimited, err = strconv.ParseBool(v)
		case "priority":
			var p int
			p, err = strconv.Atoi(v)
			o.opts.Priority = &p
		default:
			err = fmt.Errorf("unknown option %q", k)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func parseScripts(path string) ([]script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var scripts []script
	var cur script
	started := false
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line == "---" {
			scripts = append(scripts, cur)
			cur, started = script{}, false
			continue
		}
		f := strings.Fields(line)
		if !started && f[0] == "queue" {
			started = true
			switch strings.Join(f[1:], " ") {
			case "pq":
				cur.pq = true
			case "client-go":
			default:
				return nil, fmt.Errorf("%s:%d: unknown queue %q", path, i+1, line)
			}
			continue
		}
		started = true
		o := op{name: f[0], line: i + 1}
		want := 1
		switch o.name {
		case "get", "len", "shut_down":
		case "add", "done", "forget", "add_rate_limited", "num_requeues":
			want = 2
		case "add_after":
			want = 3
		case "step":
			want = 2
		case "add_with_opts":
			if !cur.pq {
				return nil, fmt.Errorf("%s:%d: add_with_opts needs a \"queue pq\" script", path, i+1)
			}
			if len(f) < 2 || len(f) > 5 {
				return nil, fmt.Errorf("%s:%d: add_with_opts takes an item list and up to 3 options", path, i+1)
			}
			if err := parseAddWithOpts(&o, f); err != nil {
				return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
			}
			cur.ops = append(cur.ops, o)
			continue
		default:
			return nil, fmt.Errorf("%s:%d: unknown op %q", path, i+1, o.name)
		}
		if len(f) != want {
			return nil, fmt.Errorf("%s:%d: %q takes %d fields", path, i+1, o.name, want)
		}
		switch o.name {
		case "step":
			o.d, err = time.ParseDuration(f[1])
		case "add_after":
			o.item = f[1]
			o.d, err = time.ParseDuration(f[2])
		default:
			if want == 2 {
				o.item = f[1]
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, i+1, err)
		}
		cur.ops = append(cur.ops, o)
	}
	if started {
		scripts = append(scripts, cur)
	}
	return scripts, nil
}

// runScript replays one client-go script; it must run inside a synctest bubble.
func runScript(script []op) []string {
	fakeClock := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Clock: fakeClock},
	)
	synctest.Wait() // the waiting loop is parked in its select
	obs := make([]string, 0, len(script))
	for _, o := range script {
		res := "ok"
		switch o.name {
		case "add":
			q.Add(o.item)
		case "get":
			if q.Len() == 0 && !q.ShuttingDown() {
				res = "empty" // Get would block
			} else if item, shutdown := q.Get(); shutdown {
				res = "shutdown"
			} else {
				res = item
			}
		case "done":
			q.Done(o.item)
		case "forget":
			q.Forget(o.item)
		case "add_rate_limited":
			q.AddRateLimited(o.item)
		case "add_after":
			q.AddAfter(o.item, o.d)
		case "len":
			res = strconv.Itoa(q.Len())
		case "num_requeues":
			res = strconv.Itoa(q.NumRequeues(o.item))
		case "shut_down":
			q.ShutDown()
		case "step":
			fakeClock.Step(o.d)
		}
		// Let the waiting loop take in an AddAfter entry or fire its timer
		// before the next op looks at the queue.
		synctest.Wait()
		obs = append(obs, res)
	}
	q.ShutDown() // the waiting loop exits, so nothing outlives the bubble
	synctest.Wait()
	return obs
}

type got struct {
	item     string
	priority int
	shutdown bool
}

// runPQScript replays one priority-queue script; it must run inside a
// synctest bubble, whose virtual clock the queue's time.Now and time.Tick read.
func runPQScript(script []op) []string {
	q := priorityqueue.New[string]("", func(o *priorityqueue.Opts[string]) {
		o.RateLimiter = workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second)
	})
	synctest.Wait() // the queue's goroutines are parked
	obs := make([]string, 0, len(script))
	shut, blocked := false, false
	for _, o := range script {
		if blocked {
			obs = append(obs, "-")
			continue
		}
		res := "ok"
		switch o.name {
		case "add":
			q.Add(o.item)
		case "add_after":
			q.AddAfter(o.item, o.d)
		case "add_rate_limited":
			q.AddRateLimited(o.item)
		case "add_with_opts":
			opts := o.opts
			if opts.Priority != nil {
				opts.Priority = new(*opts.Priority) // a fresh pointer per call
			}
			q.AddWithOpts(opts, o.items...)
		case "get":
			ch := make(chan got, 1)
			go func() {
				item, priority, shutdown := q.GetWithPriority()
				ch <- got{item, priority, shutdown}
			}()
			synctest.Wait() // handleReadyItems hands out, or the Get stays blocked
			select {
			case g := <-ch:
				if g.shutdown {
					res = "shutdown"
				} else {
					res = fmt.Sprintf("%s@%d", g.item, g.priority)
				}
			default:
				res, blocked = "blocked", true
				q.ShutDown() // releases the Get, which then returns (zero, 0, true)
				shut = true
				synctest.Wait()
				<-ch
			}
		case "done":
			q.Done(o.item)
		case "forget":
			q.Forget(o.item)
		case "len":
			res = strconv.Itoa(q.Len())
		case "num_requeues":
			q.Len() // flushes the add buffer, where When is called
			res = strconv.Itoa(q.NumRequeues(o.item))
		case "shut_down":
			func() {
				defer func() {
					if recover() != nil {
						res = "panic"
					}
				}()
				q.ShutDown()
			}()
			shut = true
		case "step":
			time.Sleep(o.d)
		}
		// Let the add buffer flush and the waiting items move before the
		// next op looks at the queue.
		synctest.Wait()
		obs = append(obs, res)
	}
	if !shut {
		q.ShutDown() // every goroutine of the queue exits
	}
	synctest.Wait()
	return obs
}

func TestReplay(t *testing.T) {
	in, out := os.Getenv("DIFFERENTIAL_SCRIPTS"), os.Getenv("DIFFERENTIAL_OUT")
	if in == "" || out == "" {
		t.Skip("set DIFFERENTIAL_SCRIPTS and DIFFERENTIAL_OUT to replay scripts (the Rust differential test does)")
	}
	scripts, err := parseScripts(in)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, s := range scripts {
		var obs []string
		synctest.Test(t, func(t *testing.T) {
			if s.pq {
				obs = runPQScript(s.ops)
			} else {
				obs = runScript(s.ops)
			}
		})
		for _, o := range obs {
			fmt.Fprintln(w, o)
		}
		fmt.Fprintln(w, "---")
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
