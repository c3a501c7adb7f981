// Command perf is the Go side of `cargo xtask perf`: the workloads of
// listings/perf/src/main.rs (whose doc comment defines them; this file mirrors
// it line for line), run against the real client-go v0.37.2 work queue and
// delaying queue and controller-runtime v0.25.3's priority queue.
//
//	go build -o ../target/perf/go-workqueue-perf ./perf/go   # from listings/
//	go-workqueue-perf [--smoke] [--workload NAME]
//	go-workqueue-perf [--smoke] --by-placement --workload cycles-N
//
// Output: '#' lines with the machine facts, then one tab-separated line per
// workload: workload, ops, elapsed_ns, handouts, checksum (16 hex digits).
//
// The workloads, briefly (see the Rust file for the exact words):
//
//   - keys "key-0000".."key-9999" built before timing; SplitMix64 seeded with
//     0x5EED, one generator per workload; FNV-1a checksums, ordered (one
//     state fed every handed-out key) or unordered (wrapping sum of each key's
//     FNV-1a); one untimed warm-up round first;
//   - cycles-N: one NewTyped queue, N worker goroutines loop Get, checksum,
//     Done, count; a producer adds the 10,000 keys, waits for the round's
//     10,000 hand-outs, 50 rounds, then ShutDown; ops = hand-outs;
//   - burst: a fresh queue and 100,000 adds of key i % 1,000, 50 bursts;
//     timed: creation and adds; the drain is untimed; ops = adds;
//   - delaying: a fresh delaying queue on a FakeClock, 100,000 AddAfter of key
//     i % 10,000 with a delay of 1 + next() % 10,000 ms, AddAfter("sentinel",
//     0.5 ms), Step(0.5 ms), Get+Done of the sentinel, Step(10,000.5 ms), then
//     Get+Done until one hand-out per distinct key (the earliest ready time
//     wins for a key added again); untimed: ShutDown and drain the rest;
//     5 repetitions; ops = AddAfter calls over the whole thing. The sentinel
//     makes the clock jump wait until the waiting goroutine has taken every
//     entry from its channel: an entry still in the channel when the clock
//     jumps is added at once, past the deduplication, and hands a key out
//     twice;
//   - priority: one priorityqueue.New("") (no metrics); a round adds the
//     10,000 keys with AddWithOpts at priority next() % 5, then one worker
//     goroutine does 10,000 Get+Done; 20 rounds; ops = hand-outs.
//
// --by-placement runs a cycles-N workload round by round: a warm-up round,
// then 150 rounds (smoke: 3), each on a fresh queue with fresh workers, each
// followed by the fastest of three ping-pongs of 300 round trips (smoke: 30)
// between two goroutines locked to their threads. Each round prints
// "# round<TAB>ns per cycle<TAB>round trip in ns"; the workload line sums the
// rounds, with the wrapping sum of their checksums.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// seed is every workload's SplitMix64 seed (the Rust side uses the same).
const seed = 0x5EED

var workloads = []string{"cycles-1", "cycles-2", "cycles-8", "burst", "delaying", "priority"}

const (
	fnvOffset uint64 = 0xcbf29ce484222325
	fnvPrime  uint64 = 0x100000001b3
)

type sizes struct {
	keys           int
	cycleRounds    int
	burstAdds      int
	burstKeys      int
	bursts         int
	delayAdds      int
	delayKeys      int
	maxDelayMs     uint64
	delayReps      int
	priorities     uint64
	priorityRounds int
}

var full = sizes{
	keys: 10_000, cycleRounds: 50,
	burstAdds: 100_000, burstKeys: 1_000, bursts: 50,
	delayAdds: 100_000, delayKeys: 10_000, maxDelayMs: 10_000, delayReps: 5,
	priorities: 5, priorityRounds: 20,
}

var smoke = sizes{
	keys: 100, cycleRounds: 2,
	burstAdds: 1_000, burstKeys: 10, bursts: 2,
	delayAdds: 1_000, delayKeys: 100, maxDelayMs: 10_000, delayReps: 1,
	priorities: 5, priorityRounds: 2,
}

// The --by-placement sizes: rounds, and round trips per ping-pong.
const (
	placementRounds          = 150
	placementRoundTrips      = 300
	smokePlacementRounds     = 3
	smokePlacementRoundTrips = 30
)

// splitMix64 is bit for bit the Rust side's SplitMix64.
type splitMix64 struct{ state uint64 }

func (s *splitMix64) next() uint64 {
	s.state += 0x9E3779B97F4A7C15
	z := s.state
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// fnv1a is FNV-1a 64 of s, continuing from h.
func fnv1a(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

type checksum struct {
	ordered bool
	value   uint64
}

func newChecksum(ordered bool) checksum {
	if ordered {
		return checksum{ordered: true, value: fnvOffset}
	}
	return checksum{}
}

func (c *checksum) add(key string) {
	if c.ordered {
		c.value = fnv1a(c.value, key)
	} else {
		c.value += fnv1a(fnvOffset, key)
	}
}

type outcome struct {
	ops      uint64
	elapsed  time.Duration
	handouts uint64
	checksum uint64
}

func (o *outcome) absorb(other outcome) {
	o.ops += other.ops
	o.elapsed += other.elapsed
	o.handouts += other.handouts
}

func main() {
	smokeFlag := flag.Bool("smoke", false, "tiny sizes, for the test that both sides did the same")
	only := flag.String("workload", "", "run only this workload: "+strings.Join(workloads, ", "))
	byPlacement := flag.Bool("by-placement", false, "run one cycles-N workload round by round, with the cores' distance after each")
	flag.Parse()
	if *byPlacement && !strings.HasPrefix(*only, "cycles-") {
		fmt.Fprintln(os.Stderr, "go-workqueue-perf: --by-placement runs one cycles-N workload (--workload cycles-N)")
		os.Exit(2)
	}
	s, sizeName := full, "full"
	if *smokeFlag {
		s, sizeName = smoke, "smoke"
	}
	names := workloads
	if *only != "" {
		if !slices.Contains(workloads, *only) {
			fmt.Fprintf(os.Stderr, "go-workqueue-perf: unknown workload %q; one of %s\n", *only, strings.Join(workloads, ", "))
			os.Exit(2)
		}
		names = []string{*only}
	}
	keys := make([]string, s.keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("key-%04d", i)
	}
	fmt.Printf("# go\tversion=%s\tGOMAXPROCS=%d\tcores=%d\tsizes=%s\n", runtime.Version(), runtime.GOMAXPROCS(0), runtime.NumCPU(), sizeName)
	for _, name := range names {
		var out outcome
		switch name {
		case "burst":
			out = burst(s, keys)
		case "delaying":
			out = delaying(s, keys)
		case "priority":
			out = priority(s, keys)
		default:
			workers, err := strconv.Atoi(strings.TrimPrefix(name, "cycles-"))
			if err != nil {
				panic(err)
			}
			if *byPlacement {
				rounds, roundTrips := placementRounds, placementRoundTrips
				if *smokeFlag {
					rounds, roundTrips = smokePlacementRounds, smokePlacementRoundTrips
				}
				out = cyclesByPlacement(workers, keys, rounds, roundTrips)
			} else {
				out = cycles(workers, s, keys)
			}
		}
		fmt.Printf("%s\t%d\t%d\t%d\t%016x\n", name, out.ops, out.elapsed.Nanoseconds(), out.handouts, out.checksum)
	}
}

// ---------------------------------------------------------------- cycles

func cycles(workers int, s sizes, keys []string) outcome {
	cyclesRun(workers, keys, 1)
	return cyclesRun(workers, keys, s.cycleRounds)
}

func cyclesRun(workers int, keys []string, rounds int) outcome {
	ordered := workers == 1
	q := workqueue.NewTyped[string]()
	var round, exited sync.WaitGroup
	sums := make([]checksum, workers)
	counts := make([]uint64, workers)
	for w := range workers {
		exited.Add(1)
		go func() {
			defer exited.Done()
			sum := newChecksum(ordered)
			var count uint64
			for {
				key, shutdown := q.Get()
				if shutdown {
					break
				}
				sum.add(key)
				q.Done(key)
				count++
				round.Done()
			}
			sums[w], counts[w] = sum, count
		}()
	}
	start := time.Now()
	for range rounds {
		round.Add(len(keys))
		for _, key := range keys {
			q.Add(key)
		}
		round.Wait()
	}
	elapsed := time.Since(start)
	q.ShutDown()
	exited.Wait()
	out := outcome{ops: uint64(rounds * len(keys)), elapsed: elapsed}
	total := newChecksum(ordered)
	for w := range workers {
		out.handouts += counts[w]
		if ordered {
			total = sums[w]
		} else {
			total.value += sums[w].value
		}
	}
	out.checksum = total.value
	return out
}

// cyclesByPlacement is the Rust side's cycles_by_placement.
func cyclesByPlacement(workers int, keys []string, rounds, roundTrips int) outcome {
	cyclesRun(workers, keys, 1)
	var total outcome
	for range rounds {
		round := cyclesRun(workers, keys, 1)
		// The fastest of three, as on the Rust side.
		best := time.Duration(1<<63 - 1)
		for range 3 {
			best = min(best, pingPong(roundTrips))
		}
		fmt.Printf("# round\t%.1f\t%.1f\n",
			float64(round.elapsed.Nanoseconds())/float64(round.ops),
			float64(best.Nanoseconds())/float64(roundTrips))
		total.absorb(round)
		total.checksum += round.checksum
	}
	return total
}

// paddedCounter is an atomic alone on its 128 bytes (adjacent-line prefetch).
type paddedCounter struct {
	_ [128]byte
	n atomic.Uint64
	_ [120]byte
}

// pingPong is the Rust side's hw::pingpong: two goroutines, each locked to
// its thread, take turns incrementing one counter; it returns the time of
// roundTrips round trips.
func pingPong(roundTrips int) time.Duration {
	line := new(paddedCounter)
	n := uint64(roundTrips)
	var ready, done sync.WaitGroup
	ready.Add(2)
	done.Add(1)
	go func() {
		defer done.Done()
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ready.Done()
		ready.Wait()
		for i := range n {
			for line.n.Load() != 2*i+1 {
			}
			line.n.Store(2*i + 2)
		}
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ready.Done()
	ready.Wait()
	start := time.Now()
	for i := range n {
		for line.n.Load() != 2*i {
		}
		line.n.Store(2*i + 1)
	}
	for line.n.Load() != 2*n {
	}
	elapsed := time.Since(start)
	done.Wait()
	return elapsed
}

// ---------------------------------------------------------------- burst

func burst(s sizes, keys []string) outcome {
	keys = keys[:s.burstKeys]
	warm := newChecksum(true)
	burstRun(keys, s.burstAdds, &warm)
	sum := newChecksum(true)
	var out outcome
	for range s.bursts {
		out.absorb(burstRun(keys, s.burstAdds, &sum))
	}
	out.checksum = sum.value
	return out
}

func burstRun(keys []string, adds int, sum *checksum) outcome {
	start := time.Now()
	q := workqueue.NewTyped[string]()
	j := 0
	for range adds {
		q.Add(keys[j])
		j++
		if j == len(keys) {
			j = 0
		}
	}
	elapsed := time.Since(start)
	var handouts uint64
	for q.Len() > 0 {
		key, _ := q.Get()
		sum.add(key)
		q.Done(key)
		handouts++
	}
	q.ShutDown()
	return outcome{ops: uint64(adds), elapsed: elapsed, handouts: handouts}
}

// ---------------------------------------------------------------- delaying

func delaying(s sizes, keys []string) outcome {
	keys = keys[:s.delayKeys]
	rng := splitMix64{seed}
	warm := newChecksum(false)
	delayingRun(s, keys, &rng, &warm)
	sum := newChecksum(false)
	var out outcome
	for range s.delayReps {
		out.absorb(delayingRun(s, keys, &rng, &sum))
	}
	out.checksum = sum.value
	return out
}

// The delaying workload's sentinel entry and its delay: see the Rust file.
const (
	sentinel      = "sentinel"
	sentinelDelay = 500 * time.Microsecond
)

func delayingRun(s sizes, keys []string, rng *splitMix64, sum *checksum) outcome {
	expected := min(s.delayAdds, len(keys))
	start := time.Now()
	clock := clocktesting.NewFakeClock(time.Unix(1_000_000_000, 0))
	q := workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{Clock: clock})
	j := 0
	for range s.delayAdds {
		delay := 1 + rng.next()%s.maxDelayMs
		q.AddAfter(keys[j], time.Duration(delay)*time.Millisecond)
		j++
		if j == len(keys) {
			j = 0
		}
	}
	// The sentinel reaches the FIFO only after the waiting goroutine took
	// every earlier entry from its channel: the clock jumps after that.
	q.AddAfter(sentinel, sentinelDelay)
	clock.Step(sentinelDelay)
	first, _ := q.Get()
	if first != sentinel {
		panic(fmt.Sprintf("the first entry due is %q, not the sentinel", first))
	}
	sum.add(first)
	q.Done(first)
	clock.Step(time.Duration(s.maxDelayMs+1)*time.Millisecond - sentinelDelay)
	for range expected {
		key, _ := q.Get()
		sum.add(key)
		q.Done(key)
	}
	elapsed := time.Since(start)
	q.ShutDown()
	handouts := uint64(expected) + 1
	for {
		key, shutdown := q.Get()
		if shutdown {
			break
		}
		sum.add(key)
		q.Done(key)
		handouts++
	}
	return outcome{ops: uint64(s.delayAdds), elapsed: elapsed, handouts: handouts}
}

// ---------------------------------------------------------------- priority

func priority(s sizes, keys []string) outcome {
	// AddOpts takes the priority by pointer: point into a table rather than
	// allocate one int per add.
	levels := make([]int, s.priorities)
	for i := range levels {
		levels[i] = i
	}
	q := priorityqueue.New[string]("")
	rng := splitMix64{seed}
	priorityRound(q, keys, &rng, newChecksum(true), levels)
	sum := newChecksum(true)
	var out outcome
	for range s.priorityRounds {
		var round outcome
		round, sum = priorityRound(q, keys, &rng, sum, levels)
		out.absorb(round)
	}
	q.ShutDown()
	out.checksum = sum.value
	return out
}

func priorityRound(q priorityqueue.PriorityQueue[string], keys []string, rng *splitMix64, sum checksum, levels []int) (outcome, checksum) {
	n := len(keys)
	start := time.Now()
	for _, key := range keys {
		q.AddWithOpts(priorityqueue.AddOpts{Priority: &levels[rng.next()%uint64(len(levels))]}, key)
	}
	result := make(chan checksum)
	go func() {
		sum := sum
		for range n {
			key, shutdown := q.Get()
			if shutdown {
				panic("the priority queue shut down")
			}
			sum.add(key)
			q.Done(key)
		}
		result <- sum
	}()
	sum = <-result
	elapsed := time.Since(start)
	return outcome{ops: uint64(n), elapsed: elapsed, handouts: uint64(n)}, sum
}
