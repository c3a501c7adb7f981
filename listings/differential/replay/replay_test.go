// The Go side of the differential harness (listings/differential): replays
// scripts of queue operations on the real client-go rate-limiting queue and
// writes one observation per operation.
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
)

type op struct {
	name string
	item string
	d    time.Duration
	line int
}

func parseScripts(path string) ([][]op, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var scripts [][]op
	var cur []op
	started := false
	for i, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line == "---" {
			scripts = append(scripts, cur)
			cur, started = nil, false
			continue
		}
		started = true
		f := strings.Fields(line)
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
		cur = append(cur, o)
	}
	if started {
		scripts = append(scripts, cur)
	}
	return scripts, nil
}

// runScript replays one script; it must run inside a synctest bubble.
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
	for _, script := range scripts {
		var obs []string
		synctest.Test(t, func(t *testing.T) { obs = runScript(script) })
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
