//! Port of client-go v0.37.2 `util/workqueue/metrics_test.go`, with upstream's
//! expected values, on tokio's paused clock.
//!
//! Differences in set-up (not in expectations):
//! * upstream builds its queues with the package-internal
//!   `newQueue(..., updatePeriod = 1ms)`; this port's refresh period is fixed at
//!   `DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD` (500ms) with no way to change it.
//!   `TestMetricShutdown` therefore steps by that period instead of 1ms, and
//!   `TestMetrics` reads the unfinished-work gauges by calling
//!   `update_unfinished_work()` at the moment upstream's 1ms ticker would fire
//!   (`c.Step(time.Millisecond)`), so upstream's values (.001) are kept.
//! * upstream's `TestMetricShutdown` injects a `queueMetrics` fake that
//!   signals each `updateUnfinishedWork()` call; this port's hook is not
//!   pluggable, so the same call is observed through a `MetricsProvider` whose
//!   unfinished-work gauge counts its `set` calls (one per update).
//!
//! Skipped upstream tests: none.
//!
//! One test of the port's own: a provider that logs every call holds the
//! queue to the calls upstream's `defaultQueueMetrics` makes, in their order
//! (client-go util/workqueue/metrics.go, `newQueueMetrics`, `add`, `get`,
//! `done`, `updateUnfinishedWork`), and to none besides: a series exists at 0
//! because the provider creates it when asked, not because the queue sets it.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use faithful_workqueue::metrics::{
    CounterMetric, DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD, GaugeMetric,
    HistogramMetric, InMemoryMetrics, MetricsProvider, SettableGaugeMetric,
};
use faithful_workqueue::queue::{Queue, QueueConfig};
use tokio::time::advance;

/// Counts `set` calls on the unfinished-work gauge; every other metric is a no-op.
#[derive(Default)]
struct UpdateCounter {
    updates: Arc<AtomicUsize>,
}

struct Noop;
impl GaugeMetric for Noop {
    fn inc(&self) {}
    fn dec(&self) {}
}
impl CounterMetric for Noop {
    fn inc(&self) {}
}
impl HistogramMetric for Noop {
    fn observe(&self, _: f64) {}
}
impl SettableGaugeMetric for Noop {
    fn set(&self, _: f64) {}
}

struct CountSets(Arc<AtomicUsize>);
impl SettableGaugeMetric for CountSets {
    fn set(&self, _: f64) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl MetricsProvider for UpdateCounter {
    fn new_depth_metric(&self, _: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(Noop)
    }
    fn new_adds_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Noop)
    }
    fn new_latency_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Noop)
    }
    fn new_work_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(Noop)
    }
    fn new_unfinished_work_seconds_metric(
        &self,
        _: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(CountSets(self.updates.clone()))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(Noop)
    }
    fn new_retries_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        Arc::new(Noop)
    }
}

async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

// upstream: metrics_test.go TestMetricShutdown
#[tokio::test(start_paused = true)]
async fn test_metric_shutdown() {
    let provider = Arc::new(UpdateCounter::default());
    let updates = provider.updates.clone();
    let q: Queue<&str> = Queue::with_config(
        QueueConfig::named("test").metrics_provider(provider),
    );
    // Wait for the task to create its ticker (upstream: `for !c.HasWaiters()`).
    settle().await;

    advance(DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD).await;
    // upstream: `<-ch`, one update arrives
    tokio::time::timeout(Duration::from_secs(30), async {
        while updates.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("no unfinished-work update after one period");
    q.shut_down();
    let before = updates.load(Ordering::SeqCst);

    advance(Duration::from_secs(3600)).await;
    settle().await;
    assert_eq!(
        updates.load(Ordering::SeqCst),
        before,
        "Unexpected update after shutdown was called."
    );
}

// upstream: metrics_test.go TestMetrics
#[tokio::test(start_paused = true)]
async fn test_metrics() {
    let mp = Arc::new(InMemoryMetrics::default());
    let q = Queue::with_config(
        QueueConfig::named("test").metrics_provider(mp.clone()),
    );
    let snap = || mp.snapshot("test");
    settle().await;

    q.add("foo");
    assert_eq!(snap().adds, 1);

    assert_eq!(snap().depth, 1);

    advance(Duration::from_micros(50)).await;

    // Start processing
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");

    assert_eq!(snap().latency.last().copied(), Some(5e-05));
    assert_eq!(snap().latency.len(), 1);

    // Add it back while processing; multiple adds of the same item are
    // de-duped.
    q.add(i);
    q.add(i);
    q.add(i);
    q.add(i);
    q.add(i);
    assert_eq!(snap().adds, 2);
    // One thing remains in the queue
    assert_eq!(snap().depth, 1);

    advance(Duration::from_micros(25)).await;

    // Finish it up
    q.done(&i);

    assert_eq!(snap().work_duration.last().copied(), Some(2.5e-05));
    assert_eq!(snap().work_duration.len(), 1);

    // One thing remains in the queue
    assert_eq!(snap().depth, 1);

    // It should be back on the queue
    let i = q.get().await.unwrap();
    assert_eq!(i, "foo");

    assert_eq!(snap().latency.last().copied(), Some(2.5e-05));
    assert_eq!(snap().latency.len(), 2);

    // upstream: c.Step(time.Millisecond) fires its 1ms update ticker
    advance(Duration::from_millis(1)).await;
    q.update_unfinished_work();
    assert_eq!(snap().unfinished_work_seconds, 0.001);
    assert_eq!(snap().longest_running_processor_seconds, 0.001);

    // Finish that one up
    q.done(&i);
    assert_eq!(snap().work_duration.last().copied(), Some(0.001));
    assert_eq!(snap().work_duration.len(), 2);

    q.shut_down(); // upstream: defer q.ShutDown()
}

/// Logs every call on every metric it hands out, as "metric.call(value)".
#[derive(Clone, Default)]
struct CallLog(Arc<Mutex<Vec<String>>>);

struct Logged(CallLog, &'static str);

impl CallLog {
    fn log(&self, entry: String) {
        self.0.lock().unwrap().push(entry);
    }
    fn metric(&self, name: &'static str) -> Arc<Logged> {
        self.log(format!("new {name}"));
        Arc::new(Logged(self.clone(), name))
    }
    /// The calls since the last take.
    fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl GaugeMetric for Logged {
    fn inc(&self) {
        self.0.log(format!("{}.inc", self.1));
    }
    fn dec(&self) {
        self.0.log(format!("{}.dec", self.1));
    }
}
impl CounterMetric for Logged {
    fn inc(&self) {
        self.0.log(format!("{}.inc", self.1));
    }
}
impl HistogramMetric for Logged {
    fn observe(&self, v: f64) {
        self.0.log(format!("{}.observe({v})", self.1));
    }
}
impl SettableGaugeMetric for Logged {
    fn set(&self, v: f64) {
        self.0.log(format!("{}.set({v})", self.1));
    }
}

impl MetricsProvider for CallLog {
    fn new_depth_metric(&self, _: &str) -> Arc<dyn GaugeMetric> {
        self.metric("depth")
    }
    fn new_adds_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.metric("adds")
    }
    fn new_latency_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        self.metric("latency")
    }
    fn new_work_duration_metric(&self, _: &str) -> Arc<dyn HistogramMetric> {
        self.metric("work_duration")
    }
    fn new_unfinished_work_seconds_metric(
        &self,
        _: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        self.metric("unfinished")
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        self.metric("longest")
    }
    fn new_retries_metric(&self, _: &str) -> Arc<dyn CounterMetric> {
        self.metric("retries")
    }
}

// The port's own: upstream's calls, in upstream's order, and no other.
#[tokio::test(start_paused = true)]
async fn a_queue_makes_upstreams_calls_on_its_metrics_and_no_others() {
    let log = CallLog::default();
    let q = Queue::with_config(
        QueueConfig::named("q").metrics_provider(Arc::new(log.clone())),
    );
    settle().await;
    // newQueueMetrics asks for six metrics, in this order, and sets none.
    assert_eq!(
        log.take(),
        [
            "new depth",
            "new adds",
            "new latency",
            "new work_duration",
            "new unfinished",
            "new longest"
        ]
    );
    // Nothing happens to the queue: no call until the first refresh.
    advance(DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD - Duration::from_millis(1))
        .await;
    settle().await;
    assert_eq!(log.take(), Vec::<String>::new());

    q.add("a"); // add: adds, then depth
    q.add("a"); // deduplicated: no call
    assert_eq!(log.take(), ["adds.inc", "depth.inc"]);

    advance(Duration::from_millis(1)).await; // the first refresh, at 500ms
    settle().await;
    assert_eq!(log.take(), ["unfinished.set(0)", "longest.set(0)"]);

    advance(Duration::from_millis(250)).await;
    // get: depth, then latency (added at 499ms, handed out at 750ms)
    let a = q.get().await.unwrap();
    assert_eq!(log.take(), ["depth.dec", "latency.observe(0.251)"]);

    advance(Duration::from_millis(250)).await; // refresh at 1s: held 0.25s
    settle().await;
    assert_eq!(log.take(), ["unfinished.set(0.25)", "longest.set(0.25)"]);

    q.done(&a); // done: work duration only
    assert_eq!(log.take(), ["work_duration.observe(0.25)"]);

    q.shut_down();
    advance(Duration::from_secs(3600)).await;
    settle().await;
    assert_eq!(log.take(), Vec::<String>::new(), "a call after shutdown");
}
