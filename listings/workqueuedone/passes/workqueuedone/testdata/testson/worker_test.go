package testson

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// A test that takes one item to look at it and drops the queue: true, and
// harmless; reported here because -tests is set.
func TestPeek(t *testing.T) {
	q := workqueue.NewTyped[string]()
	q.Add("a")
	if key, _ := q.Get(); key != "a" {
		t.Fatal(key)
	}
} // want `stall: q.Get\(\) on line 14 hands out key`
