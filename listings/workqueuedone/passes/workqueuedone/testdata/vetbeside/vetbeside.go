// Package vetbeside holds one mistake for go vet's own printf check and one
// stall for workqueuedone, so that a test can show a single
// go vet -vettool=vet-workqueuedone step reporting both. The analysistest
// tests do not load it.
package vetbeside

import (
	"fmt"

	"k8s.io/client-go/util/workqueue"
)

// process logs with a format whose verb does not match its argument (go
// vet's printf check) and forgets the Done (workqueuedone).
func process(q workqueue.TypedRateLimitingInterface[string]) bool {
	key, quit := q.Get()
	if quit {
		return false
	}
	fmt.Printf("processing %d\n", key)
	q.Forget(key)
	return true
}
