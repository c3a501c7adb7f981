// Package nolint holds a stall that a team has accepted with golangci-lint's
// //nolint, and one it has not. golangci-lint with the workqueuedone plugin
// reports only the second; the analyzer itself, through go vet or the
// standalone command, reports both, because //nolint is golangci-lint's
// directive, not the analyzer's (//workqueuedone:accept is seen by all).
// The analysistest tests do not load it: cargo xtask golangci-lint runs
// both tools over it and checks what each reports.
package nolint

import "k8s.io/client-go/util/workqueue"

func sync(string) error { return nil }

// ANCHOR: nolint
// Accepted with a reason: the process exits when this returns false.
func accepted(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if sync(key) != nil {
		return false //nolint:workqueuedone // the caller exits on false
	}
	q.Done(key)
	return true
}

// ANCHOR_END: nolint
// Not accepted: every tool reports it.
func dropped(q workqueue.TypedInterface[string]) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	if sync(key) != nil {
		return false
	}
	q.Done(key)
	return true
}
