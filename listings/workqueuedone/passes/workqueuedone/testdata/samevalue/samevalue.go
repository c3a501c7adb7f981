// Package samevalue holds the item under other names, and other values
// under the item's name. The same value under another name releases it: a
// type switch's variable, a conversion to or from an interface, a field of
// a struct built from it, a variable a literal captured, an element of a
// local batch. A different value under the same name does not. Each
// function is one shape, right (silent) or wrong (its want comment).
package samevalue

import (
	"errors"
	"strings"

	"k8s.io/client-go/util/workqueue"
)

func sync(string) error { return nil }

type add struct{ key string }
type del struct{ key string }

// ANCHOR: switch
// A type switch narrows the item; Done on the switch's variable is Done on
// the item.
func typeSwitch(q workqueue.Interface) bool { //nolint:staticcheck // untyped
	item, shutdown := q.Get()
	if shutdown {
		return false
	}
	switch ev := item.(type) {
	case add:
		_ = sync(ev.key)
		q.Done(ev) // want `panic: q.Done\(ev\) is not deferred`
	case del:
		q.Done(ev)
	default:
		q.Done(item)
	}
	return true
}

// The same, with a case that forgets.
func typeSwitchLeak(q workqueue.Interface) bool { //nolint:staticcheck // untyped
	item, shutdown := q.Get()
	if shutdown {
		return false
	}
	switch ev := item.(type) {
	case add:
		q.Done(ev)
	case del:
		return false // want `stall: q.Get\(\) on line 43`
	default:
		q.Done(item)
	}
	return true
}

// ANCHOR_END: switch
// An item converted to an interface and back.
func viaInterface(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	var v any = key
	s := v.(string)
	q.Done(s)
}

// ANCHOR: reassigned
// A different value under the item's name: the item is never Done, and
// the Done goes to a key nobody was handed.
func reassigned(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	key = strings.ToLower(key)
	q.Done(key)
} // want `stall: q.Get\(\) on line 74`
// The Done above releases a key nobody was handed.
// ANCHOR_END: reassigned
// Reassigned on one path only: the other path is right.
func reassignedOnOnePath(q workqueue.TypedInterface[string], lower bool) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	if lower {
		key = strings.ToLower(key)
	}
	q.Done(key)
} // want `stall: q.Get\(\) on line 85`

// Reassigned after the Done: right.
func reassignedAfter(q workqueue.TypedInterface[string]) string {
	key, shutdown := q.Get()
	if shutdown {
		return ""
	}
	q.Done(key)
	key = strings.ToLower(key)
	return key
}

// ANCHOR: struct
// The key wrapped in a struct for a helper, which finishes it.
type work struct {
	key     string
	retries int
}

func (c *ctl) finish(w work) { // want finish:`releasesParts\[0.0\]`
	defer c.q.Done(w.key)
	_ = sync(w.key)
}

type ctl struct {
	q workqueue.TypedInterface[string]
}

func (c *ctl) wrapped() {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	c.finish(work{key: key})
}

// A helper that finishes the struct's key on one path only.
func (c *ctl) finishSometimes(w *work) { // want finishSometimes:`sometimes\[0\]`
	if w.retries > 3 {
		return
	}
	c.q.Done(w.key)
}

func (c *ctl) wrappedLeak() {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	c.finishSometimes(&work{key: key})
} // want `stall: c.q.Get\(\) on line 139`

// The struct read back in the same function.
func (c *ctl) fieldReadBack() {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	w := work{key: key}
	w.retries++
	c.q.Done(w.key)
}

// ANCHOR_END: struct
// ANCHOR: flag
// A release flag a deferred literal reads: the item is Done on exactly the
// paths where the flag is still set.
func (c *ctl) releaseFlag(out chan<- string, handOff bool) {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	release := true
	defer func() {
		if release {
			c.q.Done(key)
		}
	}()
	if handOff {
		release = false
		out <- key // the receiver finishes it
		return
	}
	_ = sync(key)
}

// The flag cleared on a path that keeps the item.
func (c *ctl) releaseFlagLeak(skip bool) {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	release := true
	defer func() {
		if release {
			c.q.Done(key)
		}
	}()
	if skip {
		release = false
		return // want `stall: c.q.Get\(\) on line 182`
	}
	_ = sync(key)
}

// ANCHOR_END: flag
// ANCHOR: closure
// A local literal that finishes the item, called on every path.
func (c *ctl) localFinish() error {
	key, shutdown := c.q.Get()
	if shutdown {
		return nil
	}
	finish := func(err error) error {
		c.q.Done(key) // want `panic: c.q.Done\(key\) is not deferred`
		return err
	}
	if err := sync(key); err != nil {
		return finish(err)
	}
	return finish(nil)
}

// The same literal, skipped on one path.
func (c *ctl) localFinishSkipped() error {
	key, shutdown := c.q.Get()
	if shutdown {
		return nil
	}
	finish := func() { c.q.Done(key) }
	if err := sync(key); err != nil {
		return err // want `stall: c.q.Get\(\) on line 219`
	}
	finish()
	return nil
}

// A literal called twice finishes the item twice.
func (c *ctl) localFinishTwice() {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	finish := func() {
		c.q.Done(key) // want `double: c.q.Done\(key\) is the second Done`
	}
	finish()
	finish()
}

// ANCHOR_END: closure
// ANCHOR: batch
// Items collected in a local batch, then each one finished.
func (c *ctl) batch(n int) {
	var keys []string
	for range n {
		key, shutdown := c.q.Get()
		if shutdown {
			break
		}
		keys = append(keys, key)
	}
	for _, key := range keys {
		_ = sync(key)
		c.q.Done(key) // want `panic: c.q.Done\(key\) is not deferred`
	}
}

// A batch whose loop skips the Done of a failed item.
func (c *ctl) batchSkips(n int) {
	var keys []string
	for range n {
		key, shutdown := c.q.Get()
		if shutdown {
			break
		}
		keys = append(keys, key)
	}
	for _, key := range keys {
		if sync(key) != nil {
			continue
		}
		c.q.Done(key)
	}
} // want `stall: c.q.Get\(\) on line 266`

// A batch that is never finished.
func (c *ctl) batchDropped(n int) int {
	var keys []string
	for range n {
		key, shutdown := c.q.Get()
		if shutdown {
			break
		}
		keys = append(keys, key)
	}
	return len(keys) // want `stall: c.q.Get\(\) on line 284`
}

// A set of keys in a local map, finished by ranging over it.
func (c *ctl) keySet(n int) {
	pending := map[string]bool{}
	for range n {
		key, shutdown := c.q.Get()
		if shutdown {
			break
		}
		pending[key] = true
	}
	for key := range pending {
		c.q.Done(key)
	}
}

// ANCHOR_END: batch
// ANCHOR: callback
// An event whose Done callback its consumer calls, sent on a channel the
// package does not read: the callback is the other end, out of sight.
type event struct {
	Key  string
	Done func(error)
}

func (c *ctl) events(out chan<- event) {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	out <- event{Key: key, Done: func(err error) {
		if err != nil {
			_ = errors.Unwrap(err)
		}
		c.q.Done(key)
	}}
}

// ANCHOR_END: callback
// A helper that defers Done, and a caller that calls it too.
func (c *ctl) helperDefers(key string) { // want helperDefers:`releases\[0\]`
	defer c.q.Done(key)
	_ = sync(key)
}

func (c *ctl) doneTwiceThroughHelper() {
	key, shutdown := c.q.Get()
	if shutdown {
		return
	}
	c.helperDefers(key)
	c.q.Done(key) // want `double: c.q.Done\(key\) is the second Done`
}
