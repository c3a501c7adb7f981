// Listing 6-2, Go twin: the same calls on client-go's real queue and on
// controller-runtime's real priority queue, and what each holds after
// every call, read from the queues' own collections (internal/queuestate
// and internal/pqstate).
//
// Both queues do part of their work on goroutines of their own (client-go's
// delayed adds, the priority queue's add buffer and its promotion of
// waiting entries), and the delay is 10ms. So the queues run inside a
// testing/synctest bubble: after each call, synctest.Wait lets those
// goroutines finish, and the clock moves only when everything is blocked.
// testing/synctest needs a *testing.T, so this twin is a test; TestMain
// sends the testing package's own output to stderr. Run from listings/:
//
//	go test -c -o /tmp/listing-06-02.test ./ch06-priority-queue/listing-06-02/twin && /tmp/listing-06-02.test
package main

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	"forget-is-not-delete/listings/internal/pqstate"
	"forget-is-not-delete/listings/internal/queuestate"
	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) { twin.RunListing(m) }

const rowFormat = "%-19s| %-6s %-6s %-10s %-4v| %-6s %-8s %-6s %v\n"

func list(open string, keys []string, close string) string {
	return open + strings.Join(keys, " ") + close
}

func TestCollections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		clientGo := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		pq := priorityqueue.New[string]("collections")
		defer clientGo.ShutDown()
		defer pq.ShutDown()

		// show prints one row: the call, then each queue's collections and
		// its Len(), once the queues' own goroutines are done with it.
		show := func(call string) {
			synctest.Wait()
			c, p := queuestate.Read(clientGo), pqstate.Read(pq)
			var waiting []string
			for _, w := range p.Waiting {
				waiting = append(waiting, fmt.Sprintf("%s@%s", w.Key, w.ReadyAt.Sub(start)))
			}
			fmt.Fprintf(stdout, rowFormat, call,
				list("[", c.FIFO, "]"), list("{", c.Dirty, "}"), list("{", c.Processing, "}"), clientGo.Len(),
				list("[", p.Ready, "]"), list("[", waiting, "]"), list("{", p.Locked, "}"), pq.Len())
		}
		get := func() {
			got, _ := clientGo.Get()
			gotPQ, _ := pq.Get()
			if got != gotPQ {
				t.Fatalf("client-go handed out %q, the priority queue %q", got, gotPQ)
			}
			show("get -> " + got)
		}
		fmt.Fprintf(stdout, "%-19s| %-6s %-6s %-10s %-4s| %-6s %-8s %-6s Len\n",
			"call", "FIFO", "dirty", "processing", "Len", "ready", "waiting", "locked")

		// ANCHOR: calls
		// Every call goes to both queues; each row is what both hold after it.
		for _, key := range []string{"a", "b", "a"} {
			clientGo.Add(key)
			pq.Add(key)
			show("add " + key)
		}
		get()
		clientGo.Add("a")
		pq.Add("a")
		show("add a (while held)")
		clientGo.AddAfter("c", 10*time.Millisecond)
		pq.AddAfter("c", 10*time.Millisecond)
		show("add_after c 10ms")
		clientGo.Done("a")
		pq.Done("a")
		show("done a")
		get()
		clientGo.Done("b")
		pq.Done("b")
		show("done b")
		time.Sleep(10 * time.Millisecond) // virtual time
		show("10ms later")
		get()
		get()
		for _, key := range []string{"a", "c"} {
			clientGo.Done(key)
			pq.Done(key)
			show("done " + key)
		}
		// ANCHOR_END: calls
	})
}
