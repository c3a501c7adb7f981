//! Property test: the [`DelayingQueue`] against a sequential model, on
//! tokio's paused clock.
//!
//! Each case runs a random sequence of `add_after` (delays of 0 to 12ms),
//! `add`, clock advances (0 to 10ms), `get`, `done` and `shut_down` on a real
//! `DelayingQueue<u8>` in a fresh paused runtime, and on [`Model`]: the plain
//! queue's FIFO, dirty and processing sets, plus one waiting entry per item
//! holding its ready time. The model follows client-go's
//! `util/workqueue/delaying_queue.go` and the crate's docs:
//!
//! * a zero delay adds at once; a later delay leaves a waiting entry;
//! * an item has at most one waiting entry, and a second `add_after` keeps the
//!   earlier ready time (upstream's `insert`);
//! * an entry is added to the queue once the clock reaches its ready time
//!   (`readyAt` not after now), through the plain queue's `add`, so an item
//!   that is dirty or processing then is deduplicated as usual;
//! * entries due together are added in ready-time order, and entries with the
//!   same ready time in the order that time was set: by the `add_after` that
//!   created the entry, or that moved it earlier. This is the crate's
//!   documented "first come, first added"; upstream's `container/heap` leaves
//!   the order of ties unspecified;
//! * after `shut_down`, nothing waiting is ever added, and `add_after` is
//!   ignored.
//!
//! After every step it compares the FIFO (so the order in which items become
//! gettable), the dirty and processing sets, `len`, `waiting_len`,
//! `shutting_down`, and the clock. A `get` is always run: when the model says
//! the next item only comes due later, `get` must sleep exactly until then
//! (the paused clock jumps there); when the model says nothing can ever come,
//! `get` must still be waiting after a 1s timeout.
//!
//! What the model leaves out, on purpose:
//!
//! * concurrency and the wake-up of a parked `get` by a later call (one task
//!   drives everything);
//! * `waiting_len` after shutdown: the crate keeps counting the entries it
//!   will never add, which upstream cannot show (it has no `waiting_len`), so
//!   the count is compared only before shutdown;
//! * metrics, and `shut_down_with_drain` (the plain queue's, tested in
//!   `queue_properties`).
//!
//! Failures print the crate's value as `left` and the model's as `right`,
//! with the step and operation after which they differ.
//!
//! 256 cases of up to 40 operations, from a fixed seed, so a run is
//! reproducible and writes no `proptest-regressions/` file. For more cases:
//!
//! ```text
//! PROPTEST_CASES=10000 cargo test -p faithful-workqueue --test delaying_queue_properties
//! ```

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::Duration;

use faithful_workqueue::delaying_queue::DelayingQueue;
use faithful_workqueue::queue::QueueState;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestCaseError};
use tokio::time::Instant;

type Key = u8;
/// Milliseconds since the case's runtime started.
type Millis = u64;

/// Few keys and short delays, so that entries keep colliding and tying.
const KEYS: Key = 4;
const MAX_DELAY: Millis = 12;
const MAX_ADVANCE: Millis = 10;
const MAX_OPS: usize = 40;

/// Longer than any delay, so a `get` still waiting after this waits forever.
const GET_PATIENCE: Millis = 1000;

#[derive(Clone, Debug)]
enum Op {
    AddAfter(Key, Millis),
    Add(Key),
    Advance(Millis),
    Get,
    Done(Key),
    ShutDown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..KEYS, 0..=MAX_DELAY).prop_map(|(key, delay)| Op::AddAfter(key, delay)),
        2 => (0..KEYS).prop_map(Op::Add),
        5 => (0..=MAX_ADVANCE).prop_map(Op::Advance),
        5 => Just(Op::Get),
        3 => (0..KEYS).prop_map(Op::Done),
        1 => Just(Op::ShutDown),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GetOutcome {
    /// The item, and how long `get` slept for it.
    Item(Key, Duration),
    ShutDown,
    WaitsForever,
}

#[derive(Clone, Copy, Debug)]
struct Waiting {
    ready_at: Millis,
    /// Orders entries with equal ready times: when that ready time was set.
    set_order: u64,
}

#[derive(Debug, Default)]
struct Model {
    now: Millis,
    fifo: VecDeque<Key>,
    dirty: BTreeSet<Key>,
    processing: BTreeSet<Key>,
    shutting_down: bool,
    waiting: BTreeMap<Key, Waiting>,
    next_set_order: u64,
}

impl Model {
    /// The plain queue's `add`.
    fn add(&mut self, key: Key) {
        if self.shutting_down || self.dirty.contains(&key) {
            return;
        }
        self.dirty.insert(key);
        if !self.processing.contains(&key) {
            self.fifo.push_back(key);
        }
    }

    fn add_after(&mut self, key: Key, delay: Millis) {
        if self.shutting_down {
            return;
        }
        if delay == 0 {
            self.add(key);
            return;
        }
        let ready_at = self.now + delay;
        if let Some(existing) = self.waiting.get(&key) {
            if ready_at >= existing.ready_at {
                return;
            }
        }
        self.waiting
            .insert(key, Waiting { ready_at, set_order: self.next_set_order });
        self.next_set_order += 1;
    }

    /// Moves the clock, adding every entry that comes due, in order.
    fn advance(&mut self, by: Millis) {
        self.now += by;
        if self.shutting_down {
            return;
        }
        let mut due: Vec<(Millis, u64, Key)> = self
            .waiting
            .iter()
            .filter(|(_, entry)| entry.ready_at <= self.now)
            .map(|(&key, entry)| (entry.ready_at, entry.set_order, key))
            .collect();
        due.sort_unstable();
        for (_, _, key) in due {
            self.waiting.remove(&key);
            self.add(key);
        }
    }

    fn next_ready_at(&self) -> Option<Millis> {
        if self.shutting_down {
            return None;
        }
        self.waiting.values().map(|entry| entry.ready_at).min()
    }

    /// Sleeps from one ready time to the next until the FIFO has an item.
    fn get(&mut self) -> GetOutcome {
        let started = self.now;
        loop {
            if let Some(key) = self.fifo.pop_front() {
                self.processing.insert(key);
                self.dirty.remove(&key);
                return GetOutcome::Item(key, ms(self.now - started));
            }
            if self.shutting_down {
                return GetOutcome::ShutDown;
            }
            match self.next_ready_at() {
                Some(ready_at) => self.advance(ready_at - self.now),
                None => {
                    self.advance(started + GET_PATIENCE - self.now);
                    return GetOutcome::WaitsForever;
                }
            }
        }
    }

    fn done(&mut self, key: Key) {
        self.processing.remove(&key);
        if self.dirty.contains(&key) {
            self.fifo.push_back(key);
        }
    }

    fn shut_down(&mut self) {
        self.shutting_down = true;
    }

    fn state(&self) -> QueueState<Key> {
        QueueState {
            fifo: self.fifo.iter().copied().collect(),
            dirty: self.dirty.iter().copied().collect(),
            processing: self.processing.iter().copied().collect(),
        }
    }
}

fn config() -> Config {
    // No `cases` here: `Config::default()` reads `PROPTEST_CASES` (256 without it).
    Config {
        rng_seed: RngSeed::Fixed(0x00DE_1A7E),
        failure_persistence: None,
        ..Config::default()
    }
}

fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

fn ms(millis: Millis) -> Duration {
    Duration::from_millis(millis)
}

async fn get_outcome(queue: &DelayingQueue<Key>) -> GetOutcome {
    let started = Instant::now();
    match tokio::time::timeout(ms(GET_PATIENCE), queue.get()).await {
        Ok(Some(key)) => GetOutcome::Item(key, started.elapsed()),
        Ok(None) => GetOutcome::ShutDown,
        Err(_) => GetOutcome::WaitsForever,
    }
}

fn check_observables(
    queue: &DelayingQueue<Key>,
    model: &Model,
    clock_start: Instant,
    step: usize,
    op: &Op,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        clock_start.elapsed(),
        ms(model.now),
        "clock after step {} ({:?})",
        step,
        op
    );
    prop_assert_eq!(
        queue.queue().debug_state(),
        model.state(),
        "collections after step {} ({:?})",
        step,
        op
    );
    prop_assert_eq!(
        queue.len(),
        model.fifo.len(),
        "len after step {} ({:?})",
        step,
        op
    );
    prop_assert_eq!(
        queue.shutting_down(),
        model.shutting_down,
        "shutting_down after step {} ({:?})",
        step,
        op
    );
    if !model.shutting_down {
        prop_assert_eq!(
            queue.waiting_len(),
            model.waiting.len(),
            "waiting_len after step {} ({:?})",
            step,
            op
        );
    }
    Ok(())
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    paused_runtime().block_on(async {
        let clock_start = Instant::now();
        let queue: DelayingQueue<Key> = DelayingQueue::new();
        let mut model = Model::default();
        for (step, op) in ops.iter().enumerate() {
            match *op {
                Op::AddAfter(key, delay) => {
                    queue.add_after(key, ms(delay));
                    model.add_after(key, delay);
                }
                Op::Add(key) => {
                    queue.add(key);
                    model.add(key);
                }
                Op::Advance(by) => {
                    tokio::time::advance(ms(by)).await;
                    model.advance(by);
                }
                Op::Get => {
                    let got = get_outcome(&queue).await;
                    prop_assert_eq!(got, model.get(), "get at step {}", step);
                }
                Op::Done(key) => {
                    queue.done(&key);
                    model.done(key);
                }
                Op::ShutDown => {
                    queue.shut_down();
                    model.shut_down();
                }
            }
            check_observables(&queue, &model, clock_start, step, op)?;
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn delaying_queue_matches_the_sequential_model(ops in prop::collection::vec(op(), 0..=MAX_OPS)) {
        run(&ops)?;
    }
}
