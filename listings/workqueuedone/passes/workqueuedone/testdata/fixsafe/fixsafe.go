// Package fixsafe holds reports that carry no suggested fix, because the
// one line would be wrong there: each file is left as it is by -fix
// (fixsafe.go.golden is this file unchanged).
package fixsafe

import "k8s.io/client-go/util/workqueue"

func sync(string) error { return nil }

// Some path releases already: a defer would add a second Done there.
func releasedOnOnePath(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if sync(key) != nil {
		return false // want `stall: q.Get\(\) on line 12`
	}
	q.Done(key)
	return true
}

// The item is handed on where a channel's receiver releases it.
func handedOn(q workqueue.TypedInterface[string], ch chan<- string, ok bool) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if !ok {
		return false // want `stall: q.Get\(\) on line 25`
	}
	ch <- key
	return true
}

// The queue under a second name.
func aliasedQueue(q workqueue.TypedInterface[string], ok bool) bool {
	r := q
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if !ok {
		return false // want `stall: q.Get\(\) on line 39`
	}
	r.Done(key)
	return true
}

// In a loop, a defer waits for the return.
func inLoop(q workqueue.TypedInterface[string]) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		_ = sync(key) // want `stall: q.Get\(\) on line 53`
	}
}

// The item under a second name: a Done of that name may release it.
func aliasedItem(q workqueue.Interface, ok bool) bool { //nolint:staticcheck // the untyped queue
	obj, shutdown := q.Get()
	if shutdown {
		return false
	}
	key := obj.(string)
	if !ok {
		return false // want `stall: q.Get\(\) on line 63`
	}
	q.Done(key)
	return true
}

// Done through reflection: the analyzer cannot see it, so it cannot show
// a defer would be the only Done.
func reflected(q workqueue.TypedInterface[string], call func(any, string, ...any)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	call(q, "Done", key)
	return true // want `stall: q.Get\(\) on line 78`
}

// Done through an interface of one's own.
type finisher interface{ Done(string) }

func viaInterface(q workqueue.TypedInterface[string], f finisher, ok bool) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if ok {
		f.Done(key)
	}
	return true // want `stall: q.Get\(\) on line 90`
}

// A helper that releases on some paths only (sample-controller's literal
// with an early return before its defer, written as a function).
func finishUnlessEmpty(q workqueue.TypedInterface[string], key string) { // want finishUnlessEmpty:`sometimes\[1\]`
	if key == "" {
		return
	}
	defer q.Done(key)
	_ = sync(key)
}

func viaSometimesHelper(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	finishUnlessEmpty(q, key)
	return true // want `stall: q.Get\(\) on line 111`
}
