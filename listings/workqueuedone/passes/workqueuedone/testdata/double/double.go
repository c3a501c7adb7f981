// Package double holds a Done called twice on one path: if the key was
// added again while it was processed, each Done puts it back in the
// queue, so two workers can be handed it at once (listing 5-4).
package double

import "k8s.io/client-go/util/workqueue"

func sync(string) error { return nil }

// ANCHOR: double
// A deferred Done and a Done by hand on the error path.
func deferAndCall(q workqueue.TypedRateLimitingInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	if err := sync(key); err != nil {
		q.AddRateLimited(key)
		q.Done(key) // want `double: q.Done\(key\) is the second`
		return true
	}
	q.Forget(key)
	return true
}

// ANCHOR_END: double
// Two Dones by hand on one path.
func twoCalls(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	if sync(key) != nil {
		q.Done(key)
	}
	q.Done(key) // want `double: q.Done\(key\) is the second Done of key on this path \(the first is on line 35`
}

// One Done on each path: right.
func onePerPath(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	if sync(key) != nil {
		q.Done(key) // want `panic: q.Done\(key\) is not deferred`
		return
	}
	q.Done(key) // no second panic: report
}

// A Done, then the variable reused for the next item: not a double.
func reused(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	q.Done(key)
	key, shutdown = q.Get()
	if shutdown {
		return
	}
	q.Done(key)
}

// A helper that releases, then a Done.
func finish(q workqueue.TypedInterface[string], key string) { // want finish:`releases\[1\]`
	q.Done(key)
}

func helperThenDone(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	finish(q, key)
	q.Done(key) // want `double: q.Done\(key\) is the second Done of key`
}
