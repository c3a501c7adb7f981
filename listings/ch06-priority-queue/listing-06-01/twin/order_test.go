// Listing 6-1, Go twin: the priority queue's ordering, one step at a time.
//
// This drives controller-runtime's real priority queue (priorityqueue.New)
// through the same steps as the Rust listing and prints what Len() says after
// each one and what GetWithPriority hands out. The rules on show:
//
//   - a key is queued once; a second add keeps the highest priority
//     (an add never lowers it) and the earliest time it is ready;
//   - higher priority first, first-come first-served within a priority;
//   - a key added while it is being processed gets a fresh entry that counts
//     in Len() at once, but is not handed out until Done; the keys behind it
//     are;
//   - an AddAfter key is "waiting": not in Len() until its time comes, and it
//     then joins the back of its priority level;
//   - after ShutDown, adds are ignored and Get returns at once.
//
// "1s later" needs a clock we can move, so the queue runs inside a
// testing/synctest bubble: its goroutines and timers use a virtual clock
// that jumps forward only when everything in the bubble is blocked.
// testing/synctest needs a *testing.T, so this twin is a test; TestMain sends
// the testing package's own output to stderr, leaving the listing's lines
// alone on stdout. Run from listings/:
//
//	go test -c -o /tmp/listing-06-01.test ./ch06-priority-queue/listing-06-01/twin && /tmp/listing-06-01.test
package main

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) { twin.RunListing(m) }

// at is AddOpts for "this priority, ready now".
func at(priority int) priorityqueue.AddOpts {
	return priorityqueue.AddOpts{Priority: &priority}
}

// step prints what was done, then Len() after it. Len() counts the keys that
// are ready (handed-out keys re-added meanwhile included), not waiting ones.
func step(q priorityqueue.PriorityQueue[string], what string) {
	fmt.Fprintf(stdout, "%-44sLen()=%d\n", what, q.Len())
}

func get(t *testing.T, q priorityqueue.PriorityQueue[string]) string {
	key, priority, shutdown := q.GetWithPriority()
	if shutdown {
		t.Fatal("queue shut down")
	}
	step(q, fmt.Sprintf("get -> %q (priority %d)", key, priority))
	return key
}

func TestPriorityOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The queue's goroutines start here, inside the bubble.
		// ANCHOR: order
		q := priorityqueue.New[string]("demo")

		// The initial list arrives at LowPriority, as controller-runtime's
		// handlers enqueue it.
		q.AddWithOpts(at(handler.LowPriority), "a", "b", "c")
		step(q, fmt.Sprintf("add a, b, c at LowPriority (%d)", handler.LowPriority))
		q.Add("b") // a real change to b: a plain Add is priority 0, which beats -100
		step(q, "add b (priority 0)")
		q.AddWithOpts(at(10), "d")
		step(q, "add d at priority 10")
		q.AddWithOpts(at(handler.LowPriority), "d") // never lowers a priority
		step(q, "add d at LowPriority again")
		q.AddAfter("e", time.Second)
		step(q, "add_after e 1s (waiting: not counted)")
		// ANCHOR_END: order

		// ANCHOR: locked
		d := get(t, q)
		q.AddWithOpts(at(10), d) // an event for d while d is processed
		step(q, "add d at priority 10 while d is processing")
		b := get(t, q) // d is held back; the keys behind it are not
		q.Done(b)
		q.Done(d) // now the re-added d can be handed out
		step(q, "done b, done d")
		d = get(t, q)
		q.Done(d)
		// ANCHOR_END: locked

		// ANCHOR: ready
		// Let one virtual second pass, then let the queue's timer goroutine
		// move e from waiting to ready before we look.
		wait := time.Second
		time.Sleep(wait)
		synctest.Wait()
		step(q, fmt.Sprintf("%s later: e is ready", wait))
		e := get(t, q) // priority 0 beats the initial list's -100
		q.Done(e)
		for range 2 {
			key := get(t, q)
			q.Done(key)
		}
		// ANCHOR_END: ready
		// ANCHOR: stall
		// The earliest readiness wins: g is ready after 2s, not 10s.
		q.AddAfter("g", 10*time.Second)
		q.AddAfter("g", 2*time.Second)
		step(q, "add_after g 10s, then add_after g 2s")
		time.Sleep(2 * time.Second)
		synctest.Wait()
		step(q, "2s later: g is ready")
		g := get(t, q)
		for range 100 {
			q.Add(g) // and no Done: the stall of chapter 5
		}
		step(q, "no done for g; 100 more add g")
		// A Get that would block forever, bounded by a virtual 500ms. The
		// goroutine stays parked in GetWithPriority until ShutDown frees it.
		got := make(chan struct{})
		go func() {
			q.GetWithPriority()
			close(got)
		}()
		result := "returned"
		select {
		case <-got:
		case <-time.After(500 * time.Millisecond):
			result = "timed out after 500ms"
		}
		fmt.Fprintf(stdout, "%-44s%s\n", "get with only g queued", result)
		// ANCHOR_END: stall

		// ANCHOR: shutdown
		q.ShutDown() // g's entry is still ready: no drain
		q.Add("f")
		step(q, "shut_down, then add f (ignored)")
		_, _, shutdown := q.GetWithPriority()
		fmt.Fprintf(stdout,
			"get after shut_down returns at once: shutdown=%t\n", shutdown)
		<-got

		// No drain: a fresh queue with a ready, unlocked key, shut down.
		fresh := priorityqueue.New[string]("fresh")
		fresh.Add("h")
		// Len flushes the add buffer. Without it, an Add right before
		// ShutDown can be dropped: the buffer is flushed by a goroutine, and
		// a flush after ShutDown ignores what it finds.
		step(fresh, "new queue: add h")
		fresh.ShutDown()
		step(fresh, "shut_down")
		_, _, shutdown = fresh.GetWithPriority()
		fmt.Fprintf(stdout,
			"get returns at once, h not handed out: shutdown=%t\n", shutdown)
		// ANCHOR_END: shutdown
	})
}
