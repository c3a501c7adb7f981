// Listing 3-1, Go twin: the retry curve of the two rate limiters a
// controller-runtime controller can end up with.
//
//   - With the priority queue (the default since controller-runtime v0.23)
//     the controller uses a per-item exponential limiter: 5ms doubling up
//     to 1000s.
//   - With UsePriorityQueue=false it uses DefaultTypedControllerRateLimiter:
//     the max of that same exponential limiter and a 10 qps / 100 burst
//     token bucket shared by all items.
//
// Every delay below is returned by the real client-go limiter; nothing is
// computed here except the running sum.
//
// Run from listings/: go run ./ch03-retry-curve/listing-03-01/twin
package main

import (
	"fmt"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// The failures we print a row for.
var rows = []int{1, 2, 4, 8, 10, 12, 14, 16, 18, 19, 20, 22}

const maxDelay = 1000 * time.Second

func main() {
	// ANCHOR: limiters
	printTable(
		"exponential 5ms..1000s",
		"the default with the priority queue",
		func() workqueue.TypedRateLimiter[string] {
			return workqueue.NewTypedItemExponentialFailureRateLimiter[string](
				5*time.Millisecond, maxDelay)
		},
	)
	fmt.Println()
	printTable(
		"DefaultTypedControllerRateLimiter",
		"max of exponential 5ms..1000s and a 10 qps / 100 burst bucket",
		workqueue.DefaultTypedControllerRateLimiter[string],
	)
	// ANCHOR_END: limiters
}

// ANCHOR: table
func printTable(
	name, about string,
	newLimiter func() workqueue.TypedRateLimiter[string],
) {
	fmt.Printf("limiter: %s\n", name)
	fmt.Printf("         %s\n", about)
	fmt.Printf("%-10s%15s%17s\n", "failure", "delay", "cumulative")

	// One item failing over and over: the n-th call to When is the delay
	// the queue waits before handing the item out for attempt n+1.
	limiter := newLimiter()
	var cumulative time.Duration
	next := 0
	for n := 1; n <= rows[len(rows)-1]; n++ {
		delay := limiter.When("my-object")
		cumulative += delay
		if n == rows[next] {
			fmt.Printf("%-10d%15s%17s\n",
				n, delay, cumulative.Round(time.Second))
			next++
		}
	}

	// Find the first failure whose delay is the cap by asking a fresh
	// limiter until it says 1000s.
	fresh := newLimiter()
	first := 1
	for fresh.When("my-object") != maxDelay {
		first++
	}
	// (maxDelay prints as 16m40s; the book calls the cap "1000s".)
	fmt.Printf("\nfirst failure hitting the 1000s cap: #%d\n", first)
}

// ANCHOR_END: table
