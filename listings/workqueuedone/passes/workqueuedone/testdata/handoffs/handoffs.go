// Package handoffs holds items that leave the function in someone else's
// hands. A channel whose receivers are all in the package is followed to
// them; an end the analyzer cannot see (a map, a slice, a field, a
// closure, a channel received elsewhere) is trusted, quietly, unless
// -strict is set (package strict runs the same shapes with it).
package handoffs

import "k8s.io/client-go/util/workqueue"

func sync(string) error { return nil }

// ANCHOR: channel
// Taint eviction's shape: a dispatcher sends each item to a worker, and
// the worker calls Done.
type dispatcher struct {
	q       workqueue.TypedInterface[string]
	workers []chan string
	stop    chan struct{}
}

func (d *dispatcher) dispatch() {
	for {
		key, shutdown := d.q.Get()
		if shutdown {
			return
		}
		select {
		case <-d.stop:
			d.q.Done(key)
			return
		case d.workers[len(key)%len(d.workers)] <- key:
		}
	}
}

func (d *dispatcher) work(i int) {
	for {
		select {
		case <-d.stop:
			return
		case key := <-d.workers[i]:
			_ = sync(key)
			d.q.Done(key) // want `panic: d.q.Done\(key\) is not deferred`
		}
	}
}

// The same, with a worker that skips Done on an error: reported at the
// receive.
type leakyDispatcher struct {
	q       workqueue.TypedInterface[string]
	workers chan string
}

func (d *leakyDispatcher) dispatch() {
	for {
		key, shutdown := d.q.Get()
		if shutdown {
			return
		}
		d.workers <- key
	}
}

func (d *leakyDispatcher) work() {
	for key := range d.workers { // want `stall: this receive takes key`
		if sync(key) != nil {
			continue
		}
		d.q.Done(key)
	}
}

// ANCHOR_END: channel
// A receiver that drops what it receives.
type drain struct {
	q  workqueue.TypedInterface[string]
	ch chan string
}

func (d *drain) dispatch() {
	key, shutdown := d.q.Get()
	if shutdown {
		return
	}
	d.ch <- key
}

func (d *drain) stop() {
	<-d.ch // want `stall: this receive takes key, which d.q.Get\(\) on line 82 handed out and line 86 sent on d.ch, and drops it`
}

// A channel received from in another function, passed in: the other end
// cannot be seen. Quiet (reported under -strict).
func toPool(q workqueue.TypedInterface[string], pool chan<- string) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	pool <- key
	return true
}

// Stored in a map for a flush elsewhere (pvcprotection's shape), through a
// method that stores its parameter.
type store struct {
	q       workqueue.TypedInterface[string]
	pending map[string][]string
}

func (s *store) add(ns, key string) { // want add:`storesParam\[1\]`
	s.pending[ns] = append(s.pending[ns], key)
}

func (s *store) process() bool {
	key, shutdown := s.q.Get()
	if shutdown {
		return false
	}
	s.add("default", key)
	return true
}

func (s *store) flush(ns string) {
	for _, key := range s.pending[ns] {
		s.q.Done(key)
	}
	delete(s.pending, ns)
}

// An event whose Done callback its consumer calls (a resource layer's
// shape): the closure is the other end.
type event struct {
	Key  string
	Done func()
}

func toEvents(q workqueue.TypedInterface[string], emit func(event)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	emit(event{Key: key, Done: func() { q.Done(key) }})
	return true
}

// q.Done passed on as a value, with the item.
func doneAsValue(q workqueue.TypedInterface[string], finish func(func(string), string)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	finish(q.Done, key)
	return true
}

// A hand-off on one path does not excuse another path.
func (d *leakyDispatcher) handOffOrDrop() bool {
	key, shutdown := d.q.Get()
	if shutdown {
		return false
	}
	if key == "" {
		return false // want `stall: d.q.Get\(\) on line 159 hands out key, and the path where key == "" \(line 163\) is true returns here without d.q.Done\(key\)`
	}
	d.workers <- key
	return true
}

// Kept in a slice, or in a field, for someone else to finish: an end the
// analyzer cannot see. Quiet (reported under -strict).
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
	c.batch = append(c.batch, key)
	return true
}

func (c *collector) intoField() bool {
	key, shutdown := c.q.Get()
	if shutdown {
		return false
	}
	c.current = key
	return true
}
