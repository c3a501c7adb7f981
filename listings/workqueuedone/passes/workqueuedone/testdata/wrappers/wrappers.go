// Package wrappers holds queues wrapped in types and helpers of one's own:
// a function that returns an item it got from a queue hands it out, and
// its callers are checked as if they had called Get.
package wrappers

import (
	"example.com/controllers/wrapperlib"
	"k8s.io/client-go/util/workqueue"
)

func sync(string) error { return nil }

// ANCHOR: wrapper
// A type of one's own whose Get and Done call the queue's.
type wq struct {
	inner workqueue.TypedInterface[string]
}

func (w *wq) Get() (string, bool) { // want Get:`handsOut\[0\] shutdown`
	key, shutdown := w.inner.Get()
	return key, shutdown
}

func (w *wq) Done(key string) { // want Done:`releases\[0\]`
	w.inner.Done(key)
}

func wrapperRight(w *wq) bool {
	key, shutdown := w.Get()
	if shutdown {
		return false
	}
	defer w.Done(key)
	return sync(key) == nil
}

func wrapperWrong(w *wq) bool {
	key, shutdown := w.Get()
	if shutdown {
		return false
	}
	if sync(key) != nil {
		return false // want `stall: w.Get\(\) on line 38`
	}
	w.Done(key)
	return true
}

// ANCHOR_END: wrapper
// Done on another wrapper than the one the item came from.
func wrapperOther(q, other *wq) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer other.Done(key)
	return sync(key) == nil // want `stall: q.Get\(\) on line 52`
}

// ANCHOR: helper
// A helper that returns the item with an ok flag: true when it has one.
func next(q keys) (string, bool) { // want next:`handsOut\[0\] ok\[1\]`
	key, shutdown := q.Get()
	if shutdown {
		return "", false
	}
	return key, true
}

func helperRight(q keys) bool {
	key, ok := next(q)
	if !ok {
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

// Listing 6-1's shape: the helper's caller never calls Done.
func helperWrong(q keys) bool {
	key, ok := next(q)
	if !ok {
		return false
	}
	return sync(key) == nil // want `stall: next\(\) on line 81`
}

// ANCHOR_END: helper
// A helper that returns an error when the queue shut down.
func nextOrErr(q workqueue.TypedInterface[string]) (string, error) { // want nextOrErr:`handsOut\[0\] error\[1\]`
	key, shutdown := q.Get()
	if shutdown {
		return "", errShutdown
	}
	return key, nil
}

type shutdownError struct{}

func (shutdownError) Error() string { return "shut down" }

var errShutdown error = shutdownError{}

func helperErr(q workqueue.TypedInterface[string]) bool {
	key, err := nextOrErr(q)
	if err != nil {
		return false // nothing handed out
	}
	defer q.Done(key)
	return sync(key) == nil
}

// The wrapper of another package, right and wrong.
func otherPackageRight(q *wrapperlib.Queue) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

func otherPackageWrong(q *wrapperlib.Queue) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	_ = sync(key)
	return true // want `stall: q.Get\(\) on line 124 hands out key`
}

// Ways of writing down what Get hands out.
type worker struct {
	q       workqueue.TypedInterface[string]
	current string
}

func varDecl(q workqueue.TypedInterface[string]) bool {
	var key, quit = q.Get()
	if quit {
		return false
	}
	return sync(key) == nil // want `stall: q.Get\(\) on line 139 hands out key`
}

func intoField(w *worker) bool {
	var quit bool
	w.current, quit = w.q.Get()
	if quit {
		return false
	}
	defer w.q.Done(w.current)
	return sync(w.current) == nil
}

func intoFieldWrong(w *worker) bool {
	var quit bool
	w.current, quit = w.q.Get()
	if quit {
		return false
	}
	return sync(w.current) == nil // want `stall: w.q.Get\(\) on line 158 hands out w.current`
}

// The queue under another name in the function is the same queue.
func queueAlias(w *worker) bool {
	q := w.q
	key, quit := w.q.Get()
	if quit {
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

// Get on its own line, its item dropped.
func dropped(q workqueue.TypedInterface[string]) {
	q.Get() // want `stall: the item q.Get\(\) hands out is discarded`
}

// keys is the queue the helpers above take, under a short name.
type keys = workqueue.TypedInterface[string]
