// Package panics holds what can and cannot panic between Get and Done, as
// the panic: kind reads it: only something that can panic is a reason to
// defer.
package panics

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
)

// A mutex's Lock and Unlock, a map read and a delete cannot panic (an
// unlock of an unlocked mutex is a fatal error no recover sees): no reason
// to defer. The PVC protection store's shape.
type store struct {
	mu      sync.Mutex
	pending map[string][]string
}

func (s *store) take(q workqueue.TypedInterface[string]) []string {
	ns, shutdown := q.Get()
	if shutdown {
		return nil
	}
	s.mu.Lock()
	keys := s.pending[ns]
	delete(s.pending, ns)
	s.mu.Unlock()
	q.Done(ns)
	return keys
}

// The queue's own methods between Get and Done cannot panic either.
func requeue(q workqueue.TypedRateLimitingInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	q.AddRateLimited(key)
	q.Done(key)
}

// A slice converted to an array panics when the slice is too short.
func toArray(q workqueue.TypedInterface[string], b []byte) [4]byte {
	key, shutdown := q.Get()
	if shutdown {
		return [4]byte{}
	}
	a := [4]byte(b)
	q.Done(key) // want `panic: q.Done\(key\) is not deferred: a panic between q.Get\(\) on line 45`
	return a
}
