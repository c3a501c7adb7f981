// Package loops holds worker loops written the ways real controllers
// write them: each function is one shape, and a want comment marks
// every report the analyzer must make (a panic report is made only for a
// hand-out with no stall, so it does not repeat one).
package loops

import (
	"context"
	"errors"
	"fmt"

	"example.com/controllers/release"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

type controller struct {
	queue   workqueue.TypedRateLimitingInterface[string]
	untyped workqueue.RateLimitingInterface //nolint:staticcheck // the untyped queue, as older controllers hold it
	pq      priorityqueue.PriorityQueue[string]
	other   workqueue.TypedRateLimitingInterface[string]
}

func (c *controller) sync(ctx context.Context, key string) error { return nil }

// The shape client-go's examples teach: defer Done after the check.
func (c *controller) deferAfterCheck(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// ANCHOR: kinds
// An error branch that returns before the Done at the end.
func (c *controller) earlyReturn(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	if err := c.sync(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		return true // want `stall: c.queue.Get\(\) on line 44 hands out key`
	}
	c.queue.Forget(key)
	c.queue.Done(key)
	return true
}

// Forget on the success path, taken for Done.
func (c *controller) forgetForDone(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	if err := c.sync(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		c.queue.Done(key) // no panic: report beside a stall
		return true
	}
	c.queue.Forget(key)
	return true // want `forget: c.queue.Forget\(key\) on line 68`
}

// Done on both paths, by hand: right, unless sync panics.
func (c *controller) explicitEveryPath(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	if err := c.sync(ctx, key); err != nil {
		c.queue.Done(key) // want `panic: c.queue.Done\(key\) is not deferred`
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Done(key) // no second panic: report for one item
	return true
}

// ANCHOR_END: kinds
// Done straight after Get, with nothing that could panic in between.
func (c *controller) nothingInBetween() bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	c.queue.Done(key)
	return true
}

// No Done at all: the suggested fix adds the defer.
func (c *controller) missingDone(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	_ = c.sync(ctx, key)
	return true // want `stall: c.queue.Get\(\) on line 100 hands out key, and this path returns without c.queue.Done\(key\)`
}

// ANCHOR: released
// Older sample-controller's shape, and that of the controllers copied
// from it: the item goes to a literal called at once.
func (c *controller) sampleController() bool {
	obj, shutdown := c.untyped.Get()
	if shutdown {
		return false
	}
	err := func(obj interface{}) error {
		defer c.untyped.Done(obj)
		key, ok := obj.(string)
		if !ok {
			c.untyped.Forget(obj)
			return nil
		}
		if err := c.sync(context.TODO(), key); err != nil {
			c.untyped.AddRateLimited(key)
			return err
		}
		c.untyped.Forget(obj)
		return nil
	}(obj)
	return err == nil
}

// ANCHOR_END: released
// A literal called at once that forgets the Done on one path: the
// caller's return is where the item leaves.
func (c *controller) leakyLiteral() bool {
	obj, shutdown := c.untyped.Get()
	if shutdown {
		return false
	}
	func(obj interface{}) {
		if obj == "" {
			return
		}
		c.untyped.Done(obj)
	}(obj)
	return true // want `stall: c.untyped.Get\(\) on line 137 hands out obj`
}

// The item goes to a goroutine that releases it.
func (c *controller) goroutine(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	go func() {
		defer c.queue.Done(key)
		_ = c.sync(ctx, key)
	}()
	return true
}

// A method of this package that releases its parameter on every path.
func (c *controller) handle(key string, err error) { // want handle:`releases\[0\]`
	defer c.queue.Done(key)
	if err != nil {
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.Forget(key)
}

func (c *controller) viaHelper(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	c.handle(key, c.sync(ctx, key))
	return true
}

// A helper from another package, known through its fact.
func (c *controller) viaOtherPackage(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	release.Finish(c.queue, key, c.sync(ctx, key))
	return true
}

// A helper that releases through an interface-typed parameter.
func (c *controller) viaInterfaceHelper(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer release.FinishVia(c.queue, key)
	return c.sync(ctx, key) == nil
}

// A helper that does not release on every path releases nothing.
func (c *controller) viaLeakyHelper(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	release.Requeue(c.queue, key, c.sync(ctx, key))
	return true // want `stall: c.queue.Get\(\) on line 204 hands out key`
}

// ANCHOR: loops
// A worker that loops around Get itself, and skips an item with continue.
func (c *controller) loopWithContinue(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		if key == "" {
			continue // want `stall: .* the loop goes back to Get here`
		}
		_ = c.sync(ctx, key)
		c.queue.Done(key)
	}
}

// break out of the loop, then return.
func (c *controller) loopWithBreak(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		if errors.Is(c.sync(ctx, key), context.Canceled) {
			break
		}
		c.queue.Done(key)
	}
	fmt.Println("stopped")
} // want `stall: c.queue.Get\(\) on line 231 hands out key`

// defer in a loop runs at the return, not at the end of the iteration.
func (c *controller) deferInLoop(ctx context.Context) {
	for {
		key, quit := c.queue.Get()
		if quit {
			return
		}
		defer c.queue.Done(key)
		_ = c.sync(ctx, key) // want `stall: .* defer c.queue.Done\(key\) runs only`
	}
}

// ANCHOR_END: loops
// Done on a variable that is not the item.
func (c *controller) doneOnAnotherVariable(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	name := "default/" + key
	defer c.queue.Done(name)
	_ = c.sync(ctx, key)
	return true // want `stall: c.queue.Get\(\) on line 258 hands out key`
}

// Done on another queue than the one the item came from.
func (c *controller) doneOnAnotherQueue(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.other.Done(key)
	_ = c.sync(ctx, key)
	return true // want `stall: c.queue.Get\(\) on line 270 hands out key`
}

// A variable assigned from the item is the item.
func (c *controller) typeAssertion() bool {
	obj, shutdown := c.untyped.Get()
	if shutdown {
		return false
	}
	key := obj.(string)
	defer c.untyped.Done(key)
	return key != ""
}

// The item thrown away: nothing can ever call Done on it.
func (c *controller) discarded() {
	_, _ = c.queue.Get() // want `stall: the item c.queue.Get\(\) hands out is discarded, so it is never Done`
}

// controller-runtime's priority queue, right and wrong.
func (c *controller) priority(ctx context.Context) bool {
	key, priority, shutdown := c.pq.GetWithPriority()
	if shutdown {
		return false
	}
	defer c.pq.Done(key)
	_ = priority
	return c.sync(ctx, key) == nil
}

func (c *controller) priorityLeak(ctx context.Context) bool {
	key, _, shutdown := c.pq.GetWithPriority()
	if shutdown {
		return false
	}
	if c.sync(ctx, key) != nil {
		return false // want `stall: c.pq.GetWithPriority\(\) on line 307 hands out key`
	}
	c.pq.Done(key)
	return true
}

// A path that panics ends the process (or a recover above handles it):
// it is not a path that returns.
func (c *controller) panics(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if key == "" {
		panic("empty key")
	}
	return c.sync(ctx, key) == nil
}

// The shutdown check written the other way round.
func (c *controller) negatedCheck(ctx context.Context) bool {
	if key, quit := c.queue.Get(); !quit {
		defer c.queue.Done(key)
		return c.sync(ctx, key) == nil
	}
	return false
}
