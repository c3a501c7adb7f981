// Listing 5-2, Go twin: the stall, collection by collection, read from the
// real client-go queue's state. Once Done is skipped, the key sits in the
// processing set for good, and every new event only re-marks it dirty.
//
// Run from the repository: go -C listings run ./ch05-silent-stall/listing-05-02/twin
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

	queue.Add("obj")
	show(`Add("obj")`, queue)
	obj, _ := queue.Get()
	show(`Get() -> "obj"`, queue)
	queue.Forget(obj)
	show(`Forget("obj")`, queue)
	// No Done. Events keep arriving:
	queue.Add("obj")
	show(`Add("obj")`, queue)
	for range 99 {
		queue.Add("obj")
	}
	show(`Add("obj") x99 more`, queue)
	queue.Add("other")
	other, _ := queue.Get()
	queue.Done(other)
	show("other: Add, Get, Done", queue) // the rest of the queue is fine
	// ANCHOR_END: calls
}
