// Listing 4-2, Go twin: what the queue's three collections hold after each
// call, read from the real client-go queue's state: the FIFO (what Get hands
// out next), the dirty set (what needs processing) and the processing set
// (handed out, not yet done). Forget moves nothing; Done does.
//
// Run from listings/: go run ./ch04-forget/listing-04-02/twin
package main

import (
	"time"

	"k8s.io/client-go/util/workqueue"

	"forget-is-not-delete/listings/internal/queuestate"
)

// show prints one row: the call just made, then what the real queue's FIFO,
// dirty set and processing set hold after it, and Len(). The collections are
// unexported, so internal/queuestate reads them in place, through reflection.
var show = queuestate.Show

func main() {
	queuestate.PrintHeader()
	// ANCHOR: calls
	queue := workqueue.NewTypedRateLimitingQueue[string](
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](
			5*time.Millisecond, 1000*time.Second))
	defer queue.ShutDown()

	queue.Add("a")
	show(`Add("a")`, queue)
	queue.Add("b")
	show(`Add("b")`, queue)
	queue.Forget("a")
	show(`Forget("a")`, queue) // nothing moves
	a, _ := queue.Get()
	show(`Get() -> "a"`, queue)
	queue.Add("a")
	show(`Add("a")`, queue) // dirty only: a is being processed
	queue.Forget(a)
	show(`Forget("a")`, queue) // still nothing moves
	queue.Done(a)
	show(`Done("a")`, queue) // dirty a goes back to the FIFO
	// ANCHOR_END: calls
}
