//! Benchmarks of the faithful work queue, with divan 0.1.21.
//!
//! Run: `cargo bench -p faithful-workqueue`.
//!
//! * `cycle_multi_thread` / `cycle_current_thread`: 10,000 add+get+done
//!   cycles over 10,000 distinct `Arc<str>` keys per iteration, spread over
//!   1, 2 or 8 concurrent workers. Throughput is in cycles (items) per second.
//! * `burst_cold` / `burst_warm`: 100,000 adds over 1,000 distinct keys into a
//!   fresh queue (cold) or into a queue that has held those keys before
//!   (warm: its map and FIFO already have the capacity). 99,000 of the adds
//!   are deduplicated. Throughput is in adds per second. Each runs with
//!   `Arc<str>` keys and with `SharedKey` ones, whose equality compares
//!   addresses before bytes: every deduplicated add finds a key the queue
//!   holds, so the two rows show what the bytes' comparison costs.
//! * `steady_state_*`: one add+get+done cycle on an already-seen key. This is
//!   the zero-allocation claim of `src/queue.rs`'s module docs; divan's
//!   `AllocProfiler` reports the allocations per cycle.
//!
//! Workers. A controller runs its workers as tasks on a multi-thread tokio
//! runtime (controller-runtime runs `MaxConcurrentReconciles` goroutines on
//! GOMAXPROCS threads), so `cycle_multi_thread` does the same: one runtime,
//! built once per benchmark outside the timed region, with as many worker
//! threads as the machine has cores, and 1, 2 or 8 tasks, each doing its share
//! of the 10,000 cycles on its own keys. With more tasks than cores the tasks
//! contend for the queue's one mutex as real workers do. The catch is that
//! divan's `AllocProfiler` counts only the threads divan controls: the
//! runtime's worker threads are invisible to it, so the allocation figures of
//! `cycle_multi_thread` only cover the benchmark thread (spawning the tasks).
//! `cycle_current_thread` runs the same tasks on a current-thread runtime
//! driven by the benchmark thread, so every allocation is counted; there the
//! tasks interleave on one thread instead of running in parallel.
//!
//! Each worker adds its own keys only, so no add is deduplicated: every add
//! produces exactly one get, and a worker blocked in `get` is always owed an
//! item by the FIFO (Σ adds − Σ gets ≥ 1 while it waits), so no iteration can
//! hang.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use divan::Bencher;
use divan::counter::ItemsCount;
use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
use faithful_workqueue::key::SharedKey;
use faithful_workqueue::queue::{Item, Queue};
use faithful_workqueue::rate_limiting_queue::RateLimitingQueue;

#[global_allocator]
static ALLOC: divan::AllocProfiler = divan::AllocProfiler::system();

const CYCLE_KEYS: usize = 10_000;
const BURST_ADDS: usize = 100_000;
const BURST_KEYS: usize = 1_000;

fn main() {
    divan::main();
}

fn keys<K: From<String>>(n: usize) -> Vec<K> {
    (0..n).map(|i| K::from(format!("default/object-{i}"))).collect()
}

/// Polls a future that is ready at once (a `get` on a non-empty queue),
/// without a runtime.
fn now<F: Future>(fut: F) -> F::Output {
    let mut fut = pin!(fut);
    match fut.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(output) => output,
        Poll::Pending => panic!("the future was expected to be ready"),
    }
}

/// The tasks of one iteration: `workers` tasks, task `w` adding keys
/// `w, w + workers, ...` and doing one get+done per add.
async fn cycles(
    rt: &tokio::runtime::Handle,
    q: &Queue<Arc<str>>,
    keys: &Arc<Vec<Arc<str>>>,
    workers: usize,
) {
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let q = q.clone();
            let keys = keys.clone();
            rt.spawn(async move {
                for key in keys.iter().skip(w).step_by(workers) {
                    q.add(key.clone());
                    let got = q.get().await.expect("not shut down");
                    q.done(&got);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

fn warm_queue<K: Item>(keys: &[K]) -> Queue<K> {
    let q = Queue::new();
    for k in keys {
        q.add(k.clone());
    }
    for _ in keys {
        let k = now(q.get()).unwrap();
        q.done(&k);
    }
    q
}

#[divan::bench(args = [1, 2, 8])]
fn cycle_multi_thread(bencher: Bencher, workers: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread().build().unwrap();
    let keys = Arc::new(keys(CYCLE_KEYS));
    let q = warm_queue(&keys);
    let handle = rt.handle().clone();
    bencher
        .counter(ItemsCount::new(CYCLE_KEYS))
        .bench_local(|| rt.block_on(cycles(&handle, &q, &keys, workers)));
}

#[divan::bench(args = [1, 2, 8])]
fn cycle_current_thread(bencher: Bencher, workers: usize) {
    let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    let keys = Arc::new(keys(CYCLE_KEYS));
    let q = warm_queue(&keys);
    let handle = rt.handle().clone();
    bencher
        .counter(ItemsCount::new(CYCLE_KEYS))
        .bench_local(|| rt.block_on(cycles(&handle, &q, &keys, workers)));
}

#[divan::bench(types = [Arc<str>, SharedKey])]
fn burst_cold<K: Item + From<String>>(bencher: Bencher) {
    let keys = keys::<K>(BURST_KEYS);
    bencher
        .counter(ItemsCount::new(BURST_ADDS))
        .with_inputs(Queue::<K>::new)
        .bench_local_values(|q| {
            for i in 0..BURST_ADDS {
                q.add(keys[i % BURST_KEYS].clone());
            }
            assert_eq!(q.len(), BURST_KEYS);
            q // dropped outside the timed region
        });
}

#[divan::bench(types = [Arc<str>, SharedKey])]
fn burst_warm<K: Item + From<String>>(bencher: Bencher) {
    let keys = keys::<K>(BURST_KEYS);
    bencher
        .counter(ItemsCount::new(BURST_ADDS))
        .with_inputs(|| warm_queue(&keys))
        .bench_local_values(|q| {
            for i in 0..BURST_ADDS {
                q.add(keys[i % BURST_KEYS].clone());
            }
            assert_eq!(q.len(), BURST_KEYS);
            q
        });
}

/// One add+get+done on a key the queue has seen before.
#[divan::bench]
fn steady_state_queue_cycle(bencher: Bencher) {
    let key: Arc<str> = Arc::from("default/web-1");
    let q = warm_queue(std::slice::from_ref(&key));
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        q.add(key.clone());
        let got = now(q.get()).unwrap();
        q.done(&got);
    });
}

/// The same cycle through the rate-limiting queue, plus the `forget` a
/// successful reconcile does.
#[divan::bench]
fn steady_state_rate_limiting_queue_cycle(bencher: Bencher) {
    let key: Arc<str> = Arc::from("default/web-1");
    let q = RateLimitingQueue::new(priority_queue_default_rate_limiter());
    q.add(key.clone());
    let got = now(q.get()).unwrap();
    q.done(&got);
    bencher.counter(ItemsCount::new(1usize)).bench_local(|| {
        q.add(key.clone());
        let got = now(q.get()).unwrap();
        q.forget(&got);
        q.done(&got);
    });
}
