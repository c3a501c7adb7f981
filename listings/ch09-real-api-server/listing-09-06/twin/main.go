// Listing 9-6, Go twin only: leader election. Two real Managers in one
// process share one Lease (LeaderElection, one LeaderElectionID, the
// listing's namespace, LeaderElectionReleaseOnCancel); each runs a
// controller that notes which objects its manager reconciled, and an
// informer handler that notes which objects its cache has seen.
//
// manager-1 starts first and is elected; manager-2 starts once it is, so
// the order is forced. Objects created while manager-1 leads reach both
// caches but only manager-1 reconciles them. Then manager-1's context is
// cancelled while two more objects are created: it stops its controller,
// releases the Lease, and manager-2 is elected well before the Lease could
// have expired. manager-2 then reconciles every object, those created
// before, during and after the handover.
//
// The listing prints only what the design forces: never timings, never
// the holder's identity (a host name and a UUID), and not whether
// manager-1 still reconciled the objects created while it was stopping
// (it may or may not).
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch09-real-api-server/listing-09-06/twin
package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/twin"
)

const leaseName = "listing-09-06"

// leaseDuration is controller-runtime's default, spelled out because the
// listing checks that the handover is quicker than it.
var leaseDuration, renewDeadline, retryPeriod = 15 * time.Second, 10 * time.Second, 500 * time.Millisecond

// member is one manager, with what its controller reconciled and what its
// cache has seen.
type member struct {
	name    string
	mgr     manager.Manager
	cancel  context.CancelFunc
	stopped chan error

	mu               sync.Mutex
	reconciled, seen map[string]bool
}

// changed is signalled on every reconcile and every informer event.
var changed = make(chan struct{}, 1)

func signal() {
	select {
	case changed <- struct{}{}:
	default:
	}
}

func main() {
	apiserver.Listing = "listing-09-06 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := apiserver.Config()
	cs := apiserver.Clientset(cfg)
	ns := apiserver.Namespace(ctx, cs, "listing-09-06")

	// ANCHOR: manager
	newMember := func(name string) *member {
		only := map[string]cache.Config{ns: {}} // this run's namespace
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{
			Cache:          cache.Options{DefaultNamespaces: only},
			Metrics:        metricsserver.Options{BindAddress: "0"},
			LeaderElection: true,
			// The Lease both managers compete for.
			LeaderElectionID:              leaseName,
			LeaderElectionNamespace:       ns,
			LeaderElectionReleaseOnCancel: true,
			LeaseDuration:                 &leaseDuration,
			RenewDeadline:                 &renewDeadline,
			RetryPeriod:                   &retryPeriod, // the default is 2s
		})
		if err != nil {
			apiserver.Fail("%s: %v", name, err)
		}
		m := &member{
			name: name, mgr: mgr,
			reconciled: map[string]bool{}, seen: map[string]bool{},
		}
		err = ctrl.NewControllerManagedBy(mgr).
			For(&corev1.ConfigMap{}).
			Named("configmap-" + name). // controller names are unique per process
			Complete(reconcile.Func(func(
				ctx context.Context, req reconcile.Request,
			) (reconcile.Result, error) {
				m.note(m.reconciled, req.Name)
				return reconcile.Result{}, nil
			}))
		if err != nil {
			apiserver.Fail("%s: controller: %v", name, err)
		}
		return m
	}
	// ANCHOR_END: manager

	// ANCHOR: phases
	apiserver.ConfigMap(ctx, cs, ns, "cm-1", "step", "0")
	apiserver.ConfigMap(ctx, cs, ns, "cm-2", "step", "0")
	m1, m2 := newMember("manager-1"), newMember("manager-2")
	m1.start(ctx)
	apiserver.Receive(m1.mgr.Elected(), "manager-1 to be elected")
	m2.start(ctx) // it waits for the Lease
	m2.watch(ctx)
	fmt.Println("manager-1 leads; manager-2 runs and waits for the Lease")
	holder := lease(ctx, cs, ns)

	apiserver.ConfigMap(ctx, cs, ns, "cm-3", "step", "0")
	apiserver.ConfigMap(ctx, cs, ns, "cm-4", "step", "0")
	first := names(1, 4)
	apiserver.Until(changed, func() bool {
		return m1.has(m1.reconciled, first) && m2.has(m2.seen, first)
	}, "manager-1 to reconcile cm-1..cm-4 and manager-2's cache to see them")
	fmt.Println("cm-1, cm-2 created before the start, " +
		"cm-3, cm-4 while manager-1 leads:")
	row("manager-1 reconciled", m1.list(m1.reconciled, first))
	row("manager-2's cache has", m2.list(m2.seen, first))
	row("manager-2 reconciled", m2.list(m2.reconciled, first))

	handover := time.Now()
	m1.cancel()
	apiserver.ConfigMap(ctx, cs, ns, "cm-5", "step", "0")
	apiserver.ConfigMap(ctx, cs, ns, "cm-6", "step", "0")
	if err := apiserver.Receive(m1.stopped, "manager-1 to stop"); err != nil {
		apiserver.Fail("manager-1 stopped with %v", err)
	}
	fmt.Println("manager-1's context cancelled; cm-5, cm-6 created while it stops")
	fmt.Println("  manager-1 stopped")
	apiserver.Receive(m2.mgr.Elected(), "manager-2 to be elected")
	if took := time.Since(handover); took >= leaseDuration {
		apiserver.Fail("manager-2 took %s to lead, not less than the "+
			"lease duration %s: was the Lease released?", took, leaseDuration)
	}
	after := lease(ctx, cs, ns)
	if *after.Spec.HolderIdentity == *holder.Spec.HolderIdentity {
		apiserver.Fail("manager-2 leads but the Lease names the same holder")
	}
	fmt.Println("manager-2 leads, before the Lease could have expired:")
	fmt.Printf("  manager-1 released it (leaseTransitions %d)\n",
		*after.Spec.LeaseTransitions)

	apiserver.ConfigMap(ctx, cs, ns, "cm-7", "step", "0")
	apiserver.ConfigMap(ctx, cs, ns, "cm-8", "step", "0")
	all := names(1, 8)
	apiserver.Until(changed, func() bool { return m2.has(m2.reconciled, all) },
		"manager-2 to reconcile cm-1..cm-8")
	fmt.Println("cm-7, cm-8 created while manager-2 leads:")
	row("manager-1 reconciled", m1.list(m1.reconciled, names(7, 8)))
	row("manager-2 reconciled", m2.list(m2.reconciled, all))
	// ANCHOR_END: phases
	m2.cancel()
	if err := apiserver.Receive(m2.stopped, "manager-2 to stop"); err != nil {
		apiserver.Fail("manager-2 stopped with %v", err)
	}
}

// start runs the manager until its own context is cancelled.
func (m *member) start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	m.cancel, m.stopped = cancel, make(chan error, 1)
	go func() { m.stopped <- m.mgr.Start(ctx) }()
}

// watch notes every ConfigMap the manager's cache has seen. The cache runs
// whether or not the manager leads.
func (m *member) watch(ctx context.Context) {
	informer, err := m.mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{})
	if err != nil {
		apiserver.Fail("%s: informer: %v", m.name, err)
	}
	_, err = informer.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { m.note(m.seen, obj.(*corev1.ConfigMap).Name) },
	})
	if err != nil {
		apiserver.Fail("%s: event handler: %v", m.name, err)
	}
}

func (m *member) note(set map[string]bool, name string) {
	m.mu.Lock()
	set[name] = true
	m.mu.Unlock()
	signal()
}

// has reports whether set holds every one of names.
func (m *member) has(set map[string]bool, names []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return true
}

// list is which of names set holds, in order, or "none".
func (m *member) list(set map[string]bool, names []string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var in []string
	for _, n := range names {
		if set[n] {
			in = append(in, n)
		}
	}
	if len(in) == 0 {
		return "none"
	}
	return strings.Join(in, ", ")
}

func row(what, objects string) {
	fmt.Printf("  %-22s %s\n", what, objects)
}

func names(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("cm-%d", i))
	}
	return out
}

// lease reads the Lease the managers share.
func lease(ctx context.Context, cs kubernetes.Interface, ns string) *coordinationv1.Lease {
	l, err := cs.CoordinationV1().Leases(ns).Get(ctx, leaseName, metav1.GetOptions{})
	if err != nil {
		apiserver.Fail("reading Lease %s: %v", leaseName, err)
	}
	return l
}
