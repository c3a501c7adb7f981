//! Upstream's own benchmarks, as the Rust crate's workloads (see the module
//! docs of `main.rs`, "Upstream's benchmarks"). The Go side of these rows is
//! upstream's test files run as they are (`go test -c` of the dependency
//! package, then `-test.bench` with `-test.benchtime=Nx`), so each function
//! here names the upstream benchmark it mirrors, and does the same operations
//! per iteration. ops = iterations (one `b.Loop` / `b.N` iteration upstream).
use std::time::{Duration, Instant};

use faithful_workqueue::delaying_queue::DelayingQueue;
use faithful_workqueue::priorityqueue::PriorityQueue;
use faithful_workqueue::queue::Queue;

use crate::{
    Checksum, Key, Outcome, SEED, Sizes, SplitMix64, current_thread_runtime,
    key, multi_thread_runtime,
};

/// The upstream rows: our name, upstream's test binary, its benchmark.
pub const UPSTREAM: [(&str, &str, &str); 5] = [
    ("pq-add-get-done", "priorityqueue", "BenchmarkAddGetDone"),
    ("pq-add-only", "priorityqueue", "BenchmarkAddOnly"),
    ("pq-add-lock-contended", "priorityqueue", "BenchmarkAddLockContended"),
    ("queue", "workqueue", "BenchmarkQueue"),
    ("delaying-add-after", "workqueue", "BenchmarkDelayingQueue_AddAfter"),
];

/// How many iterations a row runs (the Go side: `-test.benchtime=Nx`).
pub fn iterations(name: &str, s: &Sizes) -> u64 {
    let full = match name {
        "pq-add-get-done" => 200,
        "pq-add-only" => 2_000,
        "pq-add-lock-contended" => 200,
        "queue" => 10_000,
        "delaying-add-after" => 100_000,
        _ => unreachable!("not an upstream row: {name}"),
    };
    if s.keys == crate::SMOKE.keys { full / 100 } else { full }
}

pub fn run(name: &str, s: &Sizes) -> Outcome {
    let n = iterations(name, s);
    match name {
        "pq-add-get-done" => pq_add_get_done(n),
        "pq-add-only" => pq_add_only(n),
        "pq-add-lock-contended" => pq_add_lock_contended(n, s),
        "queue" => queue(n),
        "delaying-add-after" => delaying_add_after(n),
        _ => unreachable!("not an upstream row: {name}"),
    }
}

/// controller-runtime v0.25.3 pkg/controller/priorityqueue/priorityqueue_test.go:366
/// `BenchmarkAddGetDone`: `New[int]("")`; per iteration `Add(i)` for i in
/// 0..1000, then 1000 × `Get` + `Done`.
fn pq_add_get_done(n: u64) -> Outcome {
    let rt = multi_thread_runtime();
    rt.block_on(async move {
        tokio::spawn(async move {
            let q: PriorityQueue<u64> = PriorityQueue::new();
            let mut handouts = 0;
            let start = Instant::now();
            for _ in 0..n {
                for i in 0..1000 {
                    q.add(i);
                }
                for _ in 0..1000 {
                    let item = q.get().await.expect("not shut down");
                    q.done(&item);
                    handouts += 1;
                }
            }
            let elapsed = start.elapsed();
            q.shut_down();
            Outcome { ops: n, elapsed, handouts, checksum: 0 }
        })
        .await
        .expect("the benchmark task")
    })
}

/// priorityqueue_test.go:381 `BenchmarkAddOnly`: per iteration `Add(i)` for
/// i in 0..1000 (from the second iteration on, every add finds its key).
fn pq_add_only(n: u64) -> Outcome {
    let rt = multi_thread_runtime();
    rt.block_on(async move {
        tokio::spawn(async move {
            let q: PriorityQueue<u64> = PriorityQueue::new();
            let start = Instant::now();
            for _ in 0..n {
                for i in 0..1000 {
                    q.add(i);
                }
            }
            let elapsed = start.elapsed();
            q.shut_down();
            Outcome { ops: n, elapsed, handouts: 0, checksum: 0 }
        })
        .await
        .expect("the benchmark task")
    })
}

/// priorityqueue_test.go:392 `BenchmarkAddLockContended`: 1,000,000 items
/// added (untimed), 1,000 workers loop `Get`, sleep 1 ms, `Done`; timed: per
/// iteration `Add(i)` for i in 0..1000. Smoke: 10,000 items, 10 workers.
fn pq_add_lock_contended(n: u64, s: &Sizes) -> Outcome {
    let smoke = s.keys == crate::SMOKE.keys;
    let (items, workers) =
        if smoke { (10_000, 10) } else { (1_000_000, 1_000) };
    let rt = multi_thread_runtime();
    rt.block_on(async move {
        tokio::spawn(async move {
            let q: PriorityQueue<u64> = PriorityQueue::new();
            for i in 0..items {
                q.add(i);
            }
            for _ in 0..workers {
                let q = q.clone();
                tokio::spawn(async move {
                    while let Some(item) = q.get().await {
                        tokio::time::sleep(Duration::from_millis(1)).await;
                        q.done(&item);
                    }
                });
            }
            let start = Instant::now();
            for _ in 0..n {
                for i in 0..1000 {
                    q.add(i);
                }
            }
            let elapsed = start.elapsed();
            q.shut_down();
            Outcome { ops: n, elapsed, handouts: 0, checksum: 0 }
        })
        .await
        .expect("the benchmark task")
    })
}

/// client-go v0.37.2 util/workqueue/queue_test.go:465 `BenchmarkQueue`: keys
/// `key-0` … `key-99`; per iteration (untimed) a fresh queue, then (timed)
/// 100 × `Add(key)`, `Get`, `Done`.
fn queue(n: u64) -> Outcome {
    let keys: Vec<Key> = (0..100).map(|i| key(format!("key-{i}"))).collect();
    let rt = current_thread_runtime(false);
    rt.block_on(async {
        let mut out = Outcome::default();
        let mut sum = Checksum::new(true);
        for _ in 0..n {
            let q: Queue<Key> = Queue::new();
            let start = Instant::now();
            for key in &keys {
                q.add(Key::clone(key));
                let got = q.get().await.expect("not shut down");
                sum.add(&got);
                q.done(&got);
            }
            out.elapsed += start.elapsed();
            out.handouts += keys.len() as u64;
        }
        out.ops = n;
        out.checksum = sum.value;
        out
    })
}

/// client-go v0.37.2 util/workqueue/delaying_queue_test.go:215
/// `BenchmarkDelayingQueue_AddAfter`: a delaying queue on a fake clock;
/// b.N × `AddAfter(fmt.Sprintf("%d", n), random delay under 10 min)`, then
/// the clock steps 11 min and b.N × `Get` (no `Done`). Upstream draws the
/// delays from `math/rand`; here SplitMix64.
fn delaying_add_after(n: u64) -> Outcome {
    let rt = current_thread_runtime(true);
    let mut rng = SplitMix64(SEED);
    rt.block_on(async {
        let ten_minutes = Duration::from_secs(600).as_nanos() as u64;
        let start = Instant::now();
        let q: DelayingQueue<Key> = DelayingQueue::new();
        for i in 0..n {
            let data = key(format!("{i}"));
            q.add_after(data, Duration::from_nanos(rng.next() % ten_minutes));
        }
        tokio::time::advance(Duration::from_secs(660)).await;
        for _ in 0..n {
            let _ = q.get().await;
        }
        let elapsed = start.elapsed();
        Outcome { ops: n, elapsed, handouts: n, checksum: 0 }
    })
}
