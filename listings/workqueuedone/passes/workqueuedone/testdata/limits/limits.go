// Package limits holds the shapes the analyzer cannot see through, each
// with what it does about it: a report it should not make (its want
// comment holds the test to it) or a stall it misses (no want comment).
package limits

import (
	"reflect"

	"k8s.io/client-go/util/workqueue"
)

// ANCHOR: own-interface
// A queue behind an interface of your own: its Get and Done are yours,
// not client-go's, so the analyzer does not know it is a queue. Missed.
type keyQueue interface {
	Get() (string, bool)
	Done(string)
}

func ownInterface(q keyQueue) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	return key != "" // a stall the analyzer cannot see
}

// ANCHOR_END: own-interface
// An interface of your own that embeds client-go's: the methods are still
// client-go's, so it is a queue.
type wrapped interface {
	workqueue.TypedInterface[string]
	Name() string
}

func embedded(q wrapped) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	return key != "" // want `stall: q.Get\(\) on line 37 hands out key`
}

// A type with Get and no Done is not a queue, whatever its package.
type cache struct{}

func (cache) Get() (string, bool) { return "", false }

func notAQueue(c cache) bool {
	key, _ := c.Get()
	return key != ""
}

// ANCHOR: stored
// An item stored in a map for a flush elsewhere: the analyzer does not
// follow a map's readers, so it trusts the store and says nothing
// (-strict reports it), even when no reader ever calls Done. Missed.
type batch struct {
	q       workqueue.TypedInterface[string]
	pending map[string][]string
}

func (b *batch) collect() bool {
	key, shutdown := b.q.Get()
	if shutdown {
		return false
	}
	b.pending["all"] = append(b.pending["all"], key)
	return true
}

func (b *batch) flush() {
	delete(b.pending, "all") // a stall the analyzer cannot see: no Done
}

// A helper that keeps the item in a map for its own reasons looks like
// a hand-off, and hides a stall in its caller. Missed.
type recorder struct {
	q    workqueue.TypedInterface[string]
	seen map[string]string
}

func (r *recorder) note(key string) { // want note:`storesParam\[0\]`
	r.seen["last"] = key
}

func (r *recorder) process() bool {
	key, shutdown := r.q.Get()
	if shutdown {
		return false
	}
	r.note(key)
	return true // a stall the analyzer cannot see
}

// ANCHOR_END: stored
// Done called through reflection is not seen: reported, though released.
func reflected(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	reflect.ValueOf(q).MethodByName("Done").Call([]reflect.Value{reflect.ValueOf(key)})
	return true // want `stall: q.Get\(\) on line 99 hands out key`
}

// A queue held in a struct's field and Done through a different path to
// the same queue: the analyzer compares queue expressions as written.
type holder struct {
	q workqueue.TypedInterface[string]
}

type controller struct {
	h     holder
	queue workqueue.TypedInterface[string]
}

func differentPath(c *controller) bool {
	c.queue = c.h.q
	key, shutdown := c.h.q.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	return key != "" // want `stall: c.h.q.Get\(\) on line 120 hands out key`
}

// Which iterations of a loop run is not known, so a Done on one of them
// only may be skipped, and the path that skips it is reported, though
// the loop always reaches it.
func onOneIteration(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	for i := range 2 {
		if i == 1 {
			q.Done(key)
		}
	}
} // want `stall: q.Get\(\) on line 132 hands out key`

// Done on the key by value, not on the item: the analyzer does not know
// the two strings are equal. Reported, though released.
func byValue(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	if key == "a" {
		q.Done("a")
		return // want `stall: q.Get\(\) on line 146 hands out key, and the path where key == "a" \(line 150\) is true returns here`
	}
	q.Done(key)
}

// Done through an interface of one's own that the queue satisfies: not
// a queue's Done to the analyzer. Reported, though released.
type finisher interface{ Done(string) }

func ownFinisher(q workqueue.TypedInterface[string]) {
	key, shutdown := q.Get()
	if shutdown {
		return
	}
	var f finisher = q
	f.Done(key)
} // want `stall: q.Get\(\) on line 162 hands out key`
