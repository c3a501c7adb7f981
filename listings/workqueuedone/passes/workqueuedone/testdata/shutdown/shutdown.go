// Package shutdown holds the shutdown check written every way: on its
// shutdown side nothing was handed out, so no path through it is a stall.
package shutdown

import "k8s.io/client-go/util/workqueue"

func sync(any) error { return nil }

func and(q workqueue.Interface) { //nolint:staticcheck // the untyped queue
	for {
		item, shutdown := q.Get()
		if item == nil && shutdown {
			break
		}
		_ = sync(item)
		q.Done(item) // want `panic: q.Done\(item\) is not deferred`
	}
}

func or(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown || key == "" {
		return false // want `stall: q.Get\(\) on line 21 hands out key, and the path where shutdown || key == "" \(line 22\) is true returns here`
	}
	defer q.Done(key)
	return sync(key) == nil
}

func equalsTrue(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown == true {
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

func switchTag(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	switch shutdown {
	case true:
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

func switchCase(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	switch {
	case shutdown:
		return false
	case key == "":
		q.Done(key)
		return true
	}
	defer q.Done(key)
	return sync(key) == nil
}

// A helper that returns the flag.
func stopped(quit bool) bool { return quit } // want stopped:`shutdownFlag\[0\]\+1`

func running(quit bool) bool { return !quit } // want running:`shutdownFlag\[0\]-1`

func viaHelper(q workqueue.TypedInterface[string]) bool {
	key, quit := q.Get()
	if stopped(quit) {
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

func viaNegatedHelper(q workqueue.TypedInterface[string]) bool {
	key, quit := q.Get()
	if !running(quit) {
		return false
	}
	defer q.Done(key)
	return sync(key) == nil
}

// A check on something else is no shutdown check.
func notACheck(q workqueue.TypedInterface[string], ready bool) bool {
	key, quit := q.Get()
	if ready {
		return false // want `stall: q.Get\(\) on line 86 hands out key, and the path where ready \(line 87\) is true returns here`
	}
	_ = quit
	defer q.Done(key)
	return sync(key) == nil
}
