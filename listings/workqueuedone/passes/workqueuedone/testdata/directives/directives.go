// Package directives holds reports a team has read and accepted, each
// with its reason, and the directives that are themselves reported.
package directives

import "k8s.io/client-go/util/workqueue"

func sync(string) error { return nil }

// ANCHOR: accept
// Accepted on its line: the process exits on this error.
func acceptedOnLine(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if sync(key) != nil {
		return false //workqueuedone:accept the caller exits on false
	}
	q.Done(key)
	return true
}

// Accepted for the whole function, in its doc comment.
//
//workqueuedone:accept a test helper: the queue is dropped after one item
func acceptedInDoc(q workqueue.TypedInterface[string]) {
	key, _ := q.Get()
	_ = sync(key)
}

// ANCHOR_END: accept
// No reason: the directive is reported, and the report it meant to hide
// is still made.
func noReason(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	/* want `directive: //workqueuedone:accept needs a reason after it` */ //workqueuedone:accept
	_ = sync(key)
	return true // want `stall: q.Get\(\) on line 35 hands out key`
}

// A directive left behind when the code was fixed hides nothing.
func leftBehind(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	/* want `directive: //workqueuedone:accept silences no report here` */ //workqueuedone:accept it used to leak
	return sync(key) == nil
}

// Directives written wrong accept nothing, and say so.
func misspelled(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if sync(key) != nil {
		return false /* want `stall: q.Get\(\) on line 57` `directive: "// workqueuedone:accept the caller exits" is not a directive` */ // workqueuedone:accept the caller exits
	}
	if key == "" {
		return false /* want `stall: q.Get\(\) on line 57` `directive: "//workqueuedone:acept empty keys never come" is not a directive` */ //workqueuedone:acept empty keys never come
	}
	defer q.Done(key)
	return true
}
