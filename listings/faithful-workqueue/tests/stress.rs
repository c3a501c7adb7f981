//! Stress test of [`Queue`] and [`PriorityQueue`]: many producers and workers
//! at once, on real threads, checking the promises a controller relies on.
//!
//! 8 producer threads add 1,000,000 keys drawn at random from 10,000; 8 worker
//! tasks on a multi-thread tokio runtime (8 threads, so the OS preempts them
//! anywhere) take keys with `get`, "process" them for a random number of spins
//! and yields, and call `done`. Then:
//!
//! 1. **Exclusive hand-out.** No key is ever held by two workers at once: each
//!    key has an in-flight flag that a worker sets on `get` and clears before
//!    `done`; finding it already set is a violation.
//! 2. **Nothing is lost.** Each key counts the adds that started after its
//!    latest hand-out (a producer increments the count *before* `add`, a worker
//!    resets it right after `get`). Once producers stopped and the queue is
//!    idle, every count must be zero: a non-zero count is an add that began
//!    after the key's last hand-out and led to none. Every hand-out also needs
//!    an add: per key, hand-outs never exceed adds.
//! 3. **A draining shutdown waits for in-flight items, and only for them.**
//!    With a fresh burst being processed, `shut_down_with_drain` must not
//!    return while an item handed out before it was called is still unfinished.
//!    (The priority queue does not drain, as upstream's: its test shuts down
//!    and checks only that every worker's `get` ends.)
//!
//! The priority queue's adds go through a buffer that a later call applies
//! (see its module docs); 1 and 2 are what would break if a buffered add were
//! lost, applied twice, or left a worker asleep.
//!
//! No clock is involved: processing time is spinning, not sleeping, so the
//! test runs at the machine's speed (about a second in a debug build). The
//! random choices come from fixed seeds; the interleavings, on purpose, do not.
//! `STRESS_ADDS=10000000 cargo test -p faithful-workqueue --test stress`
//! runs a longer one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::queue::Queue;
use faithful_workqueue::rate_limiting_queue::Interface;

const PRODUCERS: usize = 8;
const WORKERS: usize = 8;
const KEYS: usize = 10_000;
const DEFAULT_ADDS: usize = 1_000_000;
/// A hang is a failure, not a stuck CI job.
const WATCHDOG: Duration = Duration::from_secs(60);

/// splitmix64: a tiny seeded generator, so every run draws the same keys and
/// processing times.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What the test knows about one key, beside the queue.
#[derive(Default)]
struct KeyRecord {
    in_flight: AtomicBool,
    adds_since_hand_out: AtomicU64,
    adds: AtomicU64,
    hand_outs: AtomicU64,
}

/// What the test needs from a queue beyond the crate's basic contract
/// ([`Interface`], upstream's `TypedInterface`): a look at whether anything is
/// still queued or held, for `until_idle` and the watchdog.
trait Stressed: Interface<usize> + 'static {
    /// Whether the queue holds nothing; panics on a key dirty but neither
    /// queued nor held (lost by the queue).
    fn holds_nothing(&self) -> bool;
    /// The queue's state in a few words, for the watchdog's message.
    fn summary(&self) -> String;
}

impl Stressed for Queue<usize> {
    fn holds_nothing(&self) -> bool {
        let state = self.debug_state();
        if state.fifo.is_empty() && state.processing.is_empty() {
            let stranded = &state.dirty[..state.dirty.len().min(10)];
            assert!(
                state.dirty.is_empty(),
                "keys dirty but neither queued nor held (first ones): {stranded:?}"
            );
            return true;
        }
        false
    }

    fn summary(&self) -> String {
        let state = self.debug_state();
        format!(
            "{} queued, {} dirty, {} processing",
            state.fifo.len(),
            state.dirty.len(),
            state.processing.len()
        )
    }
}

impl Stressed for PriorityQueue<usize> {
    fn holds_nothing(&self) -> bool {
        let state = self.debug_state();
        state.ready.is_empty()
            && state.waiting.is_empty()
            && state.locked.is_empty()
    }

    fn summary(&self) -> String {
        let state = self.debug_state();
        format!(
            "{} ready, {} waiting, {} locked",
            state.ready.len(),
            state.waiting.len(),
            state.locked.len()
        )
    }
}

struct Shared<Q> {
    queue: Q,
    keys: Vec<KeyRecord>,
    /// Times a worker got a key that another worker still held.
    double_hand_outs: AtomicU64,
    in_flight: AtomicUsize,
    /// Set just before `shut_down_with_drain` is called.
    drain_called: AtomicBool,
    /// Hand-outs that began before the drain was called and are not done yet.
    in_flight_before_drain: AtomicUsize,
}

impl<Q: Stressed> Shared<Q> {
    fn add(&self, key: usize) {
        let record = &self.keys[key];
        record.adds_since_hand_out.fetch_add(1, SeqCst);
        record.adds.fetch_add(1, SeqCst);
        self.queue.add(key);
    }
}

async fn worker<Q: Stressed>(shared: Arc<Shared<Q>>, seed: u64) {
    let mut rng = SplitMix64(seed);
    while let Some(key) = shared.queue.get().await {
        let before_drain = !shared.drain_called.load(SeqCst);
        if before_drain {
            shared.in_flight_before_drain.fetch_add(1, SeqCst);
        }
        shared.in_flight.fetch_add(1, SeqCst);
        let record = &shared.keys[key];
        if record.in_flight.swap(true, SeqCst) {
            shared.double_hand_outs.fetch_add(1, SeqCst);
        }
        record.adds_since_hand_out.store(0, SeqCst);
        record.hand_outs.fetch_add(1, SeqCst);

        // Processing: mostly short, sometimes long enough for producers to
        // add the same key again while it is held.
        let spins = if rng.below(16) == 0 {
            2_000 + rng.below(20_000)
        } else {
            rng.below(200)
        };
        for _ in 0..spins {
            std::hint::spin_loop();
        }
        for _ in 0..rng.below(3) {
            tokio::task::yield_now().await;
        }

        record.in_flight.store(false, SeqCst);
        shared.in_flight.fetch_sub(1, SeqCst);
        if before_drain {
            shared.in_flight_before_drain.fetch_sub(1, SeqCst);
        }
        shared.queue.done(&key);
    }
}

fn produce<Q: Stressed>(shared: &Arc<Shared<Q>>, total_adds: usize) {
    std::thread::scope(|scope| {
        for producer in 0..PRODUCERS {
            let shared = Arc::clone(shared);
            scope.spawn(move || {
                let mut rng = SplitMix64(1_000 + producer as u64);
                for _ in 0..total_adds / PRODUCERS {
                    shared.add(rng.below(KEYS));
                }
            });
        }
    });
}

/// Waits until no key is queued or held. Producers have stopped, so once
/// idle the queue stays idle; a key still dirty then was lost by the queue.
/// It polls the cheap counters, and takes the full (sorted, cloned) state
/// only once they say idle.
async fn until_idle<Q: Stressed>(shared: &Shared<Q>) {
    loop {
        if shared.queue.len() == 0
            && shared.in_flight.load(SeqCst) == 0
            && shared.queue.holds_nothing()
        {
            return;
        }
        tokio::task::yield_now().await;
        std::thread::yield_now(); // block_on's thread: give the workers the core
    }
}

#[test]
fn many_producers_and_workers_lose_nothing_and_never_share_a_key() {
    stress(Queue::new(), true);
}

#[test]
fn the_priority_queue_too_loses_nothing_and_never_shares_a_key() {
    stress(PriorityQueue::new(), false);
}

/// Phase 1 on `queue`, then phase 2 if it drains, else a plain shutdown.
fn stress<Q: Stressed>(queue: Q, drains: bool) {
    let total_adds: usize = std::env::var("STRESS_ADDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ADDS);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKERS)
        .enable_time()
        .build()
        .unwrap();
    let shared = Arc::new(Shared {
        queue,
        keys: (0..KEYS).map(|_| KeyRecord::default()).collect(),
        double_hand_outs: AtomicU64::new(0),
        in_flight: AtomicUsize::new(0),
        drain_called: AtomicBool::new(false),
        in_flight_before_drain: AtomicUsize::new(0),
    });

    runtime.block_on(async {
        tokio::time::timeout(WATCHDOG, async {
            let workers: Vec<_> =
                (0..WORKERS).map(|w| tokio::spawn(worker(Arc::clone(&shared), 7_000 + w as u64))).collect();

            // Phase 1: the million adds, then idle.
            tokio::task::spawn_blocking({
                let shared = Arc::clone(&shared);
                move || produce(&shared, total_adds)
            })
            .await
            .unwrap();
            until_idle(&shared).await;

            let mut lost = Vec::new();
            for (key, record) in shared.keys.iter().enumerate() {
                let (adds, hand_outs) = (record.adds.load(SeqCst), record.hand_outs.load(SeqCst));
                assert!(hand_outs <= adds, "key {key} was handed out {hand_outs} times for {adds} adds");
                assert!(hand_outs > 0 || adds == 0, "key {key} was added {adds} times and never handed out");
                let pending = record.adds_since_hand_out.load(SeqCst);
                if pending > 0 {
                    lost.push(format!("key {key}: {pending} add(s) after its last hand-out led to no hand-out"));
                }
            }
            assert!(lost.is_empty(), "{} keys lost adds:\n{}", lost.len(), lost.join("\n"));
            let adds: u64 = shared.keys.iter().map(|r| r.adds.load(SeqCst)).sum();
            assert_eq!(adds, (total_adds / PRODUCERS * PRODUCERS) as u64);

            if !drains {
                shared.queue.shut_down();
                for worker in workers {
                    worker.await.unwrap();
                }
                return;
            }

            // Phase 2: a burst of every key, drained while it is processed.
            for key in 0..KEYS {
                shared.add(key);
            }
            while shared.in_flight.load(SeqCst) == 0 {
                tokio::task::yield_now().await; // let workers pick up the burst
            }
            shared.drain_called.store(true, SeqCst);
            let in_flight_at_call = shared.in_flight_before_drain.load(SeqCst);
            assert!(in_flight_at_call > 0, "the drain must start while items are in flight, or it checks nothing");
            shared.queue.shut_down_with_drain().await;
            let unfinished = shared.in_flight_before_drain.load(SeqCst);
            assert_eq!(unfinished, 0, "shut_down_with_drain returned with {unfinished} earlier hand-outs unfinished");

            // After shutdown, what is left is handed out, then every get ends.
            for worker in workers {
                worker.await.unwrap();
            }
        })
        .await
        .unwrap_or_else(|_| {
            panic!(
                "the stress test did not finish within {WATCHDOG:?}: a get or the drain hung \
                 ({} double hand-outs so far; {})",
                shared.double_hand_outs.load(SeqCst),
                shared.queue.summary()
            )
        });
    });

    let doubles = shared.double_hand_outs.load(SeqCst);
    assert_eq!(
        doubles, 0,
        "{doubles} times a key was handed to a worker while another held it"
    );
    assert_eq!(shared.in_flight.load(SeqCst), 0);
    if drains {
        assert!(
            shared.queue.holds_nothing(),
            "left over after shutdown: {}",
            shared.queue.summary()
        );
    }
}
