// Package precise holds the panic: kind's edges and what messages quote:
// a builtin that cannot panic or a conversion between Get and Done is no
// reason to defer; a Done in a loop gets advice that does not stall.
package precise

import "k8s.io/client-go/util/workqueue"

func sync(string) error { return nil }

func onlyLen(q workqueue.TypedInterface[string]) int {
	key, shutdown := q.Get()
	if shutdown {
		return 0
	}
	n := len(key) + len([]byte(key))
	q.Done(key)
	return n
}

func aCall(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	err := sync(key)
	q.Done(key) // want `panic: q.Done\(key\) is not deferred: a panic between q.Get\(\) on line 21 and here leaves key never Done; defer it after the shutdown check`
	return err == nil
}

// In a loop a defer would wait for the return: the advice says so.
func inLoop(q workqueue.TypedInterface[string]) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		_ = sync(key)
		q.Done(key) // want `panic: q.Done\(key\) is not deferred: .* move the work after Get into a function that defers it`
	}
}

// The message quotes the Done as the line writes it.
func asWritten(q workqueue.Interface) bool { //nolint:staticcheck // the untyped queue
	obj, shutdown := q.Get()
	if shutdown {
		return false
	}
	key := obj.(string)
	err := sync(key)
	q.Done(key) // want `panic: q.Done\(key\) is not deferred: a panic between q.Get\(\) on line 44 and here leaves obj never Done`
	return err == nil
}

// Two paths that leak: each is reported where it goes back to Get, named
// by the branch it took.
func twoPaths(q workqueue.TypedInterface[string], a, b bool) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		if a {
			_ = sync(key) // want `stall: q.Get\(\) on line 58 hands out key, and on the path where a \(line 62\) is true, the loop goes back to Get here`
		} else if b {
			_ = sync(key + "/") // want `stall: q.Get\(\) on line 58 hands out key, and on the path where b \(line 64\) is true, the loop goes back to Get here`
		} else {
			q.Done(key)
		}
	}
}
