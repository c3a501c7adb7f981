// Listing 5-4, Go twin: Done called twice on the real client-go queue. The
// second Done finds the key dirty but no longer processing, and pushes it
// onto the FIFO a second time. Two Gets then hand the same key to two
// workers at once.
//
// Run from listings/: go run ./ch05-silent-stall/listing-05-04/twin
package main

import (
	"fmt"
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
	a, _ := queue.Get()
	show(`A: Get() -> "obj"`, queue)
	queue.Add("obj") // an event arrives while A works
	show(`Add("obj")`, queue)
	queue.Done(a)
	show(`A: Done("obj")`, queue)
	queue.Done(a) // the bug: a second Done
	show(`A: Done("obj") again`, queue)
	b, _ := queue.Get()
	show(`B: Get() -> "obj"`, queue)
	c, _ := queue.Get()
	show(`C: Get() -> "obj"`, queue)
	fmt.Printf("B holds %q and C holds %q, at the same time\n", b, c)
	queue.Done(b)
	show(`B: Done("obj")`, queue) // C still works on obj
	// ANCHOR_END: calls
}
