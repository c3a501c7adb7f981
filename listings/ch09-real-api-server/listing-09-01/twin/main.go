// Listing 9-1, Go twin: the priority each event gives a key, through a real
// Manager, real informers and controller-runtime's own event handlers.
//
// Two ConfigMaps exist before the manager starts. A controller built with
// ctrl.NewControllerManagedBy(mgr).For(&corev1.ConfigMap{}) watches them with
// EnqueueRequestForObject (internal/priorities). The one option that is not
// the default is NewQueue: it builds the same priority queue the default
// builds (priorityqueue.New with the controller's rate limiter) and wraps it,
// only to note the priority GetWithPriority hands each key out with, which
// controller-runtime does not pass to Reconcile. The informers resync every
// 4 seconds, so that the last phase, the resync, comes after the others.
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch09-real-api-server/listing-09-01/twin
package main

import (
	"context"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/priorities"
	"forget-is-not-delete/listings/internal/twin"
)

// resync is the informers' resync period. The phases before it take well
// under a second; the listing fails if they take longer than earliestResync.
const (
	resync         = 4 * time.Second
	earliestResync = 3500 * time.Millisecond // controller-runtime jitters the period to 0.9-1.1×: never before 3.6 s
)

func main() {
	apiserver.Listing = "listing-09-01 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-09-01")
	apiserver.ConfigMap(ctx, cs, ns, "cm-a", "step", "initial")
	apiserver.ConfigMap(ctx, cs, ns, "cm-b", "step", "initial")

	// ANCHOR: manager
	syncPeriod := resync
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}, SyncPeriod: &syncPeriod},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	// ANCHOR_END: manager
	if err != nil {
		apiserver.Fail("manager: %v", err)
	}
	c := priorities.New(mgr)
	started := time.Now()
	go func() {
		if err := mgr.Start(ctx); err != nil {
			apiserver.Fail("manager stopped: %v", err)
		}
	}()

	priorities.Header()
	// ANCHOR: phases
	// The initial list: both objects existed before the informer started.
	first := c.First("the reconciles of the initial list", "cm-a", "cm-b")
	priorities.Row("create, in the initial list", "cm-a", first["cm-a"], true)
	priorities.Row("create, in the initial list", "cm-b", first["cm-b"], true)

	apiserver.ConfigMap(ctx, cs, ns, "cm-c", "step", "created")
	priorities.Row("create, after the start",
		"cm-c", c.Next("cm-c", "created"), true)

	apiserver.SetData(ctx, cs, ns, "cm-a", "step", "changed")
	priorities.Row("update, resource version changed",
		"cm-a", c.Next("cm-a", "changed"), true)
	if time.Since(started) > earliestResync {
		apiserver.Fail("the phases before the resync took %s, longer than %s: "+
			"a resync may have mixed in",
			time.Since(started).Round(time.Second), earliestResync)
	}

	// The resync: every object again, as an update whose old and new
	// resource versions are the same.
	resynced := c.First("the reconciles of the first resync",
		"cm-a", "cm-b", "cm-c")
	for _, name := range []string{"cm-a", "cm-b", "cm-c"} {
		priorities.Row("update, resync (same resource version)",
			name, resynced[name], true)
	}
	// ANCHOR_END: phases
}
