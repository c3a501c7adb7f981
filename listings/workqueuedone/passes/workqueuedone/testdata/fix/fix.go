// Package fix is a worker with no Done at all; the suggested fix adds
// the one line that releases the item on every path.
package fix

import "k8s.io/client-go/util/workqueue"

func process(q workqueue.TypedRateLimitingInterface[string], sync func(string) error) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if err := sync(key); err != nil {
		q.AddRateLimited(key)
		return true // want `stall: q.Get\(\) on line 8 hands out key`
	}
	q.Forget(key)
	return true // want `forget: q.Forget\(key\) on line 16`
}
