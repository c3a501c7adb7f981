// Listing 9-2, Go twin: the stall, end to end. A worker in the style of
// client-go's sample-controller (a shared informer, a rate-limiting queue,
// one worker) whose error path requeues the key but forgets Done.
//
// cm-stuck fails to reconcile, so its first reconcile takes the error path
// and the key stays in the queue's processing set for good. Then each
// object is updated twenty times through the API server, alternately. The
// listing waits until cm-ok's reconcile has read its twentieth update: by
// then the informer has delivered every update of cm-stuck too (one watch,
// in order), and none of them was reconciled.
//
// Run from listings/, with a control plane up (`cargo xtask cluster up`):
//
//	KUBECONFIG=../target/cluster/kubeconfig go run ./ch09-real-api-server/listing-09-02/twin
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"forget-is-not-delete/listings/internal/apiserver"
	"forget-is-not-delete/listings/internal/queuestate"
	"forget-is-not-delete/listings/internal/twin"
)

const updates = 20

// controller is sample-controller's shape, cut down to one worker.
type controller struct {
	queue  workqueue.TypedRateLimitingInterface[string]
	lister listers.ConfigMapLister
	mu     sync.Mutex
	last   map[string]int // the last step each object's reconcile read
	seen   chan struct{}  // a key was processed
}

// processed tells main that the worker finished with a key.
func (c *controller) processed() { c.seen <- struct{}{} }

// ANCHOR: worker
func (c *controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.processed()
	if err := c.syncHandler(ctx, key); err != nil {
		c.queue.AddRateLimited(key)
		return true // the bug: this path never calls c.queue.Done(key)
	}
	c.queue.Forget(key)
	c.queue.Done(key)
	return true
}

// ANCHOR_END: worker

// syncHandler notes the step it read; cm-stuck's data is never valid.
func (c *controller) syncHandler(_ context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	cm, err := c.lister.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	step, _ := strconv.Atoi(cm.Data["step"])
	c.mu.Lock()
	c.last[name] = step
	c.mu.Unlock()
	if strings.HasPrefix(name, "cm-stuck") {
		return errors.New("cm-stuck: invalid data")
	}
	return nil
}

func (c *controller) lastStep(name string) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	step, ok := c.last[name]
	return step, ok
}

func main() {
	apiserver.Listing = "listing-09-02 (Go twin)"
	twin.QuietLogs()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := apiserver.Clientset(apiserver.Config())
	ns := apiserver.Namespace(ctx, cs, "listing-09-02")
	apiserver.ConfigMap(ctx, cs, ns, "cm-ok", "step", "0")
	apiserver.ConfigMap(ctx, cs, ns, "cm-stuck", "step", "0")

	c := run(ctx, cs, ns)
	both := func() bool {
		_, ok := c.lastStep("cm-ok")
		_, stuck := c.lastStep("cm-stuck")
		return ok && stuck
	}
	apiserver.Until(c.seen, both, "the first reconcile of both objects")

	// ANCHOR: updates
	for step := 1; step <= updates; step++ {
		apiserver.SetData(ctx, cs, ns, "cm-stuck", "step", strconv.Itoa(step))
		apiserver.SetData(ctx, cs, ns, "cm-ok", "step", strconv.Itoa(step))
	}
	// Done with cm-ok's last update, and nothing else waiting or running.
	settled := func() bool {
		step, _ := c.lastStep("cm-ok")
		processing := queuestate.Read(c.queue).Processing
		return step == updates && c.queue.Len() == 0 && len(processing) == 1
	}
	apiserver.Until(c.seen, settled, "the reconcile of cm-ok's last update")
	// ANCHOR_END: updates

	fmt.Printf("after %d updates to each object through the API server:\n", updates)
	fmt.Printf("%-10s %s\n", "object", "last step reconciled")
	for _, name := range []string{"cm-ok", "cm-stuck"} {
		step, _ := c.lastStep(name)
		fmt.Printf("%-10s %d\n", name, step)
	}
	s := queuestate.Read(c.queue)
	fmt.Printf("queue: FIFO [%s]  dirty {%s}  processing {%s}  Len() %d\n",
		names(s.FIFO), names(s.Dirty), names(s.Processing), c.queue.Len())
}

// run starts the informer and one worker, and waits for the cache to sync.
func run(ctx context.Context, cs kubernetes.Interface, ns string) *controller {
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	informer := factory.Core().V1().ConfigMaps()
	c := &controller{
		queue:  workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
		lister: informer.Lister(),
		last:   map[string]int{},
		seen:   make(chan struct{}, 1000),
	}
	enqueue := func(obj any) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	_, err := informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	})
	if err != nil {
		apiserver.Fail("event handler: %v", err)
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.Informer().HasSynced) {
		apiserver.Fail("the informer's cache did not sync")
	}
	go func() {
		for c.processNextWorkItem(ctx) {
		}
	}()
	return c
}

// names drops the namespace from each "namespace/name" key: the namespace
// differs from run to run.
func names(keys []string) string {
	out := make([]string, len(keys))
	for i, key := range keys {
		_, out[i], _ = cache.SplitMetaNamespaceKey(key)
	}
	return strings.Join(out, " ")
}
