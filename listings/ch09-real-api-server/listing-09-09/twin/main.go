// Listing 9-9, Go twin: the depth metric's cardinality cap. A real
// Manager's controller, with default options (so the priority queue), is fed
// by an event handler of its own: each ConfigMap created is enqueued at the
// priority its "priority" label names. While the only worker is held by the
// reconcile of cm-gate (priority 0), thirty more objects are created with
// priorities 1 to 30, one more distinct priority than the 25 the depth
// metric gives series of their own. Three GETs of the Manager's /metrics
// (with thirty objects queued, after the queue drained, and with one more
// object queued behind a second gate) show workqueue_depth by priority.
//
// With SCRAPES_DIR set, the three scrapes are also written there whole, for
// `promtool check metrics` (the suite does that).
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch09-real-api-server/listing-09-09/twin
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/scrape"
	"forget-is-not-delete/listings/internal/twin"
)

// objects is how many objects queue up behind the gate, at priorities 1 to
// objects. With the gate's 0, that is objects+1 distinct priorities.
const objects = 30

func main() {
	apiserver.Listing = "listing-09-09 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-09-09")

	address := apiserver.FreeAddress()
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Cache:   cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Metrics: metricsserver.Options{BindAddress: address}, // plain HTTP on 127.0.0.1
	})
	if err != nil {
		apiserver.Fail("manager: %v", err)
	}
	held, release := make(chan string, 2), make(chan struct{}, 2)
	reconciled := make(chan string, 2*objects)
	// ANCHOR: handler
	// Each object created is enqueued at the priority its label names.
	enqueueAtLabel := handler.Funcs{
		CreateFunc: func(
			_ context.Context, e event.CreateEvent,
			q workqueue.TypedRateLimitingInterface[reconcile.Request],
		) {
			priority, err := strconv.Atoi(e.Object.GetLabels()["priority"])
			if err != nil {
				return
			}
			key := client.ObjectKeyFromObject(e.Object)
			pq := q.(priorityqueue.PriorityQueue[reconcile.Request])
			pq.AddWithOpts(priorityqueue.AddOpts{Priority: &priority},
				reconcile.Request{NamespacedName: key})
		},
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named("configmap").
		Watches(&corev1.ConfigMap{}, enqueueAtLabel).
		Complete(reconcile.Func(func(
			ctx context.Context, req reconcile.Request,
		) (reconcile.Result, error) {
			if strings.HasPrefix(req.Name, "cm-gate") {
				held <- req.Name
				<-release // the only worker waits here until main lets it go
			}
			reconciled <- req.Name
			return reconcile.Result{}, nil
		}))
	// ANCHOR_END: handler
	if err != nil {
		apiserver.Fail("controller: %v", err)
	}
	go func() {
		if err := mgr.Start(ctx); err != nil {
			apiserver.Fail("manager stopped: %v", err)
		}
	}()

	url := "http://" + address + "/metrics"
	get := func() string { return apiserver.HTTPGet(url) }
	depth := func(s string) float64 { return scrape.Value(s, "workqueue_depth", "configmap") }
	// ANCHOR: phases
	// The gate takes the only worker; then thirty objects queue up behind it.
	apiserver.LabeledConfigMap(ctx, cs, ns, "cm-gate", "priority", "0")
	apiserver.Receive(held, "the reconcile of cm-gate to start")
	for p := 1; p <= objects; p++ {
		apiserver.LabeledConfigMap(ctx, cs, ns, fmt.Sprintf("cm-%02d", p), "priority", strconv.Itoa(p))
	}
	queued := scrape.Until(get, func(s string) bool { return depth(s) == objects },
		"all 30 objects queued behind cm-gate")

	// Release the gate; every object is reconciled and the queue is empty.
	release <- struct{}{}
	done := map[string]bool{}
	for len(done) < objects+1 {
		done[apiserver.Receive(reconciled, "the reconciles of cm-gate and the 30 objects")] = true
	}
	drained := scrape.Until(get, func(s string) bool { return depth(s) == 0 }, "an empty queue")

	// A second gate, and one more object at priority 1, which has a series.
	apiserver.LabeledConfigMap(ctx, cs, ns, "cm-gate-2", "priority", "0")
	apiserver.Receive(held, "the reconcile of cm-gate-2 to start")
	apiserver.LabeledConfigMap(ctx, cs, ns, "cm-late", "priority", "1")
	again := scrape.Until(get, func(s string) bool { return depth(s) == 1 }, "cm-late queued behind cm-gate-2")
	// ANCHOR_END: phases
	release <- struct{}{}
	for apiserver.Receive(reconciled, "the reconcile of cm-late") != "cm-late" {
	}
	save("go", queued, drained, again)
	printDepth(queued, drained, again)
}

// printDepth writes workqueue_depth by priority label for the three scrapes:
// numeric priorities ascending, then any other label value.
func printDepth(scrapes ...string) {
	series := make([]map[string]float64, len(scrapes))
	labels := map[string]bool{}
	for i, s := range scrapes {
		series[i] = scrape.ByLabel(s, "workqueue_depth", "configmap", "priority")
		for l := range series[i] {
			labels[l] = true
		}
	}
	order := make([]string, 0, len(labels))
	for l := range labels {
		order = append(order, l)
	}
	sort.Slice(order, func(i, j int) bool {
		a, errA := strconv.Atoi(order[i])
		b, errB := strconv.Atoi(order[j])
		switch {
		case errA == nil && errB == nil:
			return a < b
		case (errA == nil) != (errB == nil):
			return errA == nil
		default:
			return order[i] < order[j]
		}
	})
	fmt.Println(`workqueue_depth{controller="configmap"} by priority label,`)
	fmt.Println("from three GETs of /metrics:")
	fmt.Println("  queued:  cm-gate (priority 0) in its reconcile,")
	fmt.Println("           cm-01..cm-30 (priorities 1..30) queued behind it")
	fmt.Println("  drained: all 31 reconciled, the queue empty")
	fmt.Println("  again:   cm-gate-2 (priority 0) in its reconcile,")
	fmt.Println("           cm-late (priority 1) queued behind it")
	fmt.Printf("%-28s %8s %8s %8s\n", "priority", "queued", "drained", "again")
	sums := make([]float64, len(scrapes))
	for _, l := range order {
		fmt.Printf("%-28s", l)
		for i := range scrapes {
			sums[i] += series[i][l]
			fmt.Printf(" %8g", series[i][l])
		}
		fmt.Println()
	}
	fmt.Printf("%-28s", "sum (the queue's length)")
	for _, sum := range sums {
		fmt.Printf(" %8g", sum)
	}
	fmt.Println()
	fmt.Printf("distinct priority label values: %d\n", len(order))
}

// save writes the scrapes into SCRAPES_DIR, when it is set.
func save(side string, scrapes ...string) {
	dir := os.Getenv("SCRAPES_DIR")
	if dir == "" {
		return
	}
	for i, s := range scrapes {
		path := filepath.Join(dir, fmt.Sprintf("listing-09-09-%s-%d.txt", side, i+1))
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			apiserver.Fail("writing %s: %v", path, err)
		}
	}
}
