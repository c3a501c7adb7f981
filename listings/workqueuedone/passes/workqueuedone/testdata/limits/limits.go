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
// An item stored for a worker pool to release later: the analyzer
// follows no channel, so it reports a stall that is not one.
func handedToPool(q workqueue.TypedInterface[string], pool chan<- string) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	pool <- key
	return true // want `stall: q.Get\(\) on line 58 hands out key`
}

func pool(q workqueue.TypedInterface[string], pool <-chan string) {
	for key := range pool {
		q.Done(key)
	}
}

// ANCHOR_END: stored
// Done called through reflection is not seen: reported, though released.
func reflected(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	reflect.ValueOf(q).MethodByName("Done").Call([]reflect.Value{reflect.ValueOf(key)})
	return true // want `stall: q.Get\(\) on line 75 hands out key`
}

// A Done passed on as a function value is not followed either.
func doneAsValue(q workqueue.TypedInterface[string], finish func(func(string), string)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	finish(q.Done, key)
	return true // want `stall: q.Get\(\) on line 85 hands out key`
}

// An item handed back to the caller is the caller's to release.
func next(q workqueue.TypedInterface[string]) (string, bool) {
	key, shutdown := q.Get()
	if shutdown {
		return "", false
	}
	return key, true
}
