// Package wrapperlib is a wrapper in a package of its own: what it hands
// out and what releases it reach the packages that import it as facts.
package wrapperlib

import "k8s.io/client-go/util/workqueue"

// Queue wraps client-go's queue, as some code bases do to add metrics.
type Queue struct {
	inner workqueue.TypedRateLimitingInterface[string]
}

// Get returns what the inner queue hands out.
func (q *Queue) Get() (string, bool) { // want Get:`handsOut\[0\] shutdown\[1\]`
	return q.inner.Get()
}

// Done finishes key on the inner queue.
func (q *Queue) Done(key string) { // want Done:`releases\[0\]`
	q.inner.Done(key)
}
