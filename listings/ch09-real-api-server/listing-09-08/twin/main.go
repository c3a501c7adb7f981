// Listing 9-8, Go twin: a fault. kube-apiserver is killed and started again
// on the same etcd while a controller built by a real Manager runs (the
// controller of listing 9-1, in internal/priorities). The watch breaks,
// and in this restart client-go's reflector lists again (a watch-list, as
// WatchListClient is on by default), so each object the informer already
// had arrives as an update with an unchanged resource version, at low
// priority, like a resync. The output shows that it listed, not why: the
// reflector re-lists only after some watch failures, and resumes from the
// last resource version after others (chapter 9 names them). Nothing is
// lost: an object created after the restart is reconciled as usual. The
// Rust listing resumes its watch instead, so this twin has an output of
// its own.
//
// The restart is the control plane's: the listing sends SIGUSR1 to the
// supervisor that `cargo xtask cluster up` (or the suite) started, whose PID
// is in CLUSTER_SUPERVISOR_PID (`cargo xtask cluster up` prints it).
//
// Run from listings/, with a control plane up:
//
//	KUBECONFIG=../target/cluster/kubeconfig CLUSTER_SUPERVISOR_PID=<pid> go run ./ch09-real-api-server/listing-09-08/twin
package main

import (
	"context"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/priorities"
	"forget-is-not-delete/listings/internal/twin"
)

func main() {
	apiserver.Listing = "listing-09-08 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-09-08")
	apiserver.ConfigMap(ctx, cs, ns, "cm-a", "step", "initial")
	apiserver.ConfigMap(ctx, cs, ns, "cm-b", "step", "initial")

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		apiserver.Fail("manager: %v", err)
	}
	c := priorities.New(mgr)
	go func() {
		if err := mgr.Start(ctx); err != nil {
			apiserver.Fail("manager stopped: %v", err)
		}
	}()

	priorities.Header()
	// ANCHOR: phases
	first := c.First("the reconciles of the initial list", "cm-a", "cm-b")
	priorities.Row("create, in the initial list", "cm-a", first["cm-a"], true)
	priorities.Row("create, in the initial list", "cm-b", first["cm-b"], true)

	// Every reconcile from here on comes from the restart or after it.
	apiserver.RestartAPIServer()
	apiserver.ConfigMap(ctx, cs, ns, "cm-c", "step", "created")
	// The watch delivers cm-c only once it is back, after any re-list; then
	// wait until nothing is queued or running.
	since := map[string]int{}
	for {
		s := apiserver.Receive(c.Reconciles, "the reconciles after the restart")
		if _, ok := since[s.Name]; !ok {
			since[s.Name] = s.Priority
		}
		if _, ok := since["cm-c"]; ok && s.QueueEmpty {
			break
		}
	}
	for _, name := range []string{"cm-a", "cm-b"} {
		priority, reconciled := since[name]
		priorities.Row("after the restart, unchanged", name, priority, reconciled)
	}
	priorities.Row("create, after the restart", "cm-c", since["cm-c"], true)
	// ANCHOR_END: phases
}
