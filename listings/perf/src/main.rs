//! `workqueue-perf`: the Rust side of `cargo xtask perf`, which runs the same
//! workloads against the real client-go v0.37.2 and controller-runtime v0.25.3
//! (`listings/perf/go/main.go`, a mirror of this file) and prints one table.
//!
//! # Usage
//!
//! ```text
//! workqueue-perf [--smoke] [--floor] [--workload NAME]
//! workqueue-perf [--smoke] --by-placement --workload cycles-N|hw-handoff
//! ```
//!
//! * `--workload NAME` runs one workload (default: all of them, in the order
//!   below). `cargo xtask perf` starts one process per measurement: the
//!   delaying workload pauses tokio's clock, and once a clock was paused in a
//!   process every `tokio::time::Instant::now()` of that process (the queue
//!   calls it on every add) reads the runtime's clock under its mutex.
//! * `--floor` runs the workload's floor instead of the queue (see below).
//! * `--smoke` shrinks every size, for the test that both sides did the same.
//! * `--by-placement` runs a `cycles-N` workload or `hw-handoff` round by
//!   round, measuring after each round how far apart the two cores are
//!   (below).
//!
//! Output: `#` lines with the machine facts, then one line per workload,
//! tab-separated: `workload ops elapsed_ns handouts checksum`, where `ops` is
//! the number of operations the row counts (its ops/s is `ops / elapsed`),
//! `handouts` the number of items `get` handed out, and `checksum` 16 hex
//! digits (below). The floor prints `0` for both, and one `# floor` line per
//! workload with the operations it did per op. Both print a `# lock` line
//! with how many times the queues' lock spun to the end of its back-off and
//! went on to yield its thread, so far in the process
//! (`faithful_workqueue::sync::fallbacks`).
//!
//! # The workloads (identical on both sides)
//!
//! * **Keys**: `key-0000` … `key-9999` (`format!("key-{i:04}")`), built before
//!   any timing, as `faithful_workqueue::key::SharedKey` (the key the
//!   crate's docs recommend: an `Arc<str>` compared by address before bytes,
//!   as Go compares strings; Go: `string`). `--smoke`: 100 keys. Built with
//!   `--features count-free-keys`, every key of every workload is instead a
//!   string leaked once, a `&'static str` with no reference count (the
//!   `# rust` line says `keys=count-free`), to show what the count costs.
//! * **Random numbers**: SplitMix64 seeded with [`SEED`], one fresh generator
//!   per workload, one `next()` per draw, `x % n` to reduce.
//! * **Checksums**: FNV-1a 64 over key bytes. *Ordered* (hand-out order is
//!   deterministic): one FNV-1a state fed every handed-out key in order.
//!   *Unordered* (several workers, or ties in the delaying queue): the wrapping
//!   sum of FNV-1a of each handed-out key.
//! * **Warm-up**: every workload first runs one untimed round (one burst, one
//!   delaying repetition) with the same code; its hand-outs are not counted.
//! * **`cycles-1`, `cycles-2`, `cycles-8`**: one `Queue` (client-go: `NewTyped`).
//!   N worker tasks loop `get` → checksum → `done` → count until `get` says
//!   shut down. A producer task adds the 10,000 keys in order, waits until the
//!   round's 10,000 hand-outs were counted, and repeats for 50 rounds (smoke:
//!   2), then shuts the queue down. Rust: tokio tasks on a multi-thread
//!   runtime with as many worker threads as cores (the producer is a task
//!   too); Go: goroutines under the default GOMAXPROCS (the cores). Timed from
//!   the first add to the last round's end. ops = hand-outs (add+get+done
//!   cycles). Checksum: ordered for 1 worker, unordered otherwise.
//! * **`burst`**: a fresh queue, then 100,000 adds of key `i % 1,000` (smoke:
//!   1,000 adds over 10 keys); 50 bursts (smoke: 2). Rust adds by reference
//!   (`add_ref`: the queue clones a key only when it stores it), as Go copies
//!   a string header. Timed: creating the queue
//!   and the adds; untimed: draining it (`get`+`done`, 1,000 hand-outs per
//!   burst, ordered checksum). ops = adds.
//! * **`delaying`**: a fresh delaying queue on a fake clock (Rust: tokio's
//!   paused clock, current-thread runtime started paused; Go: `FakeClock` in
//!   the config), then 100,000 `add_after` of key `i % 10,000` (smoke: 1,000
//!   over 100 keys) with a delay of `1 + next() % 10,000` ms, then
//!   `add_after("sentinel", 0.5 ms)`; the clock advances 0.5 ms (`advance` /
//!   `Step`) and the one worker gets the sentinel and dones it; the clock
//!   advances the remaining 10,000.5 ms, and the worker gets and dones until it
//!   had one hand-out per distinct key: both queues keep only the earliest
//!   ready time of a key that is added again. Then, untimed, shut down and
//!   drain what is left (nothing, if both deduplicate alike; counted).
//!   5 repetitions (smoke: 1). ops = `add_after` calls (the sentinel's not
//!   counted), over the whole thing; hand-outs = distinct keys + 1. Checksum:
//!   unordered (the ready-time order breaks ties differently: Go's heap is not
//!   stable). Why the sentinel: Go's `AddAfter` hands each entry to the
//!   waiting goroutine through a channel, and an entry still in the channel
//!   when the fake clock jumps is added at once, past the deduplication, so a
//!   key already handed out comes back (about 220 times per repetition here).
//!   The sentinel is the only entry ready at 0.5 ms, so it reaches the FIFO
//!   only after the goroutine took every earlier entry: the jump waits for it.
//!   The Rust queue has no channel; it does the same steps.
//! * **`priority`**: one priority queue (controller-runtime: `priorityqueue.New`
//!   with an empty name, so no metrics). A round adds the 10,000 keys in order,
//!   each with `add_with_opts` / `AddWithOpts` at priority `next() % 5`, then
//!   one worker task gets and dones 10,000 times; 20 rounds (smoke: 2). Go's
//!   queue applies adds from a buffer on a goroutine; the round ends with the
//!   10,000th `done`, so it counts real hand-outs. ops = hand-outs. Checksum:
//!   ordered (highest priority first, FIFO within one).
//!
//! # By placement
//!
//! On a virtual machine the two cores the process sees are not always the
//! same two physical ones: a cache line may move between them in tens of
//! nanoseconds for a while (neighbours) and in hundreds the next (cores far
//! apart on the package), and a `cycles-N` run can span both.
//! `--by-placement` measures the rounds of `cycles-N` apart: after one
//! untimed warm-up round, 150 rounds (smoke: 3), each on a fresh queue with
//! fresh workers (as the warm-up of `cycles-N`, which the Go side runs the
//! same way), each followed by three ping-pongs of 300 round trips each
//! (smoke: 30; `hw-pingpong`'s code, two threads), of which the fastest
//! counts: a new thread may share its parent's core until the scheduler
//! moves it, and an idle runtime thread still looking for work may take a
//! core for a moment, and neither says anything about the distance. Nothing
//! sleeps between the two. Each round prints
//! `# round<TAB>ns per cycle<TAB>ping-pong round trip in ns<TAB>share`, where
//! `share` (Rust only; Go's scheduler does not say where a goroutine ran) is
//! the fraction of the round's hand-outs that a worker made on the runtime
//! thread the producer ran on. The producer adds a round's 10,000 keys
//! without yielding, so a worker on its thread runs after the adds, one core
//! doing everything in turn, while a worker on the other thread runs beside
//! the adds, and every line the two touch crosses between the cores. tokio
//! decides which; it varies from round to round, and often holds for a
//! whole process. The workload line sums the rounds: ops and hand-outs, and
//! as checksum the wrapping sum of the rounds' checksums. `cargo xtask perf`
//! sorts the rounds of both sides by the round trip measured after them,
//! and compares Go with Rust within each kind of placement; and it sorts the
//! Rust rounds by their share. `hw-handoff` runs the same way (Rust
//! only), each round a hand-off of 10,000 keys (smoke: 100), so that the
//! table can say what moving a key costs the hardware at each distance.
//!
//! # The floor
//!
//! `--floor` runs, with the same thread and task count as the row, a loop
//! doing exactly the lock acquisitions, key hashes, hash-table operations,
//! FIFO and heap/B-tree operations that the crate's code does for the row's
//! ops (counted from `queue.rs`, `delaying_queue.rs` and `priorityqueue.rs`),
//! on the same types (the queues' lock `faithful_workqueue::sync::Mutex`,
//! `std::sync::Mutex` for the delaying queue's waiting set, hashbrown's
//! `HashTable` and std's `HashMap` with the crate's hasher, foldhash,
//! `VecDeque`, `BinaryHeap`, `BTreeMap`), and nothing else: no `Notify`, no
//! clock, no task wake-ups, no checksum. Per op:
//!
//! * cycles (per add+get+done): 3 lock/unlock pairs; 2 key hashes, both
//!   before a lock is taken (`add`, `done`); 5 table operations (`add`: a find
//!   that misses and an insert; `get`: a find with the hash kept in the FIFO;
//!   `done`: a find and a remove); 1 `VecDeque` push + 1 pop. Each of the N
//!   tasks does whole cycles on its share of the keys against one shared
//!   state.
//! * burst (per add): 1 hash, 1 lock pair, 1 find; the first add of a key
//!   also inserts and pushes (1,000 of 100,000).
//! * delaying (per `add_after`, the drain included): the crate's `add_after`
//!   takes 2 lock pairs (`shutting_down`, then the waiting lock, under which it
//!   also promotes due entries) and 1 hash lookup; a new
//!   earliest time also inserts and pushes on the binary heap. The drain pops
//!   every heap entry (1 lookup, plus remove and an add for a live one), and
//!   each `get` and `done` takes 3 lock pairs and 2 hash operations. The floor
//!   counts them as it goes and prints the averages.
//! * priority (per hand-out): the add pushes into the add buffer under its
//!   lock (1 lock pair, 1 push), and applies the buffer itself once
//!   `FLUSH_AT` adds wait (a lock pair for the queue and one for the buffer);
//!   the get applies what is left the same way, or skips the buffer when its
//!   count says it is empty; then `get` and `done` take the queue's lock
//!   once each. About 3 lock pairs in all; 6 hash operations (`items` get,
//!   insert, remove; `locked` contains, insert, remove); B-tree insert, first
//!   and remove on `ready`, plus the two looks at the empty `waiting` tree.
//!
//! # Upstream's benchmarks
//!
//! `--workload pq-add-get-done|pq-add-only|pq-add-lock-contended|queue|delaying-add-after`
//! runs, on the crate, the operations of controller-runtime's and client-go's
//! own `func Benchmark…` (`upstream.rs` names the file and line of each);
//! `cargo xtask perf` runs upstream's test files as they are for the Go side.
//! ops = iterations. No floor, no checksum to compare.
//!
//! # The lock rows
//!
//! `--workload lock-cores|lock-oversubscribed` (Rust only, no floor) runs
//! the queue where a spin lock is said to fail: more runtime threads than
//! cores, and, run by `cargo xtask perf` inside a cgroup, a CPU quota of half
//! a core. Each also prints `# latency<TAB>row<TAB>worst_ns=N`, the longest a
//! key waited between its add and its hand-out (`lock_rows.rs`). `cargo xtask
//! perf` runs them with this build and with one built with `--features
//! std-mutex`, whose queues take `std::sync::Mutex` instead of the spin lock.
//!
//! # The hardware rows
//!
//! `--workload hw-pingpong|hw-wake|hw-atomic|hw-lock|hw-lock-contended|hw-handoff`
//! measures what the hardware and the OS charge for the pieces a queue is
//! made of: a cache line moved between the cores, a wake-up of a sleeping
//! thread, an atomic read-modify-write, a lock/unlock pair alone and with two
//! threads contending, and a key handed between two threads through the
//! least a deduplicating queue does, a locked FIFO and a table of slots
//! (`hw.rs`). `cargo xtask perf` derives from them what
//! the hardware charges per row. Neither kind is in the default run.
#![forbid(unsafe_code)]

mod hw;
mod lock_rows;
mod upstream;

/// The crate's maps (its private `hash` module): std's, with foldhash.
type HashMap<K, V> =
    std::collections::HashMap<K, V, foldhash::fast::RandomState>;
type HashSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::hash::BuildHasher;
use std::hint::black_box;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use faithful_workqueue::delaying_queue::DelayingQueue;
use faithful_workqueue::priorityqueue::{AddOpts, FLUSH_AT, PriorityQueue};
use faithful_workqueue::queue::Queue;
use faithful_workqueue::sync::Mutex as QueueMutex;
use hashbrown::HashTable;
use tokio::runtime::Runtime;
use tokio::sync::Notify;

/// A queue key: the crate's string key, which compares by address first
/// as a Go string does.
#[cfg(not(feature = "count-free-keys"))]
type Key = faithful_workqueue::key::SharedKey;

/// With `--features count-free-keys`: a string leaked once and copied as a
/// plain reference, with no reference count to clone or drop, as Go copies
/// a string header. `cargo xtask perf` measures some rows with it to show
/// what the count costs; a controller whose objects come and go could not
/// leak its keys, so this is a measurement, not a recommendation.
#[cfg(feature = "count-free-keys")]
type Key = &'static str;

/// The name of the key type, for the `# rust` line.
const KEYS: &str =
    if cfg!(feature = "count-free-keys") { "count-free" } else { "SharedKey" };

/// A key holding `name`.
#[cfg(not(feature = "count-free-keys"))]
fn key(name: String) -> Key {
    Key::from(name)
}

/// A key holding `name`: leaked, to live as long as the process.
#[cfg(feature = "count-free-keys")]
fn key(name: String) -> Key {
    Box::leak(name.into_boxed_str())
}

/// The seed of every workload's SplitMix64 (the Go side uses the same).
pub const SEED: u64 = 0x5EED;

/// The workloads, in table order.
const WORKLOADS: [&str; 6] =
    ["cycles-1", "cycles-2", "cycles-8", "burst", "delaying", "priority"];

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The sizes of one run: full, or `--smoke`.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    keys: usize,
    cycle_rounds: u64,
    burst_adds: usize,
    burst_keys: usize,
    bursts: u64,
    delay_adds: usize,
    delay_keys: usize,
    max_delay_ms: u64,
    delay_reps: u64,
    priorities: u64,
    priority_rounds: u64,
    hw_round_trips: u64,
    hw_single: u64,
    hw_contended: u64,
    placement_rounds: u64,
    placement_round_trips: u64,
    placement_handoff_keys: u64,
    lock_rounds: u64,
}

const FULL: Sizes = Sizes {
    keys: 10_000,
    cycle_rounds: 50,
    burst_adds: 100_000,
    burst_keys: 1_000,
    bursts: 50,
    delay_adds: 100_000,
    delay_keys: 10_000,
    max_delay_ms: 10_000,
    delay_reps: 5,
    priorities: 5,
    priority_rounds: 20,
    hw_round_trips: 1_000_000,
    hw_single: 10_000_000,
    hw_contended: 2_000_000,
    placement_rounds: 150,
    placement_round_trips: 300,
    placement_handoff_keys: 10_000,
    lock_rounds: 5_000,
};

const SMOKE: Sizes = Sizes {
    keys: 100,
    cycle_rounds: 2,
    burst_adds: 1_000,
    burst_keys: 10,
    bursts: 2,
    delay_adds: 1_000,
    delay_keys: 100,
    max_delay_ms: 10_000,
    delay_reps: 1,
    priorities: 5,
    priority_rounds: 2,
    hw_round_trips: 1_000,
    hw_single: 10_000,
    hw_contended: 10_000,
    placement_rounds: 3,
    placement_round_trips: 30,
    placement_handoff_keys: 100,
    lock_rounds: 20,
};

/// SplitMix64, bit for bit the Go side's `splitMix64`.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// FNV-1a 64 of `s`, continuing from `h`.
fn fnv1a(mut h: u64, s: &str) -> u64 {
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(FNV_PRIME);
    }
    h
}

/// A checksum of hand-outs; see the module docs.
#[derive(Clone, Copy, Debug)]
struct Checksum {
    ordered: bool,
    value: u64,
}

impl Checksum {
    fn new(ordered: bool) -> Self {
        Self { ordered, value: if ordered { FNV_OFFSET } else { 0 } }
    }

    /// Folds in a key (a `&Key` with either kind of key).
    fn add(&mut self, key: &impl AsRef<str>) {
        let key = key.as_ref();
        self.value = if self.ordered {
            fnv1a(self.value, key)
        } else {
            self.value.wrapping_add(fnv1a(FNV_OFFSET, key))
        };
    }

    /// Folds in another worker's unordered checksum.
    fn merge(&mut self, other: Checksum) {
        assert!(
            !self.ordered && !other.ordered,
            "ordered checksums come from one worker"
        );
        self.value = self.value.wrapping_add(other.value);
    }
}

/// What one workload did.
#[derive(Clone, Copy, Debug, Default)]
struct Outcome {
    ops: u64,
    elapsed: Duration,
    handouts: u64,
    checksum: u64,
}

impl Outcome {
    fn absorb(&mut self, other: Outcome) {
        self.ops += other.ops;
        self.elapsed += other.elapsed;
        self.handouts += other.handouts;
    }
}

/// What a floor loop did, counted as it went.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    locks: u64,
    /// Hash computations of a key.
    hashes: u64,
    /// Hash-table operations: finds, inserts and removes.
    hash: u64,
    fifo: u64,
    tree: u64,
}

impl Tally {
    fn absorb(&mut self, other: Tally) {
        self.locks += other.locks;
        self.hashes += other.hashes;
        self.hash += other.hash;
        self.fifo += other.fifo;
        self.tree += other.tree;
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The runtime of the cycles and priority rows: as many worker threads as cores.
fn multi_thread_runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores())
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

fn current_thread_runtime(paused: bool) -> Runtime {
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all().start_paused(paused);
    builder.build().expect("a tokio runtime")
}

fn main() -> ExitCode {
    let mut sizes = FULL;
    let mut floor = false;
    let mut by_placement = false;
    let mut only: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--smoke" => sizes = SMOKE,
            "--floor" => floor = true,
            "--by-placement" => by_placement = true,
            "--workload" => only = args.next(),
            _ => {
                eprintln!(
                    "usage: workqueue-perf [--smoke] [--floor] [--workload {}] | [--smoke] --by-placement --workload cycles-N|hw-handoff",
                    WORKLOADS.join("|")
                );
                return ExitCode::FAILURE;
            }
        }
    }
    if by_placement
        && (floor
            || !only
                .as_deref()
                .is_some_and(|w| w.starts_with("cycles-") || w == "hw-handoff"))
    {
        eprintln!(
            "workqueue-perf: --by-placement runs one cycles-N workload or hw-handoff (--workload NAME), without --floor"
        );
        return ExitCode::FAILURE;
    }
    let extra: Vec<&str> = upstream::UPSTREAM
        .iter()
        .map(|(name, _, _)| *name)
        .chain(hw::HW)
        .chain(lock_rows::LOCK_ROWS)
        .collect();
    let names: Vec<&str> = match &only {
        Some(name) if WORKLOADS.contains(&name.as_str()) => vec![name.as_str()],
        Some(name) if extra.contains(&name.as_str()) && !floor => {
            vec![name.as_str()]
        }
        Some(name) => {
            eprintln!(
                "workqueue-perf: unknown workload {name:?}; one of {} (with a floor), or {}",
                WORKLOADS.join(", "),
                extra.join(", ")
            );
            return ExitCode::FAILURE;
        }
        None => WORKLOADS.to_vec(),
    };
    let keys: Vec<Key> =
        (0..sizes.keys).map(|i| key(format!("key-{i:04}"))).collect();
    println!(
        "# rust\tside={}\ttokio_worker_threads={}\tcores={}\tsizes={}\tkeys={KEYS}",
        if floor { "floor" } else { "queue" },
        cores(),
        cores(),
        if sizes.keys == SMOKE.keys { "smoke" } else { "full" }
    );
    for name in names {
        let out = if floor {
            let (out, tally) = run_floor(name, &sizes, &keys);
            let per = |n: u64| n as f64 / out.ops as f64;
            println!(
                "# floor\t{name}\tlocks/op={:.2}\thashes/op={:.2}\thash/op={:.2}\tfifo/op={:.2}\ttree/op={:.2}",
                per(tally.locks),
                per(tally.hashes),
                per(tally.hash),
                per(tally.fifo),
                per(tally.tree)
            );
            out
        } else if by_placement && name == "hw-handoff" {
            rounds_by_placement(&sizes, || {
                (hw::handoff(sizes.placement_handoff_keys), None)
            })
        } else if by_placement {
            cycles_by_placement(workers_of(name), &sizes, &keys)
        } else if lock_rows::LOCK_ROWS.contains(&name) {
            let (out, worst) = lock_rows::run(name, &sizes);
            println!("# latency\t{name}\tworst_ns={}", worst.as_nanos());
            out
        } else {
            run_queue(name, &sizes, &keys)
        };
        // Each process runs one workload in `cargo xtask perf`, so the count
        // is that run's (with its warm-up round).
        println!(
            "# lock\t{name}\tfallbacks={}",
            faithful_workqueue::sync::fallbacks()
        );
        println!(
            "{name}\t{}\t{}\t{}\t{:016x}",
            out.ops,
            out.elapsed.as_nanos(),
            out.handouts,
            out.checksum
        );
    }
    ExitCode::SUCCESS
}

fn workers_of(name: &str) -> usize {
    name.strip_prefix("cycles-")
        .and_then(|n| n.parse().ok())
        .expect("a cycles-N workload")
}

fn run_queue(name: &str, s: &Sizes, keys: &[Key]) -> Outcome {
    match name {
        _ if name.starts_with("hw-") => hw::run(name, s),
        _ if upstream::UPSTREAM.iter().any(|(n, _, _)| *n == name) => {
            upstream::run(name, s)
        }
        "burst" => burst(s, keys),
        "delaying" => delaying(s, keys),
        "priority" => priority(s, keys),
        _ => cycles(workers_of(name), s, keys),
    }
}

fn run_floor(name: &str, s: &Sizes, keys: &[Key]) -> (Outcome, Tally) {
    match name {
        "burst" => burst_floor(s, keys),
        "delaying" => delaying_floor(s, keys),
        "priority" => priority_floor(s, keys),
        _ => cycles_floor(workers_of(name), s, keys),
    }
}

// ---------------------------------------------------------------- cycles

/// Hand-outs counted so far, and the producer's wake-up at each round's end.
struct Progress {
    handed: AtomicU64,
    per_round: u64,
    round_done: Notify,
}

impl Progress {
    fn handed_one(&self) {
        if (self.handed.fetch_add(1, Ordering::AcqRel) + 1)
            .is_multiple_of(self.per_round)
        {
            self.round_done.notify_one();
        }
    }

    async fn wait_for(&self, target: u64) {
        // notify_one stores a permit when nobody waits, so no round end is missed.
        while self.handed.load(Ordering::Acquire) < target {
            self.round_done.notified().await;
        }
    }
}

fn cycles(workers: usize, s: &Sizes, keys: &[Key]) -> Outcome {
    let rt = multi_thread_runtime();
    let keys: Arc<[Key]> = keys.into();
    cycles_run(&rt, workers, &keys, 1, false);
    cycles_run(&rt, workers, &keys, s.cycle_rounds, false).0
}

thread_local! {
    /// The tag of the `cycles` round whose producer runs on this thread (0:
    /// none), so that a worker can tell whether it runs where the producer
    /// does.
    static PRODUCER_HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Tags of `cycles` rounds, one per round that counts where its workers ran.
static ROUND_TAGS: AtomicU64 = AtomicU64::new(0);

/// One `cycles` run. With `where_run`, the workers also count the hand-outs
/// they made on the runtime thread the producer runs on, returned beside the
/// outcome (0 without): the producer never yields while it adds a round's
/// keys, so a worker on its thread runs only after the adds, one core doing
/// everything in turn, where a worker on the other thread runs beside them.
fn cycles_run(
    rt: &Runtime,
    workers: usize,
    keys: &Arc<[Key]>,
    rounds: u64,
    where_run: bool,
) -> (Outcome, u64) {
    let n = keys.len() as u64;
    let tag = if where_run {
        ROUND_TAGS.fetch_add(1, Ordering::Relaxed) + 1
    } else {
        0
    };
    let ordered = workers == 1;
    let q: Queue<Key> = Queue::new();
    let progress = Arc::new(Progress {
        handed: AtomicU64::new(0),
        per_round: n,
        round_done: Notify::new(),
    });
    rt.block_on(async {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (q, progress) = (q.clone(), progress.clone());
                tokio::spawn(async move {
                    let mut sum = Checksum::new(ordered);
                    let (mut count, mut on_producer_thread) = (0u64, 0u64);
                    while let Some(key) = q.get().await {
                        sum.add(&key);
                        q.done(&key);
                        count += 1;
                        if where_run && PRODUCER_HERE.get() == tag {
                            on_producer_thread += 1;
                        }
                        progress.handed_one();
                    }
                    (count, sum, on_producer_thread)
                })
            })
            .collect();
        let producer = tokio::spawn({
            let (q, keys, progress) =
                (q.clone(), keys.clone(), progress.clone());
            async move {
                // This thread is the producer's until the task next yields.
                PRODUCER_HERE.set(tag);
                let start = Instant::now();
                for round in 1..=rounds {
                    for key in keys.iter() {
                        q.add(Key::clone(key));
                    }
                    progress.wait_for(round * n).await;
                }
                let elapsed = start.elapsed();
                q.shut_down();
                elapsed
            }
        });
        let elapsed = producer.await.expect("the producer");
        let (mut handouts, mut on_producer_thread) = (0, 0);
        let mut checksum = Checksum::new(ordered);
        for handle in handles {
            let (count, sum, mine) = handle.await.expect("a worker");
            handouts += count;
            on_producer_thread += mine;
            if ordered { checksum = sum } else { checksum.merge(sum) }
        }
        (
            Outcome {
                ops: rounds * n,
                elapsed,
                handouts,
                checksum: checksum.value,
            },
            on_producer_thread,
        )
    })
}

/// `--by-placement` on `cycles-N`: its rounds one at a time, each followed
/// by a short measurement of the cores' distance, to see what a round costs
/// when the cores are near and when they are far (see the module docs).
fn cycles_by_placement(workers: usize, s: &Sizes, keys: &[Key]) -> Outcome {
    let rt = multi_thread_runtime();
    let keys: Arc<[Key]> = keys.into();
    cycles_run(&rt, workers, &keys, 1, false);
    rounds_by_placement(s, || {
        let (out, on_producer_thread) =
            cycles_run(&rt, workers, &keys, 1, true);
        (out, Some(on_producer_thread))
    })
}

/// Runs `round` [`Sizes::placement_rounds`] times, printing after each its
/// ns per op, the ping-pong round trip measured right after it and, when
/// `round` counted them, the share of its hand-outs made on the producer's
/// thread; returns the rounds' sum (ops, time, hand-outs, and the wrapping
/// sum of their checksums).
fn rounds_by_placement(
    s: &Sizes,
    mut round: impl FnMut() -> (Outcome, Option<u64>),
) -> Outcome {
    let mut total = Outcome::default();
    for _ in 0..s.placement_rounds {
        let (out, on_producer_thread) = round();
        // The fastest of three: a new thread may start on its parent's core
        // and share it until the scheduler moves it, and a runtime thread
        // still looking for work may take a core for a moment; neither is a
        // distance.
        let round_trip = (0..3)
            .map(|_| hw::pingpong(s.placement_round_trips))
            .map(|ping| ping.elapsed.as_nanos() as f64 / ping.ops as f64)
            .fold(f64::INFINITY, f64::min);
        let ns_per_op = out.elapsed.as_nanos() as f64 / out.ops as f64;
        match on_producer_thread {
            Some(on) => println!(
                "# round\t{ns_per_op:.1}\t{round_trip:.1}\t{:.3}",
                on as f64 / out.handouts as f64
            ),
            None => println!("# round\t{ns_per_op:.1}\t{round_trip:.1}"),
        }
        total.absorb(out);
        total.checksum = total.checksum.wrapping_add(out.checksum);
    }
    total
}

/// The dirty and processing flags, as `queue.rs` stores them.
#[derive(Clone, Copy, Default)]
struct Flags {
    dirty: bool,
    processing: bool,
}

const DIRTY: Flags = Flags { dirty: true, processing: false };

/// `queue.rs`'s state: the FIFO of keys with their hashes, and the one table
/// of flags; aligned to 128 bytes as the crate's is.
#[derive(Default)]
#[repr(align(128))]
struct FloorQueue {
    fifo: VecDeque<(Key, u64)>,
    items: HashTable<(Key, Flags)>,
    processing_len: usize,
    shutting_down: bool,
}

/// `queue.rs`'s `Inner`: the hasher, used before the lock is taken, and the
/// state behind the crate's own lock.
#[derive(Default)]
struct FloorInner {
    hasher: foldhash::fast::RandomState,
    state: QueueMutex<FloorQueue>,
}

impl FloorInner {
    fn lock(&self) -> faithful_workqueue::sync::MutexGuard<'_, FloorQueue> {
        self.state.lock().unwrap()
    }
}

type Shared<T> = Arc<QueueMutex<T>>;

/// `add` of a key that is not dirty: hash; lock; a find that misses, an
/// insert with the same hash; push.
fn floor_add(q: &FloorInner, key: &Key, t: &mut Tally) {
    let hash = q.hasher.hash_one(key);
    let mut s = q.lock();
    let s = &mut *s;
    match s.items.find_mut(hash, |(k, _)| k == key) {
        Some((_, flags)) => flags.dirty = true,
        None => {
            s.items.insert_unique(hash, (Key::clone(key), DIRTY), |(k, _)| {
                q.hasher.hash_one(k)
            });
            t.hash += 1;
        }
    }
    s.fifo.push_back((Key::clone(key), hash));
    t.locks += 1;
    t.hashes += 1;
    t.hash += 1;
    t.fifo += 1;
}

/// `get` with the FIFO not empty: lock; pop; a find with the stored hash.
fn floor_get(q: &FloorInner, t: &mut Tally) -> Key {
    let mut s = q.lock();
    let s = &mut *s;
    let (key, hash) =
        s.fifo.pop_front().expect("every floor task pushes before it pops");
    if let Some((_, flags)) = s.items.find_mut(hash, |(k, _)| *k == key) {
        flags.processing = true;
        flags.dirty = false;
        s.processing_len += 1;
    }
    t.locks += 1;
    t.hash += 1;
    t.fifo += 1;
    key
}

/// `done` of a clean key: hash; lock; a find and the remove of its slot.
fn floor_done(q: &FloorInner, key: &Key, t: &mut Tally) {
    let hash = q.hasher.hash_one(key);
    let mut s = q.lock();
    let s = &mut *s;
    if let Ok(mut entry) = s.items.find_entry(hash, |(k, _)| k == key) {
        entry.get_mut().1.processing = false;
        s.processing_len -= 1;
        black_box(entry.remove());
        t.hash += 1;
    }
    t.locks += 1;
    t.hashes += 1;
    t.hash += 1;
}

fn cycles_floor(workers: usize, s: &Sizes, keys: &[Key]) -> (Outcome, Tally) {
    let rt = multi_thread_runtime();
    let keys: Arc<[Key]> = keys.into();
    cycles_floor_run(&rt, workers, &keys, 1);
    cycles_floor_run(&rt, workers, &keys, s.cycle_rounds)
}

fn cycles_floor_run(
    rt: &Runtime,
    workers: usize,
    keys: &Arc<[Key]>,
    rounds: u64,
) -> (Outcome, Tally) {
    let state: Arc<FloorInner> = Arc::default();
    rt.block_on(async {
        let start = Instant::now();
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (state, keys) = (state.clone(), keys.clone());
                tokio::spawn(async move {
                    let mut t = Tally::default();
                    for _ in 0..rounds {
                        for key in keys.iter().skip(w).step_by(workers) {
                            floor_add(&state, key, &mut t);
                            let item = floor_get(&state, &mut t);
                            floor_done(&state, &item, &mut t);
                        }
                    }
                    t
                })
            })
            .collect();
        let mut tally = Tally::default();
        for handle in handles {
            tally.absorb(handle.await.expect("a floor task"));
        }
        let elapsed = start.elapsed();
        (
            Outcome {
                ops: rounds * keys.len() as u64,
                elapsed,
                handouts: 0,
                checksum: 0,
            },
            tally,
        )
    })
}

// ---------------------------------------------------------------- burst

fn burst(s: &Sizes, keys: &[Key]) -> Outcome {
    let keys = &keys[..s.burst_keys];
    let rt = current_thread_runtime(false);
    let mut sum = Checksum::new(true);
    burst_run(&rt, keys, s.burst_adds, &mut Checksum::new(true));
    let mut out = Outcome::default();
    for _ in 0..s.bursts {
        out.absorb(burst_run(&rt, keys, s.burst_adds, &mut sum));
    }
    out.checksum = sum.value;
    out
}

fn burst_run(
    rt: &Runtime,
    keys: &[Key],
    adds: usize,
    sum: &mut Checksum,
) -> Outcome {
    let start = Instant::now();
    let q: Queue<Key> = Queue::new();
    let mut j = 0;
    for _ in 0..adds {
        // By reference, as Go passes a string header: the queue clones the
        // key only when it stores it (the first add of each key).
        q.add_ref(&keys[j]);
        j += 1;
        if j == keys.len() {
            j = 0;
        }
    }
    let elapsed = start.elapsed();
    let handouts = rt.block_on(async {
        let mut n = 0;
        while !q.is_empty() {
            let key = q.get().await.expect("not shut down");
            sum.add(&key);
            q.done(&key);
            n += 1;
        }
        n
    });
    Outcome { ops: adds as u64, elapsed, handouts, checksum: 0 }
}

fn burst_floor(s: &Sizes, keys: &[Key]) -> (Outcome, Tally) {
    let keys = &keys[..s.burst_keys];
    let mut tally = Tally::default();
    burst_floor_run(keys, s.burst_adds, &mut Tally::default());
    let mut out = Outcome::default();
    for _ in 0..s.bursts {
        out.absorb(burst_floor_run(keys, s.burst_adds, &mut tally));
    }
    (out, tally)
}

fn burst_floor_run(keys: &[Key], adds: usize, t: &mut Tally) -> Outcome {
    let start = Instant::now();
    let q = FloorInner::default();
    let mut j = 0;
    for _ in 0..adds {
        let key = &keys[j];
        let hash = q.hasher.hash_one(key);
        let mut s = q.lock();
        t.locks += 1;
        t.hashes += 1;
        t.hash += 1;
        // By reference, so that the floor pays for no key clone: only the
        // first add of a key inserts and pushes.
        let s = &mut *s;
        if !s
            .items
            .find(hash, |(k, _)| k == key)
            .is_some_and(|(_, flags)| flags.dirty)
        {
            s.items.insert_unique(hash, (Key::clone(key), DIRTY), |(k, _)| {
                q.hasher.hash_one(k)
            });
            s.fifo.push_back((Key::clone(key), hash));
            t.hash += 1;
            t.fifo += 1;
        }
        j += 1;
        if j == keys.len() {
            j = 0;
        }
    }
    let elapsed = start.elapsed();
    black_box(&q);
    Outcome { ops: adds as u64, elapsed, handouts: 0, checksum: 0 }
}

// ---------------------------------------------------------------- delaying

fn delaying(s: &Sizes, keys: &[Key]) -> Outcome {
    let keys = &keys[..s.delay_keys];
    let rt = current_thread_runtime(true);
    let mut rng = SplitMix64(SEED);
    let mut sum = Checksum::new(false);
    rt.block_on(async {
        delaying_run(s, keys, &mut rng, &mut Checksum::new(false)).await;
        let mut out = Outcome::default();
        for _ in 0..s.delay_reps {
            out.absorb(delaying_run(s, keys, &mut rng, &mut sum).await);
        }
        out.checksum = sum.value;
        out
    })
}

/// The delaying workload's sentinel entry and its delay; see the module docs.
const SENTINEL: &str = "sentinel";
const SENTINEL_DELAY: Duration = Duration::from_micros(500);

async fn delaying_run(
    s: &Sizes,
    keys: &[Key],
    rng: &mut SplitMix64,
    sum: &mut Checksum,
) -> Outcome {
    let expected = s.delay_adds.min(keys.len());
    let sentinel = key(SENTINEL.to_owned());
    let start = Instant::now();
    let q: DelayingQueue<Key> = DelayingQueue::new();
    let mut j = 0;
    for _ in 0..s.delay_adds {
        let delay = 1 + rng.next() % s.max_delay_ms;
        q.add_after(Key::clone(&keys[j]), Duration::from_millis(delay));
        j += 1;
        if j == keys.len() {
            j = 0;
        }
    }
    q.add_after(Key::clone(&sentinel), SENTINEL_DELAY);
    tokio::time::advance(SENTINEL_DELAY).await;
    let first = q.get().await.expect("not shut down");
    assert_eq!(first, sentinel, "the sentinel is the first entry due");
    sum.add(&first);
    q.done(&first);
    tokio::time::advance(
        Duration::from_millis(s.max_delay_ms + 1) - SENTINEL_DELAY,
    )
    .await;
    for _ in 0..expected {
        let key = q.get().await.expect("not shut down");
        sum.add(&key);
        q.done(&key);
    }
    let elapsed = start.elapsed();
    q.shut_down();
    let mut handouts = expected as u64 + 1;
    while let Some(key) = q.get().await {
        sum.add(&key);
        q.done(&key);
        handouts += 1;
    }
    Outcome { ops: s.delay_adds as u64, elapsed, handouts, checksum: 0 }
}

/// `delaying_queue.rs`'s waiting entries: a min-heap of `(ready, seq, key)`
/// and the live entry of each key (ready times in fake microseconds).
#[derive(Default)]
struct FloorWaiting {
    heap: BinaryHeap<Reverse<(u64, u64, Key)>>,
    by_item: HashMap<Key, (u64, u64)>,
    next_seq: u64,
}

/// `flush_ready`: `shutting_down`, then the waiting lock and the promotion of
/// due entries.
fn floor_flush_ready(
    q: &FloorInner,
    w: &Mutex<FloorWaiting>,
    now: u64,
    t: &mut Tally,
) {
    black_box(q.lock().shutting_down);
    let mut waiting = w.lock().unwrap();
    t.locks += 2;
    floor_promote_due(q, &mut waiting, now, t);
}

/// `promote_due`, with the waiting lock held: pop due entries, add live ones.
fn floor_promote_due(
    q: &FloorInner,
    waiting: &mut FloorWaiting,
    now: u64,
    t: &mut Tally,
) {
    while waiting.heap.peek().is_some_and(|Reverse((at, _, _))| *at <= now) {
        let Reverse((ready_at, seq, key)) = waiting.heap.pop().expect("peeked");
        t.tree += 1;
        t.hash += 1;
        t.hashes += 1; // std's HashMap hashes per call
        if waiting.by_item.get(&key) == Some(&(ready_at, seq)) {
            waiting.by_item.remove(&key);
            t.hash += 1;
            t.hashes += 1; // std's HashMap hashes per call
            floor_add(q, &key, t);
        }
    }
}

/// `DelayingQueue::add_after` at fake time `now`: `shutting_down`, then the
/// waiting lock once, to promote due entries and keep the earliest ready time.
fn floor_add_after(
    q: &FloorInner,
    w: &Mutex<FloorWaiting>,
    key: &Key,
    now: u64,
    delay: u64,
    t: &mut Tally,
) {
    black_box(q.lock().shutting_down);
    let ready_at = now + delay;
    let mut waiting = w.lock().unwrap();
    t.locks += 2;
    floor_promote_due(q, &mut waiting, now, t);
    t.hash += 1;
    t.hashes += 1; // std's HashMap hashes per call
    let later = waiting
        .by_item
        .get(key)
        .is_some_and(|&(existing, _)| ready_at >= existing);
    if !later {
        let seq = waiting.next_seq;
        waiting.next_seq += 1;
        waiting.by_item.insert(Key::clone(key), (ready_at, seq));
        waiting.heap.push(Reverse((ready_at, seq, Key::clone(key))));
        t.hash += 1;
        t.hashes += 1; // std's HashMap hashes per call
        t.tree += 1;
    }
}

/// `DelayingQueue::get` (with the FIFO not empty) then `done`.
fn floor_delaying_cycle(
    q: &FloorInner,
    w: &Mutex<FloorWaiting>,
    now: u64,
    t: &mut Tally,
) {
    floor_flush_ready(q, w, now, t);
    let key = floor_get(q, t);
    floor_flush_ready(q, w, now, t);
    floor_done(q, &key, t);
}

fn delaying_floor(s: &Sizes, keys: &[Key]) -> (Outcome, Tally) {
    let keys = &keys[..s.delay_keys];
    let mut rng = SplitMix64(SEED);
    let mut tally = Tally::default();
    delaying_floor_run(s, keys, &mut rng, &mut Tally::default());
    let mut out = Outcome::default();
    for _ in 0..s.delay_reps {
        out.absorb(delaying_floor_run(s, keys, &mut rng, &mut tally));
    }
    (out, tally)
}

fn delaying_floor_run(
    s: &Sizes,
    keys: &[Key],
    rng: &mut SplitMix64,
    t: &mut Tally,
) -> Outcome {
    let expected = s.delay_adds.min(keys.len());
    let sentinel = key(SENTINEL.to_owned());
    let sentinel_us = SENTINEL_DELAY.as_micros() as u64;
    let start = Instant::now();
    let q = FloorInner::default();
    let w: Mutex<FloorWaiting> = Mutex::default();
    let mut j = 0;
    for _ in 0..s.delay_adds {
        let delay_us = (1 + rng.next() % s.max_delay_ms) * 1_000;
        floor_add_after(&q, &w, &keys[j], 0, delay_us, t);
        j += 1;
        if j == keys.len() {
            j = 0;
        }
    }
    floor_add_after(&q, &w, &sentinel, 0, sentinel_us, t);
    floor_delaying_cycle(&q, &w, sentinel_us, t);
    let now = (s.max_delay_ms + 1) * 1_000;
    for _ in 0..expected {
        floor_delaying_cycle(&q, &w, now, t);
    }
    let elapsed = start.elapsed();
    black_box((&q, &w));
    Outcome { ops: s.delay_adds as u64, elapsed, handouts: 0, checksum: 0 }
}

// ---------------------------------------------------------------- priority

fn priority(s: &Sizes, keys: &[Key]) -> Outcome {
    let rt = multi_thread_runtime();
    let keys: Arc<[Key]> = keys.into();
    let s = *s;
    rt.block_on(async move {
        tokio::spawn(async move {
            let q: PriorityQueue<Key> = PriorityQueue::new();
            let mut rng = SplitMix64(SEED);
            let (_, _) =
                priority_round(&q, &keys, &mut rng, Checksum::new(true), &s)
                    .await;
            let mut sum = Checksum::new(true);
            let mut out = Outcome::default();
            for _ in 0..s.priority_rounds {
                let (round, next) =
                    priority_round(&q, &keys, &mut rng, sum, &s).await;
                out.absorb(round);
                sum = next;
            }
            q.shut_down();
            out.checksum = sum.value;
            out
        })
        .await
        .expect("the priority driver")
    })
}

async fn priority_round(
    q: &PriorityQueue<Key>,
    keys: &Arc<[Key]>,
    rng: &mut SplitMix64,
    sum: Checksum,
    s: &Sizes,
) -> (Outcome, Checksum) {
    let n = keys.len();
    let start = Instant::now();
    for key in keys.iter() {
        let priority = (rng.next() % s.priorities) as i32;
        q.add_with_opts(
            AddOpts { priority: Some(priority), ..AddOpts::default() },
            [Key::clone(key)],
        );
    }
    let worker = tokio::spawn({
        let q = q.clone();
        async move {
            let mut sum = sum;
            for _ in 0..n {
                let key = q.get().await.expect("not shut down");
                sum.add(&key);
                q.done(&key);
            }
            sum
        }
    });
    let sum = worker.await.expect("the priority worker");
    let elapsed = start.elapsed();
    (Outcome { ops: n as u64, elapsed, handouts: n as u64, checksum: 0 }, sum)
}

/// `priorityqueue.rs`'s state, aligned as the crate's is.
#[derive(Default)]
#[repr(align(128))]
struct FloorPriority {
    items: HashMap<Key, (u64, i32)>,
    ready: BTreeMap<(Reverse<i32>, u64), Key>,
    waiting: BTreeMap<(u64, Reverse<i32>, u64), Key>,
    locked: HashSet<Key>,
    added_counter: u64,
}

/// `priorityqueue.rs`'s add buffer: the buffered (key, priority) pairs
/// behind their own lock, and their count, read without it.
#[derive(Default)]
struct FloorBuffer {
    pending: QueueMutex<Vec<(Key, i32)>>,
    len: AtomicUsize,
}

fn priority_floor(s: &Sizes, keys: &[Key]) -> (Outcome, Tally) {
    let state: Shared<FloorPriority> = Shared::default();
    let buffer = FloorBuffer::default();
    let mut rng = SplitMix64(SEED);
    let mut tally = Tally::default();
    priority_floor_round(
        &state,
        &buffer,
        keys,
        &mut rng,
        s,
        &mut Tally::default(),
    );
    let mut out = Outcome::default();
    for _ in 0..s.priority_rounds {
        out.absorb(priority_floor_round(
            &state, &buffer, keys, &mut rng, s, &mut tally,
        ));
    }
    (out, tally)
}

/// The crate's `apply_buffer`: with the queue's lock held, skip an empty
/// buffer by its count, else swap it out under its lock and apply each add
/// of a new, ready key.
fn priority_floor_flush(
    st: &mut FloorPriority,
    buffer: &FloorBuffer,
    spare: &mut Vec<(Key, i32)>,
    t: &mut Tally,
) {
    if buffer.len.load(Ordering::Acquire) == 0 {
        return;
    }
    std::mem::swap(&mut *buffer.pending.lock().unwrap(), spare);
    buffer.len.store(0, Ordering::Release);
    t.locks += 1;
    for (key, priority) in spare.drain(..) {
        black_box(st.waiting.first_key_value().is_some());
        black_box(st.items.get(&key).copied());
        let counter = st.added_counter;
        st.added_counter += 1;
        st.ready.insert((Reverse(priority), counter), Key::clone(&key));
        st.items.insert(key, (counter, priority));
        t.hash += 2;
        t.hashes += 2; // std's HashMap hashes per call
        t.tree += 2;
    }
}

fn priority_floor_round(
    state: &QueueMutex<FloorPriority>,
    buffer: &FloorBuffer,
    keys: &[Key],
    rng: &mut SplitMix64,
    s: &Sizes,
    t: &mut Tally,
) -> Outcome {
    let mut spare = Vec::new();
    let start = Instant::now();
    for key in keys {
        let priority = (rng.next() % s.priorities) as i32;
        // add_with_opts: a push into the buffer, which the add applies
        // itself once FLUSH_AT adds wait.
        let mut pending = buffer.pending.lock().unwrap();
        pending.push((Key::clone(key), priority));
        buffer.len.store(pending.len(), Ordering::Release);
        let apply = pending.len() >= FLUSH_AT;
        drop(pending);
        t.locks += 1;
        t.fifo += 1;
        if apply {
            let mut st = state.lock().unwrap();
            t.locks += 1;
            priority_floor_flush(&mut st, buffer, &mut spare, t);
        }
    }
    for _ in 0..keys.len() {
        // get: apply the buffer, then the first ready key that is not locked.
        let mut guard = state.lock().unwrap();
        let st = &mut *guard;
        priority_floor_flush(st, buffer, &mut spare, t);
        black_box(st.waiting.first_key_value().is_some());
        let (ready_key, key) = st
            .ready
            .iter()
            .find(|(_, key)| !st.locked.contains(*key))
            .map(|(k, key)| (*k, Key::clone(key)))
            .expect("a ready key");
        st.ready.remove(&ready_key);
        black_box(st.items.remove(&key));
        st.locked.insert(Key::clone(&key));
        drop(guard);
        t.locks += 1;
        t.hash += 3;
        t.hashes += 3; // std's HashMap hashes per call
        t.tree += 3;
        // done
        state.lock().unwrap().locked.remove(&key);
        t.locks += 1;
        t.hash += 1;
        t.hashes += 1; // std's HashMap hashes per call
    }
    let elapsed = start.elapsed();
    Outcome { ops: keys.len() as u64, elapsed, handouts: 0, checksum: 0 }
}
