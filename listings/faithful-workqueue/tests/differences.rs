//! One test per deliberate difference from upstream, in the order of the
//! crate docs' "Differences from upstream" (src/lib.rs). Each shows what the
//! port does where upstream does otherwise; the docs say what upstream does.
//! The one difference a running program cannot show, that there is no
//! pluggable `Queue` store, is a `compile_fail` doc test in src/lib.rs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::anyhow;
use faithful_workqueue::controller::{Controller, Options, Outcome};
use faithful_workqueue::default_rate_limiters::{
    BucketRateLimiter, RateLimiter,
};
use faithful_workqueue::delaying_queue::DelayingQueue;
use faithful_workqueue::metrics::InMemoryMetrics;
use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue};
use faithful_workqueue::queue::{Queue, QueueConfig};
use faithful_workqueue::reconcile::{ReconcileResult, with_result};
use tokio::time::advance;

// Lazy promotion of waiting items instead of goroutines: no task runs, and a
// due item is in the queue when the next call looks.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn lazy_promotion_of_waiting_items_instead_of_goroutines() {
    let tasks =
        || tokio::runtime::Handle::current().metrics().num_alive_tasks();
    let dq = DelayingQueue::new();
    let pq = PriorityQueue::new();
    dq.add_after("a", Duration::from_secs(1));
    pq.add_after("a", Duration::from_secs(1));
    assert_eq!(tasks(), 0, "no goroutine counterpart was spawned");
    advance(Duration::from_secs(1)).await;
    assert_eq!((dq.len(), pq.len()), (1, 1), "promoted by len itself");
    // The add buffer, too, is applied by the calls: an add made just before
    // the shutdown is applied by it, not dropped by a late flush.
    pq.add("b");
    pq.shut_down();
    assert_eq!(pq.len(), 2, "the buffered add was applied by shut_down");
    assert_eq!(tasks(), 0, "still no goroutine counterpart");
}

// A second priority-queue shut down is a no-op (upstream panics: it closes a
// channel twice).
#[test]
fn a_second_priority_queue_shut_down_is_a_no_op() {
    let q: PriorityQueue<&str> = PriorityQueue::new();
    q.shut_down();
    q.shut_down();
    assert!(q.shutting_down());
}

// A reconcile timeout drops the future and reports its own error (upstream
// cancels the context and waits for the reconciler to return).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_reconcile_timeout_drops_the_future_and_reports_an_error() {
    struct SetOnDrop(Arc<AtomicBool>);
    impl Drop for SetOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let d = dropped.clone();
    let reconciler = move |_: &'static str| {
        let guard = SetOnDrop(d.clone());
        async move {
            let _guard = guard;
            std::future::pending::<anyhow::Result<ReconcileResult>>().await
        }
    };
    let options = Options {
        reconciliation_timeout: Some(Duration::from_secs(1)),
        ..Options::default()
    };
    let c = Controller::with_options(PriorityQueue::new(), reconciler, options);
    let err = c.reconcile("web").await.unwrap_err();
    assert_eq!(err.to_string(), "reconciliation timed out after 1s");
    assert!(dropped.load(Ordering::SeqCst), "the reconcile future was dropped");
}

// A `Duration` cannot be negative: zero is upstream's "<= 0", ready now (and
// the delaying queue counts it as a retry, as upstream's AddAfter does; the
// priority queue does not, as upstream's).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_zero_delay_is_upstreams_non_positive_one() {
    let metrics = Arc::new(InMemoryMetrics::default());
    let dq = DelayingQueue::with_config(
        QueueConfig::named("dq").metrics_provider(metrics.clone()),
    );
    dq.add_after("a", Duration::ZERO);
    assert_eq!((dq.len(), dq.waiting_len()), (1, 0));
    assert_eq!(metrics.snapshot("dq").retries, 1);

    let pq = PriorityQueue::with_config(
        faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter(),
        QueueConfig::named("pq").metrics_provider(metrics.clone()),
    );
    pq.add_with_opts(
        AddOpts { after: Duration::ZERO, ..AddOpts::default() },
        ["a"],
    );
    assert_eq!(pq.len(), 1);
    assert_eq!(metrics.snapshot("pq").retries, 0);
}

// Every draining shutdown ends: two drains waiting at once both return when
// the processing set empties (upstream's Done signals once and wakes one).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn every_draining_shutdown_ends() {
    let q = Queue::new();
    q.add("a");
    let a = q.get().await.unwrap();
    let drains: Vec<_> = (0..2)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.shut_down_with_drain().await })
        })
        .collect();
    tokio::task::yield_now().await;
    q.done(&a);
    for drain in drains {
        tokio::time::timeout(Duration::from_secs(60), drain)
            .await
            .expect("a drain never ended")
            .unwrap();
    }
}

// A delay longer than Go can express is cut to Go's longest: no overflow,
// the item waits.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_delay_longer_than_go_can_express_is_cut() {
    let dq = DelayingQueue::new();
    dq.add_after("a", Duration::MAX);
    assert_eq!((dq.len(), dq.waiting_len()), (0, 1));
    advance(Duration::from_secs(365 * 24 * 3600)).await;
    assert_eq!(dq.len(), 0);
}

// Ties in ready time are first come, first added (upstream's container/heap
// leaves their order unspecified).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn ties_in_ready_time_are_first_come_first_added() {
    let dq = DelayingQueue::new();
    for key in ["c", "a", "b", "e", "d"] {
        dq.add_after(key, Duration::from_secs(1));
    }
    advance(Duration::from_secs(1)).await;
    let mut order = Vec::new();
    while !dq.is_empty() {
        order.push(dq.get().await.unwrap());
    }
    assert_eq!(order, ["c", "a", "b", "e", "d"]);
}

// The token bucket runs on tokio's clock (upstream's on the wall clock): a
// paused clock's advance refills it.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_token_bucket_runs_on_tokios_clock() {
    let bucket = BucketRateLimiter::new(10.0, 1);
    assert_eq!(RateLimiter::<&str>::when(&bucket, &"a"), Duration::ZERO);
    assert_eq!(
        RateLimiter::<&str>::when(&bucket, &"a"),
        Duration::from_millis(100)
    );
    advance(Duration::from_millis(200)).await; // one token's refill, plus the one owed
    assert_eq!(RateLimiter::<&str>::when(&bucket, &"a"), Duration::ZERO);
}

// The unfinished-work gauges are refreshed by a tokio task, started only when
// the queue is built inside a runtime (upstream always starts its goroutine);
// otherwise update_unfinished_work refreshes them.
#[test]
fn unfinished_work_is_refreshed_only_by_a_queue_built_in_a_runtime() {
    let metrics = Arc::new(InMemoryMetrics::default());
    let q = Queue::with_config(
        QueueConfig::named("q").metrics_provider(metrics.clone()),
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        q.add("a");
        let _a = q.get().await.unwrap();
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(
            metrics.snapshot("q").longest_running_processor_seconds,
            0.0,
            "no ticker ran"
        );
        q.update_unfinished_work();
        assert_eq!(
            metrics.snapshot("q").longest_running_processor_seconds,
            2.0
        );
    });
}

// A reconciler returns a result or an error; `with_result` attaches a result
// to an error (upstream returns both). Only its priority is used; its
// requeue_after is ignored, as upstream ignores it next to an error.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_result_travels_with_an_error_through_with_result() {
    let reconciler = |_: &'static str| async {
        let result = ReconcileResult {
            requeue_after: Duration::from_secs(60),
            priority: Some(3),
            requeue: false,
        };
        Err(with_result(result, anyhow!("conflict")))
    };
    let q = PriorityQueue::new();
    let c = Controller::new(q.clone(), reconciler);
    assert_eq!(c.reconcile_handler("a", 0).await, Outcome::Error);
    advance(Duration::from_millis(5)).await; // the limiter's 5ms, not the 60s
    assert_eq!(q.get_with_priority().await, Some(("a", 3)));
}

// Errors are reported through Options::error_log, called with the error
// alone, once per failed reconcile (upstream logs "Reconciler error" with the
// request's key and a reconcile ID, and logs a warning when a result came
// with the error).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn errors_are_reported_through_error_log_without_the_key() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    let options = Options {
        error_log: Some(Arc::new(move |err| {
            s.lock().unwrap().push(err.to_string())
        })),
        ..Options::default()
    };
    let reconciler = |_: &'static str| async {
        Err(with_result(
            ReconcileResult::requeue_after(Duration::from_secs(1)),
            anyhow!("conflict"),
        ))
    };
    let c = Controller::with_options(PriorityQueue::new(), reconciler, options);
    c.reconcile_handler("a", 0).await;
    assert_eq!(*seen.lock().unwrap(), ["conflict"]);
}

// A recovered panic: no panic handlers run (upstream calls apimachinery's
// PanicHandlers first); Rust's panic hook has already run once, when the
// panic happened. A payload that is not a string reads
// "non-string panic payload" (Go prints any value with %v).
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_recovered_panic_runs_the_hook_once_and_names_non_string_payloads() {
    static HOOK_CALLS: AtomicUsize = AtomicUsize::new(0);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {
        HOOK_CALLS.fetch_add(1, Ordering::SeqCst);
    }));
    async fn reconciler(_: &'static str) -> anyhow::Result<ReconcileResult> {
        std::panic::panic_any(42_i32)
    }
    let c = Controller::new(PriorityQueue::new(), reconciler);
    let err = c.reconcile("a").await.unwrap_err();
    std::panic::set_hook(previous);
    assert_eq!(err.to_string(), "panic: non-string panic payload [recovered]");
    assert_eq!(HOOK_CALLS.load(Ordering::SeqCst), 1);
}
