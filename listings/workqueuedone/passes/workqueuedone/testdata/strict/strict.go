// Package strict is checked with -strict: an item handed off to an end
// the analyzer cannot see is reported where it leaves.
package strict

import "k8s.io/client-go/util/workqueue"

func toPool(q workqueue.TypedInterface[string], pool chan<- string) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	pool <- key // want `stall: q.Get\(\) on line 8 hands out key, and it is sent on pool here; the other end is a channel passed in as a parameter, where no Done can be checked \(-strict\)`
	return true
}

type store struct {
	q       workqueue.TypedInterface[string]
	pending map[string]string
}

func (s *store) process() bool {
	key, shutdown := s.q.Get()
	if shutdown {
		return false
	}
	s.pending[key] = key // want `stall: s.q.Get\(\) on line 22 hands out key, and it is stored in s.pending\[key\] here`
	return true
}

type event struct {
	Key  string
	Done func()
}

func toEvents(q workqueue.TypedInterface[string], emit func(event)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	emit(event{Key: key, Done: func() { q.Done(key) }}) // want `stall: q.Get\(\) on line 36 hands out key, and it is captured by a function literal`
	return true
}

// A channel received in this package is followed as without -strict.
type dispatcher struct {
	q  workqueue.TypedInterface[string]
	ch chan string
}

func (d *dispatcher) dispatch() {
	key, shutdown := d.q.Get()
	if shutdown {
		return
	}
	d.ch <- key
}

func (d *dispatcher) work() {
	for key := range d.ch {
		d.q.Done(key)
	}
}

// Kept in a slice, or in a field.
type collector struct {
	q       workqueue.TypedInterface[string]
	batch   []string
	current string
}

func (c *collector) intoSlice() bool {
	key, shutdown := c.q.Get()
	if shutdown {
		return false
	}
	c.batch = append(c.batch, key) // want `stall: c.q.Get\(\) on line 72 hands out key, and it is stored in c.batch here`
	return true
}

func (c *collector) intoField() bool {
	key, shutdown := c.q.Get()
	if shutdown {
		return false
	}
	c.current = key // want `stall: c.q.Get\(\) on line 81 hands out key, and it is stored in c.current here`
	return true
}
