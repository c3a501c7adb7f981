// Package trace wraps controller-runtime's priority queue so that a twin can
// see the calls a real controller makes on its queue: each add, Forget and
// Done, as it happens, with hooks to print or record them.
//
// The wrapper is installed through the public hook for the queue,
// controller.TypedOptions.NewQueue, and builds the same priority queue the
// default NewQueue builds, with the rate limiter the controller chose. It
// still satisfies priorityqueue.PriorityQueue, so the controller treats it
// as a priority queue: it takes keys with GetWithPriority and requeues them
// with AddWithOpts (RateLimited for an error, a recovered panic or Requeue;
// After for Result.RequeueAfter).
package trace

import (
	"fmt"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// Op is the kind of a call on the queue.
type Op string

// The calls a Queue reports, named as the Rust listings print them.
const (
	Add            Op = "add" // a plain add: Add, or AddWithOpts with neither RateLimited nor After
	AddRateLimited Op = "add_rate_limited"
	AddAfter       Op = "add_after"
	Forget         Op = "forget"
	Done           Op = "done"
)

// IsAdd reports whether the call puts its key into the queue, by any add.
func (o Op) IsAdd() bool {
	return o == Add || o == AddRateLimited || o == AddAfter
}

// Call is one call on the queue, for one key.
type Call struct {
	Op    Op
	Key   string
	After time.Duration // the delay of an AddAfter
}

// String renders the call as the Rust listings print it: `forget "ok"`,
// `add_after "later" 30ms`.
func (c Call) String() string {
	if c.Op == AddAfter {
		return fmt.Sprintf("%s %q %s", c.Op, c.Key, c.After)
	}
	return fmt.Sprintf("%s %q", c.Op, c.Key)
}

// WithoutKey renders the call without its key: `forget`, `add_after 30s`.
func (c Call) WithoutKey() string {
	if c.Op == AddAfter {
		return fmt.Sprintf("%s %s", c.Op, c.After)
	}
	return string(c.Op)
}

// Print is an OnCall hook that prints every call but the plain adds (those
// come from the event source, not from the controller's handling of a
// reconcile) on stdout, indented by two spaces: `  forget "ok"`.
func Print(c Call) {
	if c.Op != Add {
		fmt.Printf("  %s\n", c)
	}
}

// Queue is the real priority queue with hooks on the calls made on it. Set
// the hooks before the controller starts. The hooks are called one at a
// time (the worker and the event source call the queue from different
// goroutines), for each key of a call.
type Queue struct {
	priorityqueue.PriorityQueue[string]

	// OnGet, if set, is told of each key GetWithPriority hands out.
	OnGet func(key string)
	// OnCall, if set, is told of each add, Forget and Done before it
	// reaches the queue.
	OnCall func(Call)
	// OnDone, if set, runs after each Done has reached the queue, with the
	// number of Done calls so far, this one included.
	//
	// A hook may call the methods of the embedded PriorityQueue (q.Len,
	// q.NumRequeues), but none that Queue reports on, nor DoneCalls.
	OnDone func(key string, doneCalls int)
	// HandOut, if not zero, is how many keys GetWithPriority hands out.
	// After that it reports a shutdown without asking the queue, so the
	// worker stops even if a requeued key becomes ready meanwhile.
	HandOut int

	mu        sync.Mutex // held while a hook runs, and for the counts
	gets      int
	doneCalls int
}

// NewQueue is for controller.TypedOptions.NewQueue (as q.NewQueue): it
// builds the priority queue the default NewQueue builds, with the rate
// limiter rl the controller passes in, and returns it wrapped in q.
func (q *Queue) NewQueue(name string, rl workqueue.TypedRateLimiter[string]) workqueue.TypedRateLimitingInterface[string] {
	q.PriorityQueue = priorityqueue.New(name, func(o *priorityqueue.Opts[string]) { o.RateLimiter = rl })
	return q
}

// DoneCalls is the number of Done calls so far.
func (q *Queue) DoneCalls() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.doneCalls
}

func (q *Queue) report(c Call) {
	if q.OnCall == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.OnCall(c)
}

// GetWithPriority is how the controller's worker takes a key.
func (q *Queue) GetWithPriority() (string, int, bool) {
	if q.HandOut > 0 {
		q.mu.Lock()
		q.gets++
		over := q.gets > q.HandOut
		q.mu.Unlock()
		if over {
			return "", 0, true
		}
	}
	key, priority, shutdown := q.PriorityQueue.GetWithPriority()
	if !shutdown && q.OnGet != nil {
		q.mu.Lock()
		q.OnGet(key)
		q.mu.Unlock()
	}
	return key, priority, shutdown
}

// AddWithOpts is how the controller requeues a key.
func (q *Queue) AddWithOpts(o priorityqueue.AddOpts, keys ...string) {
	for _, key := range keys {
		switch {
		case o.RateLimited:
			q.report(Call{Op: AddRateLimited, Key: key})
		case o.After > 0:
			q.report(Call{Op: AddAfter, Key: key, After: o.After})
		default:
			q.report(Call{Op: Add, Key: key})
		}
	}
	q.PriorityQueue.AddWithOpts(o, keys...)
}

func (q *Queue) Add(key string) {
	q.report(Call{Op: Add, Key: key})
	q.PriorityQueue.Add(key)
}

func (q *Queue) AddRateLimited(key string) {
	q.report(Call{Op: AddRateLimited, Key: key})
	q.PriorityQueue.AddRateLimited(key)
}

func (q *Queue) AddAfter(key string, d time.Duration) {
	q.report(Call{Op: AddAfter, Key: key, After: d})
	q.PriorityQueue.AddAfter(key, d)
}

func (q *Queue) Forget(key string) {
	q.report(Call{Op: Forget, Key: key})
	q.PriorityQueue.Forget(key)
}

// Done runs from the worker's defer, so it also runs while a panic that
// RecoverPanic did not stop is unwinding the worker.
func (q *Queue) Done(key string) {
	q.report(Call{Op: Done, Key: key})
	q.PriorityQueue.Done(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.doneCalls++
	if q.OnDone != nil {
		q.OnDone(key, q.doneCalls)
	}
}
