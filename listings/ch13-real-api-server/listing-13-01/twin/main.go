// Listing 13-1, Go twin: the priority each event gives a key, through a real
// Manager, real informers and controller-runtime's own event handlers.
//
// Two ConfigMaps exist before the manager starts. A controller built with
// ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}) watches them with
// EnqueueRequestForObject. The one option that is not the default is
// NewQueue: it builds the same priority queue the default builds
// (priorityqueue.New with the controller's rate limiter) and wraps it, only
// to note the priority GetWithPriority hands each key out with, which
// controller-runtime does not pass to Reconcile. The informers resync every
// 4 seconds, so that the last phase, the resync, comes after the others.
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch13-real-api-server/listing-13-01/twin
package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/twin"
)

// resync is the informers' resync period. The phases before it take well
// under a second; the listing fails if they take longer than earliestResync.
const (
	resync         = 4 * time.Second
	earliestResync = 3500 * time.Millisecond // controller-runtime jitters the period to 0.9-1.1×: never before 3.6 s
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

// seen is one reconcile: the object, the priority it was handed out with,
// and the "step" its data said when the reconciler read it from the cache.
type seen struct {
	name, step string
	priority   int
}

func main() {
	apiserver.Listing = "listing-13-01 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-13-01")

	// ANCHOR: before
	apiserver.ConfigMap(ctx, cs, ns, "cm-a", "step", "initial")
	apiserver.ConfigMap(ctx, cs, ns, "cm-b", "step", "initial")
	// ANCHOR_END: before

	syncPeriod := resync
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, SyncPeriod: &syncPeriod},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		apiserver.Fail("manager: %v", err)
	}
	reconciles := make(chan seen, 100)
	var queue *notingQueue
	// ANCHOR: controller
	err = ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		WithOptions(controller.Options{
			NewQueue: func(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
				queue = &notingQueue{
					PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
						o.RateLimiter = limiter
					}),
					last: map[reconcile.Request]int{},
				}
				return queue
			},
		}).
		Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			var cm corev1.ConfigMap
			if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
				return reconcile.Result{}, client.IgnoreNotFound(err)
			}
			queue.mu.Lock()
			priority := queue.last[req]
			queue.mu.Unlock()
			reconciles <- seen{name: req.Name, step: cm.Data["step"], priority: priority}
			return reconcile.Result{}, nil
		}))
	// ANCHOR_END: controller
	if err != nil {
		apiserver.Fail("controller: %v", err)
	}
	started := time.Now()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			apiserver.Fail("manager stopped: %v", err)
		}
	}()

	// next waits for the next reconcile of name that read step.
	next := func(name, step string) int {
		for {
			s := apiserver.Receive(reconciles, fmt.Sprintf("a reconcile of %s reading step %q", name, step))
			if s.name == name && s.step == step {
				return s.priority
			}
		}
	}
	row := func(event, name string, priority int) {
		fmt.Printf("%-40s %-6s %d\n", event, name, priority)
	}
	fmt.Printf("%-40s %-6s %s\n", "event", "object", "priority")

	// ANCHOR: phases
	// The initial list: both objects existed before the informer started.
	first := map[string]int{}
	for len(first) < 2 {
		s := apiserver.Receive(reconciles, "the reconciles of the initial list")
		if _, ok := first[s.name]; !ok {
			first[s.name] = s.priority
		}
	}
	row("create, in the initial list", "cm-a", first["cm-a"])
	row("create, in the initial list", "cm-b", first["cm-b"])

	apiserver.ConfigMap(ctx, cs, ns, "cm-c", "step", "created")
	row("create, after the start", "cm-c", next("cm-c", "created"))

	apiserver.SetData(ctx, cs, ns, "cm-a", "step", "changed")
	row("update, resource version changed", "cm-a", next("cm-a", "changed"))
	if time.Since(started) > earliestResync {
		apiserver.Fail("the phases before the resync took %s, longer than %s: a resync may have mixed in", time.Since(started).Round(time.Second), earliestResync)
	}

	// The resync: every object again, as an update whose old and new
	// resource versions are the same.
	resynced := map[string]int{}
	for len(resynced) < 3 {
		s := apiserver.Receive(reconciles, "the reconciles of the first resync")
		if _, ok := resynced[s.name]; !ok {
			resynced[s.name] = s.priority
		}
	}
	for _, name := range []string{"cm-a", "cm-b", "cm-c"} {
		row("update, resync (same resource version)", name, resynced[name])
	}
	// ANCHOR_END: phases
}
