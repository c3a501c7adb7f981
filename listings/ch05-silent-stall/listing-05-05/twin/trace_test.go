// Listing 5-5, Go twin: four workers on client-go's real queue, three keys,
// and adds that keep arriving while the keys are being processed, on the
// same fixed-seed schedule as the Rust listing. No key is ever held by two
// workers at once.
//
// The schedule is in milliseconds, so the queue runs inside a
// testing/synctest bubble: its virtual clock jumps from one event to the
// next. testing/synctest needs a *testing.T, so this twin is a test;
// TestMain sends the testing package's own output to stderr, leaving the
// listing's lines alone on stdout. Run from listings/:
//
//	go test -c -o /tmp/listing-05-05.test ./ch05-silent-stall/listing-05-05/twin && /tmp/listing-05-05.test
package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/util/workqueue"

	"forget-is-not-delete/listings/internal/twin"
)

// The listing goes to twin.Stdout; testing's own output goes to stderr.
var stdout = twin.Stdout

func TestMain(m *testing.M) { twin.RunListing(m) }

const (
	workers = 4
	adds    = 14
	seed    = 8
)

var keys = []string{"a", "b", "c"}

// rng is xorshift64: the same numbers as the Rust listing's.
type rng uint64

func (r *rng) below(n uint64) uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r) % n
}

type add struct {
	at  time.Duration
	key int
}

// schedule draws the plan up front: when each add comes and for which key,
// then how long each hand-out is processed.
func schedule() ([]add, []time.Duration) {
	r := rng(seed)
	var plan []add
	at := time.Duration(0)
	for range adds {
		at += time.Duration(1+r.below(12)) * time.Millisecond
		plan = append(plan, add{at, int(r.below(uint64(len(keys))))})
	}
	var work []time.Duration
	for range 4 * adds {
		work = append(work, time.Duration(5+r.below(36))*time.Millisecond)
	}
	return plan, work
}

// trace records how many workers hold each key right now, the most that
// ever did, the hand-outs in order, and one line per event.
type trace struct {
	mu         sync.Mutex
	start      time.Time
	holders    [3]int
	most       [3]int
	adds       [3]int
	handOuts   []string
	busy       int
	mostBusy   int
	eventTimes []time.Duration
	lines      []string
}

func (t *trace) line(event string) {
	at := time.Since(t.start).Milliseconds()
	t.lines = append(t.lines, fmt.Sprintf("%4dms  %-14s%d %d %d    %d",
		at, event, t.holders[0], t.holders[1], t.holders[2], t.busy))
}

// got records that a worker got key, and returns the hand-out's number.
func (t *trace) got(key int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.holders[key]++
	t.most[key] = max(t.most[key], t.holders[key])
	t.busy++
	t.mostBusy = max(t.mostBusy, t.busy)
	t.handOuts = append(t.handOuts, keys[key])
	t.line(fmt.Sprintf("Get() -> %q", keys[key]))
	return len(t.handOuts) - 1
}

// finished records that a worker is done with key (it calls Done right after).
func (t *trace) finished(key int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.holders[key]--
	t.busy--
	t.eventTimes = append(t.eventTimes, time.Since(t.start))
	t.line(fmt.Sprintf("Done(%q)", keys[key]))
}

func (t *trace) added(key int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.adds[key]++
	t.eventTimes = append(t.eventTimes, time.Since(t.start))
	t.line(fmt.Sprintf("Add(%q)", keys[key]))
}

func TestWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		plan, work := schedule()
		tr := &trace{start: time.Now()}

		// ANCHOR: worker
		queue := workqueue.NewTyped[int]()
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					key, shutdown := queue.Get()
					if shutdown {
						return
					}
					n := tr.got(key)
					time.Sleep(work[n]) // reconcile
					tr.finished(key)
					queue.Done(key)
				}
			})
		}
		// ANCHOR_END: worker

		for _, a := range plan {
			time.Sleep(a.at - time.Since(tr.start))
			tr.added(a.key)
			queue.Add(a.key)
		}
		queue.ShutDown()
		wg.Wait()

		// One event per instant: which worker wakes first can never matter.
		times := slices.Clone(tr.eventTimes)
		slices.Sort(times)
		if len(slices.Compact(times)) != len(tr.eventTimes) {
			t.Fatalf("seed %d makes two events coincide", seed)
		}

		fmt.Fprintf(stdout, "%d workers, seed %d\n", workers, seed)
		fmt.Fprintln(stdout, "  time  event         holders   busy")
		fmt.Fprintln(stdout, "                      a b c")
		for _, line := range tr.lines {
			fmt.Fprintln(stdout, line)
		}
		fmt.Fprintln(stdout)
		fmt.Fprintf(stdout, "hand-outs in order: %s\n", strings.Join(tr.handOuts, " "))
		// ANCHOR: summary
		fmt.Fprintln(stdout, "key  adds  hand-outs  most workers holding it at once")
		for k, name := range keys {
			got := 0
			for _, h := range tr.handOuts {
				if h == name {
					got++
				}
			}
			fmt.Fprintf(stdout, "%-5s%-6d%-11d%d\n", name, tr.adds[k], got, tr.most[k])
		}
		fmt.Fprintf(stdout, "most workers busy at once: %d\n", tr.mostBusy)
		// ANCHOR_END: summary
	})
}
