// Listing 3-1, Go twin: the two rate limiters a controller-runtime
// controller can end up with, asked straight for the delays of one object
// that keeps failing.
//
//   - With the priority queue (the default since controller-runtime v0.23)
//     the controller uses a per-item exponential limiter: 5ms doubling up
//     to 1000s.
//   - With UsePriorityQueue=false it uses DefaultTypedControllerRateLimiter:
//     the max of that same exponential limiter and a 10 qps / 100 burst
//     token bucket shared by all items.
//
// Every delay is returned by the real client-go limiter; nothing is
// computed here but the comparison.
//
// Run from the repository: go -C listings run ./ch03-retry-curve/listing-03-01/twin
package main

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/client-go/util/workqueue"
)

// How many failures the two limiters are asked about: past #19, where the
// cap starts, and up to #42, where the float overflow guard takes over.
const failures = 42

const maxDelay = 1000 * time.Second

func main() {
	// ANCHOR: limiters
	fmt.Println("limiter A: exponential 5ms..1000s")
	fmt.Println("           the default with the priority queue")
	fmt.Println("limiter B: DefaultTypedControllerRateLimiter")
	fmt.Println("           max of exponential 5ms..1000s and a 10 qps / 100 burst bucket")
	a := workqueue.NewTypedItemExponentialFailureRateLimiter[string](
		5*time.Millisecond, maxDelay)
	b := workqueue.DefaultTypedControllerRateLimiter[string]()
	// Each call is one more failure of the same object.
	delays := func(limiter workqueue.TypedRateLimiter[string]) []time.Duration {
		out := make([]time.Duration, failures)
		for i := range out {
			out[i] = limiter.When("my-object")
		}
		return out
	}
	fromA, fromB := delays(a), delays(b)
	// ANCHOR_END: limiters

	// ANCHOR: compare
	differ := 0
	for n := range failures {
		if fromA[n] != fromB[n] {
			differ++
		}
	}
	fmt.Println()
	fmt.Printf("failures 1 to %d of one object: A and B differ at %d of them\n",
		failures, differ)
	for _, l := range []struct {
		name   string
		delays []time.Duration
	}{{"A", fromA}, {"B", fromB}} {
		// (maxDelay prints as 16m40s; the book calls the cap "1000s".)
		fmt.Printf("limiter %s: first failure hitting the 1000s cap: #%d\n",
			l.name, slices.Index(l.delays, maxDelay)+1)
	}
	// ANCHOR_END: compare
}
