package testsoff

import (
	"testing"

	"k8s.io/client-go/util/workqueue"
)

// A test that takes one item to look at it and drops the queue: true, and
// harmless, so not reported by default.
func TestPeek(t *testing.T) {
	q := workqueue.NewTyped[string]()
	q.Add("a")
	if key, _ := q.Get(); key != "a" {
		t.Fatal(key)
	}
}
