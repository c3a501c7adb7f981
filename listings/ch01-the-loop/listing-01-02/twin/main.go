// Listing 1-2 (Go only): what queue and rate limiter a controller-runtime
// controller gets when you leave the options alone.
//
// The answer is decided inside controller.NewTypedUnmanaged, and the queue
// is only built when the controller starts. So this program builds real
// controllers, starts them with an already-cancelled context (the queue is
// built, the workers see the shutdown and exit at once), and then looks at
// what the controller holds. The controller value returned is controller-
// runtime's internal *Controller; its Queue and RateLimiter fields are
// exported, so reflection can read them without touching anything private.
//
// Run from listings/: go run ./ch01-the-loop/listing-01-02/twin
package main

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func main() {
	ctrllog.SetLogger(logr.Discard())

	fmt.Println("controller.NewTypedUnmanaged, default options (UsePriorityQueue unset):")
	queue, limiter := build("defaults", nil)
	_, isPQ := queue.(priorityqueue.PriorityQueue[string])
	fmt.Printf("  UsePriorityQueue default: %t\n", isPQ)
	fmt.Printf("  queue type:   %T\n", queue)
	describeLimiter(limiter)

	fmt.Println()
	fmt.Println("the same with UsePriorityQueue: false:")
	off := false
	queue, limiter = build("no-pq", &off)
	fmt.Printf("  queue type:   %T\n", queue)
	fmt.Printf("    wrapping:   %T\n", field(queue, "TypedRateLimitingInterface"))
	describeLimiter(limiter)
}

// build creates and starts a controller with only a reconciler (and,
// optionally, UsePriorityQueue) set, and returns the queue and rate
// limiter the controller ended up with.
func build(name string, usePQ *bool) (queue any, limiter workqueue.TypedRateLimiter[string]) {
	c, err := controller.NewTypedUnmanaged(name, controller.TypedOptions[string]{
		Reconciler: reconcile.TypedFunc[string](func(context.Context, string) (reconcile.Result, error) {
			return reconcile.Result{}, nil
		}),
		UsePriorityQueue: usePQ,
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Start(ctx); err != nil { // builds the queue, then returns: ctx is already done
		panic(err)
	}
	return field(c, "Queue"), field(c, "RateLimiter").(workqueue.TypedRateLimiter[string])
}

// describeLimiter prints the limiter's type and asks it for the delays of
// one item failing again and again, until the delay stops growing.
func describeLimiter(l workqueue.TypedRateLimiter[string]) {
	fmt.Printf("  rate limiter: %T\n", l)
	if m, ok := l.(*workqueue.TypedMaxOfRateLimiter[string]); ok {
		for _, inner := range field(m, "limiters").([]workqueue.TypedRateLimiter[string]) {
			fmt.Printf("    max of:     %T\n", inner)
		}
	}
	var delays []string
	var last time.Duration
	for n := 1; ; n++ {
		d := l.When("probe")
		if d == last {
			delays = append(delays, fmt.Sprintf("... capped at %s from failure #%d", d, n-1))
			break
		}
		if n <= 4 {
			delays = append(delays, d.String())
		}
		last = d
	}
	fmt.Println("  When() for one item failing repeatedly:")
	fmt.Printf("    %s\n", strings.Join(delays, ", "))
}

// field reads a field of a struct (or pointer to struct) by name.
func field(v any, name string) any {
	f := reflect.Indirect(reflect.ValueOf(v)).FieldByName(name)
	if !f.CanInterface() {
		// Unexported field of a client-go type: read it without writing.
		f = reflect.NewAt(f.Type(), f.Addr().UnsafePointer()).Elem()
	}
	return f.Interface()
}
