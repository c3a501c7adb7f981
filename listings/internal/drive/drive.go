// Package drive runs a real controller-runtime controller with no API
// server: its events come from a channel source, it runs in the background,
// and a twin stops it when it has seen what it came for.
//
// It holds no listing's logic: the controller, its options and its
// reconciler are built by the twin.
package drive

import (
	"context"
	"fmt"
	"os"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Timeout is how long Wait waits before it gives up.
const Timeout = 10 * time.Second

// Keys makes c see one event for each key, in order, through a channel
// source whose handler turns every event into a plain Add of its key (the
// default priority, no rate limiting, no delay).
func Keys(c controller.TypedController[string], keys ...string) error {
	events := make(chan event.TypedGenericEvent[string], len(keys))
	for _, key := range keys {
		events <- event.TypedGenericEvent[string]{Object: key}
	}
	return c.Watch(source.TypedChannel(events, handler.TypedFuncs[string, string]{
		GenericFunc: func(_ context.Context, e event.TypedGenericEvent[string], q workqueue.TypedRateLimitingInterface[string]) {
			q.Add(e.Object)
		},
	}))
}

// Start starts c in the background. The returned stop cancels its context,
// waits for Start to return (the workers have stopped by then) and panics if
// Start returned an error.
func Start(c controller.TypedController[string]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Start(ctx) }()
	return func() {
		cancel()
		if err := <-stopped; err != nil {
			panic(err)
		}
	}
}

// Wait waits for done to be closed. If that takes longer than Timeout, it
// prints complaint on stderr and exits with status 1.
func Wait(done <-chan struct{}, complaint string) {
	select {
	case <-done:
	case <-time.After(Timeout):
		fmt.Fprintln(os.Stderr, complaint)
		os.Exit(1)
	}
}
