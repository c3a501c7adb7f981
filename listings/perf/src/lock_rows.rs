//! The lock rows (Rust only): the queue where a spin lock is said to fail,
//! measured by `cargo xtask perf` with the crate's spin lock and, from a
//! second build with `--features std-mutex`, with `std::sync::Mutex`.
//!
//! A spin lock's waiters keep their cores while they wait. That is cheap when
//! the holder is running on another core and will release the lock within
//! nanoseconds, and costly when it is not running at all: more runnable
//! threads than cores (the holder was preempted), or a process throttled by
//! a CPU quota, which spinning waiters use up. So each row runs the shape of
//! `cycles-N` (a producer adding a round of keys, workers that `get` and
//! `done` them) with small rounds of [`ROUND_KEYS`] keys, so that little of a
//! key's wait is the backlog of its round:
//!
//! * **`lock-cores`**: as many runtime threads and workers as cores; `cargo
//!   xtask perf` runs it as it is, and again inside a cgroup whose CPU quota
//!   is half a core.
//! * **`lock-oversubscribed`**: [`THREADS_PER_CORE`] runtime threads and as
//!   many workers per core.
//!
//! The producer records when it added each key; the worker that gets the key
//! measures how long it waited to be handed out, and the row prints the
//! worst of those waits on a `# latency` line, besides its rate.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use faithful_workqueue::queue::Queue;
use tokio::runtime::Runtime;
use tokio::sync::Notify;

use crate::{Outcome, Progress, Sizes, cores};

/// The lock rows' names.
pub const LOCK_ROWS: [&str; 2] = ["lock-cores", "lock-oversubscribed"];

/// Runtime threads, and workers, per core in `lock-oversubscribed`.
pub const THREADS_PER_CORE: usize = 4;

/// Keys a round adds at once.
pub const ROUND_KEYS: u64 = 100;

/// Runs one lock row: its rate, and the longest any key waited between its
/// add and the `get` that handed it out.
pub fn run(name: &str, s: &Sizes) -> (Outcome, Duration) {
    let threads = match name {
        "lock-cores" => cores(),
        "lock-oversubscribed" => cores() * THREADS_PER_CORE,
        _ => unreachable!("not a lock row: {name}"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Warm-up, not counted: the threads started, the queue's tables grown.
    one_run(&rt, threads, 10);
    one_run(&rt, threads, s.lock_rounds)
}

fn one_run(rt: &Runtime, workers: usize, rounds: u64) -> (Outcome, Duration) {
    let q: Queue<u64> = Queue::new();
    let origin = Instant::now();
    // When each key was last added, in ns since `origin`. A key is added
    // again only in the next round, after its hand-out was counted.
    let added: Arc<[AtomicU64]> =
        (0..ROUND_KEYS).map(|_| AtomicU64::new(0)).collect();
    let progress = Arc::new(Progress {
        handed: AtomicU64::new(0),
        per_round: ROUND_KEYS,
        round_done: Notify::new(),
    });
    rt.block_on(async {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                let (q, added, progress) =
                    (q.clone(), added.clone(), progress.clone());
                tokio::spawn(async move {
                    let (mut count, mut sum, mut worst) = (0u64, 0u64, 0u64);
                    while let Some(key) = q.get().await {
                        let now = origin.elapsed().as_nanos() as u64;
                        let at = added[key as usize].load(Ordering::Acquire);
                        worst = worst.max(now.saturating_sub(at));
                        sum = sum.wrapping_add(key + 1);
                        q.done(&key);
                        count += 1;
                        progress.handed_one();
                    }
                    (count, sum, worst)
                })
            })
            .collect();
        let producer = tokio::spawn({
            let (q, added, progress) =
                (q.clone(), added.clone(), progress.clone());
            async move {
                let start = Instant::now();
                for round in 1..=rounds {
                    for key in 0..ROUND_KEYS {
                        let now = origin.elapsed().as_nanos() as u64;
                        added[key as usize].store(now, Ordering::Release);
                        q.add(key);
                    }
                    progress.wait_for(round * ROUND_KEYS).await;
                }
                let elapsed = start.elapsed();
                q.shut_down();
                elapsed
            }
        });
        let elapsed = producer.await.expect("the producer");
        let (mut handouts, mut checksum, mut worst) = (0, 0u64, 0);
        for handle in handles {
            let (count, sum, w) = handle.await.expect("a worker");
            handouts += count;
            checksum = checksum.wrapping_add(sum);
            worst = worst.max(w);
        }
        (
            Outcome { ops: rounds * ROUND_KEYS, elapsed, handouts, checksum },
            Duration::from_nanos(worst),
        )
    })
}
