// Package release holds helpers that another package calls: what they
// release reaches the caller as an analysis fact.
package release

import "k8s.io/client-go/util/workqueue"

// Finish releases key on every path.
func Finish(q workqueue.TypedRateLimitingInterface[string], key string, err error) { // want Finish:`releases\[1\]`
	defer q.Done(key)
	if err != nil {
		q.AddRateLimited(key)
		return
	}
	q.Forget(key)
}

// Requeue forgets to release key when there is no error.
func Requeue(q workqueue.TypedRateLimitingInterface[string], key string, err error) { // want Requeue:`sometimes\[1\]`
	if err != nil {
		q.AddRateLimited(key)
		q.Done(key)
		return
	}
}

// FinishVia releases key through an interface of the caller's choosing
// whose Done it calls: a helper's parameter is released by any Done.
func FinishVia(d interface{ Done(string) }, key string) { // want FinishVia:`releases\[1\]`
	d.Done(key)
}
