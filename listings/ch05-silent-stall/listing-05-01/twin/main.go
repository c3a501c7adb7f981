// Listing 5-1, Go twin: the silent stall.
//
// A worker that calls Forget but never Done leaves the item in the queue's
// "processing" set forever. Here it is the classic hand-written worker whose
// error path forgets the key and returns before its Done. Every later Add
// only marks it dirty; the queue holds it back until Done, which never
// comes. Nothing fails, nothing logs: the object is simply never reconciled
// again.
//
// (controller-runtime's processNextWorkItem runs `defer c.Queue.Done(obj)`,
// so its workers cannot make this mistake; a hand-written loop can.)
//
// Run from the repository: go -C listings run ./ch05-silent-stall/listing-05-01/twin
package main

import (
	"errors"
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"
)

const getTimeout = 500 * time.Millisecond

// queue is client-go's rate-limited queue of string keys.
type queue = workqueue.TypedRateLimitingInterface[string]

func newQueue() queue {
	return workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](5*time.Millisecond, 1000*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{},
	)
}

// ANCHOR: worker
// processNextWorkItem is a worker written by hand, with the bug this
// chapter is about: when sync fails for good, it forgets the key (no retry
// would help) and returns, and the Done at the end is never reached.
func processNextWorkItem(q queue, sync func(string) error) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if err := sync(key); err != nil {
		fmt.Printf("   sync(%q) failed: %v; Forget, return without Done\n", key, err)
		q.Forget(key)
		return true // the bug: no q.Done(key) on this path
	}
	q.Forget(key)
	q.Done(key)
	return true
}

// ANCHOR_END: worker

// The two syncs the worker is given: one that succeeds, one that fails for
// good (no retry would fix an invalid spec).
func syncOK(string) error { return nil }

func syncInvalid(string) error { return errors.New("spec.replicas must be >= 0") }

func main() {
	// ANCHOR: healthy
	fmt.Println("healthy: Get -> Forget -> Done")
	q := newQueue()
	q.Add("obj")
	processNextWorkItem(q, syncOK)
	q.Add("obj")
	fmt.Printf("   Add(\"obj\") again, then Get() returns %s\n", getWithTimeout(q))
	q.ShutDown()
	// ANCHOR_END: healthy

	// ANCHOR: stall
	fmt.Println()
	fmt.Println("stall: Get -> Forget, Done never called")
	q = newQueue()
	q.Add("obj")
	processNextWorkItem(q, syncInvalid)
	for range 100 {
		q.Add("obj")
	}
	fmt.Printf("   100 more Add(\"obj\") calls, then Len()=%d\n", q.Len())
	fmt.Printf("   Get() %s\n", getWithTimeout(q))
	q.ShutDown() // also releases the Get still waiting in the background
	// ANCHOR_END: stall
}

// getWithTimeout runs Get in the background and gives up after getTimeout.
func getWithTimeout(q queue) string {
	got := make(chan string, 1)
	go func() {
		item, shutdown := q.Get()
		if !shutdown {
			q.Done(item)
			got <- item
		}
	}()
	select {
	case item := <-got:
		return fmt.Sprintf("%q", item)
	case <-time.After(getTimeout):
		return fmt.Sprintf("timed out after %s: \"obj\" is never handed out again", getTimeout)
	}
}
