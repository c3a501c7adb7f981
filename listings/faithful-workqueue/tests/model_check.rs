//! Model checking of [`Queue`] with [shuttle]: small scenarios of two or three
//! tasks calling `add`, `get`, `done` and `shut_down`, run under thousands of
//! schedules each; two of [`PriorityQueue`]'s wake-ups, since it takes the
//! same lock; and that lock alone: its exclusion, its back-off to the end,
//! and its poisoning.
//!
//! Built with `RUSTFLAGS="--cfg shuttle"`, the queues' own spin lock runs on
//! shuttle's atomics (see `src/sync.rs`), so every read, compare-and-swap and
//! store it makes, and the point right after every unlock, is a place where
//! the scheduler may switch tasks, including the gaps between releasing the
//! lock and waking a waiter that lost-wakeup bugs live in. A schedule in
//! which every task waits and none can run is reported by shuttle as a
//! deadlock, and one in which a task spins on a lock that is never given
//! back runs out of steps, so "this `get` returns" and "this drain ends"
//! need no timeout.
//!
//! Each scenario runs a fixed-seed random scheduler and a PCT scheduler (which
//! favours schedules that preempt at few, well-chosen points). The seeds are
//! fixed, so a run is repeatable; `MODEL_CHECK_ITERATIONS` sets the count.
//! Without `--cfg shuttle` this file compiles to nothing; the book's test
//! command runs it as
//!
//! ```text
//! RUSTFLAGS="--cfg shuttle" cargo test -p faithful-workqueue --test model_check --target-dir target/shuttle
//! ```
//!
//! [shuttle]: https://docs.rs/shuttle
#![cfg(shuttle)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::queue::Queue;
use faithful_workqueue::rate_limiting_queue::Interface;
use faithful_workqueue::sync::Mutex;
use shuttle::future::{block_on, spawn};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

const DEFAULT_ITERATIONS: usize = 3_000;
const SEED: u64 = 0x5EED_F0E7;

fn iterations() -> usize {
    std::env::var("MODEL_CHECK_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_ITERATIONS)
}

/// Runs `scenario` under a random and a PCT scheduler.
fn check(scenario: fn()) {
    Runner::new(
        RandomScheduler::new_from_seed(SEED, iterations()),
        Config::new(),
    )
    .run(scenario);
    Runner::new(
        PctScheduler::new_from_seed(SEED, 3, iterations()),
        Config::new(),
    )
    .run(scenario);
}

/// Which keys a worker holds, and how many times each was handed out.
struct Ledger {
    held: [AtomicBool; 2],
    hand_outs: [AtomicUsize; 2],
}

impl Ledger {
    fn new() -> Arc<Self> {
        Arc::new(Ledger {
            held: Default::default(),
            hand_outs: Default::default(),
        })
    }

    /// A worker: takes keys until the queue is shut down and empty, and
    /// fails if a key it gets is held by another worker.
    async fn work(self: Arc<Self>, queue: Queue<usize>) {
        while let Some(key) = queue.get().await {
            assert!(
                !self.held[key].swap(true, SeqCst),
                "key {key} handed to two workers at once"
            );
            self.hand_outs[key].fetch_add(1, SeqCst);
            shuttle::future::yield_now().await; // processing: anything may happen meanwhile
            self.held[key].store(false, SeqCst);
            queue.done(&key);
        }
    }
}

/// Two workers and a producer. The producer adds key 0 twice and key 1 once,
/// then shuts the queue down. Whatever the schedule: no key is held by both
/// workers at once; every key is handed out at least once (an add is never
/// lost, even one that lands while the key is being processed, because `done`
/// re-queues it and the queue still hands out what it holds after shutdown);
/// and every worker's `get` finally returns `None`.
#[test]
fn adds_racing_workers_are_never_lost_nor_shared() {
    check(|| {
        block_on(async {
            let queue = Queue::new();
            let ledger = Ledger::new();
            let workers = [
                spawn(ledger.clone().work(queue.clone())),
                spawn(ledger.clone().work(queue.clone())),
            ];
            let producer = spawn({
                let queue = queue.clone();
                async move {
                    queue.add(0);
                    queue.add(1);
                    queue.add(0);
                    queue.shut_down();
                }
            });
            producer.await.unwrap();
            for worker in workers {
                worker.await.unwrap();
            }
            for key in 0..2 {
                assert!(
                    ledger.hand_outs[key].load(SeqCst) >= 1,
                    "key {key} was added and never handed out"
                );
            }
            // Key 0 was added twice: at most twice handed out; key 1 once.
            assert!(ledger.hand_outs[0].load(SeqCst) <= 2);
            assert_eq!(ledger.hand_outs[1].load(SeqCst), 1);
            assert!(queue.is_empty());
        })
    });
}

/// An add that lands while the key is processing is handed out again after
/// `done`, and only then. Here the add is made by a task racing the worker's
/// `done`; the worker takes the key a second time exactly when the add came
/// after the first hand-out.
#[test]
fn an_add_during_processing_is_handed_out_after_done() {
    check(|| {
        block_on(async {
            let queue = Queue::new();
            queue.add(0);
            let first = queue.get().await.unwrap();
            let re_add = spawn({
                let queue = queue.clone();
                async move { queue.add(0) }
            });
            shuttle::future::yield_now().await;
            queue.done(&first);
            re_add.await.unwrap();
            // Whether the add came before or after the done, the key is queued
            // again once: the add came after the first hand-out.
            assert_eq!(queue.len(), 1);
            assert_eq!(queue.get().await, Some(0));
            queue.done(&0);
            assert!(queue.is_empty());
        })
    });
}

/// What the wake-up scenarios below need of a queue (the crate's basic
/// contract, upstream's `TypedInterface`), so that each runs on both queues
/// that take the lock of `src/sync.rs`.
trait Waitable: Interface<usize> + Clone + Default + 'static {}
impl<Q: Interface<usize> + Clone + Default + 'static> Waitable for Q {}

/// Two gets wait on an empty queue and a producer adds key 0 twice, then key
/// 1. With no shutdown to wake them, each get must be woken by an add: a
/// wake-up lost between a get's last look and its sleep leaves a task waiting
/// for ever, which shuttle reports as a deadlock. The repeated add changes
/// nothing and may wake nobody; the other two must each wake a get. (Both
/// queues wake a get only when one sleeps or something changed: this holds
/// that bookkeeping to the look it follows.)
fn every_sleeping_get_is_woken_by_an_add<Q: Waitable>() {
    block_on(async {
        let queue = Q::default();
        let getters = [0, 1].map(|_| {
            let queue = queue.clone();
            spawn(async move { queue.get().await })
        });
        let producer = spawn({
            let queue = queue.clone();
            async move {
                queue.add(0);
                queue.add(0);
                queue.add(1);
            }
        });
        producer.await.unwrap();
        let mut got: Vec<usize> = Vec::new();
        for getter in getters {
            got.push(getter.await.unwrap().expect("not shut down"));
        }
        got.sort();
        assert_eq!(got, [0, 1]);
    })
}

/// A get waits while the only key is held by a worker, and a producer re-adds
/// the key. Whether the add lands before the worker's `done` (so `done` makes
/// the copy available) or after (so the add queues it afresh), the waiting get
/// is woken and takes it.
fn a_done_wakes_a_get_waiting_for_a_held_key<Q: Waitable>() {
    block_on(async {
        let queue = Q::default();
        queue.add(0);
        let held = queue.get().await.unwrap();
        let getter = spawn({
            let queue = queue.clone();
            async move { queue.get().await }
        });
        let producer = spawn({
            let queue = queue.clone();
            async move { queue.add(0) }
        });
        shuttle::future::yield_now().await;
        queue.done(&held);
        producer.await.unwrap();
        assert_eq!(getter.await.unwrap(), Some(0));
    })
}

#[test]
fn every_sleeping_get_is_woken_by_an_add_queue() {
    check(every_sleeping_get_is_woken_by_an_add::<Queue<usize>>);
}

#[test]
fn every_sleeping_get_is_woken_by_an_add_priority_queue() {
    check(every_sleeping_get_is_woken_by_an_add::<PriorityQueue<usize>>);
}

#[test]
fn a_done_wakes_a_get_waiting_for_a_held_key_queue() {
    check(a_done_wakes_a_get_waiting_for_a_held_key::<Queue<usize>>);
}

#[test]
fn a_done_wakes_a_get_waiting_for_a_held_key_priority_queue() {
    check(a_done_wakes_a_get_waiting_for_a_held_key::<PriorityQueue<usize>>);
}

/// Two workers blocked in `get` on an empty queue both wake up with `None`
/// when another task shuts the queue down, wherever the shutdown lands
/// relative to their registering as waiters.
#[test]
fn shut_down_wakes_every_waiting_get() {
    check(|| {
        block_on(async {
            let queue: Queue<usize> = Queue::new();
            let getters = [0, 1].map(|_| {
                let queue = queue.clone();
                spawn(async move { queue.get().await })
            });
            let stopper = spawn({
                let queue = queue.clone();
                async move { queue.shut_down() }
            });
            stopper.await.unwrap();
            for getter in getters {
                assert_eq!(getter.await.unwrap(), None);
            }
        })
    });
}

/// A draining shutdown returns only after the item a worker held when the
/// drain began is done, even when a producer re-adds that item meanwhile (so
/// the last `done` re-queues it instead of leaving the processing set empty
/// for good); and it does return.
#[test]
fn a_draining_shutdown_waits_for_the_held_item_and_ends() {
    check(|| {
        block_on(async {
            let queue = Queue::new();
            queue.add(0);
            let held = queue.get().await.unwrap();
            let finished = Arc::new(AtomicBool::new(false));
            let worker = spawn({
                let (queue, finished) = (queue.clone(), finished.clone());
                async move {
                    shuttle::future::yield_now().await;
                    finished.store(true, SeqCst);
                    queue.done(&held);
                }
            });
            let producer = spawn({
                let queue = queue.clone();
                async move { queue.add(0) }
            });
            let drain = spawn({
                let (queue, finished) = (queue.clone(), finished.clone());
                async move {
                    queue.shut_down_with_drain().await;
                    assert!(
                        finished.load(SeqCst),
                        "the drain returned while the held item was not done"
                    );
                }
            });
            for task in [worker, producer, drain] {
                task.await.unwrap();
            }
        })
    });
}

/// The lock alone, on shuttle's atomics: three threads each read a counter
/// under the lock, yield to the scheduler while holding it, and write it
/// back one higher. A schedule in which two held the lock at once loses an
/// update; one in which a waiter never got the lock back out of its back-off
/// (reads, yields, naps) runs out of steps.
#[test]
fn the_spin_lock_excludes_under_every_schedule() {
    check(|| {
        let counter = Arc::new(Mutex::new(0u32));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let counter = counter.clone();
                shuttle::thread::spawn(move || {
                    let mut n = counter.lock().unwrap();
                    let seen = *n;
                    shuttle::thread::yield_now();
                    *n = seen + 1;
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*counter.lock().unwrap(), 3);
    });
}

/// A holder that keeps the lock for longer than a waiter's whole back-off
/// (its 14 reads, then its 16 yields): the waiter naps, and still takes the
/// lock once it is released.
#[test]
fn a_waiter_past_its_back_off_still_takes_the_lock() {
    check(|| {
        let lock = Arc::new(Mutex::new(0u32));
        let guard = lock.lock().unwrap();
        let waiter = shuttle::thread::spawn({
            let lock = lock.clone();
            move || *lock.lock().unwrap() += 1
        });
        for _ in 0..40 {
            shuttle::thread::yield_now();
        }
        drop(guard);
        waiter.join().unwrap();
        assert_eq!(*lock.lock().unwrap(), 1);
    });
}

/// The panic these scenarios raise on purpose: the panic hook below keeps
/// it off stderr, where shuttle would print it once per schedule.
struct Expected;

fn silence_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.payload().is::<Expected>() {
                previous(info);
            }
        }));
    });
}

/// Poisoning, as `std`'s: a thread that panics while it holds the lock
/// poisons it, and a lock taken only while a panic unwinds (a `Drop` that
/// locks) does not. A second thread contends for the lock meanwhile; it sees
/// it poisoned exactly when it took it after the panic, and the lock is
/// free at the end either way.
#[test]
fn a_panic_while_held_poisons_the_lock_and_an_unwind_alone_does_not() {
    check(|| {
        silence_expected_panics();
        let lock = Arc::new(Mutex::new(0u32));
        let panicked = Arc::new(AtomicBool::new(false));
        let holder = shuttle::thread::spawn({
            let (lock, panicked) = (lock.clone(), panicked.clone());
            move || {
                let unwound = std::panic::catch_unwind(
                    std::panic::AssertUnwindSafe(|| {
                        let _guard = lock.lock().unwrap();
                        panicked.store(true, SeqCst);
                        std::panic::panic_any(Expected);
                    }),
                );
                assert!(unwound.is_err());
            }
        });
        let other = shuttle::thread::spawn({
            let (lock, panicked) = (lock.clone(), panicked.clone());
            move || {
                let taken = lock.lock();
                // The flag is set under the lock: read under it, it says
                // whether the panic came before this hold.
                assert_eq!(taken.is_err(), panicked.load(SeqCst));
            }
        });
        holder.join().unwrap();
        other.join().unwrap();
        assert!(
            lock.lock().is_err(),
            "a panic while held did not poison the lock"
        );

        let clean = Arc::new(Mutex::new(0u32));
        let unwinder = shuttle::thread::spawn({
            let clean = clean.clone();
            move || {
                struct LocksOnDrop(Arc<Mutex<u32>>);
                impl Drop for LocksOnDrop {
                    fn drop(&mut self) {
                        *self.0.lock().unwrap() += 1;
                    }
                }
                let on_drop = LocksOnDrop(clean);
                let unwound = std::panic::catch_unwind(
                    std::panic::AssertUnwindSafe(move || {
                        let _on_drop = on_drop;
                        std::panic::panic_any(Expected);
                    }),
                );
                assert!(unwound.is_err());
            }
        });
        unwinder.join().unwrap();
        assert_eq!(
            *clean.lock().unwrap(),
            1,
            "a lock held only inside an unwind was poisoned"
        );
    });
}
