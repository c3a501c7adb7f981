// Listing 9-4, Go twin: the stall as a Prometheus server would see it. A
// real Manager serves /metrics on 127.0.0.1; its controller's reconcile of
// cm-hang never returns (controller-runtime defers Done, so a reconcile that
// hangs is how a key stays held there). Two GETs of /metrics, the second
// once the gauges have moved on, show the unfinished-work gauges growing.
//
// With SCRAPES_DIR set, the two scrapes are also written there whole, for
// `promtool check metrics` (the suite does that).
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch09-real-api-server/listing-09-04/twin
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/scrape"
	"forget-is-not-delete/listings/internal/twin"
)

func main() {
	apiserver.Listing = "listing-09-04 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-09-04")
	apiserver.ConfigMap(ctx, cs, ns, "cm-ok", "step", "0")

	// ANCHOR: manager
	address := apiserver.FreeAddress()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics: metricsserver.Options{BindAddress: address}, // plain HTTP on 127.0.0.1
	})
	// ANCHOR_END: manager
	if err != nil {
		apiserver.Fail("manager: %v", err)
	}
	reconciledOK, hanging := make(chan struct{}), make(chan struct{})
	// ANCHOR: reconciler
	err = ctrl.NewControllerManagedBy(mgr).
		For(&corev1.ConfigMap{}).
		Complete(reconcile.Func(func(
			ctx context.Context, req reconcile.Request,
		) (reconcile.Result, error) {
			if req.Name == "cm-hang" {
				close(hanging)
				<-ctx.Done() // a call without a timeout that never answers
				return reconcile.Result{}, ctx.Err()
			}
			close(reconciledOK)
			return reconcile.Result{}, nil
		}))
	// ANCHOR_END: reconciler
	if err != nil {
		apiserver.Fail("controller: %v", err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			apiserver.Fail("manager stopped: %v", err)
		}
	}()
	// cm-hang is created once cm-ok was reconciled: with one worker (the
	// default), a hang holds up every key queued behind it.
	apiserver.Receive(reconciledOK, "the reconcile of cm-ok")
	apiserver.ConfigMap(ctx, cs, ns, "cm-hang", "step", "0")
	apiserver.Receive(hanging, "the reconcile of cm-hang to start")

	// ANCHOR: scrapes
	url := "http://" + address + "/metrics"
	get := func() string { return apiserver.HTTPGet(url) }
	// The gauges are updated every 500ms; wait for the first update that
	// saw cm-hang held, then for a later one.
	const longest = "workqueue_longest_running_processor_seconds"
	first := scrape.Until(get, func(s string) bool {
		return scrape.Value(s, longest, "configmap") > 0 &&
			scrape.Value(s, "controller_runtime_reconcile_total", "configmap",
				`result="success"`) == 1
	}, "a scrape with cm-hang held and cm-ok reconciled")
	second := scrape.Until(get, func(s string) bool {
		return scrape.Value(s, longest, "configmap") >
			scrape.Value(first, longest, "configmap")
	}, "a later update of the gauges")
	// ANCHOR_END: scrapes
	save("go", first, second)
	scrape.Compare(first, second, "configmap")
}

// save writes both scrapes into SCRAPES_DIR, when it is set.
func save(side, first, second string) {
	dir := os.Getenv("SCRAPES_DIR")
	if dir == "" {
		return
	}
	for i, s := range []string{first, second} {
		path := filepath.Join(dir, fmt.Sprintf("listing-09-04-%s-%d.txt", side, i+1))
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			apiserver.Fail("writing %s: %v", path, err)
		}
	}
}
