//! Metrics hooks, mirroring client-go's `util/workqueue/metrics.go`.
//!
//! A queue reports to a [`MetricsProvider`] only when it has a name *and* a
//! provider (upstream: a name and a non-noop global provider). Upstream sets the
//! provider once per process with `SetProvider`; here it is passed in the
//! queue's config, so two queues in one test can use two registries.
//!
//! What each metric means, as upstream defines it:
//!
//! | hook | metric (controller-runtime name) | changes on |
//! |---|---|---|
//! | [`MetricsProvider::new_depth_metric`] | `workqueue_depth` | +1 on a non-deduplicated add, −1 on get: it counts the dirty set, so an item re-added while processing counts though [`len`](crate::queue::Queue::len) does not |
//! | [`MetricsProvider::new_adds_metric`] | `workqueue_adds_total` | every non-deduplicated add |
//! | [`MetricsProvider::new_latency_metric`] | `workqueue_queue_duration_seconds` | get: seconds since the item was first added |
//! | [`MetricsProvider::new_work_duration_metric`] | `workqueue_work_duration_seconds` | done: seconds since get |
//! | [`MetricsProvider::new_unfinished_work_seconds_metric`] | `workqueue_unfinished_work_seconds` | every 500ms: the summed age of all items handed out and not yet done |
//! | [`MetricsProvider::new_longest_running_processor_seconds_metric`] | `workqueue_longest_running_processor_seconds` | every 500ms: the age of the oldest such item |
//! | [`MetricsProvider::new_retries_metric`] | `workqueue_retries_total` | every `add_after`, a zero delay included (delaying queue) |
//!
//! The last two gauges are the only signal a stalled key gives: an item whose
//! `done` never comes stays in the processing set, and its age keeps growing.

use crate::hash::HashMap;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A gauge that goes up and down (`workqueue_depth`).
///
/// ```
/// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
///
/// let metrics = InMemoryMetrics::default();
/// let depth = metrics.new_depth_metric("q");
/// depth.inc();
/// depth.inc();
/// depth.dec();
/// assert_eq!(metrics.snapshot("q").depth, 1);
/// ```
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
    ///
    /// let metrics = InMemoryMetrics::default();
    /// metrics.new_depth_metric("q").inc();
    /// assert_eq!(metrics.snapshot("q").depth, 1);
    /// ```
    fn inc(&self);
    /// Subtracts one.
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
    ///
    /// let metrics = InMemoryMetrics::default();
    /// metrics.new_depth_metric("q").dec();
    /// assert_eq!(metrics.snapshot("q").depth, -1); // a gauge may go below zero
    /// ```
    fn dec(&self);
}

/// A gauge that is set to a value (`workqueue_unfinished_work_seconds`).
///
/// ```
/// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
///
/// let metrics = InMemoryMetrics::default();
/// let unfinished = metrics.new_unfinished_work_seconds_metric("q");
/// unfinished.set(1.5);
/// assert_eq!(metrics.snapshot("q").unfinished_work_seconds, 1.5);
/// ```
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the gauge.
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
    ///
    /// let metrics = InMemoryMetrics::default();
    /// let longest = metrics.new_longest_running_processor_seconds_metric("q");
    /// longest.set(4.0);
    /// longest.set(0.5); // the last value wins
    /// assert_eq!(metrics.snapshot("q").longest_running_processor_seconds, 0.5);
    /// ```
    fn set(&self, value: f64);
}

/// A monotonic counter (`workqueue_adds_total`, `workqueue_retries_total`).
///
/// ```
/// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
///
/// let metrics = InMemoryMetrics::default();
/// let adds = metrics.new_adds_metric("q");
/// adds.inc();
/// adds.inc();
/// assert_eq!(metrics.snapshot("q").adds, 2);
/// ```
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
    ///
    /// let metrics = InMemoryMetrics::default();
    /// metrics.new_retries_metric("q").inc();
    /// assert_eq!(metrics.snapshot("q").retries, 1);
    /// ```
    fn inc(&self);
}

/// A histogram of seconds (`workqueue_queue_duration_seconds`).
///
/// ```
/// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
///
/// let metrics = InMemoryMetrics::default();
/// let latency = metrics.new_latency_metric("q");
/// latency.observe(0.25);
/// latency.observe(2.0);
/// assert_eq!(metrics.snapshot("q").latency, [0.25, 2.0]); // every observation kept
/// ```
pub trait HistogramMetric: Send + Sync {
    /// Records one observation, in seconds.
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
    ///
    /// let metrics = InMemoryMetrics::default();
    /// metrics.new_work_duration_metric("q").observe(3.0);
    /// assert_eq!(metrics.snapshot("q").work_duration, [3.0]);
    /// ```
    fn observe(&self, value: f64);
}

/// A depth gauge with one series per priority (controller-runtime's
/// `DepthMetricWithPriority`), for the priority queue.
///
/// ```
/// use faithful_workqueue::metrics::MetricsProvider;
/// use faithful_workqueue::prometheus::{encode, WorkqueueMetricsProvider};
/// use prometheus_client::registry::Registry;
/// let mut registry = Registry::default();
/// let provider = WorkqueueMetricsProvider::register(&mut registry);
/// let depth = provider.new_depth_metric_with_priority("q").unwrap();
///
/// depth.inc(10);
/// depth.inc(0);
/// let scrape = encode(&registry);
/// assert!(scrape.contains(r#"workqueue_depth{controller="q",name="q",priority="10"} 1"#));
/// assert!(scrape.contains(r#"workqueue_depth{controller="q",name="q",priority="0"} 1"#));
/// ```
pub trait DepthMetricWithPriority: Send + Sync {
    /// Adds one to the series of `priority`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::MetricsProvider;
    /// use faithful_workqueue::prometheus::{encode, WorkqueueMetricsProvider};
    /// use prometheus_client::registry::Registry;
    /// let mut registry = Registry::default();
    /// let provider = WorkqueueMetricsProvider::register(&mut registry);
    /// let depth = provider.new_depth_metric_with_priority("q").unwrap();
    ///
    /// depth.inc(5);
    /// depth.inc(5);
    /// assert!(encode(&registry).contains(r#"workqueue_depth{controller="q",name="q",priority="5"} 2"#));
    /// ```
    fn inc(&self, priority: i32);
    /// Subtracts one from the series of `priority`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::MetricsProvider;
    /// use faithful_workqueue::prometheus::{encode, WorkqueueMetricsProvider};
    /// use prometheus_client::registry::Registry;
    /// let mut registry = Registry::default();
    /// let provider = WorkqueueMetricsProvider::register(&mut registry);
    /// let depth = provider.new_depth_metric_with_priority("q").unwrap();
    ///
    /// depth.inc(5);
    /// depth.inc(1);
    /// depth.dec(5); // only the series of priority 5
    /// let scrape = encode(&registry);
    /// assert!(scrape.contains(r#"workqueue_depth{controller="q",name="q",priority="5"} 0"#));
    /// assert!(scrape.contains(r#"workqueue_depth{controller="q",name="q",priority="1"} 1"#));
    /// ```
    fn dec(&self, priority: i32);
}

/// Builds the metrics of one named queue. Mirrors upstream's `MetricsProvider`.
///
/// ```
/// use faithful_workqueue::metrics::InMemoryMetrics;
/// use faithful_workqueue::queue::{Queue, QueueConfig};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let metrics = Arc::new(InMemoryMetrics::default());
/// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
///
/// q.add("a");
/// tokio::time::advance(Duration::from_secs(2)).await;
/// let a = q.get().await.unwrap(); // latency: 2s in the queue
/// tokio::time::advance(Duration::from_secs(3)).await;
/// q.done(&a); // work duration: 3s processing
/// let s = metrics.snapshot("q");
/// assert_eq!((s.adds, s.depth), (1, 0));
/// assert_eq!((s.latency, s.work_duration), (vec![2.0], vec![3.0]));
/// # }
/// ```
pub trait MetricsProvider: Send + Sync {
    /// A depth gauge by priority, if this provider has one (controller-runtime's
    /// `MetricsProviderWithPriority`). Only the priority queue asks; without it
    /// the priority queue uses [`new_depth_metric`](MetricsProvider::new_depth_metric).
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsProvider};
    /// use faithful_workqueue::prometheus::WorkqueueMetricsProvider;
    /// use prometheus_client::registry::Registry;
    ///
    /// // The default method returns None; both providers of this crate have one.
    /// assert!(InMemoryMetrics::default().new_depth_metric_with_priority("q").is_some());
    /// let provider = WorkqueueMetricsProvider::register(&mut Registry::default());
    /// assert!(provider.new_depth_metric_with_priority("q").is_some());
    /// ```
    fn new_depth_metric_with_priority(
        &self,
        _name: &str,
    ) -> Option<Arc<dyn DepthMetricWithPriority>> {
        None
    }
    /// `workqueue_depth`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    ///
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// q.add(a); // dirty while processing
    /// assert_eq!((q.len(), metrics.snapshot("q").depth), (0, 1)); // counted in depth, not in len
    /// # }
    /// ```
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric>;
    /// `workqueue_adds_total`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    ///
    /// q.add("a");
    /// q.add("a"); // deduplicated: not counted
    /// q.add("b");
    /// assert_eq!(metrics.snapshot("q").adds, 2);
    /// ```
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `workqueue_queue_duration_seconds`.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::QueueConfig;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = DelayingQueue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    /// q.add_after("a", Duration::from_secs(5));
    /// tokio::time::advance(Duration::from_secs(6)).await;
    /// let _a = q.get().await.unwrap();
    /// assert_eq!(metrics.snapshot("q").latency, [1.0]); // counted from the ready time, not the add_after
    /// # }
    /// ```
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `workqueue_work_duration_seconds`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    ///
    /// q.add("a");
    /// let a = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_millis(250)).await;
    /// q.done(&a);
    /// assert_eq!(metrics.snapshot("q").work_duration, [0.25]);
    /// # }
    /// ```
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `workqueue_unfinished_work_seconds`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    ///
    /// q.add("a");
    /// q.add("b");
    /// let _a = q.get().await.unwrap();
    /// let _b = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_secs(2)).await;
    /// q.update_unfinished_work();
    /// assert_eq!(metrics.snapshot("q").unfinished_work_seconds, 4.0); // 2s + 2s
    /// # }
    /// ```
    fn new_unfinished_work_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// `workqueue_longest_running_processor_seconds`.
    ///
    /// ```
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::{Queue, QueueConfig};
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    ///
    /// q.add("a");
    /// q.add("b");
    /// let _a = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_secs(3)).await;
    /// let _b = q.get().await.unwrap();
    /// tokio::time::advance(Duration::from_secs(1)).await;
    /// q.update_unfinished_work();
    /// assert_eq!(metrics.snapshot("q").longest_running_processor_seconds, 4.0); // "a"'s age
    /// # }
    /// ```
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// `workqueue_retries_total`.
    ///
    /// ```
    /// use faithful_workqueue::delaying_queue::DelayingQueue;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::queue::QueueConfig;
    /// use std::sync::Arc;
    /// use std::time::Duration;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let q = DelayingQueue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
    /// q.add("a"); // a plain add is not a retry
    /// q.add_after("a", Duration::ZERO);
    /// q.add_after("b", Duration::from_secs(1));
    /// assert_eq!(metrics.snapshot("q").retries, 2);
    /// # }
    /// ```
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
}

/// How often a queue with metrics refreshes its unfinished-work gauges
/// (upstream's `defaultUnfinishedWorkUpdatePeriod`).
///
/// ```
/// use faithful_workqueue::metrics::{InMemoryMetrics, DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD};
/// use faithful_workqueue::queue::{Queue, QueueConfig};
/// use std::sync::Arc;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let metrics = Arc::new(InMemoryMetrics::default());
/// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
/// q.add("a");
/// let _a = q.get().await.unwrap();
/// let ms = Duration::from_millis(1);
/// tokio::time::sleep(DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD - ms).await;
/// assert_eq!(metrics.snapshot("q").unfinished_work_seconds, 0.0); // not refreshed yet
/// tokio::time::sleep(2 * ms).await;
/// assert_eq!(metrics.snapshot("q").unfinished_work_seconds, 0.5); // refreshed at 500ms
/// # }
/// ```
pub const DEFAULT_UNFINISHED_WORK_UPDATE_PERIOD: Duration =
    Duration::from_millis(500);

/// The per-queue bookkeeping behind the hooks (upstream's `defaultQueueMetrics`).
enum Depth {
    Plain(Arc<dyn GaugeMetric>),
    WithPriority(Arc<dyn DepthMetricWithPriority>),
}

pub(crate) struct QueueMetrics<T> {
    depth: Depth,
    adds: Arc<dyn CounterMetric>,
    latency: Arc<dyn HistogramMetric>,
    work_duration: Arc<dyn HistogramMetric>,
    unfinished_work_seconds: Arc<dyn SettableGaugeMetric>,
    longest_running_processor: Arc<dyn SettableGaugeMetric>,
    add_times: HashMap<T, Instant>,
    processing_start_times: HashMap<T, Instant>,
}

impl<T: Clone + Eq + Hash> QueueMetrics<T> {
    /// The metrics of client-go's queue: one depth series, whatever the provider.
    pub(crate) fn new(name: &str, provider: &dyn MetricsProvider) -> Self {
        Self::with_depth(
            name,
            provider,
            Depth::Plain(provider.new_depth_metric(name)),
        )
    }

    /// The metrics of the priority queue: depth by priority when the provider has it.
    pub(crate) fn with_priority(
        name: &str,
        provider: &dyn MetricsProvider,
    ) -> Self {
        let depth = match provider.new_depth_metric_with_priority(name) {
            Some(by_priority) => Depth::WithPriority(by_priority),
            None => Depth::Plain(provider.new_depth_metric(name)),
        };
        Self::with_depth(name, provider, depth)
    }

    fn with_depth(
        name: &str,
        provider: &dyn MetricsProvider,
        depth: Depth,
    ) -> Self {
        // Nothing is set here: upstream's queue makes no call on its metrics
        // until something happens to it, or its first refresh. The series
        // exist at 0 because a provider creates them when asked for them.
        Self {
            depth,
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider
                .new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider
                .new_longest_running_processor_seconds_metric(name),
            add_times: HashMap::default(),
            processing_start_times: HashMap::default(),
        }
    }

    pub(crate) fn add(&mut self, item: &T, priority: i32, now: Instant) {
        self.adds.inc();
        match &self.depth {
            Depth::Plain(depth) => depth.inc(),
            Depth::WithPriority(depth) => depth.inc(priority),
        }
        if !self.add_times.contains_key(item) {
            self.add_times.insert(item.clone(), now);
        }
    }

    /// Moves one unit of depth from `old` to `new` (a raised priority).
    pub(crate) fn update_depth_with_priority(&self, old: i32, new: i32) {
        if let Depth::WithPriority(depth) = &self.depth {
            depth.dec(old);
            depth.inc(new);
        }
    }

    pub(crate) fn get(&mut self, item: &T, priority: i32, now: Instant) {
        match &self.depth {
            Depth::Plain(depth) => depth.dec(),
            Depth::WithPriority(depth) => depth.dec(priority),
        }
        self.processing_start_times.insert(item.clone(), now);
        if let Some(added) = self.add_times.remove(item) {
            self.latency.observe(now.duration_since(added).as_secs_f64());
        }
    }

    pub(crate) fn done(&mut self, item: &T, now: Instant) {
        if let Some(started) = self.processing_start_times.remove(item) {
            self.work_duration
                .observe(now.duration_since(started).as_secs_f64());
        }
    }

    pub(crate) fn update_unfinished_work(&self, now: Instant) {
        let mut total = 0.0;
        let mut oldest = 0.0_f64;
        for started in self.processing_start_times.values() {
            let age = now.duration_since(*started).as_secs_f64();
            total += age;
            oldest = oldest.max(age);
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}

/// A [`MetricsProvider`] that keeps every value in memory, for tests and for
/// listings that print what a queue reported.
///
/// ```
/// use faithful_workqueue::metrics::InMemoryMetrics;
/// use faithful_workqueue::queue::{Queue, QueueConfig};
/// use std::sync::Arc;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let metrics = Arc::new(InMemoryMetrics::default());
/// let q = Queue::with_config(QueueConfig::named("demo").metrics_provider(metrics.clone()));
/// q.add("a");
/// q.add("a"); // deduplicated: no metric fires
/// assert_eq!(metrics.snapshot("demo").adds, 1);
/// assert_eq!(metrics.snapshot("demo").depth, 1);
/// # }
/// ```
#[derive(Default)]
pub struct InMemoryMetrics {
    queues: std::sync::Mutex<
        std::collections::BTreeMap<String, Arc<InMemoryQueueMetrics>>,
    >,
}

/// What one queue reported to an [`InMemoryMetrics`].
///
/// ```
/// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsSnapshot};
/// use faithful_workqueue::queue::{Queue, QueueConfig};
/// use std::sync::Arc;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let metrics = Arc::new(InMemoryMetrics::default());
/// let q = Queue::with_config(QueueConfig::named("q").metrics_provider(metrics.clone()));
/// q.add("a");
/// let a = q.get().await.unwrap();
/// q.done(&a);
/// let want = MetricsSnapshot { adds: 1, latency: vec![0.0], work_duration: vec![0.0], ..Default::default() };
/// assert_eq!(metrics.snapshot("q"), want); // depth back to 0
/// # }
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsSnapshot {
    /// `workqueue_depth`, all priorities together.
    pub depth: i64,
    /// `workqueue_depth` by priority, as the priority queue reports it: one
    /// entry per priority it has reported, kept at 0 when it empties, as a
    /// Prometheus series is. Empty for client-go's queues, which report depth
    /// without priorities.
    ///
    /// ```
    /// use faithful_workqueue::default_rate_limiters::priority_queue_default_rate_limiter;
    /// use faithful_workqueue::metrics::InMemoryMetrics;
    /// use faithful_workqueue::priorityqueue::{AddOpts, PriorityQueue, LOW_PRIORITY};
    /// use faithful_workqueue::queue::QueueConfig;
    /// use std::collections::BTreeMap;
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)]
    /// # async fn main() {
    /// let metrics = Arc::new(InMemoryMetrics::default());
    /// let config = QueueConfig::named("pq").metrics_provider(metrics.clone());
    /// let q = PriorityQueue::with_config(priority_queue_default_rate_limiter(), config);
    /// q.add_with_opts(AddOpts { priority: Some(LOW_PRIORITY), ..AddOpts::default() }, ["a", "b"]);
    /// q.add("c");
    /// q.add("a"); // raised to 0: one unit of depth moves from -100 to 0
    /// assert_eq!(metrics.snapshot("pq").depth_by_priority, BTreeMap::from([(LOW_PRIORITY, 1), (0, 2)]));
    /// let _ = q.get().await; // "c", the first at priority 0
    /// let s = metrics.snapshot("pq");
    /// assert_eq!((s.depth, s.depth_by_priority), (2, BTreeMap::from([(LOW_PRIORITY, 1), (0, 1)])));
    /// # }
    /// ```
    pub depth_by_priority: std::collections::BTreeMap<i32, i64>,
    /// `workqueue_adds_total`.
    pub adds: u64,
    /// `workqueue_retries_total`.
    pub retries: u64,
    /// Every `workqueue_queue_duration_seconds` observation.
    pub latency: Vec<f64>,
    /// Every `workqueue_work_duration_seconds` observation.
    pub work_duration: Vec<f64>,
    /// `workqueue_unfinished_work_seconds`.
    pub unfinished_work_seconds: f64,
    /// `workqueue_longest_running_processor_seconds`.
    pub longest_running_processor_seconds: f64,
}

#[derive(Default)]
struct InMemoryQueueMetrics {
    values: std::sync::Mutex<MetricsSnapshot>,
}

impl InMemoryMetrics {
    /// The values reported so far by the queue called `name` (all zero if it
    /// never reported).
    ///
    /// ```
    /// use faithful_workqueue::metrics::{InMemoryMetrics, MetricsSnapshot};
    ///
    /// let metrics = InMemoryMetrics::default();
    /// assert_eq!(metrics.snapshot("never-reported"), MetricsSnapshot::default());
    /// ```
    pub fn snapshot(&self, name: &str) -> MetricsSnapshot {
        let queues = self.queues.lock().unwrap();
        queues
            .get(name)
            .map(|q| q.values.lock().unwrap().clone())
            .unwrap_or_default()
    }

    fn queue(&self, name: &str) -> Arc<InMemoryQueueMetrics> {
        self.queues.lock().unwrap().entry(name.to_owned()).or_default().clone()
    }
}

/// One field of one queue's snapshot, updated through the hook traits.
struct Field {
    queue: Arc<InMemoryQueueMetrics>,
    update: fn(&mut MetricsSnapshot, f64),
}

impl Field {
    fn apply(&self, value: f64) {
        (self.update)(&mut self.queue.values.lock().unwrap(), value);
    }
}

impl GaugeMetric for Field {
    fn inc(&self) {
        self.apply(1.0);
    }
    fn dec(&self) {
        self.apply(-1.0);
    }
}

impl CounterMetric for Field {
    fn inc(&self) {
        self.apply(1.0);
    }
}

impl SettableGaugeMetric for Field {
    fn set(&self, value: f64) {
        self.apply(value);
    }
}

impl HistogramMetric for Field {
    fn observe(&self, value: f64) {
        self.apply(value);
    }
}

impl InMemoryMetrics {
    fn field(
        &self,
        name: &str,
        update: fn(&mut MetricsSnapshot, f64),
    ) -> Arc<Field> {
        Arc::new(Field { queue: self.queue(name), update })
    }
}

/// The depth by priority of one queue's snapshot: each unit counts in the
/// total and in its priority's entry.
struct PriorityDepth(Arc<InMemoryQueueMetrics>);

impl PriorityDepth {
    fn apply(&self, priority: i32, delta: i64) {
        let mut values = self.0.values.lock().unwrap();
        values.depth += delta;
        *values.depth_by_priority.entry(priority).or_default() += delta;
    }
}

impl DepthMetricWithPriority for PriorityDepth {
    fn inc(&self, priority: i32) {
        self.apply(priority, 1);
    }
    fn dec(&self, priority: i32) {
        self.apply(priority, -1);
    }
}

impl MetricsProvider for InMemoryMetrics {
    fn new_depth_metric_with_priority(
        &self,
        name: &str,
    ) -> Option<Arc<dyn DepthMetricWithPriority>> {
        Some(Arc::new(PriorityDepth(self.queue(name))))
    }
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        self.field(name, |s, v| s.depth += v as i64)
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        self.field(name, |s, _| s.adds += 1)
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        self.field(name, |s, v| s.latency.push(v))
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        self.field(name, |s, v| s.work_duration.push(v))
    }
    fn new_unfinished_work_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        self.field(name, |s, v| s.unfinished_work_seconds = v)
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        self.field(name, |s, v| s.longest_running_processor_seconds = v)
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        self.field(name, |s, _| s.retries += 1)
    }
}

#[cfg(test)]
mod tests {
    use crate::prometheus::{WorkqueueMetricsProvider, samples};
    use crate::queue::{Queue, QueueConfig};
    use prometheus_client::registry::Registry;
    use std::sync::Arc;

    #[tokio::test(start_paused = true)]
    async fn a_new_named_queue_shows_both_unfinished_work_gauges_at_zero() {
        let mut registry = Registry::default();
        let provider =
            Arc::new(WorkqueueMetricsProvider::register(&mut registry));
        let _q: Queue<&str> = Queue::with_config(
            QueueConfig::named("q").metrics_provider(provider),
        );
        let all = samples(&registry);
        for gauge in [
            "workqueue_unfinished_work_seconds",
            "workqueue_longest_running_processor_seconds",
        ] {
            let series = format!(r#"{gauge}{{controller="q",name="q"}}"#);
            assert_eq!(
                all.iter().find(|(s, _)| *s == series).map(|(_, v)| *v),
                Some(0.0),
                "{series}"
            );
        }
    }
}
