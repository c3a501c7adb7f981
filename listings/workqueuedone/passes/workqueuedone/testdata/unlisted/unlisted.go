// Package unlisted holds worker loops of shapes no other package here
// names, written to try the analyzer as a new user would: each correct
// one must stay silent, each broken one be reported with its kind.
package unlisted

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/util/workqueue"
)

func sync(string) error { return nil }

type ctl struct {
	q workqueue.TypedRateLimitingInterface[string]
}

// correct: for-clause loop
func (c *ctl) forClause() {
	for key, quit := c.q.Get(); !quit; key, quit = c.q.Get() {
		_ = sync(key)
		c.q.Done(key) // want `panic: c.q.Done\(key\) is not deferred: a panic between c.q.Get\(\) on line 22 and here leaves key never Done; move the work after Get into a function that defers it`
	}
}

// correct: deferred literal with arg
func (c *ctl) deferArg() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	defer func(k string) { c.q.Done(k) }(key)
	_ = sync(key)
}

// correct: defer before the check
func (c *ctl) deferBeforeCheck() {
	key, quit := c.q.Get()
	defer c.q.Done(key)
	if quit {
		return
	}
	_ = sync(key)
}

// correct: method value
func (c *ctl) methodValue() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	done := c.q.Done
	defer done(key)
	_ = sync(key)
}

// correct: closure captured by a deferred closure
func (c *ctl) closureInDefer() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	finish := func() { c.q.Done(key) }
	defer func() { finish() }()
	_ = sync(key)
}

// correct: deferred closure with forget/addratelimited branches
func (c *ctl) deferredBranches(ctx context.Context) {
	key, quit := c.q.Get()
	if quit {
		return
	}
	var err error
	defer func() {
		if err != nil {
			c.q.AddRateLimited(key)
		} else {
			c.q.Forget(key)
		}
		c.q.Done(key)
	}()
	err = sync(key)
	if errors.Is(err, context.Canceled) {
		return
	}
	fmt.Println(key)
}

// correct: pointer struct to helper
type work struct{ key string }

func (c *ctl) finishPtr(w *work) { // want finishPtr:`releasesParts\[0.0\]`
	defer c.q.Done(w.key)
	_ = sync(w.key)
}

func (c *ctl) ptrStruct() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	c.finishPtr(&work{key: key})
}

// correct: select loop worker
func (c *ctl) selectLoop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		key, quit := c.q.Get()
		if quit {
			return
		}
		func() {
			defer c.q.Done(key)
			_ = sync(key)
		}()
	}
}

// correct: commaok type assertion
func untyped(q workqueue.RateLimitingInterface) { //nolint:staticcheck // untyped
	item, quit := q.Get()
	if quit {
		return
	}
	key, ok := item.(string)
	if !ok {
		q.Forget(item)
		q.Done(item)
		return
	}
	defer q.Done(key)
	_ = sync(key)
}

// broken: a goroutine that forgets on error
func (c *ctl) goroutineLeak() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	go func() {
		if err := sync(key); err != nil {
			return
		}
		c.q.Done(key)
	}()
} // want `stall: c.q.Get\(\) on line 145 hands out key`

// broken: Done on the wrong key from a map lookup
func (c *ctl) wrongLookup(m map[string]string) { // want wrongLookup:`sometimes\[0\]`
	key, quit := c.q.Get()
	if quit {
		return
	}
	defer c.q.Done(m[key])
	_ = sync(key)
} // want `stall: c.q.Get\(\) on line 159 hands out key`

// broken: deferred closure that forgets on a path
func (c *ctl) deferredForget() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	var err error
	defer func() {
		if err != nil {
			c.q.AddRateLimited(key)
			return
		}
		c.q.Forget(key)
		c.q.Done(key)
	}()
	err = sync(key)
} // want `stall: c.q.Get\(\) on line 169 hands out key, and the path where err != nil \(line 175\) is true`

// broken: double via two deferred closures
func (c *ctl) twoDefers() {
	key, quit := c.q.Get()
	if quit {
		return
	}
	defer c.q.Done(key)
	defer func() { c.q.Done(key) }() // want `double: c.q.Done\(key\) is the second Done of key on this path \(the first is on line 191`
	_ = sync(key)
}

// broken: a literal in the loop that puts the key in an error (a call's
// ... arguments, a temporary array: not a batch) and forgets Done
func (c *ctl) literalLogs() {
	for {
		key, quit := c.q.Get()
		if quit {
			return
		}
		err := func() error {
			if err := sync(key); err != nil {
				return fmt.Errorf("syncing %s: %w", key, err)
			}
			c.q.Forget(key)
			return nil
		}()
		if err != nil { // want `forget: c.q.Forget\(key\) on line 208 resets the backoff but is not Done: c.q.Get\(\) on line 200 handed out key, and on the path where err != nil \(line 205\) is false`
			fmt.Println(err) // want `stall: c.q.Get\(\) on line 200 hands out key, and on the path where err != nil \(line 205\) is true`
		}
	}
}
