// Package nopanic is checked with -panic=false: a Done by hand on every
// path is not reported, and a missing one still is.
package nopanic

import "k8s.io/client-go/util/workqueue"

func process(q workqueue.TypedInterface[string], sync func(string) error) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if err := sync(key); err != nil {
		q.Done(key)
		return true
	}
	if key == "skip" {
		return true // want `stall: q.Get\(\) on line 8 hands out key`
	}
	q.Done(key)
	return true
}
