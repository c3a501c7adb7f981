// Listing 4-1, Go twin: Forget is not Delete.
//
// Forget(item) on a client-go rate-limiting queue only clears the rate
// limiter's memory of that item (its failure count). It does not take the
// item out of the queue, and it does not replace Done. The interface comment
// says so: "This only clears the `rateLimiter`, you still have to call `Done`
// on the queue."
//
// Run from listings/: go run ./ch04-forget/listing-04-01/twin
package main

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/util/workqueue"
)

const baseDelay = 5 * time.Millisecond

func main() {
	// ANCHOR: membership
	// The limiter a default controller gets: 5ms doubling up to 1000s.
	limiter := workqueue.NewTypedItemExponentialFailureRateLimiter[string](
		baseDelay, 1000*time.Second)
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(limiter,
		workqueue.TypedRateLimitingQueueConfig[string]{})
	defer queue.ShutDown()

	fmt.Println("1. Forget does not remove anything from the queue")
	queue.Add("a")
	row("after Add(\"a\")", fmt.Sprintf("Len()=%d", queue.Len()))

	queue.Forget("a")
	n := queue.Len()
	row("after Forget(\"a\")",
		fmt.Sprintf("Len()=%d", n)+note(n == 1, "still queued"))

	// Only handing the item out and finishing it empties the queue.
	item, _ := queue.Get()
	queue.Done(item)
	row("after Get()+Done()", fmt.Sprintf("Len()=%d", queue.Len()))
	// ANCHOR_END: membership

	// ANCHOR: backoff
	fmt.Println()
	fmt.Println("2. Forget resets the backoff")
	// Three failures in a row. The queue's AddRateLimited would call the
	// same When; calling it directly shows the delays it would wait.
	var delays []string
	for range 3 {
		delays = append(delays, limiter.When("a").String())
	}
	row("When(\"a\") x3", fmt.Sprintf("%s   NumRequeues=%d",
		strings.Join(delays, ", "), queue.NumRequeues("a")))

	queue.Forget("a")
	row("after Forget(\"a\")",
		fmt.Sprintf("NumRequeues=%d", queue.NumRequeues("a")))

	d := limiter.When("a")
	row("When(\"a\")", d.String()+note(d == baseDelay, "the base delay again"))
	// ANCHOR_END: backoff
}

func row(label, value string) { fmt.Printf("   %-26s%s\n", label, value) }

// note appends an arrow comment, but only if what it claims was observed.
func note(ok bool, text string) string {
	if !ok {
		return ""
	}
	return "   <- " + text
}
