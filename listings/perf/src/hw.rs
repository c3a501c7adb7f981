//! The hardware's own costs, measured in the same run as the workloads (see
//! the module docs of `main.rs`, "The hardware rows"). Each prints the usual
//! workload line, where `ops` counts what one measurement repeats:
//!
//! * `hw-pingpong`: two threads hand one `AtomicU64`, alone on its cache
//!   line, back and forth: each waits (spinning) until the counter says it is
//!   its turn, then increments it. ops = round trips (two increments, so two
//!   one-way transfers of the line between the cores). Threads are not
//!   pinned: on a 2-core machine two spinning threads take one core each.
//! * `hw-wake`: the same turn-taking, but a thread whose turn it is not
//!   sleeps (`thread::park`) and the other wakes it (`unpark`, a futex
//!   wake-up): ops = round trips (two wake-ups of a sleeping thread).
//! * `hw-atomic`: one thread, `fetch_add` on an `AtomicU64` nobody else
//!   touches. ops = read-modify-writes (an `Arc` clone or drop is one).
//! * `hw-lock`: one thread, lock and unlock of an uncontended
//!   `faithful_workqueue::sync::Mutex<u64>` (the queues' lock: a spin lock
//!   released by a plain store), incrementing under it.
//!   ops = lock/unlock pairs.
//! * `hw-lock-contended`: two threads do the same on one shared mutex.
//!   ops = lock/unlock pairs of both threads together.
//! * `hw-handoff`: the least a deduplicating queue does, across two threads.
//!   Behind the queues' lock, a `VecDeque<u64>` of keys and a table of
//!   24-byte slots, one per key, scattered as a hash table scatters them.
//!   One thread adds keys `0..n` (10,000 distinct, in order, as `cycles-N`
//!   does): it writes the key's slot and pushes. The other takes them
//!   (spinning while the FIFO is empty): it pops and marks the slot, then
//!   takes the lock once more and clears the slot, as `done` does. So a key
//!   makes a cycle's three lock pairs, and its slot, like the FIFO, is
//!   written on both cores. No hashing, no `Arc`, no task, no wake-up.
//!   ops = keys.
use std::collections::VecDeque;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Instant;

use faithful_workqueue::sync::Mutex;

use crate::{Outcome, Sizes};

/// The hardware rows, in report order.
pub const HW: [&str; 6] = [
    "hw-pingpong",
    "hw-wake",
    "hw-atomic",
    "hw-lock",
    "hw-lock-contended",
    "hw-handoff",
];

/// An atomic alone on its cache line (128 bytes: adjacent-line prefetch).
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

pub fn run(name: &str, s: &Sizes) -> Outcome {
    match name {
        "hw-pingpong" => pingpong(s.hw_round_trips),
        "hw-wake" => wake(s.hw_round_trips / 10),
        "hw-atomic" => atomic(s.hw_single),
        "hw-lock" => lock(s.hw_single),
        "hw-lock-contended" => lock_contended(s.hw_contended),
        "hw-handoff" => handoff(s.hw_contended),
        _ => unreachable!("not a hardware row: {name}"),
    }
}

pub fn pingpong(round_trips: u64) -> Outcome {
    let line = Arc::new(Padded::default());
    let barrier = Arc::new(Barrier::new(2));
    let other = {
        let (line, barrier) = (line.clone(), barrier.clone());
        thread::spawn(move || {
            barrier.wait();
            for i in 0..round_trips {
                while line.0.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                line.0.store(2 * i + 2, Ordering::Release);
            }
        })
    };
    barrier.wait();
    let start = Instant::now();
    for i in 0..round_trips {
        while line.0.load(Ordering::Acquire) != 2 * i {
            std::hint::spin_loop();
        }
        line.0.store(2 * i + 1, Ordering::Release);
    }
    while line.0.load(Ordering::Acquire) != 2 * round_trips {
        std::hint::spin_loop();
    }
    let elapsed = start.elapsed();
    other.join().expect("the ping-pong partner");
    Outcome { ops: round_trips, elapsed, handouts: 0, checksum: 0 }
}

fn wake(round_trips: u64) -> Outcome {
    let line = Arc::new(Padded::default());
    let main = thread::current();
    let other = {
        let line = line.clone();
        thread::spawn(move || {
            for i in 0..round_trips {
                while line.0.load(Ordering::Acquire) != 2 * i + 1 {
                    thread::park();
                }
                line.0.store(2 * i + 2, Ordering::Release);
                main.unpark();
            }
        })
    };
    let start = Instant::now();
    for i in 0..round_trips {
        while line.0.load(Ordering::Acquire) != 2 * i {
            thread::park();
        }
        line.0.store(2 * i + 1, Ordering::Release);
        other.thread().unpark();
    }
    while line.0.load(Ordering::Acquire) != 2 * round_trips {
        thread::park();
    }
    let elapsed = start.elapsed();
    other.join().expect("the wake-up partner");
    Outcome { ops: round_trips, elapsed, handouts: 0, checksum: 0 }
}

fn atomic(n: u64) -> Outcome {
    let a = Padded::default();
    let start = Instant::now();
    for _ in 0..n {
        black_box(&a).0.fetch_add(1, Ordering::AcqRel);
    }
    let elapsed = start.elapsed();
    assert_eq!(a.0.load(Ordering::Relaxed), n);
    Outcome { ops: n, elapsed, handouts: 0, checksum: 0 }
}

fn lock(n: u64) -> Outcome {
    let m = Mutex::new(0u64);
    let start = Instant::now();
    for _ in 0..n {
        *black_box(&m).lock().unwrap() += 1;
    }
    let elapsed = start.elapsed();
    assert_eq!(*m.lock().unwrap(), n);
    Outcome { ops: n, elapsed, handouts: 0, checksum: 0 }
}

fn lock_contended(per_thread: u64) -> Outcome {
    let m = Arc::new(Mutex::new(0u64));
    let barrier = Arc::new(Barrier::new(2));
    let hammer = move |m: Arc<Mutex<u64>>, barrier: Arc<Barrier>| {
        barrier.wait();
        for _ in 0..per_thread {
            *black_box(&*m).lock().unwrap() += 1;
        }
    };
    let other = {
        let (m, barrier) = (m.clone(), barrier.clone());
        thread::spawn(move || hammer(m, barrier))
    };
    let start = Instant::now();
    hammer(m.clone(), barrier);
    other.join().expect("the other lock hammer");
    let elapsed = start.elapsed();
    assert_eq!(*m.lock().unwrap(), 2 * per_thread);
    Outcome { ops: 2 * per_thread, elapsed, handouts: 0, checksum: 0 }
}

pub fn handoff(keys: u64) -> Outcome {
    /// Keys cycle through this many, as `cycles-N` adds 10,000.
    const DISTINCT: u64 = 10_000;
    /// The slots, 24 bytes each as `queue.rs`'s, in a table of the size
    /// hashbrown gives 10,000 keys.
    const SLOTS: usize = 16_384;
    struct Fifo {
        keys: VecDeque<u64>,
        slots: Vec<[u64; 3]>,
    }
    // Scattered as a hash table scatters keys (Fibonacci hashing).
    let slot = |key: u64| {
        ((key % DISTINCT).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 50) as usize
    };
    let fifo = Arc::new(Mutex::new(Fifo {
        keys: VecDeque::new(),
        slots: vec![[0; 3]; SLOTS],
    }));
    let barrier = Arc::new(Barrier::new(2));
    let consumer = {
        let (fifo, barrier) = (fifo.clone(), barrier.clone());
        thread::spawn(move || {
            barrier.wait();
            let (mut got, mut sum) = (0u64, 0u64);
            while got < keys {
                let key = {
                    let mut f = fifo.lock().unwrap();
                    let key = f.keys.pop_front();
                    if let Some(key) = key {
                        f.slots[slot(key)][1] = 1; // the get: processing
                    }
                    key
                };
                match key {
                    Some(key) => {
                        sum = sum.wrapping_add(key);
                        got += 1;
                        // The `done`: one more lock pair, and the slot again.
                        fifo.lock().unwrap().slots[slot(key)] = [0; 3];
                    }
                    None => std::hint::spin_loop(),
                }
            }
            sum
        })
    };
    barrier.wait();
    let start = Instant::now();
    for key in 0..keys {
        let mut f = fifo.lock().unwrap();
        f.slots[slot(key)] = [key, 0, 1]; // the add: the key, dirty
        f.keys.push_back(key);
    }
    let sum = consumer.join().expect("the consumer");
    let elapsed = start.elapsed();
    assert_eq!(
        sum,
        keys * keys.saturating_sub(1) / 2,
        "every key arrived once"
    );
    Outcome { ops: keys, elapsed, handouts: 0, checksum: 0 }
}
