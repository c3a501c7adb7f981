// Package priorities is the controller of listings 9-1 and 9-8: a real
// Manager's controller for ConfigMaps, with the default priority queue, whose
// reconciler reports each reconcile with the priority its key was handed out
// with (controller-runtime does not pass it to Reconcile), the "step" the
// object's data said, and whether the controller is idle.
package priorities

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/apiserver"
)

// ANCHOR: queue
// notingQueue is the default priority queue, with a note of the priority
// each key was last handed out with.
type notingQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	mu   sync.Mutex
	last map[reconcile.Request]int
}

func (q *notingQueue) GetWithPriority() (reconcile.Request, int, bool) {
	req, priority, shutdown := q.PriorityQueue.GetWithPriority()
	q.mu.Lock()
	q.last[req] = priority
	q.mu.Unlock()
	return req, priority, shutdown
}

// ANCHOR_END: queue

// Seen is one reconcile: the object, the priority it was handed out with,
// the "step" its data said when the reconciler read it from the cache, and
// whether the queue was empty meanwhile. With one worker (the default), an
// empty queue while a reconcile runs means nothing is left once it ends.
type Seen struct {
	Name, Step string
	Priority   int
	QueueEmpty bool
}

// Controller reports the reconciles of a running controller.
type Controller struct {
	Reconciles chan Seen
	queue      *notingQueue
}

// New builds the controller on mgr; mgr.Start starts it.
func New(mgr ctrl.Manager) *Controller {
	c := &Controller{Reconciles: make(chan Seen, 100)}
	// ANCHOR: controller
	err := ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{
			NewQueue: func(
				name string, limiter workqueue.TypedRateLimiter[reconcile.Request],
			) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				c.queue = &notingQueue{
					PriorityQueue: priorityqueue.New(name, func(
						o *priorityqueue.Opts[reconcile.Request],
					) {
						o.RateLimiter = limiter
					}),
					last: map[reconcile.Request]int{},
				}
				return c.queue
			},
		}).
		Complete(reconcile.Func(func(
			ctx context.Context, req reconcile.Request,
		) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm)
			c.queue.mu.Lock()
			priority := c.queue.last[req]
			c.queue.mu.Unlock()
			if err == nil {
				c.Reconciles <- Seen{
					Name: req.Name, Step: cm.Data["step"],
					Priority: priority, QueueEmpty: c.queue.Len() == 0,
				}
			}
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}))
	// ANCHOR_END: controller
	if err != nil {
		apiserver.Fail("controller: %v", err)
	}
	return c
}

// Next waits for the next reconcile of name that read step, and returns its
// priority.
func (c *Controller) Next(name, step string) int {
	for {
		s := apiserver.Receive(c.Reconciles, fmt.Sprintf("a reconcile of %s reading step %q", name, step))
		if s.Name == name && s.Step == step {
			return s.Priority
		}
	}
}

// First collects reconciles until each of names has had one, and returns
// the priority of the first of each.
func (c *Controller) First(what string, names ...string) map[string]int {
	first := map[string]int{}
	for len(first) < len(names) {
		s := apiserver.Receive(c.Reconciles, what)
		if _, ok := first[s.Name]; !ok {
			first[s.Name] = s.Priority
		}
	}
	return first
}

// Row prints one row of the listings' table, or "not reconciled" in place
// of a priority when reconciled is false.
func Row(event, name string, priority int, reconciled bool) {
	if reconciled {
		fmt.Printf("%-40s %-6s %d\n", event, name, priority)
	} else {
		fmt.Printf("%-40s %-6s %s\n", event, name, "not reconciled")
	}
}

// Header prints the table's header.
func Header() {
	fmt.Printf("%-40s %-6s %s\n", "event", "object", "priority")
}
